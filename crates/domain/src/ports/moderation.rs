//! Moderation's storage: hiding and restoring listings, suspending accounts, people's reports, the
//! domain blocklist and the audit log. Every action of the site team is written with its audit line in
//! one transaction, so the log never misses an action that happened nor holds one that did not.

use super::{ListingVersion, RepoResult};
use crate::ids::{ListingId, UserId};
use crate::listing::{Lifecycle, Listing};
use crate::moderation::{AuditEntry, BlockedDomain, Hold, NewAuditEntry, NewReport, Report};
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// A blocked domain with why, when and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    pub domain: BlockedDomain,
    pub reason: String,
    pub at: DateTime<Utc>,
    pub by: String,
}

/// An owner's edit with the listing it was made to and who made it, for the console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingVersionOf {
    pub version: ListingVersion,
    pub slug: String,
    /// The editor's email (`None` once the account was deleted).
    pub editor: Option<String>,
}

/// What suspending or restoring an account changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SuspensionEffect {
    /// Listings hidden (suspend) or brought back (restore).
    pub listings: u64,
    /// Votes taken out of every count (suspend) or counted again (restore).
    pub votes: u64,
}

#[async_trait]
pub trait ModerationRepository: Send + Sync {
    /// Hides a listing: moves its lifecycle from `from` to `to` (hidden) only if it is still `from`
    /// (compare-and-set), keeps `hold`, closes its open reports and writes `audit`, in one transaction.
    /// False (and nothing written) when another writer moved it first.
    async fn hide_listing(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        hold: &Hold,
        audit: &NewAuditEntry,
    ) -> RepoResult<bool>;

    /// Restores a hidden listing: lifecycle `from` → `to` (compare-and-set), forgets its hold, writes
    /// `audit`, in one transaction. False when another writer moved it first.
    async fn restore_listing(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        audit: &NewAuditEntry,
    ) -> RepoResult<bool>;

    /// Why a hidden listing is hidden; `None` for one that is not.
    async fn listing_hold(&self, id: ListingId) -> RepoResult<Option<Hold>>;

    /// Suspends an account, in one transaction: marks it with `reason`, ends its sessions and OAuth
    /// grants, hides every listing it owns (role `owner`) that is not hidden or removed yet (`hold`
    /// with cause suspension), and holds its votes out of every count (totals, trending, weekly
    /// tallies), then writes `audit`. `None` when the account is suspended already (nothing changes).
    async fn suspend_user(
        &self,
        user: UserId,
        hold: &Hold,
        audit: &NewAuditEntry,
    ) -> RepoResult<Option<SuspensionEffect>>;

    /// Undoes a suspension, in one transaction: clears the mark, restores the listings hidden because
    /// of it (not those the site team hid on their own), counts its held votes again as cast at their
    /// time, writes `audit`. `None` when the account is not suspended.
    async fn restore_user(&self, user: UserId, audit: &NewAuditEntry) -> RepoResult<Option<SuspensionEffect>>;

    /// When and why the account is suspended; `None` when it is not.
    async fn suspension(&self, user: UserId) -> RepoResult<Option<(DateTime<Utc>, String)>>;

    /// Stores a report; false when this person reported this listing already.
    async fn file_report(&self, report: &NewReport) -> RepoResult<bool>;

    /// Reports newest first, only open ones with `open_only`, at most `limit`.
    async fn reports(&self, open_only: bool, limit: u64) -> RepoResult<Vec<Report>>;

    /// Closes a listing's open reports at `at` and writes `audit` (when any was open), in one
    /// transaction; how many were closed.
    async fn close_reports(&self, id: ListingId, at: DateTime<Utc>, audit: &NewAuditEntry) -> RepoResult<u64>;

    /// Adds a domain to the blocklist and writes `audit`; false when it is there already.
    async fn block_domain(&self, blocked: &Blocked, audit: &NewAuditEntry) -> RepoResult<bool>;

    /// Takes a domain off the blocklist and writes `audit`; false when it was not there.
    async fn unblock_domain(&self, domain: &BlockedDomain, audit: &NewAuditEntry) -> RepoResult<bool>;

    /// The blocklist, by domain.
    async fn blocked_domains(&self) -> RepoResult<Vec<Blocked>>;

    /// The first of `domains` (a host and its parents, `moderation::domains_of`) on the blocklist.
    async fn blocked_among(&self, domains: &[String]) -> RepoResult<Option<Blocked>>;

    /// The audit log, newest first, at most `limit` lines.
    async fn audit_log(&self, limit: u64) -> RepoResult<Vec<AuditEntry>>;

    /// The listings created most recently, any status, newest first (the console's review list).
    async fn recent_listings(&self, limit: u64) -> RepoResult<Vec<Listing>>;

    /// The most recent owner edits of any listing, newest first, with the listing's slug.
    async fn recent_edits(&self, limit: u64) -> RepoResult<Vec<ListingVersionOf>>;
}
