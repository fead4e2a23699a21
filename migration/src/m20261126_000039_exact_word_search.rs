//! PostgreSQL: a one-word search whose typed word is the only term it begins (in the status searched,
//! with the term counts current) matches that term exactly instead of as a prefix.
//!
//! The search's last word is a prefix (`'invoic':*`), so results show while a word is typed. GIN
//! answers a prefix by collecting every match of every term in the range into a bitmap before the
//! heap is read, and each candidate is checked again; an exact term streams its posting list. When
//! the kept counts (migration 34) say the status's listings hold no other term that begins with the
//! word, both match the same listings, and `ts_rank_cd` gives each the same rank (checked over every
//! match of `invoices`, `kanban`, `captions`, `tracing` and `workflow` at 100k demo listings). Measured
//! in psql, 100k, warm, the whole function: `invoices` (4 540 live listings) 7.0 -> 4.7 ms, `kanban`
//! and `captions` (2 000) 4.8-5.0 -> 3.3-3.5 ms; a word on most listings (a sequential scan) and a
//! word with several completions are as before.
//!
//! The rest of `listing_text_search` is migration 34's, unchanged.

use crate::m20261126_000034_common_terms::text_search_function;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Migration 34's function with the exact match: each `(from, to)` rewrites one part of its text.
const EDITS: [(&str, &str); 3] = [
    ("rows_in real; BEGIN", "rows_in real; one text; BEGIN"),
    (
        "SELECT s.changes - s.refreshed, k.top, k.terms INTO pending, top, terms FROM listing_terms_state s, \
         LATERAL (SELECT max(t.docs) AS top, count(*) AS terms FROM listing_status_terms t",
        "SELECT s.changes - s.refreshed, k.top, k.terms, k.one INTO pending, top, terms, one \
         FROM listing_terms_state s, \
         LATERAL (SELECT max(t.docs) AS top, count(*) AS terms, min(t.term) AS one FROM listing_status_terms t",
    ),
    (
        "known := coalesce(top, 0); total := least(known, cap); ",
        "known := coalesce(top, 0); total := least(known, cap); \
         IF terms = 1 AND one = lexeme AND right(q::text, 2) = ':*' THEN q := left(q::text, -2)::tsquery; END IF; ",
    ),
];

/// `listing_text_search` with [`EDITS`] applied; an error if migration 34's text no longer holds a part.
pub(crate) fn exact_word_function() -> Result<String, DbErr> {
    crate::rewrite(text_search_function(), "listing_text_search", &EDITS)
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &[exact_word_function()?]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &[text_search_function()]).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_edit_applies_once() {
        let text = super::exact_word_function().expect("each part is in migration 34's text once");
        assert!(text.contains("one = lexeme"), "{text}");
    }
}
