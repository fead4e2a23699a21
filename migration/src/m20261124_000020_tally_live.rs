//! Whether a week's tally belongs to a live listing, kept on the tally (`vote_tallies.live`) so the
//! community-weekly board counts and pages through one index (`week_start, live, votes`) instead of
//! looking up every voted listing's status (45 ms for the current week of the 100k benchmark). Kept
//! by triggers: a tally takes its listing's liveness when it is written, and a listing going live or
//! leaving live sets it on all of its tallies.

use crate::m20261122_000001_initial::index;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Sets `live` on the tallies of listing `id` from its status `status`.
fn follow(id: &str, status: &str) -> String {
    format!("UPDATE vote_tallies SET live = ({status} = 'live') WHERE listing_id = {id}")
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Alias::new("vote_tallies"))
                    .add_column(ColumnDef::new(Alias::new("live")).boolean().not_null().default(true))
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("vote_tallies", "week_live_votes", &["week_start", "live", "votes"])).await?;
        let db = manager.get_connection();
        let statements: Vec<String> = match manager.get_database_backend() {
            DbBackend::Postgres => vec![
                format!(
                    "CREATE FUNCTION tally_live_of_listing() RETURNS trigger AS $$ BEGIN \
                     IF (OLD.status = 'live') <> (NEW.status = 'live') THEN {}; END IF; RETURN NEW; \
                     END $$ LANGUAGE plpgsql",
                    follow("NEW.id", "NEW.status")
                ),
                "CREATE TRIGGER tally_live_status AFTER UPDATE OF status ON listings \
                 FOR EACH ROW EXECUTE FUNCTION tally_live_of_listing()"
                    .into(),
                "CREATE FUNCTION tally_live_on_write() RETURNS trigger AS $$ BEGIN \
                 NEW.live := COALESCE((SELECT status = 'live' FROM listings WHERE id = NEW.listing_id), FALSE); \
                 RETURN NEW; END $$ LANGUAGE plpgsql"
                    .into(),
                "CREATE TRIGGER tally_live_written BEFORE INSERT ON vote_tallies \
                 FOR EACH ROW EXECUTE FUNCTION tally_live_on_write()"
                    .into(),
            ],
            _ => vec![
                format!(
                    "CREATE TRIGGER tally_live_status AFTER UPDATE OF status ON listings \
                     WHEN (OLD.status = 'live') <> (NEW.status = 'live') BEGIN {}; END",
                    follow("NEW.id", "NEW.status")
                ),
                "CREATE TRIGGER tally_live_written AFTER INSERT ON vote_tallies BEGIN \
                 UPDATE vote_tallies SET live = COALESCE((SELECT status = 'live' FROM listings WHERE id = NEW.listing_id), 0) \
                 WHERE week_start = NEW.week_start AND listing_id = NEW.listing_id; END"
                    .into(),
            ],
        };
        crate::execute_all(manager, &statements).await?;
        db.execute_unprepared(
            "UPDATE vote_tallies SET live = COALESCE((SELECT l.status = 'live' FROM listings l \
             WHERE l.id = vote_tallies.listing_id), FALSE)",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let drops: &[&str] = match manager.get_database_backend() {
            DbBackend::Postgres => &[
                "DROP TRIGGER IF EXISTS tally_live_status ON listings",
                "DROP TRIGGER IF EXISTS tally_live_written ON vote_tallies",
                "DROP FUNCTION IF EXISTS tally_live_of_listing()",
                "DROP FUNCTION IF EXISTS tally_live_on_write()",
            ],
            _ => &["DROP TRIGGER IF EXISTS tally_live_status", "DROP TRIGGER IF EXISTS tally_live_written"],
        };
        crate::execute_all(manager, drops).await?;
        manager
            .drop_index(
                Index::drop().name("ix_vote_tallies_week_live_votes").table(Alias::new("vote_tallies")).to_owned(),
            )
            .await?;
        manager
            .alter_table(Table::alter().table(Alias::new("vote_tallies")).drop_column(Alias::new("live")).to_owned())
            .await
    }
}
