//! The largest trending rank a listing reached since its votes were last counted afresh, kept beside
//! the rank: an unvote subtracts its vote while the votes left keep a share of that peak, and counts
//! them afresh (setting the peak again) otherwise (`domain::listing::trending::take_vote`). Empty for
//! every listing at first: its first unvote counts afresh, as every unvote did before.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &["ALTER TABLE listings ADD COLUMN trending_peak DOUBLE PRECISION NULL"]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &["ALTER TABLE listings DROP COLUMN trending_peak"]).await
    }
}
