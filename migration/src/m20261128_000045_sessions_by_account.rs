//! Sessions by account, newest first: a sign-in keeps an account's newest sessions and ends the rest
//! (`domain::auth::MAX_SESSIONS_PER_ACCOUNT`), and "sign out everywhere" ends them all; both read an
//! account's sessions, which had no index (a scan of every session of every account).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &["CREATE INDEX ix_sessions_user_created ON sessions (user_id, created_at)"]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &["DROP INDEX IF EXISTS ix_sessions_user_created"]).await
    }
}
