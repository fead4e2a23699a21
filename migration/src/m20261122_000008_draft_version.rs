//! Drafts are written by two hands — the user's edits and the background drafter — so each save names
//! the version it read and is refused when another save came first (optimistic concurrency). Invites
//! get a unique (draft, email) pair so one address is invited once.

use crate::m20261122_000001_initial::index;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Alias::new("drafts"))
                    .add_column(ColumnDef::new(Alias::new("version")).big_integer().not_null().default(0))
                    .to_owned(),
            )
            .await?;
        let mut unique = index("draft_invites", "draft_email", &["draft_id", "email"]);
        manager.create_index(unique.unique().to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop().name("ix_draft_invites_draft_email").table(Alias::new("draft_invites")).to_owned(),
            )
            .await?;
        manager
            .alter_table(Table::alter().table(Alias::new("drafts")).drop_column(Alias::new("version")).to_owned())
            .await
    }
}
