//! Password-reset links: the hash of each link emailed to an account's address, until it expires (an
//! hour) or is used. Used once: the reset deletes every link of its account.

use crate::m20261122_000001_initial::fk;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("password_resets"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("token_hash")).string_len(64).not_null().primary_key())
                    .col(ColumnDef::new(Alias::new("user_id")).big_integer().not_null())
                    .col(ColumnDef::new(Alias::new("expires_at")).big_integer().not_null())
                    .foreign_key(&mut fk("password_resets", "user_id", "users", ForeignKeyAction::Cascade))
                    .to_owned(),
            )
            .await?;
        crate::execute_all(manager, &["CREATE INDEX ix_password_resets_user ON password_resets (user_id)"]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("password_resets")).to_owned()).await
    }
}
