//! The REST API under `/api/v1`, generated from the operation descriptors: one route per operation,
//! inputs gathered from path, query and JSON body into one object, and the OpenAPI document.

use crate::error::ApiError;
use crate::server::State;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use api_http::json::Unreadable;
use operations::{Descriptor, Method, coerce_strings};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

pub const PREFIX: &str = "/api/v1";

fn route_for(m: Method) -> actix_web::Route {
    match m {
        Method::Get => web::get(),
        Method::Post => web::post(),
        Method::Put => web::put(),
        Method::Patch => web::patch(),
        Method::Delete => web::delete(),
    }
}

/// Refuses a query parameter whose name or value is not UTF-8 once percent-decoded (`?q=%ff`), naming
/// it: the query parser would put U+FFFD in its place and answer for a text nobody sent.
fn utf8_query(query: &str) -> Result<(), ApiError> {
    for part in query.split('&') {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        let decode = |s: &str| percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8().is_ok();
        if !decode(name) || !decode(value) {
            let field = percent_encoding::percent_decode_str(name).decode_utf8_lossy().into_owned();
            return Err(domain::ValidationError::new(field, "is not UTF-8 text once percent-decoded").into());
        }
    }
    Ok(())
}

/// Gathers an operation's inputs: path parameters and query parameters typed by the input schema, and
/// for body methods the JSON object sent (which must be an object when present).
fn gather(op: &Descriptor, req: &HttpRequest, body: &[u8]) -> Result<Value, ApiError> {
    let path: Vec<(String, String)> = op
        .path_params()
        .into_iter()
        .filter_map(|p| req.match_info().get(p).map(|v| (p.to_owned(), v.to_owned())))
        .collect();
    utf8_query(req.query_string())?;
    let query: Vec<(String, String)> = serde_urlencoded::from_str(req.query_string())
        .map_err(|_| ApiError::from(domain::ValidationError::new("query", "is not a valid query string")))?;
    let mut pairs: Vec<(&str, &str)> = path.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    if op.method.takes_query() {
        pairs.extend(query.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    }
    let mut input = coerce_strings(&op.input_schema, pairs)?;
    if !op.method.takes_query() && !body.iter().all(u8::is_ascii_whitespace) {
        // A body is JSON and says so: anything else is a 415, never guessed at.
        let content_type = req
            .headers()
            .get(actix_web::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let essence = content_type.split(';').next().unwrap_or_default().trim().to_owned();
        if essence != "application/json" && !essence.ends_with("+json") {
            return Err(ApiError::new(
                actix_web::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as application/json (Content-Type: application/json)",
            ));
        }
        let parsed = api_http::json::parse_strict(body).map_err(|e| {
            ApiError::from(match e {
                Unreadable::Repeated(key) => domain::ValidationError::new(key, "given more than once"),
                Unreadable::Invalid(e) => domain::ValidationError::new("body", format!("is not valid JSON: {e}")),
            })
        })?;
        let Value::Object(fields) = parsed else {
            return Err(domain::ValidationError::new("body", "must be a JSON object").into());
        };
        for (k, v) in fields {
            if op.path_params().contains(&k.as_str()) {
                return Err(domain::ValidationError::new(k, "is a path parameter; do not repeat it in the body").into());
            }
            input[k] = v;
        }
    }
    Ok(input)
}

pub(crate) use api_http::caller_of;

async fn handle(
    op: Arc<Descriptor>,
    state: web::Data<State>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let input = gather(&op, &req, &body)?;
    let mut ctx = state.ctx.with_caller(caller_of(&req));
    if op.idempotency_key
        && let Some(key) = req.headers().get("idempotency-key")
    {
        // Passed on as sent; `operations::idempotency::parse_key` judges it (non-ASCII bytes included).
        ctx.idempotency_key = Some(String::from_utf8_lossy(key.as_bytes()).into_owned());
    }
    let (json, replayed) = op.call_json(ctx, input).await?;
    let mut res = HttpResponse::build(StatusCode::from_u16(op.status).unwrap_or(StatusCode::OK));
    if replayed {
        res.insert_header(("Idempotent-Replayed", "true"));
    }
    Ok(res.content_type("application/json").body(json))
}

/// Answers `OPTIONS` on an API resource: 204 with the methods it takes (`Allow`), and as a CORS
/// preflight the same methods and the headers a page of another origin may send (cached 10 minutes).
fn options(methods: &[&str]) -> actix_web::Route {
    let mut allowed = methods.to_vec();
    if allowed.contains(&"GET") {
        allowed.push("HEAD");
    }
    allowed.push("OPTIONS");
    let allow = allowed.join(", ");
    web::method(actix_web::http::Method::OPTIONS).to(move || {
        let allow = allow.clone();
        async move {
            use actix_web::http::header;
            HttpResponse::NoContent()
                .insert_header((header::ALLOW, allow.clone()))
                .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, allow))
                .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, crate::headers::API_REQUEST_HEADERS))
                .insert_header((header::ACCESS_CONTROL_MAX_AGE, "600"))
                .finish()
        }
    })
}

/// An operation's path split after its first segment: `/listings/{slug}` is `/listings` and `/{slug}`,
/// `/me` is `/me` and `` (the scope's own path). Every operation's first segment is fixed.
fn first_segment(path: &'static str) -> (&'static str, &'static str) {
    let end = path[1..].find('/').map_or(path.len(), |i| i + 1);
    path.split_at(end)
}

/// The document, with today's categories, interview questions and products filled in.
async fn openapi(state: web::Data<State>) -> Result<HttpResponse, ApiError> {
    let mut doc = operations::openapi::document(&operations::registry(), &state.public_url);
    operations::refine::ReferenceSets::load(&state.app).await?.fill(&mut doc);
    Ok(HttpResponse::Ok().json(doc))
}

/// Mounts every operation of the registry, one resource per path with a 405 for other methods, each
/// in a scope of its path's first segment (`/listings`, `/me` …). A scope with a fixed prefix is
/// matched by comparing strings; resources with a `{parameter}` by a regular expression, tried in turn.
/// In one flat scope a request for `/leaderboards/{board}` ran the eight patterns before it: 4.7 % of
/// an uncached board read's CPU. Now it runs the one or few of its own segment.
pub fn routes(cfg: &mut web::ServiceConfig) {
    let mut by_segment: BTreeMap<&'static str, BTreeMap<&'static str, Vec<Arc<Descriptor>>>> = BTreeMap::new();
    for op in operations::registry() {
        let (segment, rest) = first_segment(op.path);
        by_segment.entry(segment).or_default().entry(rest).or_default().push(Arc::new(op));
    }
    let mut scope = web::scope(PREFIX)
        .service(
            web::resource("/openapi.json")
                .route(web::get().to(openapi))
                .route(options(&["GET"]))
                .default_service(crate::server::allow_only(&["GET", "OPTIONS"])),
        )
        .service(
            web::resource("/docs")
                .route(web::get().to(crate::docs_page::page))
                .route(options(&["GET"]))
                .default_service(crate::server::allow_only(&["GET", "OPTIONS"])),
        );
    for (segment, by_path) in by_segment {
        let mut inner = web::scope(segment);
        for (path, ops) in by_path {
            let mut resource = web::resource(path);
            let methods: Vec<String> = ops.iter().map(|o| o.method.as_str().to_ascii_uppercase()).collect();
            for op in ops {
                let method = op.method;
                resource = resource.route(route_for(method).to(
                    move |state: web::Data<State>, req: HttpRequest, body: web::Bytes| {
                        handle(op.clone(), state, req, body)
                    },
                ));
            }
            let mut allow: Vec<&str> = methods.iter().map(String::as_str).collect();
            resource = resource.route(options(&allow));
            allow.push("OPTIONS");
            inner = inner.service(resource.default_service(crate::server::allow_only(&allow)));
        }
        scope = scope.service(inner);
    }
    cfg.service(scope);
}

#[cfg(test)]
mod tests {
    use super::first_segment;

    #[test]
    fn paths_split_after_their_first_segment() {
        assert_eq!(first_segment("/listings/{slug}/badges"), ("/listings", "/{slug}/badges"));
        assert_eq!(first_segment("/me"), ("/me", ""));
        assert_eq!(first_segment("/leaderboards/{board}"), ("/leaderboards", "/{board}"));
    }

    #[test]
    fn every_operations_scope_is_a_fixed_prefix() {
        // A `{parameter}` in the first segment would make its scope a pattern matched by regex.
        for op in operations::registry() {
            let (segment, rest) = first_segment(op.path);
            assert!(!segment.contains('{') && segment.len() > 1, "{}", op.path);
            assert_eq!(format!("{segment}{rest}"), op.path);
        }
    }
}
