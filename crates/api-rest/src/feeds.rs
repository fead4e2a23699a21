//! Atom feeds (RFC 4287) for people who follow the directory in a reader: this week's launches, the
//! newest launches of each category, and one listing's updates. Each is read through the same public
//! operations as the pages and linked from them with `<link rel="alternate">`; every address is built
//! from the public URL.

use crate::server::State;
use crate::site::read;
use actix_web::http::header;
use actix_web::{HttpResponse, web};
use askama::Template;
use operations::OpError;
use operations::public::launches::{GetCategory, GetCategoryInput, GetLaunchWeek, WeekInput};
use operations::public::listings::{
    GetListing, ListingSummaryOut, SearchListings, SearchListingsInput, SlugInput, SortParam,
};

/// Entries in a category's feed.
const CATEGORY_ENTRIES: i64 = 50;

/// One entry of a feed.
struct Entry {
    id: String,
    title: String,
    link: String,
    updated: String,
    summary: String,
}

/// The Atom document: its own address, the page it follows, its title, when it last changed, entries.
#[derive(Template)]
#[template(path = "feed.atom.xml")]
struct Atom<'a> {
    base: &'a str,
    self_url: String,
    page_url: String,
    title: &'a str,
    updated: &'a str,
    entries: &'a [Entry],
}

/// The Atom document: `self_path` is the feed's own path, `page_path` the page it follows.
fn atom(
    base: &str,
    self_path: &str,
    page_path: &str,
    title: &str,
    updated: &str,
    entries: &[Entry],
) -> Result<String, OpError> {
    let feed = Atom {
        base,
        self_url: format!("{base}{self_path}"),
        page_url: format!("{base}{page_path}"),
        title,
        updated,
        entries,
    };
    crate::site::render(&feed)
}

/// A feed rendered by `render` once and kept in the read cache beside the reads it comes from
/// (emptied with them on any public change), under its path and the UTC date.
async fn cached<F, Fut>(state: &web::Data<State>, path: &str, render: F) -> HttpResponse
where
    F: FnOnce(web::Data<State>) -> Fut,
    Fut: std::future::Future<Output = Result<String, operations::OpError>> + Send + 'static,
{
    let key = format!("{}\u{0}feed\u{0}{path}", state.app.clock.now().date_naive());
    let rendered = render(state.clone());
    match state.ctx.reads.get_or_bytes(key, async move { Ok(web::Bytes::from(rendered.await?)) }).await {
        Ok(body) => HttpResponse::Ok()
            .content_type("application/atom+xml; charset=utf-8")
            .insert_header((header::CACHE_CONTROL, "public, max-age=300"))
            .body(body),
        Err(e) => failed(e),
    }
}

/// An RFC 3339 instant from the API's (which may carry an offset or be a bare date).
fn instant(raw: &str, fallback: &str) -> String {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(raw) {
        return t.with_timezone(&chrono::Utc).format("%Y-%m-%dT%H:%M:%SZ").to_string();
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        return format!("{d}T00:00:00Z");
    }
    fallback.to_owned()
}

fn failed(e: operations::OpError) -> HttpResponse {
    if !matches!(e, operations::OpError::NotFound(_) | operations::OpError::Invalid(_)) {
        tracing::error!(error = %e, "feed");
    }
    actix_web::ResponseError::error_response(&crate::error::ApiError::from(e))
}

fn listing_entry(base: &str, l: &ListingSummaryOut, updated: String) -> Entry {
    let link = format!("{base}/listings/{}", l.slug);
    Entry { id: link.clone(), title: l.name.clone(), link, updated, summary: l.tagline.clone() }
}

/// This week's live launches, most voted first.
pub async fn launches(state: web::Data<State>) -> HttpResponse {
    cached(&state, "/feeds/launches.atom", launches_feed).await
}

async fn launches_feed(state: web::Data<State>) -> Result<String, operations::OpError> {
    let base = &state.public_url;
    let w = read::<GetLaunchWeek>(&state, WeekInput { week: "this".into() }).await?;
    let starts = instant(&w.starts_at, &format!("{}T00:00:00Z", w.week));
    let entries: Vec<Entry> = w.launches.iter().map(|r| listing_entry(base, &r.listing, starts.clone())).collect();
    let title = format!("Launches of the week of {}", w.week);
    atom(base, "/feeds/launches.atom", &format!("/launches/{}", w.week), &title, &starts, &entries)
}

/// A category's newest live launches.
pub async fn category(state: web::Data<State>, slug: web::Path<String>) -> HttpResponse {
    let slug = slug.into_inner();
    let Some(slug) = slug.strip_suffix(".atom").map(str::to_owned) else {
        return failed(operations::OpError::NotFound("feed"));
    };
    let path = format!("/feeds/categories/{slug}.atom");
    cached(&state, &path, move |state| category_feed(state, slug)).await
}

async fn category_feed(state: web::Data<State>, slug: String) -> Result<String, operations::OpError> {
    let base = &state.public_url;
    let c = read::<GetCategory>(&state, GetCategoryInput { slug: slug.clone(), page: None, per_page: Some(1) }).await?;
    let input = SearchListingsInput {
        q: None,
        category: Some(slug.clone()),
        stage: None,
        country: None,
        pricing_model: None,
        domain: None,
        status: None,
        sort: Some(SortParam::Newest),
        page: None,
        per_page: Some(CATEGORY_ENTRIES),
    };
    let found = read::<SearchListings>(&state, input).await?;
    let now = state.app.now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let entries: Vec<Entry> = found
        .items
        .iter()
        .map(|l| listing_entry(base, l, instant(l.launch_week.as_deref().unwrap_or_default(), &now)))
        .collect();
    let updated = entries.iter().map(|e| e.updated.clone()).max().unwrap_or(now);
    let title = format!("New in {}", c.name);
    atom(base, &format!("/feeds/categories/{slug}.atom"), &format!("/categories/{slug}"), &title, &updated, &entries)
}

/// One listing's "what's new" updates.
pub async fn updates(state: web::Data<State>, slug: web::Path<String>) -> HttpResponse {
    let slug = slug.into_inner();
    let path = format!("/listings/{slug}/updates.atom");
    cached(&state, &path, move |state| updates_feed(state, slug)).await
}

async fn updates_feed(state: web::Data<State>, slug: String) -> Result<String, operations::OpError> {
    let base = &state.public_url;
    let l = read::<GetListing>(&state, SlugInput { slug: slug.clone() }).await?;
    let page = format!("/listings/{slug}");
    let now = state.app.now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let fallback = instant(l.launched_at.as_deref().unwrap_or_default(), &now);
    let entries: Vec<Entry> = l
        .latest_updates
        .iter()
        .map(|u| {
            let posted = instant(&u.posted_at, &fallback);
            Entry {
                id: format!("{base}{page}#update-{posted}"),
                title: u.title.clone(),
                link: format!("{base}{page}"),
                updated: posted,
                summary: u.body.clone(),
            }
        })
        .collect();
    let updated = entries.iter().map(|e| e.updated.clone()).max().unwrap_or(fallback);
    let title = format!("{}: updates", l.name);
    atom(base, &format!("/listings/{slug}/updates.atom"), &page, &title, &updated, &entries)
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(web::resource("/feeds/launches.atom").route(web::get().to(launches)).default_service(na()))
        .service(web::resource("/feeds/categories/{slug}").route(web::get().to(category)).default_service(na()))
        .service(web::resource("/listings/{slug}/updates.atom").route(web::get().to(updates)).default_service(na()));
}
