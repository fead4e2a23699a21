//! Claims: storing who claims which listing, and the DNS lookups that check a claim.

use super::RepoResult;
use crate::claim::{Claim, ClaimCheck, ClaimMethod, ClaimStatus, NewClaim};
use crate::ids::{ClaimId, ListingId, UserId};
use crate::paging::{PageRequest, Paged};
use crate::user::Email;
use async_trait::async_trait;
use chrono::{DateTime, Utc};

#[async_trait]
pub trait ClaimRepository: Send + Sync {
    async fn create_claim(&self, new: &NewClaim) -> RepoResult<Claim>;

    /// The newest claim of `user` on `listing` by `method` still pending at `now`.
    async fn open_claim(
        &self,
        user: UserId,
        listing: ListingId,
        method: ClaimMethod,
        now: DateTime<Utc>,
    ) -> RepoResult<Option<Claim>>;

    /// One claim when it is `user`'s; `None` for anyone else's (and unknown ids).
    async fn my_claim(&self, user: UserId, id: ClaimId) -> RepoResult<Option<Claim>>;

    /// `user`'s claims, newest first.
    async fn my_claims(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Claim>>;

    /// Every claim on `listing`, oldest first (for the site team: who verified what, when).
    async fn claims_on_listing(&self, listing: ListingId) -> RepoResult<Vec<Claim>>;

    /// The email claim whose link token hashes to `hash`.
    async fn claim_by_token_hash(&self, hash: &str) -> RepoResult<Option<Claim>>;

    /// Records a look that did not prove control.
    async fn record_claim_check(&self, id: ClaimId, check: &ClaimCheck) -> RepoResult<()>;

    /// Moves claim `id` from `from` to `to` (compare-and-set: false when it is no longer in `from`)
    /// with `check` as its last check and, when `to` is verified, in one transaction: the claimant
    /// becomes an owner of the listing and the listing is marked verified. Whether the claim may move
    /// is the domain's ([`crate::claim::Claim::verified`]); storage only applies it.
    async fn complete_claim(
        &self,
        id: ClaimId,
        from: ClaimStatus,
        to: ClaimStatus,
        check: &ClaimCheck,
    ) -> RepoResult<bool>;

    /// How many email claims `user` started on `listing` since `since`.
    async fn email_claims_since(&self, user: UserId, listing: ListingId, since: DateTime<Utc>) -> RepoResult<u64>;

    /// The owners of a listing and their email addresses.
    async fn listing_owners(&self, listing: ListingId) -> RepoResult<Vec<(UserId, Email)>>;
}

/// Why a DNS lookup gave no answer at all (a name without TXT records is an empty answer, not this).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the DNS lookup failed: {0}")]
pub struct DnsError(pub String);

/// Looks up DNS records (for DNS claims).
#[async_trait]
pub trait DnsResolver: Send + Sync + std::fmt::Debug {
    /// Every TXT record at `name`, each record's strings joined; empty when the name has none or does
    /// not exist. Answers are not cached: a record published a moment ago is seen.
    async fn txt(&self, name: &str) -> Result<Vec<String>, DnsError>;
}
