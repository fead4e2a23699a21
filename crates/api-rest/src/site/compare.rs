//! Two live listings side by side on their categories' attributes.

use super::{Meta, describe, public_page, read, render, with_head};
use crate::server::State;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use operations::OpResult;
use operations::public::compare::{CompareInput, CompareListings, Comparison};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
pub struct CompareQuery {
    #[serde(default)]
    a: String,
    #[serde(default)]
    b: String,
}

#[derive(Template)]
#[template(path = "site/compare.html")]
struct CompareView<'a> {
    base: &'a str,
    c: &'a Comparison,
    /// Attribute, then each listing's value in words; `None` where its own site does not state it.
    rows: Vec<(String, Option<String>, Option<String>)>,
}

/// A compared value in words: a list joined with commas.
fn cell(v: &Option<Value>) -> Option<String> {
    match v.as_ref()? {
        Value::Null => None,
        Value::Array(items) => Some(items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")),
        Value::String(t) => Some(t.clone()),
        other => Some(other.to_string()),
    }
}

/// Two live listings side by side on their categories' attributes; an empty cell means that
/// listing's own site does not state the fact.
pub async fn compare(state: web::Data<State>, req: HttpRequest, q: web::Query<CompareQuery>) -> HttpResponse {
    let q = q.into_inner();
    let inputs = format!("compare {}\u{0}{}", q.a, q.b);
    public_page(&state, &req, inputs, "One of these listings is not live.", move |state| compare_page(state, q)).await
}

/// The `compare` page for every visitor: its title and body.
async fn compare_page(state: web::Data<State>, q: CompareQuery) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let c = read::<CompareListings>(&state, CompareInput { a: q.a, b: q.b }).await?;
    let rows = c.rows.iter().map(|r| (r.attribute.replace('_', " "), cell(&r.a), cell(&r.b))).collect();
    let body = render(&CompareView { base, c: &c, rows })?;
    let title = format!("{} vs {}", c.a.name, c.b.name);
    let path = format!("/compare?a={}&b={}", c.a.slug, c.b.slug);
    let description = describe(&format!("{title}: side by side on what their own websites state."), &title);
    Ok(("Compare".to_owned(), with_head(base, &Meta::new(&title, &description, &path), body)?))
}
