//! One counter shared by every instance, bumped on each change to public data. Each instance polls it
//! and drops its read cache when it moved, so a cached public read lives long on a quiet directory yet
//! shows another instance's change within a second (see docs/DECISIONS.md, "Read cache").

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("public_changes"))
                    .col(ColumnDef::new(Alias::new("id")).integer().not_null().primary_key())
                    .col(ColumnDef::new(Alias::new("counter")).big_integer().not_null().default(0))
                    .to_owned(),
            )
            .await?;
        let mut seed = Query::insert();
        seed.into_table(Alias::new("public_changes"))
            .columns([Alias::new("id"), Alias::new("counter")])
            .values([1.into(), 0i64.into()])
            .map_err(|e| DbErr::Custom(e.to_string()))?;
        manager.exec_stmt(seed).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Alias::new("public_changes")).to_owned()).await
    }
}
