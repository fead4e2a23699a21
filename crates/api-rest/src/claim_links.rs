//! The emailed claim link (`/claims/confirm/{token}`, from claim_listing with method email). Opening it
//! verifies the claim once — but only for the account that made the claim, signed in. The link is a
//! 256-bit secret that only reached the domain's administrator mailbox, and that delivery is what the
//! email method proves; yet mail gateways fetch every link on arrival, so a link that verified for
//! anyone would hand the listing over before a person read the mail. Opened by nobody signed in, it
//! asks the claimant to sign in and comes back here (then it verifies); opened by another account, it
//! says so. Neither changes anything. Opening it again says it was used. (docs/DECISIONS.md)

use crate::server::State;
use crate::web::{NEXT, cookie, html, oops, page, signed_in};
use actix_web::cookie::SameSite;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use operations::badges::escape;
use operations::claims::{EmailLinkOutcome, open_email_link};

pub async fn open(state: web::Data<State>, req: HttpRequest, token: web::Path<String>) -> HttpResponse {
    let me = signed_in(&state, &req).await;
    let me = me.as_ref().map(|(p, _)| p);
    let outcome = match open_email_link(&state.app, &state.ctx.reads, &token, me.map(|p| p.user_id)).await {
        Ok(o) => o,
        Err(e) => {
            tracing::error!(error = %e, "could not open a claim link");
            return oops(&state, me);
        }
    };
    let card = |h: &str, p: String| format!("<section class=\"card narrow\"><h1>{h}</h1>{p}</section>");
    let listing_link = |slug: &str, name: &str| {
        format!("<a href=\"{}\">{}</a>", escape(&domain::own::listing_page(&state.public_url, slug)), escape(name))
    };
    let (status, title, body) = match outcome {
        EmailLinkOutcome::Verified { listing, slug, domain } => (
            StatusCode::OK,
            "Claim verified",
            card(
                "Claim verified",
                format!(
                    "<p class=\"ok\" role=\"status\">Control of {} is proven: the account that made the claim is now \
                     an owner of {}. Its plan and placement did not change.</p>",
                    escape(&domain),
                    listing_link(&slug, &listing)
                ),
            ),
        ),
        EmailLinkOutcome::AlreadyVerified { listing, slug } => (
            StatusCode::OK,
            "Claim already verified",
            card(
                "This link was used already",
                format!(
                    "<p>The claim of {} was verified when the link was first opened.</p>",
                    listing_link(&slug, &listing)
                ),
            ),
        ),
        EmailLinkOutcome::Expired { listing } => (
            StatusCode::GONE,
            "Claim expired",
            card(
                "This claim expired",
                format!(
                    "<p>Claim links work for 7 days. Start a new claim of {} with claim_listing.</p>",
                    escape(&listing)
                ),
            ),
        ),
        EmailLinkOutcome::SignInFirst { listing } => {
            let b = &state.public_url;
            let body = card(
                "Sign in to confirm your claim",
                format!(
                    "<p>This link confirms a claim of {}. Sign in with the account that made the claim and it is                      confirmed at once; you will come back here.</p><p><a class=\"button\" href=\"{b}/signin\">Sign                      in</a></p><p class=\"muted\">Nothing changes until then, so a mail filter opening this link                      cannot confirm it for you.</p>",
                    escape(&listing)
                ),
            );
            let mut r = html(StatusCode::OK, page(&state, "Confirm your claim", None, &body));
            let _ = r.add_cookie(&cookie(&state, NEXT, format!("/claims/confirm/{token}"), SameSite::Lax, 1));
            return r;
        }
        EmailLinkOutcome::NotYours { listing } => (
            StatusCode::FORBIDDEN,
            "Not your claim",
            card(
                "This claim was made by another account",
                format!(
                    "<p>Only the account that claimed {} can confirm it. Sign out and sign in with that account, then                      open the link again. Nothing changed.</p>",
                    escape(&listing)
                ),
            ),
        ),
        EmailLinkOutcome::Unknown => (
            StatusCode::NOT_FOUND,
            "Claim link not found",
            card("This claim link does not work", "<p>Check that the whole link was opened.</p>".into()),
        ),
    };
    html(status, page(&state, title, me, &body))
}
