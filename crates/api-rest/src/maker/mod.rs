//! The maker's pages: their drafts (each field's value beside its state and the evidence quotes it was
//! drafted from, with a form to change it and a button to save the draft as a listing), their
//! listings with status and launch week, their claims and their orders. Every page runs the same
//! account operations as the API, as the signed-in person (a session carries every scope), so the
//! owner checks are the operations' own: another person's draft is a 404 here too.

mod claims;
mod draft;
mod listing;

use crate::server::State;
use crate::site::s;
use crate::web::{html, oops, page, same, see_other, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use domain::auth::Principal;
use operations::badges::escape;
use operations::{Caller, OpError};
use serde::Deserialize;
use serde_json::{Value, json};

/// Runs an account operation as the signed-in person, typed.
async fn call<O: operations::Operation>(state: &State, p: &Principal, input: O::Input) -> Result<O::Output, OpError> {
    operations::invoke::<O>(&state.ctx.with_caller(Caller::Principal(p.clone())), input).await
}

/// Runs an account operation as the signed-in person.
async fn run(state: &State, p: &Principal, id: &str, input: Value) -> Result<Value, OpError> {
    crate::site::op(id).call(state.ctx.with_caller(Caller::Principal(p.clone())), input).await
}

fn failed(state: &State, p: &Principal, e: &OpError) -> HttpResponse {
    match e {
        OpError::NotFound(_) => html(StatusCode::NOT_FOUND, page(state, "Not found", Some(p), "<p>Not found.</p>")),
        e => {
            tracing::error!(error = %e, "maker page");
            oops(state, Some(p))
        }
    }
}

fn tabs(base: &str) -> String {
    format!(
        r#"<p class="tabs"><a href="{base}/me/drafts">Drafts</a> · <a href="{base}/me/listings">Listings</a> · <a href="{base}/me/claims">Claims</a> · <a href="{base}/me/orders">Orders</a></p>"#
    )
}

fn table(head: &[&str], rows: Vec<String>, empty: &str) -> String {
    if rows.is_empty() {
        return format!(r#"<p class="muted">{}</p>"#, escape(empty));
    }
    let th: String = head.iter().map(|h| format!("<th>{h}</th>")).collect();
    format!("<table><thead><tr>{th}</tr></thead><tbody>{}</tbody></table>", rows.concat())
}

/// One of the maker's lists: `op`'s items as table rows.
async fn listing_page(
    state: &State,
    req: &HttpRequest,
    title: &str,
    op: &str,
    head: &[&str],
    row: impl Fn(&str, &Value) -> String,
    empty: &str,
) -> HttpResponse {
    let Some((p, _)) = signed_in(state, req).await else { return see_other(&state.url("/signin")) };
    let base = &state.public_url;
    let v = match run(state, &p, op, json!({"per_page": 100})).await {
        Ok(v) => v,
        Err(e) => return failed(state, &p, &e),
    };
    let rows: Vec<String> = v["items"].as_array().map(|a| a.iter().map(|i| row(base, i)).collect()).unwrap_or_default();
    let body = format!(r#"<section class="card"><h1>{title}</h1>{}{}</section>"#, tabs(base), table(head, rows, empty));
    html(StatusCode::OK, page(state, title, Some(&p), &body))
}

pub async fn drafts(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    drafts_page(&state, &req, "", StatusCode::OK, "").await
}

/// The maker's drafts under a form to submit a website, with `notice` (a refusal) above them.
async fn drafts_page(state: &State, req: &HttpRequest, notice: &str, status: StatusCode, url: &str) -> HttpResponse {
    let Some((p, csrf)) = signed_in(state, req).await else { return see_other(&state.url("/signin")) };
    let base = &state.public_url;
    let form = format!(
        r#"{notice}<section class="card"><h1>Submit your website</h1><p class="muted">We read your site (its robots.txt first) and draft your listing from what it states, each value with the quote it came from; what the site does not say stays blank.</p><form method="post" action="{base}/me/drafts" class="inline"><input type="hidden" name="csrf" value="{csrf}"><input name="url" id="submit-url" value="{url}" placeholder="https://your-product.example" aria-label="Website address" maxlength="{max}" required><button id="submit-site">Draft my listing</button></form></section>"#,
        csrf = escape(&csrf),
        url = escape(url),
        max = domain::draft::SiteUrl::MAX,
    );
    let v = match run(state, &p, "list_my_drafts", json!({"per_page": 100})).await {
        Ok(v) => v,
        Err(e) => return failed(state, &p, &e),
    };
    let row = |base: &str, d: &Value| {
        format!(
            r#"<tr><td><a href="{base}/me/drafts/{id}">{name}</a></td><td>{url}</td><td>{status}</td><td>{c} %</td></tr>"#,
            id = escape(s(d, "id")),
            name = escape(if s(d, "name").is_empty() { s(d, "url") } else { s(d, "name") }),
            url = escape(s(d, "url")),
            status = escape(s(d, "status")),
            c = d["completeness"].as_u64().unwrap_or(0),
        )
    };
    let rows: Vec<String> = v["items"].as_array().map(|a| a.iter().map(|i| row(base, i)).collect()).unwrap_or_default();
    let list = table(&["Draft", "Website", "Status", "Complete"], rows, "No drafts yet: submit your website above.");
    let body = format!(r#"{form}<section class="card"><h1>Your drafts</h1>{}{list}</section>"#, tabs(base));
    html(status, page(state, "Your drafts", Some(&p), &body))
}

#[derive(Debug, Deserialize)]
pub struct SubmitForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    url: String,
}

/// Submits a website (submit_listing) and opens its draft, which fills in while the site is read.
pub async fn submit_site(state: web::Data<State>, req: HttpRequest, form: web::Form<SubmitForm>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    let f = form.into_inner();
    if !same(&state, &f.csrf, &csrf) {
        let notice = r#"<p class="error" role="alert">This form expired. Please try again.</p>"#;
        return drafts_page(&state, &req, notice, StatusCode::FORBIDDEN, &f.url).await;
    }
    match run(&state, &p, "submit_listing", json!({"url": f.url.trim()})).await {
        Ok(d) => see_other(&format!("{}/me/drafts/{}", state.public_url, s(&d, "id"))),
        Err(e) => {
            let (msg, status) = refusal(&e, str::to_owned);
            let Some(status) = status else { return failed(&state, &p, &e) };
            let notice = format!(r#"<p class="error" role="alert">{}</p>"#, escape(&msg));
            drafts_page(&state, &req, &notice, status, &f.url).await
        }
    }
}

/// What a refused operation says (each invalid field named as `field` renders it), and its status;
/// `None` for a failure on our side.
fn refusal(e: &OpError, field: impl Fn(&str) -> String) -> (String, Option<StatusCode>) {
    match e {
        OpError::Invalid(errs) => (
            errs.0.iter().map(|e| format!("{}: {}", field(&e.field), e.problem)).collect::<Vec<_>>().join("; "),
            Some(StatusCode::BAD_REQUEST),
        ),
        OpError::Conflict { message, .. } => (message.clone(), Some(StatusCode::CONFLICT)),
        OpError::TooMany { message, .. } => (message.clone(), Some(StatusCode::TOO_MANY_REQUESTS)),
        OpError::NotFound(what) => (format!("no such {what}"), Some(StatusCode::NOT_FOUND)),
        _ => (String::new(), None),
    }
}

pub async fn listings(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let row = |base: &str, l: &Value| {
        let name = format!(
            r#"<a href="{base}/me/listings/{}">{}</a>"#,
            l["listing_id"].as_i64().unwrap_or(0),
            escape(s(l, "name"))
        );
        format!(
            "<tr><td>{name}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(s(l, "status")),
            escape(s(l, "plan")),
            escape(l["launch_week"].as_str().unwrap_or("—")),
        )
    };
    let head = ["Listing", "Status", "Plan", "Launch week"];
    listing_page(&state, &req, "Your listings", "list_my_listings", &head, row, "No listings yet.").await
}

pub async fn orders(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let row = |_: &str, o: &Value| {
        let number = escape(s(o, "number"));
        let number = match o["checkout_url"].as_str() {
            Some(u) if s(o, "status") == "pending" => format!(r#"<a href="{}">{number}</a>"#, escape(u)),
            _ => number,
        };
        format!(
            "<tr><td>{number}</td><td>{}</td><td>${:.2}</td><td>{}</td></tr>",
            escape(s(o, "status")),
            o["totals"]["gross_cents"].as_i64().unwrap_or(0) as f64 / 100.0,
            escape(s(o, "created_at").get(..10).unwrap_or_default()),
        )
    };
    let head = ["Order", "Status", "Total (VAT incl.)", "Created"];
    listing_page(&state, &req, "Your orders", "list_my_orders", &head, row, "No orders.").await
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(
        web::resource("/me/drafts")
            .route(web::get().to(drafts))
            .route(web::post().to(submit_site))
            .default_service(na()),
    )
    .configure(draft::routes)
    .service(web::resource("/me/listings").route(web::get().to(listings)).default_service(na()))
    .configure(listing::routes)
    .configure(claims::routes)
    .service(web::resource("/me/orders").route(web::get().to(orders)).default_service(na()));
}
