//! Alternatives to a listing, and two listings side by side.

use super::listings::{CategoryRef, ListingSummaryOut, SlugInput, path_slug, summary_out};
use crate::{Ctx, Method, OpError, OpResult, Operation};
use async_trait::async_trait;
use domain::ValidationErrors;
use domain::listing::{Listing, ListingProfile, ListingSummary};
use domain::slug::Slug;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
pub struct Alternative {
    /// True when the listing's owner approved this alternative (these come first).
    pub approved: bool,
    pub listing: ListingSummaryOut,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Alternatives {
    pub items: Vec<Alternative>,
}

async fn live(ctx: &Ctx, slug: Slug) -> OpResult<Listing> {
    ctx.app
        .store
        .get_listing_by_slug(&slug)
        .await?
        .filter(|l| l.lifecycle.is_public())
        .ok_or(OpError::NotFound("listing"))
}

#[derive(Debug)]
pub struct GetAlternatives;

#[async_trait]
impl Operation for GetAlternatives {
    const ID: &'static str = "get_alternatives";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/listings/{slug}/alternatives";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "Alternatives to a listing, owner-approved ones first";
    const DESCRIPTION: &'static str = "Returns up to 20 alternatives to a live listing: those its owner approved \
        (approved=true) first, then other live listings in the same primary category, most voted first. Use \
        compare_listings to put two side by side. 404 for an unknown slug. Read-only.";
    type Input = SlugInput;
    type Output = Alternatives;

    async fn run(ctx: &Ctx, i: SlugInput) -> OpResult<Alternatives> {
        // Only the id is needed: the index of slugs, not the listing row.
        let id = ctx.app.store.live_listing_id(&path_slug(i.slug)?).await?.ok_or(OpError::NotFound("listing"))?;
        alternatives_of(ctx, id).await
    }
}

/// get_alternatives' answer for the live listing `id` (its caller found it live): the site's listing
/// page has the id from the profile it shows, and asks no second lookup of the slug.
pub async fn alternatives_of(ctx: &Ctx, id: domain::ids::ListingId) -> OpResult<Alternatives> {
    let items = ctx
        .app
        .store
        .alternatives(id, 20)
        .await?
        .into_iter()
        .map(|(s, approved)| Alternative { approved, listing: summary_out(s) })
        .collect();
    Ok(Alternatives { items })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareInput {
    pub a: String,
    pub b: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompareRow {
    pub attribute: String,
    /// null when listing a does not state the fact.
    pub a: Option<Value>,
    /// null when listing b does not state the fact.
    pub b: Option<Value>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Comparison {
    pub a: ListingSummaryOut,
    pub b: ListingSummaryOut,
    /// The categories whose attributes are compared.
    pub categories: Vec<CategoryRef>,
    pub rows: Vec<CompareRow>,
}

/// A profile fact by attribute name; `None` when the listing does not state it.
fn attribute(p: &ListingProfile, name: &str) -> Option<Value> {
    let text = |s: &str| (!s.trim().is_empty()).then(|| Value::String(s.to_owned()));
    let list = |v: &[String]| (!v.is_empty()).then(|| Value::from(v.to_vec()));
    match name {
        "pricing_model" => text(&p.pricing_model),
        "pricing_summary" => text(&p.pricing_summary),
        "stage" => p.stage.as_ref().map(|s| Value::String(s.to_string())),
        "country" => p.country.as_ref().map(|c| Value::String(c.to_string())),
        "city" => text(&p.city),
        "founded_year" => p.founded_year.map(|y| Value::from(y.get())),
        "features" => list(&p.features),
        "usps" => list(&p.usps),
        "keywords" => list(&p.keywords),
        "tags" => list(&p.tags),
        "demo_video_url" => text(&p.demo_video_url),
        _ => None,
    }
}

#[derive(Debug)]
pub struct CompareListings;

#[async_trait]
impl Operation for CompareListings {
    const ID: &'static str = "compare_listings";
    const NOT_FOUND: bool = true;
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/compare";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "Two live listings side by side on their categories' attributes";
    const DESCRIPTION: &'static str = "Compares live listings a and b (slugs) on the attributes of their primary \
        categories (pricing, stage, country, founding year, features …). A null cell means that listing's own \
        website does not state the fact; nothing is guessed. 404 when either slug is unknown. Read-only.";
    type Input = CompareInput;
    type Output = Comparison;

    async fn run(ctx: &Ctx, i: CompareInput) -> OpResult<Comparison> {
        let mut errs = ValidationErrors::default();
        let a = errs.take(Slug::parse(i.a).map_err(|e| e.named("a")));
        let b = errs.take(Slug::parse(i.b).map_err(|e| e.named("b")));
        errs.into_result()?;
        let (Some(a), Some(b)) = (a, b) else { return Err(OpError::NotFound("listing")) };
        let (la, lb) = (live(ctx, a).await?, live(ctx, b).await?);
        let cats = ctx.app.store.all_categories().await?;
        // The primary categories of both, once each (the same category when they share it).
        let mut primaries: Vec<&domain::category::Category> = Vec::new();
        for id in [&la, &lb].iter().filter_map(|l| l.categories.as_ref().map(|c| c.primary())) {
            if let Some(c) = cats.iter().find(|c| c.id == id)
                && !primaries.iter().any(|p| p.id == id)
            {
                primaries.push(c);
            }
        }
        let mut attributes: Vec<String> = Vec::new();
        for c in &primaries {
            for at in &c.attributes {
                if !attributes.contains(at) {
                    attributes.push(at.clone());
                }
            }
        }
        let rows = attributes
            .into_iter()
            .map(|name| CompareRow {
                a: attribute(&la.profile, &name),
                b: attribute(&lb.profile, &name),
                attribute: name,
            })
            .collect();
        Ok(Comparison {
            a: summary_out(ListingSummary::of(&la)),
            b: summary_out(ListingSummary::of(&lb)),
            categories: primaries
                .iter()
                .map(|c| CategoryRef { slug: c.slug.to_string(), name: c.name.clone() })
                .collect(),
            rows,
        })
    }
}
