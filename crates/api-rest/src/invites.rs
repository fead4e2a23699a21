//! The co-founder invite link (`/invites/{token}`, from the invite_cofounder email) and the page that
//! explains our crawler (`/bot`, named in its user agent).
//!
//! An invite is accepted by a signed-in person whose account email is the invited address: the link
//! is a secret sent to that address, and tying it to the address as well means a forwarded or leaked
//! link does not make a stranger a co-founder.

use crate::server::State;
use crate::web::{NEXT, cookie, html, oops, page, same, see_other, signed_in};
use actix_web::cookie::SameSite;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use domain::auth::Principal;
use operations::badges::escape;
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
    html(
        StatusCode::NOT_FOUND,
        page(
            state,
            "Invite not found",
            p,
            "<section class=\"card narrow\"><h1>This invite link does not work</h1><p>It may have been replaced by a \
             newer invite; ask for the latest email.</p></section>",
        ),
    )
}

pub async fn show(state: web::Data<State>, req: HttpRequest, token: web::Path<String>) -> HttpResponse {
    let me = signed_in(&state, &req).await;
    let found = match find(&state, &token).await {
        Ok(Some(x)) => x,
        Ok(None) => return not_found(&state, me.as_ref().map(|(p, _)| p)),
        Err(r) => return r,
    };
    let (invite, product) = (&found.invite, &found.product);
    let intro = format!(
        "<h1>Join {} as a co-founder</h1><p>This invite was sent to <strong>{}</strong>.</p>",
        escape(product),
        escape(&invite.email)
    );
    let b = &state.public_url;
    let body = match &me {
        Some((p, csrf)) if operations::invites::is_for(&found, p) => format!(
            r#"<section class="card narrow">{intro}<form method="post" action="{b}/invites/{t}"><input type="hidden" name="csrf" value="{csrf}"><button type="submit">Accept the invite</button></form></section>"#,
            t = escape(&token)
        ),
        Some((p, _)) => format!(
            r#"<section class="card narrow">{intro}<p class="error" role="alert">You are signed in as {}. Sign out and sign in with the invited address to accept.</p></section>"#,
            escape(p.email.as_str())
        ),
        None => format!(
            r#"<section class="card narrow">{intro}<p>Sign in with that address (or create an account with it) to accept; you will come back here.</p><p><a class="button" href="{b}/signin">Sign in</a> <a href="{b}/signup">Create an account</a></p></section>"#
        ),
    };
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
            let body = format!(
                "<p class=\"error\" role=\"alert\">This invite was sent to {}; sign in with that address to accept it.</p>",
                escape(&found.invite.email)
            );
            html(StatusCode::FORBIDDEN, page(&state, "Co-founder invite", Some(&p), &body))
        }
        Ok(operations::invites::Acceptance::Accepted) => html(
            StatusCode::OK,
            page(
                &state,
                "Invite accepted",
                Some(&p),
                &format!(
                    "<section class=\"card narrow\"><h1>You are a co-founder of {}</h1><p class=\"ok\" role=\"status\">The \
                     listing counts you as a member (once it is saved, if it is still a draft).</p></section>",
                    escape(&found.product)
                ),
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
    let body = format!(
        r#"<section class="card"><h1>The launchdir crawler</h1>
<p>When a maker submits their website to launchdir, we read it once to draft their listing: the homepage and a
handful of pages it links to (pricing, about, features, FAQ, contact, team). Our user agent is
<code>{ua}</code>.</p>
<p>We read <code>/robots.txt</code> first and obey it for the token <code>launchdir</code> (RFC 9309): to keep us out,
add <code>User-agent: launchdir</code> and <code>Disallow: /</code>. We never read private network addresses, follow
at most five redirects, and read at most 1 MiB per page.</p></section>"#,
        ua = escape(&bootstrap::user_agent(&state.public_url))
    );
    html(StatusCode::OK, page(&state, "Our crawler", me.as_ref().map(|(p, _)| p), &body))
}
