//! Other words sites use for a category ("helpdesk" for Help Desk, "time tracker" for Time Tracking),
//! from the reference data: the extractive drafter matches them when a site says what it is.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Alias::new("categories"))
                    .add_column(ColumnDef::new(Alias::new("synonyms")).text().not_null().default("[]"))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table(Alias::new("categories")).drop_column(Alias::new("synonyms")).to_owned())
            .await
    }
}
