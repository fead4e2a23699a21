//! PostgreSQL: the terms on more listings than a search counts, kept with their listing counts, so a
//! search for such a word neither counts its matches nor builds their bitmap.
//!
//! `listing_text_search` counted up to 10 001 matches of every search, visiting each match's heap
//! tuple, and built the GIN bitmap of every match first (a word on 33 000 live listings of 100k:
//! 17–24 ms a call, and 85–93 ms p99 over HTTP at 8 connections). For a word the kept counts prove is
//! on more listings than the cap, the count is the cap itself ("10 000+"), and the first candidates
//! are read in the same order the bitmap scan reads them, by whichever scan reads fewer rows: a
//! sequential scan stops after about `candidates × rows / matches` rows (2 600 for that word, 2 ms),
//! where the bitmap of a word on 400 000 listings of a million alone takes tens of milliseconds.
//!
//! - `listing_status_terms`: per status, each term on more than `kept_above` listings, with how many
//!   (`ts_stat` of the status's vectors), rewritten by `listing_terms_refresh(above)`.
//! - `listing_terms_state`: `changes` moves with every row written to `listing_search`, `refreshed`
//!   is the `changes` the table was counted at. A change moves a term's count in a status by one at
//!   most, so `docs - (changes - refreshed)` is a lower bound however far behind the table is: a
//!   stale table makes a search count, never report a total it does not have.
//!
//! SQLite has its own `listing_terms` (migration 32), with every term.

use crate::m20261125_000033_text_search_ids::RANKED_AS_SCANNED;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The terms of `status` on more than `above` listings, as the kept table holds them.
fn counted(status: &str) -> String {
    format!(
        "SELECT '{status}', word, ndoc FROM ts_stat('SELECT doc FROM listing_search WHERE status = ''{status}''') \
         WHERE ndoc > above"
    )
}

fn postgres_up() -> Vec<String> {
    vec![
        "CREATE TABLE listing_terms_state (id INTEGER PRIMARY KEY CHECK (id = 1), changes BIGINT NOT NULL, \
         refreshed BIGINT NOT NULL, kept_above BIGINT)"
            .to_owned(),
        "INSERT INTO listing_terms_state (id, changes, refreshed, kept_above) VALUES (1, 0, 0, NULL)".to_owned(),
        "CREATE TABLE listing_status_terms (status VARCHAR NOT NULL, term TEXT NOT NULL, docs BIGINT NOT NULL, \
         PRIMARY KEY (status, term))"
            .to_owned(),
        "CREATE FUNCTION listing_terms_bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         UPDATE listing_terms_state SET changes = changes + 1 WHERE id = 1; RETURN NULL; END $$"
            .to_owned(),
        "CREATE TRIGGER listing_terms_bumped AFTER INSERT OR UPDATE OR DELETE ON listing_search FOR EACH ROW \
         EXECUTE FUNCTION listing_terms_bump()"
            .to_owned(),
        // Counts the terms on more than `above` listings; false when the table is already current at
        // that threshold. One refresh at a time (the advisory lock): a second instance's waits, then
        // finds it done. `changes` is read before `ts_stat` takes its snapshot, so a change committed
        // in between is both counted and pending: the bound stays low, never high.
        format!(
            "CREATE FUNCTION listing_terms_refresh(above bigint) RETURNS boolean LANGUAGE plpgsql AS $$ \
             DECLARE c bigint; r bigint; k bigint; BEGIN \
               PERFORM pg_advisory_xact_lock(hashtext('listing_terms_refresh')); \
               SELECT changes, refreshed, kept_above INTO c, r, k FROM listing_terms_state WHERE id = 1; \
               IF c = r AND k = above THEN RETURN false; END IF; \
               DELETE FROM listing_status_terms; \
               INSERT INTO listing_status_terms (status, term, docs) {live} UNION ALL {scheduled}; \
               UPDATE listing_terms_state SET refreshed = c, kept_above = above WHERE id = 1; \
               RETURN true; END $$",
            live = counted("live"),
            scheduled = counted("scheduled")
        ),
        // A query of one word (the search's last word is a prefix: `'word':*`) whose kept count, less
        // the changes since, reaches the cap skips the count. The scan: a sequential one reads about
        // candidates × total / known rows at ~0.9 µs each, the bitmap ~0.2 µs for each of `known`
        // entries (measured on 100k listings), so the sequential scan when known² ≥ 4.5 × candidates
        // × total. Sequential scans of this table start at its first page (synchronize_seqscans off),
        // so both scans hand out the matches in the same order and pick the same candidates.
        "CREATE OR REPLACE FUNCTION listing_text_search(q tsquery, want text, cap integer, candidates integer) \
         RETURNS TABLE (listing_id bigint, rank real, matches bigint) LANGUAGE plpgsql STABLE \
         SET enable_seqscan = off SET enable_bitmapscan = on SET synchronize_seqscans = off AS $$ \
         DECLARE word text[]; lexeme text; known bigint; total real; BEGIN \
           IF numnode(q) = 1 THEN \
             word := regexp_match(q::text, '^''((?:[^'']|'''')*)''(?::(\\*?)[A-D]*)?$'); \
           END IF; \
           IF word IS NOT NULL THEN \
             lexeme := replace(word[1], '''''', ''''); \
             SELECT (SELECT max(t.docs) FROM listing_status_terms t WHERE t.status = want \
                       AND (t.term = lexeme OR (word[2] = '*' AND starts_with(t.term, lexeme)))) \
                    - (s.changes - s.refreshed) INTO known FROM listing_terms_state s WHERE s.id = 1; \
           END IF; \
           IF known IS NULL OR known < cap THEN \
             RETURN QUERY WITH m AS MATERIALIZED (SELECT s.listing_id AS id, \
                 CASE WHEN row_number() OVER () <= candidates THEN ts_rank_cd(s.doc, q) END AS r \
               FROM listing_search s WHERE s.doc @@ q AND s.status = want LIMIT cap) \
             SELECT c.id, c.r, n.matches FROM (SELECT count(*) AS matches FROM m) n \
             LEFT JOIN LATERAL (SELECT m.id, m.r FROM m LIMIT candidates) c ON true; \
             RETURN; \
           END IF; \
           IF candidates <= 0 THEN \
             RETURN QUERY SELECT NULL::bigint, NULL::real, cap::bigint; RETURN; \
           END IF; \
           SELECT c.reltuples INTO total FROM pg_class c WHERE c.oid = 'listing_search'::regclass; \
           IF total > 0 AND known::float8 * known >= 4.5 * candidates * total THEN \
             PERFORM set_config('enable_seqscan', 'on', true), set_config('enable_bitmapscan', 'off', true); \
             RETURN QUERY EXECUTE 'SELECT s.listing_id, ts_rank_cd(s.doc, $1), $3::bigint FROM listing_search s \
               WHERE s.doc @@ $1 AND s.status = $2 LIMIT $4' USING q, want, cap, candidates; \
           ELSE \
             RETURN QUERY SELECT s.listing_id, ts_rank_cd(s.doc, q), cap::bigint FROM listing_search s \
               WHERE s.doc @@ q AND s.status = want LIMIT candidates; \
           END IF; \
         END $$"
            .to_owned(),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &postgres_up()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(
            manager,
            DbBackend::Postgres,
            &[
                RANKED_AS_SCANNED,
                "DROP FUNCTION IF EXISTS listing_terms_refresh(bigint)",
                "DROP TRIGGER IF EXISTS listing_terms_bumped ON listing_search",
                "DROP FUNCTION IF EXISTS listing_terms_bump()",
                "DROP TABLE IF EXISTS listing_status_terms",
                "DROP TABLE IF EXISTS listing_terms_state",
            ],
        )
        .await
    }
}
