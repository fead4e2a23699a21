//! Port traits: how the domain reaches storage and the clock. Named by role; adapters (named by
//! technology) implement them in `adapters-*` crates. Each method's doc says what it must return when.

mod accounts;
mod changes;
mod claims;
mod clock;
mod content;
mod directory;
mod drafts;
mod jobs;
mod moderation;
mod oauth;
mod orders;
mod own;
mod payments;
mod reference;
mod store;

pub use accounts::{
    ApiKeyRepository, IdempotencyBegin, IdempotencyStore, NewUser, PasswordReset, RateLimiter, Secrets, SessionStore,
    Throttles, UserRepository,
};
pub use changes::{PublicChanges, REMEMBERED_CHANGES};
pub use claims::{ClaimRepository, DnsError, DnsResolver};
pub use clock::{Clock, FixedClock, SystemClock};
pub use content::{AwardRepository, BlogRepository, FounderRepository};
pub use directory::{CategoryRepository, DirectoryImport, ImportListing, ImportTransaction, ListingRepository};
pub use drafts::{
    DraftRepository, Drafter, DrafterError, FetchedPage, Homepage, Invite, MailSender, Outbox, OutboxEmail, Site,
    SiteError, SiteReader,
};
pub use jobs::{Job, JobBacklog, JobQueue};
pub use moderation::{Blocked, ListingVersionOf, ModerationRepository, SuspensionEffect};
pub use oauth::OAuthStore;
pub use orders::{OrderCreated, OrderRepository};
pub use own::{BadgeCheck, ListingVersion, OwnListingRepository, QueueMove, clock_hour};
pub use payments::{PaymentError, PaymentEvent, PaymentGateway, PaymentStart, VatRegistry};
pub use reference::{InterviewRepository, ProductRepository, SettingsRepository};
pub use store::{Store, StoreCache};

/// What a repository can fail with. Absence is not an error: lookups return `Ok(None)`.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The record the write refers to does not exist.
    #[error("not found")]
    NotFound,
    /// A uniqueness rule refused the write (the message names it).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The store could not serve the call just now: its connection was lost or none could be had in
    /// time (a database restarting, failing over, or down), or a lock it needed was not had in time (a
    /// table held by a long transaction or an operator's change; a deadlock broken on this side).
    /// Worth retrying shortly: callers show a 503.
    #[error("storage unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The store failed otherwise (a statement refused, disk full). Callers show a 500 and log the source.
    #[error("storage failed")]
    Unexpected(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl RepoError {
    /// A copy of an error shared by several waiters (a cache's): the same kind, a source kept as its
    /// message (sources are not `Clone`).
    pub fn copied(&self) -> Self {
        match self {
            Self::NotFound => Self::NotFound,
            Self::Conflict(m) => Self::Conflict(m.clone()),
            Self::Unavailable(source) => Self::Unavailable(source.to_string().into()),
            Self::Unexpected(source) => Self::Unexpected(source.to_string().into()),
        }
    }
}

pub type RepoResult<T> = Result<T, RepoError>;
