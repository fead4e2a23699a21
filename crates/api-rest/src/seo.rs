//! What search engines read besides the pages: `robots.txt` (what to crawl, where the sitemap is) and
//! the sitemaps — `/sitemap.xml`, an index of files of at most 50 000 addresses each: the live listings
//! (one file per 50 000 listing ids, each streamed as a few indexed range reads, so a directory of a
//! million listings is twenty files none of which is ever held whole), founders, categories, launch weeks and blog posts. Every address is built
//! from the public URL.

use crate::server::State;
use crate::site::read;
use actix_web::http::header;
use actix_web::{HttpResponse, web};
use askama::Template;
use futures_util::StreamExt;
use operations::drafts::PageInput;
use operations::public::catalog::{CategoryNode, ListCategories, ListCategoriesInput};
use operations::public::content::{ListBlogPosts, ListBlogPostsInput, ListFounders, ListFoundersInput};
use operations::sitemap::{IDS_PER_READ, PER_FILE};

/// Weeks of the calendar the weeks sitemap lists, back from this one, and ahead.
const WEEKS_BACK: i64 = 26;
const WEEKS_AHEAD: i64 = 8;

fn xml(body: String) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/xml; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=600"))
        .body(body)
}

/// A sitemap: each address with when it last changed, if known.
#[derive(Template)]
#[template(path = "urlset.xml")]
struct UrlSet {
    urls: Vec<(String, Option<String>)>,
}

#[derive(Template)]
#[template(path = "sitemapindex.xml")]
struct SitemapIndex<'a> {
    base: &'a str,
    files: Vec<String>,
}

fn urlset(urls: Vec<(String, Option<String>)>) -> HttpResponse {
    match crate::site::render(&UrlSet { urls }) {
        Ok(body) => xml(body),
        Err(e) => failed(e),
    }
}

fn failed(e: operations::OpError) -> HttpResponse {
    tracing::error!(error = %e, "sitemap");
    actix_web::ResponseError::error_response(&crate::error::ApiError::from(e))
}

pub async fn robots(state: web::Data<State>) -> HttpResponse {
    let base = &state.public_url;
    let body = format!(
        "User-agent: *\nAllow: /\nDisallow: /me/\nDisallow: /account/\nDisallow: /checkout/\nDisallow: /oauth/\nDisallow: /claims/\nDisallow: /invites/\nDisallow: /reset-password/\n\nSitemap: {base}/sitemap.xml\n"
    );
    HttpResponse::Ok().content_type("text/plain; charset=utf-8").body(body)
}

pub async fn index(state: web::Data<State>) -> HttpResponse {
    let base = &state.public_url;
    let files = match operations::sitemap::listing_files(&state.app).await {
        Ok(n) => n,
        Err(e) => return failed(e),
    };
    let files = (1..=files)
        .map(|n| format!("listings-{n}.xml"))
        .chain(["founders.xml", "categories.xml", "weeks.xml", "blog.xml"].iter().map(|n| (*n).to_owned()))
        .collect();
    match crate::site::render(&SitemapIndex { base, files }) {
        Ok(body) => xml(body),
        Err(e) => failed(e),
    }
}

/// Every page of a paged public read (`fetch` answers one page's items), up to one sitemap file's worth.
async fn all_items<T, F, Fut>(fetch: F) -> Result<Vec<T>, operations::OpError>
where
    F: Fn(PageInput) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<T>, operations::OpError>>,
{
    let per_page = domain::paging::PageRequest::MAX_PER_PAGE;
    let mut items = Vec::new();
    for page in 1..=i64::from(domain::paging::PageRequest::MAX_PAGE) {
        let got = fetch(PageInput { page: Some(page), per_page: Some(i64::from(per_page)) }).await?;
        let last = got.len() < per_page as usize;
        items.extend(got);
        if last || items.len() as i64 >= PER_FILE {
            break;
        }
    }
    items.truncate(PER_FILE as usize);
    Ok(items)
}

/// Rows of a sitemap: what [`UrlSet`] holds between its opening and closing tags.
#[derive(Template)]
#[template(path = "urlset_rows.xml")]
struct UrlRows {
    urls: Vec<(String, Option<String>)>,
}

/// A listing sitemap file, streamed: written a slice of ids at a time as the client reads it, so the
/// server holds one slice's rows (at most [`IDS_PER_READ`]) and never the file's 50 000 addresses. A
/// store error after the first bytes cuts the response short (the client sees an incomplete file, never
/// a complete-looking one that misses listings).
fn listings_file(app: operations::App, base: &str, n: i64) -> HttpResponse {
    const HEAD: &str =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
    let base = base.to_owned();
    let rows = operations::sitemap::listings_in_file_by_slices(app, n, IDS_PER_READ).map(move |slice| {
        let urls = slice?
            .into_iter()
            .map(|(slug, at)| (format!("{base}/listings/{slug}"), Some(at.format("%Y-%m-%dT%H:%M:%SZ").to_string())))
            .collect();
        crate::site::render(&UrlRows { urls }).map(web::Bytes::from)
    });
    let rows = rows.inspect(|r| {
        if let Err(e) = r {
            tracing::error!(error = %e, "sitemap");
        }
    });
    let body = futures_util::stream::once(async { Ok(web::Bytes::from_static(HEAD.as_bytes())) })
        .chain(rows)
        .chain(futures_util::stream::once(async { Ok(web::Bytes::from_static(b"</urlset>\n")) }));
    HttpResponse::Ok()
        .content_type("application/xml; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=600"))
        .streaming(body)
}

pub async fn file(state: web::Data<State>, name: web::Path<String>) -> HttpResponse {
    let base = &state.public_url;
    let name = name.into_inner();
    let not_found = || actix_web::ResponseError::error_response(&crate::error::ApiError::not_found("sitemap"));
    if let Some(n) = name.strip_prefix("listings-").and_then(|r| r.strip_suffix(".xml")) {
        let Ok(n) = n.parse::<i64>() else { return not_found() };
        match operations::sitemap::listing_files(&state.app).await {
            Ok(files) if (1..=files).contains(&n) => {}
            Ok(_) => return not_found(),
            Err(e) => return failed(e),
        }
        return listings_file((*state.app).clone(), base, n);
    }
    let urls: Result<Vec<(String, Option<String>)>, operations::OpError> = match name.as_str() {
        "founders.xml" => all_items(|p| {
            let input = ListFoundersInput { q: None, country: None, page: p.page, per_page: p.per_page };
            let state = &state;
            async move { Ok(read::<ListFounders>(state, input).await?.items) }
        })
        .await
        .map(|items| items.iter().map(|f| (format!("{base}/founders/{}", f.slug), None)).collect()),
        "categories.xml" => {
            read::<ListCategories>(&state, ListCategoriesInput { include_empty: None }).await.map(|tree| {
                fn walk(base: &str, n: &CategoryNode, out: &mut Vec<(String, Option<String>)>) {
                    out.push((format!("{base}/categories/{}", n.slug), None));
                    for c in &n.subcategories {
                        walk(base, c, out);
                    }
                }
                let mut out = vec![(format!("{base}/categories"), None)];
                for n in &tree.items {
                    walk(base, n, &mut out);
                }
                out
            })
        }
        "weeks.xml" => {
            let this = domain::week::LaunchWeek::of(state.app.now());
            Ok((-WEEKS_BACK..=WEEKS_AHEAD)
                .map(|k| (format!("{base}/launches/{}", this.plus_weeks(k).monday()), None))
                .collect())
        }
        "blog.xml" => {
            let posts = all_items(|p| {
                let input = ListBlogPostsInput { q: None, page: p.page, per_page: p.per_page };
                let state = &state;
                async move { Ok(read::<ListBlogPosts>(state, input).await?.items) }
            })
            .await;
            posts.map(|items| {
                std::iter::once((format!("{base}/blog"), None))
                    .chain(items.iter().map(|p| (format!("{base}/blog/{}", p.slug), p.published_at.clone())))
                    .collect()
            })
        }
        _ => return not_found(),
    };
    match urls {
        Ok(urls) => urlset(urls),
        Err(e) => failed(e),
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(web::resource("/robots.txt").route(web::get().to(robots)).default_service(na()))
        .service(web::resource("/sitemap.xml").route(web::get().to(index)).default_service(na()))
        .service(web::resource("/sitemaps/{name}").route(web::get().to(file)).default_service(na()));
}
