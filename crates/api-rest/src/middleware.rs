//! Cross-cutting HTTP behaviour: one structured log line per request, and the 1 MiB body limit
//! answered with 413 before a handler reads anything.

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
