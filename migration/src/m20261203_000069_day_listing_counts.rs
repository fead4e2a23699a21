//! How many listings each UTC day's launches hold in each status, kept in `day_listing_counts` by
//! triggers on `listings`, so the home page's "today" list (`list_launches` of section `today`) has its
//! total in a row or two instead of counting up to 10 001 listings on each read.
//!
//! That count was the last aggregate a public read ran: through `(status, launched_at)`, up to the cap.
//! Every launch of a week goes live on its Monday at midnight, so on a Monday it counts the whole
//! week's launches (8 474 live at 100k demo listings), as the week's count did before migration 37;
//! on other days it is a short index range, but it ran on the pool, one connection per request, and
//! with the home page's 64 connections it queued behind the other requests' statements there
//! (PostgreSQL logged 60–441 ms for statements that take 0.1 ms; the page's p99 0.1–1.1 s, cache off).
//!
//! A launch's day is the UTC day of `launched_at`, written as `today_page` and the index of migration
//! 55 write it; today's launches are those of the days from today on (a launch dated later than today
//! is counted, as `launched_at >= midnight` counted it).

use crate::{POSTGRES_LAUNCH_DAY, SQLITE_LAUNCH_DAY};
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// `expr` (a store's launch-day expression over `launched_at`) over the row `row` (`NEW` or `OLD`).
fn day_of(expr: &str, row: &str) -> String {
    expr.replace("launched_at", &format!("{row}.launched_at"))
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements: Vec<String> = vec![
            "CREATE TABLE day_listing_counts (status TEXT NOT NULL, launch_day DATE NOT NULL, \
             listings BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (status, launch_day))"
                .into(),
        ];
        let backend = manager.get_database_backend();
        let day = if backend == DbBackend::Postgres { POSTGRES_LAUNCH_DAY } else { SQLITE_LAUNCH_DAY };
        let (old, new) = (day_of(day, "OLD"), day_of(day, "NEW"));
        match backend {
            DbBackend::Postgres => {
                statements.extend([
                    format!(
                        "CREATE FUNCTION day_listing_counts_follow() RETURNS trigger AS $$ BEGIN \
                         IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.launched_at IS NOT NULL THEN \
                           UPDATE day_listing_counts SET listings = listings - 1 \
                           WHERE status = OLD.status AND launch_day = {old}; \
                         END IF; \
                         IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.launched_at IS NOT NULL THEN \
                           INSERT INTO day_listing_counts (status, launch_day, listings) VALUES (NEW.status, {new}, 1) \
                             ON CONFLICT (status, launch_day) DO UPDATE SET listings = day_listing_counts.listings + 1; \
                         END IF; \
                         RETURN NULL; END $$ LANGUAGE plpgsql"
                    ),
                    "CREATE TRIGGER day_listing_counts_written AFTER INSERT OR DELETE ON listings \
                     FOR EACH ROW EXECUTE FUNCTION day_listing_counts_follow()"
                        .into(),
                    "CREATE TRIGGER day_listing_counts_moved AFTER UPDATE OF status, launched_at ON listings \
                     FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.launched_at IS DISTINCT FROM NEW.launched_at) \
                     EXECUTE FUNCTION day_listing_counts_follow()"
                        .into(),
                ]);
            }
            _ => {
                statements.extend([
                    format!(
                        "CREATE TRIGGER day_listing_counts_added AFTER INSERT ON listings WHEN NEW.launched_at IS NOT NULL BEGIN \
                         INSERT OR IGNORE INTO day_listing_counts (status, launch_day, listings) VALUES (NEW.status, {new}, 0); \
                         UPDATE day_listing_counts SET listings = listings + 1 \
                         WHERE status = NEW.status AND launch_day = {new}; END"
                    ),
                    format!(
                        "CREATE TRIGGER day_listing_counts_deleted AFTER DELETE ON listings WHEN OLD.launched_at IS NOT NULL BEGIN \
                         UPDATE day_listing_counts SET listings = listings - 1 \
                         WHERE status = OLD.status AND launch_day = {old}; END"
                    ),
                    format!(
                        "CREATE TRIGGER day_listing_counts_moved AFTER UPDATE OF status, launched_at ON listings \
                         WHEN OLD.status IS NOT NEW.status OR OLD.launched_at IS NOT NEW.launched_at BEGIN \
                         UPDATE day_listing_counts SET listings = listings - 1 \
                         WHERE OLD.launched_at IS NOT NULL AND status = OLD.status AND launch_day = {old}; \
                         INSERT OR IGNORE INTO day_listing_counts (status, launch_day, listings) \
                         SELECT NEW.status, {new}, 0 WHERE NEW.launched_at IS NOT NULL; \
                         UPDATE day_listing_counts SET listings = listings + 1 \
                         WHERE NEW.launched_at IS NOT NULL AND status = NEW.status AND launch_day = {new}; END"
                    ),
                ]);
            }
        }
        statements.push(format!(
            "INSERT INTO day_listing_counts (status, launch_day, listings) SELECT status, {day}, COUNT(*) \
             FROM listings WHERE launched_at IS NOT NULL GROUP BY status, {day}"
        ));
        crate::execute_all(manager, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_kept_counts(manager, "day_listing_counts", "listings").await
    }
}
