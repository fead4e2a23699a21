//! The one set of schema migrations, run on SQLite and PostgreSQL alike. Tables are built with
//! sea-query so one definition serves both; only full-text search differs per backend
//! (FTS5 on SQLite, a table of tsvectors with a GIN index on PostgreSQL).

pub use sea_orm_migration::prelude::*;

/// What a bulk load puts off beside its indexes: the rebuild of every listing's kept details (migration 36).
pub use m20261126_000036_listing_details::{
    REBUILD as LISTING_DETAILS_REBUILD, rebuild_lane as listing_details_rebuild_lane,
    rebuild_statement as listing_details_rebuild,
};
/// The candidates a text search ranks, which PostgreSQL's search function is weighed for (migration 53).
pub use m20261129_000053_search_buckets::CLASS_CANDIDATES as TEXT_SEARCH_CANDIDATES;
/// The INSERT of the words kept ranked for search, for a bulk load that writes them by set (migration 54).
pub use m20261130_000054_ranked_terms::insert_terms as insert_search_terms;
pub use m20261130_000055_launched_votes::{POSTGRES_LAUNCH_DAY, SQLITE_LAUNCH_DAY};
/// The character that begins each category token in SQLite's full-text index (migration 61).
pub use m20261201_000061_category_tokens::CATEGORY_MARK;
pub use m20261201_000062_prefix_index::PREFIXES as SQLITE_PREFIXES;
/// What begins each filter value's element in a PostgreSQL search row (migration 64).
pub use m20261201_000064_search_values::FACET_PREFIXES as SEARCH_FACET_PREFIXES;
/// The token of a stage, pricing model or country in SQLite's full-text index, and what an import
/// that deferred the index writes at its end (migration 65).
pub use m20261201_000065_value_tokens::{
    VALUE_MARKS as SQLITE_VALUE_MARKS, index_imported as sqlite_index_imported, value_token as sqlite_value_token,
};
/// The filter values, status and categories a PostgreSQL search row holds, for a bulk load that
/// writes the rows by set, and what begins a category's element and the status's (migration 66).
pub use m20261202_000066_search_categories::{
    CATEGORY_PREFIX as SEARCH_CATEGORY_PREFIX, STATUS_PREFIX as SEARCH_STATUS_PREFIX, facets as search_facets,
};
/// What the stores say when an `UPDATE` would move a listing's link (migration 67).
pub use m20261202_000067_links_not_moved::REFUSAL as LINK_MOVE_REFUSAL;

mod m20261122_000001_initial;
mod m20261122_000002_search;
mod m20261122_000003_vote_tallies;
mod m20261122_000004_search_status;
mod m20261122_000005_accounts;
mod m20261122_000006_idempotency;
mod m20261122_000007_sessions;
mod m20261122_000008_draft_version;
mod m20261122_000009_public_changes;
mod m20261122_000010_badge_checks;
mod m20261122_000011_claim_tokens;
mod m20261122_000012_orders;
mod m20261122_000013_oauth;
mod m20261122_000014_engagement;
mod m20261123_000015_throttles;
mod m20261123_000016_order_flags;
mod m20261123_000017_email_verification;
mod m20261123_000018_category_synonyms;
mod m20261124_000019_category_counts;
mod m20261124_000020_tally_live;
mod m20261124_000021_listing_counts;
mod m20261124_000022_change_scopes;
mod m20261124_000023_deferred_indexes;
mod m20261124_000024_moderation;
mod m20261125_000025_week_counts;
mod m20261125_000026_board_counts;
mod m20261125_000027_weekly_rank_index;
mod m20261125_000028_search_terms;
mod m20261125_000029_week_votes_index;
mod m20261125_000030_search_table;
mod m20261125_000031_status_week_statistics;
mod m20261125_000032_term_counts;
mod m20261125_000033_text_search_ids;
mod m20261126_000034_common_terms;
mod m20261126_000035_address_votes_index;
mod m20261126_000036_listing_details;
mod m20261126_000037_week_listing_counts;
mod m20261126_000038_upcoming_index;
mod m20261126_000039_exact_word_search;
mod m20261126_000040_trending_ranks;
mod m20261127_000041_order_launch_weeks;
mod m20261127_000042_trending_peak;
mod m20261127_000043_live_term_counts;
mod m20261128_000044_oauth_client_use;
mod m20261128_000045_sessions_by_account;
mod m20261128_000046_trending_ties_by_id;
mod m20261128_000047_password_resets;
mod m20261129_000048_listing_view_totals;
mod m20261129_000049_view_days_from_marks;
mod m20261129_000050_founders_by_name;
mod m20261129_000051_saturating_rank;
mod m20261129_000052_trending_cards;
mod m20261129_000053_search_buckets;
mod m20261130_000054_ranked_terms;
mod m20261130_000055_launched_votes;
mod m20261130_000056_board_orders;
mod m20261130_000057_category_tree_counts;
mod m20261130_000058_listing_value_counts;
mod m20261130_000059_founders_behind_live;
mod m20261130_000060_newest_ties_by_id;
mod m20261201_000061_category_tokens;
mod m20261201_000062_prefix_index;
mod m20261201_000063_vote_and_follow_ties_by_id;
mod m20261201_000064_search_values;
mod m20261201_000065_value_tokens;
mod m20261202_000066_search_categories;
mod m20261202_000067_links_not_moved;
mod m20261203_000068_status_value_statistics;
mod m20261203_000069_day_listing_counts;
mod m20261206_000070_upcoming_search_indexes;
mod m20261206_000071_upcoming_search_eighths;
mod m20261207_000072_tally_summaries;

/// Runs raw statements in order: what sea-query cannot say for both backends (triggers, functions).
pub(crate) async fn execute_all<S: AsRef<str>>(manager: &SchemaManager<'_>, statements: &[S]) -> Result<(), DbErr> {
    let db = manager.get_connection();
    for s in statements {
        db.execute_unprepared(s.as_ref()).await?;
    }
    Ok(())
}

/// The statements that take back indexes a migration created: each dropped, and its row left in
/// `deferred_indexes` by a bulk load interrupted before it built them removed (the indexes are gone).
pub(crate) fn drop_indexes(names: impl IntoIterator<Item = String>) -> Vec<String> {
    names
        .into_iter()
        .flat_map(|name| {
            [format!("DROP INDEX IF EXISTS {name}"), format!("DELETE FROM deferred_indexes WHERE name = '{name}'")]
        })
        .collect()
}

/// `text` (a function's definition) with each `(from, to)` of `edits` applied in turn; an error naming
/// the part when `text` does not hold it exactly once (an earlier migration's text changed under it).
pub(crate) fn rewrite<T: AsRef<str>>(text: String, what: &str, edits: &[(&str, T)]) -> Result<String, DbErr> {
    edits.iter().try_fold(text, |text, (from, to)| match text.matches(from).count() {
        1 => Ok(text.replace(from, to.as_ref())),
        n => Err(DbErr::Migration(format!("{what} holds {n} copies of `{from}`, not one"))),
    })
}

/// [`execute_all`] on `backend` only: a migration that changes one database's schema and leaves the
/// other's as it is (full-text search, planner statistics) does nothing on the other.
pub(crate) async fn execute_on<S: AsRef<str>>(
    manager: &SchemaManager<'_>,
    backend: sea_orm_migration::sea_orm::DbBackend,
    statements: &[S],
) -> Result<(), DbErr> {
    if manager.get_database_backend() != backend {
        return Ok(());
    }
    execute_all(manager, statements).await
}

/// The triggers on `listings` that keep a count of live listings (named `{prefix}_…`): `leave` (over
/// `OLD`) runs when a listing leaves live or is deleted while live, `enter` (over `NEW`) when one goes
/// live. The deletion's runs before the row goes: the rows that hang off the listing (its category or
/// founder links) are deleted after it, by the foreign key, when the listing is no longer there to
/// count. On PostgreSQL one function, `{prefix}_of_listing()`, behind `{prefix}_status` and
/// `{prefix}_deleted`; on SQLite `{prefix}_went_live`, `{prefix}_left_live` and `{prefix}_deleted`.
pub(crate) fn live_listing_moves(
    backend: sea_orm_migration::sea_orm::DbBackend,
    prefix: &str,
    leave: &str,
    enter: &str,
) -> Vec<String> {
    match backend {
        sea_orm_migration::sea_orm::DbBackend::Postgres => vec![
            format!(
                "CREATE FUNCTION {prefix}_of_listing() RETURNS trigger AS $$ BEGIN \
                 IF TG_OP = 'DELETE' THEN \
                   IF OLD.status = 'live' THEN {leave}; END IF; \
                   RETURN OLD; \
                 END IF; \
                 IF OLD.status = 'live' AND NEW.status <> 'live' THEN {leave}; \
                 ELSIF OLD.status <> 'live' AND NEW.status = 'live' THEN {enter}; \
                 END IF; \
                 RETURN NEW; \
                 END $$ LANGUAGE plpgsql"
            ),
            format!(
                "CREATE TRIGGER {prefix}_status AFTER UPDATE OF status ON listings \
                 FOR EACH ROW EXECUTE FUNCTION {prefix}_of_listing()"
            ),
            format!(
                "CREATE TRIGGER {prefix}_deleted BEFORE DELETE ON listings \
                 FOR EACH ROW EXECUTE FUNCTION {prefix}_of_listing()"
            ),
        ],
        _ => vec![
            format!(
                "CREATE TRIGGER {prefix}_went_live AFTER UPDATE OF status ON listings \
                 WHEN OLD.status <> 'live' AND NEW.status = 'live' BEGIN {enter}; END"
            ),
            format!(
                "CREATE TRIGGER {prefix}_left_live AFTER UPDATE OF status ON listings \
                 WHEN OLD.status = 'live' AND NEW.status <> 'live' BEGIN {leave}; END"
            ),
            format!(
                "CREATE TRIGGER {prefix}_deleted BEFORE DELETE ON listings \
                 WHEN OLD.status = 'live' BEGIN {leave}; END"
            ),
        ],
    }
}

/// The triggers on `table`, a listing's links (its categories, its founders: rows with `listing_id`),
/// that keep a count of live listings (named `{prefix}_…`): `added` (over `NEW`) runs when a link of a
/// live listing is inserted, `taken` (over `OLD`) when one is deleted, each `when` (`BEFORE` or
/// `AFTER`) the row's write. On PostgreSQL one function, `{prefix}_of_link()`, behind `{prefix}_link`;
/// on SQLite `{prefix}_added` and `{prefix}_taken`.
pub(crate) fn live_link_moves(
    backend: sea_orm_migration::sea_orm::DbBackend,
    prefix: &str,
    table: &str,
    when: &str,
    added: &str,
    taken: &str,
) -> Vec<String> {
    let live = |id: &str| format!("EXISTS (SELECT 1 FROM listings WHERE id = {id}.listing_id AND status = 'live')");
    let (new, old) = (live("NEW"), live("OLD"));
    match backend {
        sea_orm_migration::sea_orm::DbBackend::Postgres => vec![
            format!(
                "CREATE FUNCTION {prefix}_of_link() RETURNS trigger AS $$ BEGIN \
                 IF TG_OP = 'INSERT' THEN \
                   IF {new} THEN {added}; END IF; \
                   RETURN NEW; \
                 END IF; \
                 IF {old} THEN {taken}; END IF; \
                 RETURN OLD; \
                 END $$ LANGUAGE plpgsql"
            ),
            format!(
                "CREATE TRIGGER {prefix}_link {when} INSERT OR DELETE ON {table} \
                 FOR EACH ROW EXECUTE FUNCTION {prefix}_of_link()"
            ),
        ],
        _ => vec![
            format!("CREATE TRIGGER {prefix}_added {when} INSERT ON {table} WHEN {new} BEGIN {added}; END"),
            format!("CREATE TRIGGER {prefix}_taken {when} DELETE ON {table} WHEN {old} BEGIN {taken}; END"),
        ],
    }
}

/// An index as a migration names it: its name and its columns, as SQL (`"week_start, votes DESC"`).
pub(crate) type IndexDef = (&'static str, &'static str);

/// Builds `build` on `table` and then drops the index it replaces, `drop` (by name): the `up` of a
/// migration that swaps one index for a better one is `replace_index(NEW, OLD.0)`, its `down`
/// `replace_index(OLD, NEW.0)`.
pub(crate) async fn replace_index(
    manager: &SchemaManager<'_>,
    table: &str,
    build: IndexDef,
    drop: &str,
) -> Result<(), DbErr> {
    let (name, columns) = build;
    execute_all(manager, &[format!("CREATE INDEX {name} ON {table} ({columns})"), format!("DROP INDEX {drop}")]).await
}

/// Creates `table` of kept counts: one row per `key` (its primary key), with `listings`, the count,
/// the shape migrations 21, 25 and 26 keep their counts in.
pub(crate) async fn create_kept_counts(
    manager: &SchemaManager<'_>,
    table: &str,
    mut key: ColumnDef,
) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Alias::new(table))
                .if_not_exists()
                .col(key.not_null().primary_key())
                .col(ColumnDef::new(Alias::new("listings")).big_integer().not_null().default(0))
                .to_owned(),
        )
        .await
}

/// The `down` of a migration that keeps counts in `table` by triggers on `on`, named as those
/// migrations name them (21, 25, 26): on PostgreSQL `{table}_written` and `{table}_moved`, calling
/// `{table}_follow()`; on SQLite `{table}_added`, `{table}_deleted` and `{table}_moved`.
pub(crate) async fn drop_kept_counts(manager: &SchemaManager<'_>, table: &str, on: &str) -> Result<(), DbErr> {
    let drops: Vec<String> = match manager.get_database_backend() {
        sea_orm_migration::sea_orm::DbBackend::Postgres => vec![
            format!("DROP TRIGGER IF EXISTS {table}_written ON {on}"),
            format!("DROP TRIGGER IF EXISTS {table}_moved ON {on}"),
            format!("DROP FUNCTION IF EXISTS {table}_follow()"),
        ],
        _ => ["added", "deleted", "moved"].iter().map(|t| format!("DROP TRIGGER IF EXISTS {table}_{t}")).collect(),
    };
    execute_all(manager, &drops).await?;
    manager.drop_table(Table::drop().table(Alias::new(table)).if_exists().to_owned()).await
}

#[derive(Debug)]
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261122_000001_initial::Migration),
            Box::new(m20261122_000002_search::Migration),
            Box::new(m20261122_000003_vote_tallies::Migration),
            Box::new(m20261122_000004_search_status::Migration),
            Box::new(m20261122_000005_accounts::Migration),
            Box::new(m20261122_000006_idempotency::Migration),
            Box::new(m20261122_000007_sessions::Migration),
            Box::new(m20261122_000008_draft_version::Migration),
            Box::new(m20261122_000009_public_changes::Migration),
            Box::new(m20261122_000010_badge_checks::Migration),
            Box::new(m20261122_000011_claim_tokens::Migration),
            Box::new(m20261122_000012_orders::Migration),
            Box::new(m20261122_000013_oauth::Migration),
            Box::new(m20261122_000014_engagement::Migration),
            Box::new(m20261123_000015_throttles::Migration),
            Box::new(m20261123_000016_order_flags::Migration),
            Box::new(m20261123_000017_email_verification::Migration),
            Box::new(m20261123_000018_category_synonyms::Migration),
            Box::new(m20261124_000019_category_counts::Migration),
            Box::new(m20261124_000020_tally_live::Migration),
            Box::new(m20261124_000021_listing_counts::Migration),
            Box::new(m20261124_000022_change_scopes::Migration),
            Box::new(m20261124_000023_deferred_indexes::Migration),
            Box::new(m20261124_000024_moderation::Migration),
            Box::new(m20261125_000025_week_counts::Migration),
            Box::new(m20261125_000026_board_counts::Migration),
            Box::new(m20261125_000027_weekly_rank_index::Migration),
            Box::new(m20261125_000028_search_terms::Migration),
            Box::new(m20261125_000029_week_votes_index::Migration),
            Box::new(m20261125_000030_search_table::Migration),
            Box::new(m20261125_000031_status_week_statistics::Migration),
            Box::new(m20261125_000032_term_counts::Migration),
            Box::new(m20261125_000033_text_search_ids::Migration),
            Box::new(m20261126_000034_common_terms::Migration),
            Box::new(m20261126_000035_address_votes_index::Migration),
            Box::new(m20261126_000036_listing_details::Migration),
            Box::new(m20261126_000037_week_listing_counts::Migration),
            Box::new(m20261126_000038_upcoming_index::Migration),
            Box::new(m20261126_000039_exact_word_search::Migration),
            Box::new(m20261126_000040_trending_ranks::Migration),
            Box::new(m20261127_000041_order_launch_weeks::Migration),
            Box::new(m20261127_000042_trending_peak::Migration),
            Box::new(m20261127_000043_live_term_counts::Migration),
            Box::new(m20261128_000044_oauth_client_use::Migration),
            Box::new(m20261128_000045_sessions_by_account::Migration),
            Box::new(m20261128_000046_trending_ties_by_id::Migration),
            Box::new(m20261128_000047_password_resets::Migration),
            Box::new(m20261129_000048_listing_view_totals::Migration),
            Box::new(m20261129_000049_view_days_from_marks::Migration),
            Box::new(m20261129_000050_founders_by_name::Migration),
            Box::new(m20261129_000051_saturating_rank::Migration),
            Box::new(m20261129_000052_trending_cards::Migration),
            Box::new(m20261129_000053_search_buckets::Migration),
            Box::new(m20261130_000054_ranked_terms::Migration),
            Box::new(m20261130_000055_launched_votes::Migration),
            Box::new(m20261130_000056_board_orders::Migration),
            Box::new(m20261130_000057_category_tree_counts::Migration),
            Box::new(m20261130_000058_listing_value_counts::Migration),
            Box::new(m20261130_000059_founders_behind_live::Migration),
            Box::new(m20261130_000060_newest_ties_by_id::Migration),
            Box::new(m20261201_000061_category_tokens::Migration),
            Box::new(m20261201_000062_prefix_index::Migration),
            Box::new(m20261201_000063_vote_and_follow_ties_by_id::Migration),
            Box::new(m20261201_000064_search_values::Migration),
            Box::new(m20261201_000065_value_tokens::Migration),
            Box::new(m20261202_000066_search_categories::Migration),
            Box::new(m20261202_000067_links_not_moved::Migration),
            Box::new(m20261203_000068_status_value_statistics::Migration),
            Box::new(m20261203_000069_day_listing_counts::Migration),
            Box::new(m20261206_000070_upcoming_search_indexes::Migration),
            Box::new(m20261206_000071_upcoming_search_eighths::Migration),
            Box::new(m20261207_000072_tally_summaries::Migration),
        ]
    }
}
