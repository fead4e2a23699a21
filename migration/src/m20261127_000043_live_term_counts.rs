//! SQLite: beside each term's listings of every status (`listing_terms.docs`, migration 32), its live
//! listings, for the terms on enough listings that a search of that word alone would otherwise count
//! them at every read: a word on more listings than a search ranks (1 000) but fewer than its total's
//! cap (10 000) paid an exact count of its live matches each time (1–2 ms at 100k listings, the
//! slowest words of the search mix). `refresh_search_terms` fills the column, capped at 10 001 (past
//! the cap a total says "10 000+"), and leaves it empty for rarer terms. It is read only while the
//! table is current, as the document counts are. PostgreSQL keeps its counts per status already
//! (`listing_status_terms`, migration 34).

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
                "ALTER TABLE listing_terms ADD COLUMN live INTEGER NULL",
                // Behind until the next refresh counts them.
                "UPDATE listing_terms_state SET changes = changes + 1",
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Sqlite, &["ALTER TABLE listing_terms DROP COLUMN live"]).await
    }
}
