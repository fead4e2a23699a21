//! Counters that hold across requests and instances: failed sign-ins per account, address and pair
//! (domain::throttle). Keys are keyed hashes; times are Unix seconds (compared as numbers on both
//! databases).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("throttles"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("key")).string_len(64).not_null().primary_key())
                    .col(ColumnDef::new(Alias::new("count")).big_integer().not_null())
                    .col(ColumnDef::new(Alias::new("since")).big_integer().not_null())
                    .col(ColumnDef::new(Alias::new("locked_until")).big_integer().null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("throttles")).to_owned()).await
    }
}
