//! PostgreSQL: a search ranks its candidates with `ts_rank` instead of `ts_rank_cd`.
//!
//! What it costs: `ts_rank_cd` zero-fills a block of 32 KiB for each word of the query at every row
//! it ranks (in PostgreSQL 13 and later each query word's positions have room for 16 384 entries),
//! and a search ranks up to 1 000 candidates. In pgbench (100k demo listings, 2 clients, the whole
//! `listing_text_search`) the function ran 1.3–1.6 times as many calls a second with `ts_rank`:
//! `invoices` 589 -> 819, `kanban` 785 -> 1 027, `workflow` 1 193 -> 1 554, `captions` 609 -> 994.
//!
//! What it ranks: `ts_rank_cd` adds up every occurrence of a word (a cover each), so a description
//! that repeats a word eleven times (weight D, 0.1 each) outranked a listing named by it (weight A,
//! 1.0). `ts_rank` counts a word's best-weighted occurrence whole and each further one less (the
//! n-th by 1/n²), as SQLite's bm25 saturates a word's frequency. Both use the same weights (A 1.0,
//! B 0.4, C 0.2, D 0.1). Words near each other still rank higher when a query has several.
//!
//! The rest of `listing_text_search` is migration 39's, unchanged; the filtered search, ranked in
//! its own statement, changes with this migration's release.

use crate::m20261126_000039_exact_word_search::exact_word_function;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The function ranks in three places: its counting scan, its sequential scan and its bitmap scan.
const RANKED_IN: usize = 3;

/// `listing_text_search` ranking with `ts_rank`; an error if migration 39's text ranks elsewhere.
pub(crate) fn saturating_function() -> Result<String, DbErr> {
    let text = exact_word_function()?;
    match text.matches("ts_rank_cd(").count() {
        RANKED_IN => Ok(text.replace("ts_rank_cd(", "ts_rank(")),
        n => Err(DbErr::Migration(format!("listing_text_search ranks in {n} places, not {RANKED_IN}"))),
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &[saturating_function()?]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &[exact_word_function()?]).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_rank_changes() {
        let text = super::saturating_function().expect("migration 39's text ranks in three places");
        assert!(!text.contains("ts_rank_cd"), "{text}");
        assert_eq!(text.matches("ts_rank(").count(), super::RANKED_IN, "{text}");
    }
}
