//! The four ranked boards read their page in the order of an index: `col DESC, id` (ties to the
//! listing listed first, as the weekly board's). Each board is `ORDER BY col DESC, id ASC`. The votes
//! board walked `(status, votes_count)` and the other three their column's own index, ordered by the
//! column alone, so every run of equal values at the top of a page was read whole and sorted by id.
//! Domain ratings run 0–100 over every listing: at 100k demo listings the top rating is shared by
//! some 600 live listings, and the board's first page took 1.96 ms on SQLite and 130 ms on
//! PostgreSQL (every tie a row fetched from the table); from `(domain_rating DESC, id)` it is the
//! first 20 entries, 0.03 ms and 0.3 ms.
//!
//! The billboard's, domain rating's and revenue's single-column indexes are replaced (the new ones
//! serve any read the old ones did). `(status, votes_count)` stays for the other "most voted" lists,
//! which break ties newest first (`votes_count DESC, id DESC`, walked backwards); so a vote writes one
//! index entry more.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The boards' indexes: (name, columns) on `listings`. The votes board keeps the status first, as its
/// statement filters by it; the others filter the status row by row (few rows are not live).
const BOARD_ORDERS: [(&str, &str); 4] = [
    ("ix_listings_board_votes", "status, votes_count DESC, id"),
    ("ix_listings_board_billboard", "billboard_cents DESC, id"),
    ("ix_listings_board_domain_rating", "domain_rating DESC, id"),
    ("ix_listings_board_revenue", "revenue_monthly_cents DESC, id"),
];

/// The single-column indexes the last three replace (the first is an addition).
const REPLACED: [(&str, &str); 3] = [
    ("ix_listings_billboard", "billboard_cents"),
    ("ix_listings_domain_rating", "domain_rating"),
    ("ix_listings_revenue", "revenue_monthly_cents"),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let build = BOARD_ORDERS.iter().map(|(name, columns)| format!("CREATE INDEX {name} ON listings ({columns})"));
        let drop = REPLACED.iter().map(|(name, _)| format!("DROP INDEX IF EXISTS {name}"));
        crate::execute_all(manager, &build.chain(drop).collect::<Vec<_>>()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let build = REPLACED.iter().map(|(name, columns)| format!("CREATE INDEX {name} ON listings ({columns})"));
        let drop = BOARD_ORDERS.iter().map(|(name, _)| format!("DROP INDEX IF EXISTS {name}"));
        crate::execute_all(manager, &build.chain(drop).collect::<Vec<_>>()).await
    }
}
