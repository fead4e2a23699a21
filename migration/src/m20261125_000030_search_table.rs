//! PostgreSQL: text search moves from a column of `listings` to a narrow table of its own,
//! `listing_search` (listing id, status, weighted `tsvector`), holding only the listings a search can
//! return (live and scheduled), kept in step by triggers on `listings`, with a GIN index.
//!
//! Why (measured on 100k generated listings, a word on 33 000 live listings):
//! - the listing row is wide, so its `tsvector` was stored out of line; PostgreSQL chose a sequential
//!   scan and fetched each row's vector from TOAST to test it: 96 000 buffers and 75 ms to count
//!   10 001 matches, 10 ms to rank 1 000 candidates;
//! - here every vector is out of line on purpose (`toast_tuple_target = 128`), so the heap is a few
//!   pages of ids and statuses (5.6 MB at 100k). Counting reads the index and those pages and never
//!   a vector; only the ranked candidates' vectors are fetched. (That held only for vectors copied
//!   from the old column, already out of line: PostgreSQL moves values out of rows under 2 kB only
//!   then, so on a new database they are inline. Migration 33 makes the search fit that.)
//!
//! The planner does not price TOAST fetches, so it would still scan the small heap and fetch every
//! vector (53 ms). `listing_text_search` runs the search with `enable_seqscan = off` set for its own
//! duration only: one statement that matches through the index, counts up to a cap and ranks the
//! first candidates (5 ms for that word, 0.6 ms for a rare one).
//!
//! SQLite keeps its FTS5 table (migrations 2, 4 and 28); nothing changes there.

use crate::m20261122_000002_search::postgres_up;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The searched columns of `listings`, in the order `listing_search_doc` takes them.
const DOC_COLS: [&str; 7] = ["name", "tagline", "keywords", "tags", "short_description", "features", "description"];

/// The statuses a search can ask for (`StatusFilter`): live and upcoming.
const SEARCHABLE: &str = "('live', 'scheduled')";

/// `listing_text_search` as this migration creates it (migration 33 replaces its body). Matches of
/// `q` among listings in status `want`: up to `cap` of them counted (`matches`, the same on every row),
/// and the first `candidates` the index hands out, each with its rank. With no candidate (none asked
/// for, or no match) one row carries the count, its id and rank null. PL/pgSQL keeps the statement's
/// plan for the session; a SQL function with a SET clause is not inlined and plans its body at every
/// call (pgbench, rare word: 5 700 -> 7 000 calls a second).
pub(crate) const TEXT_SEARCH: &str = "FUNCTION listing_text_search(q tsquery, want text, cap integer, candidates integer) \
     RETURNS TABLE (listing_id bigint, rank real, matches bigint) LANGUAGE plpgsql STABLE \
     SET enable_seqscan = off AS $$ BEGIN RETURN QUERY \
       WITH m AS MATERIALIZED (SELECT s.listing_id, s.doc FROM listing_search s \
         WHERE s.doc @@ q AND s.status = want LIMIT cap) \
       SELECT c.listing_id, ts_rank_cd(c.doc, q), n.matches FROM (SELECT count(*) AS matches FROM m) n \
       LEFT JOIN LATERAL (SELECT * FROM m LIMIT candidates) c ON true; END $$";

/// The arguments `prefix.name, prefix.tagline, …` of `listing_search_doc`, from the row `prefix` (`NEW`).
fn doc_args(prefix: &str) -> String {
    DOC_COLS.iter().map(|c| format!("{prefix}.{c}")).collect::<Vec<_>>().join(", ")
}

/// `OLD.c IS DISTINCT FROM NEW.c OR …` for each of `cols`.
pub(crate) fn changed(cols: &[&str]) -> String {
    cols.iter().map(|c| format!("OLD.{c} IS DISTINCT FROM NEW.{c}")).collect::<Vec<_>>().join(" OR ")
}

/// The function behind the triggers that keep `listing_search`, created by `create` (`CREATE`, or
/// `CREATE OR REPLACE`), writing each row's id, status and document and, for each of `more`, a column
/// from an expression of `NEW` (none here; migration 64 adds the listing's filter values, and its
/// `down` writes this migration's again).
pub(crate) fn follow_function(create: &str, more: &[(&str, String)]) -> String {
    let cols: String = more.iter().map(|(c, _)| format!(", {c}")).collect();
    let vals: String = more.iter().map(|(_, v)| format!(", {v}")).collect();
    let sets: String = more.iter().map(|(c, _)| format!(", {c} = EXCLUDED.{c}")).collect();
    format!(
        "{create} FUNCTION listing_search_follow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         IF NEW.status IN {SEARCHABLE} THEN \
           INSERT INTO listing_search (listing_id, status, doc{cols}) VALUES (NEW.id, NEW.status, listing_search_doc({new}){vals}) \
           ON CONFLICT (listing_id) DO UPDATE SET status = EXCLUDED.status, doc = EXCLUDED.doc{sets}; \
         ELSE \
           DELETE FROM listing_search WHERE listing_id = NEW.id; \
         END IF; \
         RETURN NULL; END $$",
        new = doc_args("NEW")
    )
}

/// The trigger that follows a change of a listing's searched columns (and, from migration 64, its
/// filter values: `more`) into `listing_search`.
pub(crate) fn changed_trigger(more: &[&str]) -> String {
    let cols: Vec<&str> = DOC_COLS.iter().copied().chain(["status"]).chain(more.iter().copied()).collect();
    format!(
        "CREATE TRIGGER listing_search_changed AFTER UPDATE OF {} ON listings FOR EACH ROW \
         WHEN ({}) EXECUTE FUNCTION listing_search_follow()",
        cols.join(", "),
        changed(&cols)
    )
}

fn postgres_search_table() -> Vec<String> {
    let params = DOC_COLS.iter().map(|c| format!("{c} text")).collect::<Vec<_>>().join(", ");
    vec![
        "CREATE TABLE listing_search (listing_id BIGINT PRIMARY KEY REFERENCES listings (id) ON DELETE CASCADE, \
         status VARCHAR NOT NULL, doc TSVECTOR NOT NULL) WITH (toast_tuple_target = 128)"
            .to_owned(),
        // The weights of migration 2: name A; tagline, keywords, tags B; short description, features C;
        // description D.
        format!(
            "CREATE FUNCTION listing_search_doc({params}) RETURNS tsvector LANGUAGE sql IMMUTABLE AS $$ SELECT \
             setweight(to_tsvector('english', coalesce(name, '')), 'A') || \
             setweight(to_tsvector('english', coalesce(tagline, '') || ' ' || coalesce(keywords, '') || ' ' || coalesce(tags, '')), 'B') || \
             setweight(to_tsvector('english', coalesce(short_description, '') || ' ' || coalesce(features, '')), 'C') || \
             setweight(to_tsvector('english', coalesce(description, '')), 'D') $$"
        ),
        follow_function("CREATE", &[]),
        format!(
            "CREATE TRIGGER listing_search_added AFTER INSERT ON listings FOR EACH ROW \
             WHEN (NEW.status IN {SEARCHABLE}) EXECUTE FUNCTION listing_search_follow()"
        ),
        changed_trigger(&[]),
        format!(
            "INSERT INTO listing_search (listing_id, status, doc) SELECT id, status, search_vector FROM listings \
             WHERE status IN {SEARCHABLE}"
        ),
        "CREATE INDEX ix_listing_search_doc ON listing_search USING GIN (doc)".to_owned(),
        format!("CREATE {TEXT_SEARCH}"),
        "DROP TRIGGER listings_search_vector_trg ON listings".to_owned(),
        "DROP FUNCTION listings_search_vector()".to_owned(),
        "DROP INDEX IF EXISTS ix_listings_search".to_owned(),
        // An interrupted bulk load may have left the old index to build; its column is gone.
        "DELETE FROM deferred_indexes WHERE name = 'ix_listings_search'".to_owned(),
        "ALTER TABLE listings DROP COLUMN search_vector".to_owned(),
        "ANALYZE listing_search".to_owned(),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &postgres_search_table()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        let params = DOC_COLS.iter().map(|_| "text").collect::<Vec<_>>().join(", ");
        let drops = [
            "DROP FUNCTION IF EXISTS listing_text_search(tsquery, text, integer, integer)".to_owned(),
            "DROP TRIGGER IF EXISTS listing_search_added ON listings".to_owned(),
            "DROP TRIGGER IF EXISTS listing_search_changed ON listings".to_owned(),
            "DROP FUNCTION IF EXISTS listing_search_follow()".to_owned(),
            "DROP TABLE IF EXISTS listing_search".to_owned(),
            format!("DROP FUNCTION IF EXISTS listing_search_doc({params})"),
        ];
        crate::execute_all(manager, &drops).await?;
        crate::execute_all(manager, &postgres_up()).await
    }
}

#[cfg(test)]
mod tests {
    /// A released migration is never edited: the function and the trigger are written as this
    /// migration first wrote them, whatever later ones add through the same helpers.
    #[test]
    fn the_follow_function_and_trigger_are_as_released() {
        let doc = "listing_search_doc(NEW.name, NEW.tagline, NEW.keywords, NEW.tags, NEW.short_description, \
                   NEW.features, NEW.description)";
        assert_eq!(
            super::follow_function("CREATE", &[]),
            format!(
                "CREATE FUNCTION listing_search_follow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.status \
                 IN ('live', 'scheduled') THEN INSERT INTO listing_search (listing_id, status, doc) VALUES (NEW.id, \
                 NEW.status, {doc}) ON CONFLICT (listing_id) DO UPDATE SET status = EXCLUDED.status, doc = \
                 EXCLUDED.doc; ELSE DELETE FROM listing_search WHERE listing_id = NEW.id; END IF; RETURN NULL; END $$"
            )
        );
        let cols = ["name", "tagline", "keywords", "tags", "short_description", "features", "description", "status"];
        let changed = cols.map(|c| format!("OLD.{c} IS DISTINCT FROM NEW.{c}")).join(" OR ");
        assert_eq!(
            super::changed_trigger(&[]),
            format!(
                "CREATE TRIGGER listing_search_changed AFTER UPDATE OF name, tagline, keywords, tags, \
                 short_description, features, description, status ON listings FOR EACH ROW WHEN ({changed}) \
                 EXECUTE FUNCTION listing_search_follow()"
            )
        );
    }
}
