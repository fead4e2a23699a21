//! Two `launchdir-api serve` processes behind one PostgreSQL database and one Redis, driven together as
//! a load balancer drives them: one rate limit across both, a change made through one served by the
//! other within a second although both had the read cached, and drafts submitted through both each
//! read and drafted once.

use crate::drafts::key_for;
use crate::helpers::{Binary, wait_ready};
use crate::orders::owned_listing_in;
use domain::listing::{Lifecycle, ListingStatus, Plan};
use domain::user::Scope::{AccountRead, ListingsWrite};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use test_support::FixtureSite;

/// Requests per minute per client on both instances.
const LIMIT: u32 = 100;

async fn send(
    client: &reqwest::Client,
    base: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let url = format!("{base}/api/v1{path}");
    let mut req = if method == "GET" { client.get(url) } else { client.request(method.parse().unwrap(), url) };
    if let Some(k) = key {
        req = req.header("Authorization", format!("Bearer {k}"));
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// How many times each path of the fixture site was requested.
fn tally(site: &FixtureSite) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for p in site.paths() {
        *counts.entry(p).or_default() += 1;
    }
    counts
}

/// Waits until every draft in `ids` is no longer being read or drafted; panics on one that failed.
async fn drafted(store: &bootstrap::App, ids: &[String]) {
    let started = Instant::now();
    for id in ids {
        let id = domain::ids::DraftId::parse(id).unwrap();
        loop {
            let d = domain::ports::DraftRepository::get_draft(store.store.as_ref(), id).await.unwrap().unwrap();
            match d.status().as_str() {
                "ready" => break,
                "crawling" | "drafting" => {}
                other => panic!("draft {id:?} ended {other}: {d:?}"),
            }
            assert!(started.elapsed() < Duration::from_secs(60), "draft {id:?} still {}", d.status().as_str());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

// Other threads keep the fixture site going while the test waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_database_and_one_redis_behave_as_one_service() {
    let Some(db) = test_support::postgres().await else { return };
    let Some(redis) = test_support::redis().await else { return };
    let site = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let makers = ["ann@acme.example", "bob@acme.example", "cy@acme.example"];
    let mut keys = Vec::new();
    for m in makers {
        keys.push(key_for(&db.url, m, &[AccountRead, ListingsWrite]).await);
    }
    let limited = key_for(&db.url, "dee@acme.example", &[AccountRead]).await;
    let store = bootstrap::App::connect(&db.url).await.unwrap();
    let live = Lifecycle::from_parts(ListingStatus::Live, Plan::Paid, None, Some(chrono::Utc::now()));
    let id = owned_listing_in(&store, "Twin Rockets", makers[0], live).await;

    let (limit, allowed) = (LIMIT.to_string(), site.host_port());
    // One deployment: every instance is given the same root secret (it scopes the Redis keys, so this
    // test's buckets are its own however often it runs against one Redis).
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let secret = format!("two-instances-of-one-deployment-{nanos}-{}", std::process::id());
    let env = [
        ("LAUNCHDIR_SECRET_KEY", secret.as_str()),
        ("LAUNCHDIR_REDIS_URL", redis.as_str()),
        ("LAUNCHDIR_RATE_LIMIT", limit.as_str()),
        ("LAUNCHDIR_READ_CACHE_SECS", "600"),
        ("LAUNCHDIR_CRAWLER_ALLOWED_HOSTS", allowed.as_str()),
    ];
    let (a, b) = (Binary::serve_with(&db, &[], &env), Binary::serve_with(&db, &[], &env));
    let client = reqwest::Client::new();
    for x in [&a, &b] {
        wait_ready(&client, &x.base, Duration::from_secs(30)).await.expect("/readyz answers 200");
    }
    let both = [a.base.as_str(), b.base.as_str()];

    // One rate limit: a client alternating between the instances gets LIMIT requests a minute in all
    // (plus what refills while it runs), not LIMIT from each; both instances refuse it once spent.
    let started = Instant::now();
    let (mut ok, mut refused) = (0u32, [0u32; 2]);
    for i in 0..2 * LIMIT as usize {
        match send(&client, both[i % 2], "GET", "/categories", Some(&limited), None).await.0 {
            200 => ok += 1,
            429 => refused[i % 2] += 1,
            s => panic!("request {i}: {s}"),
        }
    }
    let refill = (started.elapsed().as_secs_f64() * f64::from(LIMIT) / 60.0).ceil() as u32;
    assert!(ok >= LIMIT && ok <= LIMIT + refill, "{ok} allowed of {} (limit {LIMIT}, refill {refill})", 2 * LIMIT);
    assert!(refused[0] > 0 && refused[1] > 0, "both instances refuse the spent client: {refused:?}");

    // One cache story: both instances hold the profile (a long TTL); an edit through A is served by B
    // within a second, through the shared change counter.
    let tagline = |v: &Value| v["tagline"].as_str().unwrap_or_default().to_owned();
    for base in both {
        let (s, body) = send(&client, base, "GET", "/listings/twin-rockets", None, None).await;
        assert_eq!(s, 200, "{body}");
        assert_eq!(tagline(&body), "", "no tagline yet: {body}");
    }
    let edit = json!({"fields": {"tagline": "Rockets for two instances"}});
    let (s, body) = send(&client, both[0], "PATCH", &format!("/me/listings/{id}"), Some(&keys[0]), Some(edit)).await;
    assert_eq!(s, 200, "{body}");
    let edited = Instant::now();
    let (_, body) = send(&client, both[0], "GET", "/listings/twin-rockets", None, None).await;
    assert_eq!(tagline(&body), "Rockets for two instances", "the instance that wrote serves its write");
    loop {
        let (_, body) = send(&client, both[1], "GET", "/listings/twin-rockets", None, None).await;
        if tagline(&body) == "Rockets for two instances" {
            break;
        }
        assert!(edited.elapsed() < Duration::from_secs(5), "the other instance never showed the edit");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let seen_after = edited.elapsed();
    assert!(seen_after < Duration::from_secs(1), "the other instance showed the edit after {seen_after:?}");

    // One job queue: what one draft's reading costs the site, then six drafts submitted through both
    // instances at once (three makers, two each); every job is run once, by whichever instance claims it.
    let (s, first) = send(&client, both[0], "POST", "/drafts", Some(&keys[0]), Some(json!({"url": site.url()}))).await;
    assert_eq!(s, 201, "{first}");
    drafted(&store, &[first["id"].as_str().unwrap().to_owned()]).await;
    let one = tally(&site);
    assert!(one.contains_key("/"), "a draft reads the homepage: {one:?}");
    let mut ids = Vec::new();
    for round in 0..2 {
        for (i, key) in keys.iter().enumerate() {
            let base = both[(round + i) % 2];
            let (s, d) = send(&client, base, "POST", "/drafts", Some(key), Some(json!({"url": site.url()}))).await;
            assert_eq!(s, 201, "{d}");
            ids.push(d["id"].as_str().unwrap().to_owned());
        }
    }
    drafted(&store, &ids).await;
    // Give a second run of any job time to show before counting.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let seven: BTreeMap<String, usize> = one.iter().map(|(p, n)| (p.clone(), n * 7)).collect();
    assert_eq!(tally(&site), seven, "each of the seven drafts read the site exactly once");
    eprintln!("two instances: {ok} of {} requests allowed; edit seen on the other after {seen_after:?}", 2 * LIMIT);
}
