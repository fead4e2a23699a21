//! A listing's page, with the visitor's vote and follow buttons, and the posts those buttons make.

use super::{Meta, breadcrumbs, cached_parts, describe, not_found, page_error, render, split_head, votes, with_head};
use crate::server::State;
use crate::web::{html, oops, page, page_with, see_other, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::moderation::{ReportNote, ReportReason};
use operations::OpError;
use operations::OpResult;
use operations::public::compare::alternatives_of;
use operations::public::listings::{
    ListingProfileOut, ListingSummaryOut, MilestoneOut, SlugInput, UpdateOut, profile_with_id,
};
use serde::Deserialize;
use serde_json::json;

/// Where the listing page's vote and follow forms go: they depend on the visitor, the rest does not.
const ACTIONS: &str = "<!--actions-->";

#[derive(Template)]
#[template(path = "site/listing.html")]
struct ListingView<'a> {
    base: &'a str,
    l: &'a ListingProfileOut,
    votes: String,
    /// The product link's `rel`: followed only when the listing earned it.
    rel: &'static str,
    /// What it earned: Launch of the Week awards, featured, verified.
    chips: Vec<String>,
    paragraphs: Vec<&'a str>,
    updates: &'a [UpdateOut],
    /// Public where unlocked (the operation leaves them out otherwise).
    milestones: &'a [MilestoneOut],
    /// The founders' story, heading and text, where unlocked.
    story: Vec<(String, &'a str)>,
    alternatives: Vec<&'a ListingSummaryOut>,
}

/// The visitor's own buttons, at [`ACTIONS`].
#[derive(Template)]
#[template(path = "site/actions.html")]
struct Actions<'a> {
    base: &'a str,
    slug: &'a str,
    /// The session's CSRF token; `None` when signed out.
    csrf: Option<&'a str>,
    voted: bool,
    following: bool,
    /// What a report can be for: value and label.
    reasons: Vec<(&'static str, &'static str)>,
    note_max: usize,
}

pub async fn listing(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let session = signed_in(&state, &req).await;
    let who = session.as_ref().map(|(p, _)| p);
    let slug = slug.into_inner();
    // The page is kept with its listing's id (from the profile it shows, which only a live listing
    // has), which the visit below takes: a page from the cache asks the database only for a new view's
    // write.
    let rendered = {
        let (state, slug) = (state.clone(), slug.clone());
        async move {
            let (id, title, body) = listing_body(state, slug).await?;
            Ok([id.to_string(), title, body])
        }
    };
    let (id, title, body) = match cached_parts(&state, format!("listing {slug}"), rendered).await {
        Ok([id, title, body]) => match id.parse().map(domain::ids::ListingId::from_db) {
            Ok(id) => (id, title, body),
            Err(_) => {
                return page_error(
                    &state,
                    who,
                    OpError::Repo(domain::ports::RepoError::Unexpected("a cached page is damaged".into())),
                    "",
                );
            }
        },
        Err(e) => return page_error(&state, who, e, "No live listing has this address."),
    };
    let ua = req.headers().get(actix_web::http::header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let address = api_http::middleware::client_address(&req).map(api_http::middleware::address_bucket);
    // A HEAD is no one reading the page: no view, and buttons no one sees.
    let visit = async {
        if api_http::middleware::is_head(&req) {
            return Ok((false, false));
        }
        operations::engagement::visit(&state.app, id, who.map(|p| p.user_id), ua, address.as_deref()).await
    };
    let (voted, following) = match visit.await {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "reading the visitor's vote and follow");
            (false, false)
        }
    };
    let actions = Actions {
        base: &state.public_url,
        slug: &slug,
        csrf: session.as_ref().map(|(_, c)| c.as_str()),
        voted,
        following,
        reasons: ReportReason::ALL.iter().map(|r| (r.as_str(), r.label())).collect(),
        note_max: ReportNote::MAX,
    };
    let actions = match render(&actions) {
        Ok(a) => a,
        Err(e) => return page_error(&state, who, e, ""),
    };
    let (head, body) = split_head(&body);
    html(StatusCode::OK, page_with(&state, &title, who, &body.replacen(ACTIONS, &actions, 1), head))
}

/// The listing page but for the visitor's own buttons (at [`ACTIONS`]), the same for everyone: the
/// listing's id, the page's title and its body.
async fn listing_body(state: web::Data<State>, slug: String) -> OpResult<(i64, String, String)> {
    let base = &state.public_url;
    // get_listing and get_alternatives as the API runs them, less get_alternatives' own lookup of the slug.
    let (id, l) = profile_with_id(&state.ctx, SlugInput { slug }).await?;
    let alternatives = match alternatives_of(&state.ctx, id).await {
        Ok(a) => a.items,
        Err(e) => {
            tracing::warn!(error = %e, "alternatives on a listing page");
            vec![]
        }
    };
    let mut chips: Vec<String> =
        l.awards.iter().map(|w| format!("Launch of the Week #{} · week of {}", w.rank, w.week)).collect();
    if l.featured {
        chips.push("Featured".into());
    }
    if l.verified {
        chips.push("Verified maker".into());
    }
    let story = l
        .story
        .iter()
        .flatten()
        .filter(|(k, v)| *k != "title" && !v.is_empty())
        .map(|(k, v)| (k.replace('_', " "), v.as_str()))
        .collect();
    let view = ListingView {
        base,
        l: &l,
        votes: votes(l.votes),
        rel: if l.link_followed { "noopener" } else { "nofollow noopener" },
        chips,
        paragraphs: l.description.split("\n\n").filter(|p| !p.trim().is_empty()).collect(),
        updates: &l.latest_updates[..l.latest_updates.len().min(3)],
        milestones: l.milestones.as_deref().unwrap_or_default(),
        story,
        alternatives: alternatives.iter().take(5).map(|a| &a.listing).collect(),
    };
    let body = render(&view)?;
    let name = l.name.as_str();
    let description = describe(
        if l.short_description.is_empty() { &l.tagline } else { &l.short_description },
        &format!("{name} on launchdir"),
    );
    let path = format!("/listings/{}", l.slug);
    let category = l.categories.primary.as_ref();
    let mut app = json!({
        "@context": "https://schema.org",
        "@type": "SoftwareApplication",
        "name": name,
        "url": l.url,
        "description": description,
        "mainEntityOfPage": format!("{base}{path}"),
    });
    if let Some(c) = category {
        app["applicationCategory"] = json!(c.name);
    }
    // Offers only as the site states them: free when the pricing says so, else the summary in words.
    let (pricing, model) = (&l.pricing_summary, l.pricing_model.to_ascii_lowercase());
    if model == "free" || model == "open source" {
        app["offers"] = json!({"@type": "Offer", "price": "0", "priceCurrency": "USD", "description": pricing});
    } else if !pricing.is_empty() {
        app["offers"] = json!({"@type": "Offer", "description": pricing});
    }
    if let Some(r) = l.community_rating.as_ref().filter(|r| r.count > 0) {
        app["aggregateRating"] =
            json!({"@type": "AggregateRating", "ratingValue": r.average, "ratingCount": r.count, "bestRating": 5});
    }
    let mut trail = vec![("Launches", "/".to_owned())];
    if let Some(c) = category {
        trail.push((c.name.as_str(), format!("/categories/{}", c.slug)));
    }
    trail.push((name, path.clone()));
    let meta = Meta {
        json_ld: vec![app, breadcrumbs(base, &trail)],
        feed: Some((format!("{name}: updates"), format!("{path}/updates.atom"))),
        ..Meta::new(name, &description, &path)
    };
    Ok((id.get(), name.to_owned(), with_head(base, &meta, body)?))
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

/// A refusal's message as a paragraph of the page.
fn refused(message: &str) -> String {
    #[derive(Template)]
    #[template(source = "<p>{{ message }}</p>", ext = "html")]
    struct Refused<'a> {
        message: &'a str,
    }
    Refused { message }.render().unwrap_or_default()
}

/// Runs an engagement change for the signed-in person and sends them back to the listing page.
async fn engage<F, Fut>(
    state: &State,
    req: &HttpRequest,
    slug: &str,
    sent_csrf: &str,
    touched: fn(String) -> operations::cache::Change,
    change: F,
) -> HttpResponse
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
                // A vote or follow moves this listing's counts and the lists ranked by them: only
                // those cached reads go, here and on every other instance.
                let change = touched(slug.to_owned());
                operations::public_change(&state.app, &state.ctx.reads, &change).await;
            }
            see_other(&format!("{}/listings/{}", state.public_url, slug))
        }
        Err(OpError::NotFound(_)) => not_found(state, Some(&p), "No live listing has this address."),
        Err(OpError::Conflict { message, .. }) => {
            html(StatusCode::CONFLICT, page(state, "Not allowed", Some(&p), &refused(&message)))
        }
        Err(OpError::TooMany { message, retry_after_secs, .. }) => {
            let mut r = html(StatusCode::TOO_MANY_REQUESTS, page(state, "Not now", Some(&p), &refused(&message)));
            if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&retry_after_secs.to_string()) {
                r.headers_mut().insert(actix_web::http::header::RETRY_AFTER, v);
            }
            r
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
    // An IPv6 client by its /64, as the rate limit counts it: one network's addresses are one voter's.
    let address = api_http::middleware::client_address(&req).map(api_http::middleware::address_bucket);
    engage(&state, &req, &slug, &form.csrf, operations::cache::Change::Engagement, |user| async move {
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
    engage(&state, &req, &slug, &form.csrf, operations::cache::Change::Follow, |user| async move {
        operations::engagement::follow(&app, user, &target, on).await
    })
    .await
}

#[derive(Debug, Deserialize)]
pub struct ReportForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    note: String,
}

/// A signed-in person reports a listing to the site team: once per listing, a few a day.
pub async fn report(
    state: web::Data<State>,
    req: HttpRequest,
    slug: web::Path<String>,
    form: web::Form<ReportForm>,
) -> HttpResponse {
    #[derive(Template)]
    #[template(
        source = "<section class=\"card\"><p id=\"reported\">{{ message }}</p><p><a href=\"{{ back }}\">Back to the listing</a></p></section>",
        ext = "html"
    )]
    struct Said<'a> {
        message: &'a str,
        back: &'a str,
    }
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    if !crate::web::same(&state, &form.csrf, &csrf) {
        return html(
            StatusCode::FORBIDDEN,
            page(&state, "Expired", Some(&p), "<p>This form expired. Please try again.</p>"),
        );
    }
    let done = operations::moderation::report_listing(&state.app, p.user_id, &slug, &form.reason, &form.note).await;
    let (message, status) = match done {
        Ok(()) => ("Thank you: the site team will look at this listing.".to_owned(), StatusCode::OK),
        Err(OpError::NotFound(_)) => return not_found(&state, Some(&p), "No live listing has this address."),
        Err(e) => match crate::maker::refusal(&e, str::to_owned) {
            (m, Some(status)) => (m, status),
            (_, None) => {
                tracing::error!(error = %e, "report");
                return oops(&state, Some(&p));
            }
        },
    };
    let back = format!("{}/listings/{}", state.public_url, slug.as_str());
    match render(&Said { message: &message, back: &back }) {
        Ok(body) => html(status, page(&state, "Report", Some(&p), &body)),
        Err(e) => page_error(&state, Some(&p), e, ""),
    }
}
