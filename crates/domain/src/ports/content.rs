//! Ports for editorial and people content: blog posts, founders, awards.

use super::RepoResult;
use crate::award::Award;
use crate::blog::BlogPost;
use crate::founder::Founder;
use crate::ids::ListingId;
use crate::listing::{CountryCode, ListingSummary};
use crate::paging::{PageRequest, Paged};
use crate::slug::Slug;
use async_trait::async_trait;

#[async_trait]
pub trait BlogRepository: Send + Sync {
    /// Published posts, newest first; with `q`, those whose title, summary or text contains it
    /// (case-insensitive).
    async fn list_blog_posts(&self, q: Option<&str>, page: PageRequest) -> RepoResult<Paged<BlogPost>>;

    /// A published post; `None` for unknown or unpublished.
    async fn get_blog_post(&self, slug: &Slug) -> RepoResult<Option<BlogPost>>;
}

#[async_trait]
pub trait FounderRepository: Send + Sync {
    /// Founders behind at least one live listing, by name; `q` matches the name (case-insensitive).
    async fn list_founders(
        &self,
        q: Option<&str>,
        country: Option<&CountryCode>,
        page: PageRequest,
    ) -> RepoResult<Paged<Founder>>;

    /// A founder behind at least one live listing, with those listings (most voted first).
    async fn get_founder(&self, slug: &Slug) -> RepoResult<Option<(Founder, Vec<ListingSummary>)>>;
}

#[async_trait]
pub trait AwardRepository: Send + Sync {
    /// Awards newest week first (then rank), optionally of one listing, each with its listing.
    async fn list_awards(
        &self,
        listing: Option<ListingId>,
        page: PageRequest,
    ) -> RepoResult<Paged<(Award, ListingSummary)>>;
}
