//! The site for people: the home page (today's and this week's launches), a listing's page with its
//! vote and follow buttons, and the leaderboards. Server-rendered, one stylesheet, no JavaScript; the
//! buttons are forms. The pages read through the same public operations as the API (so they show what
//! the API shows), and every link is built from the public URL.
//!
//! Votes and follows are the site's alone (never an API operation): a signed-in person's form post,
//! checked against the session's CSRF token, then `operations::engagement` (one vote per account and
//! listing, never for one's own listing, and the vote may be taken back).

use crate::server::State;
use crate::web::{html, oops, page, page_with, see_other, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use domain::auth::Principal;
use operations::badges::escape;
use operations::{Descriptor, OpError, OpResult};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// The registry, built once for the pages.
pub(crate) fn op(id: &str) -> &'static Descriptor {
    static REGISTRY: OnceLock<Vec<Descriptor>> = OnceLock::new();
    REGISTRY
        .get_or_init(operations::registry)
        .iter()
        .find(|d| d.id == id)
        .unwrap_or_else(|| panic!("no operation {id}"))
}

/// A public read, as the API answers it.
async fn read(state: &State, id: &str, input: Value) -> Result<Value, OpError> {
    op(id).call(state.ctx.clone(), input).await
}

pub(crate) fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
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

/// The tags of `m`: description, canonical URL, Open Graph and Twitter card, JSON-LD.
fn head_html(base: &str, m: &Meta) -> String {
    let url = format!("{base}{}", m.path);
    let (title, description, url_html) = (escape(m.title), escape(m.description), escape(&url));
    let mut h = format!(
        r#"<meta name="description" content="{description}"><link rel="canonical" href="{url_html}"><meta property="og:site_name" content="launchdir"><meta property="og:type" content="{kind}"><meta property="og:title" content="{title}"><meta property="og:description" content="{description}"><meta property="og:url" content="{url_html}"><meta name="twitter:card" content="summary"><meta name="twitter:title" content="{title}"><meta name="twitter:description" content="{description}">"#,
        kind = escape(m.kind),
    );
    if let Some((title, path)) = &m.feed {
        h.push_str(&format!(
            r#"<link rel="alternate" type="application/atom+xml" title="{}" href="{}">"#,
            escape(title),
            escape(&format!("{base}{path}"))
        ));
    }
    for ld in &m.json_ld {
        h.push_str(&format!(r#"<script type="application/ld+json">{}</script>"#, script_json(ld)));
    }
    h
}

/// A rendered body carrying the page's own head tags.
fn with_head(base: &str, m: &Meta, body: String) -> String {
    format!("{}{HEAD_END}{body}", head_html(base, m))
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
    html(StatusCode::NOT_FOUND, page(state, "Not found", who, &format!("<p>{}</p>", escape(what))))
}

/// One listing in a list: name, tagline, votes, a link to its page.
fn row(base: &str, l: &Value, rank: Option<u64>, metric: &str) -> String {
    let rank = rank.map(|r| format!(r#"<span class="rank">#{r}</span>"#)).unwrap_or_default();
    format!(
        r#"<li class="item">{rank}<a class="name" href="{base}/listings/{slug}">{name}</a> <span class="muted">{tagline}</span><span class="metric">{metric}</span></li>"#,
        slug = escape(s(l, "slug")),
        name = escape(s(l, "name")),
        tagline = escape(s(l, "tagline")),
        metric = escape(metric),
    )
}

fn votes(n: i64) -> String {
    if n == 1 { "1 vote".into() } else { format!("{n} votes") }
}

fn list(base: &str, items: &[Value], empty: &str) -> String {
    if items.is_empty() {
        return format!(r#"<p class="muted">{}</p>"#, escape(empty));
    }
    let rows: String = items.iter().map(|l| row(base, l, None, &votes(l["votes"].as_i64().unwrap_or(0)))).collect();
    format!(r#"<ol class="items">{rows}</ol>"#)
}

pub async fn home(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    public_page(&state, &req, "home".into(), "", home_page).await
}

/// The `home` page for every visitor: its title and body.
async fn home_page(state: web::Data<State>) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let today = read(&state, "list_launches", json!({"section": "today", "per_page": 10})).await?;
    let week = read(&state, "list_launches", json!({"section": "this-week", "per_page": 20})).await?;
    let empty = Vec::new();
    let body = format!(
        r#"<section class="hero"><h1>Product launches, ranked by people</h1><p class="muted">Votes come only from people signed in here. The billboard is a paid ranking and is always shown as paid.</p><p><a href="{base}/leaderboards/community-weekly">This week's board</a> · <a href="{base}/leaderboards/billboard">Billboard (paid)</a></p></section>
<section class="card"><h2>Launched today</h2>{}</section>
<section class="card"><h2>This week</h2>{}</section>"#,
        list(base, today["items"].as_array().unwrap_or(&empty), "Nothing went live today yet."),
        list(base, week["items"].as_array().unwrap_or(&empty), "No launches this week yet."),
    );
    let site = json!({
        "@context": "https://schema.org",
        "@type": "WebSite",
        "name": "launchdir",
        "url": format!("{base}/"),
        "potentialAction": {
            "@type": "SearchAction",
            "target": format!("{base}/search?q={{query}}"),
            "query-input": "required name=query",
        },
    });
    let description = "Product launches, ranked by people: today's and this week's launches, the boards, the calendar.";
    let feed = Some(("This week's launches".to_owned(), "/feeds/launches.atom".to_owned()));
    let meta = Meta { title: "Launches", description, path: "/", kind: "website", json_ld: vec![site], feed };
    Ok(("Launches".to_owned(), with_head(base, &meta, body)))
}

/// Where the listing page's vote and follow forms go: they depend on the visitor, the rest does not.
const ACTIONS: &str = "<!--actions-->";

pub async fn listing(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let session = signed_in(&state, &req).await;
    let who = session.as_ref().map(|(p, _)| p);
    let slug = slug.into_inner();
    let render = {
        let slug = slug.clone();
        move |state| listing_body(state, slug)
    };
    let (title, body) = match cached_page(&state, format!("listing {slug}"), render).await {
        Ok(page) => page,
        Err(e) => return page_error(&state, who, e, "No live listing has this address."),
    };
    let base = &state.public_url;
    let slug_html = escape(&slug);
    // A person's view, once a day (signed in: per account; else per address and browser); never a bot's.
    let ua = req.headers().get(actix_web::http::header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let viewer = match who {
        Some(p) => format!("user:{}", p.user_id.get()),
        None => format!(
            "anon:{}:{ua}",
            api_http::middleware::client_address(&req).map(|a| a.to_string()).unwrap_or_default()
        ),
    };
    let user = who.map(|p| p.user_id);
    let (voted, following) = match operations::engagement::visit(&state.app, &slug, user, ua, &viewer).await {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "reading the visitor's vote and follow");
            (false, false)
        }
    };
    let actions = match &session {
        Some((_, csrf)) => {
            let (vote_action, vote_label) = if voted { ("unvote", "Voted ✓ (undo)") } else { ("vote", "▲ Vote") };
            let (follow_on, follow_label) = if following { ("0", "Following ✓ (stop)") } else { ("1", "Follow") };
            format!(
                r#"<form method="post" action="{base}/listings/{slug_html}/vote" class="inline"><input type="hidden" name="csrf" value="{csrf}"><input type="hidden" name="action" value="{vote_action}"><button id="vote">{vote_label}</button></form>
<form method="post" action="{base}/listings/{slug_html}/follow" class="inline"><input type="hidden" name="csrf" value="{csrf}"><input type="hidden" name="on" value="{follow_on}"><button id="follow" class="secondary">{follow_label}</button></form>"#,
                csrf = escape(csrf),
            )
        }
        None => format!(r#"<a class="button" href="{base}/signin">Sign in to vote</a>"#),
    };
    let (head, body) = split_head(&body);
    html(StatusCode::OK, page_with(&state, &title, who, &body.replacen(ACTIONS, &actions, 1), head))
}

/// The listing page but for the visitor's own buttons (at [`ACTIONS`]): the same for everyone.
async fn listing_body(state: web::Data<State>, slug: String) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let l = read(&state, "get_listing", json!({"slug": slug})).await?;
    let slug_html = escape(s(&l, "slug"));
    let features: String = l["features"]
        .as_array()
        .map(|f| f.iter().map(|x| format!("<li>{}</li>", escape(x.as_str().unwrap_or_default()))).collect())
        .unwrap_or_default();
    let founders: String = l["founders"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|x| format!(r#"<a href="{base}/founders/{}">{}</a>"#, escape(s(x, "slug")), escape(s(x, "name"))))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let category = &l["categories"]["primary"];
    let updates: String = l["latest_updates"]
        .as_array()
        .map(|u| {
            u.iter()
                .take(3)
                .map(|x| format!("<li><strong>{}</strong> {}</li>", escape(s(x, "title")), escape(s(x, "body"))))
                .collect()
        })
        .unwrap_or_default();
    let paragraphs: String = s(&l, "description")
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .map(|p| format!("<p>{}</p>", escape(p)))
        .collect();
    let not_stated = l["not_found_on_website"].as_array().map_or(0, Vec::len);
    // What it earned: Launch of the Week awards, featured, verified.
    let mut chips: Vec<String> = l["awards"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|w| {
                    format!(
                        "Launch of the Week #{} · week of {}",
                        w["rank"].as_u64().unwrap_or(0),
                        escape(s(w, "week"))
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    if l["featured"].as_bool() == Some(true) {
        chips.push("Featured".into());
    }
    if l["verified"].as_bool() == Some(true) {
        chips.push("Verified maker".into());
    }
    let chips: String = chips.iter().map(|c| format!(r#"<span class="chip">{c}</span>"#)).collect();
    // Milestones and the founder story are public where unlocked (the operation leaves them out otherwise).
    let milestones: String = l["milestones"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|x| format!("<li><strong>{}</strong> {}</li>", escape(s(x, "date")), escape(s(x, "title"))))
                .collect()
        })
        .unwrap_or_default();
    let story: String = l["story"]
        .as_object()
        .map(|st| {
            st.iter()
                .filter(|(k, v)| *k != "title" && v.as_str().is_some_and(|t| !t.is_empty()))
                .map(|(k, v)| {
                    format!(
                        "<h3>{}</h3><p>{}</p>",
                        escape(&k.replace('_', " ")),
                        escape(v.as_str().unwrap_or_default())
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let alternatives: String = match read(&state, "get_alternatives", json!({"slug": slug})).await {
        Ok(a) => a["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .take(5)
                    .map(|i| {
                        let other = escape(s(&i["listing"], "slug"));
                        format!(
                            r#"<li><a href="{base}/listings/{other}">{}</a> <a class="muted" href="{base}/compare?a={slug_html}&amp;b={other}">compare</a></li>"#,
                            escape(s(&i["listing"], "name"))
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        Err(e) => {
            tracing::warn!(error = %e, "alternatives on a listing page");
            String::new()
        }
    };
    let body = format!(
        r#"<article class="card listing">{logo}<h1>{name}</h1><p class="tagline">{tagline}</p>
<p class="stats"><span id="votes">{votes}</span> · {follows} followers · <a id="product-link" href="{url}" rel="{rel}">{url}</a>{category}</p>
<div class="actions">{ACTIONS}</div>
<p class="chips">{chips}</p>
{paragraphs}
{features}{founders}{updates}{milestones}{story}{alternatives}
<p class="muted">{not_stated} facts its own website does not state are left blank on purpose.</p>
<p><a href="{base}/api/v1/listings/{slug_html}">This listing in the API</a> · <a href="{base}/leaderboards/community-weekly">This week's board</a></p></article>"#,
        name = escape(s(&l, "name")),
        logo = if s(&l, "logo_url").is_empty() {
            String::new()
        } else {
            // Through the service: the product's server never sees our visitors.
            format!(r#"<img class="logo" src="{base}/logos/{slug_html}" alt="" width="64" height="64">"#)
        },
        tagline = escape(s(&l, "tagline")),
        votes = votes(l["votes"].as_i64().unwrap_or(0)),
        follows = l["follows"].as_i64().unwrap_or(0),
        url = escape(s(&l, "url")),
        rel = if l["link_followed"].as_bool() == Some(true) { "noopener" } else { "nofollow noopener" },
        category = if category.is_object() {
            format!(
                r#" · <a href="{base}/categories/{}">{}</a>"#,
                escape(s(category, "slug")),
                escape(s(category, "name"))
            )
        } else {
            String::new()
        },
        features = if features.is_empty() { String::new() } else { format!("<h2>Features</h2><ul>{features}</ul>") },
        founders = if founders.is_empty() { String::new() } else { format!("<p>Made by {founders}</p>") },
        updates = if updates.is_empty() { String::new() } else { format!("<h2>Latest updates</h2><ul>{updates}</ul>") },
        milestones =
            if milestones.is_empty() { String::new() } else { format!("<h2>Milestones</h2><ul>{milestones}</ul>") },
        story = if story.is_empty() { String::new() } else { format!("<h2>The founders' story</h2>{story}") },
        alternatives = if alternatives.is_empty() {
            String::new()
        } else {
            format!("<h2>Alternatives</h2><ul>{alternatives}</ul>")
        },
    );
    let name = s(&l, "name");
    let description = describe(
        if s(&l, "short_description").is_empty() { s(&l, "tagline") } else { s(&l, "short_description") },
        &format!("{name} on launchdir"),
    );
    let path = format!("/listings/{}", s(&l, "slug"));
    let mut app = json!({
        "@context": "https://schema.org",
        "@type": "SoftwareApplication",
        "name": name,
        "url": s(&l, "url"),
        "description": description,
        "mainEntityOfPage": format!("{base}{path}"),
    });
    if category.is_object() {
        app["applicationCategory"] = json!(s(category, "name"));
    }
    // Offers only as the site states them: free when the pricing says so, else the summary in words.
    let pricing = s(&l, "pricing_summary");
    let model = s(&l, "pricing_model").to_ascii_lowercase();
    if model == "free" || model == "open source" {
        app["offers"] = json!({"@type": "Offer", "price": "0", "priceCurrency": "USD", "description": pricing});
    } else if !pricing.is_empty() {
        app["offers"] = json!({"@type": "Offer", "description": pricing});
    }
    if let Some(r) = l["community_rating"].as_object()
        && r.get("count").and_then(Value::as_u64).is_some_and(|n| n > 0)
    {
        app["aggregateRating"] = json!({"@type": "AggregateRating", "ratingValue": r["average"], "ratingCount": r["count"], "bestRating": 5});
    }
    let mut trail = vec![("Launches", "/".to_owned())];
    if category.is_object() {
        trail.push((s(category, "name"), format!("/categories/{}", s(category, "slug"))));
    }
    trail.push((name, path.clone()));
    let meta = Meta {
        title: name,
        description: &description,
        path: &path,
        kind: "website",
        json_ld: vec![app, breadcrumbs(base, &trail)],
        feed: Some((format!("{name}: updates"), format!("{path}/updates.atom"))),
    };
    Ok((name.to_owned(), with_head(base, &meta, body)))
}

#[derive(Debug, Deserialize)]
pub struct VoteForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    action: String,
}

#[derive(Debug, Deserialize)]
pub struct FollowForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    on: String,
}

/// Runs an engagement change for the signed-in person and sends them back to the listing page.
async fn engage<F, Fut>(state: &State, req: &HttpRequest, slug: &str, sent_csrf: &str, change: F) -> HttpResponse
where
    F: FnOnce(domain::ids::UserId) -> Fut,
    Fut: std::future::Future<Output = Result<bool, OpError>>,
{
    let Some((p, csrf)) = signed_in(state, req).await else { return see_other(&state.url("/signin")) };
    if !crate::web::same(state, sent_csrf, &csrf) {
        return html(
            StatusCode::FORBIDDEN,
            page(state, "Expired", Some(&p), "<p>This form expired. Please try again.</p>"),
        );
    }
    match change(p.user_id).await {
        Ok(changed) => {
            if changed {
                operations::public_data_changed(&state.app, &state.ctx.reads).await;
            }
            see_other(&format!("{}/listings/{}", state.public_url, slug))
        }
        Err(OpError::NotFound(_)) => not_found(state, Some(&p), "No live listing has this address."),
        Err(OpError::Conflict { message, .. }) => {
            html(StatusCode::CONFLICT, page(state, "Not allowed", Some(&p), &format!("<p>{}</p>", escape(&message))))
        }
        Err(e) => {
            tracing::error!(error = %e, "vote or follow");
            oops(state, Some(&p))
        }
    }
}

pub async fn vote(
    state: web::Data<State>,
    req: HttpRequest,
    slug: web::Path<String>,
    form: web::Form<VoteForm>,
) -> HttpResponse {
    let (app, target) = (state.app.clone(), slug.clone());
    let undo = form.action == "unvote";
    let address = api_http::middleware::client_address(&req).map(|a| a.to_string());
    engage(&state, &req, &slug, &form.csrf, |user| async move {
        if undo {
            operations::engagement::unvote(&app, user, &target).await
        } else {
            operations::engagement::vote(&app, user, &target, address.as_deref()).await
        }
    })
    .await
}

pub async fn follow(
    state: web::Data<State>,
    req: HttpRequest,
    slug: web::Path<String>,
    form: web::Form<FollowForm>,
) -> HttpResponse {
    let (app, target) = (state.app.clone(), slug.clone());
    let on = form.on != "0";
    engage(&state, &req, &slug, &form.csrf, |user| async move {
        operations::engagement::follow(&app, user, &target, on).await
    })
    .await
}

/// The board names with how the page titles them; billboard says it is paid.
const BOARDS: [(&str, &str); 5] = [
    ("community-weekly", "This week, by community votes"),
    ("community-all-time", "All time, by community votes"),
    ("billboard", "Billboard — paid ranking"),
    ("domain-rating", "Domain Rating (third-party)"),
    ("revenue", "Reported revenue"),
];

#[derive(Debug, Deserialize)]
pub struct PageQuery {
    page: Option<i64>,
}

/// Rows per leaderboard page.
const BOARD_PAGE: i64 = 100;

pub async fn leaderboard(
    state: web::Data<State>,
    req: HttpRequest,
    board: web::Path<String>,
    q: web::Query<PageQuery>,
) -> HttpResponse {
    let (board, n) = (board.into_inner(), q.page.unwrap_or(1).clamp(1, 1000));
    public_page(&state, &req, format!("board {board} {n}"), "No such leaderboard.", move |state| {
        leaderboard_page(state, board, n)
    })
    .await
}

/// The `leaderboard` page for every visitor: its title and body.
async fn leaderboard_page(state: web::Data<State>, board: String, n: i64) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let Some((_, title)) = BOARDS.iter().find(|(b, _)| *b == board.as_str()) else {
        return Err(OpError::NotFound("leaderboard"));
    };
    let input = json!({"board": board.as_str(), "per_page": BOARD_PAGE, "page": n});
    let b = read(&state, "get_leaderboard", input).await?;
    let paid = b["paid"].as_bool().unwrap_or(false);
    let rows: String = b["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    let metric = match s(&i["metric"], "name") {
                        "billboard_cents" => {
                            format!("${:.2} paid", i["metric"]["value"].as_i64().unwrap_or(0) as f64 / 100.0)
                        }
                        "votes" | "votes_this_week" => votes(i["metric"]["value"].as_i64().unwrap_or(0)),
                        other => format!("{} {}", i["metric"]["value"].as_i64().unwrap_or(0), other.replace('_', " ")),
                    };
                    row(base, &i["listing"], i["rank"].as_u64(), &metric)
                })
                .collect()
        })
        .unwrap_or_default();
    let tabs: String = BOARDS
        .iter()
        .map(|(name, t)| {
            let current = if *name == board.as_str() { r#" aria-current="page""# } else { "" };
            format!(r#"<a href="{base}/leaderboards/{name}"{current}>{}</a>"#, escape(t))
        })
        .collect::<Vec<_>>()
        .join(" · ");
    let label = if paid {
        r#"<p class="paid" role="note"><strong>Paid.</strong> This ranking is bought: it orders listings by money contributed, not by votes.</p>"#
    } else {
        ""
    };
    let list = if rows.is_empty() {
        r#"<p class="muted">Nobody is ranked here yet.</p>"#.to_owned()
    } else {
        format!(r#"<ol class="items board">{rows}</ol>"#)
    };
    let pages = b["pagination"]["total_pages"].as_i64().unwrap_or(1);
    let link =
        |to: i64, text: &str| format!(r#"<a href="{base}/leaderboards/{}?page={to}">{text}</a>"#, escape(&board));
    let mut nav = Vec::new();
    if n > 1 {
        nav.push(link(n - 1, "← Higher ranks"));
    }
    if n < pages {
        nav.push(link(n + 1, "Lower ranks →"));
    }
    let nav = if nav.is_empty() {
        String::new()
    } else {
        format!(r#"<p class="pager">Page {n} of {pages} · {}</p>"#, nav.join(" · "))
    };
    let body = format!(
        r#"<section class="card"><h1>{title}</h1><p class="muted">{}</p>{label}<p class="tabs">{tabs}</p>{list}{nav}</section>"#,
        escape(s(&b, "description")),
        title = escape(title),
    );
    let path = if n > 1 { format!("/leaderboards/{board}?page={n}") } else { format!("/leaderboards/{board}") };
    let description = describe(s(&b, "description"), title);
    let meta = Meta { title, description: &description, path: &path, kind: "website", json_ld: vec![], feed: None };
    Ok(((*title).to_owned(), with_head(base, &meta, body)))
}

// ---- categories, the launch calendar, founders, the blog, awards ------------------------------------

/// Markdown to HTML for blog posts: raw HTML in the source is shown as text, and a link or image keeps
/// its address only when it is http, https, mailto or relative (never `javascript:` or `data:`).
pub fn markdown_html(src: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, html};
    let safe = |url: CowStr<'static>| -> CowStr<'static> {
        let u = url.trim().to_ascii_lowercase();
        let scheme = u.split_once(':').map(|(s, _)| s).filter(|s| !s.contains(['/', '?', '#']));
        match scheme {
            None | Some("http" | "https" | "mailto") => url,
            Some(_) => CowStr::Borrowed("#"),
        }
    };
    let events = Parser::new_ext(src, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|e| match e {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: safe(dest_url.into_static()), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Image { link_type, dest_url: safe(dest_url.into_static()), title, id })
        }
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

fn faqs_html(faqs: &Value) -> String {
    let items: String = faqs
        .as_array()
        .map(|f| {
            f.iter()
                .map(|q| {
                    format!(
                        "<details><summary>{}</summary><p>{}</p></details>",
                        escape(s(q, "question")),
                        escape(s(q, "answer"))
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    if items.is_empty() { String::new() } else { format!("<h2>Questions</h2>{items}") }
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
    let key = format!("{}\u{0}page\u{0}{inputs}", state.app.clock.now().date_naive());
    let rendered = render(state.clone());
    let packed = state
        .ctx
        .reads
        .get_or_bytes(key, async move {
            let (title, body) = rendered.await?;
            Ok(web::Bytes::from(format!("{:08x}{title}{body}", title.len())))
        })
        .await?;
    let text = std::str::from_utf8(&packed).ok();
    let split = text.and_then(|t| {
        usize::from_str_radix(t.get(..8)?, 16).ok().and_then(|n| Some((t.get(8..8 + n)?, t.get(8 + n..)?)))
    });
    let (title, body) =
        split.ok_or_else(|| OpError::Repo(domain::ports::RepoError::Unexpected("a cached page is damaged".into())))?;
    Ok((title.to_owned(), body.to_owned()))
}

/// The answer when a page could not be drawn: an unknown record (or an input naming none) is the
/// not-found page saying `what`; anything else is logged and the error page.
fn page_error(state: &State, who: Option<&Principal>, e: OpError, what: &str) -> HttpResponse {
    match e {
        OpError::NotFound(_) | OpError::Invalid(_) => not_found(state, who, what),
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

pub async fn categories(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    public_page(&state, &req, "categories".into(), "", categories_page).await
}

/// The `categories` page for every visitor: its title and body.
async fn categories_page(state: web::Data<State>) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let tree = read(&state, "list_categories", json!({})).await?;
    fn node(base: &str, n: &Value) -> String {
        let subs: String =
            n["subcategories"].as_array().map(|a| a.iter().map(|c| node(base, c)).collect()).unwrap_or_default();
        format!(
            r#"<li><a href="{base}/categories/{}">{}</a> <span class="muted">{} live</span>{}</li>"#,
            escape(s(n, "slug")),
            escape(s(n, "name")),
            n["live_listings_total"].as_u64().unwrap_or(0),
            if subs.is_empty() { String::new() } else { format!("<ul>{subs}</ul>") }
        )
    }
    let items: String = tree["items"].as_array().map(|a| a.iter().map(|n| node(base, n)).collect()).unwrap_or_default();
    let body = format!(r#"<section class="card"><h1>Categories</h1><ul class="tree">{items}</ul></section>"#);
    let meta = Meta {
        title: "Categories",
        description: "Every category of the directory with how many live launches each holds.",
        path: "/categories",
        kind: "website",
        json_ld: vec![],
        feed: None,
    };
    Ok(("Categories".to_owned(), with_head(base, &meta, body)))
}

pub async fn category(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let input = json!({"slug": slug.as_str(), "per_page": 50});
    public_page(&state, &req, format!("category {input}"), "No such category.", move |state| {
        category_page(state, input)
    })
    .await
}

/// The `category` page for every visitor: its title and body.
async fn category_page(state: web::Data<State>, input: Value) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let c = read(&state, "get_category", input).await?;
    let link =
        |r: &Value| format!(r#"<a href="{base}/categories/{}">{}</a>"#, escape(s(r, "slug")), escape(s(r, "name")));
    let parent = if c["parent"].is_object() {
        format!("<p class=\"muted\">In {}</p>", link(&c["parent"]))
    } else {
        String::new()
    };
    let subs: Vec<String> = c["subcategories"].as_array().map(|a| a.iter().map(link).collect()).unwrap_or_default();
    let subs = if subs.is_empty() { String::new() } else { format!("<p>Subcategories: {}</p>", subs.join(" · ")) };
    let empty = Vec::new();
    let body = format!(
        r#"<section class="card"><h1>{}</h1>{parent}<p>{}</p>{subs}<h2>Live listings, most voted first</h2>{}{}</section>"#,
        escape(s(&c, "name")),
        escape(s(&c, "description")),
        list(base, c["listings"]["items"].as_array().unwrap_or(&empty), "No live listings here yet."),
        faqs_html(&c["faqs"]),
    );
    let name = s(&c, "name");
    let path = format!("/categories/{}", s(&c, "slug"));
    let description = describe(s(&c, "description"), &format!("{name}: launches in this category on launchdir"));
    let mut trail = vec![("Launches", "/".to_owned()), ("Categories", "/categories".to_owned())];
    if c["parent"].is_object() {
        trail.push((s(&c["parent"], "name"), format!("/categories/{}", s(&c["parent"], "slug"))));
    }
    trail.push((name, path.clone()));
    let meta = Meta {
        title: name,
        description: &description,
        path: &path,
        kind: "website",
        json_ld: vec![breadcrumbs(base, &trail)],
        feed: Some((format!("New in {name}"), format!("/feeds/categories/{}.atom", s(&c, "slug")))),
    };
    Ok((name.to_owned(), with_head(base, &meta, body)))
}

pub async fn this_week(state: web::Data<State>) -> HttpResponse {
    see_other(&format!("{}/launches/this", state.public_url))
}

pub async fn launch_week(state: web::Data<State>, req: HttpRequest, week: web::Path<String>) -> HttpResponse {
    let input = json!({"week": week.as_str()});
    public_page(&state, &req, format!("week {input}"), "No such launch week.", move |state| {
        launch_week_page(state, input)
    })
    .await
}

/// The `launch_week` page for every visitor: its title and body.
async fn launch_week_page(state: web::Data<State>, input: Value) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let w = read(&state, "get_launch_week", input).await?;
    let monday = chrono::NaiveDate::parse_from_str(s(&w, "week"), "%Y-%m-%d").ok();
    let step =
        |days: i64| monday.map(|m| (m + chrono::Duration::days(days)).to_string()).unwrap_or_else(|| "this".into());
    let ranked: String = w["launches"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    row(base, &r["listing"], r["rank"].as_u64(), &votes(r["listing"]["votes"].as_i64().unwrap_or(0)))
                })
                .collect()
        })
        .unwrap_or_default();
    let scheduled: String = w["scheduled"]
        .as_array()
        .map(|a| a.iter().map(|l| row(base, l, None, "upcoming")).collect())
        .unwrap_or_default();
    let body = format!(
        r#"<section class="card"><h1>Launch week of {week}</h1><p class="pager"><a href="{base}/launches/{prev}">← Week before</a> · <a href="{base}/launches/this">This week</a> · <a href="{base}/launches/{next}">Week after →</a></p>
<h2>Launched, ranked by community votes</h2>{ranked}<h2>Scheduled</h2>{scheduled}</section>"#,
        week = escape(s(&w, "week")),
        prev = step(-7),
        next = step(7),
        ranked = if ranked.is_empty() {
            r#"<p class="muted">Nothing launched this week.</p>"#.to_owned()
        } else {
            format!(r#"<ol class="items">{ranked}</ol>"#)
        },
        scheduled = if scheduled.is_empty() {
            r#"<p class="muted">Nothing scheduled.</p>"#.to_owned()
        } else {
            format!(r#"<ol class="items">{scheduled}</ol>"#)
        },
    );
    let path = format!("/launches/{}", s(&w, "week"));
    let description = format!("The launches of the week of {}: live and scheduled, ranked by votes.", s(&w, "week"));
    let meta = Meta {
        title: "Launch calendar",
        description: &description,
        path: &path,
        kind: "website",
        json_ld: vec![],
        feed: None,
    };
    Ok(("Launch calendar".to_owned(), with_head(base, &meta, body)))
}

pub async fn founder(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let input = json!({"slug": slug.as_str()});
    public_page(&state, &req, format!("founder {input}"), "No such founder.", move |state| founder_page(state, input))
        .await
}

/// The `founder` page for every visitor: its title and body.
async fn founder_page(state: web::Data<State>, input: Value) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let f = read(&state, "get_founder", input).await?;
    let empty = Vec::new();
    let body = format!(
        r#"<section class="card"><h1>{}</h1><p class="tagline">{}</p><p>{}</p><h2>Building</h2>{}</section>"#,
        escape(s(&f, "name")),
        escape(s(&f, "headline")),
        escape(s(&f, "bio")),
        list(base, f["companies"].as_array().unwrap_or(&empty), "No live listings."),
    );
    let name = s(&f, "name");
    let path = format!("/founders/{}", s(&f, "slug"));
    let description = describe(s(&f, "headline"), &format!("{name}, a maker on launchdir"));
    let same_as: Vec<&str> =
        f["socials"].as_object().map(|m| m.values().filter_map(Value::as_str).collect()).unwrap_or_default();
    let person = json!({
        "@context": "https://schema.org",
        "@type": "Person",
        "name": name,
        "description": s(&f, "bio"),
        "jobTitle": s(&f, "headline"),
        "url": format!("{base}{path}"),
        "sameAs": same_as,
    });
    let trail = [("Launches", "/".to_owned()), (name, path.clone())];
    let meta = Meta {
        title: name,
        description: &description,
        path: &path,
        kind: "profile",
        json_ld: vec![person, breadcrumbs(base, &trail)],
        feed: None,
    };
    Ok((name.to_owned(), with_head(base, &meta, body)))
}

pub async fn blog(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    public_page(&state, &req, "blog".into(), "", blog_page).await
}

/// The `blog` page for every visitor: its title and body.
async fn blog_page(state: web::Data<State>) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let posts = read(&state, "list_blog_posts", json!({"per_page": 50})).await?;
    let items: String = posts["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    format!(
                        r#"<li class="post"><a class="name" href="{base}/blog/{}">{}</a><p class="muted">{}</p></li>"#,
                        escape(s(p, "slug")),
                        escape(s(p, "title")),
                        escape(s(p, "summary"))
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let body = format!(r#"<section class="card"><h1>Blog</h1><ul class="posts">{items}</ul></section>"#);
    let meta = Meta {
        title: "Blog",
        description: "Notes from launchdir on launching products and how the directory works.",
        path: "/blog",
        kind: "website",
        json_ld: vec![],
        feed: None,
    };
    Ok(("Blog".to_owned(), with_head(base, &meta, body)))
}

pub async fn blog_post(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let input = json!({"slug": slug.as_str()});
    public_page(&state, &req, format!("post {input}"), "No such post.", move |state| blog_post_page(state, input)).await
}

/// The `blog_post` page for every visitor: its title and body.
async fn blog_post_page(state: web::Data<State>, input: Value) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let post = read(&state, "get_blog_post", input).await?;
    let body = format!(
        r#"<article class="card post"><h1>{}</h1><p class="muted">{}</p>{}{}</article>"#,
        escape(s(&post, "title")),
        escape(s(&post, "author")),
        markdown_html(s(&post, "body_markdown")),
        faqs_html(&post["faqs"]),
    );
    let title = s(&post, "title");
    let path = format!("/blog/{}", s(&post, "slug"));
    let description = describe(s(&post, "summary"), title);
    let article = json!({
        "@context": "https://schema.org",
        "@type": "BlogPosting",
        "headline": title,
        "description": description,
        "author": {"@type": "Person", "name": s(&post, "author")},
        "datePublished": post["published_at"],
        "mainEntityOfPage": format!("{base}{path}"),
        "publisher": {"@type": "Organization", "name": "launchdir", "url": base},
    });
    let trail = [("Launches", "/".to_owned()), ("Blog", "/blog".to_owned()), (title, path.clone())];
    let meta = Meta {
        title,
        description: &description,
        path: &path,
        kind: "article",
        json_ld: vec![article, breadcrumbs(base, &trail)],
        feed: None,
    };
    Ok((title.to_owned(), with_head(base, &meta, body)))
}

pub async fn awards(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    public_page(&state, &req, "awards".into(), "", awards_page).await
}

/// The `awards` page for every visitor: its title and body.
async fn awards_page(state: web::Data<State>) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let a = read(&state, "list_awards", json!({"per_page": 60})).await?;
    let rows: String = a["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    let metric = format!("week of {} · {}", s(i, "week"), votes(i["votes"].as_i64().unwrap_or(0)));
                    format!(
                        r#"<li class="item"><span class="award">{}</span>{}</li>"#,
                        escape(s(i, "title")),
                        row(base, &i["listing"], None, &metric)
                            .trim_start_matches(r#"<li class="item">"#)
                            .trim_end_matches("</li>")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let body = format!(
        r#"<section class="card"><h1>Launch of the Week</h1><p class="muted">Decided by community votes only, each week when it ends.</p><ol class="items">{rows}</ol></section>"#
    );
    let meta = Meta {
        title: "Awards",
        description: "Launch of the Week: the three launches with the most community votes, each week.",
        path: "/awards",
        kind: "website",
        json_ld: vec![],
        feed: None,
    };
    Ok(("Awards".to_owned(), with_head(base, &meta, body)))
}

#[derive(Debug, Deserialize)]
pub struct CompareQuery {
    #[serde(default)]
    a: String,
    #[serde(default)]
    b: String,
}

/// Two live listings side by side on their categories' attributes; an empty cell means that
/// listing's own site does not state the fact.
pub async fn compare(state: web::Data<State>, req: HttpRequest, q: web::Query<CompareQuery>) -> HttpResponse {
    let input = json!({"a": q.a, "b": q.b});
    public_page(&state, &req, format!("compare {input}"), "One of these listings is not live.", move |state| {
        compare_page(state, input)
    })
    .await
}

/// The `compare` page for every visitor: its title and body.
async fn compare_page(state: web::Data<State>, input: Value) -> OpResult<(String, String)> {
    let base = &state.public_url;
    let c = read(&state, "compare_listings", input).await?;
    let cell = |v: &Value| match v {
        Value::Null => r#"<span class="muted">not stated</span>"#.to_owned(),
        Value::Array(items) => escape(&items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")),
        Value::String(t) => escape(t),
        other => escape(&other.to_string()),
    };
    let rows: String = c["rows"]
        .as_array()
        .map(|r| {
            r.iter()
                .map(|row| {
                    format!(
                        "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
                        escape(&s(row, "attribute").replace('_', " ")),
                        cell(&row["a"]),
                        cell(&row["b"])
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let head =
        |l: &Value| format!(r#"<a href="{base}/listings/{}">{}</a>"#, escape(s(l, "slug")), escape(s(l, "name")));
    let body = format!(
        r#"<section class="card"><h1>{} vs {}</h1><table><thead><tr><th></th><th>{}</th><th>{}</th></tr></thead><tbody>{rows}</tbody></table></section>"#,
        escape(s(&c["a"], "name")),
        escape(s(&c["b"], "name")),
        head(&c["a"]),
        head(&c["b"]),
    );
    let title = format!("{} vs {}", s(&c["a"], "name"), s(&c["b"], "name"));
    let path = format!("/compare?a={}&b={}", s(&c["a"], "slug"), s(&c["b"], "slug"));
    let description = describe(&format!("{title}: side by side on what their own websites state."), &title);
    let meta =
        Meta { title: &title, description: &description, path: &path, kind: "website", json_ld: vec![], feed: None };
    Ok(("Compare".to_owned(), with_head(base, &meta, body)))
}

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

/// The site's search: words, a category and an order over `search_listings` (the same bounds: a
/// refused input is a 400 page naming the field), paged, with a clear empty state. Not kept as a page
/// in the cache (anyone can type anything); the search itself goes through the read cache as in the API.
pub async fn search(state: web::Data<State>, req: HttpRequest, q: web::Query<SearchQuery>) -> HttpResponse {
    let who = signed_in(&state, &req).await.map(|(p, _)| p);
    let base = &state.public_url;
    let q = q.into_inner();
    let mut input = json!({"per_page": SEARCH_PAGE});
    let mut refused: Vec<(String, String)> = Vec::new();
    for (key, value) in [("q", &q.q), ("category", &q.category), ("sort", &q.sort)] {
        if !value.trim().is_empty() {
            input[key] = json!(value.trim());
        }
    }
    let categories = read(&state, "list_categories", json!({})).await.unwrap_or_default();
    fn holds(n: &Value, slug: &str) -> bool {
        s(n, "slug") == slug || n["subcategories"].as_array().into_iter().flatten().any(|c| holds(c, slug))
    }
    let chosen = q.category.trim();
    if !chosen.is_empty() && !categories["items"].as_array().into_iter().flatten().any(|n| holds(n, chosen)) {
        refused.push(("category".into(), "is no category of the directory".into()));
    }
    let page_n = if q.page.is_empty() { Ok(1) } else { q.page.trim().parse::<i64>() };
    match page_n {
        Ok(n) => input["page"] = json!(n),
        Err(_) => refused.push(("page".into(), "must be a whole number".into())),
    }
    let results = if refused.is_empty() {
        match read(&state, "search_listings", input.clone()).await {
            Ok(r) => Some(r),
            Err(OpError::Invalid(errors)) => {
                refused.extend(errors.0.into_iter().map(|e| (e.field, e.problem)));
                None
            }
            Err(e) => {
                tracing::error!(error = %e, "search page");
                return oops(&state, who.as_ref());
            }
        }
    } else {
        None
    };
    let mut options = String::from(r#"<option value="">Every category</option>"#);
    fn add(options: &mut String, n: &Value, depth: usize, chosen: &str) {
        let slug = s(n, "slug");
        let selected = if slug == chosen { " selected" } else { "" };
        options.push_str(&format!(
            r#"<option value="{}"{selected}>{}{}</option>"#,
            escape(slug),
            "— ".repeat(depth),
            escape(s(n, "name"))
        ));
        for c in n["subcategories"].as_array().into_iter().flatten() {
            add(options, c, depth + 1, chosen);
        }
    }
    for n in categories["items"].as_array().into_iter().flatten() {
        add(&mut options, n, 0, q.category.trim());
    }
    let sorts: String = domain::listing::SearchSort::NAMES
        .iter()
        .map(|name| {
            let selected = if *name == q.sort.trim() { " selected" } else { "" };
            format!(r#"<option value="{name}"{selected}>{}</option>"#, name.replace('_', " "))
        })
        .collect();
    let form = format!(
        r#"<form class="filters" method="get" action="{base}/search" role="search"><label>Words<input type="search" name="q" value="{}" maxlength="{}"></label><label>Category<select name="category">{options}</select></label><label>Order<select name="sort">{sorts}</select></label><button>Search</button></form>"#,
        escape(q.q.trim()),
        domain::listing::SearchText::MAX,
    );
    let (status, content) = match &results {
        None => {
            let items: String = refused
                .iter()
                .map(|(field, problem)| format!("<li><strong>{}</strong> {}</li>", escape(field), escape(problem)))
                .collect();
            (
                StatusCode::BAD_REQUEST,
                format!(r#"<div class="error" role="alert"><p>This search cannot be run:</p><ul>{items}</ul></div>"#),
            )
        }
        Some(r) => {
            let total = r["pagination"]["total"].as_u64().unwrap_or(0);
            let items = r["items"].as_array().cloned().unwrap_or_default();
            let words = q.q.trim();
            let launches = if total == 1 { "1 live launch".to_owned() } else { format!("{total} live launches") };
            let heading = match (words.is_empty(), total == 1) {
                (true, _) => launches,
                (false, true) => format!("{launches} matches “{}”", escape(words)),
                (false, false) => format!("{launches} match “{}”", escape(words)),
            };
            let body = if items.is_empty() {
                format!(
                    r#"<p class="empty">No live launch matches this search. Try fewer or other words, another category, or <a href="{base}/categories">browse the categories</a>.</p>"#
                )
            } else {
                list(base, &items, "")
            };
            let n = r["pagination"]["page"].as_i64().unwrap_or(1);
            let pages = r["pagination"]["total_pages"].as_i64().unwrap_or(1);
            let link = |to: i64, label: &str| {
                let mut params = vec![];
                for (k, v) in [("q", q.q.trim()), ("category", q.category.trim()), ("sort", q.sort.trim())] {
                    if !v.is_empty() {
                        params.push(format!("{k}={}", percent(v)));
                    }
                }
                params.push(format!("page={to}"));
                format!(r#"<a href="{base}/search?{}">{label}</a>"#, escape(&params.join("&")))
            };
            let mut nav = Vec::new();
            if n > 1 {
                nav.push(link(n - 1, "← Previous"));
            }
            if n < pages {
                nav.push(link(n + 1, "Next →"));
            }
            let nav = if nav.is_empty() { String::new() } else { format!(r#"<p class="pager">{}</p>"#, nav.join(" ")) };
            (StatusCode::OK, format!(r#"<h2 id="results">{heading}</h2>{body}{nav}"#))
        }
    };
    let body = format!(r#"<section class="card"><h1>Search</h1>{form}{content}</section>"#);
    // Result pages are not for search engines' indexes (endless combinations); the search page itself is.
    let head = format!(
        r#"<meta name="description" content="Search the live launches of launchdir by words, category and order."><meta name="robots" content="noindex"><link rel="canonical" href="{}">"#,
        escape(&format!("{base}/search"))
    );
    html(status, page_with(&state, "Search", who.as_ref(), &body, Some(&head)))
}

/// `text` for a URL's query string.
fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
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
    cfg.service(web::resource("/").route(web::get().to(home)).default_service(na()))
        .service(web::resource("/listings/{slug}").route(web::get().to(listing)).default_service(na()))
        .service(web::resource("/listings/{slug}/vote").route(web::post().to(vote)).default_service(na()))
        .service(web::resource("/listings/{slug}/follow").route(web::post().to(follow)).default_service(na()))
        .service(web::resource("/leaderboards/{board}").route(web::get().to(leaderboard)).default_service(na()))
        .service(web::resource("/categories").route(web::get().to(categories)).default_service(na()))
        .service(web::resource("/categories/{slug}").route(web::get().to(category)).default_service(na()))
        .service(web::resource("/launches").route(web::get().to(this_week)).default_service(na()))
        .service(web::resource("/launches/{week}").route(web::get().to(launch_week)).default_service(na()))
        .service(web::resource("/founders/{slug}").route(web::get().to(founder)).default_service(na()))
        .service(web::resource("/blog").route(web::get().to(blog)).default_service(na()))
        .service(web::resource("/blog/{slug}").route(web::get().to(blog_post)).default_service(na()))
        .service(web::resource("/awards").route(web::get().to(awards)).default_service(na()))
        .service(web::resource("/compare").route(web::get().to(compare)).default_service(na()))
        .service(web::resource("/search").route(web::get().to(search)).default_service(na()))
        .service(web::resource("/logos/{slug}").route(web::get().to(logo)).default_service(na()));
}

#[cfg(test)]
mod tests {
    use super::markdown_html;

    #[test]
    fn markdown_keeps_no_script() {
        let out = markdown_html(
            "# Hi\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](https://ok.example/a) [z](/blog) <img src=x onerror=alert(1)>",
        );
        assert!(out.contains("<h1>Hi</h1>"), "{out}");
        assert!(!out.contains("<script>") && out.contains("&lt;script&gt;"), "{out}");
        assert!(!out.contains("<img") && !out.contains("javascript:"), "{out}");
        assert!(out.contains(r#"href="https://ok.example/a""#) && out.contains(r#"href="/blog""#), "{out}");
        assert!(out.contains(r##"href="#""##), "{out}");
    }
}
