//! The pages a person uses to get into the API: sign up, sign in, sign out, and the account's API keys
//! (create one and see it once, list them, revoke one). Server-rendered HTML with one stylesheet,
//! working without JavaScript.
//!
//! Sessions: a random token in an HttpOnly, SameSite=Lax cookie (Secure when the public URL is https),
//! stored only as a hash. CSRF: signed-in forms carry the session's own token; the sign-up and sign-in
//! forms a double-submit token (a SameSite=Strict cookie and a hidden field that must match).

use crate::server::State;
use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use domain::ids::ApiKeyId;
use domain::user::Scope;
use operations::accounts;
use serde::Deserialize;

const SESSION: &str = "ld_session";
const FORM_CSRF: &str = "ld_form";
/// Where to go after signing in (set by pages that need sign-in, such as an invite link).
pub(crate) const NEXT: &str = "ld_next";

/// A path sign-in may return to: one of ours that needs it, never another site. An OAuth
/// authorization request comes back through `/oauth/resume/<its query, base64url>`.
fn valid_next(p: &str) -> bool {
    (p.starts_with("/invites/")
        || p.starts_with("/checkout/")
        || p.starts_with("/oauth/resume/")
        || p.starts_with("/claims/confirm/")
        || p.starts_with("/me/claims/new/")
        || p.starts_with("/verify-email/"))
        && !p.contains("//")
        && p.chars().all(|c| c.is_ascii_alphanumeric() || "/-_".contains(c))
}

pub const STYLESHEET: &str = include_str!("site.css");

fn secure(state: &State) -> bool {
    state.public_url.starts_with("https://")
}

pub(crate) fn cookie(
    state: &State,
    name: &'static str,
    value: String,
    same_site: SameSite,
    days: i64,
) -> Cookie<'static> {
    Cookie::build(name, value)
        .path("/")
        .http_only(true)
        .same_site(same_site)
        .secure(secure(state))
        .max_age(CookieDuration::days(days))
        .finish()
}

/// What a page says about itself when none of its own is given: every page has a description.
const DEFAULT_DESCRIPTION: &str =
    "Product launches, ranked by people: makers list and launch products each week; people browse, compare and vote.";

/// A page: the header (links from the public URL), `body`, the footer.
pub(crate) fn page(state: &State, title: &str, signed_in: Option<&Principal>, body: &str) -> String {
    page_with(state, title, signed_in, body, None)
}

/// Every page's frame: the header (search box, links from the public URL, who is signed in), the
/// page's own head tags and body (already rendered, escaped by their own templates), the footer.
#[derive(askama::Template)]
#[template(path = "layout.html")]
struct Layout<'a> {
    base: &'a str,
    title: &'a str,
    head: &'a str,
    body: &'a str,
    search_max: usize,
    /// The signed-in person's email.
    who: Option<&'a str>,
    /// Whether they are an admin (the header links the console).
    admin: bool,
}

/// A page with `head`, the tags it describes itself with (description, canonical URL, Open Graph,
/// structured data; already escaped), or the site's description when it has none.
pub(crate) fn page_with(
    state: &State,
    title: &str,
    signed_in: Option<&Principal>,
    body: &str,
    head: Option<&str>,
) -> String {
    use askama::Template;
    let default_head = crate::site::Head::plain(DEFAULT_DESCRIPTION).render().unwrap_or_default();
    let layout = Layout {
        base: &state.public_url,
        title,
        head: head.unwrap_or(&default_head),
        body,
        search_max: domain::listing::SearchText::MAX,
        who: signed_in.map(|p| p.email.as_str()),
        admin: signed_in.is_some_and(|p| p.is_admin),
    };
    layout.render().unwrap_or_else(|e| {
        tracing::error!(error = %e, "rendering the page frame");
        "<!doctype html><title>Error</title><p>Something went wrong on our side; it has been logged.</p>".to_owned()
    })
}

/// A template rendered; a failure (only a value's own `Display` can fail) is logged and the page says
/// something went wrong instead.
pub(crate) fn rendered<T: Template>(t: &T) -> String {
    t.render().unwrap_or_else(|e| {
        tracing::error!(error = %e, "rendering a page");
        "<p>Something went wrong on our side; it has been logged.</p>".to_owned()
    })
}

/// A piece of a [`Message`] line.
pub(crate) enum Part {
    Text(String),
    /// A link: its address and words.
    Link(String, String),
    /// A link drawn as a button.
    Button(String, String),
}

/// One paragraph of a [`Message`], with its class (`ok`, `error`, `muted` or none).
pub(crate) struct Line {
    pub class: &'static str,
    pub parts: Vec<Part>,
}

impl Line {
    pub(crate) fn of(parts: Vec<Part>) -> Self {
        Self { class: "", parts }
    }

    pub(crate) fn classed(class: &'static str, parts: Vec<Part>) -> Self {
        Self { class, parts }
    }
}

/// A card saying something: a heading and paragraphs of text, links and buttons, escaped.
#[derive(Template)]
#[template(path = "message.html")]
pub(crate) struct Message {
    heading: String,
    lines: Vec<Line>,
}

impl Message {
    pub(crate) fn new(heading: impl Into<String>) -> Self {
        Self { heading: heading.into(), lines: vec![] }
    }

    /// Adds a paragraph of plain text.
    pub(crate) fn line(self, text: impl Into<String>) -> Self {
        self.with(Line::of(vec![Part::Text(text.into())]))
    }

    pub(crate) fn with(mut self, line: Line) -> Self {
        self.lines.push(line);
        self
    }
}

pub(crate) fn html(status: StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(body)
}

/// The 500 page (the cause is logged where it happened).
pub(crate) fn oops(state: &State, signed_in: Option<&Principal>) -> HttpResponse {
    html(
        StatusCode::INTERNAL_SERVER_ERROR,
        page(state, "Error", signed_in, "<p>Something went wrong on our side; it has been logged.</p>"),
    )
}

pub(crate) fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, to)).finish()
}

/// The signed-in person and the session's CSRF token, from the session cookie.
pub(crate) async fn signed_in(state: &State, req: &HttpRequest) -> Option<(Principal, String)> {
    let token = req.cookie(SESSION)?.value().to_owned();
    accounts::session(&state.app, &token).await.ok().flatten()
}

pub(crate) fn same(state: &State, a: &str, b: &str) -> bool {
    !a.is_empty() && state.app.secrets.same_hash(a, b)
}

// ---- sign up and sign in -------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
pub struct Credentials {
    email: String,
    password: String,
    #[serde(default)]
    csrf: String,
}

#[derive(Template)]
#[template(path = "account/credentials.html")]
struct CredentialsView<'a> {
    base: &'a str,
    /// `/signup` or `/signin`.
    action: &'a str,
    signup: bool,
    title: &'a str,
    csrf: &'a str,
    email: &'a str,
    error: Option<&'a str>,
}

/// Shows a credentials form with a fresh double-submit token.
fn credentials_page(
    state: &State,
    action: &str,
    title: &str,
    email: &str,
    error: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let csrf = form_csrf(state);
    let view = CredentialsView {
        base: &state.public_url,
        action,
        signup: action == "/signup",
        title,
        csrf: &csrf,
        email,
        error,
    };
    signed_out_form(state, status, title, &rendered(&view), csrf)
}

/// A fresh double-submit token for a form shown to someone signed out. Signed with the deployment's
/// CSRF key: a planted cookie with a field of the attacker's choosing does not verify.
fn form_csrf(state: &State) -> String {
    let nonce = state.app.secrets.random_token();
    state.app.keys_loaded().map_or(nonce.clone(), |k| k.form_token(&nonce))
}

/// A page holding a form of someone signed out, with its double-submit cookie.
fn signed_out_form(state: &State, status: StatusCode, title: &str, body: &str, csrf: String) -> HttpResponse {
    let mut r = html(status, page(state, title, None, body));
    let _ = r.add_cookie(&cookie(state, FORM_CSRF, csrf, SameSite::Strict, 1));
    r
}

pub async fn signup_form(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    if signed_in(&state, &req).await.is_some() {
        return see_other(&state.url("/account/api-keys"));
    }
    credentials_page(&state, "/signup", "Create your account", "", None, StatusCode::OK)
}

pub async fn signin_form(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    if signed_in(&state, &req).await.is_some() {
        return see_other(&state.url("/account/api-keys"));
    }
    credentials_page(&state, "/signin", "Sign in", "", None, StatusCode::OK)
}

fn form_csrf_ok(state: &State, req: &HttpRequest, sent: &str) -> bool {
    let signed = state.app.keys_loaded().is_some_and(|k| k.form_token_ok(sent));
    signed && req.cookie(FORM_CSRF).is_some_and(|c| same(state, sent, c.value()))
}

async fn start(state: &State, req: &HttpRequest, user: domain::ids::UserId) -> HttpResponse {
    match accounts::start_session(&state.app, user).await {
        Ok((token, _)) => {
            let next = req.cookie(NEXT).map(|c| c.value().to_owned()).filter(|n| valid_next(n));
            let mut r = see_other(&state.url(next.as_deref().unwrap_or("/account/api-keys")));
            if next.is_some() {
                let mut gone = Cookie::new(NEXT, "");
                gone.set_path("/");
                gone.make_removal();
                let _ = r.add_cookie(&gone);
            }
            let _ = r.add_cookie(&cookie(state, SESSION, token, SameSite::Lax, accounts::SESSION_DAYS));
            let mut gone = Cookie::new(FORM_CSRF, "");
            gone.set_path("/");
            gone.make_removal();
            let _ = r.add_cookie(&gone);
            r
        }
        Err(e) => {
            tracing::error!(error = %e, "could not start a session");
            oops(state, None)
        }
    }
}

pub async fn signup(state: web::Data<State>, req: HttpRequest, form: web::Form<Credentials>) -> HttpResponse {
    let f = form.into_inner();
    if !form_csrf_ok(&state, &req, &f.csrf) {
        let msg = "This form expired. Please try again.";
        return credentials_page(&state, "/signup", "Create your account", &f.email, Some(msg), StatusCode::FORBIDDEN);
    }
    // The same answer whether the address has an account or not: the page confirms nothing.
    let network = api_http::middleware::client_network(&req);
    match accounts::sign_up(&state.app, &state.public_url, &f.email, &f.password, &network).await {
        Ok(()) => see_other(&state.url("/signup/sent")),
        Err(operations::OpError::Invalid(errs)) => {
            let msg = problems(&errs);
            credentials_page(&state, "/signup", "Create your account", &f.email, Some(&msg), StatusCode::BAD_REQUEST)
        }
        Err(operations::OpError::TooMany { code, retry_after_secs, .. }) => {
            let msg = if code == "signup_quota" {
                format!(
                    "Too many accounts were started from your network in the last hour. Try again in {} minutes.",
                    retry_after_secs.div_ceil(60)
                )
            } else {
                "We sent this address enough email for today. Check your inbox, or try again tomorrow.".to_owned()
            };
            let mut r = credentials_page(
                &state,
                "/signup",
                "Create your account",
                &f.email,
                Some(&msg),
                StatusCode::TOO_MANY_REQUESTS,
            );
            r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(retry_after_secs));
            r
        }
        Err(e) => {
            tracing::error!(error = %e, "sign-up failed");
            oops(&state, None)
        }
    }
}

pub async fn signin(state: web::Data<State>, req: HttpRequest, form: web::Form<Credentials>) -> HttpResponse {
    let f = form.into_inner();
    if !form_csrf_ok(&state, &req, &f.csrf) {
        let msg = "This form expired. Please try again.";
        return credentials_page(&state, "/signin", "Sign in", &f.email, Some(msg), StatusCode::FORBIDDEN);
    }
    let address = api_http::middleware::client_network(&req);
    match accounts::sign_in(&state.app, &f.email, &f.password, &address).await {
        Ok(accounts::SignIn::Welcome(user)) => start(&state, &req, user.id).await,
        Ok(accounts::SignIn::Refused) => {
            let msg = "That email and password do not match an account.";
            credentials_page(&state, "/signin", "Sign in", &f.email, Some(msg), StatusCode::UNAUTHORIZED)
        }
        Ok(accounts::SignIn::Wait(wait)) => {
            let secs = domain::throttle::retry_after_secs(wait);
            let msg = format!(
                "Too many failed sign-ins. Try again in {} (or from where you usually sign in).",
                human_wait(secs)
            );
            let mut r =
                credentials_page(&state, "/signin", "Sign in", &f.email, Some(&msg), StatusCode::TOO_MANY_REQUESTS);
            r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
            r
        }
        Ok(accounts::SignIn::Suspended(why)) => {
            let msg = format!(
                "This account is suspended by the site team: {why}. Its keys and apps do not work meanwhile; reply \
                 to the email we sent if you think it is a mistake."
            );
            credentials_page(&state, "/signin", "Sign in", &f.email, Some(&msg), StatusCode::FORBIDDEN)
        }
        Ok(accounts::SignIn::Busy) => {
            let msg = "We are checking a lot of sign-ins right now. Please try again in a few seconds.";
            let mut r =
                credentials_page(&state, "/signin", "Sign in", &f.email, Some(msg), StatusCode::SERVICE_UNAVAILABLE);
            r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(5u64));
            r
        }
        Err(e) => {
            tracing::error!(error = %e, "sign-in failed");
            oops(&state, None)
        }
    }
}

/// What a form's fields got wrong, as one line: "field: problem; field: problem".
fn problems(errs: &domain::ValidationErrors) -> String {
    errs.0.iter().map(|e| format!("{}: {}", e.field, e.problem)).collect::<Vec<_>>().join("; ")
}

/// "45 seconds", "3 minutes", "1 hour".
fn human_wait(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs} seconds"),
        60..=3599 => {
            let m = secs.div_ceil(60);
            format!("{m} minute{}", if m == 1 { "" } else { "s" })
        }
        _ => "an hour".to_owned(),
    }
}

/// After sign-up: the same page whether the address was new or not.
pub async fn signup_sent(state: web::Data<State>) -> HttpResponse {
    let m = Message::new("Check your email")
        .line("We sent a message to the address you gave. If it is new here, it holds a link that confirms it: open it after you sign in with your new password.")
        .line("You can sign in now and use the API; voting, inviting co-founders and claims by email wait for the confirmation.")
        .with(Line::of(vec![Part::Button(state.url("/signin"), "Sign in".into())]));
    html(StatusCode::OK, page(&state, "Check your email", None, &rendered(&m)))
}

/// The emailed verification link: only the account it was sent for, signed in, confirms it (a mail
/// scanner opening it changes nothing); signed out, it asks to sign in and comes back here.
pub async fn verify_email(state: web::Data<State>, req: HttpRequest, token: web::Path<String>) -> HttpResponse {
    let me = signed_in(&state, &req).await;
    let who = me.as_ref().map(|(p, _)| p);
    let said = |status, title: &str, m: Message| html(status, page(&state, title, who, &rendered(&m)));
    match accounts::verify_email(&state.app, &token, who.map(|p| p.user_id)).await {
        Ok(accounts::Verification::Verified) => said(
            StatusCode::OK,
            "Email confirmed",
            Message::new("Email confirmed").line("Your address is confirmed. Thank you."),
        ),
        Ok(accounts::Verification::SignInFirst) => {
            let m = Message::new("Sign in to confirm your email")
                .line("Sign in with the account this link was sent for and it is confirmed at once; you will come back here. Nothing changes until then.")
                .with(Line::of(vec![Part::Button(state.url("/signin"), "Sign in".into())]));
            let mut r = html(StatusCode::OK, page(&state, "Confirm your email", None, &rendered(&m)));
            let _ = r.add_cookie(&cookie(&state, NEXT, format!("/verify-email/{token}"), SameSite::Lax, 1));
            r
        }
        Ok(accounts::Verification::NotYours) => said(
            StatusCode::FORBIDDEN,
            "Not your link",
            Message::new("This link is for another account")
                .line("Sign out and sign in with the account it was sent for. Nothing changed."),
        ),
        Ok(accounts::Verification::Invalid) => said(
            StatusCode::NOT_FOUND,
            "Link not valid",
            Message::new("This link does not work").line("It may have expired (links work for 24 hours) or been used."),
        ),
        Err(e) => {
            tracing::error!(error = %e, "could not verify an email");
            oops(&state, who)
        }
    }
}

// ---- a forgotten password ------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
pub struct ForgotForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    csrf: String,
}

#[derive(Template)]
#[template(path = "account/forgot.html")]
struct ForgotView<'a> {
    base: &'a str,
    csrf: &'a str,
    email: &'a str,
    minutes: i64,
    error: Option<&'a str>,
}

fn forgot_page(state: &State, email: &str, error: Option<&str>, status: StatusCode) -> HttpResponse {
    let csrf = form_csrf(state);
    let view = ForgotView { base: &state.public_url, csrf: &csrf, email, minutes: accounts::RESET_LINK_MINUTES, error };
    signed_out_form(state, status, "Forgot your password", &rendered(&view), csrf)
}

pub async fn forgot_form(state: web::Data<State>) -> HttpResponse {
    forgot_page(&state, "", None, StatusCode::OK)
}

/// Asks for a reset link: the same answer whether the address has an account or not.
pub async fn forgot(state: web::Data<State>, req: HttpRequest, form: web::Form<ForgotForm>) -> HttpResponse {
    let f = form.into_inner();
    if !form_csrf_ok(&state, &req, &f.csrf) {
        return forgot_page(&state, &f.email, Some("This form expired. Please try again."), StatusCode::FORBIDDEN);
    }
    let network = api_http::middleware::client_network(&req);
    match accounts::request_password_reset(&state.app, &state.public_url, &f.email, &network).await {
        Ok(()) => see_other(&state.url("/forgot-password/sent")),
        Err(operations::OpError::Invalid(errs)) => {
            let msg = problems(&errs);
            forgot_page(&state, &f.email, Some(&msg), StatusCode::BAD_REQUEST)
        }
        Err(operations::OpError::TooMany { code, retry_after_secs, .. }) => {
            let msg = if code == "reset_quota" {
                format!(
                    "Too many password resets were asked from your network in the last hour. Try again in {} \
                     minutes.",
                    retry_after_secs.div_ceil(60)
                )
            } else {
                "We sent this address enough email for today. Check your inbox, or try again tomorrow.".to_owned()
            };
            let mut r = forgot_page(&state, &f.email, Some(&msg), StatusCode::TOO_MANY_REQUESTS);
            r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(retry_after_secs));
            r
        }
        Err(e) => {
            tracing::error!(error = %e, "a password reset could not be asked");
            oops(&state, None)
        }
    }
}

/// After asking for a reset link: the same page whether the address has an account or not.
pub async fn forgot_sent(state: web::Data<State>) -> HttpResponse {
    let m = Message::new("Check your email")
        .line(format!(
            "If the address you typed has an account here, we sent it a link that sets a new password. It works \
             for {} minutes, once. If it has none, the email says so.",
            accounts::RESET_LINK_MINUTES
        ))
        .with(Line::of(vec![Part::Button(state.url("/signin"), "Sign in".into())]));
    html(StatusCode::OK, page(&state, "Check your email", None, &rendered(&m)))
}

#[derive(Template)]
#[template(path = "account/reset.html")]
struct ResetView<'a> {
    base: &'a str,
    token: &'a str,
    csrf: &'a str,
    error: Option<&'a str>,
}

/// The reset link opened: a form, when the link still works. Opening it uses nothing, so a mail
/// scanner that follows it leaves it working.
fn reset_page(state: &State, token: &str, error: Option<&str>, status: StatusCode) -> HttpResponse {
    let csrf = form_csrf(state);
    let view = ResetView { base: &state.public_url, token, csrf: &csrf, error };
    signed_out_form(state, status, "Choose a new password", &rendered(&view), csrf)
}

fn reset_link_gone(state: &State) -> HttpResponse {
    let m = Message::new("This link does not work")
        .line(format!(
            "It may have expired (links work for {} minutes) or been used. Ask for a new one.",
            accounts::RESET_LINK_MINUTES
        ))
        .with(Line::of(vec![Part::Button(state.url("/forgot-password"), "Email me a new link".into())]));
    html(StatusCode::NOT_FOUND, page(state, "Link not valid", None, &rendered(&m)))
}

/// Whether `token` could be a link we made: what the link's path holds, bounded before any lookup.
fn plausible_token(token: &str) -> bool {
    (16..=128).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub async fn reset_form(state: web::Data<State>, token: web::Path<String>) -> HttpResponse {
    if !plausible_token(&token) {
        return reset_link_gone(&state);
    }
    match accounts::password_reset_link_works(&state.app, &token).await {
        Ok(true) => reset_page(&state, &token, None, StatusCode::OK),
        Ok(false) => reset_link_gone(&state),
        Err(e) => {
            tracing::error!(error = %e, "could not read a password-reset link");
            oops(&state, None)
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct ResetForm {
    #[serde(default)]
    password: String,
    #[serde(default)]
    csrf: String,
}

/// Sets the new password, signs this browser in and every other session out.
pub async fn reset(
    state: web::Data<State>,
    req: HttpRequest,
    token: web::Path<String>,
    form: web::Form<ResetForm>,
) -> HttpResponse {
    let f = form.into_inner();
    if !plausible_token(&token) {
        return reset_link_gone(&state);
    }
    if !form_csrf_ok(&state, &req, &f.csrf) {
        return reset_page(&state, &token, Some("This form expired. Please try again."), StatusCode::FORBIDDEN);
    }
    match accounts::reset_password(&state.app, &token, &f.password).await {
        Ok(accounts::Reset::Done(done)) => {
            tracing::info!(
                user = done.user.get(),
                took_over = done.took_over,
                sessions = done.sessions,
                "password reset"
            );
            start(&state, &req, done.user).await
        }
        Ok(accounts::Reset::Invalid) => reset_link_gone(&state),
        Ok(accounts::Reset::Busy) => {
            let msg = "We are checking a lot of passwords right now. Please try again in a few seconds.";
            let mut r = reset_page(&state, &token, Some(msg), StatusCode::SERVICE_UNAVAILABLE);
            r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(5u64));
            r
        }
        Err(operations::OpError::Invalid(errs)) => {
            let msg = problems(&errs);
            reset_page(&state, &token, Some(&msg), StatusCode::BAD_REQUEST)
        }
        Err(e) => {
            tracing::error!(error = %e, "a password reset failed");
            oops(&state, None)
        }
    }
}

#[derive(Debug, Deserialize)]
/// A form that carries only the session's CSRF token (a button).
pub struct CsrfOnly {
    #[serde(default)]
    pub(crate) csrf: String,
}

/// The sign-out page: one button, carrying the session's CSRF token (the header links here, since
/// the header is drawn without the token).
pub async fn signout_form(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    #[derive(Template)]
    #[template(path = "account/signout.html")]
    struct SignOut<'a> {
        base: &'a str,
        csrf: &'a str,
    }
    let body = rendered(&SignOut { base: &state.public_url, csrf: &csrf });
    html(StatusCode::OK, page(&state, "Sign out", Some(&p), &body))
}

pub async fn signout(state: web::Data<State>, req: HttpRequest, form: web::Form<CsrfOnly>) -> HttpResponse {
    if let Some((_, csrf)) = signed_in(&state, &req).await {
        if !same(&state, &form.csrf, &csrf) {
            return html(
                StatusCode::FORBIDDEN,
                page(&state, "Sign out", None, "<p>This form expired. Please try again.</p>"),
            );
        }
        if let Some(c) = req.cookie(SESSION)
            && let Err(e) = accounts::end_session(&state.app, c.value()).await
        {
            tracing::error!(error = %e, "could not end a session");
        }
    }
    let mut r = see_other(&state.url("/signin"));
    let mut gone = Cookie::new(SESSION, "");
    gone.set_path("/");
    gone.make_removal();
    let _ = r.add_cookie(&gone);
    r
}

// ---- API keys ------------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
pub struct NewKey {
    #[serde(default)]
    name: String,
    #[serde(default)]
    csrf: String,
    scope_account_read: Option<String>,
    scope_listings_write: Option<String>,
    scope_orders_write: Option<String>,
}

/// What an account page says above itself.
enum Notice<'a> {
    None,
    Error(&'a str),
    Done(String),
    /// A key just made: its name and the token, shown this once.
    NewKey(String, String),
}

/// One API key's row.
struct KeyRow {
    id: String,
    name: String,
    shown: String,
    scopes: String,
    created: String,
    used: String,
    revoked: Option<String>,
}

#[derive(Template)]
#[template(path = "account/keys.html")]
struct KeysView<'a> {
    base: &'a str,
    csrf: &'a str,
    notice: Notice<'a>,
    keys: Vec<KeyRow>,
}

const EXPIRED: &str = "This form expired. Please try again.";

async fn keys_page(state: &State, p: &Principal, csrf: &str, notice: Notice<'_>, status: StatusCode) -> HttpResponse {
    let keys = match operations::accounts::api_keys_of(&state.app, p.user_id).await {
        Ok(k) => k,
        Err(e) => {
            tracing::error!(error = %e, "could not list API keys");
            return oops(state, Some(p));
        }
    };
    let keys = keys
        .iter()
        .map(|k| KeyRow {
            id: k.id.to_string(),
            name: k.name.clone(),
            shown: k.shown.clone(),
            scopes: k.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
            created: k.created_at.format("%Y-%m-%d").to_string(),
            used: k.last_used_at.map_or("never".to_owned(), |t| t.format("%Y-%m-%d %H:%M UTC").to_string()),
            revoked: k.revoked_at.map(|t| t.format("%Y-%m-%d").to_string()),
        })
        .collect();
    let view = KeysView { base: &state.public_url, csrf, notice, keys };
    html(status, page(state, "API keys", Some(p), &rendered(&view)))
}

pub async fn keys(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    keys_page(&state, &p, &csrf, Notice::None, StatusCode::OK).await
}

pub async fn create_key(state: web::Data<State>, req: HttpRequest, form: web::Form<NewKey>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    let f = form.into_inner();
    if !same(&state, &f.csrf, &csrf) {
        return keys_page(&state, &p, &csrf, Notice::Error(EXPIRED), StatusCode::FORBIDDEN).await;
    }
    let scopes: Vec<Scope> = [
        (f.scope_account_read.is_some(), Scope::AccountRead),
        (f.scope_listings_write.is_some(), Scope::ListingsWrite),
        (f.scope_orders_write.is_some(), Scope::OrdersWrite),
    ]
    .into_iter()
    .filter_map(|(on, s)| on.then_some(s))
    .collect();
    match accounts::create_api_key(&state.app, p.user_id, &f.name, &scopes).await {
        Ok((key, token)) => {
            let notice = Notice::NewKey(key.name.clone(), token.as_str().to_owned());
            keys_page(&state, &p, &csrf, notice, StatusCode::CREATED).await
        }
        Err(operations::OpError::Invalid(errs)) => {
            let msg = problems(&errs);
            keys_page(&state, &p, &csrf, Notice::Error(&msg), StatusCode::BAD_REQUEST).await
        }
        Err(e) => {
            tracing::error!(error = %e, "could not create an API key");
            oops(&state, Some(&p))
        }
    }
}

pub async fn revoke_key(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<String>,
    form: web::Form<CsrfOnly>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    if !same(&state, &form.csrf, &csrf) {
        return keys_page(&state, &p, &csrf, Notice::Error(EXPIRED), StatusCode::FORBIDDEN).await;
    }
    let Ok(id) = ApiKeyId::parse_str(&path) else {
        return html(StatusCode::NOT_FOUND, page(&state, "Not found", Some(&p), "<p>No such key.</p>"));
    };
    match operations::accounts::revoke_api_key(&state.app, p.user_id, id).await {
        Ok(k) => {
            let notice = Notice::Done(format!("Revoked “{}”. It no longer works.", k.name));
            keys_page(&state, &p, &csrf, notice, StatusCode::OK).await
        }
        // Someone else's key answers exactly like a missing one.
        Err(operations::OpError::NotFound(_)) => {
            html(StatusCode::NOT_FOUND, page(&state, "Not found", Some(&p), "<p>No such key.</p>"))
        }
        Err(e) => {
            tracing::error!(error = %e, "could not revoke an API key");
            oops(&state, Some(&p))
        }
    }
}

// ---- applications allowed through OAuth, and signing out everywhere ------------------------------

/// One application's row.
struct AppRow {
    name: String,
    scopes: String,
    resource: String,
    allowed: String,
    used: String,
    family: String,
}

#[derive(Template)]
#[template(path = "account/apps.html")]
struct AppsView<'a> {
    base: &'a str,
    csrf: &'a str,
    notice: Notice<'a>,
    apps: Vec<AppRow>,
}

async fn apps_page(state: &State, p: &Principal, csrf: &str, notice: Notice<'_>, status: StatusCode) -> HttpResponse {
    let apps = match operations::oauth::applications(&state.app, p.user_id).await {
        Ok(a) => a,
        Err(e) => {
            tracing::error!(error = %e, "could not list applications");
            return oops(state, Some(p));
        }
    };
    let apps = apps
        .iter()
        .map(|a| AppRow {
            name: a.name.clone(),
            scopes: a.grant.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
            resource: a.grant.resource.clone(),
            allowed: a.grant.allowed_at.format("%Y-%m-%d").to_string(),
            used: a.grant.last_used_at.format("%Y-%m-%d %H:%M UTC").to_string(),
            family: a.grant.family.clone(),
        })
        .collect();
    let view = AppsView { base: &state.public_url, csrf, notice, apps };
    html(status, page(state, "Applications", Some(p), &rendered(&view)))
}

pub async fn apps(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    apps_page(&state, &p, &csrf, Notice::None, StatusCode::OK).await
}

pub async fn revoke_app(
    state: web::Data<State>,
    req: HttpRequest,
    family: web::Path<String>,
    form: web::Form<CsrfOnly>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    if !same(&state, &form.csrf, &csrf) {
        return apps_page(&state, &p, &csrf, Notice::Error(EXPIRED), StatusCode::FORBIDDEN).await;
    }
    match operations::oauth::revoke_application(&state.app, p.user_id, &family).await {
        Ok(true) => {
            let notice = Notice::Done("Revoked. That application can no longer act for you.".into());
            apps_page(&state, &p, &csrf, notice, StatusCode::OK).await
        }
        // Someone else's grant answers exactly like a missing one.
        Ok(false) => html(StatusCode::NOT_FOUND, page(&state, "Not found", Some(&p), "<p>No such application.</p>")),
        Err(e) => {
            tracing::error!(error = %e, "could not revoke an application");
            oops(&state, Some(&p))
        }
    }
}

pub async fn signout_everywhere(state: web::Data<State>, req: HttpRequest, form: web::Form<CsrfOnly>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else { return see_other(&state.url("/signin")) };
    if !same(&state, &form.csrf, &csrf) {
        return apps_page(&state, &p, &csrf, Notice::Error(EXPIRED), StatusCode::FORBIDDEN).await;
    }
    if let Err(e) = accounts::end_all_sessions(&state.app, p.user_id).await {
        tracing::error!(error = %e, "could not end the sessions");
        return oops(&state, Some(&p));
    }
    let mut r = see_other(&state.url("/signin"));
    let mut gone = Cookie::new(SESSION, "");
    gone.set_path("/");
    gone.make_removal();
    let _ = r.add_cookie(&gone);
    r
}

async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(STYLESHEET)
}

async fn account(state: web::Data<State>) -> HttpResponse {
    see_other(&state.url("/account/api-keys"))
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    let na = || web::to(crate::server::method_not_allowed);
    cfg.service(
        web::resource("/signup").route(web::get().to(signup_form)).route(web::post().to(signup)).default_service(na()),
    )
    .service(
        web::resource("/signin").route(web::get().to(signin_form)).route(web::post().to(signin)).default_service(na()),
    )
    .service(
        web::resource("/signout")
            .route(web::get().to(signout_form))
            .route(web::post().to(signout))
            .default_service(na()),
    )
    .service(web::resource("/signup/sent").route(web::get().to(signup_sent)).default_service(na()))
    .service(web::resource("/verify-email/{token}").route(web::get().to(verify_email)).default_service(na()))
    .service(
        web::resource("/forgot-password")
            .route(web::get().to(forgot_form))
            .route(web::post().to(forgot))
            .default_service(na()),
    )
    .service(web::resource("/forgot-password/sent").route(web::get().to(forgot_sent)).default_service(na()))
    .service(
        web::resource("/reset-password/{token}")
            .route(web::get().to(reset_form))
            .route(web::post().to(reset))
            .default_service(na()),
    )
    .service(web::resource("/account").route(web::get().to(account)).default_service(na()))
    .service(
        web::resource("/account/api-keys")
            .route(web::get().to(keys))
            .route(web::post().to(create_key))
            .default_service(na()),
    )
    .service(web::resource("/account/api-keys/{id}/revoke").route(web::post().to(revoke_key)).default_service(na()))
    .service(web::resource("/account/apps").route(web::get().to(apps)).default_service(na()))
    .service(web::resource("/account/apps/{family}/revoke").route(web::post().to(revoke_app)).default_service(na()))
    .service(
        web::resource("/account/signout-everywhere").route(web::post().to(signout_everywhere)).default_service(na()),
    )
    .service(
        web::resource("/invites/{token}")
            .route(web::get().to(crate::invites::show))
            .route(web::post().to(crate::invites::accept))
            .default_service(na()),
    )
    .service(web::resource("/checkout/{number}").route(web::get().to(crate::checkout::show)).default_service(na()))
    .service(
        web::resource("/checkout/{number}/billing")
            .route(web::post().to(crate::checkout::billing))
            .default_service(na()),
    )
    .service(web::resource("/checkout/{number}/pay").route(web::post().to(crate::checkout::pay)).default_service(na()))
    .service(
        web::resource("/webhooks/stripe").route(web::post().to(crate::checkout::stripe_webhook)).default_service(na()),
    )
    .service(
        web::resource("/claims/confirm/{token}").route(web::get().to(crate::claim_links::open)).default_service(na()),
    )
    .configure(crate::oauth::routes)
    .service(web::resource("/bot").route(web::get().to(crate::invites::bot)).default_service(na()))
    .service(web::resource("/static/site.css").route(web::get().to(stylesheet)).default_service(na()));
}
