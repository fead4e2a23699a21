//! Browser sessions for the service's own pages (sign-in, account, API keys). The cookie carries a
//! random token; only its SHA-256 is stored, beside the session's CSRF token.

use crate::m20261122_000001_initial::{fk, index};
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let col = |n: &str| ColumnDef::new(Alias::new(n)).to_owned();
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("sessions"))
                    .if_not_exists()
                    .col(col("token_hash").string_len(64).not_null().primary_key())
                    .col(col("user_id").big_integer().not_null())
                    .col(col("csrf").string_len(64).not_null())
                    .col(col("created_at").timestamp_with_time_zone().not_null())
                    .col(col("expires_at").timestamp_with_time_zone().not_null())
                    .foreign_key(&mut fk("sessions", "user_id", "users", ForeignKeyAction::Cascade))
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("sessions", "expires", &["expires_at"])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("sessions")).if_exists().to_owned()).await
    }
}
