//! The views per listing and day (`listing_views`) are counted from the view marks when the marks are
//! pruned, not raised by every counted view (one row fewer for each view's write to touch).
//!
//! A day's marks stay whole until a prune takes the day (a prune takes every mark before a day), so
//! a day that still has marks has its count twice after this change: in `listing_views`, raised view
//! by view before it, and in its marks, which the next prune folds in. This migration drops the
//! first, so that the fold writes each such day once and exactly. Days already pruned keep their
//! rows: their marks are gone and their counts stand. Down counts the marked days' rows back from
//! their marks, as the code before raised them.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The day counts a prune will write again from their marks.
const DROP_MARKED_DAYS: &str = "DELETE FROM listing_views WHERE EXISTS (SELECT 1 FROM listing_view_marks m \
     WHERE m.listing_id = listing_views.listing_id AND m.day = listing_views.day)";

/// The marked days' counts from their marks, over what a row already holds.
const COUNT_MARKED_DAYS: &str = "INSERT INTO listing_views (listing_id, day, views) SELECT listing_id, day, COUNT(*) \
     FROM listing_view_marks WHERE true GROUP BY listing_id, day \
     ON CONFLICT (listing_id, day) DO UPDATE SET views = listing_views.views + excluded.views";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &[DROP_MARKED_DAYS]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::execute_all(manager, &[COUNT_MARKED_DAYS]).await
    }
}
