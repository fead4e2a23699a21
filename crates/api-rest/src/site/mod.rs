//! The site for people: the home page (today's and this week's launches), a listing's page with its
//! vote and follow buttons, the boards, categories, the launch calendar, founders, the blog, awards,
//! comparisons and search. Server-rendered, one stylesheet, no JavaScript; the buttons are forms.
//!
//! Each page is one module: a view struct built from the typed output of the public operations it
//! reads (called with [`operations::invoke`], so they show what the API shows and a renamed field is a
//! compile error), rendered by an askama template under `templates/site/` with HTML escaping on.
//! Every link is built from the public URL.
//!
//! Votes and follows are the site's alone (never an API operation): a signed-in person's form post,
//! checked against the session's CSRF token, then `operations::engagement` (one vote per account and
//! listing, never for one's own listing, and the vote may be taken back).

mod boards;
mod catalog;
mod compare;
mod content;
mod home;
mod listing;
mod search;
mod weeks;

pub use content::markdown_html;

use crate::server::State;
use crate::web::{html, oops, page, page_with, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use operations::public::listings::ListingSummaryOut;
use operations::{OpError, OpResult, Operation};
use serde_json::{Value, json};

/// A public read, typed, as the API answers it (the pages, feeds and sitemaps all read this way).
pub(crate) async fn read<O: Operation>(state: &State, input: O::Input) -> OpResult<O::Output> {
    operations::invoke::<O>(&state.ctx, input).await
}

/// A template rendered; a failure (only a value's own `Display` can fail) is logged and becomes the
/// error page's cause.
pub(crate) fn render<T: Template>(t: &T) -> OpResult<String> {
    t.render().map_err(|e| OpError::Repo(domain::ports::RepoError::Unexpected(Box::new(e))))
}

/// Ends the tags a page describes itself with, at the start of a rendered page's body (see
/// [`with_head`]): escaped content cannot contain it, so only the renderer puts it there.
const HEAD_END: &str = "<!--/head-->";

/// What a page says about itself to search engines and link previews.
struct Meta<'a> {
    title: &'a str,
    description: &'a str,
    /// The page's path on the public URL: its canonical address.
    path: &'a str,
    /// Open Graph type: `website`, `article`, `profile`.
    kind: &'a str,
    /// Structured data (schema.org JSON-LD).
    json_ld: Vec<Value>,
    /// The Atom feed that follows this page: its title and path.
    feed: Option<(String, String)>,
}

impl<'a> Meta<'a> {
    fn new(title: &'a str, description: &'a str, path: &'a str) -> Self {
        Self { title, description, path, kind: "website", json_ld: vec![], feed: None }
    }
}

/// The head tags: a description always; the canonical URL, Open Graph and Twitter card, feed and
/// structured data when the page has them.
#[derive(Template)]
#[template(path = "head.html")]
pub(crate) struct Head<'a> {
    pub title: &'a str,
    pub description: &'a str,
    pub canonical: Option<String>,
    /// Open Graph type; `None` for a page without link-preview tags.
    pub kind: Option<&'a str>,
    pub noindex: bool,
    pub feed: Option<(String, String)>,
    /// JSON-LD documents, each already safe inside `<script>` (see [`script_json`]).
    pub json_ld: Vec<String>,
}

impl<'a> Head<'a> {
    /// Only a description (and, for pages search engines should skip, `noindex`).
    pub(crate) fn plain(description: &'a str) -> Self {
        Self { title: "", description, canonical: None, kind: None, noindex: false, feed: None, json_ld: vec![] }
    }
}

/// JSON inside `<script>`: `<`, `>` and `&` escaped, so no text of a listing can close the element.
fn script_json(v: &Value) -> String {
    v.to_string().replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

/// A description as search engines show one: whitespace folded, at most 300 characters, never empty.
fn describe(text: &str, fallback: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = if folded.is_empty() { fallback.to_owned() } else { folded };
    match text.char_indices().nth(297) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// A rendered body carrying the page's own head tags (`m`).
fn with_head(base: &str, m: &Meta, body: String) -> OpResult<String> {
    let head = Head {
        title: m.title,
        description: m.description,
        canonical: Some(format!("{base}{}", m.path)),
        kind: Some(m.kind),
        noindex: false,
        feed: m.feed.as_ref().map(|(title, path)| (title.clone(), format!("{base}{path}"))),
        json_ld: m.json_ld.iter().map(script_json).collect(),
    };
    Ok(format!("{}{HEAD_END}{body}", render(&head)?))
}

/// The head tags a rendered body carries, and the body.
fn split_head(body: &str) -> (Option<&str>, &str) {
    match body.split_once(HEAD_END) {
        Some((head, rest)) => (Some(head), rest),
        None => (None, body),
    }
}

/// schema.org's trail of links from the home page to this one.
fn breadcrumbs(base: &str, trail: &[(&str, String)]) -> Value {
    let items: Vec<Value> = trail
        .iter()
        .enumerate()
        .map(|(i, (name, path))| {
            json!({"@type": "ListItem", "position": i + 1, "name": name, "item": format!("{base}{path}")})
        })
        .collect();
    json!({"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": items})
}

fn not_found(state: &State, who: Option<&Principal>, what: &str) -> HttpResponse {
    #[derive(Template)]
    #[template(source = "<p>{{ what }}</p>", ext = "html")]
    struct Said<'a> {
        what: &'a str,
    }
    let body = Said { what }.render().unwrap_or_default();
    html(StatusCode::NOT_FOUND, page(state, "Not found", who, &body))
}

/// One listing in a list (`macros.html`'s `row`).
pub(crate) struct Row<'a> {
    pub slug: &'a str,
    pub name: &'a str,
    pub tagline: &'a str,
    pub rank: Option<u64>,
    /// What it is ranked by, in words ("3 votes", "$12.00 paid").
    pub metric: String,
    /// The award it won, for the awards page.
    pub award: &'a str,
}

impl<'a> Row<'a> {
    fn of(l: &'a ListingSummaryOut, rank: Option<u64>, metric: String) -> Self {
        Self { slug: &l.slug, name: &l.name, tagline: &l.tagline, rank, metric, award: "" }
    }

    /// Ranked by its votes.
    fn voted(l: &'a ListingSummaryOut) -> Self {
        Self::of(l, None, votes(l.votes))
    }
}

fn votes(n: i64) -> String {
    if n == 1 { "1 vote".into() } else { format!("{n} votes") }
}

/// A page the same for every visitor: its title and body, rendered by `render` from public reads
/// only, then kept in the read cache beside those reads (under the page's path and query and the UTC
/// date) and emptied with them on any public change. A hot page is rendered once, not per request.
///
/// `inputs` names the page and everything it is drawn from (its parsed path and query values), and
/// is the cache key with the date: a query parameter the page does not read, or another spelling of
/// the same path, finds the same entry, so a script cannot fill the cache or miss it at will.
async fn cached_page<F, Fut>(state: &web::Data<State>, inputs: String, render: F) -> OpResult<(String, String)>
where
    F: FnOnce(web::Data<State>) -> Fut,
    Fut: std::future::Future<Output = OpResult<(String, String)>> + Send + 'static,
{
    let rendered = render(state.clone());
    let [title, body] = cached_parts(state, inputs, async move { rendered.await.map(|(t, b)| [t, b]) }).await?;
    Ok((title, body))
}

/// [`cached_page`] of `N` parts (a page and what it was drawn for, say its listing's id): each part
/// but the last is kept behind its length, in hex.
async fn cached_parts<const N: usize, Fut>(
    state: &web::Data<State>,
    inputs: String,
    rendered: Fut,
) -> OpResult<[String; N]>
where
    Fut: std::future::Future<Output = OpResult<[String; N]>> + Send + 'static,
{
    let key = format!("{}\u{0}page\u{0}{inputs}", state.app.clock.now().date_naive());
    let packed = state
        .ctx
        .reads
        .get_or_bytes(key, async move {
            let parts = rendered.await?;
            let mut out = String::with_capacity(parts.iter().map(|p| p.len() + 8).sum());
            for (i, part) in parts.iter().enumerate() {
                if i + 1 < N {
                    out.push_str(&format!("{:08x}", part.len()));
                }
                out.push_str(part);
            }
            Ok(web::Bytes::from(out))
        })
        .await?;
    let damaged = || OpError::Repo(domain::ports::RepoError::Unexpected("a cached page is damaged".into()));
    let mut rest = std::str::from_utf8(&packed).map_err(|_| damaged())?;
    let mut parts: [String; N] = std::array::from_fn(|_| String::new());
    for (i, part) in parts.iter_mut().enumerate() {
        let text = if i + 1 < N {
            let n = rest.get(..8).and_then(|h| usize::from_str_radix(h, 16).ok()).ok_or_else(damaged)?;
            let text = rest.get(8..8 + n).ok_or_else(damaged)?;
            rest = &rest[8 + n..];
            text
        } else {
            rest
        };
        *part = text.to_owned();
    }
    Ok(parts)
}

/// The answer when a page could not be drawn: an unknown record (or an input naming none) is the
/// not-found page saying `what`; anything else is logged and the error page.
fn page_error(state: &State, who: Option<&Principal>, e: OpError, what: &str) -> HttpResponse {
    match e {
        OpError::NotFound(_) | OpError::Invalid(_) => not_found(state, who, what),
        OpError::Repo(domain::ports::RepoError::Unavailable(e)) => {
            tracing::error!(error = %e, "page: storage unavailable");
            let mut r = html(
                StatusCode::SERVICE_UNAVAILABLE,
                page(
                    state,
                    "Unavailable",
                    who,
                    "<p>The site cannot reach its database just now; try again in a moment.</p>",
                ),
            );
            r.headers_mut()
                .insert(actix_web::http::header::RETRY_AFTER, actix_web::http::header::HeaderValue::from_static("5"));
            r
        }
        e => {
            tracing::error!(error = %e, "page");
            oops(state, who)
        }
    }
}

/// A page the same for every visitor (see [`cached_page`]) under the visitor's own header.
async fn public_page<F, Fut>(
    state: &web::Data<State>,
    req: &HttpRequest,
    inputs: String,
    what: &str,
    render: F,
) -> HttpResponse
where
    F: FnOnce(web::Data<State>) -> Fut,
    Fut: std::future::Future<Output = OpResult<(String, String)>> + Send + 'static,
{
    let who = signed_in(state, req).await.map(|(p, _)| p);
    match cached_page(state, inputs, render).await {
        Ok((title, body)) => {
            let (head, body) = split_head(&body);
            html(StatusCode::OK, page_with(state, &title, who.as_ref(), body, head))
        }
        Err(e) => page_error(state, who.as_ref(), e, what),
    }
}

/// A live listing's logo, through the service (never hot-linked): PNG, JPEG or WebP only, with its own
/// type and no sniffing; 404 when it has none or it is not one we serve.
pub async fn logo(state: web::Data<State>, slug: web::Path<String>) -> HttpResponse {
    match operations::logos::logo(&state.app, &state.ctx.reads, &slug).await {
        Ok(Some(l)) => HttpResponse::Ok()
            .content_type(l.content_type)
            .insert_header((actix_web::http::header::CACHE_CONTROL, "public, max-age=3600"))
            .insert_header(("Content-Security-Policy", "default-src 'none'"))
            .body(l.bytes),
        Ok(None) => actix_web::ResponseError::error_response(&crate::error::ApiError::not_found("logo")),
        Err(e) => {
            tracing::error!(error = %e, "logo");
            actix_web::ResponseError::error_response(&crate::error::ApiError::from(e))
        }
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(web::resource("/").route(web::get().to(home::home)).default_service(na()))
        .service(web::resource("/listings/{slug}").route(web::get().to(listing::listing)).default_service(na()))
        .service(web::resource("/listings/{slug}/vote").route(web::post().to(listing::vote)).default_service(na()))
        .service(web::resource("/listings/{slug}/follow").route(web::post().to(listing::follow)).default_service(na()))
        .service(web::resource("/listings/{slug}/report").route(web::post().to(listing::report)).default_service(na()))
        .service(web::resource("/leaderboards/{board}").route(web::get().to(boards::leaderboard)).default_service(na()))
        .service(web::resource("/categories").route(web::get().to(catalog::categories)).default_service(na()))
        .service(web::resource("/categories/{slug}").route(web::get().to(catalog::category)).default_service(na()))
        .service(web::resource("/launches").route(web::get().to(weeks::this_week)).default_service(na()))
        .service(web::resource("/launches/{week}").route(web::get().to(weeks::launch_week)).default_service(na()))
        .service(web::resource("/founders/{slug}").route(web::get().to(content::founder)).default_service(na()))
        .service(web::resource("/blog").route(web::get().to(content::blog)).default_service(na()))
        .service(web::resource("/blog/{slug}").route(web::get().to(content::blog_post)).default_service(na()))
        .service(web::resource("/awards").route(web::get().to(content::awards)).default_service(na()))
        .service(web::resource("/compare").route(web::get().to(compare::compare)).default_service(na()))
        .service(web::resource("/search").route(web::get().to(search::search)).default_service(na()))
        .service(web::resource("/logos/{slug}").route(web::get().to(logo)).default_service(na()));
}
