//! PostgreSQL: a search of upcoming listings that ranks candidates reads them eighth by eighth from
//! indexes of the upcoming listings' eighths.
//!
//! Migration 53 reads a search's matches eighth by eighth (blocks of 1 024 ids), from eight partial
//! GIN indexes of every status's rows, and checks each match's status on its row. An upcoming search
//! of a common word thus read the live matches of each eighth too, to throw them away: `a:*` among the
//! 11 983 upcoming listings read about 85 000 rows to reach the cap of 10 001 (57 ms in `psql`,
//! 72 ms a request). Here each eighth also has an index of its scheduled rows alone
//! (`(listing_id / 1024) % 8 = k AND status = 'scheduled'`), and `listing_text_search` reads an
//! upcoming search's eighths in statements that write the status out, so PostgreSQL proves those
//! indexes apply. The branches are the same eighths in the same order, and each hands out its rows in
//! the table's order as before (a bitmap scan), so the same matches come out in the same order: the
//! same candidates are ranked, and the count is the same.
//!
//! Measured in `psql` at 100k demo listings, the statement as the function sends it for a relevance
//! search (1 000 candidates, cap 10 001), without and with these indexes: `a:*` 57 -> 24 ms,
//! `co:*` 52 -> 13-22 ms, `team & p:*` about 55 -> 22-23 ms, `workflow & export:*` 40 -> 12-13 ms,
//! each with the same count and the same sum of its candidates' ranks (docs/BENCHMARKS.md, sixtieth
//! sitting).
//!
//! Through the API (`bench/searches.py`, the same database and interleaved runs), relevance searches
//! of upcoming listings: `q=a` 84 -> 20-22 ms, `q=co` 70 -> 19-21, `q=team p` 77 -> 18-23,
//! `q=workflow export` 39 -> 12.
//!
//! What it costs: eight more GIN indexes, each of an eighth of the scheduled rows (2.5 MB together at
//! 100k, 0.1 s each to build); a scheduled listing's text change writes its words into one more, and a
//! listing going live leaves its eighth's index as it leaves migration 70's.

use crate::m20261129_000053_search_buckets::{
    BUCKETS, bucket_condition, bucketed_matches_in, candidates_from, counted_from,
};
use crate::m20261206_000070_upcoming_search_indexes::upcoming_function;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The status of the upcoming listings, as a literal of the statements that read them.
const UPCOMING: &str = "'scheduled'";

/// The name of the index of bucket `k`'s upcoming rows.
fn upcoming_bucket_index(k: u32) -> String {
    format!("ix_listing_search_upcoming_doc_b{k}")
}

/// Each `(from, to)`: a statement reading the eighths, and the same for the upcoming listings with
/// their status written out, the other statuses' as before.
fn edits() -> Vec<(String, String)> {
    let (any, upcoming) = (bucketed_matches_in("want"), bucketed_matches_in(UPCOMING));
    vec![
        (
            counted_from(&any),
            format!("IF want = {UPCOMING} THEN {} ELSE {} END IF;", counted_from(&upcoming), counted_from(&any)),
        ),
        (
            format!("ELSE {} END IF; ", candidates_from(&any)),
            format!(
                "ELSIF want = {UPCOMING} THEN {} ELSE {} END IF; ",
                candidates_from(&upcoming),
                candidates_from(&any)
            ),
        ),
    ]
}

/// Migration 70's `listing_text_search` reading an upcoming search's eighths from their own indexes;
/// an error if its text no longer holds a statement it rewrites.
pub(crate) fn eighths_function() -> Result<String, DbErr> {
    let edits = edits();
    let edits: Vec<(&str, &String)> = edits.iter().map(|(from, to)| (from.as_str(), to)).collect();
    crate::rewrite(upcoming_function()?, "listing_text_search", &edits)
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements: Vec<String> = (0..BUCKETS)
            .map(|k| {
                format!(
                    "CREATE INDEX {} ON listing_search USING GIN (doc) WHERE {} AND status = {UPCOMING}",
                    upcoming_bucket_index(k),
                    bucket_condition("listing_id", k)
                )
            })
            .collect();
        statements.push(eighths_function()?);
        statements.push("ANALYZE listing_search".to_owned());
        crate::execute_on(manager, DbBackend::Postgres, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements = vec![upcoming_function()?];
        statements.extend(crate::drop_indexes((0..BUCKETS).map(upcoming_bucket_index)));
        crate::execute_on(manager, DbBackend::Postgres, &statements).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_reading_of_the_eighths_has_an_upcoming_twin() {
        let text = super::eighths_function().expect("each statement is in migration 70's text once");
        let any = super::bucketed_matches_in("want");
        let upcoming = super::bucketed_matches_in(super::UPCOMING);
        assert_eq!(text.matches(&any).count(), 2, "{text}");
        assert_eq!(text.matches(&upcoming).count(), 2, "{text}");
        assert_eq!(text.matches("s.status = 'scheduled'").count(), 2 * 8 + 1, "the eighths twice, the count once");
        assert!(!text.contains('\n'), "{text}");
    }
}
