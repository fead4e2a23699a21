//! Listings per status and value of each filterable field — stage, pricing model (lowercased, as the
//! filter compares it) and country — kept in `listing_value_counts` by triggers, as migration 21 keeps
//! the listings per status. A list filtered by one of them alone (`?stage=growing`,
//! `?pricing_model=free`, `?country=US`) counted its listings up to the cap at read time, walking the
//! listing rows for those of the value: at 100k demo listings, where each stage and pricing model holds
//! 13 000 of 78 000 live listings, 55–107 ms uncached on either store, for the first page. Its total is
//! now one row.
//!
//! The triggers fire on a listing's insert and deletion and on an update of the status or one of the
//! three fields (a vote's update of `votes_count` does not fire them). A value is counted under the
//! listing's status; `NULL` (no stage, no country) is not counted.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The fields counted, each as the filter compares it, over the listing row `row` (`NEW`, `OLD`).
fn values(row: &str) -> [(&'static str, String); 3] {
    [
        ("stage", format!("{row}.stage")),
        ("pricing_model", format!("lower({row}.pricing_model)")),
        ("country", format!("{row}.country")),
    ]
}

/// Takes listing `row` out of its status's counts.
fn uncount(row: &str) -> String {
    let each = values(row).map(|(field, value)| format!("(field = '{field}' AND value = {value})"));
    format!(
        "UPDATE listing_value_counts SET listings = listings - 1 WHERE status = {row}.status AND ({})",
        each.join(" OR ")
    )
}

/// Counts listing `row` under its status.
fn count(row: &str) -> String {
    let each = values(row).map(|(field, value)| format!("SELECT '{field}' AS f, {value} AS v"));
    format!(
        "INSERT INTO listing_value_counts (status, field, value, listings) SELECT {row}.status, f, v, 1 FROM ({}) x \
         WHERE v IS NOT NULL ON CONFLICT (status, field, value) DO UPDATE SET listings = listing_value_counts.listings + 1",
        each.join(" UNION ALL ")
    )
}

/// Whether an update moves a count: the status or one of the values changed.
fn moved(distinct: &str) -> String {
    let (old, new) = (values("OLD"), values("NEW"));
    let mut each = vec![format!("OLD.status {distinct} NEW.status")];
    each.extend(old.iter().zip(&new).map(|((_, o), (_, n))| format!("{o} {distinct} {n}")));
    each.join(" OR ")
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let text = |name: &str| ColumnDef::new(Alias::new(name)).string().not_null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("listing_value_counts"))
                    .if_not_exists()
                    .col(text("status"))
                    .col(text("field"))
                    .col(text("value"))
                    .col(ColumnDef::new(Alias::new("listings")).big_integer().not_null().default(0))
                    .primary_key(
                        Index::create().col(Alias::new("status")).col(Alias::new("field")).col(Alias::new("value")),
                    )
                    .to_owned(),
            )
            .await?;
        let statements: Vec<String> = match manager.get_database_backend() {
            DbBackend::Postgres => vec![
                format!(
                    "CREATE FUNCTION listing_value_counts_follow() RETURNS trigger AS $$ BEGIN \
                     IF TG_OP IN ('UPDATE', 'DELETE') THEN {}; END IF; \
                     IF TG_OP IN ('UPDATE', 'INSERT') THEN {}; RETURN NEW; END IF; \
                     RETURN OLD; END $$ LANGUAGE plpgsql",
                    uncount("OLD"),
                    count("NEW")
                ),
                "CREATE TRIGGER listing_value_counts_written AFTER INSERT OR DELETE ON listings \
                 FOR EACH ROW EXECUTE FUNCTION listing_value_counts_follow()"
                    .into(),
                format!(
                    "CREATE TRIGGER listing_value_counts_moved AFTER UPDATE OF status, stage, pricing_model, country \
                     ON listings FOR EACH ROW WHEN ({}) EXECUTE FUNCTION listing_value_counts_follow()",
                    moved("IS DISTINCT FROM")
                ),
            ],
            _ => vec![
                format!(
                    "CREATE TRIGGER listing_value_counts_added AFTER INSERT ON listings BEGIN {}; END",
                    count("NEW")
                ),
                format!(
                    "CREATE TRIGGER listing_value_counts_deleted AFTER DELETE ON listings BEGIN {}; END",
                    uncount("OLD")
                ),
                format!(
                    "CREATE TRIGGER listing_value_counts_moved AFTER UPDATE OF status, stage, pricing_model, country \
                     ON listings WHEN {} BEGIN {}; {}; END",
                    moved("IS NOT"),
                    uncount("OLD"),
                    count("NEW")
                ),
            ],
        };
        crate::execute_all(manager, &statements).await?;
        let fill = values("l").map(|(field, value)| {
            format!(
                "INSERT INTO listing_value_counts (status, field, value, listings) \
                 SELECT l.status, '{field}', {value}, COUNT(*) FROM listings l WHERE {value} IS NOT NULL \
                 GROUP BY l.status, {value}"
            )
        });
        crate::execute_all(manager, &fill).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_kept_counts(manager, "listing_value_counts", "listings").await
    }
}
