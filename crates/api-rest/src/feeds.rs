//! Atom feeds (RFC 4287) for people who follow the directory in a reader: this week's launches, the
//! newest launches of each category, and one listing's updates. Each is read through the same public
//! operations as the pages and linked from them with `<link rel="alternate">`; every address is built
//! from the public URL.

use crate::server::State;
use crate::site::{op, s};
use actix_web::http::header;
use actix_web::{HttpResponse, web};
use operations::badges::escape;
use serde_json::{Value, json};

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

/// The Atom document: `self_path` is the feed's own path, `page_path` the page it follows.
fn atom(base: &str, self_path: &str, page_path: &str, title: &str, updated: &str, entries: &[Entry]) -> String {
    let mut out = format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>{id}</id>
<title>{title}</title>
<updated>{updated}</updated>
<link rel="self" type="application/atom+xml" href="{id}"/>
<link rel="alternate" type="text/html" href="{page}"/>
<author><name>launchdir</name><uri>{base_html}/</uri></author>
"#,
        id = escape(&format!("{base}{self_path}")),
        title = escape(title),
        updated = escape(updated),
        page = escape(&format!("{base}{page_path}")),
        base_html = escape(base),
    );
    for e in entries {
        out.push_str(&format!(
            "<entry><id>{}</id><title>{}</title><updated>{}</updated><link rel=\"alternate\" type=\"text/html\" href=\"{}\"/><summary>{}</summary></entry>\n",
            escape(&e.id),
            escape(&e.title),
            escape(&e.updated),
            escape(&e.link),
            escape(&e.summary),
        ));
    }
    out.push_str("</feed>\n");
    out
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

fn listing_entry(base: &str, l: &Value, updated: String) -> Entry {
    let link = format!("{base}/listings/{}", s(l, "slug"));
    Entry { id: link.clone(), title: s(l, "name").to_owned(), link, updated, summary: s(l, "tagline").to_owned() }
}

/// This week's live launches, most voted first.
pub async fn launches(state: web::Data<State>) -> HttpResponse {
    cached(&state, "/feeds/launches.atom", launches_feed).await
}

async fn launches_feed(state: web::Data<State>) -> Result<String, operations::OpError> {
    let base = &state.public_url;
    let w = op("get_launch_week").call(state.ctx.clone(), json!({"week": "this"})).await?;
    let starts = instant(s(&w, "starts_at"), &format!("{}T00:00:00Z", s(&w, "week")));
    let entries: Vec<Entry> = w["launches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| listing_entry(base, &r["listing"], starts.clone()))
        .collect();
    let title = format!("Launches of the week of {}", s(&w, "week"));
    Ok(atom(base, "/feeds/launches.atom", &format!("/launches/{}", s(&w, "week")), &title, &starts, &entries))
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
    let c = op("get_category").call(state.ctx.clone(), json!({"slug": slug, "per_page": 1})).await?;
    let input = json!({"category": slug, "sort": "newest", "per_page": CATEGORY_ENTRIES});
    let found = op("search_listings").call(state.ctx.clone(), input).await?;
    let now = state.app.now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let entries: Vec<Entry> = found["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| listing_entry(base, l, instant(s(l, "launch_week"), &now)))
        .collect();
    let updated = entries.iter().map(|e| e.updated.clone()).max().unwrap_or(now);
    let title = format!("New in {}", s(&c, "name"));
    Ok(atom(
        base,
        &format!("/feeds/categories/{slug}.atom"),
        &format!("/categories/{slug}"),
        &title,
        &updated,
        &entries,
    ))
}

/// One listing's "what's new" updates.
pub async fn updates(state: web::Data<State>, slug: web::Path<String>) -> HttpResponse {
    let slug = slug.into_inner();
    let path = format!("/listings/{slug}/updates.atom");
    cached(&state, &path, move |state| updates_feed(state, slug)).await
}

async fn updates_feed(state: web::Data<State>, slug: String) -> Result<String, operations::OpError> {
    let base = &state.public_url;
    let l = op("get_listing").call(state.ctx.clone(), json!({"slug": slug})).await?;
    let page = format!("/listings/{slug}");
    let fallback = instant(s(&l, "launched_at"), &state.app.now().format("%Y-%m-%dT%H:%M:%SZ").to_string());
    let entries: Vec<Entry> = l["latest_updates"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            let posted = instant(s(u, "posted_at"), &fallback);
            Entry {
                id: format!("{base}{page}#update-{posted}"),
                title: s(u, "title").to_owned(),
                link: format!("{base}{page}"),
                updated: posted,
                summary: s(u, "body").to_owned(),
            }
        })
        .collect();
    let updated = entries.iter().map(|e| e.updated.clone()).max().unwrap_or(fallback);
    let title = format!("{}: updates", s(&l, "name"));
    Ok(atom(base, &format!("/listings/{slug}/updates.atom"), &page, &title, &updated, &entries))
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(web::resource("/feeds/launches.atom").route(web::get().to(launches)).default_service(na()))
        .service(web::resource("/feeds/categories/{slug}").route(web::get().to(category)).default_service(na()))
        .service(web::resource("/listings/{slug}/updates.atom").route(web::get().to(updates)).default_service(na()));
}
