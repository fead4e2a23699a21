//! Idempotency records: the first response to (caller, operation, Idempotency-Key), kept so a retry
//! is answered with it instead of running the operation again. In the database, so the guarantee holds
//! across instances and restarts.

use crate::m20261122_000001_initial::index;
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
                    .table(Alias::new("idempotency_keys"))
                    .if_not_exists()
                    .col(col("scope").string_len(200).not_null())
                    .col(col("key").string_len(255).not_null())
                    .col(col("fingerprint").string_len(64).not_null())
                    .col(col("state").string_len(16).not_null())
                    .col(col("response").text().null())
                    .col(col("started_at").timestamp_with_time_zone().not_null())
                    .col(col("created_at").timestamp_with_time_zone().not_null())
                    .primary_key(Index::create().col(Alias::new("scope")).col(Alias::new("key")))
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("idempotency_keys", "created", &["created_at"])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("idempotency_keys")).if_exists().to_owned()).await
    }
}
