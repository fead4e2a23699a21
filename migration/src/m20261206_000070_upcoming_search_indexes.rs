//! PostgreSQL: a search of upcoming listings reads an index of the upcoming listings alone, for its
//! values and, when it only counts, for its words.
//!
//! `listing_search` holds the live and the scheduled listings together (at 100k demo listings 77 962
//! and 11 983), and its GIN indexes of words (`doc`) and values (`facets`) hand out both. A search of
//! the upcoming ones took every match of either status from the index and read each match's row to
//! check the status: `workflow export` among the upcoming listings read the 38 646 rows with both
//! words to count 5 129 of them (52 ms), and `team p` at the stage `growing` read 13 003 rows to
//! count 1 371 (15 ms). Here each of the two has a partial index of the scheduled rows, so a statement
//! that names the status `'scheduled'` reads only those:
//! - the values: the statements that check them on the search rows write the status out
//!   (`ls.status = 'scheduled'`), so PostgreSQL proves the index applies and takes it (the count
//!   above 15 -> 2-3 ms);
//! - the words: `listing_text_search` counting several words (or a prefix several words begin)
//!   among the upcoming listings, with no candidates to rank, counts them from the new index in one
//!   statement that names the status (52 -> 10-11 ms; `team & p:*` 59 -> 12 ms). The count is the
//!   same as the eighth-by-eighth read's: the matches up to the cap, in whatever order they come.
//!   A search that ranks candidates keeps its reading order (see migration 53): which matches are
//!   ranked must not depend on which way a search went.
//!
//! Measured on the 100k benchmark database with `bench/searches.py` (every kind of search one at a
//! time, read cache off, release builds without and with this migration, interleaved): the upcoming
//! searches with a median over 20 ms 108, 118 and 109 -> 52 and 52, the sum of their medians 6 569,
//! 7 060 and 6 419 ms -> 4 618 and 4 623 ms; the live ones unchanged within the runs' spread
//! (docs/BENCHMARKS.md, sixtieth sitting).
//!
//! What it costs: two GIN indexes of the scheduled rows only (at 100k 2.0 MB and 0.26 MB beside the
//! whole indexes' 9.1 and 1.4 MB, built in 0.3 s); an upcoming listing's text change writes its words
//! into one more index, and a status change between live and scheduled moves the row's entries (its
//! word rows move already, migration 54). Votes, views and follows never write this table. SQLite's
//! search is unchanged.

use crate::m20261130_000054_ranked_terms::ranked_function;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The status of the upcoming listings in `listing_search`.
const UPCOMING: &str = "scheduled";

/// Where the count is inserted: the eighth-by-eighth read, the first statement that reads matches
/// when no kept count answered.
const BEFORE: &str = "IF total IS NULL AND NOT heap_order THEN";

/// The count of the upcoming listings' matches from their own index, when nothing is to be ranked.
fn upcoming_count() -> String {
    format!(
        "IF total IS NULL AND candidates <= 0 AND want = '{UPCOMING}' THEN \
           RETURN QUERY SELECT NULL::bigint, NULL::real, count(*) FROM (SELECT 1 FROM listing_search s \
           WHERE s.doc @@ q AND s.status = '{UPCOMING}' LIMIT cap) c; \
           RETURN; \
         END IF; {BEFORE}"
    )
}

/// Migration 54's `listing_text_search` counting upcoming matches from their index; an error if its
/// text no longer holds the place.
pub(crate) fn upcoming_function() -> Result<String, DbErr> {
    crate::rewrite(ranked_function()?, "listing_text_search", &[(BEFORE, upcoming_count())])
}

/// The partial indexes: (name, column).
const INDEXES: [(&str, &str); 2] =
    [("ix_listing_search_upcoming_facets", "facets"), ("ix_listing_search_upcoming_doc", "doc")];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements: Vec<String> = INDEXES
            .iter()
            .map(|(name, column)| {
                format!("CREATE INDEX {name} ON listing_search USING GIN ({column}) WHERE status = '{UPCOMING}'")
            })
            .collect();
        statements.push(upcoming_function()?);
        statements.push("ANALYZE listing_search".to_owned());
        crate::execute_on(manager, DbBackend::Postgres, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements: Vec<String> = vec![ranked_function()?];
        statements.extend(crate::drop_indexes(INDEXES.iter().map(|(name, _)| (*name).to_owned())));
        crate::execute_on(manager, DbBackend::Postgres, &statements).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_count_goes_in_once_before_the_eighths() {
        let text = super::upcoming_function().expect("the place is in migration 54's text once");
        assert_eq!(text.matches(super::BEFORE).count(), 1, "{text}");
        let count = text.find("AND want = 'scheduled' THEN RETURN QUERY SELECT NULL::bigint").expect("the count");
        assert!(count < text.find(super::BEFORE).expect("the eighths"), "{text}");
        assert!(text.contains("WHERE s.doc @@ q AND s.status = 'scheduled' LIMIT cap) c;"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
}
