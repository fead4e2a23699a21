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
    /// How many there are. Searches, boards and the founders count exactly up to 10 000; beyond that
    /// `total` is 10 000 and `total_exact` is false ("10 000+"). Later pages can still be read.
    pub total: u64,
    pub total_pages: u64,
    /// False when `total` is the 10 000 cap of a larger result rather than its exact size.
    pub total_exact: bool,
}

impl<T> From<&domain::paging::Paged<T>> for Pagination {
    fn from(p: &domain::paging::Paged<T>) -> Self {
        Self {
            page: p.page,
            per_page: p.per_page,
            total: p.total,
            total_pages: p.total_pages(),
            total_exact: p.total_exact,
        }
    }
}
