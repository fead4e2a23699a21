//! Ports for accounts: users, API keys, and the secrets adapter (randomness and hashing).

use super::RepoResult;
use crate::auth::{ApiKey, ApiKeyToken, Password};
use crate::ids::{ApiKeyId, UserId};
use crate::user::{Email, Scope, User};
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// A user to create; the password arrives already hashed.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub email: Email,
    pub password_hash: String,
    pub display_name: String,
    pub is_admin: bool,
    /// Made by the operator (`admin create-user`): the address is taken as verified.
    pub verified: bool,
}

#[async_trait]
pub trait UserRepository: Send + Sync {
    /// `Conflict` when the email is taken (emails compare case-insensitively in their domain part,
    /// as `Email::parse` lower-cases it).
    async fn create_user(&self, new: NewUser, now: DateTime<Utc>) -> RepoResult<User>;

    /// The user and their password hash (`None` for accounts without a password, e.g. demo voters).
    async fn user_by_email(&self, email: &Email) -> RepoResult<Option<(User, Option<String>)>>;

    async fn get_user(&self, id: UserId) -> RepoResult<Option<User>>;

    /// Stores a verification link's hash for `user`, valid until `expires_at`.
    async fn save_email_verification(
        &self,
        user: UserId,
        token_hash: &str,
        expires_at: DateTime<Utc>,
    ) -> RepoResult<()>;

    /// The account a verification link is for and when it expires, if the link exists.
    async fn email_verification(&self, token_hash: &str) -> RepoResult<Option<(UserId, DateTime<Utc>)>>;

    /// Marks `user`'s address verified at `now` (once: a second call keeps the first time) and forgets
    /// its verification links; false when it was verified already.
    async fn mark_email_verified(&self, user: UserId, now: DateTime<Utc>) -> RepoResult<bool>;

    /// Stores a password-reset link's hash for `user`, valid until `expires_at`, and forgets the
    /// account's links that expired before `now`.
    async fn save_password_reset(
        &self,
        user: UserId,
        token_hash: &str,
        expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> RepoResult<()>;

    /// The account a password-reset link is for, if the link exists and has not expired at `now`
    /// (reading it uses nothing: a mail scanner opening the link changes nothing).
    async fn password_reset(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Option<UserId>>;

    /// Uses a password-reset link, once, in one transaction. When `token_hash` is a link that has not
    /// expired at `now`: sets the account's password hash; marks its address verified (the link proved
    /// the mailbox); forgets every reset and verification link of the account and ends its sessions;
    /// and when the address was not verified before, revokes its API keys and OAuth grants, which
    /// whoever made the account set up without ever proving the address (someone who signed up with
    /// another person's email). `None` when the link is unknown, used or expired: nothing changes.
    async fn reset_password(
        &self,
        token_hash: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> RepoResult<Option<PasswordReset>>;
}

/// What a password reset did ([`UserRepository::reset_password`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordReset {
    pub user: UserId,
    /// The address was not verified before: the reset took the account over from whoever made it, and
    /// revoked the API keys and OAuth grants it held.
    pub took_over: bool,
    /// Sessions ended.
    pub sessions: u64,
}

#[async_trait]
pub trait ApiKeyRepository: Send + Sync {
    /// Stores a key by its shown part and hash, unless `user` holds as many unrevoked keys as
    /// [`crate::auth::room_for_another_key`] allows already (`None`): counted under a lock on the
    /// account, so keys created at once stop at the cap. `Conflict` if the shown part is taken (then
    /// the caller draws a new key).
    async fn create_api_key(
        &self,
        user: UserId,
        name: &str,
        shown: &str,
        hash: &str,
        scopes: &[Scope],
        now: DateTime<Utc>,
    ) -> RepoResult<Option<ApiKey>>;

    /// The key whose shown part is `shown`, with its stored hash; revoked keys too (the caller decides).
    async fn api_key_by_shown(&self, shown: &str) -> RepoResult<Option<(ApiKey, String)>>;

    /// The user's keys, newest first, revoked ones included.
    async fn list_api_keys(&self, user: UserId) -> RepoResult<Vec<ApiKey>>;

    /// Revokes the user's key. `NotFound` when the key does not exist or is another user's (the same
    /// answer, so ids of other people's keys cannot be probed). Revoking twice is not an error.
    async fn revoke_api_key(&self, user: UserId, id: ApiKeyId, now: DateTime<Utc>) -> RepoResult<ApiKey>;

    /// Records a use (at most once a minute is enough; the adapter may skip writes).
    async fn touch_api_key(&self, id: ApiKeyId, now: DateTime<Utc>) -> RepoResult<()>;
}

/// Randomness and hashing. Password hashes are slow on purpose (argon2id); key hashes are fast (a key
/// carries 190 random bits, so a fast hash cannot be brute-forced) and compared in constant time.
pub trait Secrets: Send + Sync + std::fmt::Debug {
    fn new_api_key(&self) -> ApiKeyToken;
    fn hash_password(&self, password: &Password) -> String;
    /// False for a wrong password and for a malformed hash.
    fn verify_password(&self, password: &str, hash: &str) -> bool;
    /// A hash of no one's password, made with the same parameters as [`Secrets::hash_password`]:
    /// checking a password against it costs what checking a real one does, so an unknown email takes
    /// as long to refuse as a known one.
    fn decoy_password_hash(&self) -> String;
    fn hash_api_key(&self, key: &ApiKeyToken) -> String;
    /// Constant-time comparison of two hashes.
    fn same_hash(&self, a: &str, b: &str) -> bool;
    /// Random bytes for session ids and CSRF tokens.
    fn random_token(&self) -> String;
    /// A fast hash of a random token (a session cookie's), for storage.
    fn hash_token(&self, token: &str) -> String;
}

/// Counts requests per client against a quota. Infallible by contract: an adapter whose shared store
/// is unreachable falls back to counting in process (and logs it) rather than refusing or waving
/// everything through.
#[async_trait]
pub trait RateLimiter: Send + Sync + std::fmt::Debug {
    async fn check(&self, client: &str, quota: crate::ratelimit::Quota) -> crate::ratelimit::Decision;
}

/// What a request with an Idempotency-Key finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyBegin {
    /// First time (or the first attempt was abandoned): run the operation, then `finish` or `abandon`.
    Started,
    /// Done before: answer with this response (JSON text) again.
    Replay(String),
    /// The first request with this key is still running.
    InFlight,
    /// The key was used with a different request.
    Mismatch,
}

/// Idempotency records, keyed by (scope = caller and operation, key).
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims the key for a request with `fingerprint`. A record still running after `stale_after` is
    /// taken over (its request died mid-way, and the operation's own transaction did not commit).
    async fn begin_idempotent(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        stale_after: chrono::Duration,
    ) -> RepoResult<IdempotencyBegin>;

    /// Stores the response of a started request.
    async fn finish_idempotent(&self, scope: &str, key: &str, response: &str) -> RepoResult<()>;

    /// Forgets a started request that failed, so the key may be retried.
    async fn abandon_idempotent(&self, scope: &str, key: &str) -> RepoResult<()>;

    /// Deletes records created before `before`; returns how many.
    async fn prune_idempotent(&self, before: DateTime<Utc>) -> RepoResult<u64>;
}

/// Browser sessions of the service's own pages, found by the hash of the cookie's token.
#[async_trait]
pub trait SessionStore: Send + Sync {
    async fn create_session(
        &self,
        user: UserId,
        token_hash: &str,
        csrf: &str,
        now: DateTime<Utc>,
        expires: DateTime<Utc>,
    ) -> RepoResult<()>;

    /// The signed-in user and the session's CSRF token; `None` when unknown or expired at `now`.
    async fn session(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Option<(User, String)>>;

    async fn delete_session(&self, token_hash: &str) -> RepoResult<()>;

    /// Ends every browser session of `user` (sign out everywhere); how many.
    async fn delete_sessions_of(&self, user: UserId) -> RepoResult<u64>;
}

/// Counters that hold across requests and instances (failed sign-ins, …), each under a key the caller
/// makes (a keyed hash: no email or address is stored in the clear). See `crate::throttle`.
#[async_trait]
pub trait Throttles: Send + Sync {
    /// Counts one more event under `key` and returns the counter: the count starts again at 1 when the
    /// stored one began before `window_start`. One statement: concurrent bumps all count.
    async fn bump_throttle(
        &self,
        key: &str,
        now: DateTime<Utc>,
        window_start: DateTime<Utc>,
    ) -> RepoResult<crate::throttle::Counter>;

    /// Takes back one event counted under `key` by a bump that returned `since` (a refused request
    /// gives back what it counted); nothing when the counter has started again since, or is at 0.
    async fn give_back_throttle(&self, key: &str, since: DateTime<Utc>) -> RepoResult<()>;

    /// The counters under `keys` that exist, in any order.
    async fn throttles(&self, keys: &[String]) -> RepoResult<Vec<(String, crate::throttle::Counter)>>;

    /// Locks `key` until `until` unless it is still locked at `now`; whether it did. One statement:
    /// of several requests racing for the lock, one takes it. A counter that does not exist is left
    /// alone (`false`).
    async fn lock_throttle(&self, key: &str, now: DateTime<Utc>, until: DateTime<Utc>) -> RepoResult<bool>;

    /// Forgets the counters under `keys`.
    async fn clear_throttles(&self, keys: &[String]) -> RepoResult<()>;

    /// Forgets counters that began before `before` and are not locked past it; how many went.
    async fn prune_throttles(&self, before: DateTime<Utc>) -> RepoResult<u64>;
}
