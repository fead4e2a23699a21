//! SQLite: today's launches, most voted first, from one index alone.
//!
//! The home page lists the listings launched since midnight (UTC), most voted first. Every launch of
//! a week goes live on its Monday, so on a Monday that list is the whole week's launches: 10 312 of
//! 100 000 demo listings. The page walked `(status, launched_at)`, looked up each of those rows for its
//! votes and sorted them: 35 ms a page on SQLite (Python's sqlite3, 50 reads), which made the home page,
//! cache off, 103 pages a second against 5 400–9 100 on other days. The index now carries the votes,
//! and the page takes its ids from the index alone and reads only their ten rows
//! (`adapters-storage`'s `launched_since_page`): 6.4 ms on the same copy.
//!
//! It replaces `(status, launched_at)`, whose reads (the newest launches first) use the same leading
//! columns. What it costs: a vote now moves its listing's entry in this index too.
//!
//! PostgreSQL is left as it is: its planner walks `(status, votes_count)` and stops at the page, or
//! takes the range, from its statistics (1.1 ms on the same data).

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
                "CREATE INDEX ix_listings_status_launched_votes ON listings (status, launched_at, votes_count)",
                "DROP INDEX IF EXISTS ix_listings_status_launched",
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(
            manager,
            DbBackend::Sqlite,
            &[
                "CREATE INDEX ix_listings_status_launched ON listings (status, launched_at)",
                "DROP INDEX IF EXISTS ix_listings_status_launched_votes",
            ],
        )
        .await
    }
}
