//! The site's abuse defences and view counting: a vote's weight (half for an account younger than a
//! day) and the keyed hash of the address it came from (the per-address daily cap), and one mark per
//! listing, day and viewer so a repeat view the same day is not counted again.

use crate::m20261122_000001_initial::{fk, index};
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let votes = || Table::alter().table(Alias::new("votes")).to_owned();
        manager
            .alter_table(
                votes().add_column(ColumnDef::new(Alias::new("weight")).double().not_null().default(1.0)).to_owned(),
            )
            .await?;
        manager
            .alter_table(votes().add_column(ColumnDef::new(Alias::new("address_key")).string_len(64).null()).to_owned())
            .await?;
        manager.create_index(index("votes", "address_time", &["address_key", "created_at"])).await?;
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("listing_view_marks"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("listing_id")).big_integer().not_null())
                    .col(ColumnDef::new(Alias::new("day")).date().not_null())
                    .col(ColumnDef::new(Alias::new("viewer_key")).string_len(64).not_null())
                    .primary_key(
                        Index::create()
                            .col(Alias::new("listing_id"))
                            .col(Alias::new("day"))
                            .col(Alias::new("viewer_key")),
                    )
                    .foreign_key(&mut fk("listing_view_marks", "listing_id", "listings", ForeignKeyAction::Cascade))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("listing_view_marks")).to_owned()).await?;
        manager.drop_index(Index::drop().name("ix_votes_address_time").table(Alias::new("votes")).to_owned()).await?;
        for c in ["address_key", "weight"] {
            manager
                .alter_table(Table::alter().table(Alias::new("votes")).drop_column(Alias::new(c)).to_owned())
                .await?;
        }
        Ok(())
    }
}
