//! PostgreSQL: a search for one word reads that word's best listings in rank order from a kept table,
//! instead of reading 1 000 candidates' documents to rank them.
//!
//! `listing_search_terms` holds one row for each word (lexeme) of each searchable listing: its status,
//! the word, the listing's `ts_rank` for that word alone, and the listing. A trigger on
//! `listing_search` keeps it in the same transaction as the listing's text (a text change writes the
//! listing's rows again; a status change moves them), and a bulk load writes it by set
//! (`adapters_storage::import`). A B-tree per status, `(term, rank DESC, listing_id DESC)`, hands out
//! a word's listings best first, so a page of a one-word search is a few index entries. One per
//! status rather than one led by the status: with the word first, a bulk load's index build sorts
//! on abbreviated keys (at a million listings, 39 million rows: 169–187 s for `(status, term, …)`,
//! 79 + 15 s for the two). Each statement that reads them names its status, so PostgreSQL proves the
//! partial index applies.
//!
//! Why: the candidate path reads each candidate's document from the heap to rank it, and a word's
//! candidates lie about one to a table page, so a word on more than 1 000 listings cost about 1 000
//! page visits (4.1–4.5 ms of PostgreSQL's CPU a search at 100k demo listings, where the server took
//! 0.65 ms). Measured by hand before this migration, three interleaved rounds of 300: a page of
//! `kanban` 212–251 µs against 4 508–4 602 µs (docs/BENCHMARKS.md, thirty-seventh sitting).
//!
//! When: the query is one lexeme without weights (`'word'` or `'word':*`), in a status a search reads,
//! and in that status exactly one word begins with it (its smallest and largest are the same, two index
//! probes of this table, current in the reader's snapshot). Then the prefix and the word match the
//! same listings with the same `ts_rank`, so the order is the one the whole match set would have by
//! rank, then id: every match is ranked, not only the first 1 000 found. Any other query (several
//! words, a prefix several words begin, weights) keeps the candidate path unchanged. Which way a word
//! goes depends only on the words in the listings, never on the kept counts being current, so every
//! page of a search reads the same order while the directory does not change.
//!
//! Its total: the kept count (migration 34) while it is current or already says "the cap or more";
//! otherwise counted from this table's index up to the cap.
//!
//! The function takes `deep` (the page's end): the ranked path returns that many rows, not the 1 000
//! candidates the other path ranks. It defaults to the candidates, so a caller of the four-argument
//! form (an instance not yet upgraded, during a rolling start) gets the same rows as before.
//!
//! What it costs: a row per word of each searchable listing (44 in the demo data: 3.9 million rows at
//! 100k listings) with its three indexes, and a listing's text change rewrites its rows.
//! Votes, views and follows never write it.

use crate::m20261129_000053_search_buckets::bucketed_function;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The one-lexeme query of a word as it stands in a document (quotes and backslashes escaped as a
/// tsquery's input reads them), and the rank kept for it.
const TERM_QUERY: &str = r"CREATE FUNCTION listing_term_query(lexeme text) RETURNS tsquery LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT ('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''')::tsquery $$";

/// The INSERT of the rows of `listing_search_terms` for the rows `source` selects (a query of
/// `status, doc, listing_id`, as `listing_search` holds them): each of their words with its rank.
/// The migration's fill, the trigger and a bulk load (`adapters_storage::import`) all write them so.
pub fn insert_terms(source: &str) -> String {
    format!(
        "INSERT INTO listing_search_terms (status, term, rank, listing_id) \
         SELECT s.status, w.lexeme, ts_rank(s.doc, listing_term_query(w.lexeme)), s.listing_id \
         FROM ({source}) s, unnest(s.doc) w"
    )
}

/// Keeps a listing's rows: written again when its text changes, moved when only its status does.
fn trigger_function() -> String {
    format!(
        "CREATE FUNCTION listing_search_terms_keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         IF TG_OP = 'UPDATE' AND NEW.listing_id = OLD.listing_id AND NEW.doc = OLD.doc THEN \
           IF NEW.status IS DISTINCT FROM OLD.status THEN \
             UPDATE listing_search_terms SET status = NEW.status WHERE listing_id = NEW.listing_id; \
           END IF; \
           RETURN NULL; \
         END IF; \
         IF TG_OP <> 'INSERT' THEN DELETE FROM listing_search_terms WHERE listing_id = OLD.listing_id; END IF; \
         IF TG_OP <> 'DELETE' THEN {}; END IF; \
         RETURN NULL; END $$",
        insert_terms("SELECT NEW.status, NEW.doc, NEW.listing_id")
    )
}

/// The statuses a search reads, each with a partial index of its own.
const STATUSES: [&str; 2] = ["live", "scheduled"];

/// The name of the partial index of `status`.
fn status_index(status: &str) -> String {
    format!("ix_listing_search_terms_{status}")
}

/// `statement(status)` for the status searched, each with its status written out (so PostgreSQL
/// proves that status's partial index applies to it).
fn by_status(statement: impl Fn(&str) -> String) -> String {
    format!("IF want = '{}' THEN {} ELSE {} END IF; ", STATUSES[0], statement(STATUSES[0]), statement(STATUSES[1]))
}

/// The ranked path, taken before the kept counts are read (see the module). `lexeme` is the query's
/// word with its quotes undoubled; its backslashes are undoubled here.
fn ranked_path() -> String {
    let ends = by_status(|s| {
        format!(
            "SELECT min(t.term), max(t.term) INTO one_lo, one_hi FROM listing_search_terms t \
             WHERE t.status = '{s}' AND t.term >= one_term AND t.term <= one_last;"
        )
    });
    let count = by_status(|s| {
        format!(
            "SELECT count(*) INTO total FROM (SELECT 1 FROM listing_search_terms t \
             WHERE t.status = '{s}' AND t.term = one_lo LIMIT cap) c;"
        )
    });
    let rows = by_status(|s| {
        format!(
            "RETURN QUERY SELECT t.listing_id, t.rank, total FROM listing_search_terms t \
             WHERE t.status = '{s}' AND t.term = one_lo ORDER BY t.rank DESC, t.listing_id DESC \
             LIMIT least(candidates, coalesce(deep, candidates));"
        )
    });
    format!(
        "IF q::text ~ '^''(?:[^'']|'''')*''(?::\\*)?$' THEN \
           one_term := replace(lexeme, '\\\\', '\\'); \
           one_last := CASE WHEN word[2] = '*' THEN one_term || chr(1114111) ELSE one_term END; \
           {ends}\
           IF one_lo IS NULL THEN RETURN QUERY SELECT NULL::bigint, NULL::real, 0::bigint; RETURN; END IF; \
           IF one_lo = one_hi THEN \
             SELECT s.changes - s.refreshed, k.docs INTO pending, top FROM listing_terms_state s \
               LEFT JOIN listing_status_terms k ON k.status = want AND k.term = one_lo WHERE s.id = 1; \
             IF pending = 0 THEN total := least(coalesce(top, 0), cap); \
             ELSIF top - pending >= cap THEN total := cap; \
             ELSE {count}END IF; \
             IF candidates <= 0 THEN RETURN QUERY SELECT NULL::bigint, NULL::real, total; RETURN; END IF; \
             {rows}\
             RETURN; \
           END IF; \
         END IF; "
    )
}

/// Migration 53's function with the ranked path: each `(from, to)` rewrites one part of its text.
fn edits() -> Vec<(&'static str, String)> {
    vec![
        (
            "listing_text_search(q tsquery, want text, cap integer, candidates integer)",
            "listing_text_search(q tsquery, want text, cap integer, candidates integer, deep integer DEFAULT NULL)"
                .to_owned(),
        ),
        (
            "exact boolean := false; BEGIN",
            "exact boolean := false; one_term text; one_last text; one_lo text; one_hi text; BEGIN".to_owned(),
        ),
        ("ELSE lexeme END; ", format!("ELSE lexeme END; {}", ranked_path())),
    ]
}

/// `listing_text_search` with the ranked path; an error if migration 53's text no longer holds a part.
pub(crate) fn ranked_function() -> Result<String, DbErr> {
    crate::rewrite(bucketed_function()?, "listing_text_search", &edits())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements = [
            // Bytewise order ("C"), so the words a prefix begins are one range of the key.
            "CREATE TABLE listing_search_terms (status VARCHAR NOT NULL, term TEXT COLLATE \"C\" NOT NULL, \
             rank REAL NOT NULL, listing_id BIGINT NOT NULL)"
                .to_owned(),
            TERM_QUERY.to_owned(),
            insert_terms("SELECT status, doc, listing_id FROM listing_search"),
            format!(
                "CREATE INDEX {} ON listing_search_terms (term, rank DESC, listing_id DESC) WHERE status = '{}'",
                status_index(STATUSES[0]),
                STATUSES[0]
            ),
            format!(
                "CREATE INDEX {} ON listing_search_terms (term, rank DESC, listing_id DESC) WHERE status = '{}'",
                status_index(STATUSES[1]),
                STATUSES[1]
            ),
            "CREATE INDEX ix_listing_search_terms_listing ON listing_search_terms (listing_id)".to_owned(),
            trigger_function(),
            "CREATE TRIGGER listing_search_terms_kept AFTER INSERT OR UPDATE OR DELETE ON listing_search \
             FOR EACH ROW EXECUTE FUNCTION listing_search_terms_keep()"
                .to_owned(),
            "DROP FUNCTION listing_text_search(tsquery, text, integer, integer)".to_owned(),
            ranked_function()?,
            "ANALYZE listing_search_terms".to_owned(),
        ];
        crate::execute_on(manager, DbBackend::Postgres, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements = [
            "DROP FUNCTION IF EXISTS listing_text_search(tsquery, text, integer, integer, integer)".to_owned(),
            bucketed_function()?,
            "DROP TRIGGER IF EXISTS listing_search_terms_kept ON listing_search".to_owned(),
            "DROP FUNCTION IF EXISTS listing_search_terms_keep()".to_owned(),
            "DROP TABLE IF EXISTS listing_search_terms".to_owned(),
            "DROP FUNCTION IF EXISTS listing_term_query(text)".to_owned(),
            // A bulk load interrupted before its indexes were built left them to build; their table is gone.
            "DELETE FROM deferred_indexes WHERE name LIKE 'ix_listing_search_terms_%'".to_owned(),
        ];
        crate::execute_on(manager, DbBackend::Postgres, &statements).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_edit_applies_once() {
        let text = super::ranked_function().expect("each part is in migration 53's text once");
        assert!(text.contains("deep integer DEFAULT NULL"), "{text}");
        assert_eq!(text.matches("FROM listing_search_terms t").count(), 6, "{text}");
        for s in super::STATUSES {
            assert_eq!(text.matches(&format!("t.status = '{s}'")).count(), 3, "{text}");
        }
        assert!(text.contains(r"q::text ~ '^''(?:[^'']|'''')*''(?::\*)?$'"), "{text}");
        assert!(text.contains(r"one_term := replace(lexeme, '\\', '\');"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
}
