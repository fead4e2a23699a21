//! Accounts: an email is one account whatever its letter case (`Ann@x.example` and `ann@x.example`
//! cannot both sign up). An expression index, the same SQL on SQLite and PostgreSQL.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("CREATE UNIQUE INDEX IF NOT EXISTS ux_users_email_lower ON users (lower(email))")
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.get_connection().execute_unprepared("DROP INDEX IF EXISTS ux_users_email_lower").await?;
        Ok(())
    }
}
