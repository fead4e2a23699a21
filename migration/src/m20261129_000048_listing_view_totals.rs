//! A listing's view total in a narrow table of its own, `listing_view_totals` (a row per listing,
//! added with the listing and given its status by triggers), instead of `listings.views_count`.
//!
//! Counting views wrote the listing row: on SQLite a row that fills most of a page, so each listing a
//! batch of views counted dirtied a page of its own and moved its `(status, views_count)` index entry;
//! on PostgreSQL a new 3.3 KB row version with its 17 index entries (never a HOT update). Measured on
//! the 100k demo database, batches of 64 new views: SQLite 74–76 µs a view with the listing rows,
//! 47–50 µs with a narrow table; PostgreSQL 200 batches 1.49–1.65 s against 0.74–0.77 s.
//!
//! The row keeps its listing's status beside the total so that the most-viewed order of a status walks
//! `(status, views, listing_id)` as it walked `ix_listings_status_views` (which goes with the column):
//! with the views alone, upcoming listings (the least viewed) came after every live one, and PostgreSQL
//! walked 78 000 live rows to find 20 scheduled (990 ms).
//!
//! On SQLite the column's drop rewrites `listings` once (every row, as `ALTER TABLE … DROP COLUMN`
//! does: 3.8 s at 100k listings); PostgreSQL only marks it dropped.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements: &[&str] = match manager.get_database_backend() {
            DbBackend::Postgres => &[
                "CREATE TABLE listing_view_totals (listing_id BIGINT PRIMARY KEY REFERENCES listings (id) \
                 ON DELETE CASCADE, status TEXT NOT NULL, views BIGINT NOT NULL DEFAULT 0)",
                "INSERT INTO listing_view_totals (listing_id, status, views) SELECT id, status, views_count FROM listings",
                "CREATE FUNCTION listing_view_totals_follow() RETURNS trigger AS $$ BEGIN \
                 IF TG_OP = 'INSERT' THEN \
                   INSERT INTO listing_view_totals (listing_id, status) VALUES (NEW.id, NEW.status) \
                     ON CONFLICT (listing_id) DO UPDATE SET status = EXCLUDED.status; \
                 ELSE \
                   UPDATE listing_view_totals SET status = NEW.status WHERE listing_id = NEW.id; \
                 END IF; \
                 RETURN NULL; END $$ LANGUAGE plpgsql",
                "CREATE TRIGGER listing_view_totals_added AFTER INSERT ON listings \
                 FOR EACH ROW EXECUTE FUNCTION listing_view_totals_follow()",
                "CREATE TRIGGER listing_view_totals_moved AFTER UPDATE OF status ON listings \
                 FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION listing_view_totals_follow()",
            ],
            // `INTEGER PRIMARY KEY`: the row id itself, so a total is one b-tree lookup.
            _ => &[
                "CREATE TABLE listing_view_totals (listing_id INTEGER PRIMARY KEY REFERENCES listings (id) \
                 ON DELETE CASCADE, status TEXT NOT NULL, views BIGINT NOT NULL DEFAULT 0)",
                "INSERT INTO listing_view_totals (listing_id, status, views) SELECT id, status, views_count FROM listings",
                "CREATE TRIGGER listing_view_totals_added AFTER INSERT ON listings BEGIN \
                 INSERT INTO listing_view_totals (listing_id, status) VALUES (NEW.id, NEW.status) \
                 ON CONFLICT (listing_id) DO UPDATE SET status = excluded.status; END",
                "CREATE TRIGGER listing_view_totals_moved AFTER UPDATE OF status ON listings \
                 WHEN OLD.status IS NOT NEW.status BEGIN \
                 UPDATE listing_view_totals SET status = NEW.status WHERE listing_id = NEW.id; END",
            ],
        };
        crate::execute_all(manager, statements).await?;
        crate::execute_all(
            manager,
            &[
                "CREATE INDEX ix_listing_view_totals_status_views ON listing_view_totals (status, views, listing_id)",
                "DROP INDEX ix_listings_status_views",
                "ALTER TABLE listings DROP COLUMN views_count",
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements = vec![
            "ALTER TABLE listings ADD COLUMN views_count BIGINT NOT NULL DEFAULT 0",
            "UPDATE listings SET views_count = COALESCE((SELECT t.views FROM listing_view_totals t \
             WHERE t.listing_id = listings.id), 0)",
            "CREATE INDEX ix_listings_status_views ON listings (status, views_count)",
        ];
        statements.extend(match manager.get_database_backend() {
            DbBackend::Postgres => &[
                "DROP TRIGGER listing_view_totals_added ON listings",
                "DROP TRIGGER listing_view_totals_moved ON listings",
                "DROP FUNCTION listing_view_totals_follow()",
            ][..],
            _ => &["DROP TRIGGER listing_view_totals_added", "DROP TRIGGER listing_view_totals_moved"][..],
        });
        statements.push("DROP TABLE listing_view_totals");
        crate::execute_all(manager, &statements).await
    }
}
