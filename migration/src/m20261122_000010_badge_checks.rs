//! The last look for our badge on a free listing's homepage: when, what was found, and what the check
//! saw, so the maker can read why their launch is still waiting. Plus the index the calendar duties use.

use crate::m20261122_000001_initial::index;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

const COLUMNS: [&str; 3] = ["badge_checked_at", "badge_found", "badge_detail"];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite adds one column per ALTER TABLE.
        let defs = [
            ColumnDef::new(Alias::new(COLUMNS[0])).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(Alias::new(COLUMNS[1])).text().null().to_owned(),
            ColumnDef::new(Alias::new(COLUMNS[2])).text().null().to_owned(),
        ];
        for mut def in defs {
            manager.alter_table(Table::alter().table(Alias::new("listings")).add_column(&mut def).to_owned()).await?;
        }
        // The calendar duties ask "which listings in this status have a week that began" every second.
        manager.create_index(index("listings", "status_week", &["status", "launch_week"])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name("ix_listings_status_week").table(Alias::new("listings")).to_owned())
            .await?;
        for c in COLUMNS {
            manager
                .alter_table(Table::alter().table(Alias::new("listings")).drop_column(Alias::new(c)).to_owned())
                .await?;
        }
        Ok(())
    }
}
