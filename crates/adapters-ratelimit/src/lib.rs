//! Rate limiters for the `RateLimiter` port, both on `domain::ratelimit::Quota` (GCRA: one instant per
//! client). `MemoryLimiter` counts in this process, with memory bounded by the clients seen in the
//! last period. `RedisLimiter` keeps the instant in Redis and applies the same steps in one Lua script
//! on Redis's own clock, so every instance behind a load balancer enforces one limit; if Redis cannot
//! be reached it counts in process until Redis answers again. A request never waits long for Redis:
//! at most [`REDIS_BUDGET`], and after a failure Redis is left alone for [`REDIS_REST`].
//!
//! Architecture invariant: knows Redis and nothing about HTTP; the API crate decides who a client is.

use async_trait::async_trait;
use domain::ports::RateLimiter;
use domain::ratelimit::{Decision, Quota};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Above this many clients a prune runs; entries whose quota is whole again carry no information.
const PRUNE_ABOVE: usize = 10_000;
/// Hard cap: past it (after a prune) the half closest to a whole quota is dropped.
const MAX_CLIENTS: usize = 200_000;

#[derive(Debug)]
pub struct MemoryLimiter {
    started: Instant,
    tats: Mutex<HashMap<String, u64>>,
    checks: AtomicU64,
}

impl Default for MemoryLimiter {
    fn default() -> Self {
        Self { started: Instant::now(), tats: Mutex::default(), checks: AtomicU64::new(0) }
    }
}

impl MemoryLimiter {
    fn now_us(&self) -> u64 {
        self.started.elapsed().as_micros() as u64
    }

    /// How many clients are tracked (for tests and metrics).
    pub fn tracked(&self) -> usize {
        self.tats.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }

    /// The check at an explicit instant (microseconds since this limiter started).
    pub fn check_at(&self, client: &str, quota: Quota, now_us: u64) -> Decision {
        let mut tats = self.tats.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (decision, tat) = quota.check(tats.get(client).copied(), now_us);
        if decision.allowed {
            tats.insert(client.to_owned(), tat);
        }
        let n = self.checks.fetch_add(1, Ordering::Relaxed);
        if tats.len() > PRUNE_ABOVE && n.is_multiple_of(1024) {
            tats.retain(|_, tat| *tat > now_us);
            if tats.len() > MAX_CLIENTS {
                let mut all: Vec<u64> = tats.values().copied().collect();
                all.sort_unstable();
                let cut = all[all.len() / 2];
                tats.retain(|_, tat| *tat > cut);
            }
        }
        decision
    }
}

#[async_trait]
impl RateLimiter for MemoryLimiter {
    async fn check(&self, client: &str, quota: Quota) -> Decision {
        self.check_at(client, quota, self.now_us())
    }
}

/// GCRA in Redis: KEYS[1] the client's key; ARGV[1] the interval and ARGV[2] the period, in
/// microseconds. Returns {allowed, used_us, retry_us}. Uses Redis's clock, so instances need not agree
/// on the time.
const SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local new_tat = tat + interval
if new_tat - now > burst then
  return {0, tat - now, new_tat - burst - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1000)
return {1, new_tat - now, 0}
";

/// The longest a request waits for Redis's answer (connecting included) before it is counted in
/// process. A check is one short script: on a network that answers at all, under a millisecond.
pub const REDIS_BUDGET: std::time::Duration = std::time::Duration::from_millis(500);

/// After Redis failed or was late, requests are counted in process for this long before Redis is
/// asked again: while it is down, no request pays [`REDIS_BUDGET`] but one every so often.
pub const REDIS_REST: std::time::Duration = std::time::Duration::from_secs(2);

pub struct RedisLimiter {
    conn: redis::aio::ConnectionManager,
    script: redis::Script,
    prefix: String,
    fallback: MemoryLimiter,
    /// Until when (ms since `started`) Redis is left alone after a failure; 0: not resting.
    resting_until_ms: AtomicU64,
    started: Instant,
}

impl std::fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLimiter").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl RedisLimiter {
    /// Connects to `url` (`redis://host:port`); keys are `prefix` + client.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, redis::RedisError> {
        let client = redis::Client::open(url)?;
        // The manager's defaults wait for ever for an answer and, once Redis is back, let requests wait
        // on a reconnection backing off by up to a minute (measured: a request 65 s after a Redis
        // restart). Here a lost connection is retried at once and every wait is bounded.
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(REDIS_BUDGET)
            .set_response_timeout(REDIS_BUDGET)
            .set_number_of_retries(1)
            .set_max_delay(REDIS_BUDGET.as_millis() as u64);
        let conn = redis::aio::ConnectionManager::new_with_config(client, config).await?;
        Ok(Self {
            conn,
            script: redis::Script::new(SCRIPT),
            prefix: prefix.to_owned(),
            fallback: MemoryLimiter::default(),
            resting_until_ms: AtomicU64::new(0),
            started: Instant::now(),
        })
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64 + 1
    }
}

#[async_trait]
impl RateLimiter for RedisLimiter {
    async fn check(&self, client: &str, quota: Quota) -> Decision {
        if self.now_ms() < self.resting_until_ms.load(Ordering::Relaxed) {
            return self.fallback.check(client, quota).await;
        }
        let mut conn = self.conn.clone();
        let burst = quota.interval_us() * u64::from(quota.limit.max(1));
        let key = format!("{}{client}", self.prefix);
        let mut invocation = self.script.key(key);
        invocation.arg(quota.interval_us()).arg(burst);
        let r = tokio::time::timeout(REDIS_BUDGET, invocation.invoke_async::<(u8, u64, u64)>(&mut conn)).await;
        let error = match r {
            Ok(Ok((allowed, used, retry))) => return quota.decision(allowed == 1, used, retry),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {} ms", REDIS_BUDGET.as_millis()),
        };
        let rest = REDIS_REST.as_millis() as u64;
        self.resting_until_ms.store(self.now_ms() + rest, Ordering::Relaxed);
        tracing::warn!(error, rest_ms = rest, "Redis rate limiter unreachable; counting in this process");
        self.fallback.check(client, quota).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_stays_bounded_as_clients_come_and_go() {
        let l = MemoryLimiter::default();
        let q = Quota::per_minute(10);
        for i in 0..30_000u64 {
            l.check_at(&format!("ip:{i}"), q, i * 10);
        }
        assert!(l.tracked() > PRUNE_ABOVE, "all recent: {}", l.tracked());
        // Two minutes later every quota is whole again: the next prune forgets them all.
        let later = 200_000_000;
        for i in 0..2048u64 {
            l.check_at("ip:new", q, later + i);
        }
        assert!(l.tracked() <= 2, "tracked {}", l.tracked());
    }

    #[test]
    fn clients_are_counted_apart() {
        let l = MemoryLimiter::default();
        let q = Quota::per_minute(2);
        assert!(l.check_at("a", q, 0).allowed && l.check_at("a", q, 0).allowed);
        assert!(!l.check_at("a", q, 0).allowed);
        assert!(l.check_at("b", q, 0).allowed);
    }
}
