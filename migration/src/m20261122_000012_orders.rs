//! What checkout needs beyond the first schema: the billing name, whether an order's VAT is final (it is
//! not until a billing country is known), and the payment gateways' event ids, kept so a replayed
//! webhook changes nothing.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let orders = || Table::alter().table(Alias::new("orders")).to_owned();
        let mut name = ColumnDef::new(Alias::new("billing_name")).text().null().to_owned();
        manager.alter_table(orders().add_column(&mut name).to_owned()).await?;
        let mut fin = ColumnDef::new(Alias::new("vat_final")).boolean().not_null().default(true).to_owned();
        manager.alter_table(orders().add_column(&mut fin).to_owned()).await?;
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("payment_events"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("gateway")).string().not_null())
                    .col(ColumnDef::new(Alias::new("event_id")).string().not_null())
                    .col(ColumnDef::new(Alias::new("received_at")).timestamp_with_time_zone().not_null())
                    .primary_key(Index::create().col(Alias::new("gateway")).col(Alias::new("event_id")))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("payment_events")).to_owned()).await?;
        for c in ["vat_final", "billing_name"] {
            manager
                .alter_table(Table::alter().table(Alias::new("orders")).drop_column(Alias::new(c)).to_owned())
                .await?;
        }
        Ok(())
    }
}
