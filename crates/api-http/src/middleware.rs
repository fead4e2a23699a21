//! Cross-cutting HTTP behaviour: one structured log line per request, the 1 MiB body limit answered
//! with 413 before a handler reads anything, and the rate limit.

use crate::error::ApiError;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::CONTENT_LENGTH;
use actix_web::middleware::Next;
use actix_web::{Error, ResponseError};
use std::time::Instant;

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 1024 * 1024;

pub async fn log_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let started = Instant::now();
    let method = req.method().to_string();
    let path = req.path().to_owned();
    let res = next.call(req).await;
    let us = started.elapsed().as_micros() as u64;
    match &res {
        Ok(r) => tracing::info!(%method, %path, status = r.status().as_u16(), us, "request"),
        Err(e) => tracing::info!(%method, %path, status = e.as_response_error().status_code().as_u16(), us, "request"),
    }
    res.map(ServiceResponse::map_into_boxed_body)
}

/// Refuses a declared body over [`BODY_LIMIT`]. Bodies without a length (chunked) are capped by the
/// payload extractors' own limit, configured to the same number in `server.rs`.
pub async fn limit_body(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let declared = req.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > BODY_LIMIT as u64) {
        let (http_req, _) = req.into_parts();
        return Ok(ServiceResponse::new(http_req, ApiError::payload_too_large(BODY_LIMIT).error_response()));
    }
    next.call(req).await.map(ServiceResponse::map_into_boxed_body)
}

/// The rate limit a server enforces: registered as `web::Data<Limits>` beside the `rate_limit` middleware.
#[derive(Debug, Clone)]
pub struct Limits {
    pub limiter: std::sync::Arc<dyn domain::ports::RateLimiter>,
    /// Requests per minute per client.
    pub quota: domain::ratelimit::Quota,
}

/// Who a request counts against: its API key (by the key's shown part, when the key is well-formed;
/// no lookup), else the connecting IP. A malformed credential counts against the IP, so inventing keys
/// does not escape the limit. Behind a load balancer the peer is the balancer: see docs/DECISIONS.md.
fn client_of(req: &ServiceRequest) -> String {
    if let crate::Caller::Bearer(raw) = crate::caller_of(req.request())
        && let Ok(token) = domain::auth::ApiKeyToken::parse(&raw)
    {
        return format!("key:{}", token.shown());
    }
    client_address(req.request()).map_or_else(|| "ip:unknown".to_owned(), |ip| format!("ip:{ip}"))
}

/// The client's address: the peer, or behind a load balancer the address it reports (see
/// [`forwarded_for`]). What the rate limit keys anonymous callers by, and the site's vote cap.
pub fn client_address(req: &actix_web::HttpRequest) -> Option<std::net::IpAddr> {
    let peer = req.peer_addr().map(|a| a.ip())?;
    Some(forwarded_for(req, peer).unwrap_or(peer))
}

/// The client address a load balancer reports, trusted only when the connection itself comes from a
/// private or loopback address (the balancer's network): the last `X-Forwarded-For` entry, which the
/// balancer appended. From a public peer the header is ignored, so a client cannot choose its own IP.
fn forwarded_for(req: &actix_web::HttpRequest, peer: std::net::IpAddr) -> Option<std::net::IpAddr> {
    let trusted = match peer {
        std::net::IpAddr::V4(v4) => v4.is_private() || v4.is_loopback(),
        std::net::IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
    };
    if !trusted {
        return None;
    }
    let header = req.headers().get("x-forwarded-for")?.to_str().ok()?;
    header.rsplit(',').next()?.trim().parse().ok()
}

/// The rate limit of every operation, page and tool (probes are exempt): 429 with `Retry-After` past
/// it, and `RateLimit-Limit` / `RateLimit-Remaining` / `RateLimit-Reset` on every response.
pub async fn rate_limit(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    if matches!(req.path(), "/healthz" | "/readyz") {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    }
    let Some(limits) = req.app_data::<actix_web::web::Data<Limits>>().cloned() else {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    };
    let client = client_of(&req);
    let d = limits.limiter.check(&client, limits.quota).await;
    let secs = |d: std::time::Duration| d.as_secs() + u64::from(d.subsec_nanos() > 0);
    let headers = [
        ("ratelimit-limit", d.limit.to_string()),
        ("ratelimit-remaining", d.remaining.to_string()),
        ("ratelimit-reset", secs(d.reset).to_string()),
    ];
    let mut res = if d.allowed {
        next.call(req).await?.map_into_boxed_body()
    } else {
        let retry = secs(d.retry_after.unwrap_or_default()).max(1);
        let (http_req, _) = req.into_parts();
        let mut r = ApiError::rate_limited(retry).error_response();
        if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&retry.to_string()) {
            r.headers_mut().insert(actix_web::http::header::RETRY_AFTER, v);
        }
        ServiceResponse::new(http_req, r)
    };
    for (name, value) in headers {
        if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&value) {
            res.headers_mut().insert(actix_web::http::header::HeaderName::from_static(name), v);
        }
    }
    Ok(res)
}
