//! The error shape of the contract (`{"error": {"code", "message", "details"}}`), its statuses and its
//! headers, one per kind of failure a use case reports, snapshotted (insta) so a change to what
//! clients parse is a reviewed diff.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use actix_web::ResponseError;
use api_http::ApiError;
use domain::ValidationError;
use domain::user::Scope;
use operations::OpError;
use serde_json::{Value, json};

fn shape(e: OpError) -> Value {
    let api = ApiError::from(e);
    let res = api.error_response();
    let header = |h: &str| res.headers().get(h).and_then(|v| v.to_str().ok()).map(str::to_owned);
    json!({
        "status": res.status().as_u16(),
        "www_authenticate": header("www-authenticate"),
        "retry_after": header("retry-after"),
        "content_type": header("content-type"),
        "body": api.body_json(),
    })
}

#[test]
fn every_kind_of_failure_has_its_status_headers_and_body() {
    let invalid = domain::ValidationErrors(vec![
        ValidationError::new("per_page", "must be at most 100"),
        ValidationError::new("fields.tagline", "at most 200 characters"),
    ]);
    let shapes = json!({
        "invalid_one_field": shape(OpError::Invalid(ValidationError::new("slug", "must be 1-80 characters").into())),
        "invalid_two_fields": shape(OpError::Invalid(invalid)),
        "not_found": shape(OpError::NotFound("listing")),
        "unauthenticated": shape(OpError::Unauthenticated),
        "invalid_token": shape(OpError::InvalidToken),
        "forbidden": shape(OpError::Forbidden(Scope::ListingsWrite)),
        "conflict": shape(OpError::Conflict { code: "draft_not_ready", message: "the draft is still being drafted".into() }),
        "too_many": shape(OpError::TooMany { code: "crawl_quota", message: "30 sites a day".into(), retry_after_secs: 3600 }),
        "upstream": shape(OpError::Upstream { code: "payment_provider_failed", message: "try again in a moment".into() }),
        "idempotency_in_flight": shape(OpError::IdempotencyInFlight),
        "idempotency_mismatch": shape(OpError::IdempotencyMismatch),
        "storage_failed": shape(OpError::Repo(domain::ports::RepoError::Unexpected("disk full".into()))),
    });
    insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("error_shapes", shapes);
    });
}
