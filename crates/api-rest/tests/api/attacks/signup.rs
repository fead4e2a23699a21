//! Sign-up: a form that tells a stranger which addresses have accounts, accounts made in bulk with
//! other people's addresses, and a verification link a mail scanner confirms for whoever made them.

use crate::helpers::spawn_app_configured;
use crate::pages::{Browser, emailed_link, hidden, sign_in_with};

async fn submit_signup(b: &mut Browser<'_>, email: &str, password: &str) -> (u16, Option<String>, String) {
    let (_, form, _) = b.get("/signup").await;
    let csrf = hidden(&form, "csrf");
    let (st, _, to) = b.post("/signup", &[("email", email), ("password", password), ("csrf", &csrf)]).await;
    let (_, page, _) = b.get("/signup/sent").await;
    (st, to, page)
}

#[tokio::test]
async fn sign_up_answers_the_same_for_a_new_and_a_taken_address() {
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let mut first = Browser::new(&app);
    let new = submit_signup(&mut first, "ann@acme.example", "correct horse 1").await;
    let mut stranger = Browser::new(&app);
    let taken = submit_signup(&mut stranger, "ann@acme.example", "guessing 12345").await;
    assert_eq!(new, taken, "the answers must not differ");
    assert_eq!((new.0, new.1.as_deref()), (303, Some("/signup/sent")));
    // Nobody was signed in by signing up, and the stranger cannot sign in with their password.
    assert_eq!(stranger.get("/account/api-keys").await.0, 303);
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let mails = domain::ports::Outbox::outbox(store.store.as_ref(), Some("ann@acme.example"), 10).await.unwrap();
    assert_eq!(mails.len(), 2, "a link for the new account, a note to its owner about the second try");
    assert!(mails.iter().any(|m| m.body.contains("already has one")));
    // The owner's password is the first one; the second sign-up changed nothing.
    sign_in_with(&mut first, "ann@acme.example", "correct horse 1").await;
}

#[tokio::test]
async fn an_unconfirmed_address_cannot_vote_invite_or_claim_and_a_scanner_cannot_confirm_it() {
    let app = spawn_app_configured(test_support::sqlite(), true, |_| {}).await;
    app.wait_ready().await;
    let live: serde_json::Value = app.get("/api/v1/listings?per_page=1").await.json().await.unwrap();
    let slug = live["items"][0]["slug"].as_str().unwrap().to_owned();
    // Someone signs up with an address that is not theirs, and signs in with the password they chose.
    let mut squatter = Browser::new(&app);
    submit_signup(&mut squatter, "victim@corp.example", "squatter pass 1").await;
    sign_in_with(&mut squatter, "victim@corp.example", "squatter pass 1").await;
    let (st, page, _) = vote(&mut squatter, &slug).await;
    assert_eq!(st, 409, "{page}");
    assert!(page.contains("confirm your email address first"), "{page}");
    // The victim's mail gateway opens every link on arrival: no session, nothing confirmed.
    let link = emailed_link(&app, "victim@corp.example", "/verify-email/").await;
    for _ in 0..3 {
        let r = app.client.get(format!("{}{link}", app.base)).send().await.unwrap();
        assert!(r.text().await.unwrap().contains("Sign in to confirm"));
    }
    // Another account opening it changes nothing either.
    let mut other = Browser::new(&app);
    submit_signup(&mut other, "other@acme.example", "other pass 12").await;
    sign_in_with(&mut other, "other@acme.example", "other pass 12").await;
    assert_eq!(other.get(&link).await.0, 403);
    assert_eq!(vote(&mut squatter, &slug).await.0, 409, "still unconfirmed");
    // Only the account it was sent for, signed in, confirms it; then it votes.
    let (st, page, _) = squatter.get(&link).await;
    assert!(st == 200 && page.contains("Email confirmed"), "{page}");
    assert_eq!(vote(&mut squatter, &slug).await.0, 303);
}

/// Votes for `slug` on its page as the person signed in in `b`.
async fn vote(b: &mut Browser<'_>, slug: &str) -> (u16, String, Option<String>) {
    let (_, page, _) = b.get(&format!("/listings/{slug}")).await;
    let csrf = hidden(&page, "csrf");
    b.post(&format!("/listings/{slug}/vote"), &[("csrf", &csrf), ("action", "vote")]).await
}

#[tokio::test]
async fn a_planted_form_cookie_with_a_matching_field_is_refused() {
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    // A cookie set from a sibling origin (cookie tossing) and the same value in the field: the
    // double-submit check alone would pass; the token is not one the service signed.
    let planted = "f".repeat(64);
    for path in ["/signin", "/signup"] {
        let r = app
            .client
            .post(format!("{}{path}", app.base))
            .header("Cookie", format!("ld_form={planted}"))
            .form(&[("email", "ann@acme.example"), ("password", "correct horse 1"), ("csrf", &planted)])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{path}");
    }
}

/// Each sign-up emails an address the caller chose, and only each address was capped (3 a day): one
/// network could make the service email a new stranger every request, as fast as the rate limit let
/// it (40 in a row from one address, all sent, when this was found). Now one network (an IPv6 /64)
/// starts `SIGNUPS_PER_NETWORK_PER_HOUR` sign-ups an hour, then gets a 429 page with Retry-After
/// that sends nothing; another network is not held back.
#[tokio::test]
async fn one_network_cannot_make_the_service_email_strangers_without_end() {
    use domain::throttle::mail::SIGNUPS_PER_NETWORK_PER_HOUR as CAP;
    let app = spawn_app_configured(test_support::sqlite(), false, |a| {
        a.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let sent = || async { domain::ports::Outbox::outbox(store.store.as_ref(), None, 1000).await.unwrap().len() };
    let before = sent().await;
    let mut b = Browser::new(&app);
    let mut sign_up_from = async |i: i64, from: &str| {
        let (_, form, _) = b.get("/signup").await;
        let csrf = hidden(&form, "csrf");
        let email = format!("stranger{i}@victims.example");
        let fields = [("email", email.as_str()), ("password", "correct horse 9"), ("csrf", csrf.as_str())];
        let r = b.raw_post("/signup", &fields, &[("x-forwarded-for", from)]).await;
        let wait = r.headers().get("retry-after").map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
        (r.status().as_u16(), wait, r.text().await.unwrap())
    };
    for i in 0..CAP {
        let (status, _, page) = sign_up_from(i, &format!("2001:db8:0:5::{:x}", i + 1)).await;
        assert_eq!(status, 303, "sign-up {}: {page:.300}", i + 1);
    }
    let (status, wait, page) = sign_up_from(CAP, "2001:db8:0:5::ffff").await;
    assert_eq!(status, 429, "{page:.300}");
    assert!(wait.is_some_and(|w| (1..=3600).contains(&w)), "Retry-After: {wait:?}");
    assert!(page.contains("from your network"), "{page:.2000}");
    assert_eq!(sent().await - before, usize::try_from(CAP).unwrap(), "the refused sign-up sent nothing");
    let (status, _, _) = sign_up_from(CAP + 1, "198.51.100.9").await;
    assert_eq!(status, 303, "another network");
}
