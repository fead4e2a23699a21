//! PostgreSQL: every term of the searchable listings kept with its listing count per status, so a
//! one-word search takes its total from the table instead of counting its matches.
//!
//! `listing_text_search` counted up to 10 001 matches of every search, a heap visit each (~2 µs
//! here), and built the GIN bitmap of every match first: a word on 33 000 live listings of 100k took
//! 17–24 ms a call (85–93 ms p99 over HTTP at 8 connections), one on 4 500 took 16 ms. Now:
//! - with the table current, a word that is one kept term (itself, or the only term its prefix
//!   begins) has that term's count as its total, exact, and only its candidates are read;
//! - when the table is behind, or the prefix begins several terms, a word whose largest kept count
//!   less the changes since reaches the cap has the cap as its total ("10 000+");
//! - any other search (several words, a prefix of several terms under the cap) counts as before.
//!
//! The candidates are the first ones in the table's order, as counting's bitmap scan reads them, by
//! whichever scan reads less: a sequential scan stops after about `candidates × rows / matches`
//! rows (2 600 for that word, 2 ms), where the bitmap of a word on 400 000 listings of a million
//! alone takes tens of milliseconds.
//!
//! - `listing_status_terms`: per status, each term with its listing count (`ts_stat` of the status's
//!   vectors), brought up to date by `listing_terms_refresh()` (the worker, `refresh_search_terms`).
//! - `listing_terms_state`: `changes` moves with every row written to `listing_search`; `refreshed`
//!   is the `changes` the table was counted at. A change moves a term's count in a status by one at
//!   most, so `docs - (changes - refreshed)` is a lower bound however far behind the table is, and
//!   the count is exact when nothing changed: a stale table makes a search count, never report a
//!   total it does not have.
//!
//! SQLite has its own `listing_terms` (migration 32).

use crate::m20261125_000033_text_search_ids::RANKED_AS_SCANNED;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Every term of `status` with its listing count, as the kept table holds them.
fn counted(status: &str) -> String {
    format!(
        "SELECT '{status}'::varchar AS status, word AS term, ndoc AS docs \
         FROM ts_stat('SELECT doc FROM listing_search WHERE status = ''{status}''')"
    )
}

/// A query of one word (the search's last word is a prefix: `'word':*`). With the table current
/// and one kept term the word can be (itself, or the only term it begins), that term's count is
/// the total: only the candidates are read. Otherwise, when the largest kept count it covers,
/// less the changes since, still reaches the cap, the total is the cap ("10 000+"). Else it
/// counts as before. The scan for the candidates: a sequential one reads about candidates ×
/// rows / matches rows, the bitmap costs something for each match. Measured (psql, warm): at
/// 100k, `workflow` (38 600 matches) 2.4 ms sequential against 11 ms by bitmap, `invoices`
/// (5 200) 4.5 ms by bitmap; at a million, `invoices` (51 600) 17 against 47 ms, words on
/// 23 000 even (14–25 ms either way). So the sequential scan when matches² ≥ 0.5 × candidates
/// × rows (at a million rows and 1 000 candidates: from 22 400 matches). Sequential scans
/// of this table start at its first page (synchronize_seqscans off), so both scans hand out the
/// matches in the same order and pick the candidates counting picks. All of a word's matches
/// fit in the candidates when it is on fewer listings than that: the bitmap, without a look at
/// the table's size. The kept count is one lookup beside the change count (a rare word's
/// search: 0.30 -> 0.35 ms in psql).
pub(crate) fn text_search_function() -> String {
    "CREATE OR REPLACE FUNCTION listing_text_search(q tsquery, want text, cap integer, candidates integer) \
     RETURNS TABLE (listing_id bigint, rank real, matches bigint) LANGUAGE plpgsql STABLE \
     SET enable_seqscan = off SET enable_bitmapscan = on SET synchronize_seqscans = off AS $$ \
     DECLARE word text[]; lexeme text; last text; top bigint; terms bigint; pending bigint; \
       known bigint; total bigint; rows_in real; BEGIN \
       IF numnode(q) = 1 AND want IN ('live', 'scheduled') THEN \
         word := regexp_match(q::text, '^''((?:[^'']|'''')*)''(?::(\\*?)[A-D]*)?$'); \
       END IF; \
       IF word IS NOT NULL THEN \
         lexeme := replace(word[1], '''''', ''''); \
         last := CASE WHEN word[2] = '*' THEN lexeme || chr(1114111) ELSE lexeme END; \
         SELECT s.changes - s.refreshed, k.top, k.terms INTO pending, top, terms FROM listing_terms_state s, \
           LATERAL (SELECT max(t.docs) AS top, count(*) AS terms FROM listing_status_terms t \
             WHERE t.status = want AND t.term >= lexeme AND t.term <= last) k WHERE s.id = 1; \
         IF pending = 0 AND terms <= 1 THEN \
           known := coalesce(top, 0); total := least(known, cap); \
         ELSIF top - pending >= cap THEN \
           known := top - pending; total := cap; \
         END IF; \
       END IF; \
       IF total IS NULL THEN \
         RETURN QUERY WITH m AS MATERIALIZED (SELECT s.listing_id AS id, \
             CASE WHEN row_number() OVER () <= candidates THEN ts_rank_cd(s.doc, q) END AS r \
           FROM listing_search s WHERE s.doc @@ q AND s.status = want LIMIT cap) \
         SELECT c.id, c.r, n.matches FROM (SELECT count(*) AS matches FROM m) n \
         LEFT JOIN LATERAL (SELECT m.id, m.r FROM m LIMIT candidates) c ON true; \
         RETURN; \
       END IF; \
       IF candidates <= 0 OR known = 0 THEN \
         RETURN QUERY SELECT NULL::bigint, NULL::real, total; RETURN; \
       END IF; \
       IF known > candidates THEN \
         SELECT c.reltuples INTO rows_in FROM pg_class c WHERE c.oid = 'listing_search'::regclass; \
       END IF; \
       IF rows_in > 0 AND known::float8 * known >= 0.5 * candidates * rows_in THEN \
         PERFORM set_config('enable_seqscan', 'on', true), set_config('enable_bitmapscan', 'off', true); \
         RETURN QUERY EXECUTE 'SELECT s.listing_id, ts_rank_cd(s.doc, $1), $3 FROM listing_search s \
           WHERE s.doc @@ $1 AND s.status = $2 LIMIT $4' USING q, want, total, candidates; \
       ELSE \
         RETURN QUERY SELECT s.listing_id, ts_rank_cd(s.doc, q), total FROM listing_search s \
           WHERE s.doc @@ q AND s.status = want LIMIT candidates; \
       END IF; \
     END $$"
        .to_owned()
}

fn postgres_up() -> Vec<String> {
    vec![
        // `refreshed` starts behind, so a database migrated with listings is counted at the first refresh.
        "CREATE TABLE listing_terms_state (id INTEGER PRIMARY KEY CHECK (id = 1), changes BIGINT NOT NULL, \
         refreshed BIGINT NOT NULL)"
            .to_owned(),
        "INSERT INTO listing_terms_state (id, changes, refreshed) VALUES (1, 0, -1)".to_owned(),
        // Bytewise order ("C"), so the terms a prefix begins are one range of the key.
        "CREATE TABLE listing_status_terms (status VARCHAR NOT NULL, term TEXT COLLATE \"C\" NOT NULL, \
         docs BIGINT NOT NULL, PRIMARY KEY (status, term))"
            .to_owned(),
        "CREATE FUNCTION listing_terms_bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         UPDATE listing_terms_state SET changes = changes + 1 WHERE id = 1; RETURN NULL; END $$"
            .to_owned(),
        "CREATE TRIGGER listing_terms_bumped AFTER INSERT OR UPDATE OR DELETE ON listing_search FOR EACH ROW \
         EXECUTE FUNCTION listing_terms_bump()"
            .to_owned(),
        // Counts every term again and writes the terms whose count changed; false when the table is
        // already current. One refresh at a time (the advisory lock): a second instance's waits, then
        // finds it done. `changes` is read before `ts_stat` takes its snapshot, so a change committed
        // in between is both counted and pending: the table is marked behind, never ahead.
        format!(
            "CREATE FUNCTION listing_terms_refresh() RETURNS boolean LANGUAGE plpgsql AS $$ \
             DECLARE c bigint; r bigint; BEGIN \
               PERFORM pg_advisory_xact_lock(hashtext('listing_terms_refresh')); \
               SELECT changes, refreshed INTO c, r FROM listing_terms_state WHERE id = 1; \
               IF c = r THEN RETURN false; END IF; \
               WITH fresh AS MATERIALIZED ({live} UNION ALL {scheduled}), \
                 written AS (INSERT INTO listing_status_terms (status, term, docs) SELECT * FROM fresh \
                   ON CONFLICT (status, term) DO UPDATE SET docs = EXCLUDED.docs \
                   WHERE listing_status_terms.docs <> EXCLUDED.docs RETURNING 1) \
               DELETE FROM listing_status_terms t \
                 WHERE NOT EXISTS (SELECT 1 FROM fresh f WHERE f.status = t.status AND f.term = t.term); \
               UPDATE listing_terms_state SET refreshed = c WHERE id = 1; \
               RETURN true; END $$",
            live = counted("live"),
            scheduled = counted("scheduled")
        ),
        text_search_function(),
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
                "DROP FUNCTION IF EXISTS listing_terms_refresh()",
                "DROP TRIGGER IF EXISTS listing_terms_bumped ON listing_search",
                "DROP FUNCTION IF EXISTS listing_terms_bump()",
                "DROP TABLE IF EXISTS listing_status_terms",
                "DROP TABLE IF EXISTS listing_terms_state",
            ],
        )
        .await
    }
}
