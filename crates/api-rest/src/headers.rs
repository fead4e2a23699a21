//! Security headers on every response: `X-Content-Type-Options: nosniff` and
//! `Referrer-Policy: strict-origin-when-cross-origin` everywhere, a `Content-Security-Policy` that
//! allows no script at all and no framing on every HTML page, and HSTS when the public URL is https.
//! The pages use no script; their one inline `<style>` (the API reference) is allowed by its hash.
//! Answers under `/api/v1` may be read by a page of any origin (CORS, [`api_cors`]).

use crate::server::State;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{Error, web};

/// The policy of every HTML page: nothing runs, nothing frames us, styles and images from here (images
/// also from https, for listing logos), forms post back here or to where the consent page sends a
/// client.
pub fn content_security_policy() -> &'static str {
    static POLICY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        format!(
            "default-src 'none'; script-src 'none'; style-src 'self' '{}'; img-src 'self' https: data:; \
             base-uri 'none'; frame-ancestors 'none'",
            crate::docs_page::style_hash()
        )
    })
}

/// Two years, with subdomains: what browsers' preload lists ask for.
const HSTS: &str = "max-age=63072000; includeSubDomains";

pub async fn security_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let https = req.app_data::<web::Data<State>>().is_some_and(|s| s.public_url.starts_with("https://"));
    let mut res = next.call(req).await?.map_into_boxed_body();
    let h = res.headers_mut();
    // HTML pages, and SVG images (a badge opened on its own is a document that could run script).
    let html = h
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html") || v.starts_with("image/svg+xml"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("strict-origin-when-cross-origin"));
    if html {
        if let Ok(v) = HeaderValue::from_str(content_security_policy()) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
        h.insert(HeaderName::from_static("x-frame-options"), HeaderValue::from_static("DENY"));
    }
    if https {
        h.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static(HSTS));
    }
    Ok(res)
}

/// The API's response headers a page of another origin may read beside the CORS-safelisted ones.
const EXPOSED: &str = "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Idempotent-Replayed, \
                       WWW-Authenticate, Allow";

/// The request headers a page of another origin may send to the API.
pub const API_REQUEST_HEADERS: &str = "Authorization, Content-Type, Idempotency-Key";

/// Lets a page of any origin read the REST API's answers (`Access-Control-Allow-Origin: *`, and the
/// rate-limit and retry headers exposed), errors and 429s included, so a maker's own page can show
/// its listing's votes and a browser client can call the API with its API key. Safe with `*`: the API
/// takes its credential from the `Authorization` header only, never a cookie, so a page can act only
/// with a key it already holds; `*` also makes browsers refuse any request sent with credentials.
/// Preflights are answered per resource (`crate::rest`). Not `/mcp`, which refuses other origins
/// (the MCP specification's guard against DNS rebinding), nor the site's pages.
pub async fn api_cors(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let path = req.path();
    let api = path.strip_prefix(crate::rest::PREFIX).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    let mut res = next.call(req).await?.map_into_boxed_body();
    if api {
        let h = res.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED));
    }
    Ok(res)
}
