//! Full-text search over listings: name, tagline, short and long description, features, keywords and
//! tags. SQLite gets an external-content FTS5 table kept in step by triggers; PostgreSQL a weighted
//! tsvector column kept in step by a trigger, with a GIN index. Triggers fire only when a searched
//! column changes, so vote and view counters do not re-index text.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

pub(crate) const COLS: &str = "name, tagline, short_description, description, features, keywords, tags";

/// The FTS5 table over `cols` of listings and the triggers that keep it in step (shared with the
/// migrations that add the status column and the category tokens).
pub(crate) fn sqlite_fts(cols: &str) -> Vec<String> {
    sqlite_fts_when(cols, "")
}

/// [`sqlite_fts`] with the insert and update triggers written with the condition `when` (`WHEN …`,
/// or empty for none): migration 61 has them stand aside for an import.
pub(crate) fn sqlite_fts_when(cols: &str, when: &str) -> Vec<String> {
    sqlite_fts_with(cols, when, "")
}

/// [`sqlite_fts_when`] with more FTS5 options (`, prefix='1 2'`: migration 62), or none (empty).
pub(crate) fn sqlite_fts_with(cols: &str, when: &str, options: &str) -> Vec<String> {
    sqlite_fts_watching(cols, cols, when, options)
}

/// [`sqlite_fts_with`] whose update trigger runs when one of the columns `watched` is written
/// (`cols` but a generated column, which an UPDATE never names: migration 65 watches the columns it
/// is made of instead).
pub(crate) fn sqlite_fts_watching(cols: &str, watched: &str, when: &str, options: &str) -> Vec<String> {
    let when = if when.is_empty() { String::new() } else { format!(" {when}") };
    let vals = |prefix: &str| cols.split(", ").map(|c| format!("{prefix}.{c}")).collect::<Vec<_>>().join(", ");
    let (new_vals, old_vals) = (vals("new"), vals("old"));
    vec![
        format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS listings_fts USING fts5({cols}, content='listings', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'{options})"
        ),
        format!(
            "CREATE TRIGGER IF NOT EXISTS listings_fts_ai AFTER INSERT ON listings{when} BEGIN INSERT INTO listings_fts(rowid, {cols}) VALUES (new.id, {new_vals}); END"
        ),
        format!(
            "CREATE TRIGGER IF NOT EXISTS listings_fts_ad AFTER DELETE ON listings BEGIN INSERT INTO listings_fts(listings_fts, rowid, {cols}) VALUES ('delete', old.id, {old_vals}); END"
        ),
        format!(
            "CREATE TRIGGER IF NOT EXISTS listings_fts_au AFTER UPDATE OF {watched} ON listings{when} BEGIN \
             INSERT INTO listings_fts(listings_fts, rowid, {cols}) VALUES ('delete', old.id, {old_vals}); \
             INSERT INTO listings_fts(rowid, {cols}) VALUES (new.id, {new_vals}); END"
        ),
        // Index any rows that existed before.
        "INSERT INTO listings_fts(listings_fts) VALUES ('rebuild')".to_owned(),
    ]
}

/// Drops the FTS5 table and its triggers.
pub(crate) const SQLITE_FTS_DOWN: [&str; 4] = [
    "DROP TRIGGER IF EXISTS listings_fts_ai",
    "DROP TRIGGER IF EXISTS listings_fts_ad",
    "DROP TRIGGER IF EXISTS listings_fts_au",
    "DROP TABLE IF EXISTS listings_fts",
];

fn sqlite_up() -> Vec<String> {
    sqlite_fts(COLS)
}

/// PostgreSQL's tsvector column on listings, its trigger and GIN index (migration 30 moves search to a
/// table of its own and restores this in its `down`).
pub(crate) fn postgres_up() -> Vec<String> {
    vec![
        "ALTER TABLE listings ADD COLUMN IF NOT EXISTS search_vector tsvector".to_owned(),
        "CREATE OR REPLACE FUNCTION listings_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         NEW.search_vector := \
           setweight(to_tsvector('english', coalesce(NEW.name, '')), 'A') || \
           setweight(to_tsvector('english', coalesce(NEW.tagline, '') || ' ' || coalesce(NEW.keywords, '') || ' ' || coalesce(NEW.tags, '')), 'B') || \
           setweight(to_tsvector('english', coalesce(NEW.short_description, '') || ' ' || coalesce(NEW.features, '')), 'C') || \
           setweight(to_tsvector('english', coalesce(NEW.description, '')), 'D'); \
         RETURN NEW; END $$"
            .to_owned(),
        format!("CREATE TRIGGER listings_search_vector_trg BEFORE INSERT OR UPDATE OF {COLS} ON listings FOR EACH ROW EXECUTE FUNCTION listings_search_vector()"),
        "UPDATE listings SET name = name".to_owned(),
        "CREATE INDEX IF NOT EXISTS ix_listings_search ON listings USING GIN (search_vector)".to_owned(),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let stmts = match manager.get_database_backend() {
            DbBackend::Sqlite => sqlite_up(),
            DbBackend::Postgres => postgres_up(),
            other => return Err(DbErr::Migration(format!("full-text search is not written for {other:?}"))),
        };
        let db = manager.get_connection();
        for s in stmts {
            db.execute_unprepared(&s).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let stmts: &[&str] = match manager.get_database_backend() {
            DbBackend::Sqlite => &SQLITE_FTS_DOWN,
            _ => &[
                "DROP TRIGGER IF EXISTS listings_search_vector_trg ON listings",
                "DROP FUNCTION IF EXISTS listings_search_vector()",
                "DROP INDEX IF EXISTS ix_listings_search",
                "ALTER TABLE listings DROP COLUMN IF EXISTS search_vector",
            ],
        };
        let db = manager.get_connection();
        for s in stmts {
            db.execute_unprepared(s).await?;
        }
        Ok(())
    }
}
