//! Claims keep their public token (what a DNS record, meta tag or file must carry) so the claimant can
//! read the instructions again; an email claim's link token stays stored only as its hash, looked up by
//! the link.

use crate::m20261122_000001_initial::index;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut token = ColumnDef::new(Alias::new("token")).text().null().to_owned();
        manager.alter_table(Table::alter().table(Alias::new("claims")).add_column(&mut token).to_owned()).await?;
        manager.create_index(index("claims", "token_hash", &["token_hash"])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name("ix_claims_token_hash").table(Alias::new("claims")).to_owned()).await?;
        manager
            .alter_table(Table::alter().table(Alias::new("claims")).drop_column(Alias::new("token")).to_owned())
            .await
    }
}
