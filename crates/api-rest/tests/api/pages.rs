//! The account pages over plain HTTP, as a browser without JavaScript uses them: sign up, make a key,
//! use it, revoke it, sign out; cookies' attributes and CSRF refusals.

use crate::helpers::{TestApp, spawn_app_configured};
use std::collections::HashMap;

/// A tiny browser: remembers cookies, does not follow redirects (so each step is visible).
#[derive(Clone)]
pub(crate) struct Browser<'a> {
    pub(crate) app: &'a TestApp,
    client: reqwest::Client,
    jar: HashMap<String, String>,
    set_cookie_lines: Vec<String>,
}

impl<'a> Browser<'a> {
    pub(crate) fn new(app: &'a TestApp) -> Self {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Self { app, client, jar: HashMap::new(), set_cookie_lines: Vec::new() }
    }

    fn remember(&mut self, r: &reqwest::Response) {
        for v in r.headers().get_all("set-cookie") {
            let line = v.to_str().unwrap().to_owned();
            let (pair, _) = line.split_once(';').unwrap_or((&line, ""));
            let (name, value) = pair.split_once('=').unwrap();
            if value.is_empty() || line.contains("Max-Age=0") {
                self.jar.remove(name);
            } else {
                self.jar.insert(name.to_owned(), value.to_owned());
            }
            self.set_cookie_lines.push(line);
        }
    }

    fn cookie_header(&self) -> String {
        self.jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    pub(crate) async fn get(&mut self, path: &str) -> (u16, String, Option<String>) {
        let r = self.client.get(format!("{}{path}", self.app.base));
        self.send(r).await
    }

    pub(crate) async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> (u16, String, Option<String>) {
        let r = self.client.post(format!("{}{path}", self.app.base)).form(form);
        self.send(r).await
    }

    /// Posts a form given as owned pairs (names built at run time).
    pub(crate) async fn post_pairs(&mut self, path: &str, form: &[(String, String)]) -> (u16, String, Option<String>) {
        let r = self.client.post(format!("{}{path}", self.app.base)).form(form);
        self.send(r).await
    }

    /// Posts a form with extra headers and hands back the whole response (cookies remembered).
    pub(crate) async fn raw_post(
        &mut self,
        path: &str,
        form: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut r = self.client.post(format!("{}{path}", self.app.base)).form(form);
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        let r = r.header("Cookie", self.cookie_header()).send().await.unwrap();
        self.remember(&r);
        r
    }

    /// Sends with the jar's cookies. A redirect to one of our pages must be built from the public URL
    /// (never a bare path); it comes back as the path, so tests read like the site's routes.
    async fn send(&mut self, r: reqwest::RequestBuilder) -> (u16, String, Option<String>) {
        let r = r.header("Cookie", self.cookie_header()).send().await.unwrap();
        self.remember(&r);
        let loc = r.headers().get("location").map(|v| v.to_str().unwrap().to_owned()).map(|l| {
            assert!(!l.starts_with('/'), "a redirect to {l} is not built from the public URL");
            l.strip_prefix(&self.app.base).map_or(l.clone(), str::to_owned)
        });
        (r.status().as_u16(), r.text().await.unwrap(), loc)
    }
}

/// Signs a new person up in `b` as a person does: the sign-up form, "check your email", signing in, and
/// the emailed link that confirms the address (so the account may vote, invite and claim by email).
pub(crate) async fn sign_up(b: &mut Browser<'_>, email: &str) {
    let (_, form, _) = b.get("/signup").await;
    let csrf = hidden(&form, "csrf");
    let (s, _, to) = b.post("/signup", &[("email", email), ("password", "correct horse 9"), ("csrf", &csrf)]).await;
    assert_eq!((s, to.as_deref()), (303, Some("/signup/sent")));
    sign_in_with(b, email, "correct horse 9").await;
    let link = emailed_link(b.app, email, "/verify-email/").await;
    let (s, page, _) = b.get(&link).await;
    assert!(s == 200 && page.contains("Email confirmed"), "{page}");
}

/// The path of the newest link to `kind` (`/verify-email/`, `/invites/` …) emailed to `to`.
pub(crate) async fn emailed_link(app: &TestApp, to: &str, kind: &str) -> String {
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let mails = domain::ports::Outbox::outbox(store.store.as_ref(), Some(to), 10).await.unwrap();
    let url = mails
        .iter()
        .find_map(|m| m.body.split_whitespace().find(|w| w.contains(kind)).map(str::to_owned))
        .unwrap_or_else(|| panic!("no {kind} link emailed to {to}"));
    url.find(kind).map(|i| url[i..].to_owned()).unwrap()
}

/// Signs `email` in in `b` with the password test accounts made by `key_for` have; returns where the
/// sign-in sent the browser.
pub(crate) async fn sign_in(b: &mut Browser<'_>, email: &str) -> Option<String> {
    sign_in_with(b, email, "correct horse 1").await
}

/// Signs `email` in in `b` with `password`; returns where the sign-in sent the browser.
pub(crate) async fn sign_in_with(b: &mut Browser<'_>, email: &str, password: &str) -> Option<String> {
    let (_, form, _) = b.get("/signin").await;
    let csrf = hidden(&form, "csrf");
    let (st, body, to) = b.post("/signin", &[("email", email), ("password", password), ("csrf", &csrf)]).await;
    assert_eq!(st, 303, "{body}");
    to
}

pub(crate) fn hidden(html: &str, name: &str) -> String {
    let marker = format!(r#"name="{name}" value=""#);
    let start = html.find(&marker).unwrap_or_else(|| panic!("no {name} in {html}")) + marker.len();
    unescape(html[start..].split('"').next().unwrap())
}

/// Text or an attribute value as a browser reads it: `&amp;`, `&lt;`, `&gt;`, `&quot;` and numeric
/// references (`&#38;`, `&#x27;`) decoded.
pub(crate) fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.find(';').filter(|e| *e <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .map(|h| u32::from_str_radix(h, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse::<u32>))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn new_key(html: &str) -> String {
    let start = html.find(r#"id="new-key">"#).expect("the new key is shown") + r#"id="new-key">"#.len();
    html[start..].split('<').next().unwrap().to_owned()
}

async fn me(app: &TestApp, key: &str) -> u16 {
    app.client
        .get(format!("{}/api/v1/me", app.base))
        .header("Authorization", format!("Bearer {key}"))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn sign_up_make_a_key_use_it_revoke_it() {
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let mut b = Browser::new(&app);

    let (s, _, loc) = b.get("/account/api-keys").await;
    assert_eq!((s, loc.as_deref()), (303, Some("/signin")), "signed out: sent to sign in");
    let (s, form, _) = b.get("/signup").await;
    assert_eq!(s, 200);
    assert!(
        form.contains(&format!(r#"<link rel="stylesheet" href="{}/static/site.css">"#, app.base))
            && !form.contains("<script")
    );
    let csrf = hidden(&form, "csrf");

    // Without the form's token (a cross-site post) the sign-up is refused.
    let (s, _, _) =
        b.post("/signup", &[("email", "ann@acme.example"), ("password", "correct horse 1"), ("csrf", "forged")]).await;
    assert_eq!(s, 403);
    let (_, form, _) = b.get("/signup").await;
    let csrf2 = hidden(&form, "csrf");
    assert_ne!(csrf, csrf2);
    let (s, page, _) =
        b.post("/signup", &[("email", "ann@acme.example"), ("password", "short"), ("csrf", &csrf2)]).await;
    assert!(s == 400 && page.contains("password"), "{s}");
    let (_, form, _) = b.get("/signup").await;
    let csrf3 = hidden(&form, "csrf");
    let (s, _, loc) =
        b.post("/signup", &[("email", "ann@acme.example"), ("password", "correct horse 1"), ("csrf", &csrf3)]).await;
    assert_eq!((s, loc.as_deref()), (303, Some("/signup/sent")));
    assert!(!b.set_cookie_lines.iter().any(|l| l.starts_with("ld_session=")), "sign-up alone signs nobody in");
    let to = sign_in_with(&mut b, "ann@acme.example", "correct horse 1").await;
    assert_eq!(to.as_deref(), Some("/account/api-keys"));
    let session = b.set_cookie_lines.iter().find(|l| l.starts_with("ld_session=")).unwrap().clone();
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Lax") && session.contains("Path=/"),
        "{session}"
    );
    assert!(!session.contains("Secure"), "plain http public URL: not Secure");

    let (s, keys, _) = b.get("/account/api-keys").await;
    assert!(s == 200 && keys.contains("No keys yet") && keys.contains("ann@acme.example"));
    let csrf = hidden(&keys, "csrf");
    let (s, _, _) = b.post("/account/api-keys", &[("name", "CI"), ("scope_account_read", "on"), ("csrf", "x")]).await;
    assert_eq!(s, 403, "a key is never made without the session's CSRF token");
    let (s, created, _) =
        b.post("/account/api-keys", &[("name", "CI"), ("scope_account_read", "on"), ("csrf", &csrf)]).await;
    assert_eq!(s, 201);
    let key = new_key(&created);
    assert!(key.starts_with("ldk_") && key.len() == 42, "{key}");
    assert_eq!(me(&app, &key).await, 200);

    // The list shows the key's prefix, scopes and last use, never the key again.
    let (_, listed, _) = b.get("/account/api-keys").await;
    assert!(listed.contains(&key[..12]) && !listed.contains(&key[12..]) && listed.contains("account:read"));
    assert!(listed.contains(" UTC</td>") && !listed.contains("<td>never</td>"), "its use is recorded");

    // Another person cannot revoke it (404 like a missing key); its owner can.
    let mut other = Browser::new(&app);
    let (_, form, _) = other.get("/signup").await;
    let c = hidden(&form, "csrf");
    other.post("/signup", &[("email", "bob@acme.example"), ("password", "correct horse 2"), ("csrf", &c)]).await;
    sign_in_with(&mut other, "bob@acme.example", "correct horse 2").await;
    let (_, bob_keys, _) = other.get("/account/api-keys").await;
    let bob_csrf = hidden(&bob_keys, "csrf");
    let id = listed.split("/account/api-keys/").nth(1).unwrap().split('/').next().unwrap().to_owned();
    let (s, _, _) = other.post(&format!("/account/api-keys/{id}/revoke"), &[("csrf", &bob_csrf)]).await;
    assert_eq!(s, 404);
    assert_eq!(me(&app, &key).await, 200);
    let (s, page, _) = b.post(&format!("/account/api-keys/{id}/revoke"), &[("csrf", &csrf)]).await;
    assert!(s == 200 && page.contains("Revoked"));
    assert_eq!(me(&app, &key).await, 401);

    // Sign out (the header's link leads to a page whose form carries the token) ends the session on
    // the server, not only in the browser.
    let stolen = b.cookie_header();
    let (_, signout, _) = b.get("/signout").await;
    assert_eq!(hidden(&signout, "csrf"), csrf, "the sign-out page's form carries the session's token");
    let (s, _, loc) = b.post("/signout", &[("csrf", &csrf)]).await;
    assert_eq!((s, loc.as_deref()), (303, Some("/signin")));
    let r = app.client.get(format!("{}/account/api-keys", app.base)).header("Cookie", stolen).send().await.unwrap();
    assert_eq!(r.url().path(), "/signin", "the old cookie no longer signs in");

    // Signing in again works with the password, not with a wrong one.
    let (_, form, _) = b.get("/signin").await;
    let c = hidden(&form, "csrf");
    let (s, _, _) =
        b.post("/signin", &[("email", "ann@acme.example"), ("password", "wrong password"), ("csrf", &c)]).await;
    assert_eq!(s, 401);
    let (_, form, _) = b.get("/signin").await;
    let c = hidden(&form, "csrf");
    let (s, _, loc) =
        b.post("/signin", &[("email", "ANN@acme.example"), ("password", "correct horse 1"), ("csrf", &c)]).await;
    assert_eq!((s, loc.as_deref()), (303, Some("/account/api-keys")));
    let (s, css, _) = b.get("/static/site.css").await;
    assert!(s == 200 && css.contains("prefers-color-scheme"));
}
