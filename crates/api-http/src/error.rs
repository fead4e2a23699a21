//! The one error shape of CONTRACT.md: `{"error": {"code", "message", "details": [...]}}`.
//! Architecture invariant: HTTP status mapping for domain errors lives here and only here.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use domain::ValidationError;
use domain::ValidationErrors;
use domain::ports::RepoError;
use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Detail {
    pub field: String,
    pub problem: String,
}

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Vec<Detail>,
    /// The `WWW-Authenticate` challenge of a 401 or 403 (RFC 6750).
    pub challenge: Option<String>,
    /// Seconds for `Retry-After` (a 429 from a quota).
    pub retry_after: Option<u64>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    code: &'a str,
    message: &'a str,
    details: &'a [Detail],
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), details: Vec::new(), challenge: None, retry_after: None }
    }

    /// 401 for a request without a credential.
    pub fn unauthenticated() -> Self {
        let mut e = Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "sign in: send Authorization: Bearer <API key> (create one under API keys in your account)",
        );
        e.challenge = Some("Bearer".into());
        e
    }

    /// 401 for a malformed, unknown or revoked credential.
    pub fn invalid_token() -> Self {
        let mut e =
            Self::new(StatusCode::UNAUTHORIZED, "invalid_token", "the credential is malformed, unknown or revoked");
        e.challenge = Some(
            r#"Bearer error="invalid_token", error_description="the credential is malformed, unknown or revoked""#
                .into(),
        );
        e
    }

    /// 429 past the rate limit.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("too many requests; try again in {retry_after_secs} s"),
        )
    }

    /// 403 for access without the operation's scope.
    pub fn insufficient_scope(scope: &str) -> Self {
        let mut e = Self::new(StatusCode::FORBIDDEN, "insufficient_scope", format!("this needs the {scope} scope"));
        e.challenge = Some(format!(r#"Bearer error="insufficient_scope", scope="{scope}""#));
        e
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", format!("{what} not found"))
    }

    pub fn method_not_allowed() -> Self {
        Self::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "this path does not accept that method")
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("request bodies are limited to {limit} bytes"),
        )
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }

    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "something went wrong on our side; it has been logged")
    }

    pub fn body_json(&self) -> serde_json::Value {
        serde_json::to_value(Body { error: Inner { code: self.code, message: &self.message, details: &self.details } })
            .unwrap_or_default()
    }
}

impl From<ValidationErrors> for ApiError {
    fn from(e: ValidationErrors) -> Self {
        let details: Vec<Detail> = e.0.into_iter().map(|v| Detail { field: v.field, problem: v.problem }).collect();
        let message = match details.as_slice() {
            [one] => format!("{}: {}", one.field, one.problem),
            _ => format!("{} fields are invalid", details.len()),
        };
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "invalid_request",
            message,
            details,
            challenge: None,
            retry_after: None,
        }
    }
}

impl From<ValidationError> for ApiError {
    fn from(e: ValidationError) -> Self {
        ValidationErrors::from(e).into()
    }
}

impl From<RepoError> for ApiError {
    fn from(e: RepoError) -> Self {
        match e {
            RepoError::NotFound => Self::not_found("record"),
            RepoError::Conflict(m) => {
                tracing::info!(conflict = %m, "write refused by a uniqueness rule");
                Self::new(StatusCode::CONFLICT, "conflict", "this conflicts with an existing record")
            }
            RepoError::Unavailable(source) => {
                tracing::error!(error = %source, "storage unavailable");
                let mut e = Self::unavailable("the database is not answering; try again in a moment");
                e.retry_after = Some(5);
                e
            }
            RepoError::Unexpected(source) => {
                tracing::error!(error = %source, "storage failed");
                Self::internal()
            }
        }
    }
}

impl From<operations::OpError> for ApiError {
    fn from(e: operations::OpError) -> Self {
        match e {
            operations::OpError::Invalid(v) => v.into(),
            operations::OpError::NotFound(what) => Self::not_found(what),
            operations::OpError::Unauthenticated => Self::unauthenticated(),
            operations::OpError::InvalidToken => Self::invalid_token(),
            operations::OpError::Forbidden(scope) => Self::insufficient_scope(scope.as_str()),
            e @ operations::OpError::IdempotencyInFlight => {
                Self::new(StatusCode::CONFLICT, "idempotency_key_in_flight", e.to_string())
            }
            e @ operations::OpError::IdempotencyMismatch => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused", e.to_string())
            }
            operations::OpError::Conflict { code, message } => Self::new(StatusCode::CONFLICT, code, message),
            operations::OpError::TooMany { code, message, retry_after_secs } => {
                let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, code, message);
                e.retry_after = Some(retry_after_secs);
                e
            }
            operations::OpError::Upstream { code, message } => Self::new(StatusCode::BAD_GATEWAY, code, message),
            operations::OpError::Repo(r) => r.into(),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.message)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut r = HttpResponse::build(self.status);
        if let Some(c) = &self.challenge {
            r.insert_header(("WWW-Authenticate", c.as_str()));
        }
        if let Some(secs) = self.retry_after {
            r.insert_header(("Retry-After", secs.to_string()));
        }
        r.json(self.body_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_errors_name_each_field() {
        let mut v = ValidationErrors::default();
        v.push(ValidationError::new("fields.name", "longer than 500 characters"));
        let e = ApiError::from(v);
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(
            e.body_json(),
            serde_json::json!({"error": {"code": "invalid_request", "message": "fields.name: longer than 500 characters",
                "details": [{"field": "fields.name", "problem": "longer than 500 characters"}]}})
        );
    }

    #[test]
    fn storage_failures_do_not_leak() {
        let e = ApiError::from(RepoError::Unexpected("password=hunter2 connection refused".into()));
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!e.body_json().to_string().contains("hunter2"));
    }

    #[test]
    fn an_unreachable_store_is_a_503_to_retry_and_leaks_nothing() {
        let e = ApiError::from(RepoError::Unavailable("postgres://launchdir:hunter2@db connection refused".into()));
        assert_eq!((e.status, e.code, e.retry_after), (StatusCode::SERVICE_UNAVAILABLE, "unavailable", Some(5)));
        assert!(!e.body_json().to_string().contains("hunter2"));
        let res = actix_web::ResponseError::error_response(&e);
        assert_eq!(res.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("5"));
    }
}
