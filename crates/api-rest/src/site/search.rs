//! The site's search: words, a category and an order over `search_listings`, paged.

use super::{Row, cached_page, read, render};
use crate::server::State;
use crate::web::{html, oops, page_with, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::listing::{SearchSort, SearchText};
use operations::public::catalog::{CategoryNode, ListCategories, ListCategoriesInput};
use operations::public::listings::{SearchListings, SearchListingsInput};
use operations::{OpError, OpResult};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    category: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    page: String,
}

/// Results per search page.
const SEARCH_PAGE: i64 = 20;

#[derive(Template)]
#[template(path = "site/search.html")]
struct SearchView<'a> {
    base: &'a str,
    q: &'a str,
    search_max: usize,
    /// Every category, subcategories indented: slug, label, chosen.
    categories: Vec<(&'a str, String, bool)>,
    sorts: Vec<(&'static str, String, bool)>,
    /// Each refused input and why; the results are not shown then.
    refused: Vec<(String, String)>,
    /// The rendered results ([`ResultsView`]).
    results: String,
}

#[derive(Template)]
#[template(path = "site/results.html")]
struct ResultsView<'a> {
    base: &'a str,
    heading: String,
    rows: Vec<Row<'a>>,
    pager: Vec<(String, &'static str)>,
}

/// A search's inputs once checked against the directory.
struct Checked {
    q: String,
    category: String,
    sort: Option<SearchSort>,
    /// The order as asked for, for the links to other pages.
    sort_name: String,
    page: i64,
}

/// Whether `slug` is the category `n` or one of its subcategories.
fn holds(n: &CategoryNode, slug: &str) -> bool {
    n.slug == slug || n.subcategories.iter().any(|c| holds(c, slug))
}

/// The site's search: words, a category and an order over `search_listings` (the same bounds: a
/// refused input is a 400 page naming the field), paged, with a clear empty state. The results are
/// kept in the read cache under the checked inputs, as the API keeps the search itself.
pub async fn search(state: web::Data<State>, req: HttpRequest, q: web::Query<SearchQuery>) -> HttpResponse {
    let who = signed_in(&state, &req).await.map(|(p, _)| p);
    let base = &state.public_url;
    let q = q.into_inner();
    let (words, chosen, sort_name) = (q.q.trim(), q.category.trim(), q.sort.trim());
    let tree = match read::<ListCategories>(&state, ListCategoriesInput { include_empty: None }).await {
        Ok(t) => t.items,
        Err(e) => {
            tracing::warn!(error = %e, "categories on the search page");
            vec![]
        }
    };
    let mut refused: Vec<(String, String)> = Vec::new();
    if !chosen.is_empty() && !tree.iter().any(|n| holds(n, chosen)) {
        refused.push(("category".into(), "is no category of the directory".into()));
    }
    let sort = match sort_name {
        "" => None,
        name => SearchSort::parse(name).map_err(|e| refused.push((e.field, e.problem))).ok(),
    };
    let page = if q.page.trim().is_empty() { Ok(1) } else { q.page.trim().parse::<i64>() };
    let page = page.map_err(|_| refused.push(("page".into(), "must be a whole number".into()))).unwrap_or(1);
    let mut results = String::new();
    if refused.is_empty() {
        let checked =
            Checked { q: words.to_owned(), category: chosen.to_owned(), sort, sort_name: sort_name.to_owned(), page };
        let inputs = format!("search {words}\u{0}{chosen}\u{0}{sort_name}\u{0}{page}");
        match cached_page(&state, inputs, move |state| results_section(state, checked)).await {
            Ok((_, r)) => results = r,
            Err(OpError::Invalid(errors)) => refused.extend(errors.0.into_iter().map(|e| (e.field, e.problem))),
            Err(e) => {
                tracing::error!(error = %e, "search page");
                return oops(&state, who.as_ref());
            }
        }
    }
    let mut categories = Vec::new();
    for n in &tree {
        categories.push((n.slug.as_str(), n.name.clone(), n.slug == chosen));
        for c in &n.subcategories {
            categories.push((c.slug.as_str(), format!("— {}", c.name), c.slug == chosen));
        }
    }
    let view = SearchView {
        base,
        q: words,
        search_max: SearchText::MAX,
        categories,
        sorts: SearchSort::NAMES.iter().map(|n| (*n, n.replace('_', " "), *n == sort_name)).collect(),
        refused,
        results,
    };
    let status = if view.refused.is_empty() { StatusCode::OK } else { StatusCode::BAD_REQUEST };
    let body = match render(&view) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "search page");
            return oops(&state, who.as_ref());
        }
    };
    // Result pages are not for search engines' indexes (endless combinations); the search page itself is.
    let canonical = format!("{base}/search");
    let head = super::Head {
        noindex: true,
        canonical: Some(canonical),
        ..super::Head::plain("Search the live launches of launchdir by words, category and order.")
    };
    let head = render(&head).unwrap_or_default();
    html(status, page_with(&state, "Search", who.as_ref(), &body, Some(&head)))
}

/// The results of a checked search: a heading saying how many match, the rows or the empty state,
/// and links to the pages before and after.
async fn results_section(state: web::Data<State>, c: Checked) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let opt = |v: &str| (!v.is_empty()).then(|| v.to_owned());
    let input = SearchListingsInput {
        q: opt(&c.q),
        category: opt(&c.category),
        stage: None,
        country: None,
        pricing_model: None,
        domain: None,
        status: None,
        sort: c.sort.map(Into::into),
        page: Some(c.page),
        per_page: Some(SEARCH_PAGE),
    };
    let r = read::<SearchListings>(&state, input).await?;
    let total = r.pagination.total;
    let launches = match (total, r.pagination.total_exact) {
        (_, false) => format!("{}+ live launches", thousands(total)),
        (1, true) => "1 live launch".to_owned(),
        (n, true) => format!("{} live launches", thousands(n)),
    };
    let heading = match (c.q.is_empty(), total == 1) {
        (true, _) => launches,
        (false, true) => format!("{launches} matches “{}”", c.q),
        (false, false) => format!("{launches} match “{}”", c.q),
    };
    let (n, pages) = (i64::from(r.pagination.page), r.pagination.total_pages as i64);
    let link = |to: i64| {
        let mut params = form_urlencoded(&[("q", &c.q), ("category", &c.category), ("sort", &c.sort_name)]);
        params.push_str(&format!("{}page={to}", if params.is_empty() { "" } else { "&" }));
        format!("{base}/search?{params}")
    };
    let mut pager = Vec::new();
    if n > 1 {
        pager.push((link(n - 1), "← Previous"));
    }
    if n < pages {
        pager.push((link(n + 1), "Next →"));
    }
    let view = ResultsView { base, heading, rows: r.items.iter().map(Row::voted).collect(), pager };
    Ok((String::new(), render(&view)?))
}

/// `10000` → "10 000": a space between thousands.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(d);
    }
    out
}

/// The non-empty pairs as a URL's query string.
fn form_urlencoded(pairs: &[(&str, &str)]) -> String {
    let kept: Vec<(&str, &str)> = pairs.iter().copied().filter(|(_, v)| !v.is_empty()).collect();
    serde_urlencoded::to_string(kept).unwrap_or_default()
}
