//! HTTP plumbing shared by both binaries (`launchdir-api` and `launchdir-mcp`), so the standalone MCP
//! server answers with the same error shape, logs the same way and enforces the same rate limit.
//!
//! Architecture invariant: knows actix-web and the operations' error type; no routes, no MCP.

pub mod error;
pub mod json;
pub mod metrics;
pub mod middleware;
pub mod shutdown;

pub use error::ApiError;
pub use operations::Caller;

use actix_web::HttpRequest;

/// The credential of a request: `Authorization: Bearer <credential>`; any other `Authorization` value
/// is malformed (401), never ignored.
pub fn caller_of(req: &HttpRequest) -> Caller {
    let Some(value) = req.headers().get(actix_web::http::header::AUTHORIZATION) else { return Caller::Anonymous };
    let Ok(value) = value.to_str() else { return Caller::Malformed };
    match value.split_once(' ') {
        Some((scheme, credential)) if scheme.eq_ignore_ascii_case("bearer") && !credential.trim().is_empty() => {
            Caller::Bearer(credential.trim().to_owned())
        }
        _ => Caller::Malformed,
    }
}
