//! How many listings each launch week holds in each status, kept in `week_listing_counts` by triggers
//! on `listings`, so a week's list (the home page's and the calendar's launches, `list_launches` for a
//! week) has its exact total in one row instead of counting up to 10 001 listings on each read. At
//! 100k demo listings this week held 10 312 live launches: the capped count took 7–16 ms on PostgreSQL,
//! most of an uncached home page.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements: Vec<&str> = vec![
            "CREATE TABLE week_listing_counts (status TEXT NOT NULL, launch_week DATE NOT NULL, \
             listings BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (status, launch_week))",
        ];
        statements.extend(match manager.get_database_backend() {
            DbBackend::Postgres => [
                "CREATE FUNCTION week_listing_counts_follow() RETURNS trigger AS $$ BEGIN \
                 IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.launch_week IS NOT NULL THEN \
                   UPDATE week_listing_counts SET listings = listings - 1 \
                   WHERE status = OLD.status AND launch_week = OLD.launch_week; \
                 END IF; \
                 IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.launch_week IS NOT NULL THEN \
                   INSERT INTO week_listing_counts (status, launch_week, listings) VALUES (NEW.status, NEW.launch_week, 1) \
                     ON CONFLICT (status, launch_week) DO UPDATE SET listings = week_listing_counts.listings + 1; \
                 END IF; \
                 RETURN NULL; END $$ LANGUAGE plpgsql",
                "CREATE TRIGGER week_listing_counts_written AFTER INSERT OR DELETE ON listings \
                 FOR EACH ROW EXECUTE FUNCTION week_listing_counts_follow()",
                "CREATE TRIGGER week_listing_counts_moved AFTER UPDATE OF status, launch_week ON listings \
                 FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.launch_week IS DISTINCT FROM NEW.launch_week) \
                 EXECUTE FUNCTION week_listing_counts_follow()",
            ],
            _ => [
                "CREATE TRIGGER week_listing_counts_added AFTER INSERT ON listings WHEN NEW.launch_week IS NOT NULL BEGIN \
                 INSERT OR IGNORE INTO week_listing_counts (status, launch_week, listings) VALUES (NEW.status, NEW.launch_week, 0); \
                 UPDATE week_listing_counts SET listings = listings + 1 \
                 WHERE status = NEW.status AND launch_week = NEW.launch_week; END",
                "CREATE TRIGGER week_listing_counts_deleted AFTER DELETE ON listings WHEN OLD.launch_week IS NOT NULL BEGIN \
                 UPDATE week_listing_counts SET listings = listings - 1 \
                 WHERE status = OLD.status AND launch_week = OLD.launch_week; END",
                "CREATE TRIGGER week_listing_counts_moved AFTER UPDATE OF status, launch_week ON listings \
                 WHEN OLD.status IS NOT NEW.status OR OLD.launch_week IS NOT NEW.launch_week BEGIN \
                 UPDATE week_listing_counts SET listings = listings - 1 \
                 WHERE OLD.launch_week IS NOT NULL AND status = OLD.status AND launch_week = OLD.launch_week; \
                 INSERT OR IGNORE INTO week_listing_counts (status, launch_week, listings) \
                 SELECT NEW.status, NEW.launch_week, 0 WHERE NEW.launch_week IS NOT NULL; \
                 UPDATE week_listing_counts SET listings = listings + 1 \
                 WHERE NEW.launch_week IS NOT NULL AND status = NEW.status AND launch_week = NEW.launch_week; END",
            ],
        });
        statements.push(
            "INSERT INTO week_listing_counts (status, launch_week, listings) SELECT status, launch_week, COUNT(*) \
             FROM listings WHERE launch_week IS NOT NULL GROUP BY status, launch_week",
        );
        crate::execute_all(manager, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_kept_counts(manager, "week_listing_counts", "listings").await
    }
}
