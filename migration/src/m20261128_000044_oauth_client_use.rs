//! When a dynamically registered OAuth client was first allowed by someone (`oauth_clients.used_at`,
//! set as its first authorization code is issued), so that clients nobody ever allowed can be
//! forgotten (`prune_unused_clients`, hourly): registration is open (RFC 7591, as MCP clients need),
//! and without this a script's registrations were kept for ever. Clients registered before this
//! migration count as used, so none of them is forgotten. The partial index holds only the unused.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(
            manager,
            &[
                "ALTER TABLE oauth_clients ADD COLUMN used_at BIGINT NULL",
                "UPDATE oauth_clients SET used_at = created_at",
                "CREATE INDEX ix_oauth_clients_unused ON oauth_clients (created_at) WHERE used_at IS NULL",
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(
            manager,
            &["DROP INDEX IF EXISTS ix_oauth_clients_unused", "ALTER TABLE oauth_clients DROP COLUMN used_at"],
        )
        .await
    }
}
