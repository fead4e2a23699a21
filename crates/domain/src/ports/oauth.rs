//! OAuth: registered clients, authorization codes and refresh-token families (the signing secret is
//! not stored here: see bootstrap::keys). Every secret is stored as a hash; each redemption is one
//! compare-and-set so a code or refresh token is spent exactly once even with several instances racing.

use super::RepoResult;
use crate::oauth::{AuthCode, OAuthClient, Redeemed, RefreshGrant};
use async_trait::async_trait;
use chrono::{DateTime, Utc};

#[async_trait]
pub trait OAuthStore: Send + Sync {
    /// Stores a dynamically registered client (`Conflict` if the id exists).
    async fn create_client(&self, client: &OAuthClient) -> RepoResult<()>;

    /// A registered client by id.
    async fn client(&self, client_id: &str) -> RepoResult<Option<OAuthClient>>;

    /// Stores an authorization code, and marks its client as used (allowed by someone) if it was not.
    async fn save_code(&self, code: &AuthCode) -> RepoResult<()>;

    /// Forgets the registered clients nobody ever allowed (no code was issued to them) that were
    /// registered before `registered_before`; returns how many. Registration is open, so this bounds
    /// what a script's registrations keep.
    async fn prune_unused_clients(&self, registered_before: DateTime<Utc>) -> RepoResult<u64>;

    /// Spends the code whose hash is `code_hash` at `now`: `Fresh` the first time, `Replayed` after.
    /// Expiry is the caller's check.
    async fn redeem_code(&self, code_hash: &str, now: DateTime<Utc>) -> RepoResult<Redeemed<AuthCode>>;

    async fn save_refresh(&self, grant: &RefreshGrant, now: DateTime<Utc>) -> RepoResult<()>;

    /// Spends a refresh token: `Fresh` the first time, `Replayed` after, `Unknown` when unknown or
    /// revoked. Expiry is the caller's check.
    async fn redeem_refresh(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Redeemed<RefreshGrant>>;

    /// Revokes every refresh token of a family (a replay, a replayed code, or the client's request).
    async fn revoke_family(&self, family: &str, now: DateTime<Utc>) -> RepoResult<()>;

    /// The family of a refresh token (for revocation by the token itself), if known.
    async fn refresh_family(&self, token_hash: &str) -> RepoResult<Option<String>>;

    /// What `user` has allowed and not taken back: one entry per refresh-token family that still has
    /// a token neither used, revoked nor expired at `now`; newest first.
    async fn grants_of(&self, user: crate::ids::UserId, now: DateTime<Utc>) -> RepoResult<Vec<crate::oauth::Grant>>;

    /// Revokes `family` if it is `user`'s (false when it is not, or is gone already).
    async fn revoke_grant(&self, user: crate::ids::UserId, family: &str, now: DateTime<Utc>) -> RepoResult<bool>;
}
