//! Accounts as use cases: creating users and API keys, and turning a bearer credential into a
//! [`Principal`]. Shared by the admin commands, the web pages and every operation call.

use crate::App;
use crate::{OpError, OpResult};
use domain::ValidationErrors;
use domain::auth::{ApiKey, ApiKeyToken, Password, Principal, Via, key_name};
use domain::ids::UserId;
use domain::ports::{NewUser, RepoError};
use domain::user::{Email, Scope, User};

/// Creates an account. 409-style `Repo(Conflict)` when the email is taken.
pub async fn create_user(app: &App, email: &str, password: &str, display_name: &str, admin: bool) -> OpResult<User> {
    let mut errs = ValidationErrors::default();
    let email = errs.take(Email::parse(email));
    let password = errs.take(Password::parse(password));
    errs.clone().into_result()?;
    let (Some(email), Some(password)) = (email, password) else { return Err(OpError::Invalid(errs)) };
    let display_name = match display_name.trim() {
        "" => email.local_part().to_owned(),
        name => name.chars().take(100).collect(),
    };
    let Some(hash) = hash_password(app, password).await? else {
        return Err(OpError::Conflict {
            code: "busy",
            message: "too many sign-ups at once; try again in a moment".into(),
        });
    };
    let new = NewUser { email, password_hash: hash, display_name, is_admin: admin, verified: true };
    Ok(app.store.create_user(new, app.now()).await?)
}

/// How long an emailed verification link works.
pub const VERIFY_LINK_HOURS: i64 = 24;

/// Sign-up from the site, by a caller on `network` (its address as the rate limit counts it: an IPv4
/// address, an IPv6 /64). The answer is the same whether the address has an account or not (so the
/// page confirms nothing): a new account is made, unverified, and sent a link to verify its address;
/// an existing one's owner is told someone tried. Either way at most a few such emails reach an address
/// a day, and one network starts at most
/// [`SIGNUPS_PER_NETWORK_PER_HOUR`](domain::throttle::mail::SIGNUPS_PER_NETWORK_PER_HOUR) sign-ups an
/// hour (429 `signup_quota`). Bad input is a 400 before any lookup and counts nothing; neither does a
/// sign-up answered "busy" (409: every password slot stayed taken).
pub async fn sign_up(app: &App, public_url: &str, email: &str, password: &str, network: &str) -> OpResult<()> {
    let mut errs = ValidationErrors::default();
    let parsed = errs.take(Email::parse(email));
    let password = errs.take(Password::parse(password));
    errs.clone().into_result()?;
    let (Some(email), Some(password)) = (parsed, password) else { return Err(OpError::Invalid(errs)) };
    let taken = crate::quotas::take(
        app,
        &[
            crate::quotas::Cap {
                code: "signup_quota",
                purpose: "signup-network",
                subject: network.to_owned(),
                limit: domain::throttle::mail::SIGNUPS_PER_NETWORK_PER_HOUR,
                window: chrono::Duration::hours(1),
                what: "sign-ups from this network in the last hour",
            },
            crate::quotas::Cap {
                code: "mail_quota",
                purpose: "signup-to",
                subject: email.as_str().to_lowercase(),
                limit: domain::throttle::mail::INVITES_TO_ADDRESS_PER_DAY,
                window: domain::throttle::mail::day(),
                what: "sign-up emails to this address today",
            },
        ],
    )
    .await?;
    // Hashed whether or not the address is taken, so both answers cost the same time.
    let Some(hash) = hash_password(app, password).await? else {
        // Nothing was done, so the attempt takes nothing from the network's or the address's quota: the
        // answer asks the caller to try again, and that try must not be the one the quota refuses.
        taken.give_back(app).await?;
        return Err(OpError::Conflict {
            code: "busy",
            message: "too many sign-ups at once; try again in a moment".into(),
        });
    };
    let now = app.now();
    if app.store.user_by_email(&email).await?.is_some() {
        let body = format!(
            "Hello,\n\nSomeone tried to create a launchdir account with this address, which already has one. If \
             it was you, sign in instead: {public_url}/signin (forgot the password? set a new one: \
             {public_url}/forgot-password)\n\nIf it was not you, ignore this email; nothing changed.\n"
        );
        crate::worker::send_email(app, email.as_str(), "Your launchdir account", &body, now).await?;
        return Ok(());
    }
    let new = NewUser {
        display_name: email.local_part().to_owned(),
        email,
        password_hash: hash,
        is_admin: false,
        verified: false,
    };
    let user = match app.store.create_user(new, now).await {
        Ok(u) => u,
        // Made a moment ago by a request racing this one: the same answer as for any existing account.
        Err(RepoError::Conflict(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    send_verification(app, public_url, &user).await
}

/// Emails `user` a link that verifies their address (valid [`VERIFY_LINK_HOURS`]).
pub async fn send_verification(app: &App, public_url: &str, user: &User) -> OpResult<()> {
    let token = app.secrets.random_token();
    let now = app.now();
    let expires = now + chrono::Duration::hours(VERIFY_LINK_HOURS);
    app.store.save_email_verification(user.id, &app.secrets.hash_token(&token), expires).await?;
    let body = format!(
        "Hello,\n\nWelcome to launchdir. Open this link, signed in with your new account, to confirm this \
         address (it works for {VERIFY_LINK_HOURS} hours):\n{public_url}/verify-email/{token}\n\nUntil then \
         you can sign in and use the API, but not vote, invite co-founders or claim a listing by email. If you \
         did not create this account, ignore this email.\n"
    );
    crate::worker::send_email(app, user.email.as_str(), "Confirm your email on launchdir", &body, now).await?;
    Ok(())
}

/// How long an emailed password-reset link works.
pub const RESET_LINK_MINUTES: i64 = 60;

/// "Forgot your password" from the site, by a caller on `network`. The answer is the same whether the
/// address has an account or not (so the page confirms nothing), and so is the work: an account's
/// address is sent a link that sets a new password (valid [`RESET_LINK_MINUTES`], once); an address
/// without one is told so, with a link to sign up (someone who forgot which address they used learns
/// it). At most [`RESETS_TO_ADDRESS_PER_DAY`](domain::throttle::mail::RESETS_TO_ADDRESS_PER_DAY)
/// such emails reach an address a day (429 `mail_quota`) and one network asks at most
/// [`RESETS_PER_NETWORK_PER_HOUR`](domain::throttle::mail::RESETS_PER_NETWORK_PER_HOUR) times an hour
/// (429 `reset_quota`). A malformed address is a 400 before any lookup and counts nothing.
pub async fn request_password_reset(app: &App, public_url: &str, email: &str, network: &str) -> OpResult<()> {
    let email = Email::parse(email).map_err(OpError::from)?;
    crate::quotas::take(
        app,
        &[
            crate::quotas::Cap {
                code: "reset_quota",
                purpose: "reset-network",
                subject: network.to_owned(),
                limit: domain::throttle::mail::RESETS_PER_NETWORK_PER_HOUR,
                window: chrono::Duration::hours(1),
                what: "password resets asked from this network in the last hour",
            },
            crate::quotas::Cap {
                code: "mail_quota",
                purpose: "reset-to",
                subject: email.as_str().to_lowercase(),
                limit: domain::throttle::mail::RESETS_TO_ADDRESS_PER_DAY,
                window: domain::throttle::mail::day(),
                what: "password-reset emails to this address today",
            },
        ],
    )
    .await?;
    let now = app.now();
    let user = app.store.user_by_email(&email).await?.map(|(u, _)| u);
    let body = match user {
        Some(user) => {
            let token = app.secrets.random_token();
            let expires = now + chrono::Duration::minutes(RESET_LINK_MINUTES);
            app.store.save_password_reset(user.id, &app.secrets.hash_token(&token), expires, now).await?;
            format!(
                "Hello,\n\nSomeone asked to set a new password for the launchdir account of this address. To \
                 choose one, open this link (it works for {RESET_LINK_MINUTES} minutes, once):\n\
                 {public_url}/reset-password/{token}\n\nSetting it signs the account out everywhere. If you \
                 did not ask, ignore this email: your password stays as it is.\n"
            )
        }
        None => format!(
            "Hello,\n\nSomeone asked to set a new password for a launchdir account of this address, but it has \
             none. If it was you, you may have signed up with another address; or create an account: \
             {public_url}/signup\n\nIf it was not you, ignore this email.\n"
        ),
    };
    crate::worker::send_email(app, email.as_str(), "Your launchdir password", &body, now).await?;
    Ok(())
}

/// Whether `token` is a password-reset link that still works. Reading it uses nothing: a mail scanner
/// that opens the link leaves it working for its owner.
pub async fn password_reset_link_works(app: &App, token: &str) -> OpResult<bool> {
    Ok(app.store.password_reset(&app.secrets.hash_token(token), app.now()).await?.is_some())
}

/// What setting a new password through a reset link did.
#[derive(Debug)]
pub enum Reset {
    /// The password is set: every session ended; when the address had never been verified, the
    /// account's API keys and apps were revoked too ([`domain::ports::PasswordReset::took_over`]).
    Done(domain::ports::PasswordReset),
    /// Unknown, used or expired: nothing changed.
    Invalid,
    /// Every password slot stayed busy: nothing changed, the link still works.
    Busy,
}

/// Sets a new password through an emailed reset link, once. The link is checked before the password is
/// hashed (so a made-up link costs no hash) and used in the same transaction that sets the password.
pub async fn reset_password(app: &App, token: &str, password: &str) -> OpResult<Reset> {
    let password = Password::parse(password).map_err(OpError::from)?;
    let hash = app.secrets.hash_token(token);
    if app.store.password_reset(&hash, app.now()).await?.is_none() {
        return Ok(Reset::Invalid);
    }
    let Some(password_hash) = hash_password(app, password).await? else { return Ok(Reset::Busy) };
    Ok(match app.store.reset_password(&hash, &password_hash, app.now()).await? {
        Some(done) => Reset::Done(done),
        None => Reset::Invalid,
    })
}

/// What opening a verification link did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// The signed-in account's address is verified now (or was already).
    Verified,
    /// Opened by nobody signed in: nothing changed (a mail scanner, or the owner before signing in).
    SignInFirst,
    /// Opened by another account: nothing changed.
    NotYours,
    /// Unknown, used or expired.
    Invalid,
}

/// Opens a verification link: only the account it was sent for, signed in (`opener`), verifies it —
/// so a mail scanner at the address cannot verify an account someone else made with it.
pub async fn verify_email(app: &App, token: &str, opener: Option<UserId>) -> OpResult<Verification> {
    let Some((user, expires)) = app.store.email_verification(&app.secrets.hash_token(token)).await? else {
        return Ok(Verification::Invalid);
    };
    if expires <= app.now() {
        return Ok(Verification::Invalid);
    }
    match opener {
        None => Ok(Verification::SignInFirst),
        Some(o) if o != user => Ok(Verification::NotYours),
        Some(_) => {
            app.store.mark_email_verified(user, app.now()).await?;
            Ok(Verification::Verified)
        }
    }
}

/// Refuses an action that emails or votes for an account whose address is not verified yet.
pub async fn require_verified(app: &App, user: UserId, action: &str) -> OpResult<()> {
    let u = app.store.get_user(user).await?.ok_or(OpError::Unauthenticated)?;
    if u.email_verified() {
        return Ok(());
    }
    Err(OpError::Conflict {
        code: "email_unverified",
        message: format!(
            "confirm your email address first ({action} needs it): open the link we emailed to {} while signed in",
            u.email
        ),
    })
}

/// What a sign-in attempt got.
#[derive(Debug)]
pub enum SignIn {
    Welcome(User),
    /// The email and password do not match an account (the same for an unknown email).
    Refused,
    /// Too many failures for this account from this address, or from this address: try again after
    /// the wait, whatever the password (`domain::throttle`).
    Wait(chrono::Duration),
    /// Every password check slot stayed busy for [`PASSWORD_QUEUE_WAIT`]: a storm of sign-ins.
    Busy,
    /// The password matched, but the site team suspended the account: why (only told to someone who
    /// knows the password, so the answer says nothing about other people's accounts).
    Suspended(String),
}

/// How many password hashes run at once: one per core. Each runs on tokio's blocking pool, so a storm
/// of sign-ins queues here instead of occupying the threads that answer every other request.
fn password_slots() -> &'static tokio::sync::Semaphore {
    static SLOTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    SLOTS.get_or_init(|| {
        tokio::sync::Semaphore::new(std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get))
    })
}

/// The longest a sign-in or sign-up waits for a password slot before it is answered "busy".
pub const PASSWORD_QUEUE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs `work` (argon2) off the async workers, one per core at most; `None` when no slot came free in
/// [`PASSWORD_QUEUE_WAIT`].
async fn hash_work<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> OpResult<Option<T>> {
    let Ok(Ok(permit)) = tokio::time::timeout(PASSWORD_QUEUE_WAIT, password_slots().acquire()).await else {
        return Ok(None);
    };
    let out = tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| OpError::Repo(RepoError::Unexpected(format!("a password check failed: {e}").into())))?;
    drop(permit);
    Ok(Some(out))
}

/// Hashes a password off the async workers (see [`hash_work`]); `None` when too busy.
async fn hash_password(app: &App, password: Password) -> OpResult<Option<String>> {
    let secrets = app.secrets.clone();
    hash_work(move || secrets.hash_password(&password)).await
}

/// Checks an email and password from `address` (the client's address as the rate limit keys it).
/// Throttled per account, per address and per pair before any password is checked
/// (`domain::throttle`); an unknown email is checked against a decoy hash and counted like a known
/// one, so neither the answer nor its timing says which emails have accounts.
///
/// The attempt is counted first and judged on the counts its bumps returned, so guesses sent at once
/// are judged one by one; a refused attempt, one that found no password slot and a right password
/// give their counts back (the pair's is cleared on success).
pub async fn sign_in(app: &App, email: &str, password: &str, address: &str) -> OpResult<SignIn> {
    use domain::throttle::{self, SignInCounters, Verdict};
    let typed = email.trim().to_lowercase();
    let keys = [
        crate::quotas::keyed(app, "signin-pair", &format!("{typed}\u{0}{address}")).await?,
        crate::quotas::keyed(app, "signin-address", address).await?,
        crate::quotas::keyed(app, "signin-account", &typed).await?,
    ];
    let now = app.now();
    let counted = [
        app.store.bump_throttle(&keys[0], now, now - throttle::PAIR_WINDOW).await?,
        app.store.bump_throttle(&keys[1], now, now - throttle::WINDOW).await?,
        app.store.bump_throttle(&keys[2], now, now - throttle::WINDOW).await?,
    ];
    let give_back = async |which: std::ops::Range<usize>| -> OpResult<()> {
        for i in which {
            app.store.give_back_throttle(&keys[i], counted[i].since).await?;
        }
        Ok(())
    };
    let verdict = throttle::judge(
        SignInCounters { pair: Some(counted[0]), address: Some(counted[1]), account: Some(counted[2]) },
        now,
    );
    let wait = match verdict {
        Verdict::Refuse(wait) => Some(wait),
        Verdict::Check { lock: Some(lock) } if !app.store.lock_throttle(&keys[0], now, now + lock).await? => {
            // Another attempt of this burst took the lock first: wait as long as it holds.
            let held = app.store.throttles(std::slice::from_ref(&keys[0])).await?;
            Some(held.first().and_then(|(_, c)| c.locked(now)).unwrap_or(lock))
        }
        Verdict::Check { .. } => None,
    };
    if let Some(wait) = wait {
        give_back(0..3).await?;
        return Ok(SignIn::Wait(wait));
    }
    let user = match Email::parse(email) {
        Ok(e) => app.store.user_by_email(&e).await?,
        Err(_) => None,
    };
    let (user, hash) = match user {
        Some((u, Some(h))) => (Some(u), h),
        _ => (None, app.secrets.decoy_password_hash()),
    };
    let (secrets, typed_password) = (app.secrets.clone(), password.to_owned());
    let Some(matches) = hash_work(move || secrets.verify_password(&typed_password, &hash)).await? else {
        // Not checked: not a failure. A lock this attempt took stays (the pair was past its free ones).
        give_back(0..3).await?;
        return Ok(SignIn::Busy);
    };
    match user {
        Some(user) if matches => {
            app.store.clear_throttles(&[keys[0].clone()]).await?;
            give_back(1..3).await?;
            if user.suspended() {
                let why = app.store.suspension(user.id).await?.map(|(_, reason)| reason).unwrap_or_default();
                return Ok(SignIn::Suspended(why));
            }
            Ok(SignIn::Welcome(user))
        }
        _ => Ok(SignIn::Refused),
    }
}

/// Creates an API key for `user` and returns it with the key itself, which is shown this once.
pub async fn create_api_key(app: &App, user: UserId, name: &str, scopes: &[Scope]) -> OpResult<(ApiKey, ApiKeyToken)> {
    let name = key_name(name)?;
    if scopes.is_empty() {
        return Err(domain::ValidationError::new("scopes", "name at least one scope").into());
    }
    // The store counts the account's keys as it creates this one (keys created at once stop at the
    // cap). The shown part holds 8 random base62 characters (47 bits): a clash is astronomically
    // rare, and answered by drawing again.
    for _ in 0..3 {
        let token = app.secrets.new_api_key();
        let hash = app.secrets.hash_api_key(&token);
        match app.store.create_api_key(user, &name, token.shown(), &hash, scopes, app.now()).await {
            Ok(Some(key)) => return Ok((key, token)),
            Ok(None) => return Err(domain::auth::no_room_for_another_key().into()),
            Err(RepoError::Conflict(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(RepoError::Conflict("could not draw a unique key".into()).into())
}

/// The caller behind `Authorization: Bearer <credential>`. A malformed key (wrong prefix, length,
/// alphabet or checksum) is refused without a lookup; an unknown, mismatched or revoked key after one.
/// Every refusal is the same `InvalidToken`, so a caller learns nothing about which keys exist.
pub async fn authenticate_bearer(app: &App, credential: &str) -> OpResult<Principal> {
    let token = ApiKeyToken::parse(credential.trim()).map_err(|e| {
        tracing::debug!(reason = %e, "malformed API key");
        OpError::InvalidToken
    })?;
    let Some((key, stored_hash)) = app.store.api_key_by_shown(token.shown()).await? else {
        return Err(OpError::InvalidToken);
    };
    if !app.secrets.same_hash(&app.secrets.hash_api_key(&token), &stored_hash) || key.revoked_at.is_some() {
        return Err(OpError::InvalidToken);
    }
    let Some(user) = active(app.store.get_user(key.user_id).await?) else { return Err(OpError::InvalidToken) };
    if let Err(e) = app.store.touch_api_key(key.id, app.now()).await {
        tracing::warn!(error = %e, "could not record an API key's use");
    }
    Ok(Principal {
        user_id: user.id,
        email: user.email,
        is_admin: user.is_admin,
        scopes: key.scopes,
        via: Via::ApiKey(key.id),
    })
}

/// The account unless it is suspended: every credential (session, API key, OAuth access token)
/// resolves its account through here or checks [`User::suspended`], so a suspension stops them all at
/// once.
pub(crate) fn active(user: Option<User>) -> Option<User> {
    user.filter(|u| !u.suspended())
}

/// How long a browser session lasts.
pub const SESSION_DAYS: i64 = 30;

/// Starts a browser session for `user`; returns the cookie's token and the session's CSRF token.
pub async fn start_session(app: &App, user: UserId) -> OpResult<(String, String)> {
    let (token, csrf) = (app.secrets.random_token(), app.secrets.random_token());
    let now = app.now();
    let expires = now + chrono::Duration::days(SESSION_DAYS);
    app.store.create_session(user, &app.secrets.hash_token(&token), &csrf, now, expires).await?;
    Ok((token, csrf))
}

/// The person behind a session cookie (all scopes: it is the account holder on our own pages) and
/// the session's CSRF token.
pub async fn session(app: &App, token: &str) -> OpResult<Option<(Principal, String)>> {
    let found = app.store.session(&app.secrets.hash_token(token), app.now()).await?;
    Ok(found.filter(|(user, _)| !user.suspended()).map(|(user, csrf)| {
        let p = Principal {
            user_id: user.id,
            email: user.email,
            is_admin: user.is_admin,
            scopes: Scope::ALL.to_vec(),
            via: Via::Session,
        };
        (p, csrf)
    }))
}

pub async fn end_session(app: &App, token: &str) -> OpResult<()> {
    Ok(app.store.delete_session(&app.secrets.hash_token(token)).await?)
}

/// Ends every browser session of `user`, this one included (sign out everywhere); how many.
pub async fn end_all_sessions(app: &App, user: UserId) -> OpResult<u64> {
    Ok(app.store.delete_sessions_of(user).await?)
}

/// `user`'s API keys (the site's keys page).
pub async fn api_keys_of(app: &App, user: UserId) -> OpResult<Vec<ApiKey>> {
    Ok(app.store.list_api_keys(user).await?)
}

/// Revokes one of `user`'s API keys; another person's key or an unknown id is the same 404.
pub async fn revoke_api_key(app: &App, user: UserId, id: domain::ids::ApiKeyId) -> OpResult<ApiKey> {
    match app.store.revoke_api_key(user, id, app.now()).await {
        Ok(k) => Ok(k),
        Err(RepoError::NotFound) => Err(OpError::NotFound("API key")),
        Err(e) => Err(e.into()),
    }
}
