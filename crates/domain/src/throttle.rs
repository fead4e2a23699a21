//! Counting what a stranger may try: failed sign-ins (and, with the same counters, anything else that
//! must be capped across requests and instances). Pure arithmetic; the counters live in storage
//! (`ports::Throttles`), so every instance sees the same numbers.
//!
//! Sign-in, per attempt, looks at three counters:
//! - the **pair** (this account from this address): the first [`FREE_FAILURES`] failures cost nothing;
//!   each further one locks the pair for [`lock_for`] — 30 s, doubling to at most an hour;
//! - the **address** (all accounts tried from it): past [`ADDRESS_FAILURES_PER_HOUR`] failures in an hour
//!   it may try no account until the hour is over (password spraying);
//! - the **account** (from every address): past [`ACCOUNT_FAILURES_PER_HOUR`] failures in an hour,
//!   addresses that have already failed for it are refused until the hour is over, while an address that
//!   has not failed — the owner at home — may still sign in.
//!
//! Unknown emails are counted exactly like known ones, so the answers say nothing about which exist.
//!
//! An attempt is counted **before** it is judged ([`judge`]) and given back when it was refused or
//! the password was right: a burst of guesses sent at once is then judged one by one, each on the
//! counts of those before it, instead of all passing on the same count read before any had failed.

use chrono::{DateTime, Duration, Utc};

/// Failures of one account from one address before each further one locks the pair.
pub const FREE_FAILURES: i64 = 5;
/// The longest a pair is locked.
pub const MAX_LOCK: Duration = Duration::hours(1);
/// Failures from one address, over all accounts, in [`WINDOW`].
pub const ADDRESS_FAILURES_PER_HOUR: i64 = 30;
/// Failures for one account, from all addresses, in [`WINDOW`].
pub const ACCOUNT_FAILURES_PER_HOUR: i64 = 20;
/// The window the address and account counts run over.
pub const WINDOW: Duration = Duration::hours(1);
/// The window a pair's failures are remembered for (since its first failure).
pub const PAIR_WINDOW: Duration = Duration::days(1);

/// A counter as storage keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    pub count: i64,
    /// When the count began (it starts again once its window is over).
    pub since: DateTime<Utc>,
    pub locked_until: Option<DateTime<Utc>>,
}

impl Counter {
    /// The count as of `now`, for a counter whose window is `window` (zero once it ended).
    pub fn current(&self, now: DateTime<Utc>, window: Duration) -> i64 {
        if self.since + window <= now { 0 } else { self.count }
    }

    /// How long it is still locked at `now`.
    pub fn locked(&self, now: DateTime<Utc>) -> Option<Duration> {
        self.locked_until.filter(|u| *u > now).map(|u| u - now)
    }
}

/// How long a pair is locked after its `failures`-th failure: nothing for the first
/// [`FREE_FAILURES`], then 30 s, 60 s, 120 s … up to [`MAX_LOCK`].
pub fn lock_for(failures: i64) -> Option<Duration> {
    let over = failures - FREE_FAILURES;
    if over <= 0 {
        return None;
    }
    let secs = 30i64.saturating_mul(1i64 << (over - 1).min(20));
    Some(Duration::seconds(secs).min(MAX_LOCK))
}

/// The three counters a sign-in attempt looks at, as found (absent: never failed).
#[derive(Debug, Clone, Copy, Default)]
pub struct SignInCounters {
    pub pair: Option<Counter>,
    pub address: Option<Counter>,
    pub account: Option<Counter>,
}

impl SignInCounters {
    /// `Some(wait)` when an attempt at `now` must be refused without checking the password.
    pub fn refusal(&self, now: DateTime<Utc>) -> Option<Duration> {
        let mut waits = Vec::new();
        if let Some(w) = self.pair.and_then(|p| p.locked(now)) {
            waits.push(w);
        }
        if let Some(a) = self.address
            && a.current(now, WINDOW) >= ADDRESS_FAILURES_PER_HOUR
        {
            waits.push(a.since + WINDOW - now);
        }
        let pair_failed = self.pair.is_some_and(|p| p.current(now, PAIR_WINDOW) > 0);
        if let Some(a) = self.account
            && pair_failed
            && a.current(now, WINDOW) >= ACCOUNT_FAILURES_PER_HOUR
        {
            waits.push(a.since + WINDOW - now);
        }
        waits.into_iter().max()
    }
}

/// What becomes of a sign-in attempt that has been counted already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Refused without a password check, for this long; its counts are given back.
    Refuse(Duration),
    /// Check the password. With `lock`, the attempt is past the free failures: it must first lock the
    /// pair for that long, and only the attempt that takes the lock goes on (a burst gets one check).
    Check { lock: Option<Duration> },
}

/// Judges an attempt on `counted`, the three counters as its own bump returned them: on what came
/// before it (its own count taken off), and on the pair's lock.
pub fn judge(counted: SignInCounters, now: DateTime<Utc>) -> Verdict {
    let before = |c: Option<Counter>| c.map(|c| Counter { count: c.count - 1, ..c });
    let earlier = SignInCounters {
        pair: before(counted.pair),
        address: before(counted.address),
        account: before(counted.account),
    };
    match earlier.refusal(now) {
        Some(wait) => Verdict::Refuse(wait),
        None => Verdict::Check { lock: counted.pair.and_then(|p| lock_for(p.count)) },
    }
}

/// Whole seconds to put in `Retry-After` (at least 1).
pub fn retry_after_secs(wait: Duration) -> u64 {
    let ms = wait.num_milliseconds().max(0) as u64;
    ms.div_ceil(1000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap_or_default()
    }

    fn c(count: i64, since: i64, locked: Option<i64>) -> Option<Counter> {
        Some(Counter { count, since: t(since), locked_until: locked.map(t) })
    }

    #[test]
    fn five_failures_are_free_then_the_lock_doubles_to_an_hour() {
        assert_eq!((1..=5).map(lock_for).collect::<Vec<_>>(), vec![None; 5]);
        assert_eq!(lock_for(6), Some(Duration::seconds(30)));
        assert_eq!(lock_for(7), Some(Duration::seconds(60)));
        assert_eq!(lock_for(12), Some(Duration::seconds(1920)));
        assert_eq!(lock_for(13), Some(MAX_LOCK));
        assert_eq!(lock_for(10_000), Some(MAX_LOCK), "no overflow");
    }

    #[test]
    fn a_locked_pair_waits_and_an_unlocked_one_does_not() {
        let s = SignInCounters { pair: c(6, 0, Some(30)), ..Default::default() };
        assert_eq!(s.refusal(t(10)), Some(Duration::seconds(20)));
        assert_eq!(s.refusal(t(30)), None);
    }

    #[test]
    fn an_address_spraying_accounts_waits_out_the_hour() {
        let s = SignInCounters { address: c(ADDRESS_FAILURES_PER_HOUR, 0, None), ..Default::default() };
        assert_eq!(s.refusal(t(600)), Some(Duration::seconds(3000)));
        let s = SignInCounters { address: c(ADDRESS_FAILURES_PER_HOUR - 1, 0, None), ..Default::default() };
        assert_eq!(s.refusal(t(600)), None);
        let s = SignInCounters { address: c(ADDRESS_FAILURES_PER_HOUR, 0, None), ..Default::default() };
        assert_eq!(s.refusal(t(3600)), None, "a new hour");
    }

    #[test]
    fn an_account_under_attack_still_lets_in_an_address_that_never_failed() {
        let account = c(ACCOUNT_FAILURES_PER_HOUR, 0, None);
        let attacker = SignInCounters { pair: c(1, 0, None), address: c(1, 0, None), account };
        assert_eq!(attacker.refusal(t(60)), Some(Duration::seconds(3540)));
        let owner = SignInCounters { pair: None, address: None, account };
        assert_eq!(owner.refusal(t(60)), None);
    }

    #[test]
    fn an_attempt_is_judged_on_the_attempts_before_it() {
        let counted = |pair: i64, address: i64, account: i64| SignInCounters {
            pair: c(pair, 0, None),
            address: c(address, 0, None),
            account: c(account, 0, None),
        };
        // The fifth and sixth of a pair are checked; the sixth must lock first.
        assert_eq!(judge(counted(5, 5, 5), t(1)), Verdict::Check { lock: None });
        assert_eq!(judge(counted(6, 6, 6), t(1)), Verdict::Check { lock: Some(Duration::seconds(30)) });
        // The address's last allowed failure is checked; the one after it is refused.
        assert_eq!(judge(counted(1, ADDRESS_FAILURES_PER_HOUR, 1), t(600)), Verdict::Check { lock: None });
        let over = judge(counted(1, ADDRESS_FAILURES_PER_HOUR + 1, 1), t(600));
        assert_eq!(over, Verdict::Refuse(Duration::seconds(3000)));
        // The account's cap refuses only an address that failed for it before this attempt.
        let first_from_here = counted(1, 1, ACCOUNT_FAILURES_PER_HOUR + 1);
        assert_eq!(judge(first_from_here, t(60)), Verdict::Check { lock: None });
        let again = counted(2, 2, ACCOUNT_FAILURES_PER_HOUR + 1);
        assert_eq!(judge(again, t(60)), Verdict::Refuse(Duration::seconds(3540)));
        // A lock still running refuses, whatever the counts.
        let locked = SignInCounters { pair: c(7, 0, Some(90)), ..counted(7, 7, 7) };
        assert_eq!(judge(locked, t(60)), Verdict::Refuse(Duration::seconds(30)));
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(Duration::milliseconds(1)), 1);
        assert_eq!(retry_after_secs(Duration::milliseconds(29_001)), 30);
        assert_eq!(retry_after_secs(Duration::zero()), 1);
    }
}

/// What one account, listing, domain or address may make the service email, whoever asks: the
/// outbox is not a spam cannon. Counted in the same shared counters (`ports::Throttles`).
pub mod mail {
    use chrono::Duration;

    /// Emails any one account makes the service send in a day (invites, claim links, follower
    /// updates — an update counts once, whatever the number of followers who asked for it).
    pub const PER_ACCOUNT_PER_DAY: i64 = 20;
    /// Invite emails for one listing, first invites and repeats together, ever (the spec's 10).
    pub const INVITE_SENDS_PER_LISTING: i64 = 10;
    /// Sign-ups one network (an IPv4 address, an IPv6 /64) starts in an hour: each emails an address
    /// the caller typed, so this bounds the strangers one network can have emailed. Twenty leaves room
    /// for a room of people on one Wi-Fi signing up together.
    pub const SIGNUPS_PER_NETWORK_PER_HOUR: i64 = 20;
    /// Password-reset requests one network makes in an hour, answered alike whether the address has
    /// an account or not (each emails the address typed).
    pub const RESETS_PER_NETWORK_PER_HOUR: i64 = 20;
    /// Password-reset emails one address receives in a day.
    pub const RESETS_TO_ADDRESS_PER_DAY: i64 = 3;
    /// Invites one address receives in a day, from every listing and account together.
    pub const INVITES_TO_ADDRESS_PER_DAY: i64 = 3;
    /// Claim emails to one domain's administrator addresses in a day, from every account together.
    pub const CLAIM_EMAILS_PER_DOMAIN_PER_DAY: i64 = 3;
    /// Updates that email one listing's followers in a day.
    pub const UPDATES_PER_LISTING_PER_DAY: i64 = 3;

    pub fn day() -> Duration {
        Duration::days(1)
    }

    /// The window of a count that never starts over (a listing's invites).
    pub fn ever() -> Duration {
        Duration::days(36_500)
    }
}
