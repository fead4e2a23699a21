//! SQLite: the full-text index keeps every word's first letter and first two letters as terms of
//! their own (FTS5's `prefix='1 2'`), so a last word of one or two letters — what a person has typed
//! when results start to appear — reads one list of listings instead of merging the lists of every
//! word it begins.
//!
//! A typed last word is a prefix. One with at most eight completions is spelled out as those words
//! (migration 28); one with more, which is nearly every one- or two-letter word, stays a prefix query,
//! and FTS5 answers that by merging, in memory, the lists of every indexed word that begins with it.
//! At 100k demo listings `a` took 104 ms, `s` 251 ms and `team p` 57 ms on the server, read cache
//! off; at a million listings 1.0 s, 2.4 s and 0.49 s, each holding one of the few search slots the
//! whole instance shares. With the prefix index they are one list each, read newest first and cut at
//! the count's cap like any common word's (docs/BENCHMARKS.md, forty-fifth sitting).
//!
//! What it costs: the index's data grows from 40 to 100 MB at 100k listings (every word is written
//! three times: itself, its first letter and its first two), its rebuild from 2.6 s to 6.2 s (the
//! `sqlite3` shell), and so does a listing's re-index when its text changes. Lengths of three and more
//! keep the spelled-out completions: the demo's three-letter prefixes were 5.8–7.2 ms at a million
//! listings. The matches are the same as before: only the way FTS5 finds them changes. PostgreSQL's
//! prefix search reads its own index; nothing changes there.
//!
//! The migration rebuilds the index at the server's start (101 s at a million demo listings, 4.8 s at
//! 100k, on the benchmark machine).

use crate::m20261122_000002_search::{SQLITE_FTS_DOWN, sqlite_fts_with};
use crate::m20261201_000061_category_tokens::{NOT_DEFERRED, indexed};
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The FTS5 option that adds the prefix indexes.
pub const PREFIXES: &str = "prefix='1 2'";

/// The index and its triggers written again, with the FTS5 `options` (empty: as migration 61 wrote them).
fn index_with(options: &str) -> Vec<String> {
    let mut s: Vec<String> = SQLITE_FTS_DOWN.iter().map(|d| (*d).to_owned()).collect();
    s.extend(sqlite_fts_with(&indexed(), NOT_DEFERRED, options));
    s
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Sqlite, &index_with(&format!(", {PREFIXES}"))).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Sqlite, &index_with("")).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::m20261122_000002_search::sqlite_fts_when;

    #[test]
    fn the_index_is_written_again_with_its_prefixes_and_back_as_migration_61_wrote_it() {
        let up = index_with(&format!(", {PREFIXES}"));
        let create =
            |s: &[String]| s.iter().find(|x| x.starts_with("CREATE VIRTUAL TABLE")).cloned().expect("the index");
        assert!(create(&up).ends_with(", prefix='1 2')"), "{up:?}");
        // The triggers keep standing aside for an import.
        assert_eq!(up.iter().filter(|s| s.contains(NOT_DEFERRED)).count(), 2, "{up:?}");
        let down = index_with("");
        assert!(!create(&down).contains("prefix"), "{down:?}");
        assert!(down.ends_with(&sqlite_fts_when(&indexed(), NOT_DEFERRED)), "{down:?}");
    }
}
