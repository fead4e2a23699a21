//! The crawler and the job queue: a submitted URL aimed at a port that is no website or at the service
//! itself, an account queueing crawls without end, and a queue of slow crawls holding up launches.

use crate::drafts::{Maker, maker};
use chrono::Utc;
use domain::listing::{Lifecycle, ListingProfile, ListingStatus, NewListing};
use domain::slug::Slug;
use domain::week::LaunchWeek;
use serde_json::json;
use std::time::{Duration, Instant};

/// A loopback server that accepts connections and never answers: a site as slow as a site can be.
async fn silent_site() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
        }
    });
    (format!("127.0.0.1:{}", addr.port()), task)
}

async fn settle(m: &Maker, id: &str) -> serde_json::Value {
    for _ in 0..200 {
        let (_, d) = m.call("GET", &format!("/drafts/{id}"), &m.key, None, None).await;
        if d["status"] != "crawling" && d["status"] != "drafting" {
            return d;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("draft {id} did not settle");
}

#[tokio::test]
async fn a_submitted_url_on_a_port_that_is_no_website_is_never_connected_to() {
    let m = maker(vec![]).await;
    // A public address (documentation-free, routable) on the SMTP port: refused before any connection.
    let (st, d) = m.call("POST", "/drafts", &m.key, Some(json!({"url": "http://93.184.216.34:25/"})), None).await;
    assert_eq!(st, 201, "{d}");
    let d = settle(&m, d["id"].as_str().unwrap()).await;
    assert_eq!(d["status"], "failed", "{d}");
    assert!(d["failure_reason"].as_str().unwrap_or_default().contains("ports 80 and 443"), "{d}");
}

#[tokio::test]
async fn one_account_cannot_keep_the_crawler_busy_without_end() {
    let (silent, _task) = silent_site().await;
    let m = maker(vec![silent.clone()]).await;
    let submit = |n: usize| {
        let m = &m;
        let url = format!("http://{silent}/p{n}");
        async move { m.call("POST", "/drafts", &m.key, Some(json!({"url": url})), None).await }
    };
    for n in 0..3 {
        assert_eq!(submit(n).await.0, 201, "draft {n}");
    }
    // Three drafts are still being read (the site never answers): a fourth waits.
    let r = m
        .app
        .client
        .post(format!("{}/api/v1/drafts", m.app.base))
        .bearer_auth(&m.key)
        .json(&json!({"url": format!("http://{silent}/p3")}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.headers().get("retry-after").is_some());
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "drafts_in_progress", "{body}");
    // Another person is not held up by this account's crawls.
    let (st, _) =
        m.call("POST", "/drafts", &m.other_key, Some(json!({"url": format!("http://{silent}/x")})), None).await;
    assert_eq!(st, 201);
}

#[tokio::test]
async fn submissions_sent_all_at_once_still_start_only_three_reads() {
    // Each submission used to count the account's drafts being read, then create its own: sent
    // together, they all counted the drafts committed before any of them.
    let (silent, _task) = silent_site().await;
    for db in [Some(test_support::sqlite()), test_support::postgres().await].into_iter().flatten() {
        let m = crate::drafts::maker_on(db, vec![silent.clone()]).await;
        let submissions = (0..10).map(|n| {
            let (m, url) = (&m, format!("http://{silent}/burst{n}"));
            async move { m.call("POST", "/drafts", &m.key, Some(json!({"url": url})), None).await }
        });
        let answers = futures_util::future::join_all(submissions).await;
        let started = answers.iter().filter(|(st, _)| *st == 201).count() as u64;
        assert_eq!(started, domain::draft::crawl_caps::CONCURRENT, "{answers:?}");
        for (st, body) in answers.iter().filter(|(st, _)| *st != 201) {
            assert_eq!((*st, body["error"]["code"].as_str()), (429, Some("drafts_in_progress")), "{body}");
        }
        let (_, mine) = m.call("GET", "/drafts", &m.key, None, None).await;
        assert_eq!(mine["pagination"]["total"], 3, "no refused submission left a draft: {mine}");
    }
}

#[tokio::test]
async fn an_account_reads_at_most_thirty_sites_a_day() {
    let site = test_support::FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let id = m.submit(&site.url()).await;
    m.settle(&id).await;
    // Each competitor page read counts too: 29 more reach the day's 30.
    for n in 1..domain::draft::crawl_caps::PER_DAY {
        let body = json!({"competitor_url": format!("{}c{n}", site.url())});
        let (st, d) = m.call("PATCH", &format!("/drafts/{id}"), &m.key, Some(body), None).await;
        assert_eq!(st, 200, "read {n}: {d}");
    }
    let body = json!({"competitor_url": format!("{}one-too-many", site.url())});
    let (st, e) = m.call("PATCH", &format!("/drafts/{id}"), &m.key, Some(body), None).await;
    assert_eq!((st, e["error"]["code"].as_str()), (429, Some("crawl_quota")), "{e}");
    let (_, d) = m.call("GET", &format!("/drafts/{id}"), &m.key, None, None).await;
    assert!(!d.to_string().contains("one-too-many"), "a refused edit saves nothing");
    let (st, e) = m.call("POST", "/drafts", &m.key, Some(json!({"url": site.url()})), None).await;
    assert_eq!((st, e["error"]["code"].as_str()), (429, Some("crawl_quota")));
}

#[tokio::test]
async fn slow_crawls_in_the_queue_do_not_hold_up_a_launch() {
    let (silent, _task) = silent_site().await;
    let m = maker(vec![silent.clone()]).await;
    // A crawl that will hang for its whole timeout occupies the job worker …
    assert_eq!(m.call("POST", "/drafts", &m.key, Some(json!({"url": format!("http://{silent}/")})), None).await.0, 201);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // … while a paid launch scheduled for the week that just began waits to go live.
    let store = bootstrap::App::connect(&m.app.db.url).await.unwrap();
    let now = Utc::now();
    let this_week = LaunchWeek::of(now);
    let mut lifecycle = Lifecycle::saved();
    lifecycle.paid_launch(Some(this_week), this_week.starts_at() - chrono::Duration::days(1)).unwrap();
    assert_eq!(lifecycle.status(), ListingStatus::Scheduled);
    let new = NewListing::plain(
        Slug::parse("launches-on-time").unwrap(),
        ListingProfile::named("Launches On Time", "https://on-time.example/", "on-time.example"),
        lifecycle,
        now,
    );
    let l = store.store.create_listing(new).await.unwrap();
    let started = Instant::now();
    loop {
        let got = store.store.get_listing(l.id).await.unwrap().unwrap();
        if got.lifecycle.status() == ListingStatus::Live {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the launch waited behind the crawl");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A loopback server answering every request with a redirect to `to`.
async fn redirecting_to(to: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let to = to.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16384];
                let _ = sock.read(&mut buf).await;
                let out =
                    format!("HTTP/1.1 307 Moved\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                let _ = sock.write_all(out.as_bytes()).await;
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

#[tokio::test]
async fn a_providers_redirect_is_not_followed() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // Where a hijacked or misconfigured provider would send our request (and its payload).
    let reached = std::sync::Arc::new(AtomicUsize::new(0));
    let hits = reached.clone();
    let elsewhere = test_support::JsonStandIn::start(move |_: &str, _: &str| {
        hits.fetch_add(1, Ordering::SeqCst);
        (200, json!({"countryCode": "DE", "vatNumber": "123456789", "valid": true}).to_string())
    })
    .await;
    let vies = redirecting_to(format!("{}/check-vat-number", elsewhere.url())).await;
    let db = test_support::sqlite();
    let key = crate::drafts::key_for(
        &db.url,
        "ann@acme.example",
        &[domain::user::Scope::AccountRead, domain::user::Scope::ListingsWrite, domain::user::Scope::OrdersWrite],
    )
    .await;
    let app = crate::helpers::spawn_app_configured(db, false, move |a| a.outbound.vies_url = Some(vies)).await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let id = crate::orders::owned_listing(&store, "Redirected", "ann@acme.example").await;
    let body = json!({"items": [{"product": "launch", "listing_id": id}], "billing_country": "DE", "vat_number": "DE123456789"});
    let (st, q) = crate::own::call(&app, "POST", "/orders/quote", &key, Some(body)).await;
    assert_eq!(st, 200, "{q}");
    assert_eq!(reached.load(Ordering::SeqCst), 0, "the redirect was followed");
    assert_eq!(q["vat"]["reverse_charge"], false, "an unanswered check charges VAT: {q}");
}
