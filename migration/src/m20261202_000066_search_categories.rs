//! PostgreSQL: each search row's `facets` (migration 64) also holds its listing's status (`t:` and
//! the status) and its categories, one element per link (`k:` and the category's id), so a search of
//! words within a category, with or without a stage, a pricing model or a country, and a category
//! with values and no words, is one GIN scan of `facets` (the values and the status contained, the
//! tree's categories overlapped), ANDed with the words' bitmap where there are words — as SQLite's
//! category tokens are one match in its index (migration 61).
//!
//! Why (100k demo listings, cache off, the server's median of 7 before and after, interleaved):
//! such a search counted its matches by checking each against the list of the tree's links, read
//! from `listing_categories` and hashed (10 600 of them for `developer-tools`, a tree of six), and a
//! category with a stage read every listing of the tree: `category=developer-tools&stage=growing`
//! 112 → 17 ms, `q=a&category=developer-tools` 92 → 37, `q=workflow export&category=api-tools`
//! 92 → 33 (docs/BENCHMARKS.md, the forty-eighth sitting). The status is an element for the searches
//! that measured faster with it (upcoming ones with a value or a category, and live ones within a
//! category: see `adapters_storage`, `facets_of`); the others still check it on the row.
//!
//! The elements are kept where the links are written: statement triggers on `listing_categories`
//! (with their transition tables, so replacing a listing's links writes its search row once per
//! statement, not once per link) rewrite the rows of the listings whose links changed (a link is
//! never moved by an update: migration 67), and `listing_search_follow`, which writes a row when a
//! listing's text, status or values change, reads its links. A bulk load writes them with its rows
//! (`adapters_storage::import`, [`facets`]).
//!
//! The triggers on `listing_search` that follow its words (`listing_terms_bumped`, migration 34;
//! `listing_search_terms_kept`, 54) now run only when a row's id, status or words are written: a
//! change of its facets alone marked every kept word count stale (a full recount at the next search
//! refresh) for a change that moves no word.

use crate::m20261125_000030_search_table::follow_function;
use crate::m20261201_000064_search_values as values;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// What begins the element of a category in `facets`; the category's id follows.
pub const CATEGORY_PREFIX: &str = "k:";

/// The category elements of the listing `id` (an SQL expression), in category order.
fn categories_of(id: &str) -> String {
    format!(
        "ARRAY(SELECT '{CATEGORY_PREFIX}' || lc.category_id FROM listing_categories lc \
         WHERE lc.listing_id = {id} ORDER BY lc.category_id)"
    )
}

/// What begins the element of a row's status in `facets`; the status follows.
pub const STATUS_PREFIX: &str = "t:";

/// The elements of `facets` for the listing row `prefix` (an alias, or `NEW`): its values as
/// migration 64 writes them, its status, then its categories. A search writes the same strings
/// (`adapters_storage`, `facets_of`).
pub fn facets(prefix: &str) -> String {
    format!(
        "{} || ('{STATUS_PREFIX}' || {prefix}.status) || {}",
        values::facets(prefix),
        categories_of(&format!("{prefix}.id"))
    )
}

/// The triggers on `listing_search` that follow its words, each with its function and what it
/// fires on here (before: any update).
const WORD_TRIGGERS: [(&str, &str); 2] =
    [("listing_terms_bumped", "listing_terms_bump"), ("listing_search_terms_kept", "listing_search_terms_keep")];

/// `CREATE TRIGGER` for each of [`WORD_TRIGGERS`], on an update of `update` (`UPDATE` for any).
fn word_triggers(update: &str) -> Vec<String> {
    WORD_TRIGGERS
        .iter()
        .flat_map(|(t, f)| {
            [
                format!("DROP TRIGGER {t} ON listing_search"),
                format!(
                    "CREATE TRIGGER {t} AFTER INSERT OR {update} OR DELETE ON listing_search FOR EACH ROW \
                     EXECUTE FUNCTION {f}()"
                ),
            ]
        })
        .collect()
}

/// Rewrites the facets of the search rows of the listings `ids` (a query of listing ids) where they changed.
fn refresh(ids: &str) -> String {
    let fresh = facets("l");
    format!(
        "UPDATE listing_search s SET facets = {fresh} FROM listings l WHERE l.id = s.listing_id \
         AND s.listing_id IN ({ids}) AND s.facets IS DISTINCT FROM {fresh};"
    )
}

/// The link triggers: name, event, the transition table read (a link is never moved: migration 67).
const LINK_TRIGGERS: [(&str, &str, &str); 2] =
    [("listing_search_links_added", "INSERT", "NEW"), ("listing_search_links_taken", "DELETE", "OLD")];

fn up() -> Vec<String> {
    let mut s = word_triggers("UPDATE OF listing_id, status, doc");
    s.extend([
        format!("UPDATE listing_search s SET facets = {} FROM listings l WHERE l.id = s.listing_id", facets("l")),
        follow_function("CREATE OR REPLACE", &[("facets", facets("NEW"))]),
        format!(
            "CREATE FUNCTION listing_search_links_follow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {} \
             RETURN NULL; END $$",
            refresh("SELECT listing_id FROM links")
        ),
    ]);
    s.extend(LINK_TRIGGERS.iter().map(|(name, event, table)| {
        format!(
            "CREATE TRIGGER {name} AFTER {event} ON listing_categories REFERENCING {table} TABLE AS links \
             FOR EACH STATEMENT EXECUTE FUNCTION listing_search_links_follow()"
        )
    }));
    s.push("ANALYZE listing_search".to_owned());
    s
}

fn down() -> Vec<String> {
    let mut s: Vec<String> = LINK_TRIGGERS
        .iter()
        .map(|(name, _, _)| format!("DROP TRIGGER IF EXISTS {name} ON listing_categories"))
        .collect();
    s.push("DROP FUNCTION IF EXISTS listing_search_links_follow()".to_owned());
    s.push(follow_function("CREATE OR REPLACE", &[("facets", values::facets("NEW"))]));
    s.push(format!(
        "UPDATE listing_search s SET facets = {} FROM listings l WHERE l.id = s.listing_id \
         AND s.facets <> {0}",
        values::facets("l")
    ));
    s.extend(word_triggers("UPDATE"));
    s
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &up()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, &down()).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_row_holds_its_values_then_its_categories() {
        let f = super::facets("l");
        assert!(f.starts_with(&crate::m20261201_000064_search_values::facets("l")), "{f}");
        assert!(f.contains("lc.listing_id = l.id ORDER BY lc.category_id"), "{f}");
    }

    #[test]
    fn the_word_triggers_leave_a_change_of_facets_alone() {
        let up = super::up().join("\n");
        for (t, _) in super::WORD_TRIGGERS {
            assert!(
                up.contains(&format!("CREATE TRIGGER {t} AFTER INSERT OR UPDATE OF listing_id, status, doc OR DELETE")),
                "{up}"
            );
        }
    }
}
