//! SQLite: the trending list reads its page from its index alone.
//!
//! A page of the list (`ORDER BY trending_score DESC, id DESC`) walked `(status, trending_score)` and
//! looked each of its rows up in `listings`, whose rows are wide (two to a 4 KiB page at 100k demo
//! listings, the long texts before the status and the launch week). The index now carries what a
//! page shows (the summary: id, slug, name, url, tagline, votes, launch week; the status leads), so
//! the page is one range of the index. `id` follows the score, so the list's order is the index's.
//! Measured at 100k, cache off, @64, the same build on two copies of one database, two rounds: 18 445
//! / 19 805 -> 19 741 / 22 035 pages a second, 76 / 71 -> 69 / 62 µs of server CPU a page.
//!
//! What it costs: the index is 12.4 MiB at 100k (its rows repeat the summary), and a vote moves its
//! listing's wider row in it: a bare `UPDATE` of a random live listing's votes and score, one
//! transaction each, took 195–236 µs before and 252–298 µs after (Python's sqlite3, four rounds of
//! 4 000, the two databases alternating), a part of a vote's transaction. Reads of the list outnumber
//! votes by far.
//!
//! PostgreSQL keeps `(status, trending_score, id)` (migration 46): an index-only scan there depends
//! on the visibility map, which every vote clears for its listing's page.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The index, as `adapters-storage`'s `SUMMARY_SELECT` reads a summary (its test explains the page's
/// statement and expects it covered).
const TRENDING_CARDS: &str = "CREATE INDEX ix_listings_trending_cards ON listings \
     (status, trending_score, id, slug, name, url, tagline, votes_count, launch_week)";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(
            manager,
            DbBackend::Sqlite,
            &[TRENDING_CARDS, "DROP INDEX IF EXISTS ix_listings_status_trending"],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(
            manager,
            DbBackend::Sqlite,
            &[
                "CREATE INDEX ix_listings_status_trending ON listings (status, trending_score)",
                "DROP INDEX IF EXISTS ix_listings_trending_cards",
            ],
        )
        .await
    }
}
