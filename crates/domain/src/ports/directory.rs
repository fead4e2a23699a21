//! Ports for the directory itself: listings, categories, and bulk import of content.

use super::RepoResult;
use crate::award::Award;
use crate::blog::NewBlogPost;
use crate::category::{Category, CategoryWithCount, NewCategory};
use crate::founder::NewFounder;
use crate::ids::{FounderId, ListingId};
use crate::listing::{
    Listing, ListingDetails, ListingSearch, ListingSummary, NewListing, RankMetric, Review, SearchSort, StatusFilter,
};
use crate::money::Cents;
use crate::paging::{PageRequest, Paged};
use crate::sections::{ListingUpdate, Milestone, Story};
use crate::slug::Slug;
use crate::week::LaunchWeek;
use async_trait::async_trait;
use chrono::{DateTime, Utc};

#[async_trait]
pub trait ListingRepository: Send + Sync {
    /// Stores a listing with its categories. When the slug is taken, the first free `slug-N` is used;
    /// the stored slug is in the returned listing.
    async fn create_listing(&self, new: NewListing) -> RepoResult<Listing>;

    async fn get_listing(&self, id: ListingId) -> RepoResult<Option<Listing>>;

    /// Any status; callers decide what is public.
    async fn get_listing_by_slug(&self, slug: &Slug) -> RepoResult<Option<Listing>>;

    /// The id of the live listing with this slug (one indexed column, for the hot paths that only
    /// need to know which listing a page is, such as counting its view).
    async fn live_listing_id(&self, slug: &Slug) -> RepoResult<Option<ListingId>>;

    /// Full-text search over name, tagline, descriptions, features, keywords and tags, with the
    /// filters and sort of search_listings. Relevance sort without `q` falls back to votes.
    async fn search_listings(&self, search: &ListingSearch, page: PageRequest) -> RepoResult<Paged<ListingSummary>>;

    async fn count_live_listings(&self) -> RepoResult<u64>;

    /// The highest id of a stored listing (0 when there is none): with [`ListingRepository::live_slugs_in`], how a
    /// sitemap walks every live listing in fixed id ranges without counting or skipping rows.
    async fn max_listing_id(&self) -> RepoResult<i64>;

    /// The live listings whose id is in `after < id <= up_to`, by id: slug and last change.
    async fn live_slugs_in(&self, after: i64, up_to: i64) -> RepoResult<Vec<(Slug, DateTime<Utc>)>>;

    /// Founders, updates and awards of a listing, and with `paid_sections` its milestones and story
    /// (empty parts when it has none, or when not asked for).
    async fn listing_details(&self, id: ListingId, paid_sections: bool) -> RepoResult<ListingDetails>;

    /// A listing by slug (any status) with all its details, the paid sections included (callers show
    /// what is unlocked): what a profile reads, in one read where the store can make it one.
    async fn listing_with_details(&self, slug: &Slug) -> RepoResult<Option<(Listing, ListingDetails)>> {
        let Some(listing) = self.get_listing_by_slug(slug).await? else { return Ok(None) };
        let details = self.listing_details(listing.id, true).await?;
        Ok(Some((listing, details)))
    }

    /// Alternatives to a listing: live listings its owner approved (flag `true`) first, then other live
    /// listings in its primary category by votes; never the listing itself; at most `limit`.
    async fn alternatives(&self, id: ListingId, limit: u32) -> RepoResult<Vec<(ListingSummary, bool)>>;

    /// Live listings with a positive `metric`, highest first (ties: older listing first), with the value.
    async fn ranked(&self, metric: RankMetric, page: PageRequest) -> RepoResult<Paged<(ListingSummary, i64)>>;

    /// Live listings ranked by community votes cast within `week` (ties: older listing first), with
    /// that count; listings without votes in the week are not ranked.
    async fn weekly_votes(&self, week: LaunchWeek, page: PageRequest) -> RepoResult<Paged<(ListingSummary, i64)>>;

    /// Up to `max` listings of launch week `week` in the status `status` selects, as a search with
    /// that week filter orders them (live: most votes first, ties newer first; upcoming: oldest
    /// first), without a total: what a week's page and the launches feed show. The default pages
    /// through [`ListingRepository::search_listings`]; a store can read them in one statement.
    async fn week_launches(&self, week: LaunchWeek, status: StatusFilter, max: u32) -> RepoResult<Vec<ListingSummary>> {
        let sort = match status {
            StatusFilter::Live => SearchSort::Votes,
            StatusFilter::Upcoming => SearchSort::Relevance,
        };
        let search = ListingSearch { launch_week: Some(week), status, sort, ..Default::default() };
        let mut out = Vec::new();
        for n in 1.. {
            let page = PageRequest::parse(Some(n), Some(100))
                .map_err(|e| super::RepoError::Unexpected(e.to_string().into()))?;
            let items = self.search_listings(&search, page).await?.items;
            let done = items.len() < 100;
            out.extend(items);
            if done || out.len() >= max as usize {
                break;
            }
        }
        out.truncate(max as usize);
        Ok(out)
    }

    /// Brings what the store derives from its search index up to date with the listings (a store whose
    /// search reads terms and their counts from a table of its own refreshes it here); returns whether
    /// anything was refreshed. The worker calls it every half minute: it must be cheap when nothing
    /// changed, and searches must stay exact until it runs. The default has nothing to do.
    async fn refresh_search_terms(&self) -> RepoResult<bool> {
        Ok(false)
    }
}

#[async_trait]
pub trait CategoryRepository: Send + Sync {
    /// Inserts each category whose slug is not stored yet (parents before children); existing ones are
    /// left as the admin may have edited them. Returns how many were inserted.
    async fn ensure_categories(&self, categories: &[NewCategory]) -> RepoResult<usize>;

    /// Every category with its live listing count (primary or extra), ordered by position: a copy of
    /// [`CategoryRepository::all_categories`] joined with [`CategoryRepository::live_listing_counts`].
    /// A caller on a hot path reads those two instead and copies nothing.
    async fn list_categories(&self) -> RepoResult<Vec<CategoryWithCount>> {
        let (all, counts) = (self.all_categories().await?, self.live_listing_counts().await?);
        Ok(all.iter().map(|c| CategoryWithCount { category: c.clone(), live_listings: counts.get(c.id) }).collect())
    }

    /// How many live listings each category holds (primary or extra, not counting subcategories); a
    /// category with none may be absent. Read fresh at every call: adapters keep these counts as
    /// listings change, so this is a read of one number per category, never a count of listings.
    async fn live_listing_counts(&self) -> RepoResult<crate::category::CategoryCounts>;

    async fn get_category_by_slug(&self, slug: &Slug) -> RepoResult<Option<Category>>;

    /// Every category without counts, ordered by position. Shared, not copied: adapters may hand the
    /// same list to every caller (a profile read needs it on every request).
    async fn all_categories(&self) -> RepoResult<std::sync::Arc<Vec<Category>>>;
}

/// One listing with everything around it, for bulk import (demo content, migrations from elsewhere).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportListing {
    pub listing: NewListing,
    /// Founder and their role at this listing, primary first.
    pub founders: Vec<(FounderId, String)>,
    /// When each community vote was cast (one voter each).
    pub votes: Vec<DateTime<Utc>>,
    pub follows: i64,
    pub views: i64,
    pub reviews: Vec<Review>,
    pub updates: Vec<ListingUpdate>,
    pub milestones: Vec<Milestone>,
    pub story: Option<Story>,
    /// Billboard contributions (paid ranking).
    pub billboard: Vec<(Cents, DateTime<Utc>)>,
}

/// Bulk import of directory content. Each `import_*` call here is a transaction of its own; an import
/// whose calls must land together or not at all opens an [`ImportTransaction`] with
/// [`DirectoryImport::begin_import`] (demo content at start-up: stopped part-way, it left a directory
/// that could not load the demo again).
#[async_trait]
pub trait DirectoryImport: Send + Sync {
    /// True when the directory holds no listing (demo content is loaded only into an empty one).
    async fn is_empty(&self) -> RepoResult<bool>;

    /// Opens an import whose writes are kept only when it commits.
    async fn begin_import(&self) -> RepoResult<Box<dyn ImportTransaction + '_>>;

    /// [`ImportTransaction::import_founders`] in a transaction of its own.
    async fn import_founders(&self, founders: &[NewFounder]) -> RepoResult<Vec<FounderId>> {
        let txn = self.begin_import().await?;
        let ids = txn.import_founders(founders).await?;
        txn.commit().await?;
        Ok(ids)
    }

    /// [`ImportTransaction::import_listings`] in a transaction of its own.
    async fn import_listings(&self, listings: &[ImportListing], now: DateTime<Utc>) -> RepoResult<Vec<ListingId>> {
        let txn = self.begin_import().await?;
        let ids = txn.import_listings(listings, now).await?;
        txn.commit().await?;
        Ok(ids)
    }

    /// [`ImportTransaction::import_blog_posts`] in a transaction of its own.
    async fn import_blog_posts(&self, posts: &[NewBlogPost]) -> RepoResult<usize> {
        let txn = self.begin_import().await?;
        let n = txn.import_blog_posts(posts).await?;
        txn.commit().await?;
        Ok(n)
    }

    /// [`ImportTransaction::import_awards`] in a transaction of its own.
    async fn import_awards(&self, awards: &[Award]) -> RepoResult<usize> {
        let txn = self.begin_import().await?;
        let n = txn.import_awards(awards).await?;
        txn.commit().await?;
        Ok(n)
    }

    /// How many [`DirectoryImport::import_listings`] calls a bulk load may have running at once, each in
    /// its own transaction. One (the default) unless the store's concurrent imports neither wait for
    /// each other nor can deadlock, and its database can run them side by side.
    async fn import_lanes(&self) -> RepoResult<usize> {
        Ok(1)
    }

    /// Prepares a large import into an empty directory: a store may stop maintaining its secondary
    /// indexes until [`DirectoryImport::end_bulk_load`] builds them once (the default does nothing).
    /// Reads work meanwhile, only slower.
    async fn begin_bulk_load(&self) -> RepoResult<()> {
        Ok(())
    }

    /// Ends a bulk load (also after a failed one): builds what `begin_bulk_load` put off.
    async fn end_bulk_load(&self) -> RepoResult<()> {
        Ok(())
    }
}

/// An import in progress ([`DirectoryImport::begin_import`]): nothing it writes is kept unless
/// [`ImportTransaction::commit`] succeeds. Dropped without a commit — the load failed, or its task was
/// cancelled — it is rolled back; a process stopped meanwhile keeps none of it.
#[async_trait]
pub trait ImportTransaction: Send + Sync {
    /// Imports founders; ids in input order. A slug already taken refuses the call.
    async fn import_founders(&self, founders: &[NewFounder]) -> RepoResult<Vec<FounderId>>;

    /// Imports listings with their details; ids in input order. Slugs are taken as given (a taken one
    /// refuses the call). Votes are attributed to demo voter accounts created as needed. A founder or a
    /// category the directory does not hold refuses the call with [`super::RepoError::NotFound`] before it
    /// writes anything.
    async fn import_listings(&self, listings: &[ImportListing], now: DateTime<Utc>) -> RepoResult<Vec<ListingId>>;

    async fn import_blog_posts(&self, posts: &[NewBlogPost]) -> RepoResult<usize>;

    async fn import_awards(&self, awards: &[Award]) -> RepoResult<usize>;

    /// Keeps everything this import wrote, at once.
    async fn commit(self: Box<Self>) -> RepoResult<()>;
}
