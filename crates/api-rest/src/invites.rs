//! The co-founder invite link (`/invites/{token}`, from the invite_cofounder email) and the page that
//! explains our crawler (`/bot`, named in its user agent).
//!
//! An invite is accepted by a signed-in person whose account email is the invited address: the link
//! is a secret sent to that address, and tying it to the address as well means a forwarded or leaked
//! link does not make a stranger a co-founder.

use crate::server::State;
use crate::web::{Line, Message, NEXT, Part, cookie, html, oops, page, rendered, same, see_other, signed_in};
use actix_web::cookie::SameSite;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use operations::invites::InviteFound;

async fn find(state: &State, token: &str) -> Result<Option<InviteFound>, HttpResponse> {
    match operations::invites::find(&state.app, token).await {
        Ok(found) => Ok(found),
        Err(e) => {
            tracing::error!(error = %e, "could not read an invite");
            Err(oops(state, None))
        }
    }
}

fn not_found(state: &State, p: Option<&Principal>) -> HttpResponse {
    let m = Message::new("This invite link does not work")
        .line("It may have been replaced by a newer invite; ask for the latest email.");
    html(StatusCode::NOT_FOUND, page(state, "Invite not found", p, &rendered(&m)))
}

/// Who opened the invite link.
enum Viewer<'a> {
    /// The invited address, signed in: the session's CSRF token for the accept button.
    Invited(&'a str),
    /// Someone else, signed in as this address.
    Other(&'a str),
    SignedOut,
}

#[derive(Template)]
#[template(path = "invite.html")]
struct InviteView<'a> {
    base: &'a str,
    token: &'a str,
    product: &'a str,
    invited: &'a str,
    viewer: Viewer<'a>,
}

pub async fn show(state: web::Data<State>, req: HttpRequest, token: web::Path<String>) -> HttpResponse {
    let me = signed_in(&state, &req).await;
    let found = match find(&state, &token).await {
        Ok(Some(x)) => x,
        Ok(None) => return not_found(&state, me.as_ref().map(|(p, _)| p)),
        Err(r) => return r,
    };
    let viewer = match &me {
        Some((p, csrf)) if operations::invites::is_for(&found, p) => Viewer::Invited(csrf),
        Some((p, _)) => Viewer::Other(p.email.as_str()),
        None => Viewer::SignedOut,
    };
    let view = InviteView {
        base: &state.public_url,
        token: &token,
        product: &found.product,
        invited: &found.invite.email,
        viewer,
    };
    let body = rendered(&view);
    let mut r = html(StatusCode::OK, page(&state, "Co-founder invite", me.as_ref().map(|(p, _)| p), &body));
    if me.is_none() {
        let _ = r.add_cookie(&cookie(&state, NEXT, format!("/invites/{token}"), SameSite::Lax, 1));
    }
    r
}

pub async fn accept(
    state: web::Data<State>,
    req: HttpRequest,
    token: web::Path<String>,
    form: web::Form<crate::web::CsrfOnly>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else {
        return see_other(&state.url(&format!("/invites/{token}")));
    };
    if !same(&state, &form.csrf, &csrf) {
        let body = "<p class=\"error\" role=\"alert\">This form expired. Open the invite link again.</p>";
        return html(StatusCode::FORBIDDEN, page(&state, "Co-founder invite", Some(&p), body));
    }
    let found = match find(&state, &token).await {
        Ok(Some(x)) => x,
        Ok(None) => return not_found(&state, Some(&p)),
        Err(r) => return r,
    };
    match operations::invites::accept(&state.app, &p, &found).await {
        Ok(operations::invites::Acceptance::OtherAddress) => {
            let m = Message::new("Co-founder invite").with(Line::classed(
                "error",
                vec![Part::Text(format!(
                    "This invite was sent to {}; sign in with that address to accept it.",
                    found.invite.email
                ))],
            ));
            html(StatusCode::FORBIDDEN, page(&state, "Co-founder invite", Some(&p), &rendered(&m)))
        }
        Ok(operations::invites::Acceptance::Accepted) => html(
            StatusCode::OK,
            page(
                &state,
                "Invite accepted",
                Some(&p),
                &rendered(&Message::new(format!("You are a co-founder of {}", found.product)).with(Line::classed(
                    "ok",
                    vec![Part::Text(
                        "The listing counts you as a member (once it is saved, if it is still a draft).".into(),
                    )],
                ))),
            ),
        ),
        Err(e) => {
            tracing::error!(error = %e, "could not accept an invite");
            oops(&state, Some(&p))
        }
    }
}

/// What our crawler is, for the site owners who see its user agent.
pub async fn bot(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let me = signed_in(&state, &req).await;
    #[derive(Template)]
    #[template(path = "bot.html")]
    struct Bot {
        ua: String,
    }
    let body = rendered(&Bot { ua: bootstrap::user_agent(&state.public_url) });
    html(StatusCode::OK, page(&state, "Our crawler", me.as_ref().map(|(p, _)| p), &body))
}
