//! Votes per listing per launch week, kept beside the votes themselves so the community-weekly board
//! and a week's launches read one indexed range instead of counting every vote of the week (about half
//! a million rows in the current week of the 100k-listing benchmark). Whatever records a vote adds 1 to
//! its week's tally in the same transaction; this migration fills the table from the votes already there.

use crate::m20261122_000001_initial::{fk, index};
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("vote_tallies"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("week_start")).date().not_null())
                    .col(ColumnDef::new(Alias::new("listing_id")).big_integer().not_null())
                    .col(ColumnDef::new(Alias::new("votes")).big_integer().not_null().default(0))
                    .primary_key(Index::create().col(Alias::new("week_start")).col(Alias::new("listing_id")))
                    .foreign_key(&mut fk("vote_tallies", "listing_id", "listings", ForeignKeyAction::Cascade))
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("vote_tallies", "week_votes", &["week_start", "votes"])).await?;
        manager.create_index(index("vote_tallies", "listing", &["listing_id"])).await?;
        // The Monday (UTC) on or before each vote.
        let monday = match manager.get_database_backend() {
            DbBackend::Postgres => "(date_trunc('week', created_at AT TIME ZONE 'UTC'))::date",
            _ => "date(created_at, '-6 days', 'weekday 1')",
        };
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "INSERT INTO vote_tallies (week_start, listing_id, votes) \
                 SELECT {monday}, listing_id, COUNT(*) FROM votes GROUP BY 1, 2"
            ))
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("vote_tallies")).if_exists().to_owned()).await
    }
}
