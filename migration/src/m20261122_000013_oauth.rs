//! The OAuth 2.1 authorization server's records: dynamically registered clients, authorization codes
//! (hashes, single use), refresh tokens (hashes, rotated, grouped in families so a replay revokes the
//! lot) and the server's own secrets (the access-token signing key, shared by every instance).
//! Times are Unix seconds: compared in Rust, the same on both databases.

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
                    .table(Alias::new("oauth_clients"))
                    .if_not_exists()
                    .col(col("client_id").string_len(64).not_null().primary_key())
                    .col(col("client_name").text().not_null())
                    .col(col("redirect_uris").text().not_null())
                    .col(col("client_uri").text().null())
                    .col(col("created_at").big_integer().not_null())
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("oauth_codes"))
                    .if_not_exists()
                    .col(col("code_hash").string_len(64).not_null().primary_key())
                    .col(col("client_id").text().not_null())
                    .col(col("user_id").big_integer().not_null())
                    .col(col("redirect_uri").text().not_null())
                    .col(col("code_challenge").string_len(64).not_null())
                    .col(col("scopes").text().not_null())
                    .col(col("resource").text().not_null())
                    .col(col("expires_at").big_integer().not_null())
                    .col(col("used_at").big_integer().null())
                    .foreign_key(&mut fk("oauth_codes", "user_id", "users", ForeignKeyAction::Cascade))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("oauth_refresh_tokens"))
                    .if_not_exists()
                    .col(col("token_hash").string_len(64).not_null().primary_key())
                    .col(col("family").string_len(64).not_null())
                    .col(col("client_id").text().not_null())
                    .col(col("user_id").big_integer().not_null())
                    .col(col("scopes").text().not_null())
                    .col(col("resource").text().not_null())
                    .col(col("created_at").big_integer().not_null())
                    .col(col("expires_at").big_integer().not_null())
                    .col(col("used_at").big_integer().null())
                    .col(col("revoked_at").big_integer().null())
                    .foreign_key(&mut fk("oauth_refresh_tokens", "user_id", "users", ForeignKeyAction::Cascade))
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("oauth_refresh_tokens", "family", &["family"])).await?;
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("server_secrets"))
                    .if_not_exists()
                    .col(col("name").string_len(64).not_null().primary_key())
                    .col(col("secret").text().not_null())
                    .col(col("created_at").big_integer().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for t in ["server_secrets", "oauth_refresh_tokens", "oauth_codes", "oauth_clients"] {
            manager.drop_table(Table::drop().table(Alias::new(t)).if_exists().to_owned()).await?;
        }
        Ok(())
    }
}
