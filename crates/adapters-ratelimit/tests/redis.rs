//! The Redis limiter against the machine's Redis (LAUNCHDIR_TEST_REDIS_URL, default
//! redis://127.0.0.1:6379). With CI=true an unreachable Redis fails the test instead of skipping it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use adapters_ratelimit::RedisLimiter;
use domain::ports::RateLimiter;
use domain::ratelimit::Quota;

async fn limiter(prefix: &str) -> Option<RedisLimiter> {
    let url = std::env::var("LAUNCHDIR_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    match RedisLimiter::connect(&url, prefix).await {
        Ok(l) => Some(l),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => panic!("Redis at {url} is required in CI: {e}"),
        Err(e) => {
            eprintln!("skipping: Redis at {url} unreachable ({e})");
            None
        }
    }
}

fn unique_prefix() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("launchdir-test:{}:{nanos}:", std::process::id())
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
