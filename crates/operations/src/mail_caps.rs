//! Caps on the email a caller can make the service send, held in the shared counters
//! (`domain::throttle::mail`): all of a request's caps are checked before anything is sent, and counted
//! only when every one has room, so a refused request sends and counts nothing.

use crate::{OpError, OpResult};
use bootstrap::App;
use domain::ports::Throttles;

/// One cap a request must fit: `subject` (an account id, a listing id, an address, a domain) is hashed
/// with the deployment's key under `purpose`.
pub(crate) struct Cap<'a> {
    pub purpose: &'static str,
    pub subject: String,
    pub limit: i64,
    pub window: chrono::Duration,
    /// For the refusal: "this account's emails today", "invites to this address today" …
    pub what: &'a str,
}

/// The per-account daily cap every email-sending request carries.
pub(crate) fn account(user: domain::ids::UserId) -> Cap<'static> {
    use domain::throttle::mail;
    Cap {
        purpose: "mail-account",
        subject: user.get().to_string(),
        limit: mail::PER_ACCOUNT_PER_DAY,
        window: mail::day(),
        what: "emails this account had sent today",
    }
}

/// Checks every cap, then counts one against each and returns the counts (in `caps`' order); a 429
/// naming the first spent cap otherwise.
pub(crate) async fn take(app: &App, caps: &[Cap<'_>]) -> OpResult<Vec<i64>> {
    let now = app.now();
    let mut keys = Vec::with_capacity(caps.len());
    for c in caps {
        keys.push(crate::engagement::keyed(app, c.purpose, &c.subject).await?);
    }
    let found = app.store.throttles(&keys).await?;
    for (c, key) in caps.iter().zip(&keys) {
        if let Some((_, counter)) = found.iter().find(|(k, _)| k == key)
            && counter.current(now, c.window) >= c.limit
        {
            return Err(OpError::TooMany {
                code: "mail_quota",
                message: format!("{} reached {}, the most there may be; nothing was sent", c.what, c.limit),
                retry_after_secs: domain::throttle::retry_after_secs(counter.since + c.window - now),
            });
        }
    }
    let mut counts = Vec::with_capacity(caps.len());
    for (c, key) in caps.iter().zip(&keys) {
        counts.push(app.store.bump_throttle(key, now, now - c.window).await?.count);
    }
    Ok(counts)
}
