//! The index of votes by address (`votes_from_address_since`, the site's limit on votes from one
//! address) holds only the votes that have an address. Votes without one (the demo's, those recorded
//! before addresses were) are never looked up by it, and at a million generated listings they were
//! 29 million entries of NULL: 28 s of a bulk load's index builds and about 900 MB of index. The lookup
//! (`address_key = ? AND created_at >= ?`) implies the index's condition on both stores.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

const OLD: &str = "ix_votes_address_time";
const NEW: &str = "ix_votes_address_known";

/// Builds `build` and drops `old`, also when an interrupted bulk load put `old` off (it is then only a
/// row of `deferred_indexes`, which goes with it).
async fn swap(manager: &SchemaManager<'_>, build: &str, old: &str) -> Result<(), DbErr> {
    crate::execute_all(
        manager,
        &[
            build.to_owned(),
            format!("DROP INDEX IF EXISTS {old}"),
            format!("DELETE FROM deferred_indexes WHERE name = '{old}'"),
        ],
    )
    .await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let build = format!("CREATE INDEX {NEW} ON votes (address_key, created_at) WHERE address_key IS NOT NULL");
        swap(manager, &build, OLD).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        swap(manager, &format!("CREATE INDEX {OLD} ON votes (address_key, created_at)"), NEW).await
    }
}
