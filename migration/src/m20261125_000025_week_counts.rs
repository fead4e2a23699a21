//! How many listings each week's community board ranks (live listings with at least one vote cast in
//! the week), kept in `week_counts` by triggers on `vote_tallies`, so the board's total is one row
//! instead of a count of up to 10 001 tallies on every read (the count was most of the board's cost
//! uncached: perf, docs/BENCHMARKS.md). A tally is counted while `live AND votes > 0`; a vote, an
//! unvote, a go-live or a hiding (which sets `live` on the listing's tallies, migration 20) and a
//! deletion each move the count by the difference. (The SQLite triggers create a week's row with a
//! guarded plain INSERT, not `INSERT OR IGNORE`: a vote's tally is written by an upsert, and SQLite
//! lets the outer statement's conflict policy override the one inside a trigger — the IGNORE became
//! an abort on the second listing voted in a week, caught by the storage tests.)

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::create_kept_counts(manager, "week_counts", ColumnDef::new(Alias::new("week_start")).date().to_owned())
            .await?;
        let statements: Vec<&str> = match manager.get_database_backend() {
            DbBackend::Postgres => vec![
                "CREATE FUNCTION week_counts_follow() RETURNS trigger AS $$ BEGIN \
                 IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.live AND OLD.votes > 0 THEN \
                   UPDATE week_counts SET listings = listings - 1 WHERE week_start = OLD.week_start; \
                 END IF; \
                 IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.live AND NEW.votes > 0 THEN \
                   INSERT INTO week_counts (week_start, listings) VALUES (NEW.week_start, 1) \
                     ON CONFLICT (week_start) DO UPDATE SET listings = week_counts.listings + 1; \
                 END IF; \
                 IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; \
                 RETURN NEW; END $$ LANGUAGE plpgsql",
                "CREATE TRIGGER week_counts_written AFTER INSERT OR DELETE ON vote_tallies \
                 FOR EACH ROW EXECUTE FUNCTION week_counts_follow()",
                "CREATE TRIGGER week_counts_moved AFTER UPDATE OF live, votes, week_start ON vote_tallies \
                 FOR EACH ROW WHEN ((OLD.live AND OLD.votes > 0) IS DISTINCT FROM (NEW.live AND NEW.votes > 0) \
                 OR OLD.week_start <> NEW.week_start) EXECUTE FUNCTION week_counts_follow()",
            ],
            _ => vec![
                "CREATE TRIGGER week_counts_added AFTER INSERT ON vote_tallies \
                 WHEN NEW.live AND NEW.votes > 0 BEGIN \
                 INSERT INTO week_counts (week_start, listings) SELECT NEW.week_start, 0 \
                   WHERE NOT EXISTS (SELECT 1 FROM week_counts WHERE week_start = NEW.week_start); \
                 UPDATE week_counts SET listings = listings + 1 WHERE week_start = NEW.week_start; END",
                "CREATE TRIGGER week_counts_deleted AFTER DELETE ON vote_tallies \
                 WHEN OLD.live AND OLD.votes > 0 BEGIN \
                 UPDATE week_counts SET listings = listings - 1 WHERE week_start = OLD.week_start; END",
                "CREATE TRIGGER week_counts_moved AFTER UPDATE OF live, votes, week_start ON vote_tallies \
                 WHEN (OLD.live AND OLD.votes > 0) <> (NEW.live AND NEW.votes > 0) \
                 OR OLD.week_start <> NEW.week_start BEGIN \
                 UPDATE week_counts SET listings = listings - 1 \
                   WHERE week_start = OLD.week_start AND OLD.live AND OLD.votes > 0; \
                 INSERT INTO week_counts (week_start, listings) SELECT NEW.week_start, 0 \
                   WHERE NOT EXISTS (SELECT 1 FROM week_counts WHERE week_start = NEW.week_start); \
                 UPDATE week_counts SET listings = listings + 1 \
                   WHERE week_start = NEW.week_start AND NEW.live AND NEW.votes > 0; END",
            ],
        };
        crate::execute_all(manager, &statements).await?;
        manager
            .get_connection()
            .execute_unprepared(
                "INSERT INTO week_counts (week_start, listings) SELECT week_start, COUNT(*) FROM vote_tallies \
                 WHERE live AND votes > 0 GROUP BY week_start",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_kept_counts(manager, "week_counts", "vote_tallies").await
    }
}
