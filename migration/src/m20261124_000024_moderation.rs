//! Moderation. A hidden listing's `status` is `hidden` (so every public read, which asks for `live`,
//! leaves it out, and the kept counts' triggers count it out) and `held_status` keeps the status a
//! restore brings back; `listing_holds` says why, since when and who. `users.suspended_at` and
//! `suspended_reason` mark a suspended account; `held_votes` keeps its votes while they do not count.
//! `reports` are people's reports (one per person and listing), `blocked_domains` the domains that
//! cannot be submitted or claimed, `audit_log` every action of the site team.

use crate::m20261122_000001_initial::{fk, index};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

const CASCADE: ForeignKeyAction = ForeignKeyAction::Cascade;

fn table(name: &'static str) -> TableCreateStatement {
    Table::create().table(Alias::new(name)).if_not_exists().take()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let alter = |t: &'static str, c: ColumnDef| Table::alter().table(Alias::new(t)).add_column(c).take();
        manager.alter_table(alter("listings", string_len_null("held_status", 20))).await?;
        manager.alter_table(alter("users", timestamp_with_time_zone_null("suspended_at"))).await?;
        manager.alter_table(alter("users", text_null("suspended_reason"))).await?;
        manager
            .create_table(
                table("listing_holds")
                    .col(big_integer("listing_id").primary_key())
                    .col(text("reason"))
                    .col(string_len("cause", 20))
                    .col(timestamp_with_time_zone("hidden_at"))
                    .col(text("hidden_by"))
                    .foreign_key(&mut fk("listing_holds", "listing_id", "listings", CASCADE))
                    .take(),
            )
            .await?;
        manager
            .create_table(
                table("held_votes")
                    .col(big_integer("listing_id"))
                    .col(big_integer("user_id"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(double("weight"))
                    .col(string_len_null("address_key", 64))
                    .primary_key(Index::create().col(Alias::new("listing_id")).col(Alias::new("user_id")))
                    .foreign_key(&mut fk("held_votes", "listing_id", "listings", CASCADE))
                    .foreign_key(&mut fk("held_votes", "user_id", "users", CASCADE))
                    .take(),
            )
            .await?;
        manager.create_index(index("held_votes", "user", &["user_id"])).await?;
        manager
            .create_table(
                table("reports")
                    .col(big_pk_auto("id"))
                    .col(big_integer("listing_id"))
                    .col(big_integer_null("reporter_id"))
                    .col(string_len("reason", 20))
                    .col(text("note"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(timestamp_with_time_zone_null("closed_at"))
                    .foreign_key(&mut fk("reports", "listing_id", "listings", CASCADE))
                    .foreign_key(&mut fk("reports", "reporter_id", "users", ForeignKeyAction::SetNull))
                    .take(),
            )
            .await?;
        let mut once = index("reports", "listing_reporter", &["listing_id", "reporter_id"]);
        manager.create_index(once.unique().take()).await?;
        manager.create_index(index("reports", "open", &["closed_at", "created_at"])).await?;
        manager
            .create_table(
                table("blocked_domains")
                    .col(string_len("domain", 253).primary_key())
                    .col(text("reason"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(text("created_by"))
                    .take(),
            )
            .await?;
        manager
            .create_table(
                table("audit_log")
                    .col(big_pk_auto("id"))
                    .col(timestamp_with_time_zone("at"))
                    .col(text("actor"))
                    .col(string_len("action", 40))
                    .col(text("target"))
                    .col(text("reason"))
                    .take(),
            )
            .await?;
        manager.create_index(index("audit_log", "at", &["at"])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for t in ["audit_log", "blocked_domains", "reports", "held_votes", "listing_holds"] {
            manager.drop_table(Table::drop().table(Alias::new(t)).if_exists().to_owned()).await?;
        }
        let drop =
            |t: &'static str, c: &'static str| Table::alter().table(Alias::new(t)).drop_column(Alias::new(c)).take();
        manager.alter_table(drop("users", "suspended_reason")).await?;
        manager.alter_table(drop("users", "suspended_at")).await?;
        manager.alter_table(drop("listings", "held_status")).await
    }
}
