//! What each recent public change touched (`public_change_scopes`: the counter value and its scope),
//! so an instance that sees the shared counter move drops only the cached reads those changes touched
//! (a vote: that listing and the lists it moves) instead of every one. Only the newest thousand or so
//! are kept; an instance that fell further behind empties its cache as before.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("public_change_scopes"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("counter")).big_integer().not_null().primary_key())
                    .col(ColumnDef::new(Alias::new("scope")).string().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("public_change_scopes")).if_exists().to_owned()).await
    }
}
