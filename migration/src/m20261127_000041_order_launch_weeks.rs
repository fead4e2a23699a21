//! The paid launch week an order line takes a place in, as a column: a checkout holds its week's place
//! until it is paid or expires, so creating one counts the unpaid launches of the week
//! (`paid_places_held`). The week was only inside the line's JSON options; lines stored before are
//! filled from there.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let backfill = match manager.get_database_backend() {
            DbBackend::Postgres => {
                "UPDATE order_lines SET launch_week = CAST(options::json->>'week' AS DATE) \
                 WHERE options::json->>'kind' = 'launch' AND options::json->>'week' IS NOT NULL"
            }
            _ => {
                "UPDATE order_lines SET launch_week = json_extract(options, '$.week') \
                 WHERE json_extract(options, '$.kind') = 'launch' AND json_extract(options, '$.week') IS NOT NULL"
            }
        };
        crate::execute_all(
            manager,
            &[
                "ALTER TABLE order_lines ADD COLUMN launch_week DATE NULL",
                backfill,
                "CREATE INDEX idx_order_lines_launch_week ON order_lines (launch_week) WHERE launch_week IS NOT NULL",
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(
            manager,
            &["DROP INDEX IF EXISTS idx_order_lines_launch_week", "ALTER TABLE order_lines DROP COLUMN launch_week"],
        )
        .await
    }
}
