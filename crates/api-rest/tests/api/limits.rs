//! Rate limits: per API key, else per client IP; 429 with Retry-After; RateLimit-* on every response;
//! one limit across instances sharing Redis.

use crate::helpers::{TestApp, spawn_app_configured};

fn header(r: &reqwest::Response, name: &str) -> Option<u64> {
    r.headers().get(name).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok())
}

async fn hit(app: &TestApp, key: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(format!("{}/api/v1/categories", app.base));
    if let Some(k) = key {
        req = req.header("Authorization", format!("Bearer {k}"));
    }
    req.send().await.unwrap()
}

fn random_key() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (nanos >> (i % 16 * 8)) as u8 ^ (i as u8).wrapping_mul(37) ^ (std::process::id() as u8);
    }
    domain::auth::ApiKeyToken::from_random(&bytes).as_str().to_owned()
}

#[tokio::test]
async fn a_burst_past_the_limit_gets_429_with_the_headers() {
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.rate_limit = 5).await;
    app.wait_ready().await;
    for i in 0..5u64 {
        let r = hit(&app, None).await;
        assert_eq!(r.status(), 200, "request {i}");
        assert_eq!(header(&r, "ratelimit-limit"), Some(5));
        assert_eq!(header(&r, "ratelimit-remaining"), Some(4 - i));
        assert!(header(&r, "ratelimit-reset").is_some_and(|s| s > 0 && s <= 60));
    }
    let r = hit(&app, None).await;
    assert_eq!(r.status(), 429);
    let retry = header(&r, "retry-after").unwrap();
    assert!((11..=12).contains(&retry), "one request every 12 s: {retry}");
    assert_eq!(header(&r, "ratelimit-remaining"), Some(0));
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");

    // A key nobody issued earns no quota of its own: it counts against the spent address. Probes are
    // exempt. (tests/api/attacks/rate_limit.rs holds the evasion attempts.)
    let r = hit(&app, Some(&random_key())).await;
    assert_eq!(r.status().as_u16(), 429);
    let probe = app.get("/healthz").await;
    assert!(probe.status().is_success() && probe.headers().get("ratelimit-limit").is_none());
    // A malformed credential counts against the address too.
    assert_eq!(hit(&app, Some("not-a-key")).await.status(), 429);
}

#[tokio::test]
async fn two_instances_sharing_redis_enforce_one_limit_and_another_deployment_its_own() {
    let Some(url) = test_support::redis().await else { return };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let configure = |secret: String| {
        let url = url.clone();
        move |a: &mut bootstrap::ServeArgs| {
            a.rate_limit = 5;
            a.redis_url = Some(url);
            // Behind a trusted proxy, each run is a client of its own in the shared Redis.
            a.trusted_proxies = vec![bootstrap::config::parse_cidr("127.0.0.1").unwrap()];
            a.secrets.secret_key = Some(secret);
        }
    };
    let ours = format!("one-deployment-with-two-instances-{nanos}");
    let a = spawn_app_configured(test_support::sqlite(), false, configure(ours.clone())).await;
    let b = spawn_app_configured(test_support::sqlite(), false, configure(ours)).await;
    // Another deployment (say staging) on the same Redis: a root secret of its own.
    let staging =
        spawn_app_configured(test_support::sqlite(), false, configure(format!("staging-{nanos}-{}", "s".repeat(32))))
            .await;
    for app in [&a, &b, &staging] {
        app.wait_ready().await;
    }
    let client = format!("2001:db8:{:x}:{:x}::1", nanos >> 16, nanos & 0xffff);
    let get = |app: &crate::helpers::TestApp| {
        app.client.get(format!("{}/api/v1/categories", app.base)).header("X-Forwarded-For", client.clone()).send()
    };
    let mut statuses = Vec::new();
    for i in 0..6 {
        statuses.push(get(if i % 2 == 0 { &a } else { &b }).await.unwrap().status().as_u16());
    }
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429], "five across both instances, then 429");
    assert_eq!(get(&staging).await.unwrap().status(), 200, "another deployment's limit is its own");
}
