//! Reading listings: search (and later the full profile, alternatives and compare).

use super::Pagination;
use crate::{Ctx, Method, OpResult, Operation};
use async_trait::async_trait;
use domain::ValidationErrors;
use domain::listing::{CountryCode, DomainFilter, ListingSearch, PricingModel, SearchSort, SearchText, StatusFilter};
use domain::paging::PageRequest;
use domain::ports::ListingRepository;
use domain::slug::Slug;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusParam {
    Live,
    Upcoming,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortParam {
    Relevance,
    Newest,
    Votes,
    Trending,
    MostViewed,
    MostFollowed,
}

impl From<SortParam> for SearchSort {
    fn from(s: SortParam) -> Self {
        match s {
            SortParam::Relevance => Self::Relevance,
            SortParam::Newest => Self::Newest,
            SortParam::Votes => Self::Votes,
            SortParam::Trending => Self::Trending,
            SortParam::MostViewed => Self::MostViewed,
            SortParam::MostFollowed => Self::MostFollowed,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchListingsInput {
    /// Words to find in names, taglines, descriptions, features, keywords and tags.
    #[schema(max_length = 200)]
    pub q: Option<String>,
    /// A category slug; a top-level category includes its subcategories.
    #[schema(max_length = 220, pattern = "^[a-z0-9][a-z0-9-]{0,219}$")]
    pub category: Option<String>,
    /// A stage slug (idea, mvp, beta, launched, growing, profitable).
    #[schema(max_length = 220, pattern = "^[a-z0-9][a-z0-9-]{0,219}$")]
    pub stage: Option<String>,
    /// ISO 3166-1 alpha-2 country code, any case.
    #[schema(min_length = 2, max_length = 2, pattern = "^[A-Za-z]{2}$")]
    pub country: Option<String>,
    #[schema(max_length = 40)]
    pub pricing_model: Option<String>,
    /// The product's domain, e.g. acme.example (a leading www. is ignored).
    #[schema(max_length = 253)]
    pub domain: Option<String>,
    /// live (default) or upcoming (scheduled launches).
    #[schema(inline, default = "live")]
    pub status: Option<StatusParam>,
    /// Default relevance (most voted first when there is no q).
    #[schema(inline, default = "relevance")]
    pub sort: Option<SortParam>,
    #[schema(minimum = 1, maximum = 1000, default = 1)]
    pub page: Option<i64>,
    #[schema(minimum = 1, maximum = 100, default = 20)]
    pub per_page: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ListingSummaryOut {
    pub name: String,
    pub url: String,
    /// Community votes from people on the site.
    pub votes: i64,
    pub slug: String,
    pub tagline: String,
    pub status: String,
    /// Monday of the launch week (YYYY-MM-DD).
    pub launch_week: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ListingPage {
    pub items: Vec<ListingSummaryOut>,
    pub pagination: Pagination,
}

impl From<domain::paging::Paged<domain::listing::ListingSummary>> for ListingPage {
    fn from(p: domain::paging::Paged<domain::listing::ListingSummary>) -> Self {
        let pagination = Pagination::from(&p);
        let items = p
            .items
            .into_iter()
            .map(|s| ListingSummaryOut {
                name: s.name,
                url: s.url,
                votes: s.votes,
                slug: s.slug.to_string(),
                tagline: s.tagline,
                status: s.status.as_str().to_owned(),
                launch_week: s.launch_week.map(|w| w.to_string()),
            })
            .collect();
        Self { items, pagination }
    }
}

/// Parses an optional slug parameter, naming it.
pub(crate) fn opt_slug(errs: &mut ValidationErrors, field: &str, raw: Option<String>) -> Option<Slug> {
    raw.and_then(|r| errs.take(Slug::parse(r).map_err(|e| e.named(field))))
}

pub struct SearchListings;

#[async_trait]
impl Operation for SearchListings {
    const ID: &'static str = "search_listings";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/listings";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "Search live (or upcoming) listings";
    const DESCRIPTION: &'static str = "Full-text search over listings with filters by category, stage, country, \
        pricing model and domain, sorted by relevance, newest, votes, trending (time-decayed votes), most viewed or \
        most followed. Returns paged summaries (name, url, votes, slug); call get_listing with a slug for the full \
        profile. Read-only; votes are never cast through the API.";
    type Input = SearchListingsInput;
    type Output = ListingPage;

    async fn run(ctx: &Ctx, i: SearchListingsInput) -> OpResult<ListingPage> {
        let mut errs = ValidationErrors::default();
        let page = errs.take(PageRequest::parse(i.page, i.per_page));
        let search = ListingSearch {
            q: i.q.and_then(|q| errs.take(SearchText::parse(q))),
            category: opt_slug(&mut errs, "category", i.category),
            stage: opt_slug(&mut errs, "stage", i.stage),
            country: i.country.and_then(|c| errs.take(CountryCode::parse(&c))),
            pricing_model: i.pricing_model.and_then(|p| errs.take(PricingModel::parse(p))),
            domain: i.domain.and_then(|d| errs.take(DomainFilter::parse(d))),
            status: match i.status {
                Some(StatusParam::Upcoming) => StatusFilter::Upcoming,
                _ => StatusFilter::Live,
            },
            sort: i.sort.map(Into::into).unwrap_or_default(),
        };
        errs.clone().into_result()?;
        let page = page.unwrap_or_default();
        Ok(ctx.app.store.search_listings(&search, page).await?.into())
    }
}
