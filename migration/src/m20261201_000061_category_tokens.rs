//! SQLite: the full-text index also holds each listing's categories, one token per linked category
//! (`CATEGORY_MARK` and the category's id), so a word searched within a category is one match in the
//! index — the word's doclist merged with the tree's tokens — instead of every match of the word
//! checked against the list of the category's listings. At 100k demo listings `workflow` has 42 954
//! matches and `api-tools` 1 554 of them: counting them took 16–20 ms as checks, 3 ms as a match
//! (the `sqlite3` shell); `developer-tools`, a tree of six categories, 8 ms.
//!
//! The tokens are kept on the listing (`category_tokens`, beside the text the index is built from, so
//! the index's update trigger deletes exactly what it indexed) by triggers on `listing_categories`.
//! The mark is a private-use character: FTS5's tokenizer keeps it inside a token, and a person's
//! search words never hold one (only letters and digits survive), so nobody types a category token
//! and no typed word completes to one. PostgreSQL checks the category on its kept word rows; nothing
//! changes there.
//!
//! A listing's links are written after the listing, so its tokens would be indexed twice: once empty
//! with the listing, again when its first link arrives (a bulk load of 100k demo listings, one pair
//! of runs: 62 s instead of 50). An import (`adapters-storage`, `import.rs`) sets `listings_fts_deferred` for its
//! transaction: the index's insert and update triggers and the link triggers stand aside, and the
//! import writes its listings' tokens and their index rows by set at its end (`index_imported`).

use crate::m20261122_000002_search::{COLS, SQLITE_FTS_DOWN, sqlite_fts, sqlite_fts_when};
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The character that begins every category token (U+E000, the first of the private use area).
pub const CATEGORY_MARK: char = '\u{E000}';

/// The tokens of the listing `id` (an SQL expression) as its links say, in category order.
fn tokens_of(id: &str) -> String {
    format!(
        "COALESCE((SELECT group_concat(t, ' ') FROM (SELECT char({}) || lc.category_id AS t FROM listing_categories lc \
         WHERE lc.listing_id = {id} ORDER BY lc.category_id)), '')",
        CATEGORY_MARK as u32
    )
}

/// Brings the tokens of the listing `id` up to date (written only when they changed).
fn refresh(id: &str) -> String {
    let tokens = tokens_of(id);
    format!("UPDATE listings SET category_tokens = {tokens} WHERE id = {id} AND category_tokens IS NOT {tokens}")
}

/// The columns of the full-text index, in its order.
pub(crate) fn indexed() -> String {
    format!("{COLS}, status, category_tokens")
}

/// A trigger's condition: no import has set `listings_fts_deferred` in this transaction.
pub(crate) const NOT_DEFERRED: &str = "WHEN NOT EXISTS (SELECT 1 FROM listings_fts_deferred)";

/// What an import that set `listings_fts_deferred` runs at its end for the listings with ids from `?1`
/// to `?2` (bound, SQLite's numbered parameters): their tokens by set, then their rows of the index
/// (the triggers stood aside), whose columns are `cols` (migration 65 adds one).
pub(crate) fn index_imported_of(cols: &str) -> [String; 2] {
    [
        format!("UPDATE listings SET category_tokens = {} WHERE id BETWEEN ?1 AND ?2", tokens_of("listings.id")),
        format!("INSERT INTO listings_fts (rowid, {cols}) SELECT id, {cols} FROM listings WHERE id BETWEEN ?1 AND ?2"),
    ]
}

fn up() -> Vec<String> {
    let mut s = vec![
        "ALTER TABLE listings ADD COLUMN category_tokens TEXT NOT NULL DEFAULT ''".to_owned(),
        format!("UPDATE listings SET category_tokens = {}", tokens_of("listings.id")),
        "CREATE TABLE listings_fts_deferred (id INTEGER PRIMARY KEY CHECK (id = 1))".to_owned(),
    ];
    s.extend(SQLITE_FTS_DOWN.iter().map(|d| (*d).to_owned()));
    // The index and its triggers as migration 2 writes them, the insert and update triggers standing
    // aside for an import.
    s.extend(sqlite_fts_when(&indexed(), NOT_DEFERRED));
    s.extend([
        format!(
            "CREATE TRIGGER listing_category_tokens_added AFTER INSERT ON listing_categories {NOT_DEFERRED} \
             BEGIN {}; END",
            refresh("NEW.listing_id")
        ),
        format!(
            "CREATE TRIGGER listing_category_tokens_taken AFTER DELETE ON listing_categories {NOT_DEFERRED} \
             BEGIN {}; END",
            refresh("OLD.listing_id")
        ),
        format!(
            "CREATE TRIGGER listing_category_tokens_moved AFTER UPDATE ON listing_categories {NOT_DEFERRED} \
             BEGIN {}; {}; END",
            refresh("OLD.listing_id"),
            refresh("NEW.listing_id")
        ),
    ]);
    s
}

fn down() -> Vec<String> {
    let mut s: Vec<String> = [
        "DROP TRIGGER IF EXISTS listing_category_tokens_added",
        "DROP TRIGGER IF EXISTS listing_category_tokens_taken",
        "DROP TRIGGER IF EXISTS listing_category_tokens_moved",
    ]
    .map(str::to_owned)
    .into();
    s.extend(SQLITE_FTS_DOWN.iter().map(|d| (*d).to_owned()));
    s.extend(sqlite_fts(&format!("{COLS}, status")));
    s.push("DROP TABLE IF EXISTS listings_fts_deferred".to_owned());
    s.push("ALTER TABLE listings DROP COLUMN category_tokens".to_owned());
    s
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Sqlite, &up()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Sqlite, &down()).await
    }
}
