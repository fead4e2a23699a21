//! Claiming a listing on the site: choose a proof (DNS TXT record, meta tag, file, or a link emailed
//! to an administrator address), see exactly what to publish, and check it with a button. The same
//! claim_listing and verify_claim as the API, as the signed-in person.

use super::{call, failed, refusal, show};
use crate::server::State;
use crate::web::{NEXT, cookie, same, see_other, signed_in};
use actix_web::cookie::SameSite;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use operations::claims::{
    ClaimIdInput, ClaimListing, ClaimListingInput, ClaimOut, ListMyClaims, MethodParam, VerifyClaim,
};
use operations::drafts::PageInput;
use serde::Deserialize;

/// Claims a person has at most on one page (older ones are past their 7 days anyway).
const CLAIMS_PAGE: i64 = 100;

#[derive(Template)]
#[template(path = "maker/claims.html")]
struct ClaimsView<'a> {
    base: &'a str,
    claims: &'a [ClaimOut],
}

#[derive(Template)]
#[template(path = "maker/claim_new.html")]
struct NewClaimView<'a> {
    base: &'a str,
    csrf: &'a str,
    notice: &'a str,
    slug: &'a str,
    email: &'a str,
    email_max: usize,
}

#[derive(Template)]
#[template(path = "maker/claim.html")]
struct ClaimView<'a> {
    base: &'a str,
    csrf: &'a str,
    notice: &'a str,
    c: &'a ClaimOut,
}

async fn mine(state: &State, p: &Principal) -> Result<Vec<ClaimOut>, operations::OpError> {
    let input = PageInput { page: None, per_page: Some(CLAIMS_PAGE) };
    Ok(call::<ListMyClaims>(state, p, input).await?.items)
}

pub async fn claims(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, _)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    match mine(&state, &p).await {
        Ok(claims) => {
            let view = ClaimsView { base: &state.public_url, claims: &claims };
            show(&state, &p, "Your claims", &view, StatusCode::OK)
        }
        Err(e) => failed(&state, &p, &e),
    }
}

/// The form to claim the listing `slug`; signed out, sign-in comes first and returns here.
pub async fn new_claim(state: web::Data<State>, req: HttpRequest, slug: web::Path<String>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else {
        let mut r = see_other(&state.url("/signin"));
        if domain::slug::Slug::parse(slug.as_str()).is_ok() {
            let _ = r.add_cookie(&cookie(&state, NEXT, format!("/me/claims/new/{slug}"), SameSite::Lax, 1));
        }
        return r;
    };
    let view = NewClaimView {
        base: &state.public_url,
        csrf: &csrf,
        notice: "",
        slug: &slug,
        email: "",
        email_max: domain::user::Email::MAX,
    };
    show(&state, &p, "Claim a listing", &view, StatusCode::OK)
}

#[derive(Debug, Deserialize)]
pub struct ClaimForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    slug: String,
    #[serde(default)]
    method: String,
    #[serde(default)]
    email: String,
}

/// Starts the claim (claim_listing) and opens it; a refusal shows the form again naming the field.
pub async fn start(state: web::Data<State>, req: HttpRequest, form: web::Form<ClaimForm>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    let f = form.into_inner();
    let again = |notice: &str, status| {
        let view = NewClaimView {
            base: &state.public_url,
            csrf: &csrf,
            notice,
            slug: &f.slug,
            email: &f.email,
            email_max: domain::user::Email::MAX,
        };
        show(&state, &p, "Claim a listing", &view, status)
    };
    if !same(&state, &f.csrf, &csrf) {
        return again("This form expired. Please try again.", StatusCode::FORBIDDEN);
    }
    let method = match f.method.as_str() {
        "dns" => MethodParam::Dns,
        "meta" => MethodParam::Meta,
        "file" => MethodParam::File,
        "email" => MethodParam::Email,
        _ => return again("method: choose one of dns, meta, file, email", StatusCode::BAD_REQUEST),
    };
    let email = Some(f.email.trim().to_owned()).filter(|e| !e.is_empty());
    let input = ClaimListingInput { slug: f.slug.trim().to_owned(), method, email };
    match call::<ClaimListing>(&state, &p, input).await {
        Ok(c) => see_other(&format!("{}/me/claims/{}", state.public_url, c.claim_id)),
        Err(e) => {
            let (msg, status) = refusal(&e, str::to_owned);
            match status {
                Some(status) => again(&msg, status),
                None => failed(&state, &p, &e),
            }
        }
    }
}

async fn claim_page(
    state: &State,
    p: &Principal,
    csrf: &str,
    id: i64,
    notice: &str,
    status: StatusCode,
) -> HttpResponse {
    let claims = match mine(state, p).await {
        Ok(c) => c,
        Err(e) => return failed(state, p, &e),
    };
    let Some(c) = claims.iter().find(|c| c.claim_id == id) else {
        return failed(state, p, &operations::OpError::NotFound("claim"));
    };
    let view = ClaimView { base: &state.public_url, csrf, notice, c };
    show(state, p, "Claim", &view, status)
}

pub async fn claim(state: web::Data<State>, req: HttpRequest, id: web::Path<i64>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    claim_page(&state, &p, &csrf, *id, "", StatusCode::OK).await
}

/// Checks the proof now (verify_claim); what was looked for and found is on the page either way.
pub async fn verify(
    state: web::Data<State>,
    req: HttpRequest,
    id: web::Path<i64>,
    form: web::Form<crate::web::CsrfOnly>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    let id = *id;
    if !same(&state, &form.csrf, &csrf) {
        return claim_page(&state, &p, &csrf, id, "This form expired. Please try again.", StatusCode::FORBIDDEN).await;
    }
    match call::<VerifyClaim>(&state, &p, ClaimIdInput { claim_id: id }).await {
        Ok(_) => see_other(&format!("{}/me/claims/{id}", state.public_url)),
        Err(e) => {
            let (msg, status) = refusal(&e, str::to_owned);
            match status {
                Some(status) => claim_page(&state, &p, &csrf, id, &msg, status).await,
                None => failed(&state, &p, &e),
            }
        }
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(
        web::resource("/me/claims").route(web::get().to(claims)).route(web::post().to(start)).default_service(na()),
    )
    .service(web::resource("/me/claims/new/{slug}").route(web::get().to(new_claim)).default_service(na()))
    .service(web::resource("/me/claims/{id}").route(web::get().to(claim)).default_service(na()))
    .service(web::resource("/me/claims/{id}/verify").route(web::post().to(verify)).default_service(na()));
}
