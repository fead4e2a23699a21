//! The emailed claim link (`/claims/confirm/{token}`, from claim_listing with method email). Opening it
//! verifies the claim once — but only for the account that made the claim, signed in. The link is a
//! 256-bit secret that only reached the domain's administrator mailbox, and that delivery is what the
//! email method proves; yet mail gateways fetch every link on arrival, so a link that verified for
//! anyone would hand the listing over before a person read the mail. Opened by nobody signed in, it
//! asks the claimant to sign in and comes back here (then it verifies); opened by another account, it
//! says so. Neither changes anything. Opening it again says it was used. (docs/DECISIONS.md)

use crate::server::State;
use crate::web::{Line, Message, NEXT, Part, cookie, html, oops, page, rendered, signed_in};
use actix_web::cookie::SameSite;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
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
    let listing_link =
        |slug: &str, name: &str| Part::Link(domain::own::listing_page(&state.public_url, slug), name.into());
    let text = |t: &str| Part::Text(t.into());
    let (status, title, m) = match outcome {
        EmailLinkOutcome::Verified { listing, slug, domain } => (
            StatusCode::OK,
            "Claim verified",
            Message::new("Claim verified").with(Line::classed(
                "ok",
                vec![
                    text(&format!(
                        "Control of {domain} is proven: the account that made the claim is now an owner of "
                    )),
                    listing_link(&slug, &listing),
                    text(". Its plan and placement did not change."),
                ],
            )),
        ),
        EmailLinkOutcome::AlreadyVerified { listing, slug } => (
            StatusCode::OK,
            "Claim already verified",
            Message::new("This link was used already").with(Line::of(vec![
                text("The claim of "),
                listing_link(&slug, &listing),
                text(" was verified when the link was first opened."),
            ])),
        ),
        EmailLinkOutcome::Expired { listing } => (
            StatusCode::GONE,
            "Claim expired",
            Message::new("This claim expired")
                .line(format!("Claim links work for 7 days. Start a new claim of {listing} from its page.")),
        ),
        EmailLinkOutcome::SignInFirst { listing } => {
            let m = Message::new("Sign in to confirm your claim")
                .line(format!(
                    "This link confirms a claim of {listing}. Sign in with the account that made the claim and it is \
                     confirmed at once; you will come back here."
                ))
                .with(Line::of(vec![Part::Button(state.url("/signin"), "Sign in".into())]))
                .with(Line::classed(
                    "muted",
                    vec![text(
                        "Nothing changes until then, so a mail filter opening this link cannot confirm it for you.",
                    )],
                ));
            let mut r = html(StatusCode::OK, page(&state, "Confirm your claim", None, &rendered(&m)));
            let _ = r.add_cookie(&cookie(&state, NEXT, format!("/claims/confirm/{token}"), SameSite::Lax, 1));
            return r;
        }
        EmailLinkOutcome::NotYours { listing } => (
            StatusCode::FORBIDDEN,
            "Not your claim",
            Message::new("This claim was made by another account").line(format!(
                "Only the account that claimed {listing} can confirm it. Sign out and sign in with that account, then \
                 open the link again. Nothing changed."
            )),
        ),
        EmailLinkOutcome::Unknown => (
            StatusCode::NOT_FOUND,
            "Claim link not found",
            Message::new("This claim link does not work").line("Check that the whole link was opened."),
        ),
    };
    html(status, page(&state, title, me, &rendered(&m)))
}
