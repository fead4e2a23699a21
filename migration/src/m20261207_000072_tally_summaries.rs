//! Each week's tally carries its listing's summary (slug, name, url, tagline, total votes, launch
//! week), so a page of the community-weekly board is read from `vote_tallies` alone instead of
//! joining its 20 tallies to their listings.
//!
//! Measured on a prototype at 100k demo listings (docs/BENCHMARKS.md, 66th sitting): PostgreSQL alone
//! read the week's first page 32 900–33 000 times a second against 21 300–22 800 for the join; SQLite
//! took 29–31 µs a page against 35–37. Built, through the server (67th sitting, three alternated
//! rounds): the first page 42 700–43 900 → 46 000–47 600 requests a second on SQLite, 18 800–22 700
//! → 25 700–26 800 on PostgreSQL; a vote's two writes 253–452 → 488–683 µs on SQLite.
//!
//! Kept by triggers on both stores, as `live` is (migration 20): a tally takes its listing's summary
//! when it is written, and an edit of any of the copied columns rewrites that listing's tallies. A
//! vote changes the total, so each vote rewrites its listing's tallies (3.8 on average at 100k, one a
//! week with votes, 21 at most). The status is not copied: the board reads live tallies only.
//!
//! SQLite's rank index (migration 27) carries the summary too, as the trending list's does (migration
//! 52), so a page is one range of the index. PostgreSQL keeps the index as it is: an index-only scan
//! there depends on the visibility map, and every vote clears it for its tallies' pages.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The copied columns, in `listings` and `vote_tallies` alike.
const COPIED: [&str; 6] = ["slug", "name", "url", "tagline", "votes_count", "launch_week"];

/// SQLite's rank index (migration 27) and the one that replaces it, carrying the summary (SQLite
/// cannot rename an index).
const RANK: &str = "ix_vote_tallies_week_live_rank";
const CARDS: &str = "ix_vote_tallies_week_live_cards";
const RANK_COLUMNS: &str = "week_start, live, votes DESC, listing_id";

/// `SET a = {from}.a, …` for each copied column.
fn copy_from(from: &str) -> String {
    COPIED.iter().map(|c| format!("{c} = {from}.{c}")).collect::<Vec<_>>().join(", ")
}

/// A condition true when any copied column of `listings` differs between `OLD` and `NEW`.
fn edited() -> String {
    COPIED.iter().map(|c| format!("OLD.{c} IS DISTINCT FROM NEW.{c}")).collect::<Vec<_>>().join(" OR ")
}

/// SQLite: the same (`IS NOT` is its null-safe inequality).
fn edited_sqlite() -> String {
    COPIED.iter().map(|c| format!("OLD.{c} IS NOT NEW.{c}")).collect::<Vec<_>>().join(" OR ")
}

/// The SQLite trigger that sets a new tally's `live` and summary from its listing (replacing migration
/// 20's, which set `live` alone). One aggregate row whether the listing is there or not, so a tally
/// without its listing is left to the foreign key to refuse, as before.
const SQLITE_WRITTEN: &str = "CREATE TRIGGER tally_live_written AFTER INSERT ON vote_tallies BEGIN \
     UPDATE vote_tallies SET (live, slug, name, url, tagline, votes_count, launch_week) = \
     (SELECT COALESCE(MAX(l.status = 'live'), 0), COALESCE(MAX(l.slug), ''), COALESCE(MAX(l.name), ''), \
     COALESCE(MAX(l.url), ''), COALESCE(MAX(l.tagline), ''), COALESCE(MAX(l.votes_count), 0), MAX(l.launch_week) \
     FROM listings l WHERE l.id = NEW.listing_id) \
     WHERE week_start = NEW.week_start AND listing_id = NEW.listing_id; END";

/// Migration 20's SQLite trigger, for `down`.
const SQLITE_WRITTEN_BEFORE: &str = "CREATE TRIGGER tally_live_written AFTER INSERT ON vote_tallies BEGIN \
     UPDATE vote_tallies SET live = COALESCE((SELECT status = 'live' FROM listings WHERE id = NEW.listing_id), 0) \
     WHERE week_start = NEW.week_start AND listing_id = NEW.listing_id; END";

/// PostgreSQL's function behind `tally_live_written` (BEFORE INSERT), now setting the summary too.
const POSTGRES_WRITTEN: &str = "CREATE OR REPLACE FUNCTION tally_live_on_write() RETURNS trigger AS $$ BEGIN \
     SELECT l.status = 'live', l.slug, l.name, l.url, l.tagline, l.votes_count, l.launch_week \
     INTO NEW.live, NEW.slug, NEW.name, NEW.url, NEW.tagline, NEW.votes_count, NEW.launch_week \
     FROM listings l WHERE l.id = NEW.listing_id; \
     NEW.live := COALESCE(NEW.live, FALSE); NEW.slug := COALESCE(NEW.slug, ''); NEW.name := COALESCE(NEW.name, ''); \
     NEW.url := COALESCE(NEW.url, ''); NEW.tagline := COALESCE(NEW.tagline, ''); \
     NEW.votes_count := COALESCE(NEW.votes_count, 0); \
     RETURN NEW; END $$ LANGUAGE plpgsql";

/// Migration 20's function, for `down`.
const POSTGRES_WRITTEN_BEFORE: &str = "CREATE OR REPLACE FUNCTION tally_live_on_write() RETURNS trigger AS $$ BEGIN \
     NEW.live := COALESCE((SELECT status = 'live' FROM listings WHERE id = NEW.listing_id), FALSE); \
     RETURN NEW; END $$ LANGUAGE plpgsql";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column an ALTER: SQLite takes no more.
        let text = |name: &str| ColumnDef::new(Alias::new(name)).string().not_null().default("").to_owned();
        for column in [
            text("slug"),
            text("name"),
            text("url"),
            text("tagline"),
            ColumnDef::new(Alias::new("votes_count")).big_integer().not_null().default(0).to_owned(),
            ColumnDef::new(Alias::new("launch_week")).date().null().to_owned(),
        ] {
            let mut column = column;
            manager
                .alter_table(Table::alter().table(Alias::new("vote_tallies")).add_column(&mut column).to_owned())
                .await?;
        }
        let backfill =
            format!("UPDATE vote_tallies SET {} FROM listings l WHERE l.id = vote_tallies.listing_id", copy_from("l"));
        let statements: Vec<String> = match manager.get_database_backend() {
            DbBackend::Postgres => vec![
                backfill,
                POSTGRES_WRITTEN.into(),
                format!(
                    "CREATE FUNCTION tally_summary_of_listing() RETURNS trigger AS $$ BEGIN \
                     UPDATE vote_tallies SET {} WHERE listing_id = NEW.id; RETURN NEW; END $$ LANGUAGE plpgsql",
                    copy_from("NEW")
                ),
                format!(
                    "CREATE TRIGGER tally_summary_edited AFTER UPDATE OF {} ON listings FOR EACH ROW \
                     WHEN ({}) EXECUTE FUNCTION tally_summary_of_listing()",
                    COPIED.join(", "),
                    edited()
                ),
            ],
            _ => vec![
                backfill,
                "DROP TRIGGER tally_live_written".into(),
                SQLITE_WRITTEN.into(),
                format!(
                    "CREATE TRIGGER tally_summary_edited AFTER UPDATE OF {} ON listings WHEN {} BEGIN \
                     UPDATE vote_tallies SET {} WHERE listing_id = NEW.id; END",
                    COPIED.join(", "),
                    edited_sqlite(),
                    copy_from("NEW")
                ),
                // The index a page is read from carries what the page shows.
                format!("CREATE INDEX {CARDS} ON vote_tallies ({RANK_COLUMNS}, {})", COPIED.join(", ")),
                format!("DROP INDEX {RANK}"),
            ],
        };
        crate::execute_all(manager, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements: Vec<String> = match manager.get_database_backend() {
            DbBackend::Postgres => vec![
                "DROP TRIGGER IF EXISTS tally_summary_edited ON listings".into(),
                "DROP FUNCTION IF EXISTS tally_summary_of_listing()".into(),
                POSTGRES_WRITTEN_BEFORE.into(),
            ],
            _ => vec![
                "DROP TRIGGER IF EXISTS tally_summary_edited".into(),
                "DROP TRIGGER tally_live_written".into(),
                SQLITE_WRITTEN_BEFORE.into(),
                format!("CREATE INDEX {RANK} ON vote_tallies ({RANK_COLUMNS})"),
                format!("DROP INDEX IF EXISTS {CARDS}"),
            ],
        };
        crate::execute_all(manager, &statements).await?;
        for column in COPIED {
            manager
                .alter_table(
                    Table::alter().table(Alias::new("vote_tallies")).drop_column(Alias::new(column)).to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
