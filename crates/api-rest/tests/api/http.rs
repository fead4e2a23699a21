//! HTTP behaviour shared by every route: probes, the JSON error shape, 404, 405, 413.

use crate::helpers::{spawn_app, spawn_app_on};
use api_rest::middleware::BODY_LIMIT;
use serde_json::Value;

#[tokio::test]
async fn probes_answer() {
    let app = spawn_app(false).await;
    let health = app.get("/healthz").await;
    assert_eq!(health.status(), 200, "alive at once");
    app.wait_ready().await;
    let ready: Value = app.get("/readyz").await.json().await.unwrap();
    assert_eq!(ready["status"], "ready");
}

#[tokio::test]
async fn unknown_routes_are_json_404s() {
    let app = spawn_app(false).await;
    let r = app.get("/no/such/route").await;
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");
    assert!(body["error"]["message"].as_str().unwrap().contains("not found"));
    assert!(body["error"]["details"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn wrong_methods_are_json_405s() {
    let app = spawn_app(false).await;
    for path in ["/healthz", "/readyz"] {
        let r = app.client.delete(format!("{}{path}", app.base)).send().await.unwrap();
        assert_eq!(r.status(), 405, "{path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "method_not_allowed");
    }
    // API resources say which methods they take (RFC 9110).
    for (method, path, allow) in [
        ("TRACE", "/api/v1/listings", "GET"),
        ("DELETE", "/api/v1/claims", "GET, POST"),
        ("PUT", "/api/v1/openapi.json", "GET"),
    ] {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let r = app.client.request(m, format!("{}{path}", app.base)).send().await.unwrap();
        assert_eq!(r.status(), 405, "{method} {path}");
        let got = r.headers().get("allow").map(|v| v.to_str().unwrap().to_owned());
        let mut got: Vec<String> = got.unwrap_or_default().split(", ").map(str::to_owned).collect();
        got.sort();
        assert_eq!(got.join(", "), allow, "{method} {path}");
    }
}

#[tokio::test]
async fn bodies_over_one_mebibyte_get_413() {
    let app = spawn_app(false).await;
    let post = |n: usize| {
        app.client
            .post(format!("{}/healthz", app.base))
            .header("content-type", "application/json")
            .body(vec![b' '; n])
            .send()
    };
    let at_limit = post(BODY_LIMIT).await.unwrap();
    assert_eq!(at_limit.status(), 405, "a body of exactly 1 MiB passes the limit and reaches routing");
    let over = post(BODY_LIMIT + 1).await.unwrap();
    assert_eq!(over.status(), 413);
    let body: Value = over.json().await.unwrap();
    assert_eq!(body["error"]["code"], "payload_too_large");
}

#[tokio::test]
async fn readyz_is_503_when_the_database_is_gone() {
    use sea_orm::{ConnectionTrait, Database};
    let Some(db) = test_support::postgres().await else { return };
    let app = spawn_app_on(db, false).await;
    app.wait_ready().await;
    let name = app.db.url.rsplit('/').next().unwrap().to_owned();
    let admin = Database::connect(&test_support::postgres_admin_url()).await.unwrap();
    admin.execute_unprepared(&format!("DROP DATABASE \"{name}\" WITH (FORCE)")).await.unwrap();
    let r = app.get("/readyz").await;
    assert_eq!(r.status(), 503);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable");
    assert_eq!(app.get("/healthz").await.status(), 200, "alive, just not ready");
}
