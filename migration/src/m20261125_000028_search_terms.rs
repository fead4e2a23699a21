//! SQLite: what a text search needs to rank without FTS5's slow paths.
//!
//! - `listings_fts_vocab`, an `fts5vocab` table over the full-text index: the terms a typed word
//!   completes to, so the last word's prefix becomes a few explicit terms (FTS5 merges a prefix's
//!   doclists in memory: 2 ms of a 5.6 ms common-word search at 100k, for one completion).
//! - `ux_listings_id_status` on `(id, status)`: a ranked candidate's status read from a small index
//!   instead of the listing row, whose status sits behind the long texts (0.86 ms for 1 000
//!   candidates, 0.24 through the index). Unique (as `id` is) so that a bulk load, which builds the
//!   other indexes at its end, keeps it: the search names it with `INDEXED BY`.
//!
//! PostgreSQL searches its `tsvector` column and has neither.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(
            manager,
            DbBackend::Sqlite,
            &[
                "CREATE VIRTUAL TABLE IF NOT EXISTS listings_fts_vocab USING fts5vocab(listings_fts, 'row')",
                "CREATE UNIQUE INDEX IF NOT EXISTS ux_listings_id_status ON listings (id, status)",
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(
            manager,
            DbBackend::Sqlite,
            &["DROP TABLE IF EXISTS listings_fts_vocab", "DROP INDEX IF EXISTS ux_listings_id_status"],
        )
        .await
    }
}
