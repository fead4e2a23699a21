//! Badge images: `GET /badges/{slug}/{badge}.svg?shape=&mode=&size=` answers `image/svg+xml` for every
//! badge the listing may show (404 for one it may not), in every style get_badges lists.

use crate::error::ApiError;
use crate::server::State;
use actix_web::{HttpResponse, web};
use domain::ValidationErrors;
use domain::badge::{BadgeKind, BadgeMode, BadgeShape, BadgeSize};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Style {
    shape: Option<String>,
    mode: Option<String>,
    size: Option<String>,
}

async fn image(
    state: web::Data<State>,
    path: web::Path<(String, String)>,
    style: web::Query<Style>,
) -> Result<HttpResponse, ApiError> {
    let (slug, file) = path.into_inner();
    let slug = domain::slug::Slug::parse(slug)?;
    let mut errs = ValidationErrors::default();
    let shape = style.shape.as_deref().map_or(Ok(BadgeShape::default()), BadgeShape::parse);
    let mode = style.mode.as_deref().map_or(Ok(BadgeMode::default()), BadgeMode::parse);
    let size = style.size.as_deref().map_or(Ok(BadgeSize::default()), BadgeSize::parse);
    let (shape, mode, size) = (errs.take(shape), errs.take(mode), errs.take(size));
    errs.into_result()?;
    let kind = file.strip_suffix(".svg").and_then(BadgeKind::parse).ok_or_else(|| ApiError::not_found("badge"))?;
    let ctx = state.ctx.clone();
    let (_, kinds, site) = operations::badges::for_listing(&ctx, &slug, true).await?;
    if !kinds.contains(&kind) {
        return Err(ApiError::not_found("badge"));
    }
    let (Some(shape), Some(mode), Some(size)) = (shape, mode, size) else { return Err(ApiError::internal()) };
    Ok(HttpResponse::Ok()
        .content_type("image/svg+xml")
        .insert_header(("Cache-Control", "public, max-age=3600"))
        .body(operations::badges::render(kind, shape, mode, size, &site)))
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/badges/{slug}/{file}")
            .route(web::get().to(image))
            .default_service(web::to(crate::server::method_not_allowed)),
    );
}
