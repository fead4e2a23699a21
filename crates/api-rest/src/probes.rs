//! Liveness and readiness probes (CONTRACT.md, "Probes").

use crate::error::ApiError;
use crate::server::State;
use actix_web::{HttpResponse, web};
use std::sync::atomic::Ordering;

/// 200 while the process runs.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

/// 200 once start-up (migrations, seeding) finished and the database answers; 503 otherwise.
pub async fn readyz(state: web::Data<State>) -> Result<HttpResponse, ApiError> {
    if !state.started.load(Ordering::Acquire) {
        return Err(ApiError::unavailable("starting: migrations and seeding are not finished"));
    }
    if !state.app.is_ready().await {
        return Err(ApiError::unavailable("the database does not answer or migrations are pending"));
    }
    Ok(HttpResponse::Ok().json(serde_json::json!({"status": "ready"})))
}
