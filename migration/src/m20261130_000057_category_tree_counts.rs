//! Live listings per category *tree* — the category and its subcategories, each listing once — kept on
//! the category row (`categories.tree_live_listings`), as migration 19 keeps each category's own. A
//! category filter is the category and its subcategories, so a parent's page counted its distinct
//! live listings at read time, up to the cap: at 100k demo listings 24–30 ms on both stores, uncached,
//! for every parent's first page. A listing can be in several categories of one tree (a primary and
//! an extra, or a parent and its subcategory), so the count moves only when a listing's first link into
//! a tree arrives or its last one goes:
//!
//! - a link added to a live listing counts it in the link's category and that category's parent, in
//!   each only when no link of the listing is in that tree yet;
//! - a link taken from a live listing uncounts it in each where no other link of the listing remains;
//! - a listing going live, leaving live or deleted while live moves each tree it has a link in once.
//!
//! The links' triggers run *before* the row is written, on both stores: a row-level trigger sees the
//! rows of its statement already processed, and only before the write does it not see its own. After
//! the write, PostgreSQL shows every row of the statement to each row's trigger, so a listing linked to
//! a parent and its subcategory in one `INSERT` counted in neither (each saw the other), and unlinked
//! from both in one `DELETE` uncounted twice. Before the write, a link that an `INSERT … ON CONFLICT DO
//! NOTHING` will skip finds itself already there and counts nothing. A listing's deletion moves its
//! trees before the row goes; its links then follow (foreign key), with no listing left to count.
//!
//! Categories are two levels deep and never change parent (only `ensure_categories` writes one, with
//! no links yet), so the trees are fixed. This migration fills the column from the listings there.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Whether listing `listing` has a link into the tree of the category row being updated (the category
/// or one of its subcategories), other than one to category `except` if given. The row is named by its
/// table's name: SQLite allows no alias on the table a trigger's statement writes.
fn linked_in_tree(listing: &str, except: Option<&str>) -> String {
    let except = except.map(|c| format!(" AND o.category_id <> {c}")).unwrap_or_default();
    format!(
        "EXISTS (SELECT 1 FROM listing_categories o JOIN categories oc ON oc.id = o.category_id \
         WHERE o.listing_id = {listing}{except} \
         AND (o.category_id = categories.id OR oc.parent_id = categories.id))"
    )
}

/// Moves the trees a new link of `listing` to `category` enters (`+ 1`) or the trees an old one
/// leaves (`- 1`): the category's and its parent's, where the listing has no other link.
fn link_moves(listing: &str, category: &str, delta: &str) -> String {
    // Before an insert the new link is not there: any link in the tree is another. Before a delete
    // the old one still is: it is left out by its category.
    let except = if delta.starts_with('+') { None } else { Some(category) };
    format!(
        "UPDATE categories SET tree_live_listings = tree_live_listings {delta} \
         WHERE id IN ({category}, (SELECT p.parent_id FROM categories p WHERE p.id = {category})) \
         AND NOT {}",
        linked_in_tree(listing, except)
    )
}

/// Moves each tree listing `id` has a link in by `delta`, once however many links it has there.
fn trees_of(id: &str, delta: &str) -> String {
    format!(
        "UPDATE categories SET tree_live_listings = tree_live_listings {delta} WHERE id IN \
         (SELECT lc.category_id FROM listing_categories lc WHERE lc.listing_id = {id} \
          UNION SELECT c.parent_id FROM listing_categories lc JOIN categories c ON c.id = lc.category_id \
          WHERE lc.listing_id = {id})"
    )
}

/// The count this migration fills the column with.
const RECOUNT: &str = "UPDATE categories SET tree_live_listings = (SELECT COUNT(DISTINCT lc.listing_id) \
     FROM listing_categories lc JOIN categories c ON c.id = lc.category_id JOIN listings l ON l.id = lc.listing_id \
     WHERE (c.id = categories.id OR c.parent_id = categories.id) AND l.status = 'live')";

const DROPS_POSTGRES: &[&str] = &[
    "DROP TRIGGER IF EXISTS category_tree_count_link ON listing_categories",
    "DROP TRIGGER IF EXISTS category_tree_count_status ON listings",
    "DROP TRIGGER IF EXISTS category_tree_count_deleted ON listings",
    "DROP FUNCTION IF EXISTS category_tree_count_of_link()",
    "DROP FUNCTION IF EXISTS category_tree_count_of_listing()",
];

const DROPS_SQLITE: &[&str] = &[
    "DROP TRIGGER IF EXISTS category_tree_count_added",
    "DROP TRIGGER IF EXISTS category_tree_count_taken",
    "DROP TRIGGER IF EXISTS category_tree_count_went_live",
    "DROP TRIGGER IF EXISTS category_tree_count_left_live",
    "DROP TRIGGER IF EXISTS category_tree_count_deleted",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Alias::new("categories"))
                    .add_column(ColumnDef::new(Alias::new("tree_live_listings")).big_integer().not_null().default(0))
                    .to_owned(),
            )
            .await?;
        let backend = manager.get_database_backend();
        let mut statements = crate::live_link_moves(
            backend,
            "category_tree_count",
            "listing_categories",
            "BEFORE",
            &link_moves("NEW.listing_id", "NEW.category_id", "+ 1"),
            &link_moves("OLD.listing_id", "OLD.category_id", "- 1"),
        );
        statements.extend(crate::live_listing_moves(
            backend,
            "category_tree_count",
            &trees_of("OLD.id", "- 1"),
            &trees_of("NEW.id", "+ 1"),
        ));
        statements.push(RECOUNT.into());
        crate::execute_all(manager, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_on(manager, DbBackend::Postgres, DROPS_POSTGRES).await?;
        crate::execute_on(manager, DbBackend::Sqlite, DROPS_SQLITE).await?;
        manager
            .alter_table(
                Table::alter().table(Alias::new("categories")).drop_column(Alias::new("tree_live_listings")).to_owned(),
            )
            .await
    }
}
