//! The live listings of each founder, kept in `founder_live_listings` (a row per founder who has had
//! one), and how many founders have at least one, kept in `founder_counts` (one row, status `live`),
//! by triggers. The founders list shows only founders behind a live listing: its page looked through
//! each founder's links for a live listing as it walked `(name, id)`, and its total counted such
//! founders up to the cap, 10 001 of those looks (18–25 ms on SQLite, 65–101 ms on PostgreSQL at 100k
//! demo listings, uncached). The page now probes one row per founder, and an unfiltered list's total
//! is one row.
//!
//! Not a column of `founders`: every update of a founder's row refreshes the kept details of each of
//! their listings (migration 36), which a go-live would then have done for nothing.
//!
//! A founder is linked to a listing once (the link's key), so a founder's count is the live listings
//! among their links: a link added to or taken from a live listing moves it by one, and a listing
//! going live, leaving live or deleted while live moves each of its founders'. A founder's count
//! crossing zero moves `founder_counts` (triggers on `founder_live_listings`), as does a founder's row
//! deleted with live listings (a founder deleted takes theirs along). This migration fills both from
//! the links there.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Adds one live listing to each founder `SELECT`ed (`founder_id`), creating their rows.
fn add_to(founders: &str) -> String {
    format!(
        "INSERT INTO founder_live_listings (founder_id, listings) SELECT founder_id, 1 FROM ({founders}) f \
         WHERE true ON CONFLICT (founder_id) DO UPDATE SET listings = founder_live_listings.listings + 1"
    )
}

/// Takes one live listing from each founder `SELECT`ed.
fn take_from(founders: &str) -> String {
    format!("UPDATE founder_live_listings SET listings = listings - 1 WHERE founder_id IN ({founders})")
}

/// The founders of listing `id`.
fn of_listing(id: &str) -> String {
    format!("SELECT lf.founder_id FROM listing_founders lf WHERE lf.listing_id = {id}")
}

/// Moves `founder_counts` by `delta`.
fn behind(delta: &str) -> String {
    format!("UPDATE founder_counts SET founders = founders {delta} WHERE status = 'live'")
}

const DROPS_POSTGRES: &[&str] = &[
    "DROP TRIGGER IF EXISTS founder_count_link ON listing_founders",
    "DROP TRIGGER IF EXISTS founder_count_status ON listings",
    "DROP TRIGGER IF EXISTS founder_count_deleted ON listings",
    "DROP TRIGGER IF EXISTS founder_live_listings_dropped ON founders",
    "DROP FUNCTION IF EXISTS founder_count_of_link()",
    "DROP FUNCTION IF EXISTS founder_count_of_listing()",
    "DROP FUNCTION IF EXISTS founder_live_listings_drop()",
];

const DROPS_SQLITE: &[&str] = &[
    "DROP TRIGGER IF EXISTS founder_count_added",
    "DROP TRIGGER IF EXISTS founder_count_taken",
    "DROP TRIGGER IF EXISTS founder_count_went_live",
    "DROP TRIGGER IF EXISTS founder_count_left_live",
    "DROP TRIGGER IF EXISTS founder_count_deleted",
    "DROP TRIGGER IF EXISTS founder_live_listings_dropped",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let big = |name: &str| ColumnDef::new(Alias::new(name)).big_integer().not_null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("founder_live_listings"))
                    .if_not_exists()
                    .col(big("founder_id").primary_key())
                    .col(big("listings").default(0))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("founder_counts"))
                    .if_not_exists()
                    .col(ColumnDef::new(Alias::new("status")).string().not_null().primary_key())
                    .col(big("founders").default(0))
                    .to_owned(),
            )
            .await?;
        let backend = manager.get_database_backend();
        let mut statements: Vec<String> =
            vec!["INSERT INTO founder_counts (status, founders) VALUES ('live', 0)".into()];
        let one = |id: &str| format!("SELECT {id} AS founder_id");
        match backend {
            DbBackend::Postgres => statements.extend([
                format!(
                    "CREATE FUNCTION founder_counts_follow() RETURNS trigger AS $$ BEGIN \
                     IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.listings > 0 THEN {}; END IF; \
                     IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.listings > 0 THEN {}; END IF; \
                     RETURN NULL; END $$ LANGUAGE plpgsql",
                    behind("- 1"),
                    behind("+ 1"),
                ),
                "CREATE TRIGGER founder_counts_written AFTER INSERT OR DELETE ON founder_live_listings \
                 FOR EACH ROW EXECUTE FUNCTION founder_counts_follow()"
                    .into(),
                "CREATE TRIGGER founder_counts_moved AFTER UPDATE OF listings ON founder_live_listings FOR EACH ROW \
                 WHEN ((OLD.listings > 0) <> (NEW.listings > 0)) EXECUTE FUNCTION founder_counts_follow()"
                    .into(),
                "CREATE FUNCTION founder_live_listings_drop() RETURNS trigger AS $$ BEGIN \
                 DELETE FROM founder_live_listings WHERE founder_id = OLD.id; RETURN NULL; END $$ LANGUAGE plpgsql"
                    .into(),
                "CREATE TRIGGER founder_live_listings_dropped AFTER DELETE ON founders \
                 FOR EACH ROW EXECUTE FUNCTION founder_live_listings_drop()"
                    .into(),
            ]),
            _ => {
                statements.extend([
                    format!(
                        "CREATE TRIGGER founder_counts_added AFTER INSERT ON founder_live_listings \
                         WHEN NEW.listings > 0 BEGIN {}; END",
                        behind("+ 1")
                    ),
                    format!(
                        "CREATE TRIGGER founder_counts_deleted AFTER DELETE ON founder_live_listings \
                         WHEN OLD.listings > 0 BEGIN {}; END",
                        behind("- 1")
                    ),
                    "CREATE TRIGGER founder_counts_moved AFTER UPDATE OF listings ON founder_live_listings \
                     WHEN (OLD.listings > 0) <> (NEW.listings > 0) BEGIN UPDATE founder_counts SET founders = \
                     founders + (CASE WHEN NEW.listings > 0 THEN 1 ELSE -1 END) WHERE status = 'live'; END"
                        .into(),
                    "CREATE TRIGGER founder_live_listings_dropped AFTER DELETE ON founders BEGIN \
                     DELETE FROM founder_live_listings WHERE founder_id = OLD.id; END"
                        .into(),
                ]);
            }
        }
        statements.extend(crate::live_link_moves(
            backend,
            "founder_count",
            "listing_founders",
            "AFTER",
            &add_to(&one("NEW.founder_id")),
            &take_from(&one("OLD.founder_id")),
        ));
        statements.extend(crate::live_listing_moves(
            backend,
            "founder_count",
            &take_from(&of_listing("OLD.id")),
            &add_to(&of_listing("NEW.id")),
        ));
        // Filled with the triggers in place: each founder's row counts in `founder_counts` as it goes in.
        statements.push(
            "INSERT INTO founder_live_listings (founder_id, listings) SELECT lf.founder_id, COUNT(*) \
             FROM listing_founders lf JOIN listings l ON l.id = lf.listing_id WHERE l.status = 'live' \
             GROUP BY lf.founder_id"
                .into(),
        );
        crate::execute_all(manager, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, DROPS_POSTGRES).await?;
        crate::execute_on(manager, DbBackend::Sqlite, DROPS_SQLITE).await?;
        crate::drop_kept_counts(manager, "founder_counts", "founder_live_listings").await?;
        manager.drop_table(Table::drop().table(Alias::new("founder_live_listings")).if_exists().to_owned()).await
    }
}
