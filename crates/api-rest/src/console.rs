//! The operator's console under `/admin`, for admin accounts only: the report queue, new and recently
//! edited listings with their changes, hide and restore, suspend and restore accounts, the domain
//! blocklist and the audit log. Every action is a `operations::moderation` use case run as the signed-in
//! admin (so it is audited under their email) behind the session's CSRF token. To anyone else (signed
//! out, or signed in without the admin right) every console address answers exactly as an address that
//! does not exist does, so the console's existence leaks nothing.

use crate::server::State;
use crate::site::render;
use crate::web::{html, oops, page, same, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use domain::listing::ListingStatus;
use domain::moderation::AuditEntry;
use operations::OpError;
use operations::moderation::{self, Actor, ReportedListing};
use serde::Deserialize;

/// Rows on each console list.
const ROWS: u64 = 50;

/// The signed-in admin and the session's CSRF token; `None` for anyone else.
async fn admin(state: &State, req: &HttpRequest) -> Option<(Principal, String)> {
    signed_in(state, req).await.filter(|(p, _)| p.is_admin)
}

/// What an address that does not exist answers: the console's answer to anyone but an admin.
fn hidden_from_others() -> HttpResponse {
    actix_web::ResponseError::error_response(&api_http::error::ApiError::not_found("route"))
}

fn actor(p: &Principal) -> Actor {
    Actor::Admin(p.email.clone())
}

/// A console page: `view` under the console's tabs.
fn show<T: Template>(state: &State, p: &Principal, title: &str, view: &T) -> HttpResponse {
    match render(view) {
        Ok(body) => html(StatusCode::OK, page(state, title, Some(p), &body)),
        Err(e) => {
            tracing::error!(error = %e, "console page");
            oops(state, Some(p))
        }
    }
}

#[derive(Template)]
#[template(path = "admin/done.html")]
struct Done<'a> {
    base: &'a str,
    message: &'a str,
    ok: bool,
}

/// The page after an action: what happened, or why it did not, with its status.
fn outcome(state: &State, p: &Principal, result: Result<String, OpError>) -> HttpResponse {
    let (message, status) = match result {
        Ok(m) => (m, StatusCode::OK),
        Err(e) => match crate::maker::refusal(&e, str::to_owned) {
            (m, Some(status)) => (m, status),
            (_, None) => {
                tracing::error!(error = %e, "console action");
                return oops(state, Some(p));
            }
        },
    };
    let view = Done { base: &state.public_url, message: &message, ok: status == StatusCode::OK };
    match render(&view) {
        Ok(body) => html(status, page(state, "Console", Some(p), &body)),
        Err(_) => oops(state, Some(p)),
    }
}

/// A listing row of the console: what it is and which action it allows.
struct Row {
    slug: String,
    name: String,
    status: &'static str,
    created: String,
    hidden: bool,
}

/// An owner's edit: the listing, who, when, and each changed field as `field: before → after`.
struct Edit {
    slug: String,
    editor: String,
    at: String,
    changes: Vec<String>,
}

fn changes(before: &str, after: &str) -> Vec<String> {
    let short = |v: &serde_json::Value| {
        let s = v.to_string();
        if s.chars().count() > 160 { format!("{}…", s.chars().take(160).collect::<String>()) } else { s }
    };
    operations::admin::changed_fields(before, after)
        .iter()
        .map(|(field, old, new)| format!("{field}: {} → {}", short(old), short(new)))
        .collect()
}

#[derive(Template)]
#[template(path = "admin/console.html")]
struct Console<'a> {
    base: &'a str,
    csrf: &'a str,
    queue: Vec<ReportedListing>,
    listings: Vec<Row>,
    edits: Vec<Edit>,
}

pub async fn console(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, csrf)) = admin(&state, &req).await else { return hidden_from_others() };
    let reports = match moderation::reports(&state.app, true, 500).await {
        Ok(r) => r,
        Err(e) => return outcome(&state, &p, Err(e)),
    };
    let (listings, edits) = match moderation::recent(&state.app, ROWS).await {
        Ok(r) => r,
        Err(e) => return outcome(&state, &p, Err(e)),
    };
    let view = Console {
        base: &state.public_url,
        csrf: &csrf,
        queue: moderation::queue(&reports),
        listings: listings
            .iter()
            .map(|l| Row {
                slug: l.slug.to_string(),
                name: l.profile.name.clone(),
                status: l.lifecycle.status().as_str(),
                created: l.created_at.format("%Y-%m-%d %H:%M").to_string(),
                hidden: l.lifecycle.status() == ListingStatus::Hidden,
            })
            .collect(),
        edits: edits
            .iter()
            .map(|e| Edit {
                slug: e.slug.clone(),
                editor: e.editor.clone().unwrap_or_else(|| "a deleted account".into()),
                at: e.version.created_at.format("%Y-%m-%d %H:%M").to_string(),
                changes: changes(&e.version.before, &e.version.after),
            })
            .collect(),
    };
    show(&state, &p, "Console", &view)
}

/// One report as the reports page shows it.
struct ReportRow {
    slug: String,
    name: String,
    reason: &'static str,
    note: String,
    by: String,
    at: String,
    state: String,
}

#[derive(Template)]
#[template(path = "admin/reports.html")]
struct Reports<'a> {
    base: &'a str,
    reports: Vec<ReportRow>,
}

pub async fn reports(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, _)) = admin(&state, &req).await else { return hidden_from_others() };
    let reports = match moderation::reports(&state.app, false, ROWS * 4).await {
        Ok(r) => r,
        Err(e) => return outcome(&state, &p, Err(e)),
    };
    let rows = reports
        .into_iter()
        .map(|r| ReportRow {
            slug: r.listing_slug,
            name: r.listing_name,
            reason: r.reason.label(),
            note: r.note,
            by: r.reporter.unwrap_or_else(|| "a deleted account".into()),
            at: r.at.format("%Y-%m-%d %H:%M").to_string(),
            state: r.closed_at.map_or_else(|| "open".into(), |at| format!("closed {}", at.format("%Y-%m-%d %H:%M"))),
        })
        .collect();
    show(&state, &p, "Reports", &Reports { base: &state.public_url, reports: rows })
}

#[derive(Debug, Deserialize)]
pub struct Lookup {
    #[serde(default)]
    email: String,
}

/// An account as the users page shows it.
struct Account {
    email: String,
    admin: bool,
    suspended: Option<(String, String)>,
}

#[derive(Template)]
#[template(path = "admin/users.html")]
struct Users<'a> {
    base: &'a str,
    csrf: &'a str,
    email: &'a str,
    account: Option<Account>,
    looked: bool,
}

pub async fn users(state: web::Data<State>, req: HttpRequest, q: web::Query<Lookup>) -> HttpResponse {
    let Some((p, csrf)) = admin(&state, &req).await else { return hidden_from_others() };
    let email = q.email.trim();
    let mut account = None;
    if let Ok(parsed) = domain::user::Email::parse(email) {
        match operations::admin::user_by_email(&state.app, &parsed).await {
            Ok(Some(u)) => {
                let suspended = match moderation::suspension(&state.app, u.id).await {
                    Ok(s) => s.map(|(at, why)| (at.format("%Y-%m-%d %H:%M").to_string(), why)),
                    Err(e) => return outcome(&state, &p, Err(e)),
                };
                account = Some(Account { email: u.email.to_string(), admin: u.is_admin, suspended });
            }
            Ok(None) => {}
            Err(e) => return outcome(&state, &p, Err(e)),
        }
    }
    let view = Users { base: &state.public_url, csrf: &csrf, email, account, looked: !email.is_empty() };
    show(&state, &p, "Accounts", &view)
}

#[derive(Template)]
#[template(path = "admin/blocklist.html")]
struct Blocklist<'a> {
    base: &'a str,
    csrf: &'a str,
    /// Domain, why, when, by whom.
    blocked: Vec<(String, String, String, String)>,
}

pub async fn blocklist(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, csrf)) = admin(&state, &req).await else { return hidden_from_others() };
    let blocked = match moderation::blocked_domains(&state.app).await {
        Ok(b) => b,
        Err(e) => return outcome(&state, &p, Err(e)),
    };
    let rows = blocked
        .into_iter()
        .map(|b| (b.domain.as_str().to_owned(), b.reason, b.at.format("%Y-%m-%d %H:%M").to_string(), b.by))
        .collect();
    show(&state, &p, "Blocklist", &Blocklist { base: &state.public_url, csrf: &csrf, blocked: rows })
}

#[derive(Template)]
#[template(path = "admin/audit.html")]
struct Audit<'a> {
    base: &'a str,
    lines: Vec<AuditEntry>,
}

pub async fn audit(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, _)) = admin(&state, &req).await else { return hidden_from_others() };
    match moderation::audit_log(&state.app, ROWS * 4).await {
        Ok(lines) => show(&state, &p, "Audit log", &Audit { base: &state.public_url, lines }),
        Err(e) => outcome(&state, &p, Err(e)),
    }
}

#[derive(Debug, Deserialize)]
pub struct ActionForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    domain: String,
}

/// Checks that the poster is an admin and the form carries their session's token, then runs `act`
/// as them and shows what came of it.
async fn act<F, Fut>(state: &State, req: &HttpRequest, sent_csrf: &str, act: F) -> HttpResponse
where
    F: FnOnce(Actor) -> Fut,
    Fut: std::future::Future<Output = Result<String, OpError>>,
{
    let Some((p, csrf)) = admin(state, req).await else { return hidden_from_others() };
    if !same(state, sent_csrf, &csrf) {
        return html(
            StatusCode::FORBIDDEN,
            page(state, "Expired", Some(&p), "<p>This form expired. Go back, reload the page and try again.</p>"),
        );
    }
    let result = act(actor(&p)).await;
    outcome(state, &p, result)
}

pub async fn hide(
    state: web::Data<State>,
    req: HttpRequest,
    slug: web::Path<String>,
    f: web::Form<ActionForm>,
) -> HttpResponse {
    let (app, reads) = (state.app.clone(), state.ctx.reads.clone());
    act(&state, &req, &f.csrf.clone(), |who| async move {
        let l = moderation::hide_listing(&app, &reads, &who, &slug, &f.reason).await?;
        Ok(format!("{} is hidden from every public page and read; its owners are emailed why.", l.profile.name))
    })
    .await
}

pub async fn restore(
    state: web::Data<State>,
    req: HttpRequest,
    slug: web::Path<String>,
    f: web::Form<ActionForm>,
) -> HttpResponse {
    let (app, reads) = (state.app.clone(), state.ctx.reads.clone());
    act(&state, &req, &f.csrf.clone(), |who| async move {
        let l = moderation::restore_listing(&app, &reads, &who, &slug).await?;
        Ok(format!("{} is back, {} as before.", l.profile.name, l.lifecycle.status().as_str()))
    })
    .await
}

pub async fn dismiss(
    state: web::Data<State>,
    req: HttpRequest,
    slug: web::Path<String>,
    f: web::Form<ActionForm>,
) -> HttpResponse {
    let app = state.app.clone();
    act(&state, &req, &f.csrf.clone(), |who| async move {
        let n = moderation::dismiss_reports(&app, &who, &slug, &f.reason).await?;
        Ok(format!("{n} report(s) closed; the listing stays as it is."))
    })
    .await
}

pub async fn suspend(state: web::Data<State>, req: HttpRequest, f: web::Form<ActionForm>) -> HttpResponse {
    let (app, reads) = (state.app.clone(), state.ctx.reads.clone());
    act(&state, &req, &f.csrf.clone(), |who| async move {
        let (u, e) = moderation::suspend_user(&app, &reads, &who, &f.email, &f.reason).await?;
        Ok(format!(
            "{} is suspended: signed out everywhere, keys and apps refused, {} listing(s) hidden, {} vote(s) no longer counted.",
            u.email, e.listings, e.votes
        ))
    })
    .await
}

pub async fn unsuspend(state: web::Data<State>, req: HttpRequest, f: web::Form<ActionForm>) -> HttpResponse {
    let (app, reads) = (state.app.clone(), state.ctx.reads.clone());
    act(&state, &req, &f.csrf.clone(), |who| async move {
        let (u, e) = moderation::restore_user(&app, &reads, &who, &f.email).await?;
        Ok(format!("{} is restored: {} listing(s) back, {} vote(s) counted again.", u.email, e.listings, e.votes))
    })
    .await
}

pub async fn block(state: web::Data<State>, req: HttpRequest, f: web::Form<ActionForm>) -> HttpResponse {
    let app = state.app.clone();
    act(&state, &req, &f.csrf.clone(), |who| async move {
        let b = moderation::block_domain(&app, &who, &f.domain, &f.reason).await?;
        Ok(format!("{} and its subdomains can no longer be submitted or claimed.", b.domain.as_str()))
    })
    .await
}

pub async fn unblock(state: web::Data<State>, req: HttpRequest, f: web::Form<ActionForm>) -> HttpResponse {
    let app = state.app.clone();
    act(&state, &req, &f.csrf.clone(), |who| async move {
        moderation::unblock_domain(&app, &who, &f.domain).await?;
        Ok(format!("{} is off the blocklist.", f.domain.trim()))
    })
    .await
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    // A method a console address does not serve is a 404 too: nothing tells a stranger it exists.
    let none = || web::to(hidden_404);
    let get = |path: &str, to| web::resource(path.to_owned()).route(to).default_service(none());
    cfg.service(get("/admin", web::get().to(console)))
        .service(get("/admin/reports", web::get().to(reports)))
        .service(get("/admin/users", web::get().to(users)))
        .service(get("/admin/audit", web::get().to(audit)))
        .service(get("/admin/blocklist", web::get().to(blocklist)).route(web::post().to(block)))
        .service(get("/admin/blocklist/remove", web::post().to(unblock)))
        .service(get("/admin/users/suspend", web::post().to(suspend)))
        .service(get("/admin/users/restore", web::post().to(unsuspend)))
        .service(get("/admin/listings/{slug}/hide", web::post().to(hide)))
        .service(get("/admin/listings/{slug}/restore", web::post().to(restore)))
        .service(get("/admin/listings/{slug}/dismiss", web::post().to(dismiss)));
}

async fn hidden_404() -> HttpResponse {
    hidden_from_others()
}
