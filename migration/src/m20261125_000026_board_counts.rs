//! How many listings each all-time board ranks — live listings with a positive votes count, billboard
//! money, Domain Rating or monthly revenue — kept in `board_counts` (one row per ranking column) by
//! triggers on `listings`, so a board's total is one row instead of a count of up to 10 001 listings
//! on every read. The update trigger fires only when a listing enters or leaves a board (its first vote,
//! a go-live, a hiding …), not on every vote, so votes do not queue on the board's row.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The ranking columns, as `ListingRepository::ranked` names them.
const METRICS: [&str; 4] = ["votes_count", "billboard_cents", "domain_rating", "revenue_monthly_cents"];

/// Whether the row `row` (`NEW` or `OLD`) is on the board of `metric`, as SQL.
fn on_board(row: &str, metric: &str) -> String {
    format!("({row}.status = 'live' AND COALESCE({row}.{metric}, 0) > 0)")
}

/// `+1`/`-1` per board the change moves the row onto or off: one CASE over the metric of each row.
fn delta(new: Option<&str>, old: Option<&str>) -> String {
    let flag = |row: Option<&str>, m: &str| match row {
        Some(r) => format!("CASE WHEN {} THEN 1 ELSE 0 END", on_board(r, m)),
        None => "0".to_owned(),
    };
    let arms: Vec<String> =
        METRICS.iter().map(|m| format!("WHEN '{m}' THEN ({}) - ({})", flag(new, m), flag(old, m))).collect();
    format!("CASE metric {} ELSE 0 END", arms.join(" "))
}

/// True when the update moves the row onto or off at least one board.
fn moves(old: &str, new: &str) -> String {
    METRICS.iter().map(|m| format!("{} <> {}", on_board(old, m), on_board(new, m))).collect::<Vec<_>>().join(" OR ")
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::create_kept_counts(manager, "board_counts", ColumnDef::new(Alias::new("metric")).string().to_owned())
            .await?;
        let update = |d: String| format!("UPDATE board_counts SET listings = listings + ({d}) WHERE ({d}) <> 0");
        let statements: Vec<String> = match manager.get_database_backend() {
            DbBackend::Postgres => vec![
                format!(
                    "CREATE FUNCTION board_counts_follow() RETURNS trigger AS $$ BEGIN \
                     IF TG_OP = 'INSERT' THEN {}; RETURN NEW; END IF; \
                     IF TG_OP = 'DELETE' THEN {}; RETURN OLD; END IF; \
                     {}; RETURN NEW; END $$ LANGUAGE plpgsql",
                    update(delta(Some("NEW"), None)),
                    update(delta(None, Some("OLD"))),
                    update(delta(Some("NEW"), Some("OLD"))),
                ),
                "CREATE TRIGGER board_counts_written AFTER INSERT OR DELETE ON listings \
                 FOR EACH ROW EXECUTE FUNCTION board_counts_follow()"
                    .to_owned(),
                format!(
                    "CREATE TRIGGER board_counts_moved AFTER UPDATE OF status, {} ON listings \
                     FOR EACH ROW WHEN ({}) EXECUTE FUNCTION board_counts_follow()",
                    METRICS.join(", "),
                    moves("OLD", "NEW")
                ),
            ],
            _ => vec![
                format!(
                    "CREATE TRIGGER board_counts_added AFTER INSERT ON listings WHEN NEW.status = 'live' BEGIN {}; END",
                    update(delta(Some("NEW"), None))
                ),
                format!(
                    "CREATE TRIGGER board_counts_deleted AFTER DELETE ON listings WHEN OLD.status = 'live' BEGIN {}; END",
                    update(delta(None, Some("OLD")))
                ),
                format!(
                    "CREATE TRIGGER board_counts_moved AFTER UPDATE OF status, {} ON listings WHEN {} BEGIN {}; END",
                    METRICS.join(", "),
                    moves("OLD", "NEW"),
                    update(delta(Some("NEW"), Some("OLD")))
                ),
            ],
        };
        crate::execute_all(manager, &statements).await?;
        let db = manager.get_connection();
        for m in METRICS {
            db.execute_unprepared(&format!(
                "INSERT INTO board_counts (metric, listings) SELECT '{m}', COUNT(*) FROM listings l WHERE {}",
                on_board("l", m)
            ))
            .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_kept_counts(manager, "board_counts", "listings").await
    }
}
