//! A listing's link to a category or a founder is replaced (deleted and inserted), never moved: an
//! `UPDATE` of a link's listing, category or founder is refused, on both stores.
//!
//! Why: the counts kept from the links (each category's live listings, migration 19; each category
//! tree's, 57; each founder's, 59) and PostgreSQL's search rows (66) follow a link's insert and
//! delete. Moving a live listing's link from `dev-tools` to `api-tools` with an `UPDATE` (an operator's
//! SQL: the service itself always replaces a listing's links) left `api-tools`' tree at 0 with a
//! listing in it, as a recount showed. Following a move in each of those triggers is one more case in
//! four places for a write nothing makes; refusing it keeps every count true, with an error that
//! says what to write instead. The other columns of a link (`is_primary`, a founder's title and
//! position) are still updated in place.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Each link table with the trigger that guards it and its key columns.
const LINKS: [(&str, &str, [&str; 2]); 2] = [
    ("listing_categories", "listing_category_not_moved", ["listing_id", "category_id"]),
    ("listing_founders", "listing_founder_not_moved", ["listing_id", "founder_id"]),
];

/// What the refusal says.
pub const REFUSAL: &str = "a link is replaced, not moved: delete it and insert the new one";

fn moved(cols: &[&str; 2], distinct: &str) -> String {
    cols.iter().map(|c| format!("NEW.{c} {distinct} OLD.{c}")).collect::<Vec<_>>().join(" OR ")
}

fn up(backend: DbBackend) -> Vec<String> {
    match backend {
        DbBackend::Postgres => {
            let mut s = vec![format!(
                "CREATE FUNCTION listing_link_not_moved() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                 RAISE EXCEPTION '{REFUSAL}' USING ERRCODE = 'integrity_constraint_violation'; END $$"
            )];
            s.extend(LINKS.iter().map(|(table, name, cols)| {
                format!(
                    "CREATE TRIGGER {name} BEFORE UPDATE OF {} ON {table} FOR EACH ROW WHEN ({}) \
                     EXECUTE FUNCTION listing_link_not_moved()",
                    cols.join(", "),
                    moved(cols, "IS DISTINCT FROM")
                )
            }));
            s
        }
        _ => LINKS
            .iter()
            .map(|(table, name, cols)| {
                format!(
                    "CREATE TRIGGER {name} BEFORE UPDATE OF {} ON {table} WHEN {} \
                     BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END",
                    cols.join(", "),
                    moved(cols, "IS NOT")
                )
            })
            .collect(),
    }
}

fn down(backend: DbBackend) -> Vec<String> {
    let on = |table: &str| if backend == DbBackend::Postgres { format!(" ON {table}") } else { String::new() };
    let mut s: Vec<String> =
        LINKS.iter().map(|(table, name, _)| format!("DROP TRIGGER IF EXISTS {name}{}", on(table))).collect();
    if backend == DbBackend::Postgres {
        s.push("DROP FUNCTION IF EXISTS listing_link_not_moved()".to_owned());
    }
    s
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &up(manager.get_database_backend())).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &down(manager.get_database_backend())).await
    }
}
