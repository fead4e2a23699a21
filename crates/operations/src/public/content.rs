//! Blog posts, founders and awards.

use super::Pagination;
use super::listings::{FaqOut, ListingSummaryOut, opt_slug, path_slug, summary_out};
use crate::{Ctx, Method, OpError, OpResult, Operation};
use async_trait::async_trait;
use domain::ValidationErrors;
use domain::blog::BlogPost;
use domain::founder::FounderQuery;
use domain::listing::{CountryCode, SearchText};
use domain::paging::PageRequest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListBlogPostsInput {
    /// Words to find in titles, summaries and texts.
    pub q: Option<String>,
    #[schema(default = 1)]
    pub page: Option<i64>,
    #[schema(default = 20)]
    pub per_page: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BlogPostSummary {
    pub slug: String,
    pub title: String,
    pub summary: String,
    pub author: String,
    pub tags: Vec<String>,
    pub published_at: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BlogPostPage {
    pub items: Vec<BlogPostSummary>,
    pub pagination: Pagination,
}

fn post_summary(p: &BlogPost) -> BlogPostSummary {
    BlogPostSummary {
        slug: p.slug.to_string(),
        title: p.title.clone(),
        summary: p.summary.clone(),
        author: p.author.clone(),
        tags: p.tags.clone(),
        published_at: p.published_at.map(|t| t.to_rfc3339()),
    }
}

#[derive(Debug)]
pub struct ListBlogPosts;

#[async_trait]
impl Operation for ListBlogPosts {
    const ID: &'static str = "list_blog_posts";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/blog";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "Published blog posts, newest first, or those matching q";
    const DESCRIPTION: &'static str = "Returns published blog posts newest first; with q, the posts whose title, \
        summary or text contains it (case-insensitive). Call get_blog_post with a slug for the Markdown text and \
        FAQs. Read-only.";
    fn refine_input_schema(schema: &mut serde_json::Value) {
        crate::refine::text::<domain::listing::SearchText>(schema, &["q"]);
    }
    type Input = ListBlogPostsInput;
    type Output = BlogPostPage;

    async fn run(ctx: &Ctx, i: ListBlogPostsInput) -> OpResult<BlogPostPage> {
        let mut errs = ValidationErrors::default();
        let page = errs.take(PageRequest::parse(i.page, i.per_page));
        let q = i.q.and_then(|q| errs.take(SearchText::parse(q)));
        errs.into_result()?;
        let p = ctx.app.store.list_blog_posts(q.as_ref().map(SearchText::as_str), page.unwrap_or_default()).await?;
        Ok(BlogPostPage { pagination: Pagination::from(&p), items: p.items.iter().map(post_summary).collect() })
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BlogPostOut {
    #[serde(flatten)]
    pub summary: BlogPostSummary,
    /// The post's text, Markdown.
    pub body_markdown: String,
    pub faqs: Vec<FaqOut>,
}

#[derive(Debug)]
pub struct GetBlogPost;

#[async_trait]
impl Operation for GetBlogPost {
    const ID: &'static str = "get_blog_post";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/blog/{slug}";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "A blog post's full Markdown text and FAQs";
    const DESCRIPTION: &'static str = "Returns one published blog post with its Markdown text and FAQs. 404 for an \
        unknown slug. Read-only.";
    type Input = super::listings::SlugInput;
    type Output = BlogPostOut;

    async fn run(ctx: &Ctx, i: super::listings::SlugInput) -> OpResult<BlogPostOut> {
        let slug = path_slug(i.slug)?;
        let p = ctx.app.store.get_blog_post(&slug).await?.ok_or(OpError::NotFound("blog post"))?;
        Ok(BlogPostOut {
            summary: post_summary(&p),
            faqs: p.faqs.into_iter().map(FaqOut::from).collect(),
            body_markdown: p.body_markdown,
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFoundersInput {
    /// Part of a founder's name.
    pub q: Option<String>,
    /// ISO 3166-1 alpha-2 country code, any case.
    pub country: Option<String>,
    #[schema(default = 1)]
    pub page: Option<i64>,
    #[schema(default = 20)]
    pub per_page: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FounderSummary {
    pub slug: String,
    pub name: String,
    pub headline: String,
    pub country: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FounderPage {
    pub items: Vec<FounderSummary>,
    pub pagination: Pagination,
}

fn founder_summary(f: &domain::founder::Founder) -> FounderSummary {
    FounderSummary {
        slug: f.slug.to_string(),
        name: f.name.clone(),
        headline: f.headline.clone(),
        country: f.country.clone(),
    }
}

#[derive(Debug)]
pub struct ListFounders;

#[async_trait]
impl Operation for ListFounders {
    const ID: &'static str = "list_founders";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/founders";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "Founders behind live listings";
    const DESCRIPTION: &'static str = "Returns founders of at least one live listing, by name, optionally filtered by \
        part of the name (q) and country. Call get_founder with a slug for bio, socials, companies and stories. \
        Read-only.";
    fn refine_input_schema(schema: &mut serde_json::Value) {
        crate::refine::text::<domain::founder::FounderQuery>(schema, &["q"]);
    }
    type Input = ListFoundersInput;
    type Output = FounderPage;

    async fn run(ctx: &Ctx, i: ListFoundersInput) -> OpResult<FounderPage> {
        let mut errs = ValidationErrors::default();
        let page = errs.take(PageRequest::parse(i.page, i.per_page));
        let q = i.q.and_then(|q| errs.take(FounderQuery::parse(q)));
        let country = i.country.and_then(|c| errs.take(CountryCode::parse(&c)));
        errs.into_result()?;
        let p = ctx
            .app
            .store
            .list_founders(q.as_ref().map(FounderQuery::as_str), country.as_ref(), page.unwrap_or_default())
            .await?;
        Ok(FounderPage { pagination: Pagination::from(&p), items: p.items.iter().map(founder_summary).collect() })
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FounderStory {
    /// The listing the story belongs to.
    pub listing: String,
    /// Section name → text.
    pub sections: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FounderOut {
    #[serde(flatten)]
    pub summary: FounderSummary,
    pub bio: String,
    pub socials: BTreeMap<String, String>,
    /// Live listings this founder is behind, most voted first.
    pub companies: Vec<ListingSummaryOut>,
    /// Founder stories published on those listings (where the story section is unlocked).
    pub stories: Vec<FounderStory>,
}

#[derive(Debug)]
pub struct GetFounder;

#[async_trait]
impl Operation for GetFounder {
    const ID: &'static str = "get_founder";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/founders/{slug}";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "A founder: bio, socials, companies listed here, published stories";
    const DESCRIPTION: &'static str = "Returns a founder behind at least one live listing with bio, socials, those \
        listings, and the founder stories published on them. 404 for an unknown slug. Read-only.";
    type Input = super::listings::SlugInput;
    type Output = FounderOut;

    async fn run(ctx: &Ctx, i: super::listings::SlugInput) -> OpResult<FounderOut> {
        let slug = path_slug(i.slug)?;
        let store = ctx.app.store.as_ref();
        let (f, companies) = store.get_founder(&slug).await?.ok_or(OpError::NotFound("founder"))?;
        let mut stories = Vec::new();
        for c in &companies {
            let Some(l) = store.get_listing(c.id).await? else { continue };
            if !l.unlocked.effective(l.lifecycle.plan()).story {
                continue;
            }
            if let Some(story) = store.listing_details(c.id, true).await?.story.filter(|s| !s.is_empty()) {
                stories.push(FounderStory {
                    listing: c.slug.to_string(),
                    sections: story.sections().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
                });
            }
        }
        Ok(FounderOut {
            summary: founder_summary(&f),
            bio: f.bio,
            socials: f.socials.into_inner(),
            companies: companies.into_iter().map(summary_out).collect(),
            stories,
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAwardsInput {
    /// Only this listing's awards.
    pub listing: Option<String>,
    #[schema(default = 1)]
    pub page: Option<i64>,
    #[schema(default = 20)]
    pub per_page: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AwardOut {
    /// e.g. "Launch of the Week #1".
    pub title: String,
    /// 1, 2 or 3.
    pub rank: u8,
    /// Monday of the week.
    pub week: String,
    /// Community votes cast for the listing in that week.
    pub votes: i64,
    pub listing: ListingSummaryOut,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AwardPage {
    pub items: Vec<AwardOut>,
    pub pagination: Pagination,
}

#[derive(Debug)]
pub struct ListAwards;

#[async_trait]
impl Operation for ListAwards {
    const ID: &'static str = "list_awards";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/awards";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "Launch of the Week awards, newest week first";
    const DESCRIPTION: &'static str = "Returns Launch of the Week #1, #2 and #3 of each past week, decided by \
        community votes only, newest week first, each with the winning listing; listing=slug narrows to one listing \
        (an unknown slug gives an empty list). Read-only.";
    type Input = ListAwardsInput;
    type Output = AwardPage;

    async fn run(ctx: &Ctx, i: ListAwardsInput) -> OpResult<AwardPage> {
        let mut errs = ValidationErrors::default();
        let page = errs.take(PageRequest::parse(i.page, i.per_page));
        let listing = opt_slug(&mut errs, "listing", i.listing);
        errs.into_result()?;
        let page = page.unwrap_or_default();
        let store = ctx.app.store.as_ref();
        let id = match listing {
            Some(s) => match store.get_listing_by_slug(&s).await? {
                Some(l) => Some(l.id),
                None => {
                    return Ok(AwardPage {
                        items: vec![],
                        pagination: Pagination {
                            page: page.page(),
                            per_page: page.per_page(),
                            total: 0,
                            total_pages: 0,
                            total_exact: true,
                        },
                    });
                }
            },
            None => None,
        };
        let p = store.list_awards(id, page).await?;
        let pagination = Pagination::from(&p);
        let items = p
            .items
            .into_iter()
            .map(|(a, s)| AwardOut {
                title: format!("Launch of the Week #{}", a.rank.get()),
                rank: a.rank.get(),
                week: a.week.to_string(),
                votes: a.votes,
                listing: summary_out(s),
            })
            .collect();
        Ok(AwardPage { items, pagination })
    }
}
