//! Security headers on every response: `X-Content-Type-Options: nosniff` and
//! `Referrer-Policy: strict-origin-when-cross-origin` everywhere, a `Content-Security-Policy` that
//! allows no script at all and no framing on every HTML page, and HSTS when the public URL is https.
//! The pages use no script; their one inline `<style>` (the API reference) is allowed by its hash.

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
