//! SQLite: the full-text index's terms with the number of listings that hold each, kept as a table.
//!
//! A search read both from `fts5vocab`, which counts a term's listings by walking its whole doclist
//! at every read: the last word's completions (5.5 ms for `workflow` at a million listings) and bm25's
//! document counts (7.8 ms). `listing_terms` answers both with an indexed lookup. The store brings it
//! up to date from `fts5vocab` after listings change (`refresh_search_terms`); until then
//! `listing_terms_state` says it is behind (`changes` moves with every change to an indexed column,
//! `refreshed` is the `changes` it was last brought up to), and a search takes its completions from
//! `fts5vocab` as before, so a new word is found at once.
//!
//! PostgreSQL has no such table (its search does not use document counts).

use crate::m20261122_000002_search::COLS;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

const BUMP: &str = "UPDATE listing_terms_state SET changes = changes + 1";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(
            manager,
            DbBackend::Sqlite,
            &[
                "CREATE TABLE IF NOT EXISTS listing_terms (term TEXT NOT NULL PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID"
                    .to_owned(),
                "CREATE TABLE IF NOT EXISTS listing_terms_state (id INTEGER PRIMARY KEY CHECK (id = 1), \
                 changes INTEGER NOT NULL, refreshed INTEGER NOT NULL)"
                    .to_owned(),
                "INSERT OR IGNORE INTO listing_terms_state (id, changes, refreshed) VALUES (1, 0, 0)".to_owned(),
                "INSERT OR IGNORE INTO listing_terms (term, docs) SELECT term, doc FROM listings_fts_vocab".to_owned(),
                format!("CREATE TRIGGER IF NOT EXISTS listing_terms_ai AFTER INSERT ON listings BEGIN {BUMP}; END"),
                format!("CREATE TRIGGER IF NOT EXISTS listing_terms_ad AFTER DELETE ON listings BEGIN {BUMP}; END"),
                format!(
                    "CREATE TRIGGER IF NOT EXISTS listing_terms_au AFTER UPDATE OF {COLS}, status ON listings BEGIN {BUMP}; END"
                ),
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(
            manager,
            DbBackend::Sqlite,
            &[
                "DROP TRIGGER IF EXISTS listing_terms_au",
                "DROP TRIGGER IF EXISTS listing_terms_ad",
                "DROP TRIGGER IF EXISTS listing_terms_ai",
                "DROP TABLE IF EXISTS listing_terms_state",
                "DROP TABLE IF EXISTS listing_terms",
            ],
        )
        .await
    }
}
