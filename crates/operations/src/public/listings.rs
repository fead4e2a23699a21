//! Reading listings: search (and later the full profile, alternatives and compare).

use super::Pagination;
use crate::{Ctx, Method, OpError, OpResult, Operation};
use async_trait::async_trait;
use domain::ValidationErrors;
use domain::listing::{CountryCode, DomainFilter, ListingSearch, PricingModel, SearchSort, SearchText, StatusFilter};
use domain::paging::PageRequest;
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

impl From<SearchSort> for SortParam {
    fn from(s: SearchSort) -> Self {
        match s {
            SearchSort::Relevance => Self::Relevance,
            SearchSort::Newest => Self::Newest,
            SearchSort::Votes => Self::Votes,
            SearchSort::Trending => Self::Trending,
            SearchSort::MostViewed => Self::MostViewed,
            SearchSort::MostFollowed => Self::MostFollowed,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchListingsInput {
    /// Words to find in names, taglines, descriptions, features, keywords and tags.
    pub q: Option<String>,
    /// A category slug; a top-level category includes its subcategories.
    pub category: Option<String>,
    /// A stage slug (idea, mvp, beta, launched, growing, profitable).
    pub stage: Option<String>,
    /// ISO 3166-1 alpha-2 country code, any case.
    pub country: Option<String>,
    pub pricing_model: Option<String>,
    /// The product's domain, e.g. acme.example (a leading www. is ignored).
    pub domain: Option<String>,
    /// live (default) or upcoming (scheduled launches).
    #[schema(inline, default = "live")]
    pub status: Option<StatusParam>,
    /// Default relevance (most voted first when there is no q).
    #[schema(inline, default = "relevance")]
    pub sort: Option<SortParam>,
    #[schema(default = 1)]
    pub page: Option<i64>,
    #[schema(default = 20)]
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
    pub status: &'static str,
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
        Self { items: p.items.into_iter().map(summary_out).collect(), pagination }
    }
}

pub(crate) fn summary_out(s: domain::listing::ListingSummary) -> ListingSummaryOut {
    ListingSummaryOut {
        name: s.name,
        url: s.url,
        votes: s.votes,
        slug: s.slug.into_inner(),
        tagline: s.tagline,
        status: s.status.as_str(),
        launch_week: s.launch_week.map(|w| w.to_string()),
    }
}

/// Parses an optional slug parameter, naming it.
pub(crate) fn opt_slug(errs: &mut ValidationErrors, field: &str, raw: Option<String>) -> Option<Slug> {
    raw.and_then(|r| errs.take(Slug::parse(r).map_err(|e| e.named(field))))
}

#[derive(Debug)]
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
    fn refine_input_schema(schema: &mut serde_json::Value) {
        crate::refine::text::<domain::listing::SearchText>(schema, &["q"]);
    }
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
            ..Default::default()
        };
        errs.clone().into_result()?;
        let page = page.unwrap_or_default();
        Ok(ctx.app.store.search_listings(&search, page).await?.into())
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SlugInput {
    pub slug: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CategoryRef {
    pub slug: String,
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ListingCategoriesOut {
    pub primary: Option<CategoryRef>,
    /// Up to 3 more (paid listings).
    pub extra: Vec<CategoryRef>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FaqOut {
    pub question: String,
    pub answer: String,
}

impl From<domain::social::Faq> for FaqOut {
    fn from(f: domain::social::Faq) -> Self {
        Self { question: f.question.into_inner(), answer: f.answer.into_inner() }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FounderRef {
    pub slug: String,
    pub name: String,
    /// The founder's role at this listing.
    pub title: String,
    pub headline: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct UpdateOut {
    pub title: String,
    pub body: String,
    pub posted_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CommunityRatingOut {
    /// Mean of 1–5 stars.
    pub average: f64,
    pub count: u32,
    /// Always "genuine reviews only": reviews by real accounts, not the maker's, not flagged.
    pub basis: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DomainRatingOut {
    /// 0–100, from a third party.
    pub value: u8,
    pub previous: Option<u8>,
    /// up, down or flat against the previous reading.
    pub trend: String,
    pub source: String,
    pub measured_on: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RevenueOut {
    pub monthly_cents: i64,
    pub currency: String,
    /// Where the figure comes from, e.g. "Stripe (verified)" or "Self-reported".
    pub source: String,
    pub as_of: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AwardRef {
    /// Monday of the week.
    pub week: String,
    /// 1, 2 or 3: Launch of the Week by community votes.
    pub rank: u8,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MilestoneOut {
    pub id: i64,
    pub date: String,
    pub title: String,
    pub description: String,
    pub url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileLinks {
    /// The listing's page on this site (where people vote).
    pub page: String,
    pub badges: String,
    pub alternatives: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ListingProfileOut {
    pub name: String,
    pub slug: String,
    pub url: String,
    pub tagline: String,
    pub short_description: String,
    pub description: String,
    pub stage: Option<String>,
    pub categories: ListingCategoriesOut,
    pub pricing_model: String,
    pub pricing_summary: String,
    pub country: Option<String>,
    pub city: String,
    pub founded_year: Option<i32>,
    pub contact_email: String,
    pub demo_video_url: String,
    pub logo_url: String,
    pub features: Vec<String>,
    pub usps: Vec<String>,
    pub keywords: Vec<String>,
    pub tags: Vec<String>,
    pub faqs: Vec<FaqOut>,
    /// Platform key → link.
    pub socials: std::collections::BTreeMap<String, String>,
    pub founders: Vec<FounderRef>,
    /// Newest first.
    pub latest_updates: Vec<UpdateOut>,
    pub votes: i64,
    pub follows: i64,
    pub views: i64,
    pub community_rating: Option<CommunityRatingOut>,
    pub domain_rating: Option<DomainRatingOut>,
    pub revenue: Option<RevenueOut>,
    pub awards: Vec<AwardRef>,
    pub featured: bool,
    pub verified: bool,
    /// Whether the site's link to the product passes search engines' credit (no `nofollow`): the
    /// maker verified the domain, launched with our badge (free plan) or paid.
    pub link_followed: bool,
    pub launch_week: Option<String>,
    pub launched_at: Option<String>,
    /// Facts the company's own website did not state, left blank on purpose.
    pub not_found_on_website: Vec<String>,
    pub links: ProfileLinks,
    /// Paid-only: present only when unlocked for this listing. Section name → text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub story: Option<std::collections::BTreeMap<String, String>>,
    /// Paid-only: present only when unlocked for this listing. Oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub milestones: Option<Vec<MilestoneOut>>,
    /// Paid-only: present only when unlocked for this listing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<Vec<String>>,
}

/// Parses a slug path parameter (400 on bad grammar).
pub(crate) fn path_slug(raw: String) -> OpResult<Slug> {
    Ok(Slug::parse(raw)?)
}

#[derive(Debug)]
pub struct GetListing;

#[async_trait]
impl Operation for GetListing {
    const ID: &'static str = "get_listing";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/listings/{slug}";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "A live listing's full profile";
    const DESCRIPTION: &'static str = "Returns everything public about a live listing: description, features, pricing, \
        categories, founders, FAQs, socials, latest updates, the community rating (genuine reviews only), the \
        third-party Domain Rating with its trend, awards, and not_found_on_website (facts its own site does not state, \
        left blank on purpose). Story, milestones and media appear only when unlocked. 404 for an unknown or not yet \
        live slug. Read-only.";
    type Input = SlugInput;
    type Output = ListingProfileOut;

    async fn run(ctx: &Ctx, i: SlugInput) -> OpResult<ListingProfileOut> {
        Ok(profile_with_id(ctx, i).await?.1)
    }
}

/// get_listing's answer with the listing's id, which the profile does not show: the site's listing
/// page keeps it beside the page for the view it counts, and asks the alternatives by it
/// ([`super::compare::alternatives_of`]) without looking the slug up again.
pub async fn profile_with_id(ctx: &Ctx, i: SlugInput) -> OpResult<(domain::ids::ListingId, ListingProfileOut)> {
    let slug = path_slug(i.slug)?;
    let store = ctx.app.store.as_ref();
    let (l, details) = store
        .listing_with_details(&slug)
        .await?
        .filter(|(l, _)| l.lifecycle.is_public())
        .ok_or(OpError::NotFound("listing"))?;
    let (id, unlocked) = (l.id, l.unlocked.effective(l.lifecycle.plan()));
    Ok((id, profile_out(ctx, l, details, unlocked).await?))
}

/// A listing's full profile as get_listing shows it from the listing and its `details`, with the
/// paid-only sections of `unlocked` (the owner's view passes all of them).
pub(crate) async fn profile_out(
    ctx: &Ctx,
    l: domain::listing::Listing,
    details: domain::listing::ListingDetails,
    unlocked: domain::listing::UnlockedSections,
) -> OpResult<ListingProfileOut> {
    let store = ctx.app.store.as_ref();
    let link_followed = l.link_followed();
    {
        let cats = store.all_categories().await?;
        let cref = |id: domain::ids::CategoryId| {
            cats.iter().find(|c| c.id == id).map(|c| CategoryRef { slug: c.slug.to_string(), name: c.name.clone() })
        };
        let p = l.profile;
        let page = format!("{}/listings/{}", ctx.public_url, l.slug);
        let api = format!("{}/api/v1/listings/{}", ctx.public_url, l.slug);
        Ok(ListingProfileOut {
            name: p.name,
            slug: l.slug.to_string(),
            url: p.url,
            tagline: p.tagline,
            short_description: p.short_description,
            description: p.description,
            stage: p.stage.map(|s| s.to_string()),
            categories: ListingCategoriesOut {
                primary: l.categories.as_ref().and_then(|c| cref(c.primary())),
                extra: l
                    .categories
                    .as_ref()
                    .map(|c| c.extras().iter().filter_map(|e| cref(*e)).collect())
                    .unwrap_or_default(),
            },
            pricing_model: p.pricing_model,
            pricing_summary: p.pricing_summary,
            country: p.country.map(|c| c.to_string()),
            city: p.city,
            founded_year: p.founded_year.map(|y| y.get()),
            contact_email: p.contact_email,
            demo_video_url: p.demo_video_url,
            logo_url: p.logo_url,
            features: p.features,
            usps: p.usps,
            keywords: p.keywords,
            tags: p.tags,
            faqs: p.faqs.into_iter().map(FaqOut::from).collect(),
            socials: p.socials.into_inner(),
            founders: details
                .founders
                .into_iter()
                .map(|(f, title)| FounderRef { slug: f.slug.to_string(), name: f.name, title, headline: f.headline })
                .collect(),
            latest_updates: details
                .updates
                .into_iter()
                .take(10)
                .map(|u| UpdateOut { title: u.title, body: u.body, posted_at: u.posted_at.to_rfc3339() })
                .collect(),
            votes: l.votes,
            follows: l.follows,
            views: l.views,
            community_rating: l.community_rating.map(|r| CommunityRatingOut {
                average: (r.average * 100.0).round() / 100.0,
                count: r.count,
                basis: "genuine reviews only".into(),
            }),
            domain_rating: l.domain_rating.map(|d| DomainRatingOut {
                value: d.value,
                previous: d.previous,
                trend: d.trend().as_str().into(),
                source: d.source.clone(),
                measured_on: d.measured_on.to_string(),
            }),
            revenue: l.revenue.map(|r| RevenueOut {
                monthly_cents: r.monthly_cents,
                currency: "USD".into(),
                source: r.source,
                as_of: r.as_of.to_string(),
            }),
            awards: details.awards.iter().map(|a| AwardRef { week: a.week.to_string(), rank: a.rank.get() }).collect(),
            featured: l.featured,
            verified: l.verified,
            link_followed,
            launch_week: l.lifecycle.launch_week().map(|w| w.to_string()),
            launched_at: l.lifecycle.launched_at().map(|t| t.to_rfc3339()),
            not_found_on_website: p.not_found_on_website,
            links: ProfileLinks { page, badges: format!("{api}/badges"), alternatives: format!("{api}/alternatives") },
            story: (unlocked.story)
                .then(|| details.story.map(|s| s.sections().map(|(k, v)| (k.to_owned(), v.to_owned())).collect()))
                .flatten(),
            milestones: unlocked.milestones.then(|| {
                details
                    .milestones
                    .into_iter()
                    .map(|m| MilestoneOut {
                        id: m.id.get(),
                        date: m.milestone.date.to_string(),
                        title: m.milestone.title.into_inner(),
                        description: m.milestone.description.into_inner(),
                        url: m.milestone.url,
                    })
                    .collect()
            }),
            media: unlocked.media.then(Vec::new),
        })
    }
}
