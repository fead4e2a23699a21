//! The Redis limiter against the machine's Redis (LAUNCHDIR_TEST_REDIS_URL, default
//! redis://127.0.0.1:6379). With CI=true an unreachable Redis fails the test instead of skipping it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use adapters_ratelimit::{REDIS_BUDGET, REDIS_REST, RedisLimiter};
use domain::ports::RateLimiter;
use domain::ratelimit::Quota;
use std::time::{Duration, Instant};
use test_support::{ProxyMode, TcpProxy};

fn redis_url() -> String {
    std::env::var("LAUNCHDIR_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

async fn limiter(prefix: &str) -> Option<RedisLimiter> {
    limiter_at(&redis_url(), prefix).await
}

async fn limiter_at(url: &str, prefix: &str) -> Option<RedisLimiter> {
    match RedisLimiter::connect(url, prefix).await {
        Ok(l) => Some(l),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => panic!("Redis at {url} is required in CI: {e}"),
        Err(e) => {
            eprintln!("skipping: Redis at {url} unreachable ({e})");
            None
        }
    }
}

/// A prefix no other test, in this process or another, uses: the tests of this file run at once as
/// threads of one process, so the clock alone could give two of them the same one.
fn unique_prefix() -> String {
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let made = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("launchdir-test:{}:{made}:{nanos}:", std::process::id())
}

#[tokio::test]
async fn two_instances_share_one_limit() {
    let prefix = unique_prefix();
    let (Some(a), Some(b)) = (limiter(&prefix).await, limiter(&prefix).await) else { return };
    let q = Quota::per_minute(5);
    let mut allowed = 0;
    for i in 0..6 {
        let l = if i % 2 == 0 { &a } else { &b };
        let d = l.check("key:ldk_AAAAAAAA", q).await;
        if d.allowed {
            allowed += 1;
            assert_eq!(d.remaining, 4 - i, "request {i}");
        } else {
            assert_eq!(i, 5);
            let retry = d.retry_after.unwrap();
            assert!(retry.as_secs_f64() > 11.0 && retry.as_secs_f64() <= 12.0, "{retry:?}");
            assert_eq!(d.remaining, 0);
        }
    }
    assert_eq!(allowed, 5, "five across both instances, not five each");
    assert!(a.check("key:ldk_BBBBBBBB", q).await.allowed, "another client has its own quota");
}

/// `host:port` of the test Redis.
fn redis_address() -> String {
    test_support::url_parts(&redis_url(), 6379).2
}

/// A check, which must come back within `REDIS_BUDGET` and some room for a busy machine; panics
/// otherwise (before the limiter bounded its waits, one waited for ever on a stalled Redis).
async fn timed_check(l: &RedisLimiter, client: &str, q: Quota) -> domain::ratelimit::Decision {
    let most = REDIS_BUDGET + Duration::from_millis(750);
    let started = Instant::now();
    match tokio::time::timeout(Duration::from_secs(5), l.check(client, q)).await {
        Ok(d) => {
            assert!(started.elapsed() < most, "a check took {:?}", started.elapsed());
            d
        }
        Err(_) => panic!("a check had no answer within 5 s"),
    }
}

/// A limiter on the test Redis through a [`TcpProxy`] (`None`, skipped, where no Redis answers outside
/// CI), with the client `ip:spent` given all of its `limit` a minute.
async fn spent_through_a_proxy(limit: u32) -> Option<(TcpProxy, RedisLimiter, Quota)> {
    limiter(&unique_prefix()).await?;
    let proxy = TcpProxy::start(redis_address()).await;
    let l = limiter_at(&format!("redis://{}", proxy.host_port()), &unique_prefix()).await.expect("through the proxy");
    let q = Quota::per_minute(limit);
    for i in 1..=limit {
        // The whole decision when one is refused: a `retry_after` of about an interval would be a
        // request counted twice, one of microseconds Redis's clock stepping back (CI saw this refusal
        // once at the third of three and it was never reproduced).
        let d = timed_check(&l, "ip:spent", q).await;
        assert!(d.allowed, "check {i} of {limit} refused: {d:?}");
    }
    Some((proxy, l, q))
}

/// Redis stops answering (paused): a request waits at most the budget, the ones after it do not wait
/// at all while Redis rests, and once Redis answers again it counts again.
#[tokio::test]
async fn a_stalled_redis_costs_one_request_the_budget_and_the_rest_nothing() {
    let Some((proxy, l, q)) = spent_through_a_proxy(3).await else { return };
    assert!(!timed_check(&l, "ip:spent", q).await.allowed, "Redis counts the fourth");

    proxy.set(ProxyMode::Stalled);
    let started = Instant::now();
    let wide = Quota::per_minute(1000);
    for i in 0..50 {
        assert!(timed_check(&l, "ip:other", wide).await.allowed, "request {i}, counted in process");
    }
    let took = started.elapsed();
    assert!(took < REDIS_BUDGET + Duration::from_millis(1_500), "50 checks while Redis is stalled took {took:?}");

    proxy.set(ProxyMode::Forward);
    tokio::time::sleep(REDIS_REST + Duration::from_millis(100)).await;
    assert!(!timed_check(&l, "ip:spent", q).await.allowed, "Redis counts again and remembers the spent client");
}

/// Redis restarts (connections closed, new ones refused for a while): checks fall back at once,
/// and once Redis is back the limiter finds it within a few rests — not after the connection
/// manager's own back-off (before, a request waited 65 s after a Redis restart, by hand).
#[tokio::test]
async fn a_restarted_redis_is_counted_on_again_within_seconds() {
    let Some((proxy, l, q)) = spent_through_a_proxy(2).await else { return };

    proxy.set(ProxyMode::Gone);
    let wide = Quota::per_minute(1000);
    let down = Instant::now();
    while down.elapsed() < Duration::from_secs(4) {
        assert!(timed_check(&l, "ip:other", wide).await.allowed, "counted in process while Redis is gone");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    proxy.set(ProxyMode::Forward);
    let back = Instant::now();
    loop {
        if !timed_check(&l, "ip:spent", q).await.allowed {
            break;
        }
        assert!(back.elapsed() < Duration::from_secs(6), "Redis was not counted on again within 6 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
