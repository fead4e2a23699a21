//! What the sitemaps list: every live listing, in fixed ranges of ids so that one sitemap file of at
//! most [`PER_FILE`] addresses is one indexed range read however large the directory grows (no count,
//! no offset), and the smaller sets (founders, categories, launch weeks, blog posts) through the
//! public operations' own reads.

use crate::{App, OpResult};
use chrono::{DateTime, Utc};
use domain::slug::Slug;

/// Addresses in one sitemap file (the sitemaps protocol's limit).
pub const PER_FILE: i64 = 50_000;

/// How many listing sitemap files there are: one per [`PER_FILE`] ids, at least one.
pub async fn listing_files(app: &App) -> OpResult<i64> {
    let max = app.store.max_listing_id().await?;
    Ok(((max + PER_FILE - 1) / PER_FILE).max(1))
}

/// The live listings of listing sitemap file `n` (1-based): ids `(n-1)·PER_FILE + 1 ..= n·PER_FILE`.
pub async fn listings_in_file(app: &App, n: i64) -> OpResult<Vec<(Slug, DateTime<Utc>)>> {
    let after = (n - 1).saturating_mul(PER_FILE);
    Ok(app.store.live_slugs_in(after, after.saturating_add(PER_FILE)).await?)
}
