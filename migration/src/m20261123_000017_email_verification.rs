//! Email verification: when an account proved it receives mail at its address, and the links that prove
//! it (hashes, single use, expiring). Accounts made before this migration are taken as verified (their
//! owners were the operator's or the demo's).

use crate::m20261122_000001_initial::fk;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Alias::new("users"))
                    .add_column(ColumnDef::new(Alias::new("email_verified_at")).timestamp_with_time_zone().null())
                    .to_owned(),
            )
            .await?;
        manager.get_connection().execute_unprepared("UPDATE users SET email_verified_at = created_at").await?;
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("email_verifications"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("token_hash")).string_len(64).not_null().primary_key())
                    .col(ColumnDef::new(Alias::new("user_id")).big_integer().not_null())
                    .col(ColumnDef::new(Alias::new("expires_at")).big_integer().not_null())
                    .foreign_key(&mut fk("email_verifications", "user_id", "users", ForeignKeyAction::Cascade))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("email_verifications")).to_owned()).await?;
        manager
            .alter_table(
                Table::alter().table(Alias::new("users")).drop_column(Alias::new("email_verified_at")).to_owned(),
            )
            .await
    }
}
