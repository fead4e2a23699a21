//! Liveness and readiness probes (CONTRACT.md, "Probes").

use crate::error::ApiError;
use crate::server::State;
use actix_web::{HttpResponse, web};
use std::sync::atomic::Ordering;

/// 200 while the process runs.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

/// The longest readiness waits for the database: a probe gets its 503 within a load balancer's
/// timeout (commonly 5 s; set Kubernetes' `timeoutSeconds` to 3) instead of after the pool's 10 s wait
/// for a connection while the database is down. A database that takes longer to answer a ping is not
/// one to send traffic to.
pub const READY_CHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// 200 once start-up (migrations, seeding) finished and the database answers within [`READY_CHECK`];
/// 503 otherwise.
pub async fn readyz(state: web::Data<State>) -> Result<HttpResponse, ApiError> {
    if !state.started.load(Ordering::Acquire) {
        return Err(ApiError::unavailable("starting: migrations and seeding are not finished"));
    }
    if !tokio::time::timeout(READY_CHECK, state.app.is_ready()).await.unwrap_or(false) {
        return Err(ApiError::unavailable("the database does not answer or migrations are pending"));
    }
    Ok(HttpResponse::Ok().json(serde_json::json!({"status": "ready"})))
}

/// Until start-up finished (migrations, seeding, demo data), every route but the probes answers 503
/// with `Retry-After: 1`: an answer computed from a half-loaded database would be wrong, and cached.
pub async fn until_ready(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    let starting = req.app_data::<web::Data<State>>().is_some_and(|s| !s.started.load(Ordering::Acquire));
    if starting && !matches!(req.path(), "/healthz" | "/readyz") {
        let (http_req, _) = req.into_parts();
        let mut e = ApiError::unavailable("the service is starting; try again in a moment");
        e.retry_after = Some(1);
        let res = actix_web::ResponseError::error_response(&e);
        return Ok(actix_web::dev::ServiceResponse::new(http_req, res));
    }
    next.call(req).await.map(actix_web::dev::ServiceResponse::map_into_boxed_body)
}
