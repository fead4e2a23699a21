//! Pages against framing, sniffing and script, and a page cache that junk query strings can neither
//! fill nor get past.

use crate::helpers::{spawn_app, spawn_app_configured};
use sea_orm::ConnectionTrait;

#[tokio::test]
async fn every_page_forbids_script_and_framing_and_https_deployments_ask_for_https() {
    let app =
        spawn_app_configured(test_support::sqlite(), true, |a| a.public_url = Some("https://l.example".into())).await;
    app.wait_ready().await;
    let listing: serde_json::Value = app.get("/api/v1/listings?per_page=1").await.json().await.unwrap();
    let slug = listing["items"][0]["slug"].as_str().unwrap().to_owned();
    for path in [
        "/".to_owned(),
        "/signin".into(),
        "/signup".into(),
        format!("/listings/{slug}"),
        "/listings/no-such-listing".into(),
        "/leaderboards/billboard".into(),
        "/api/v1/docs".into(),
        format!("/badges/{slug}/listed-on.svg"),
    ] {
        let r = app.get(&path).await;
        let h = |n: &str| r.headers().get(n).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        let csp = h("content-security-policy");
        assert!(csp.contains("script-src 'none'") && csp.contains("frame-ancestors 'none'"), "{path}: {csp:?}");
        assert!(csp.contains("default-src 'none'"), "{path}: {csp}");
        assert_eq!(h("x-content-type-options"), "nosniff", "{path}");
        assert_eq!(h("referrer-policy"), "strict-origin-when-cross-origin", "{path}");
        assert!(h("strict-transport-security").starts_with("max-age="), "{path}");
    }
    // The API reference's one inline style is allowed by its hash, nothing else inline.
    let r = app.get("/api/v1/docs").await;
    let csp = r.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("'sha256-") && !csp.contains("unsafe-inline"), "{csp}");
    // JSON is not sniffed either; it needs no page policy.
    let r = app.get("/api/v1/site").await;
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");

    // Plain http (a loopback deployment): no HSTS, which would lock browsers out of it.
    let plain = spawn_app(false).await;
    plain.wait_ready().await;
    let r = plain.get("/signin").await;
    assert!(r.headers().get("strict-transport-security").is_none());
    assert!(r.headers().get("content-security-policy").is_some());
}

#[tokio::test]
async fn junk_query_parameters_neither_fill_the_page_cache_nor_get_past_it() {
    let app = spawn_app_configured(test_support::sqlite(), true, |a| a.read_cache_secs = 600).await;
    app.wait_ready().await;
    let first = app.get("/blog?utm_source=a").await.text().await.unwrap();
    assert!(first.contains("How launch weeks work") || first.contains("<ul class=\"posts\">"), "{first}");
    // Change the data behind the cache's back (no public change is counted)…
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    store
        .sea_orm()
        .connection()
        .execute_unprepared("UPDATE blog_posts SET title = 'Changed behind the cache'")
        .await
        .unwrap();
    // … then ask again with other junk: the same cached page, not a new computation per query string.
    for junk in ["utm_source=b", "x=1&y=2", "page=7", "a=%00"] {
        let again = app.get(&format!("/blog?{junk}")).await.text().await.unwrap();
        assert!(!again.contains("Changed behind the cache"), "?{junk} missed the cache");
    }
}
