//! Quotas held in the shared counters (`domain::throttle`, the `Throttles` port): the emails a caller
//! can make the service send (`domain::throttle::mail`) and the sites it can have read. All of a
//! request's caps are counted before anything happens, and checked on the counts taken; a refused
//! request gives its counts back, so it does and (once answered) counts nothing. Counters are kept under keyed hashes ([`keyed`]).

use crate::App;
use crate::{OpError, OpResult};

/// The keys derived from the deployment's root secret (obtained through `App::keys`); a secret that cannot be
/// loaded is a server fault, logged where it happens.
pub(crate) async fn keyring(app: &App) -> OpResult<std::sync::Arc<crate::keys::Keyring>> {
    app.keys().await.map_err(|e| OpError::Repo(domain::ports::RepoError::Unexpected(e.into())))
}

/// A keyed hash of `raw` (an address, an email, an account id) for `purpose`, never stored in the
/// clear: the deployment's address-hash key keeps it from being reversed by trying every value.
pub(crate) async fn keyed(app: &App, purpose: &str, raw: &str) -> OpResult<String> {
    let keys = keyring(app).await?;
    let key: String = keys.address.iter().map(|b| format!("{b:02x}")).collect();
    Ok(app.secrets.hash_token(&format!("{key}\u{0}{purpose}\u{0}{raw}")))
}

/// One cap a request must fit: `subject` (an account id, a listing id, an address, a domain) is hashed
/// with the deployment's key under `purpose`.
pub(crate) struct Cap<'a> {
    /// The error code of the 429 when this cap is spent (`mail_quota`, `crawl_quota`).
    pub code: &'static str,
    pub purpose: &'static str,
    pub subject: String,
    pub limit: i64,
    pub window: chrono::Duration,
    /// For the refusal: "this account's emails today", "invites to this address today" …
    pub what: &'a str,
}

impl<'a> Cap<'a> {
    /// At most `limit` a day for one account (`user`), counted under `purpose`.
    pub(crate) fn account_day(
        code: &'static str,
        purpose: &'static str,
        user: domain::ids::UserId,
        limit: i64,
        what: &'a str,
    ) -> Self {
        Cap { code, purpose, subject: user.get().to_string(), limit, window: chrono::Duration::days(1), what }
    }
}

/// The per-account daily cap every email-sending request carries.
pub(crate) fn account(user: domain::ids::UserId) -> Cap<'static> {
    use domain::throttle::mail;
    Cap {
        code: "mail_quota",
        purpose: "mail-account",
        subject: user.get().to_string(),
        limit: mail::PER_ACCOUNT_PER_DAY,
        window: mail::day(),
        what: "emails this account had sent today",
    }
}

/// Counts taken by [`take`]: each cap's count (in the caps' order), and what it takes to give them
/// back when what they paid for did not happen after all.
pub(crate) struct Taken {
    pub counts: Vec<i64>,
    bumped: Vec<(String, chrono::DateTime<chrono::Utc>)>,
}

impl Taken {
    /// Takes back every count (a bump from a window that has since ended is left alone).
    pub(crate) async fn give_back(self, app: &App) -> OpResult<()> {
        for (key, since) in &self.bumped {
            app.store.give_back_throttle(key, *since).await?;
        }
        Ok(())
    }
}

/// Counts one against every cap and returns the counts; when one is past its limit, gives every
/// count back and answers 429 naming the first spent cap. Each count is taken and read in one
/// statement, so requests at once are numbered one by one and exactly `limit` of them get through:
/// reading the counters first and counting after, a flood all read the last free place.
pub(crate) async fn take(app: &App, caps: &[Cap<'_>]) -> OpResult<Taken> {
    let now = app.now();
    let mut taken = Vec::with_capacity(caps.len());
    for c in caps {
        let key = keyed(app, c.purpose, &c.subject).await?;
        let counter = app.store.bump_throttle(&key, now, now - c.window).await?;
        taken.push((key, counter));
    }
    let counts = taken.iter().map(|(_, counter)| counter.count).collect();
    let spent = caps.iter().zip(&taken).find(|(c, (_, counter))| counter.count > c.limit);
    let refusal = spent.map(|(c, (_, counter))| OpError::TooMany {
        code: c.code,
        message: format!("{} reached {}, the most there may be; nothing was done", c.what, c.limit),
        retry_after_secs: domain::throttle::retry_after_secs(counter.since + c.window - now),
    });
    let taken = Taken { counts, bumped: taken.into_iter().map(|(key, counter)| (key, counter.since)).collect() };
    match refusal {
        Some(e) => {
            taken.give_back(app).await?;
            Err(e)
        }
        None => Ok(taken),
    }
}
