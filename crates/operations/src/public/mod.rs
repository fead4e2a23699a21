//! The public operations: no sign-in needed, credentials also accepted.

pub mod badges;
pub mod catalog;
pub mod compare;
pub mod content;
pub mod launches;
pub mod listings;

use crate::Descriptor;
pub(crate) use catalog::NoInput;
use serde::Serialize;
use utoipa::ToSchema;

pub(crate) fn descriptors() -> Vec<Descriptor> {
    vec![
        Descriptor::of::<catalog::GetSiteInfo>(),
        Descriptor::of::<listings::SearchListings>(),
        Descriptor::of::<listings::GetListing>(),
        Descriptor::of::<compare::GetAlternatives>(),
        Descriptor::of::<compare::CompareListings>(),
        Descriptor::of::<catalog::ListCategories>(),
        Descriptor::of::<launches::GetCategory>(),
        Descriptor::of::<launches::GetLaunchWeek>(),
        Descriptor::of::<launches::ListLaunches>(),
        Descriptor::of::<launches::GetLeaderboard>(),
        Descriptor::of::<content::ListFounders>(),
        Descriptor::of::<content::GetFounder>(),
        Descriptor::of::<content::ListBlogPosts>(),
        Descriptor::of::<content::GetBlogPost>(),
        Descriptor::of::<content::ListAwards>(),
        Descriptor::of::<badges::GetBadges>(),
        Descriptor::of::<catalog::ListInterviewQuestions>(),
        Descriptor::of::<catalog::ListProducts>(),
    ]
}

/// The paging counters beside `items` in every list.
#[derive(Debug, Serialize, ToSchema)]
pub struct Pagination {
    pub page: u32,
    pub per_page: u32,
    pub total: u64,
    pub total_pages: u64,
}

impl<T> From<&domain::paging::Paged<T>> for Pagination {
    fn from(p: &domain::paging::Paged<T>) -> Self {
        Self { page: p.page, per_page: p.per_page, total: p.total, total_pages: p.total_pages() }
    }
}
