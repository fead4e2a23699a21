//! The category tree and a category's page.

use super::{Meta, Row, breadcrumbs, describe, public_page, read, render, with_head};
use crate::server::State;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use operations::OpResult;
use operations::public::catalog::{CategoryNode, ListCategories, ListCategoriesInput};
use operations::public::launches::{CategoryOut, GetCategory, GetCategoryInput};

#[derive(Template)]
#[template(path = "site/categories.html")]
struct CategoriesView<'a> {
    base: &'a str,
    /// Top-level categories, each with its subcategories (the tree is two levels deep).
    items: &'a [CategoryNode],
}

#[derive(Template)]
#[template(path = "site/category.html")]
struct CategoryView<'a> {
    base: &'a str,
    c: &'a CategoryOut,
    rows: Vec<Row<'a>>,
}

pub async fn categories(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    public_page(&state, &req, "categories".into(), "", categories_page).await
}

/// The `categories` page for every visitor: its title and body.
async fn categories_page(state: web::Data<State>) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let tree = read::<ListCategories>(&state, ListCategoriesInput { include_empty: None }).await?;
    let body = render(&CategoriesView { base, items: &tree.items })?;
    let description = "Every category of the directory with how many live launches each holds.";
    let meta = Meta::new("Categories", description, "/categories");
    Ok(("Categories".to_owned(), with_head(base, &meta, body)?))
}

/// Live listings on a category's page.
const CATEGORY_PAGE: i64 = 50;

pub async fn category(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let slug = slug.into_inner();
    public_page(&state, &req, format!("category {slug}"), "No such category.", move |state| category_page(state, slug))
        .await
}

/// The `category` page for every visitor: its title and body.
async fn category_page(state: web::Data<State>, slug: String) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let input = GetCategoryInput { slug, page: None, per_page: Some(CATEGORY_PAGE) };
    let c = read::<GetCategory>(&state, input).await?;
    let body = render(&CategoryView { base, c: &c, rows: c.listings.items.iter().map(Row::voted).collect() })?;
    let name = c.name.as_str();
    let path = format!("/categories/{}", c.slug);
    let description = describe(&c.description, &format!("{name}: launches in this category on launchdir"));
    let mut trail = vec![("Launches", "/".to_owned()), ("Categories", "/categories".to_owned())];
    if let Some(parent) = &c.parent {
        trail.push((parent.name.as_str(), format!("/categories/{}", parent.slug)));
    }
    trail.push((name, path.clone()));
    let meta = Meta {
        json_ld: vec![breadcrumbs(base, &trail)],
        feed: Some((format!("New in {name}"), format!("/feeds/categories/{}.atom", c.slug))),
        ..Meta::new(name, &description, &path)
    };
    Ok((name.to_owned(), with_head(base, &meta, body)?))
}
