//! The listings by votes and by followers read in the order of an index on PostgreSQL:
//! `(status, votes_count, id)` and `(status, follows_count, id)` in place of `(status, votes_count)` and
//! `(status, follows_count)`. A search orders `votes_count DESC, id DESC` (or `follows_count DESC, id
//! DESC`), and listings of one count share it: PostgreSQL read the whole run of the top count and
//! sorted it by id for every page. Upcoming launches all have the same counts (none), so a search of
//! them by votes sorted every scheduled listing that matched: at 100k demo listings `status=upcoming
//! &sort=votes` took 32 ms, and with a word on most listings (`q=a`) 180 ms, walking 12 000 scheduled
//! listings and probing each one's text where a walk in the index's order stops at the page's twentieth
//! match (bench/searches.py, docs/BENCHMARKS.md). The boards read `(status, votes_count DESC, id)`
//! (migration 56), whose ties go the other way. SQLite's indexes already end in the rowid, the
//! listing's id, so it walks these orders as they are; its schema is left as it is.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

const NEW: [crate::IndexDef; 2] = [
    ("ix_listings_status_votes_id", "status, votes_count, id"),
    ("ix_listings_status_follows_id", "status, follows_count, id"),
];
const OLD: [crate::IndexDef; 2] =
    [("ix_listings_status_votes", "status, votes_count"), ("ix_listings_status_follows", "status, follows_count")];

/// `replace_index` of each pair on PostgreSQL only.
async fn replace(
    manager: &SchemaManager<'_>,
    build: [crate::IndexDef; 2],
    drop: [crate::IndexDef; 2],
) -> Result<(), DbErr> {
    if manager.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    for (b, d) in build.into_iter().zip(drop) {
        crate::replace_index(manager, "listings", b, d.0).await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        replace(manager, NEW, OLD).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        replace(manager, OLD, NEW).await
    }
}
