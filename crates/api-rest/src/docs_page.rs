//! The API reference at `/api/v1/docs`: server-rendered HTML from the same OpenAPI document the
//! service publishes. No script, no CDN, readable offline and in any browser.

use crate::server::State;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde_json::Value;

/// `sha256-…` of the page's inline style, for the Content-Security-Policy (`headers.rs`).
pub(crate) fn style_hash() -> String {
    use base64::Engine;
    use sha2::Digest;
    format!("sha256-{}", base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(STYLE.as_bytes())))
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1a1a2e}\
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:2.2rem;border-top:1px solid #e5e7eb;padding-top:1rem}\
code{background:#f3f4f6;padding:0 .25rem;border-radius:4px}.m{display:inline-block;min-width:4.2rem;font-weight:700;color:#ff6154}\
table{border-collapse:collapse;width:100%;margin:.5rem 0}td,th{border-bottom:1px solid #e5e7eb;text-align:left;padding:.3rem .5rem;vertical-align:top}\
th{font-size:.85rem;color:#555}.tag{font-size:.8rem;background:#eef;border-radius:4px;padding:0 .3rem}nav a{margin-right:.8rem}";

/// A schema's constraints in words: type, enum, bounds, pattern, default.
fn describe(schema: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(t) = schema.get("type") {
        parts.push(match t {
            Value::Array(ts) => {
                ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect::<Vec<_>>().join("|")
            }
            other => other.as_str().unwrap_or_default().to_owned(),
        });
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        parts.push(format!("one of {}", e.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")));
    }
    for (key, word) in [
        ("minimum", "min"),
        ("maximum", "max"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("maxItems", "max items"),
    ] {
        if let Some(v) = schema.get(key) {
            parts.push(format!("{word} {v}"));
        }
    }
    if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
        parts.push(format!("pattern {p}"));
    }
    if let Some(d) = schema.get("default") {
        parts.push(format!("default {d}"));
    }
    parts.join("; ")
}

/// A parameter or body field as the page lists it.
struct Field {
    name: String,
    /// path, query (parameters only).
    place: String,
    required: bool,
    constraints: String,
    meaning: String,
}

/// One operation as the page shows it.
struct Op {
    id: String,
    method: String,
    path: String,
    /// "public", or the sign-in scope it needs.
    auth: String,
    description: String,
    params: Vec<Field>,
    body: Vec<Field>,
    responses: String,
}

#[derive(Template)]
#[template(path = "api_docs.html")]
struct DocsView<'a> {
    style: &'static str,
    description: &'a str,
    base: &'a str,
    openapi: &'a str,
    version: &'a str,
    ops: Vec<Op>,
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// The operation `op` at `method` and `path` of the OpenAPI document, for the page.
fn op(method: &str, path: &str, op: &Value) -> Op {
    let auth = match op["security"]
        .as_array()
        .and_then(|s| s.iter().find_map(|r| r["bearerAuth"].as_array().filter(|a| !a.is_empty())))
    {
        Some(scopes) => {
            format!("sign-in, scope {}", scopes.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
        }
        None => "public".to_owned(),
    };
    let params = op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| Field {
            name: text(&p["name"]),
            place: text(&p["in"]),
            required: p["required"].as_bool().unwrap_or(false),
            constraints: describe(&p["schema"]),
            meaning: text(&p["description"]),
        })
        .collect();
    let body = op["requestBody"]["content"]["application/json"]["schema"]["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, s)| Field {
            name: name.clone(),
            place: "body".into(),
            required: false,
            constraints: describe(s),
            meaning: text(&s["description"]),
        })
        .collect();
    let codes: Vec<&str> =
        op["responses"].as_object().map(|r| r.keys().map(String::as_str).collect()).unwrap_or_default();
    Op {
        id: text(&op["operationId"]),
        method: method.to_uppercase(),
        path: path.to_owned(),
        auth,
        description: text(&op["description"]),
        params,
        body,
        responses: codes.join(", "),
    }
}

/// The reference page of the OpenAPI document `doc`.
pub fn render(doc: &Value) -> String {
    let ops = doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(path, item)| item.as_object().into_iter().flatten().map(move |(m, o)| op(m, path, o)))
        .collect();
    let view = DocsView {
        style: STYLE,
        description: doc["info"]["description"].as_str().unwrap_or_default(),
        base: doc["servers"][0]["url"].as_str().unwrap_or("/api/v1"),
        openapi: doc["openapi"].as_str().unwrap_or_default(),
        version: doc["info"]["version"].as_str().unwrap_or_default(),
        ops,
    };
    crate::web::rendered(&view)
}

/// `GET /api/v1/docs` (mounted inside the `/api/v1` scope by `rest::routes`).
pub async fn page(state: web::Data<State>) -> HttpResponse {
    let doc = operations::openapi::document(&operations::registry(), &state.public_url);
    HttpResponse::Ok().content_type("text/html; charset=utf-8").body(render(&doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_and_bound_is_on_the_page() {
        let doc = operations::openapi::document(&operations::registry(), "http://x.example");
        let html = render(&doc);
        for op in operations::registry() {
            assert!(html.contains(&format!("id=\"{}\"", op.id)), "{}", op.id);
        }
        assert!(html.contains("max 1000") && html.contains("max length 200"), "bounds are shown");
        assert!(!html.contains("<script"), "no script");
    }
}
