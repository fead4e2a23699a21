//! `/metrics`: what an operator's Prometheus reads (requests by operation and status with latency, the
//! read cache, the job queue, the outbox, the database pool), and who may read it — loopback and the
//! configured networks, judged by whom a request was forwarded for, or an address of its own.

use crate::helpers::{TestApp, spawn_app_configured};

/// The value of the sample `name` whose labels include every `labels` pair (any order).
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (series, value) = l.rsplit_once(' ')?;
        let (metric, rest) = series.split_once('{').unwrap_or((series, ""));
        let all = labels.iter().all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")));
        (metric == name && all).then(|| value.parse().ok()).flatten()
    })
}

async fn scrape(app: &TestApp, forwarded_for: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(format!("{}/metrics", app.base));
    if let Some(f) = forwarded_for {
        req = req.header("X-Forwarded-For", f);
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn loopback_reads_requests_by_operation_the_cache_the_queue_and_the_pool() {
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    for _ in 0..2 {
        assert_eq!(app.get("/api/v1/listings?q=rockets").await.status(), 200);
    }
    assert_eq!(app.get("/api/v1/listings/no-such-listing").await.status(), 404);
    assert_eq!(app.get("/no/such/route").await.status(), 404);

    let r = scrape(&app, None).await;
    assert_eq!(r.status(), 200);
    let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
    let text = r.text().await.unwrap();
    let search = [("operation", "search_listings"), ("method", "GET"), ("status", "200")];
    assert_eq!(sample(&text, "launchdir_http_requests_total", &search), Some(2.0), "{text}");
    let missing = [("operation", "get_listing"), ("status", "404")];
    assert_eq!(sample(&text, "launchdir_http_requests_total", &missing), Some(1.0), "by operation, not by slug");
    let unknown = [("operation", "unmatched"), ("status", "404")];
    assert_eq!(sample(&text, "launchdir_http_requests_total", &unknown), Some(1.0), "no path becomes a label");
    assert!(!text.contains("no-such-listing") && !text.contains("/no/such/route"), "paths never leak into labels");
    let timed = [("operation", "search_listings"), ("le", "+Inf")];
    assert_eq!(sample(&text, "launchdir_http_request_duration_seconds_bucket", &timed), Some(2.0));
    assert!(
        sample(&text, "launchdir_http_request_duration_seconds_sum", &[("operation", "search_listings")]).is_some()
    );
    // The second search was answered from the read cache.
    assert!(sample(&text, "launchdir_read_cache_hits_total", &[]).is_some_and(|n| n >= 1.0), "{text}");
    assert!(sample(&text, "launchdir_read_cache_misses_total", &[]).is_some_and(|n| n >= 1.0));
    for gauge in ["launchdir_jobs_queued", "launchdir_jobs_due", "launchdir_jobs_running", "launchdir_emails_unsent"] {
        assert!(sample(&text, gauge, &[]).is_some(), "{gauge} is exported");
    }
    assert!(sample(&text, "launchdir_jobs_oldest_due_age_seconds", &[]).is_some());
    assert!(sample(&text, "launchdir_db_pool_connections_max", &[]).is_some_and(|n| n >= 1.0));
    assert!(sample(&text, "launchdir_db_pool_connections_open", &[]).is_some_and(|n| n >= 1.0));
    // The search slots (SQLite's too, for the searches its pool runs): exported, none in use now.
    assert!(sample(&text, "launchdir_db_search_slots", &[]).is_some_and(|n| n >= 1.0), "{text}");
    for gauge in ["launchdir_db_search_slots_in_use", "launchdir_db_searches_waiting"] {
        assert_eq!(sample(&text, gauge, &[]), Some(0.0), "{gauge} is exported");
    }
    assert_eq!(sample(&text, "launchdir_db_searches_busy_total", &[]), Some(0.0));
    assert!(text.trim_end().ends_with("# EOF"), "a complete exposition");

    // Counters only grow: a second scrape counts the first.
    let again = scrape(&app, None).await.text().await.unwrap();
    let scrapes = [("operation", "/metrics"), ("status", "200")];
    assert_eq!(sample(&again, "launchdir_http_requests_total", &scrapes), Some(1.0));
    assert_eq!(sample(&again, "launchdir_http_requests_total", &search), Some(2.0));
}

#[tokio::test]
async fn a_request_forwarded_for_a_stranger_is_a_404_whoever_forwards_it() {
    // A reverse proxy on the same host: its requests come from loopback. Not trusted, it cannot say
    // whom a request is for, so one carrying X-Forwarded-For is refused.
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let r = scrape(&app, Some("203.0.113.7")).await;
    assert_eq!(r.status(), 404);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found", "the error shape of any unknown route: {body}");
    assert_eq!(scrape(&app, None).await.status(), 200, "loopback itself reads them");

    // Trusted, the proxy's client is judged: in LAUNCHDIR_METRICS_ALLOW it reads, elsewhere not.
    let app = spawn_app_configured(test_support::sqlite(), false, |a| {
        a.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
        a.metrics_allow = vec!["203.0.113.0/24".parse().unwrap()];
    })
    .await;
    app.wait_ready().await;
    assert_eq!(scrape(&app, Some("203.0.113.7")).await.status(), 200, "an allowed network");
    assert_eq!(scrape(&app, Some("198.51.100.9")).await.status(), 404, "anyone else");
    assert_eq!(
        scrape(&app, Some("198.51.100.9, 203.0.113.7")).await.status(),
        200,
        "the proxy's own hop is the client"
    );
    assert_eq!(scrape(&app, Some("127.0.0.1")).await.status(), 404, "a forwarded loopback is not this host");
    let post = app.client.post(format!("{}/metrics", app.base)).send().await.unwrap();
    assert_eq!(post.status(), 405);
}

#[tokio::test]
async fn metrics_on_an_address_of_their_own_leave_the_service_port() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let app = spawn_app_configured(test_support::sqlite(), false, move |a| {
        a.metrics_bind = Some(format!("127.0.0.1:{port}").parse().unwrap());
    })
    .await;
    app.wait_ready().await;
    assert_eq!(scrape(&app, None).await.status(), 404, "not on the service's port, even from loopback");
    let own = app.client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.unwrap();
    assert_eq!(own.status(), 200);
    let text = own.text().await.unwrap();
    assert!(sample(&text, "launchdir_db_pool_connections_max", &[]).is_some(), "{text}");
    let other = app.client.get(format!("http://127.0.0.1:{port}/api/v1/listings")).send().await.unwrap();
    assert_eq!(other.status(), 404, "that address serves the metrics and nothing else");
}
