//! How instances learn that public data changed somewhere else.

use super::RepoResult;
use async_trait::async_trait;

/// A counter shared by every instance, counting changes to public data (anything a public read
/// shows). Whoever changes public data counts it; each instance polls the counter and drops its read
/// cache when the counter moved.
#[async_trait]
pub trait PublicChanges: Send + Sync {
    /// Counts one change; returns the counter after it.
    async fn note_public_change(&self) -> RepoResult<i64>;

    /// The counter now.
    async fn public_changes(&self) -> RepoResult<i64>;
}
