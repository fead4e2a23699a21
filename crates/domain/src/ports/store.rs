//! Everything a use case may ask of storage, as one port: each role's repository trait, plus the
//! cache a store keeps in memory. An adapter implementing every role is a [`Store`] without writing
//! anything more (SQLite and PostgreSQL through sea-orm today); use cases hold an `Arc<dyn Store>` and
//! never name the adapter.

use super::*;

/// What a store keeps in memory for speed (totals, the category tree) must be dropped when public data
/// changed, here or on another instance. A store without a cache does nothing.
pub trait StoreCache: Send + Sync {
    fn forget_cached(&self);
}

/// Declares [`Store`] as every role listed, and implements it for anything that plays them all: the
/// list is written once, so a new role is added in one place.
macro_rules! store_of_roles {
    ($($role:ident),+ $(,)?) => {
        /// All storage roles together.
        pub trait Store: $($role +)+ StoreCache + std::fmt::Debug + Send + Sync {}

        impl<T> Store for T where T: $($role +)+ StoreCache + std::fmt::Debug + Send + Sync + ?Sized {}
    };
}

store_of_roles!(
    ApiKeyRepository,
    AwardRepository,
    BlogRepository,
    CategoryRepository,
    ClaimRepository,
    DirectoryImport,
    DraftRepository,
    FounderRepository,
    IdempotencyStore,
    InterviewRepository,
    JobQueue,
    ListingRepository,
    ModerationRepository,
    OAuthStore,
    OrderRepository,
    Outbox,
    OwnListingRepository,
    ProductRepository,
    PublicChanges,
    SessionStore,
    SettingsRepository,
    Throttles,
    UserRepository,
);
