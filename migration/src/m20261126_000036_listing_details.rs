//! A listing's details as its profile shows them (extra categories, founders, latest updates,
//! milestones, story, awards), kept in `listing_details`, one row per listing, in the transaction
//! that changes them, so an uncached profile reads two rows by key instead of running six aggregates
//! (issue 24: on PostgreSQL alone the profile statement ran 10 800 times a second on this machine, the
//! listing row with this row beside it 21 300).
//!
//! `listing_details_fresh` is the one definition of what the row holds: a view computing it from the
//! source tables. Every write reaches `listing_details` through it:
//! - PostgreSQL: statement triggers on each source table (with their transition tables, so a
//!   multi-row INSERT refreshes each listing once) call `listing_details_refresh(ids)`. It makes sure
//!   the rows exist, locks them, and only then reads the view: a statement that waited for another
//!   transaction's lock starts after that transaction committed, so two transactions changing one
//!   listing's details at once cannot overwrite each other's change with an older view.
//! - SQLite: row triggers (one writer at a time; nothing to lock).
//! - A founder's edit refreshes every listing they are a founder of.
//!
//! While a bulk load has put indexes off (rows in `deferred_indexes`) the refreshes do nothing: each
//! would read the source tables without their indexes. The load's end rebuilds every row from the view
//! after the indexes (`build_deferred_indexes`, also after an interrupted load). A listing without a row
//! has no details; its removal takes its row with it.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The kept columns, in order.
const COLUMNS: [&str; 6] =
    ["extra_category_ids", "founders_json", "updates_json", "milestones_json", "story_sections", "awards_json"];

/// The tables a listing's details are read from, each with its `listing_id`.
const SOURCES: [&str; 6] =
    ["listing_categories", "listing_founders", "listing_updates", "milestones", "stories", "awards"];

/// A JSON array of `row` (expressions) per row of `from`, in `order`, as text. SQLite takes the rows
/// in order from a subquery rather than from `ORDER BY` inside the aggregate, which only SQLite 3.44
/// and later parse: the schema must stay readable by older `sqlite3` shells and language bindings (an
/// operator's inspection, Python's `sqlite3`). SQLite never merges an ordered subquery into an
/// aggregate query (its flattening rule 16), so the aggregate reads the rows in the subquery's order.
fn json_rows(backend: DbBackend, row: &str, from: &str, order: &str) -> String {
    match backend {
        DbBackend::Postgres => format!("(SELECT json_agg(json_build_array({row}) ORDER BY {order})::text {from})"),
        _ => {
            let named: Vec<String> = row.split(", ").enumerate().map(|(i, e)| format!("{e} AS c{i}")).collect();
            let names: Vec<String> = (0..named.len()).map(|i| format!("c{i}")).collect();
            format!(
                "(SELECT json_group_array(json_array({})) FROM (SELECT {} {from} ORDER BY {order}))",
                names.join(", "),
                named.join(", ")
            )
        }
    }
}

/// The view: each listing's details, computed.
fn fresh_view(backend: DbBackend) -> String {
    let extra = match backend {
        DbBackend::Postgres => {
            "(SELECT string_agg(lc.category_id::text, ',' ORDER BY lc.category_id) FROM listing_categories lc \
             WHERE lc.listing_id = l.id AND NOT lc.is_primary)"
        }
        _ => {
            "(SELECT group_concat(category_id) FROM (SELECT lc.category_id FROM listing_categories lc \
             WHERE lc.listing_id = l.id AND NOT lc.is_primary ORDER BY lc.category_id))"
        }
    };
    let founders = json_rows(
        backend,
        "f.id, f.slug, f.name, f.headline, f.bio, f.country, f.avatar_url, f.socials, f.user_id, lf.title",
        "FROM listing_founders lf JOIN founders f ON f.id = lf.founder_id WHERE lf.listing_id = l.id",
        "lf.position",
    );
    let updates = json_rows(
        backend,
        "u.title, u.body, u.posted_at",
        "FROM (SELECT id, title, body, posted_at FROM listing_updates WHERE listing_id = l.id \
         ORDER BY posted_at DESC, id DESC LIMIT 50) u",
        "u.posted_at DESC, u.id DESC",
    );
    let milestones = json_rows(
        backend,
        "m.id, m.date, m.title, m.description, m.url",
        "FROM milestones m WHERE m.listing_id = l.id",
        "m.date, m.id",
    );
    let awards = json_rows(
        backend,
        "a.week_start, a.rank, a.votes",
        "FROM awards a WHERE a.listing_id = l.id",
        "a.week_start DESC, a.id",
    );
    format!(
        "CREATE VIEW listing_details_fresh AS SELECT l.id AS listing_id, {extra} AS extra_category_ids, \
         {founders} AS founders_json, {updates} AS updates_json, {milestones} AS milestones_json, \
         (SELECT s.sections FROM stories s WHERE s.listing_id = l.id) AS story_sections, \
         {awards} AS awards_json FROM listings l"
    )
}

/// Writes the view's rows for the listings `filter` selects (a condition on `listing_id`) into
/// `listing_details`, replacing what is there.
fn upsert(filter: &str) -> String {
    let cols = COLUMNS.join(", ");
    let set: Vec<String> = COLUMNS.iter().map(|c| format!("{c} = excluded.{c}")).collect();
    format!(
        "INSERT INTO listing_details (listing_id, {cols}) SELECT listing_id, {cols} FROM listing_details_fresh \
         WHERE {filter} ON CONFLICT (listing_id) DO UPDATE SET {}",
        set.join(", ")
    )
}

/// The rebuild of every row, after a bulk load (`build_deferred_indexes` runs it).
pub const REBUILD: &str = "listing_details";

fn postgres(statements: &mut Vec<String>) {
    statements.push(format!(
        "CREATE FUNCTION listing_details_refresh(ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$ BEGIN \
         IF EXISTS (SELECT 1 FROM deferred_indexes) THEN RETURN; END IF; \
         INSERT INTO listing_details (listing_id) SELECT id FROM listings WHERE id = ANY(ids) ORDER BY id \
           ON CONFLICT (listing_id) DO NOTHING; \
         PERFORM 1 FROM listing_details WHERE listing_id = ANY(ids) ORDER BY listing_id FOR UPDATE; \
         {}; END $$",
        upsert("listing_id = ANY(ids)")
    ));
    statements.push(
        "CREATE FUNCTION listing_details_follow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         IF TG_OP = 'INSERT' THEN PERFORM listing_details_refresh(ARRAY(SELECT DISTINCT listing_id FROM new_rows)); \
         ELSIF TG_OP = 'DELETE' THEN PERFORM listing_details_refresh(ARRAY(SELECT DISTINCT listing_id FROM old_rows)); \
         ELSE PERFORM listing_details_refresh(ARRAY(SELECT listing_id FROM new_rows UNION SELECT listing_id FROM old_rows)); \
         END IF; RETURN NULL; END $$"
            .to_owned(),
    );
    statements.push(
        "CREATE FUNCTION listing_details_founder_follow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         PERFORM listing_details_refresh(ARRAY(SELECT DISTINCT lf.listing_id FROM listing_founders lf \
           WHERE lf.founder_id IN (SELECT id FROM new_rows))); RETURN NULL; END $$"
            .to_owned(),
    );
    for t in SOURCES {
        statements.push(format!(
            "CREATE TRIGGER listing_details_added AFTER INSERT ON {t} REFERENCING NEW TABLE AS new_rows \
             FOR EACH STATEMENT EXECUTE FUNCTION listing_details_follow()"
        ));
        statements.push(format!(
            "CREATE TRIGGER listing_details_changed AFTER UPDATE ON {t} REFERENCING NEW TABLE AS new_rows \
             OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_details_follow()"
        ));
        statements.push(format!(
            "CREATE TRIGGER listing_details_removed AFTER DELETE ON {t} REFERENCING OLD TABLE AS old_rows \
             FOR EACH STATEMENT EXECUTE FUNCTION listing_details_follow()"
        ));
    }
    statements.push(
        "CREATE TRIGGER listing_details_changed AFTER UPDATE ON founders REFERENCING NEW TABLE AS new_rows \
         FOR EACH STATEMENT EXECUTE FUNCTION listing_details_founder_follow()"
            .to_owned(),
    );
}

fn sqlite(statements: &mut Vec<String>) {
    let idle = "NOT EXISTS (SELECT 1 FROM deferred_indexes)";
    for t in SOURCES {
        statements.push(format!(
            "CREATE TRIGGER listing_details_{t}_added AFTER INSERT ON {t} WHEN {idle} BEGIN {}; END",
            upsert("listing_id = NEW.listing_id")
        ));
        statements.push(format!(
            "CREATE TRIGGER listing_details_{t}_changed AFTER UPDATE ON {t} WHEN {idle} BEGIN {}; END",
            upsert("listing_id IN (OLD.listing_id, NEW.listing_id)")
        ));
        statements.push(format!(
            "CREATE TRIGGER listing_details_{t}_removed AFTER DELETE ON {t} WHEN {idle} BEGIN {}; END",
            upsert("listing_id = OLD.listing_id")
        ));
    }
    statements.push(format!(
        "CREATE TRIGGER listing_details_founder_changed AFTER UPDATE ON founders WHEN {idle} BEGIN {}; END",
        upsert("listing_id IN (SELECT lf.listing_id FROM listing_founders lf WHERE lf.founder_id = NEW.id)")
    ));
}

/// The statement that rebuilds every listing's row from the view: the migration's backfill, and the
/// end of a bulk load (kept in `deferred_indexes` under [`REBUILD`] while the load runs).
pub fn rebuild_statement() -> String {
    upsert("true")
}

/// [`rebuild_statement`] for the listings whose id leaves `lane` when divided by `lanes`: PostgreSQL
/// rebuilds in lanes on several connections at once.
pub fn rebuild_lane(lane: u32, lanes: u32) -> String {
    upsert(&format!("listing_id % {lanes} = {lane}"))
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let backend = manager.get_database_backend();
        let mut statements = vec![
            format!(
                "CREATE TABLE listing_details (listing_id BIGINT PRIMARY KEY REFERENCES listings (id) ON DELETE CASCADE, {})",
                COLUMNS.map(|c| format!("{c} TEXT")).join(", ")
            ),
            fresh_view(backend),
        ];
        match backend {
            DbBackend::Postgres => postgres(&mut statements),
            _ => sqlite(&mut statements),
        }
        statements.push(rebuild_statement());
        crate::execute_all(manager, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut statements: Vec<String> = match manager.get_database_backend() {
            DbBackend::Postgres => {
                let mut s: Vec<String> = SOURCES
                    .iter()
                    .flat_map(|t| {
                        ["added", "changed", "removed"]
                            .map(|k| format!("DROP TRIGGER IF EXISTS listing_details_{k} ON {t}"))
                    })
                    .collect();
                s.push("DROP TRIGGER IF EXISTS listing_details_changed ON founders".to_owned());
                s.extend(
                    [
                        "listing_details_founder_follow()",
                        "listing_details_follow()",
                        "listing_details_refresh(bigint[])",
                    ]
                    .map(|f| format!("DROP FUNCTION IF EXISTS {f}")),
                );
                s
            }
            _ => {
                let mut s: Vec<String> = SOURCES
                    .iter()
                    .flat_map(|t| {
                        ["added", "changed", "removed"]
                            .map(|k| format!("DROP TRIGGER IF EXISTS listing_details_{t}_{k}"))
                    })
                    .collect();
                s.push("DROP TRIGGER IF EXISTS listing_details_founder_changed".to_owned());
                s
            }
        };
        statements.push("DROP VIEW IF EXISTS listing_details_fresh".to_owned());
        statements.push(format!("DELETE FROM deferred_indexes WHERE name = '{REBUILD}'"));
        statements.push("DROP TABLE IF EXISTS listing_details".to_owned());
        crate::execute_all(manager, &statements).await
    }
}
