//! An order the operator must look at (a payment whose amount or currency is not the order's, or money
//! received for an order that had expired): what is wrong, in words. Nothing is fulfilled for it.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Alias::new("orders"))
                    .add_column(ColumnDef::new(Alias::new("flag")).text().null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Alias::new("orders")).drop_column(Alias::new("flag")).to_owned()).await
    }
}
