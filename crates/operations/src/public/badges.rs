//! get_badges: the badges a listing may show, with embed code and image URLs in every style.

use super::listings::path_slug;
use crate::badges::{dimensions, for_listing, image_url};
use crate::{Ctx, Method, OpResult, Operation};
use async_trait::async_trait;
use domain::badge::{BadgeMode, BadgeShape, BadgeSize};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShapeParam {
    Standard,
    Outline,
    Pill,
    Banner,
    Square,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModeParam {
    Light,
    Dark,
    Auto,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SizeParam {
    S,
    M,
    L,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GetBadgesInput {
    pub slug: String,
    #[schema(inline, default = "standard")]
    pub shape: Option<ShapeParam>,
    /// auto follows the viewer's light or dark preference.
    #[schema(inline, default = "auto")]
    pub mode: Option<ModeParam>,
    #[schema(inline, default = "m")]
    pub size: Option<SizeParam>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BadgeImage {
    pub shape: String,
    pub mode: String,
    pub size: String,
    /// An SVG image (image/svg+xml).
    pub url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BadgeOut {
    /// listed-on, launched-on, featured, verified, launch-of-the-week-1 … 3.
    pub key: String,
    pub title: String,
    /// The image in the requested style.
    pub image_url: String,
    /// HTML to paste: a link to the listing's page around the image.
    pub embed_html: String,
    /// The image in every shape, mode and size.
    pub images: Vec<BadgeImage>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BadgesOut {
    pub listing: String,
    /// The listing's page on this site, which every badge links to.
    pub page_url: String,
    pub items: Vec<BadgeOut>,
}

#[derive(Debug)]
pub struct GetBadges;

#[async_trait]
impl Operation for GetBadges {
    const ID: &'static str = "get_badges";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/listings/{slug}/badges";
    const SCOPE: Option<domain::user::Scope> = None;
    const SUMMARY: &'static str = "Badges a listing may show, with embed code and SVG image URLs";
    const DESCRIPTION: &'static str = "Returns the badges a live listing may show (listed on, launched on, featured, \
        verified, Launch of the Week #1–#3) with HTML embed code for the chosen shape, mode and size and SVG image \
        URLs in every style. On the free plan, our badge on the product's homepage confirms the launch. 404 for an \
        unknown slug. Read-only.";
    type Input = GetBadgesInput;
    type Output = BadgesOut;

    async fn run(ctx: &Ctx, i: GetBadgesInput) -> OpResult<BadgesOut> {
        let slug = path_slug(i.slug)?;
        let (l, kinds, site) = for_listing(ctx, &slug, false).await?;
        let shape = match i.shape.unwrap_or(ShapeParam::Standard) {
            ShapeParam::Standard => BadgeShape::Standard,
            ShapeParam::Outline => BadgeShape::Outline,
            ShapeParam::Pill => BadgeShape::Pill,
            ShapeParam::Banner => BadgeShape::Banner,
            ShapeParam::Square => BadgeShape::Square,
        };
        let mode = match i.mode.unwrap_or(ModeParam::Auto) {
            ModeParam::Light => BadgeMode::Light,
            ModeParam::Dark => BadgeMode::Dark,
            ModeParam::Auto => BadgeMode::Auto,
        };
        let size = match i.size.unwrap_or(SizeParam::M) {
            SizeParam::S => BadgeSize::S,
            SizeParam::M => BadgeSize::M,
            SizeParam::L => BadgeSize::L,
        };
        let page = format!("{}/listings/{}", ctx.public_url, l.slug);
        let items = kinds
            .into_iter()
            .map(|k| {
                let url = image_url(&ctx.public_url, l.slug.as_str(), k, shape, mode, size);
                let (w, h) = dimensions(shape, size);
                let alt = format!("{} {site}: {}", k.title(), l.profile.name);
                let mut images = Vec::new();
                for &s in BadgeShape::ALL {
                    for &m in BadgeMode::ALL {
                        for &z in BadgeSize::ALL {
                            images.push(BadgeImage {
                                shape: s.as_str().into(),
                                mode: m.as_str().into(),
                                size: z.as_str().into(),
                                url: image_url(&ctx.public_url, l.slug.as_str(), k, s, m, z),
                            });
                        }
                    }
                }
                BadgeOut {
                    key: k.key(),
                    title: k.title(),
                    embed_html: crate::badges::embed_html(&page, &url, &alt, (w, h)),
                    image_url: url,
                    images,
                }
            })
            .collect();
        Ok(BadgesOut { listing: l.slug.to_string(), page_url: page, items })
    }
}
