//! A forgotten password: the page that asks for a link must not say which addresses have accounts;
//! the emailed link must survive a mail scanner, work once, and not outlive its hour; and an address
//! someone else signed up with must come back to its owner with nothing of theirs left working.

use crate::helpers::spawn_app_configured;
use crate::oauth::{REDIRECT, mcp_call};
use crate::pages::{Browser, emailed_link, hidden, sign_in_with};
use serde_json::json;

/// Asks for a reset link for `email` in `b`; where the answer sent the browser, and the page it showed.
async fn forgot(b: &mut Browser<'_>, email: &str) -> (u16, Option<String>, String) {
    let (st, form, _) = b.get("/forgot-password").await;
    assert_eq!(st, 200, "{form}");
    let csrf = hidden(&form, "csrf");
    let (st, _, to) = b.post("/forgot-password", &[("email", email), ("csrf", &csrf)]).await;
    let (_, page, _) = b.get("/forgot-password/sent").await;
    (st, to, page)
}

/// Sets `password` through the reset link `link` in `b`: the status and where it sent the browser.
async fn set_password(b: &mut Browser<'_>, link: &str, password: &str) -> (u16, String, Option<String>) {
    let (st, form, _) = b.get(link).await;
    assert_eq!(st, 200, "{form}");
    let csrf = hidden(&form, "csrf");
    b.post(link, &[("password", password), ("csrf", &csrf)]).await
}

async fn sign_up_as(b: &mut Browser<'_>, email: &str, password: &str) {
    let (_, form, _) = b.get("/signup").await;
    let csrf = hidden(&form, "csrf");
    let (st, _, to) = b.post("/signup", &[("email", email), ("password", password), ("csrf", &csrf)]).await;
    assert_eq!((st, to.as_deref()), (303, Some("/signup/sent")));
}

async fn signs_in(b: &mut Browser<'_>, email: &str, password: &str) -> u16 {
    let (_, form, _) = b.get("/signin").await;
    let csrf = hidden(&form, "csrf");
    b.post("/signin", &[("email", email), ("password", password), ("csrf", &csrf)]).await.0
}

#[tokio::test]
async fn a_forgotten_password_is_set_again_once_through_the_emailed_link() {
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let mut ann = Browser::new(&app);
    sign_up_as(&mut ann, "ann@acme.example", "first password 1").await;
    sign_in_with(&mut ann, "ann@acme.example", "first password 1").await;
    let (_, signin, _) = Browser::new(&app).get("/signin").await;
    assert!(signin.contains("/forgot-password"), "the sign-in page links the way back in");

    // The same answer for an address with an account and one without.
    let mut someone = Browser::new(&app);
    let known = forgot(&mut someone, "ann@acme.example").await;
    let unknown = forgot(&mut Browser::new(&app), "nobody@acme.example").await;
    assert_eq!(known, unknown, "the answers must not differ");
    assert_eq!((known.0, known.1.as_deref()), (303, Some("/forgot-password/sent")));
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let mail = |to: &'static str| {
        let store = store.store.clone();
        async move { domain::ports::Outbox::outbox(store.as_ref(), Some(to), 10).await.unwrap() }
    };
    let to_nobody = mail("nobody@acme.example").await;
    assert_eq!(to_nobody.len(), 1, "an address without an account is told so");
    assert!(to_nobody[0].body.contains("has none") && !to_nobody[0].body.contains("/reset-password/"));
    let link = emailed_link(&app, "ann@acme.example", "/reset-password/").await;

    // The mail gateway opens the link on arrival: it keeps working.
    for _ in 0..3 {
        let r = app.client.get(format!("{}{link}", app.base)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.text().await.unwrap().contains("Choose a new password"));
    }
    // A form posted without the page's token, and a password too short, change nothing.
    let (st, _, _) = someone.post(&link, &[("password", "new password 22"), ("csrf", "forged")]).await;
    assert_eq!(st, 403);
    let (st, page, _) = set_password(&mut someone, &link, "short").await;
    assert!(st == 400 && page.contains("password"), "{st} {page:.500}");

    let (st, _, to) = set_password(&mut someone, &link, "new password 22").await;
    assert_eq!((st, to.as_deref()), (303, Some("/account/api-keys")), "set, and signed in here");
    assert_eq!(someone.get("/account/api-keys").await.0, 200);
    assert_eq!(ann.get("/account/api-keys").await.0, 303, "every other session ended");
    assert_eq!(signs_in(&mut Browser::new(&app), "ann@acme.example", "first password 1").await, 401);
    assert_eq!(signs_in(&mut Browser::new(&app), "ann@acme.example", "new password 22").await, 303);

    // Used once: the link, opened or posted again, does nothing.
    let (st, page, _) = Browser::new(&app).get(&link).await;
    assert!(st == 404 && page.contains("does not work"), "{page:.500}");
    let mut replay = Browser::new(&app);
    let (_, form, _) = replay.get("/forgot-password").await;
    let csrf = hidden(&form, "csrf");
    let (st, _, _) = replay.post(&link, &[("password", "third password 3"), ("csrf", &csrf)]).await;
    assert_eq!(st, 404);
    assert_eq!(signs_in(&mut Browser::new(&app), "ann@acme.example", "third password 3").await, 401);
    // A made-up link is the same 404, and a path no link of ours could be is answered before any lookup.
    assert_eq!(Browser::new(&app).get(&format!("/reset-password/{}", "f".repeat(64))).await.0, 404);
    assert_eq!(Browser::new(&app).get("/reset-password/%27%3B--").await.0, 404);
    // The request log never holds a working link.
    assert_eq!(api_http::middleware::redacted(&link), "/reset-password/[redacted]");
}

/// Someone signs up with another person's address, signs in, makes a key and lets an app in. The
/// owner, who can neither sign up (the address is taken) nor confirm the account (only its maker,
/// signed in, can), asks for a reset link: setting the password verifies the address and ends all
/// the maker had — sessions, API keys, refresh tokens and access tokens issued before.
#[tokio::test]
async fn a_reset_takes_an_address_back_from_whoever_signed_up_with_it() {
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let mut squatter = Browser::new(&app);
    sign_up_as(&mut squatter, "victim@corp.example", "squatter pass 1").await;
    sign_in_with(&mut squatter, "victim@corp.example", "squatter pass 1").await;
    let (_, keys, _) = squatter.get("/account/api-keys").await;
    let csrf = hidden(&keys, "csrf");
    let (st, made, _) =
        squatter.post("/account/api-keys", &[("name", "mine"), ("scope_account_read", "on"), ("csrf", &csrf)]).await;
    assert_eq!(st, 201, "{made:.500}");
    let key = made.split(r#"id="new-key">"#).nth(1).and_then(|s| s.split('<').next()).unwrap().to_owned();
    let me = |token: String| {
        let (client, base) = (app.client.clone(), app.base.clone());
        async move { client.get(format!("{base}/api/v1/me")).bearer_auth(token).send().await.unwrap().status() }
    };
    assert_eq!(me(key.clone()).await, 200, "the squatter's key works before");
    let client = super::oauth::register(&app, REDIRECT, "Squatter's Tool").await;
    let granted = super::oauth::allow(&app, &mut squatter, &client).await;
    let access = granted["access_token"].as_str().unwrap().to_owned();
    let refresh = granted["refresh_token"].as_str().unwrap().to_owned();
    assert_eq!(mcp_call(&app, Some(&access), "list_my_listings", json!({})).await.status(), 200);

    // The owner asks for a link and sets a password.
    let mut owner = Browser::new(&app);
    forgot(&mut owner, "victim@corp.example").await;
    let link = emailed_link(&app, "victim@corp.example", "/reset-password/").await;
    // Access tokens are checked to the second: let the reset land in a later second than their issue.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (st, _, _) = set_password(&mut owner, &link, "owner password 9").await;
    assert_eq!(st, 303);

    assert_eq!(squatter.get("/account/api-keys").await.0, 303, "the squatter's session ended");
    assert_eq!(signs_in(&mut Browser::new(&app), "victim@corp.example", "squatter pass 1").await, 401);
    assert_eq!(me(key).await, 401, "the squatter's key revoked");
    assert_eq!(mcp_call(&app, Some(&access), "list_my_listings", json!({})).await.status(), 401, "access token");
    let (st, e) = crate::oauth::token(
        &app,
        &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client)],
    )
    .await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")), "refresh token");
    let (_, keys, _) = owner.get("/account/api-keys").await;
    assert!(!keys.contains("confirm your email"), "the reset confirmed the address: {keys:.2000}");
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let (user, _) =
        store.store.user_by_email(&domain::user::Email::parse("victim@corp.example").unwrap()).await.unwrap().unwrap();
    assert!(user.email_verified(), "verified by the reset");
}

/// Each request emails an address the caller typed: one network asks a bounded number an hour, and
/// one address receives a bounded number a day, whoever asks.
#[tokio::test]
async fn reset_requests_are_bounded_per_network_and_per_address() {
    use domain::throttle::mail::{RESETS_PER_NETWORK_PER_HOUR as CAP, RESETS_TO_ADDRESS_PER_DAY as PER_ADDRESS};
    let app = spawn_app_configured(test_support::sqlite(), false, |a| {
        a.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let sent = || async { domain::ports::Outbox::outbox(store.store.as_ref(), None, 1000).await.unwrap().len() };
    let mut b = Browser::new(&app);
    let mut ask = async |email: String, from: &str| {
        let (_, form, _) = b.get("/forgot-password").await;
        let csrf = hidden(&form, "csrf");
        let r = b
            .raw_post(
                "/forgot-password",
                &[("email", email.as_str()), ("csrf", csrf.as_str())],
                &[("x-forwarded-for", from)],
            )
            .await;
        let wait = r.headers().get("retry-after").map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
        (r.status().as_u16(), wait, r.text().await.unwrap())
    };
    let before = sent().await;
    for i in 0..CAP {
        let (st, _, page) = ask(format!("someone{i}@victims.example"), "2001:db8:0:7::1").await;
        assert_eq!(st, 303, "request {}: {page:.300}", i + 1);
    }
    let (st, wait, page) = ask("one-more@victims.example".into(), "2001:db8:0:7::2").await;
    assert_eq!(st, 429, "{page:.300}");
    assert!(wait.is_some_and(|w| (1..=3600).contains(&w)), "Retry-After: {wait:?}");
    assert!(page.contains("from your network"), "{page:.2000}");
    assert_eq!(sent().await - before, usize::try_from(CAP).unwrap(), "the refused request sent nothing");

    for i in 0..PER_ADDRESS {
        let (st, _, _) = ask("target@victims.example".into(), &format!("198.51.100.{}", i + 1)).await;
        assert_eq!(st, 303);
    }
    let (st, _, page) = ask("target@victims.example".into(), "203.0.113.7").await;
    assert_eq!(st, 429, "{page:.300}");
    assert!(page.contains("enough email for today"), "{page:.2000}");
    // A malformed address is a 400 naming the field, before anything is counted or sent.
    let (st, _, page) = ask("not an address".into(), "203.0.113.8").await;
    assert!(st == 400 && page.contains("email"), "{st} {page:.500}");
}
