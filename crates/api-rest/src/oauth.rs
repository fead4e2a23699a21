//! The OAuth 2.1 authorization server's HTTP side: metadata documents, dynamic client registration,
//! the authorization endpoint with its consent page, the token endpoint and revocation. The rules live
//! in `operations::oauth`; this module parses forms, renders the consent page and sets headers.
//!
//! The person signs in on our own sign-in page (the authorization request comes back to them after),
//! then sees which client asks for which scopes and where it will send them, and chooses Allow or
//! Deny. The consent form carries the session's CSRF token; nothing is remembered between requests
//! but the session, so every instance can answer any step.

use crate::server::State;
use crate::web::{Line, Message, NEXT, Part, cookie, html, oops, page, rendered, see_other, signed_in};
use actix_web::cookie::SameSite;
use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::oauth::{OAuthError, OAuthErrorCode};
use operations::oauth::{
    self as oauth, Audience, AuthorizeParams, AuthorizeRefusal, AuthorizeRequest, OAuthFailure, Registration, TokenForm,
};
use serde::Deserialize;

/// JSON for OAuth clients, readable from browsers (MCP clients may run in one), never cached.
fn json(status: StatusCode, body: serde_json::Value) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"))
        .json(body)
}

fn oauth_error(e: &OAuthError) -> HttpResponse {
    let status = match e.code {
        OAuthErrorCode::InvalidClient => StatusCode::UNAUTHORIZED,
        _ => StatusCode::BAD_REQUEST,
    };
    json(status, serde_json::json!({"error": e.code.as_str(), "error_description": e.description}))
}

/// An OAuth endpoint's failure in OAuth's shape (`error`, `error_description`), at the status the
/// service gives the same failure anywhere (`ApiError`, which logs it): a spent quota is a 429 naming
/// it, a database not answering a 503 `temporarily_unavailable`, both with `Retry-After`; anything
/// else unforeseen a 500 `server_error`. Before, every one of them was a 500.
fn failure(f: OAuthFailure) -> HttpResponse {
    let e = match f {
        OAuthFailure::OAuth(e) => return oauth_error(&e),
        OAuthFailure::Op(e) => crate::error::ApiError::from(e),
    };
    let (error, description) = match e.status {
        StatusCode::SERVICE_UNAVAILABLE => ("temporarily_unavailable", e.message.as_str()),
        s if s.is_server_error() => ("server_error", "something went wrong on our side"),
        _ => (e.code, e.message.as_str()),
    };
    let mut res = json(e.status, serde_json::json!({"error": error, "error_description": description}));
    if let Some(secs) = e.retry_after {
        res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    }
    res
}

/// Answers CORS preflights of the endpoints browsers' clients call.
async fn preflight() -> HttpResponse {
    HttpResponse::NoContent()
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
        .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, OPTIONS"))
        .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, "Content-Type, Authorization, MCP-Protocol-Version"))
        .insert_header((header::ACCESS_CONTROL_MAX_AGE, "600"))
        .finish()
}

async fn authorization_server(state: web::Data<State>) -> HttpResponse {
    json(StatusCode::OK, oauth::authorization_server_metadata(&state.public_url))
}

async fn resource_mcp(state: web::Data<State>) -> HttpResponse {
    json(StatusCode::OK, oauth::protected_resource_metadata(&state.public_url, Audience::Mcp))
}

async fn resource_api(state: web::Data<State>) -> HttpResponse {
    json(StatusCode::OK, oauth::protected_resource_metadata(&state.public_url, Audience::Api))
}

async fn register(state: web::Data<State>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    let reg: Registration = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return oauth_error(&OAuthError::new(
                OAuthErrorCode::InvalidClientMetadata,
                format!("the body must be a JSON object of client metadata: {e}"),
            ));
        }
    };
    let network = api_http::middleware::client_network(&req);
    match oauth::register(&state.app, &reg, &network).await {
        Ok(v) => json(StatusCode::CREATED, v),
        Err(f) => failure(f),
    }
}

/// Why a token or revocation request's form was not read, as OAuth's `invalid_request` (RFC 6749 §5.2):
/// the media type, or the form's own problem named by its field (a parameter given twice, which §3.2
/// forbids, or one missing), or what else the form reader said (a body over its limit).
fn unreadable_form(e: &actix_web::Error) -> HttpResponse {
    const MEDIA_TYPE: &str = "send the parameters as application/x-www-form-urlencoded";
    let description = match e.as_error::<crate::error::ApiError>() {
        Some(api) if api.status == StatusCode::UNSUPPORTED_MEDIA_TYPE => MEDIA_TYPE.to_owned(),
        Some(api) => api.details.first().map_or_else(|| api.message.clone(), |d| format!("{}: {}", d.field, d.problem)),
        None => MEDIA_TYPE.to_owned(),
    };
    oauth_error(&OAuthError::new(OAuthErrorCode::InvalidRequest, description))
}

async fn token(state: web::Data<State>, form: Result<web::Form<TokenForm>, actix_web::Error>) -> HttpResponse {
    let form = match form {
        Ok(form) => form,
        Err(e) => return unreadable_form(&e),
    };
    match oauth::token(&state.app, &form).await {
        Ok(v) => json(StatusCode::OK, v),
        Err(f) => failure(f),
    }
}

#[derive(Debug, Deserialize)]
struct RevokeForm {
    #[serde(default)]
    token: String,
}

async fn revoke(state: web::Data<State>, form: Result<web::Form<RevokeForm>, actix_web::Error>) -> HttpResponse {
    let form = match form {
        Ok(form) => form,
        Err(e) => return unreadable_form(&e),
    };
    match oauth::revoke(&state.app, &form.token).await {
        Ok(()) => json(StatusCode::OK, serde_json::json!({})),
        Err(e) => failure(OAuthFailure::Op(e)),
    }
}

// ---- the authorization endpoint and the consent page ----------------------------------------------

fn refusal_page(state: &State, message: &str) -> HttpResponse {
    html(
        StatusCode::BAD_REQUEST,
        page(
            state,
            "Cannot sign this app in",
            None,
            &rendered(
                &Message::new("This app cannot be signed in")
                    .with(Line::classed("error", vec![Part::Text(message.to_owned())]))
                    .with(Line::classed(
                        "muted",
                        vec![Part::Text("Nothing was shared. Tell the app's developer what this page says.".into())],
                    )),
            ),
        ),
    )
}

/// The `error_description` (else `error`) an error redirect carries, for the page shown instead.
fn redirect_error_text(to: &str) -> String {
    let query = to.split_once('?').map_or("", |(_, q)| q);
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    get("error_description").or_else(|| get("error")).unwrap_or_else(|| "the request is not valid".to_owned())
}

fn host_of(uri: &str) -> &str {
    let rest = uri.split_once("://").map_or(uri, |(_, r)| r);
    rest.split(['/', '?']).next().unwrap_or(rest)
}

/// The consent page: who asks, for what, where the answer goes; the request again as hidden fields.
#[derive(Template)]
#[template(path = "consent.html")]
struct ConsentView<'a> {
    base: &'a str,
    csrf: &'a str,
    name: &'a str,
    /// The client's metadata document, when it is described by one.
    metadata_document: Option<&'a str>,
    home: Option<&'a str>,
    email: &'a str,
    scopes: Vec<(&'static str, &'static str)>,
    host: &'a str,
    fields: Vec<(&'static str, &'a str)>,
}

fn consent(
    state: &State,
    req: &AuthorizeRequest,
    p: &AuthorizeParams,
    csrf: &str,
    who: &domain::auth::Principal,
) -> HttpResponse {
    let client = &req.client;
    let fields = [
        ("response_type", &p.response_type),
        ("client_id", &p.client_id),
        ("redirect_uri", &p.redirect_uri),
        ("code_challenge", &p.code_challenge),
        ("code_challenge_method", &p.code_challenge_method),
        ("state", &p.state),
        ("scope", &p.scope),
        ("resource", &p.resource),
    ];
    let view = ConsentView {
        base: &state.public_url,
        csrf,
        name: &client.name,
        metadata_document: domain::oauth::OAuthClient::is_metadata_document(&client.client_id)
            .then_some(client.client_id.as_str()),
        home: client.client_uri.as_deref(),
        email: who.email.as_str(),
        scopes: req.scopes.iter().map(|s| (s.as_str(), oauth::scope_meaning(*s))).collect(),
        host: host_of(&req.redirect_uri),
        fields: fields.iter().filter_map(|(n, v)| v.as_deref().map(|v| (*n, v))).collect(),
    };
    let body = rendered(&view);
    let mut r = html(StatusCode::OK, page(state, "Allow access", Some(who), &body));
    // The consent page must not be framed (clickjacking would click Allow for the person).
    r.headers_mut().insert(header::X_FRAME_OPTIONS, header::HeaderValue::from_static("DENY"));
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static("frame-ancestors 'none'; form-action 'self' *"),
    );
    r
}

/// The authorization request as a path sign-in may return to: its query in base64url, so the cookie
/// holds only characters a path check can vouch for ([`resume`] turns it back into the request).
fn return_path(p: &AuthorizeParams) -> String {
    use base64::Engine;
    let q = serde_urlencoded::to_string(p).unwrap_or_default();
    format!("/oauth/resume/{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(q))
}

/// Back from sign-in: on to the authorization request it interrupted.
async fn resume(state: web::Data<State>, path: web::Path<String>) -> HttpResponse {
    use base64::Engine;
    let query = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(path.as_bytes())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|q| serde_urlencoded::from_str::<AuthorizeParams>(&q).ok());
    match query {
        Some(p) => {
            see_other(&state.url(&format!("/oauth/authorize?{}", serde_urlencoded::to_string(&p).unwrap_or_default())))
        }
        None => refusal_page(&state, "this sign-in link is damaged; start again from the app"),
    }
}

async fn authorize(
    state: web::Data<State>,
    req: HttpRequest,
    q: Result<web::Query<AuthorizeParams>, actix_web::Error>,
) -> HttpResponse {
    let Ok(q) = q else { return refusal_page(&state, "the authorization request's parameters could not be read") };
    let p = q.into_inner();
    let session = signed_in(&state, &req).await;
    let checked = match oauth::check_authorize(&state.app, &p).await {
        Ok(c) => c,
        Err(AuthorizeRefusal::Show(m)) => return refusal_page(&state, &m),
        // Anyone can register a client and its redirect URI, so an error is sent back there only to a
        // person who has signed in here; before that it is shown (RFC 9700 §4.11.2: no open redirect).
        Err(AuthorizeRefusal::Redirect(to)) if session.is_none() => {
            return refusal_page(&state, &redirect_error_text(&to));
        }
        Err(AuthorizeRefusal::Redirect(to)) => return see_other(&to),
    };
    let Some((who, csrf)) = session else {
        let mut r = see_other(&state.url("/signin"));
        let _ = r.add_cookie(&cookie(&state, NEXT, return_path(&p), SameSite::Lax, 1));
        return r;
    };
    consent(&state, &checked, &p, &csrf, &who)
}

#[derive(Debug, Deserialize)]
struct Decision {
    #[serde(flatten)]
    params: AuthorizeParams,
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    decision: String,
}

async fn decide(
    state: web::Data<State>,
    req: HttpRequest,
    form: Result<web::Form<Decision>, actix_web::Error>,
) -> HttpResponse {
    let Ok(form) = form else { return refusal_page(&state, "the consent form could not be read") };
    let d = form.into_inner();
    let Some((who, csrf)) = signed_in(&state, &req).await else {
        let mut r = see_other(&state.url("/signin"));
        let _ = r.add_cookie(&cookie(&state, NEXT, return_path(&d.params), SameSite::Lax, 1));
        return r;
    };
    if !crate::web::same(&state, &d.csrf, &csrf) {
        return html(
            StatusCode::FORBIDDEN,
            page(&state, "Allow access", Some(&who), "<p>This form expired. Go back to the app and start again.</p>"),
        );
    }
    let checked = match oauth::check_authorize(&state.app, &d.params).await {
        Ok(c) => c,
        Err(AuthorizeRefusal::Show(m)) => return refusal_page(&state, &m),
        Err(AuthorizeRefusal::Redirect(to)) => return see_other(&to),
    };
    if d.decision != "allow" {
        return see_other(&oauth::deny(&state.app, &checked));
    }
    match oauth::approve(&state.app, &checked, who.user_id).await {
        Ok(to) => see_other(&to),
        Err(e) => {
            tracing::error!(error = %e, "could not store an authorization code");
            oops(&state, Some(&who))
        }
    }
}

fn json_get<F, Args>(path: &'static str, h: F) -> actix_web::Resource
where
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    web::resource(path).route(web::get().to(h)).route(web::method(actix_web::http::Method::OPTIONS).to(preflight))
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(json_get("/.well-known/oauth-authorization-server", authorization_server).default_service(na()))
        .service(json_get("/.well-known/oauth-protected-resource/mcp", resource_mcp).default_service(na()))
        .service(json_get("/.well-known/oauth-protected-resource", resource_mcp).default_service(na()))
        .service(json_get("/.well-known/oauth-protected-resource/api/v1", resource_api).default_service(na()))
        .service(
            web::resource("/oauth/register")
                .route(web::post().to(register))
                .route(web::method(actix_web::http::Method::OPTIONS).to(preflight))
                .default_service(na()),
        )
        .service(
            web::resource("/oauth/token")
                .route(web::post().to(token))
                .route(web::method(actix_web::http::Method::OPTIONS).to(preflight))
                .default_service(na()),
        )
        .service(
            web::resource("/oauth/revoke")
                .route(web::post().to(revoke))
                .route(web::method(actix_web::http::Method::OPTIONS).to(preflight))
                .default_service(na()),
        )
        .service(web::resource("/oauth/resume/{query}").route(web::get().to(resume)).default_service(na()))
        .service(
            web::resource("/oauth/authorize")
                .route(web::get().to(authorize))
                .route(web::post().to(decide))
                .default_service(na()),
        );
}

#[cfg(test)]
mod tests {
    use super::failure;
    use actix_web::body::MessageBody;
    use domain::ports::RepoError;
    use operations::OpError;
    use operations::oauth::OAuthFailure;

    /// A database not answering is a retryable 503 in OAuth's shape, not a 500 (before, every failure
    /// of an operation behind an OAuth endpoint was `server_error`); a failure nobody foresaw is still
    /// a 500 that says nothing of its cause.
    #[test]
    fn an_unreachable_database_is_a_503_with_retry_after_in_oauth_s_shape() {
        let down = failure(OAuthFailure::Op(OpError::Repo(RepoError::Unavailable("connection refused".into()))));
        assert_eq!(down.status(), 503);
        assert_eq!(down.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("5"));
        let body = down.into_body().try_into_bytes().unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"], "temporarily_unavailable", "{body}");

        let broken = failure(OAuthFailure::Op(OpError::Repo(RepoError::Unexpected("disk full at /var".into()))));
        assert_eq!(broken.status(), 500);
        let body = broken.into_body().try_into_bytes().unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"], "server_error");
        assert!(!body.to_string().contains("disk"), "{body}");
    }
}
