//! PostgreSQL: `listing_text_search` keeps only ids and ranks in its materialised matches.
//!
//! Migration 30 counted the matches of a search through a materialised set of (id, vector), meant to
//! hold pointers to vectors stored out of line. PostgreSQL moves a value out of line only from a row
//! over about 2 kB (or one that already points out of line, as the vectors copied from the old
//! column did), so on a database created since, every vector is inline: a set of 10 001 matches held
//! 7 MB of vectors, more than `work_mem`, and was written to a temporary file at every common-word
//! search (100k listings: 30–70 ms a call; over HTTP @8, 100 req/s and p99 131 ms). Now each of the
//! first `candidates` matches is ranked as the index hands it out and only (id, rank) is kept; the
//! other matches are only counted. Same answers, in the same order.

use crate::m20261125_000030_search_table::TEXT_SEARCH;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

pub(crate) const RANKED_AS_SCANNED: &str = "CREATE OR REPLACE FUNCTION listing_text_search(q tsquery, want text, cap integer, \
     candidates integer) RETURNS TABLE (listing_id bigint, rank real, matches bigint) LANGUAGE plpgsql STABLE \
     SET enable_seqscan = off AS $$ BEGIN RETURN QUERY \
       WITH m AS MATERIALIZED (SELECT s.listing_id AS id, \
           CASE WHEN row_number() OVER () <= candidates THEN ts_rank_cd(s.doc, q) END AS r \
         FROM listing_search s WHERE s.doc @@ q AND s.status = want LIMIT cap) \
       SELECT c.id, c.r, n.matches FROM (SELECT count(*) AS matches FROM m) n \
       LEFT JOIN LATERAL (SELECT m.id, m.r FROM m LIMIT candidates) c ON true; END $$";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &[RANKED_AS_SCANNED]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &[format!("CREATE OR REPLACE {TEXT_SEARCH}")]).await
    }
}
