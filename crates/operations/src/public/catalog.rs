//! Site info, categories, interview questions and products: the directory's reference data.

use crate::{Ctx, Method, OpResult, Operation};
use async_trait::async_trait;
use domain::settings::SiteSettings;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// No inputs.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

#[derive(Debug, Serialize, ToSchema)]
pub struct SiteLinks {
    pub site: String,
    pub api: String,
    pub openapi: String,
    pub docs: String,
    pub mcp: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SiteCounts {
    pub live_listings: u64,
    pub categories: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SiteInfo {
    pub name: String,
    pub purpose: String,
    pub links: SiteLinks,
    pub counts: SiteCounts,
    /// Votes come only from people on the site; no operation casts one.
    pub voting: String,
}

#[derive(Debug)]
pub struct GetSiteInfo;

#[async_trait]
impl Operation for GetSiteInfo {
    const ID: &'static str = "get_site_info";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/site";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "What this service is, its counts, and where its API docs and MCP server are";
    const DESCRIPTION: &'static str = "Returns the site's name and purpose, its public URLs, how many live listings and \
        categories it has, and the locations of the API reference, the OpenAPI document and the MCP server. Read-only.";
    type Input = NoInput;
    type Output = SiteInfo;

    async fn run(ctx: &Ctx, _: NoInput) -> OpResult<SiteInfo> {
        let store = ctx.app.store.as_ref();
        let settings =
            SiteSettings::from_pairs(store.all_settings().await?.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let live = store.count_live_listings().await?;
        // The tree without its live counts: counting is all this needs.
        let categories = store.all_categories().await?.len() as u64;
        let base = &ctx.public_url;
        Ok(SiteInfo {
            name: settings.site_name,
            purpose:
                "A directory of product launches: makers list products and launch them in weekly launches; people \
                      browse, compare and vote on the site."
                    .into(),
            links: SiteLinks {
                site: format!("{base}/"),
                api: format!("{base}/api/v1"),
                openapi: format!("{base}/api/v1/openapi.json"),
                docs: format!("{base}/api/v1/docs"),
                mcp: format!("{base}/mcp"),
            },
            counts: SiteCounts { live_listings: live, categories },
            voting: "Votes are cast only by signed-in people on the site, never through the API.".into(),
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListCategoriesInput {
    /// Include categories without live listings (default true).
    #[schema(default = true)]
    pub include_empty: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CategoryNode {
    pub slug: String,
    pub name: String,
    pub description: String,
    /// Live listings in this category (primary or extra), not counting subcategories.
    pub live_listings: u64,
    /// Live listings here and in the subcategories.
    pub live_listings_total: u64,
    #[schema(no_recursion)]
    pub subcategories: Vec<CategoryNode>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CategoryTree {
    pub items: Vec<CategoryNode>,
}

#[derive(Debug)]
pub struct ListCategories;

#[async_trait]
impl Operation for ListCategories {
    const ID: &'static str = "list_categories";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/categories";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "The full category tree with live listing counts";
    const DESCRIPTION: &'static str = "Returns every top-level category with its subcategories and how many live \
        listings each holds. Use a category's slug with get_category or as the category filter of search_listings.";
    type Input = ListCategoriesInput;
    type Output = CategoryTree;

    async fn run(ctx: &Ctx, input: ListCategoriesInput) -> OpResult<CategoryTree> {
        // The shared tree and the kept counts, joined here: nothing is copied but what is answered.
        let (all, counts) = (ctx.app.store.all_categories().await?, ctx.app.store.live_listing_counts().await?);
        let node = |c: &domain::category::Category, subs: Vec<CategoryNode>| {
            let live = counts.get(c.id);
            let total = live + subs.iter().map(|s| s.live_listings).sum::<u64>();
            CategoryNode {
                slug: c.slug.as_str().to_owned(),
                name: c.name.clone(),
                description: c.description.clone(),
                live_listings: live,
                live_listings_total: total,
                subcategories: subs,
            }
        };
        let keep = |n: &CategoryNode| input.include_empty.unwrap_or(true) || n.live_listings_total > 0;
        let items = all
            .iter()
            .filter(|c| c.parent_id.is_none())
            .map(|top| {
                let subs =
                    all.iter().filter(|c| c.parent_id == Some(top.id)).map(|c| node(c, vec![])).filter(keep).collect();
                node(top, subs)
            })
            .filter(keep)
            .collect();
        Ok(CategoryTree { items })
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InterviewQuestionOut {
    pub id: i64,
    pub question: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InterviewQuestions {
    pub items: Vec<InterviewQuestionOut>,
}

#[derive(Debug)]
pub struct ListInterviewQuestions;

#[async_trait]
impl Operation for ListInterviewQuestions {
    const ID: &'static str = "list_interview_questions";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/interview-questions";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "The founder interview questions";
    const DESCRIPTION: &'static str = "Returns the questions a founder can answer with answer_interview, each with \
        its integer id. Read-only.";
    type Input = NoInput;
    type Output = InterviewQuestions;

    async fn run(ctx: &Ctx, _: NoInput) -> OpResult<InterviewQuestions> {
        let items = ctx
            .app
            .store
            .list_questions()
            .await?
            .into_iter()
            .map(|q| InterviewQuestionOut { id: q.id.get(), question: q.text })
            .collect();
        Ok(InterviewQuestions { items })
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProductOut {
    /// The product id to name in quote_order and create_checkout items.
    pub id: String,
    pub kind: String,
    pub name: String,
    pub description: String,
    /// Current price set by the site's admin, in USD cents, VAT excluded. For a billboard contribution,
    /// the minimum amount.
    pub price_cents: i64,
    pub currency: String,
    pub vat_included: bool,
    /// Bought for one of the caller's listings (an item names its listing_id).
    pub needs_listing: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Products {
    pub items: Vec<ProductOut>,
}

#[derive(Debug)]
pub struct ListProducts;

#[async_trait]
impl Operation for ListProducts {
    const ID: &'static str = "list_products";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/products";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "Products with their current prices (USD cents, VAT excluded)";
    const DESCRIPTION: &'static str = "Returns what a maker can buy (a paid launch and extras) with the prices the \
        site's admin set, in USD cents without VAT. Use quote_order to see VAT for a billing country.";
    type Input = NoInput;
    type Output = Products;

    async fn run(ctx: &Ctx, _: NoInput) -> OpResult<Products> {
        let items = ctx
            .app
            .store
            .list_products()
            .await?
            .into_iter()
            .map(|p| ProductOut {
                id: p.code.as_str().to_owned(),
                kind: p.kind.as_str().to_owned(),
                name: p.name,
                description: p.description,
                price_cents: p.price.get(),
                currency: "USD".into(),
                vat_included: false,
                needs_listing: p.needs_listing,
            })
            .collect();
        Ok(Products { items })
    }
}
