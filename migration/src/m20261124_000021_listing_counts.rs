//! How many listings there are in each status, kept in `listing_counts` by triggers so an unfiltered
//! list (this week's trending launches, every live listing) has an exact total without counting the
//! listings on each read, and the site's counts are one row.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::create_kept_counts(manager, "listing_counts", ColumnDef::new(Alias::new("status")).string().to_owned())
            .await?;
        let db = manager.get_connection();
        let statements: Vec<&str> = match manager.get_database_backend() {
            DbBackend::Postgres => vec![
                "CREATE FUNCTION listing_counts_follow() RETURNS trigger AS $$ BEGIN \
                 IF TG_OP IN ('UPDATE', 'DELETE') THEN \
                   UPDATE listing_counts SET listings = listings - 1 WHERE status = OLD.status; \
                 END IF; \
                 IF TG_OP IN ('UPDATE', 'INSERT') THEN \
                   INSERT INTO listing_counts (status, listings) VALUES (NEW.status, 1) \
                     ON CONFLICT (status) DO UPDATE SET listings = listing_counts.listings + 1; \
                   RETURN NEW; \
                 END IF; \
                 RETURN OLD; END $$ LANGUAGE plpgsql",
                "CREATE TRIGGER listing_counts_written AFTER INSERT OR DELETE ON listings \
                 FOR EACH ROW EXECUTE FUNCTION listing_counts_follow()",
                "CREATE TRIGGER listing_counts_moved AFTER UPDATE OF status ON listings \
                 FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION listing_counts_follow()",
            ],
            _ => vec![
                "CREATE TRIGGER listing_counts_added AFTER INSERT ON listings BEGIN \
                 INSERT OR IGNORE INTO listing_counts (status, listings) VALUES (NEW.status, 0); \
                 UPDATE listing_counts SET listings = listings + 1 WHERE status = NEW.status; END",
                "CREATE TRIGGER listing_counts_deleted AFTER DELETE ON listings BEGIN \
                 UPDATE listing_counts SET listings = listings - 1 WHERE status = OLD.status; END",
                "CREATE TRIGGER listing_counts_moved AFTER UPDATE OF status ON listings \
                 WHEN OLD.status <> NEW.status BEGIN \
                 UPDATE listing_counts SET listings = listings - 1 WHERE status = OLD.status; \
                 INSERT OR IGNORE INTO listing_counts (status, listings) VALUES (NEW.status, 0); \
                 UPDATE listing_counts SET listings = listings + 1 WHERE status = NEW.status; END",
            ],
        };
        crate::execute_all(manager, &statements).await?;
        db.execute_unprepared(
            "INSERT INTO listing_counts (status, listings) SELECT status, COUNT(*) FROM listings GROUP BY status",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_kept_counts(manager, "listing_counts", "listings").await
    }
}
