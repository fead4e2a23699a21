//! The maker's pages: their drafts (each field's value beside its state and the evidence quotes it was
//! drafted from, with a form to change it and a button to save the draft as a listing), their
//! listings with status and launch week, their claims and their orders. Every page runs the same
//! account operations as the API (typed, through [`operations::invoke`]), as the signed-in person
//! (a session carries every scope), so the owner checks are the operations' own: another person's
//! draft is a 404 here too. Each page is an askama template under `templates/maker/`.

mod claims;
mod draft;
mod listing;

use crate::server::State;
use crate::site::render;
use crate::web::{html, oops, page, same, see_other, signed_in};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use operations::drafts::view::DraftSummaryOut;
use operations::drafts::{ListMyDrafts, PageInput, SubmitListing, SubmitListingInput};
use operations::orders::{ListMyOrders, OrderOut};
use operations::own::{ListMyListings, MyListingSummaryOut};
use operations::{Caller, OpError};
use serde::Deserialize;

/// Rows on each of the maker's lists.
const LIST_PAGE: i64 = 100;

/// Runs an account operation as the signed-in person, typed.
async fn call<O: operations::Operation>(state: &State, p: &Principal, input: O::Input) -> Result<O::Output, OpError> {
    operations::invoke::<O>(&state.ctx.with_caller(Caller::Principal(p.clone())), input).await
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

/// The page `view` rendered under `title` with `status`.
fn show<T: Template>(state: &State, p: &Principal, title: &str, view: &T, status: StatusCode) -> HttpResponse {
    match render(view) {
        Ok(body) => html(status, page(state, title, Some(p), &body)),
        Err(e) => failed(state, p, &e),
    }
}

/// A form's value of `name`, or "".
fn field<'a>(form: &'a [(String, String)], name: &str) -> &'a str {
    form.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
}

/// A form's value of `name`, trimmed, or `None` when blank.
fn given(form: &[(String, String)], name: &str) -> Option<String> {
    Some(field(form, name).trim()).filter(|v| !v.is_empty()).map(str::to_owned)
}

/// What a refused operation says (each invalid field named as `field` renders it), and its status;
/// `None` for a failure on our side.
pub(crate) fn refusal(e: &OpError, field: impl Fn(&str) -> String) -> (String, Option<StatusCode>) {
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

#[derive(Template)]
#[template(path = "maker/drafts.html")]
struct DraftsView<'a> {
    base: &'a str,
    csrf: &'a str,
    notice: &'a str,
    /// The address last sent, shown again after a refusal.
    url: &'a str,
    url_max: usize,
    drafts: &'a [DraftSummaryOut],
}

#[derive(Template)]
#[template(path = "maker/listings.html")]
struct ListingsView<'a> {
    base: &'a str,
    listings: &'a [MyListingSummaryOut],
}

#[derive(Template)]
#[template(path = "maker/orders.html")]
struct OrdersView<'a> {
    base: &'a str,
    /// Each order with its total in dollars and the day it was made.
    orders: Vec<(&'a OrderOut, String, &'a str)>,
}

pub async fn drafts(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    drafts_page(&state, &req, "", StatusCode::OK, "").await
}

/// The maker's drafts under a form to submit a website, with `notice` (a refusal) above them.
async fn drafts_page(state: &State, req: &HttpRequest, notice: &str, status: StatusCode, url: &str) -> HttpResponse {
    let Some((p, csrf)) = signed_in(state, req).await else { return see_other(&state.url("/signin")) };
    let drafts = match call::<ListMyDrafts>(state, &p, PageInput { page: None, per_page: Some(LIST_PAGE) }).await {
        Ok(d) => d.items,
        Err(e) => return failed(state, &p, &e),
    };
    let view = DraftsView {
        base: &state.public_url,
        csrf: &csrf,
        notice,
        url,
        url_max: domain::draft::SiteUrl::MAX,
        drafts: &drafts,
    };
    show(state, &p, "Your drafts", &view, status)
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
        return drafts_page(&state, &req, "This form expired. Please try again.", StatusCode::FORBIDDEN, &f.url).await;
    }
    match call::<SubmitListing>(&state, &p, SubmitListingInput { url: f.url.trim().to_owned() }).await {
        Ok(d) => see_other(&format!("{}/me/drafts/{}", state.public_url, d.id)),
        Err(e) => {
            let (msg, status) = refusal(&e, str::to_owned);
            let Some(status) = status else { return failed(&state, &p, &e) };
            drafts_page(&state, &req, &msg, status, &f.url).await
        }
    }
}

pub async fn listings(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, _)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    match call::<ListMyListings>(&state, &p, PageInput { page: None, per_page: Some(LIST_PAGE) }).await {
        Ok(l) => show(
            &state,
            &p,
            "Your listings",
            &ListingsView { base: &state.public_url, listings: &l.items },
            StatusCode::OK,
        ),
        Err(e) => failed(&state, &p, &e),
    }
}

pub async fn orders(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, _)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    let orders = match call::<ListMyOrders>(&state, &p, PageInput { page: None, per_page: Some(LIST_PAGE) }).await {
        Ok(o) => o.items,
        Err(e) => return failed(&state, &p, &e),
    };
    let rows = orders
        .iter()
        .map(|o| {
            let total = format!("${:.2}", o.totals.gross_cents as f64 / 100.0);
            (o, total, o.created_at.get(..10).unwrap_or_default())
        })
        .collect();
    show(&state, &p, "Your orders", &OrdersView { base: &state.public_url, orders: rows }, StatusCode::OK)
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
