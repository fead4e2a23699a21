//! Today's launches, most voted first, from one index: `(status, the launch's UTC day, votes)`.
//!
//! The home page lists the listings launched since midnight (UTC), most voted first. Every launch of
//! a week goes live on its Monday at midnight, so on a Monday that list is the whole week's launches:
//! 10 312 of 100 000 demo listings. SQLite walked `(status, launched_at)`, looked up each of those rows
//! for its votes and sorted them: 31–35 ms a page (Python's sqlite3), which made the home page, cache
//! off, about 100 pages a second against 5 400–9 100 on other days. PostgreSQL's planner walks
//! `(status, votes_count)` instead and stops at the page, which its statistics promise (1.1 ms) — and
//! which fails when today's launches have fewer votes than the older listings, as on a real Monday
//! morning: with the week's launches at 0–2 votes the same page took 1.36 s.
//!
//! An index led by the status and the launch's UTC day holds a day's launches in the order of their
//! votes: a page of today's is the top of one run of it (`adapters-storage`'s `today_page`), 0.03 ms
//! on SQLite and 0.1 ms on PostgreSQL at 100k. PostgreSQL's index carries the id after the votes, so a
//! run of equal votes (a Monday morning's zeros) is in the page's order too; SQLite's entries end with
//! the rowid, which is the id. The expression is the one the statement writes, character for character.
//! What it costs: a vote moves its listing's entry in this index as well.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The launch's UTC day as each store's index and `adapters-storage`'s statement write it, one text for
/// both (an index on an expression serves only a statement that writes the same expression): SQLite
/// keeps `launched_at` as RFC 3339 text in UTC (`2026-11-30T00:00:00+00:00`), PostgreSQL as `timestamptz`.
pub const SQLITE_LAUNCH_DAY: &str = "substr(launched_at, 1, 10)";
pub const POSTGRES_LAUNCH_DAY: &str = "((launched_at AT TIME ZONE 'UTC')::date)";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let index = match manager.get_database_backend() {
            DbBackend::Sqlite => format!(
                "CREATE INDEX ix_listings_status_launch_day_votes ON listings (status, {SQLITE_LAUNCH_DAY}, votes_count)"
            ),
            _ => format!(
                "CREATE INDEX ix_listings_status_launch_day_votes ON listings \
                 (status, {POSTGRES_LAUNCH_DAY}, votes_count, id)"
            ),
        };
        crate::execute_all(manager, &[index]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &["DROP INDEX IF EXISTS ix_listings_status_launch_day_votes"]).await
    }
}
