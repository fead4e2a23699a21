//! The newest live listings read in the order of an index on PostgreSQL: `(status, launched_at, id)`
//! in place of `(status, launched_at)`. The list orders `launched_at DESC, id DESC`, and listings that
//! go live together (a week's launches at its Monday midnight) share their `launched_at`: PostgreSQL
//! read the whole run of the newest instant and sorted it by id for every page (at 100k demo listings
//! 2 222 rows, 21 ms in `EXPLAIN ANALYZE` against 0.4 ms on SQLite). SQLite's index already ends in
//! the rowid, the listing's id, so it walks the order as it is; its schema is left as it is.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

const NEW: crate::IndexDef = ("ix_listings_status_launched_id", "status, launched_at, id");
const OLD: crate::IndexDef = ("ix_listings_status_launched", "status, launched_at");

/// `replace_index` on PostgreSQL only.
async fn replace(manager: &SchemaManager<'_>, build: crate::IndexDef, drop: &str) -> Result<(), DbErr> {
    if manager.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    crate::replace_index(manager, "listings", build, drop).await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        replace(manager, NEW, OLD.0).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        replace(manager, OLD, NEW.0).await
    }
}
