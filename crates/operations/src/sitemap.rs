//! What the sitemaps list: every live listing, in fixed ranges of ids so that one sitemap file of at
//! most [`PER_FILE`] addresses is one indexed range read however large the directory grows (no count,
//! no offset), and the smaller sets (founders, categories, launch weeks, blog posts) through the
//! public operations' own reads.

use crate::{App, OpResult};
use chrono::{DateTime, Utc};
use domain::slug::Slug;
use futures::Stream;

/// Addresses in one sitemap file (the sitemaps protocol's limit).
pub const PER_FILE: i64 = 50_000;

/// How many listing sitemap files there are: one per [`PER_FILE`] ids, at least one.
pub async fn listing_files(app: &App) -> OpResult<i64> {
    let max = app.store.max_listing_id().await?;
    Ok(((max + PER_FILE - 1) / PER_FILE).max(1))
}

/// Ids a listing sitemap file reads at a time while it streams: what one file holds in memory is one
/// such slice's rows, not the file's 50 000.
pub const IDS_PER_READ: i64 = 2_000;

/// The live listings of listing sitemap file `n` (1-based): ids `(n-1)·PER_FILE + 1 ..= n·PER_FILE`.
pub async fn listings_in_file(app: &App, n: i64) -> OpResult<Vec<(Slug, DateTime<Utc>)>> {
    let after = (n - 1).saturating_mul(PER_FILE);
    Ok(app.store.live_slugs_in(after, after.saturating_add(PER_FILE)).await?)
}

/// The same listings as [`listings_in_file`], in the same order, read `ids_per_read` ids at a time as the
/// stream is polled (a slice with no live listing yields an empty batch). The first error ends it.
pub fn listings_in_file_by_slices(
    app: App,
    n: i64,
    ids_per_read: i64,
) -> impl Stream<Item = OpResult<Vec<(Slug, DateTime<Utc>)>>> + Send + 'static {
    let first = (n - 1).saturating_mul(PER_FILE);
    let end = first.saturating_add(PER_FILE);
    let step = ids_per_read.clamp(1, PER_FILE);
    futures::stream::unfold(Some(first), move |after| {
        let app = app.clone();
        async move {
            let after = after.filter(|a| *a < end)?;
            let up_to = after.saturating_add(step).min(end);
            match app.store.live_slugs_in(after, up_to).await {
                Ok(rows) => Some((Ok(rows), Some(up_to))),
                Err(e) => Some((Err(e.into()), None)),
            }
        }
    })
}
