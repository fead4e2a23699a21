//! Indexes a bulk load dropped to build afterwards (`deferred_indexes`: name and the statement that
//! creates it). Loading a million listings into indexed tables rewrites the random-order indexes on
//! every batch; building each index once, sorted, at the end is many times faster. The statements are
//! kept in the database itself, so a load that is interrupted leaves them here and the next start
//! builds them (see `adapters_storage::db::migrate`).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("deferred_indexes"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("name")).string().not_null().primary_key())
                    .col(ColumnDef::new(Alias::new("definition")).text().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("deferred_indexes")).if_exists().to_owned()).await
    }
}
