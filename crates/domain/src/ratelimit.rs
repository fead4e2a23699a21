//! Rate limits as arithmetic: the generic cell rate algorithm (GCRA), the one governor and Redis
//! limiters use. A client's whole state is one instant, its theoretical arrival time (TAT): requests
//! spaced `period / limit` apart are always allowed, and up to `limit` may come at once after a quiet
//! `period`. Pure; the adapters keep the TAT in process memory or in Redis (whose script applies
//! the same steps).

use std::time::Duration;

/// A limit of `limit` requests per `period` (per minute, in the contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub limit: u32,
    pub period: Duration,
}

/// What one request got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    /// Requests left right now (0 when refused).
    pub remaining: u32,
    /// Until the quota is whole again.
    pub reset: Duration,
    /// When refused: how long to wait before one more request is allowed.
    pub retry_after: Option<Duration>,
}

impl Quota {
    /// The highest limit a minute the arithmetic keeps apart: one request a microsecond. The spacing is
    /// a whole number of microseconds, so above a million a minute a limit rounds up (40 000 000 allows
    /// one a microsecond too); configuration refuses more than this.
    pub const MAX_PER_MINUTE: u32 = 60_000_000;

    pub fn per_minute(limit: u32) -> Self {
        Self { limit: limit.max(1), period: Duration::from_secs(60) }
    }

    /// The spacing of requests at the sustained rate, in microseconds (at least 1).
    pub fn interval_us(&self) -> u64 {
        (self.period.as_micros() as u64 / u64::from(self.limit.max(1))).max(1)
    }

    /// The decision for a request that, once allowed, leaves `used_us` of the period taken (or, when
    /// refused, must wait `retry_us` and finds `used_us` taken). For adapters that run the steps
    /// elsewhere (a Redis script) and bring back these two numbers.
    pub fn decision(&self, allowed: bool, used_us: u64, retry_us: u64) -> Decision {
        let t = self.interval_us();
        let burst = t * u64::from(self.limit.max(1));
        Decision {
            allowed,
            limit: self.limit,
            remaining: if allowed { (burst.saturating_sub(used_us) / t) as u32 } else { 0 },
            reset: Duration::from_micros(used_us),
            retry_after: (!allowed).then(|| Duration::from_micros(retry_us)),
        }
    }

    /// One request at `now_us` (microseconds on any monotonic or wall clock) against the stored TAT;
    /// returns the decision and the TAT to store (unchanged when refused).
    pub fn check(&self, tat_us: Option<u64>, now_us: u64) -> (Decision, u64) {
        let t = self.interval_us();
        let burst = t * u64::from(self.limit.max(1)); // the whole period
        let tat = tat_us.unwrap_or(now_us).max(now_us);
        let new_tat = tat + t;
        // Allowed while the backlog after this request stays within one period.
        if new_tat - now_us > burst {
            return (self.decision(false, tat - now_us, new_tat - burst - now_us), tat);
        }
        (self.decision(true, new_tat - now_us, 0), new_tat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_the_limit_then_a_refusal_then_recovery_at_the_rate() {
        let q = Quota::per_minute(60); // one a second
        let mut tat = None;
        let now = 1_000_000_000;
        for i in 0..60 {
            let (d, next) = q.check(tat, now);
            assert!(d.allowed, "request {i}");
            assert_eq!(d.remaining, 59 - i);
            tat = Some(next);
        }
        let (d, same) = q.check(tat, now);
        assert!(!d.allowed);
        assert_eq!(same, tat.unwrap(), "a refusal costs nothing");
        assert_eq!(d.retry_after, Some(Duration::from_secs(1)));
        assert_eq!(d.reset, Duration::from_secs(60));
        // One second later exactly one more is allowed.
        let (d, next) = q.check(tat, now + 1_000_000);
        assert!(d.allowed && d.remaining == 0);
        let (d, _) = q.check(Some(next), now + 1_000_000);
        assert!(!d.allowed);
        // After a quiet minute the whole burst is back.
        let (d, _) = q.check(Some(next), now + 61_000_000);
        assert!(d.allowed && d.remaining == 59);
    }

    #[test]
    fn the_highest_limit_is_one_request_a_microsecond_and_a_minute_of_them_at_once() {
        let q = Quota::per_minute(Quota::MAX_PER_MINUTE);
        assert_eq!(q.interval_us(), 1);
        let now = 5_000_000_000;
        // The last of a minute's requests at one instant is allowed, the one after it is not.
        let (d, tat) = q.check(Some(now + 60_000_000 - 1), now);
        assert!(d.allowed && d.remaining == 0, "{d:?}");
        let (d, _) = q.check(Some(tat), now);
        assert_eq!((d.allowed, d.retry_after), (false, Some(Duration::from_micros(1))));
        // A microsecond later one more.
        assert!(q.check(Some(tat), now + 1).0.allowed);
        // With the burst spent, the sustained rate: one each microsecond for a second, and a second
        // one at the same instant refused (a limit of a million a minute, one every 60 µs, fails here).
        let mut tat = tat;
        for i in 1..=1_000_000u64 {
            let (d, next) = q.check(Some(tat), now + i);
            assert!(d.allowed, "request at +{i} µs");
            assert!(!q.check(Some(next), now + i).0.allowed, "a second request at +{i} µs");
            tat = next;
        }
    }

    #[test]
    fn a_limit_of_one() {
        let q = Quota::per_minute(1);
        let (d, tat) = q.check(None, 0);
        assert!(d.allowed && d.remaining == 0);
        let (d, _) = q.check(Some(tat), 30_000_000);
        assert_eq!((d.allowed, d.retry_after), (false, Some(Duration::from_secs(30))));
        assert!(q.check(Some(tat), 60_000_000).0.allowed);
    }
}
