//! PostgreSQL: each search row holds its listing's filter values (`facets`: stage, pricing model
//! lowercased, country, one element each) with a GIN index, so a search of words with a stage, a
//! pricing model or a country intersects two indexes of `listing_search` and never reads `listings`.
//!
//! Why (100k demo listings, `EXPLAIN ANALYZE`): the capped count of `q=workflow&stage=growing` joined
//! every listing of the stage to the word's matches; `listings` has no index on those columns (each
//! would cost every vote an index entry: a vote rewrites the row, `votes_count` being indexed), so it
//! read the whole table in parallel and hashed it (123–140 ms; 230–290 ms on an earlier machine). On
//! `listing_search` alone, the word's bitmap and the value's ANDed, it is 10–22 ms (`workflow`, 5 617
//! matches), 8–25 ms for `a` (10 001, the cap) and 0.8–3 ms for a rare word. Votes, views and follows
//! never write this table.
//!
//! `facets` is written where the search row is: by `listing_search_follow`, which now also runs when a
//! listing's stage, pricing model or country changes, and by a bulk load (`adapters_storage::import`),
//! through [`facets`]. The status stays a column of its own, checked on the heap page the count reads
//! anyway: as an element it made every rare word's bitmap AND the whole status's (2.7–3.7 ms against
//! 0.8–2).

use crate::m20261125_000030_search_table::{changed_trigger, follow_function};
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The listing columns behind `facets`, in its order.
const VALUE_COLS: [&str; 3] = ["stage", "pricing_model", "country"];

/// What begins the element of a stage, a pricing model and a country in `facets`.
pub const FACET_PREFIXES: [&str; 3] = ["s:", "p:", "c:"];

/// The elements of `facets` for the listing row `prefix` (an alias, or `NEW`): each of
/// [`FACET_PREFIXES`] with the stage, the pricing model lowercased (`lower`, as the filter always
/// compared it) and the country; a value the listing does not have, none. A search writes the same
/// strings (`adapters_storage`, `facets_of`).
pub fn facets(prefix: &str) -> String {
    let [stage, pricing, country] = FACET_PREFIXES;
    format!(
        "array_remove(ARRAY['{stage}' || {prefix}.stage, '{pricing}' || lower({prefix}.pricing_model), \
         '{country}' || {prefix}.country], NULL)"
    )
}

/// The triggers on `listing_search` that the fill below would run for every row to no purpose: its
/// words and status do not change.
const QUIET: [&str; 2] = ["listing_terms_bumped", "listing_search_terms_kept"];

fn up() -> Vec<String> {
    let mut s = vec!["ALTER TABLE listing_search ADD COLUMN facets TEXT[] NOT NULL DEFAULT '{}'".to_owned()];
    s.extend(QUIET.iter().map(|t| format!("ALTER TABLE listing_search DISABLE TRIGGER {t}")));
    s.push(format!(
        "UPDATE listing_search s SET facets = {} FROM listings l WHERE l.id = s.listing_id \
         AND (l.stage IS NOT NULL OR l.pricing_model IS NOT NULL OR l.country IS NOT NULL)",
        facets("l")
    ));
    s.extend(QUIET.iter().map(|t| format!("ALTER TABLE listing_search ENABLE TRIGGER {t}")));
    s.extend([
        "CREATE INDEX ix_listing_search_facets ON listing_search USING GIN (facets)".to_owned(),
        follow_function("CREATE OR REPLACE", &[("facets", facets("NEW"))]),
        "DROP TRIGGER listing_search_changed ON listings".to_owned(),
        changed_trigger(&VALUE_COLS),
        "ANALYZE listing_search".to_owned(),
    ]);
    s
}

fn down() -> Vec<String> {
    vec![
        "DROP TRIGGER IF EXISTS listing_search_changed ON listings".to_owned(),
        changed_trigger(&[]),
        follow_function("CREATE OR REPLACE", &[]),
        "DROP INDEX IF EXISTS ix_listing_search_facets".to_owned(),
        // A bulk load interrupted before its indexes were built left this one to build; its column is gone.
        "DELETE FROM deferred_indexes WHERE name = 'ix_listing_search_facets'".to_owned(),
        "ALTER TABLE listing_search DROP COLUMN IF EXISTS facets".to_owned(),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &up()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &down()).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_change_of_a_filter_value_is_followed() {
        let trigger = super::changed_trigger(&super::VALUE_COLS);
        for c in super::VALUE_COLS {
            assert!(trigger.contains(&format!("OLD.{c} IS DISTINCT FROM NEW.{c}")), "{trigger}");
        }
    }
}
