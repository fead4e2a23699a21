//! How instances learn that public data changed somewhere else.

use super::RepoResult;
use async_trait::async_trait;

/// A counter shared by every instance, counting changes to public data (anything a public read
/// shows), with what each change touched. Whoever changes public data counts it with its scope; each
/// instance polls the counter and drops from its read cache what the changes since its last look
/// touched (everything, when it cannot tell).
#[async_trait]
pub trait PublicChanges: Send + Sync {
    /// Counts one change touching `scope` (`*` for anything; a narrower scope the read cache
    /// understands, such as `engagement:{slug}`); returns the counter after it.
    async fn note_public_change(&self, scope: &str) -> RepoResult<i64>;

    /// The counter now.
    async fn public_changes(&self) -> RepoResult<i64>;

    /// The changes after `seen` (counter and scope), oldest first, at most `limit`. Older changes are
    /// forgotten after a while: fewer rows than the counter moved means "cannot tell".
    async fn public_changes_since(&self, seen: i64, limit: u64) -> RepoResult<Vec<(i64, String)>>;
}

/// How many recent changes a store remembers the scopes of (older ones only count).
pub const REMEMBERED_CHANGES: i64 = 1024;
