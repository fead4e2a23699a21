//! The maker's pages: their drafts (each field's value beside its state and the evidence quotes it was
//! drafted from, with a form to change it and a button to save the draft as a listing), their
//! listings with status and launch week, their claims and their orders. Every page runs the same
//! account operations as the API, as the signed-in person (a session carries every scope), so the
//! owner checks are the operations' own: another person's draft is a 404 here too.

mod claims;
mod listing;

use crate::draft_sections as sections;
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

pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Fields whose value is a list (one item per line in the form).
const LISTS: [&str; 5] = ["categories", "tags", "features", "usps", "keywords"];

async fn draft_page(
    state: &State,
    p: &Principal,
    csrf: &str,
    id: &str,
    notice: &str,
    status: StatusCode,
) -> HttpResponse {
    let base = &state.public_url;
    let d = match run(state, p, "get_draft", json!({"id": id})).await {
        Ok(d) => d,
        Err(e) => return failed(state, p, &e),
    };
    let fields: String = d["fields"]
        .as_object()
        .map(|f| {
            f.iter()
                .map(|(name, fv)| {
                    let value = value_text(&fv["value"]);
                    let evidence = sections::evidence(&fv["evidence"]);
                    let input = if LISTS.contains(&name.as_str()) || value.len() > 120 {
                        format!(r#"<textarea name="value" rows="3" aria-label="{n}">{}</textarea>"#, escape(&value), n = escape(name))
                    } else {
                        format!(r#"<input name="value" value="{}" aria-label="{n}">"#, escape(&value), n = escape(name))
                    };
                    format!(
                        r#"<tr id="field-{name}"><th>{name}</th><td><form method="post" action="{base}/me/drafts/{id}" class="field"><input type="hidden" name="csrf" value="{csrf}"><input type="hidden" name="field" value="{name}">{input}<button class="secondary">Save</button></form>{evidence}</td><td><span class="state state-{state}">{state}</span></td></tr>"#,
                        name = escape(name),
                        id = escape(id),
                        csrf = escape(csrf),
                        state = escape(s(fv, "state")),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let reading = matches!(s(&d, "status"), "crawling" | "drafting");
    let progress = match s(&d, "status") {
        "crawling" => r#"<p class="notice" id="draft-progress" role="status">Reading your website… this page refreshes by itself until the draft is ready.</p>"#.to_owned(),
        "drafting" => r#"<p class="notice" id="draft-progress" role="status">Drafting your listing from what your site states… this page refreshes by itself.</p>"#.to_owned(),
        "failed" => format!(
            r#"<p class="error" id="draft-progress" role="alert">We could not draft this listing: {}. Fix what it says, then submit the address again.</p>"#,
            escape(d["failure_reason"].as_str().unwrap_or("the site could not be read"))
        ),
        _ => String::new(),
    };
    let submit = if s(&d, "status") == "ready" {
        format!(
            r#"<form method="post" action="{base}/me/drafts/{}/submit"><input type="hidden" name="csrf" value="{}"><button id="submit-draft">Save as my listing</button></form>"#,
            escape(id),
            escape(csrf)
        )
    } else {
        format!(r#"<p class="muted">The draft is {}; it can be saved once it is ready.</p>"#, escape(s(&d, "status")))
    };
    let missing = d["not_found_on_website"].as_array().map_or(0, Vec::len);
    let body = format!(
        r#"{notice}{progress}<section class="card"><h1>Draft: {url}</h1>{tabs}<p class="muted">{c} % complete · {missing} facts the site does not state are blank, never guessed. Each value shows the quotes from the site it was drafted from; what you change becomes yours (edited or manual).</p>{index}{submit}<table class="draft"><thead><tr><th>Field</th><th>Value and evidence</th><th>State</th></tr></thead><tbody>{fields}</tbody></table></section>{parts}"#,
        parts = sections::render(base, id, csrf, &d),
        index = sections::index(),
        url = escape(s(&d, "url")),
        tabs = tabs(base),
        c = d["completeness"].as_u64().unwrap_or(0),
    );
    if reading {
        // No JavaScript: the page asks to be loaded again in two seconds while the site is read.
        let head = r#"<meta http-equiv="refresh" content="2"><meta name="robots" content="noindex">"#;
        return html(status, crate::web::page_with(state, "Draft", Some(p), &body, Some(head)));
    }
    html(status, page(state, "Draft", Some(p), &body))
}

pub async fn draft(state: web::Data<State>, req: HttpRequest, id: web::Path<String>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    draft_page(&state, &p, &csrf, &id, "", StatusCode::OK).await
}

/// The draft page again with why the operation refused (400 naming each field, 409 its state).
/// `rows` maps a list's sent items back to the rows of its form (see [`sections::renumber`]).
async fn refused(
    state: &State,
    p: &Principal,
    csrf: &str,
    id: &str,
    e: OpError,
    rows: Option<(&str, &[usize])>,
) -> HttpResponse {
    let field = |f: &str| rows.map_or(f.to_owned(), |(section, rows)| sections::renumber(f, section, rows));
    let (msg, status) = refusal(&e, field);
    let Some(status) = status else { return failed(state, p, &e) };
    let notice = format!(r#"<p class="error" role="alert">{}</p>"#, escape(&msg));
    draft_page(state, p, csrf, id, &notice, status).await
}

/// The draft page again, saying the form's CSRF token did not match the session (403).
async fn expired(state: &State, p: &Principal, csrf: &str, id: &str) -> HttpResponse {
    let notice = r#"<p class="error" role="alert">This form expired. Please try again.</p>"#;
    draft_page(state, p, csrf, id, notice, StatusCode::FORBIDDEN).await
}

#[derive(Debug, Deserialize)]
pub struct FieldForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    field: String,
    #[serde(default)]
    value: String,
}

/// Saves one field of the draft through update_draft (an empty value removes it); a refused value is
/// shown with the operation's own message, naming the field.
pub async fn edit_field(
    state: web::Data<State>,
    req: HttpRequest,
    id: web::Path<String>,
    form: web::Form<FieldForm>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    let f = form.into_inner();
    if !same(&state, &f.csrf, &csrf) {
        return expired(&state, &p, &csrf, &id).await;
    }
    let value = if f.value.trim().is_empty() {
        Value::Null
    } else if LISTS.contains(&f.field.as_str()) {
        json!(f.value.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>())
    } else {
        json!(f.value.trim())
    };
    let mut fields = serde_json::Map::new();
    fields.insert(f.field.clone(), value);
    match run(&state, &p, "update_draft", json!({"id": id.as_str(), "fields": fields})).await {
        Ok(_) => see_other(&format!("{}/me/drafts/{}#field-{}", state.public_url, id.as_str(), f.field)),
        Err(e) => refused(&state, &p, &csrf, &id, e, None).await,
    }
}

/// Saves one part of the draft beyond its fields (FAQs, founders, socials, story, milestones, SEO,
/// competitor) through update_draft, replacing that part as the API does.
pub async fn edit_section(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    form: web::Form<Vec<(String, String)>>,
) -> HttpResponse {
    let (id, section) = path.into_inner();
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    let Some((mut body, rows)) = sections::to_update(&section, &form) else {
        return failed(&state, &p, &OpError::NotFound("page"));
    };
    let sent = form.iter().find(|(k, _)| k == "csrf").map_or("", |(_, v)| v.as_str());
    if !same(&state, sent, &csrf) {
        return expired(&state, &p, &csrf, &id).await;
    }
    body["id"] = json!(id);
    match run(&state, &p, "update_draft", body).await {
        Ok(_) => see_other(&format!("{}/me/drafts/{id}#{section}", state.public_url)),
        Err(e) => refused(&state, &p, &csrf, &id, e, Some((&section, &rows))).await,
    }
}

/// Saves the draft as the maker's listing (submit_draft), then shows their listings.
pub async fn submit(
    state: web::Data<State>,
    req: HttpRequest,
    id: web::Path<String>,
    form: web::Form<crate::web::CsrfOnly>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    if !same(&state, &form.csrf, &csrf) {
        return expired(&state, &p, &csrf, &id).await;
    }
    match run(&state, &p, "submit_draft", json!({"id": id.as_str()})).await {
        Ok(_) => see_other(&format!("{}/me/listings", state.public_url)),
        Err(e) => refused(&state, &p, &csrf, &id, e, None).await,
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(
        web::resource("/me/drafts")
            .route(web::get().to(drafts))
            .route(web::post().to(submit_site))
            .default_service(na()),
    )
    .service(
        web::resource("/me/drafts/{id}")
            .route(web::get().to(draft))
            .route(web::post().to(edit_field))
            .default_service(na()),
    )
    .service(web::resource("/me/drafts/{id}/submit").route(web::post().to(submit)).default_service(na()))
    .service(web::resource("/me/drafts/{id}/{section}").route(web::post().to(edit_section)).default_service(na()))
    .service(web::resource("/me/listings").route(web::get().to(listings)).default_service(na()))
    .configure(listing::routes)
    .configure(claims::routes)
    .service(web::resource("/me/orders").route(web::get().to(orders)).default_service(na()));
}
