//! PostgreSQL: a word on more listings than a search ranks finds its candidates in eighths of the
//! text index, one after another, instead of in the whole of it.
//!
//! GIN answers a match only as a bitmap of every listing that has the word, built before the table
//! is read; for a word on more listings than the 1 000 candidates a search ranks, that bitmap is
//! collected in full and most of it thrown away. Each of [`BUCKETS`] partial indexes holds every
//! eighth block of [`BLOCK`] consecutive ids (`(listing_id / 1024) % 8 = k`); the function reads
//! them in order and stops as soon as it has its candidates, so a word on 4 540 live listings
//! collects about 1 300 matches in two eighths instead of 5 215. Measured at 100k demo listings
//! (pgbench, one client, the statement a search sends, this migration's first version):
//! `invoices` 2.12 -> 1.28 ms, `kanban` 1.59 -> 1.18, `captions` 1.46 -> 1.30, `tracing` 1.58 ->
//! 1.42; rare and common words as before. At a million listings such a word's bitmap was most of
//! its 9–11 ms, now 2–4 ms (docs/BENCHMARKS.md).
//!
//! Blocks, not remainders (`listing_id % 8`, that first version): a bitmap costs something for every
//! table page it marks; one remainder's listings lie on every page of the table, one block's on
//! about 90 (rows are written in id order), so an eighth of the blocks marks about an eighth of the
//! pages. With remainders a search of several words, which always counts and so reads every eighth,
//! paid the whole index's page cost eight times (`larkhub export` 3.0 -> 16.4 ms, `team work` 20 ->
//! 24 ms); with blocks 2.6 and 12–16 ms, and single words the same within the machine's noise.
//!
//! Which listings are ranked must not depend on which way a search went (a page, then the next, with
//! the kept counts current, then behind): the order in which matches are handed out is fixed per
//! word by its kept count alone, which changes only when the counts are refreshed, and the table's
//! size (its planner estimate), never by the page asked for:
//! - a word common enough for the sequential scan (matches² ≥ [`SEQUENTIAL_FACTOR`] ×
//!   [`CLASS_CANDIDATES`] × rows, the kept count standing for the matches) is read in the table's
//!   order, by that scan, or when it must be counted, by the whole index as before;
//! - any other search whose matches may outnumber its candidates is read eighth by eighth, the
//!   count's scan too;
//! - a word the current counts put on no more listings than the candidates ranks all of them, read
//!   from the whole index in one bitmap.
//!
//! The sequential scan's threshold moves from 0.5 to [`SEQUENTIAL_FACTOR`] (0.5 × [`BUCKETS`]): the
//! bitmap it is weighed against now collects about an eighth of the matches.
//!
//! What it costs: eight more GIN indexes of `listing_search`, each an eighth of the listings (12 MB
//! together at 100k beside the whole index's 9 MB; 83 MB beside 71 MB at a million, built in 11 s);
//! a listing's text change writes two index entries per word instead of one. Votes, views and
//! follows never write this table.

use crate::m20261129_000051_saturating_rank::saturating_function;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// How many partial indexes split the text index, by blocks of ids.
pub(crate) const BUCKETS: u32 = 8;

/// Consecutive ids in a block: bucket `k` holds the blocks `k`, `k + 8`, `k + 16`, …
const BLOCK: u32 = 1024;

/// `matches² ≥ SEQUENTIAL_FACTOR × CLASS_CANDIDATES × rows` picks the sequential scan (see the module).
const SEQUENTIAL_FACTOR: u32 = BUCKETS / 2;

/// The candidates a search's first pages rank (`adapters-storage` ranks this many, or as deep as the
/// page): the sequential scan's threshold is weighed for them, whatever a deeper page asks, so that
/// every page of a search reads its matches in the same order. Changing it changes the function: a
/// migration.
pub const CLASS_CANDIDATES: i64 = 1_000;

/// The name of the partial index of bucket `k`.
fn bucket_index(k: u32) -> String {
    format!("ix_listing_search_doc_b{k}")
}

/// The matches of `q` in status `want`, as `(listing_id, doc)`, eighth by eighth: each branch's
/// condition is its index's, so PostgreSQL proves the partial index applies, and an `Append` under a
/// `LIMIT` never starts a branch it does not need.
fn bucketed_matches() -> String {
    bucketed_matches_in("want")
}

/// [`bucketed_matches`] in the status `status` (an SQL expression: `want`, or a literal, so that
/// PostgreSQL proves a partial index of that status applies: migration 71).
pub(crate) fn bucketed_matches_in(status: &str) -> String {
    (0..BUCKETS)
        .map(|k| {
            format!(
                "SELECT s.listing_id, s.doc FROM listing_search s WHERE {} \
                 AND s.doc @@ q AND s.status = {status}",
                bucket_condition("s.listing_id", k)
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ")
}

/// The condition of bucket `k`'s rows over the listing id `column`, as its index and its branch write it.
pub(crate) fn bucket_condition(column: &str, k: u32) -> String {
    format!("({column} / {BLOCK}) % {BUCKETS} = {k}")
}

/// The statement that counts the matches `eighths` reads (up to the cap) and ranks the first
/// candidates among them.
pub(crate) fn counted_from(eighths: &str) -> String {
    format!(
        "RETURN QUERY WITH m AS MATERIALIZED (SELECT b.listing_id AS id, \
         CASE WHEN row_number() OVER () <= candidates THEN ts_rank(b.doc, q) END AS r \
         FROM ({eighths}) b LIMIT cap) \
         SELECT c.id, c.r, n.matches FROM (SELECT count(*) AS matches FROM m) n \
         LEFT JOIN LATERAL (SELECT m.id, m.r FROM m LIMIT candidates) c ON true;"
    )
}

/// The statement that ranks the first candidates `eighths` reads, the total known.
pub(crate) fn candidates_from(eighths: &str) -> String {
    format!("RETURN QUERY SELECT b.listing_id, ts_rank(b.doc, q), total FROM ({eighths}) b LIMIT candidates;")
}

/// Migration 51's function with the buckets: each `(from, to)` rewrites one part of its text.
fn edits() -> Vec<(&'static str, String)> {
    let buckets = bucketed_matches();
    vec![
        (
            "rows_in real; one text; BEGIN",
            "rows_in real; one text; heap_order boolean := false; exact boolean := false; BEGIN".to_owned(),
        ),
        // The order the word's matches are read in, from its kept count alone.
        (
            "ELSIF top - pending >= cap THEN known := top - pending; total := cap; END IF; END IF; ",
            format!(
                "ELSIF top - pending >= cap THEN known := top - pending; total := cap; END IF; \
                 exact := pending = 0 AND terms <= 1; \
                 IF top > {CLASS_CANDIDATES} THEN \
                   SELECT c.reltuples INTO rows_in FROM pg_class c WHERE c.oid = 'listing_search'::regclass; \
                   heap_order := rows_in > 0 \
                     AND top::float8 * top >= {SEQUENTIAL_FACTOR} * {CLASS_CANDIDATES} * rows_in::float8; \
                 END IF; \
                 END IF; "
            ),
        ),
        // Counting: a word read in the table's order counts as before; any other, eighth by eighth.
        (
            "IF total IS NULL THEN RETURN QUERY WITH m AS MATERIALIZED (SELECT s.listing_id AS id, \
             CASE WHEN row_number() OVER () <= candidates THEN ts_rank(s.doc, q) END AS r \
             FROM listing_search s WHERE s.doc @@ q AND s.status = want LIMIT cap) ",
            format!(
                "IF total IS NULL AND NOT heap_order THEN {} RETURN; END IF; \
                 IF total IS NULL THEN RETURN QUERY WITH m AS MATERIALIZED (SELECT s.listing_id AS id, \
                 CASE WHEN row_number() OVER () <= candidates THEN ts_rank(s.doc, q) END AS r \
                 FROM listing_search s WHERE s.doc @@ q AND s.status = want LIMIT cap) ",
                counted_from(&buckets)
            ),
        ),
        // The class decided above replaces the crossover weighed here.
        (
            "IF known > candidates THEN SELECT c.reltuples INTO rows_in FROM pg_class c \
             WHERE c.oid = 'listing_search'::regclass; END IF; \
             IF rows_in > 0 AND known::float8 * known >= 0.5 * candidates * rows_in THEN ",
            "IF heap_order THEN ".to_owned(),
        ),
        (
            "ELSE RETURN QUERY SELECT s.listing_id, ts_rank(s.doc, q), total FROM listing_search s \
             WHERE s.doc @@ q AND s.status = want LIMIT candidates; END IF; ",
            format!(
                "ELSIF exact AND known <= candidates THEN RETURN QUERY SELECT s.listing_id, ts_rank(s.doc, q), total \
                 FROM listing_search s WHERE s.doc @@ q AND s.status = want LIMIT candidates; \
                 ELSE {} END IF; ",
                candidates_from(&buckets)
            ),
        ),
    ]
}

/// `listing_text_search` reading eighth by eighth; an error if migration 51's text no longer holds a
/// part it rewrites.
pub(crate) fn bucketed_function() -> Result<String, DbErr> {
    crate::rewrite(saturating_function()?, "listing_text_search", &edits())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements: Vec<String> = (0..BUCKETS)
            .map(|k| {
                format!(
                    "CREATE INDEX {} ON listing_search USING GIN (doc) WHERE {}",
                    bucket_index(k),
                    bucket_condition("listing_id", k)
                )
            })
            .collect();
        statements.push(bucketed_function()?);
        crate::execute_on(manager, DbBackend::Postgres, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements = vec![saturating_function()?];
        statements.extend((0..BUCKETS).map(|k| format!("DROP INDEX IF EXISTS {}", bucket_index(k))));
        crate::execute_on(manager, DbBackend::Postgres, &statements).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_edit_applies_once() {
        let text = super::bucketed_function().expect("each part is in migration 51's text once");
        assert!(!text.contains("0.5 * candidates"), "{text}");
        assert_eq!(
            text.matches("(s.listing_id / 1024) % 8 = 7").count(),
            2,
            "the count's scan and the candidates' read: {text}"
        );
        assert!(text.contains("top::float8 * top >= 4 * 1000 * rows_in::float8"), "{text}");
        assert!(!text.contains("* candidates"), "the class never depends on the page: {text}");
    }
}
