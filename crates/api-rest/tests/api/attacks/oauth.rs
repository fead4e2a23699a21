//! OAuth: an authorization endpoint that bounces strangers to any registered URI, and access a
//! person cannot see or take back.

use crate::helpers::{TestApp, spawn_app};
use crate::oauth::{REDIRECT, VERIFIER, authorize_path, query_param, request_fields, token};
use crate::pages::{Browser, hidden, sign_up};
use serde_json::{Value, json};

pub(crate) async fn register(app: &TestApp, redirect: &str, name: &str) -> String {
    let r = app
        .client
        .post(format!("{}/oauth/register", app.base))
        .json(&json!({"redirect_uris": [redirect], "client_name": name}));
    let v: Value = r.send().await.unwrap().json().await.unwrap();
    v["client_id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_authorization_error_does_not_send_a_stranger_to_a_registered_uri() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    // Anyone may register a client whose redirect URI is their own site …
    let evil = register(&app, "https://evil.example/cb", "Totally Legit").await;
    let mut b = Browser::new(&app);
    // … and hand out an authorization link with an error in it: nobody signed in is sent there.
    for bad in [
        authorize_path(&evil, "s", "admin:all", &format!("{}/mcp", app.base))
            .replace("127.0.0.1%3A33333%2Fcallback", "evil.example%2Fcb"),
        authorize_path(&evil, "s", "account:read", &format!("{}/mcp", app.base))
            .replace("127.0.0.1%3A33333%2Fcallback", "evil.example%2Fcb")
            .replace("code_challenge_method=S256", "code_challenge_method=plain"),
    ] {
        let (st, page, loc) = b.get(&bad.replace("http%3A%2F%2Fevil", "https%3A%2F%2Fevil")).await;
        assert_eq!((st, loc), (400, None), "{page}");
        assert!(page.contains("cannot be signed in"), "{page}");
    }
}

/// A person who signed up in `b` allows a registered client; its token answer.
pub(crate) async fn allow(app: &TestApp, b: &mut Browser<'_>, client_id: &str) -> Value {
    let path = authorize_path(client_id, "st", "account:read", &format!("{}/mcp", app.base));
    let (st, consent, _) = b.get(&path).await;
    assert_eq!(st, 200, "{consent}");
    let fields = request_fields(&consent);
    let csrf = hidden(&consent, "csrf");
    let mut form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    form.extend([("decision", "allow"), ("csrf", csrf.as_str())]);
    let (_, _, loc) = b.post("/oauth/authorize", &form).await;
    let code = query_param(&loc.unwrap(), "code").unwrap();
    let exchange = [
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", REDIRECT),
        ("client_id", client_id),
        ("code_verifier", VERIFIER),
    ];
    let (st, t) = token(app, &exchange).await;
    assert_eq!(st, 200, "{t}");
    t
}

#[tokio::test]
async fn a_person_sees_the_applications_they_allowed_and_revoking_one_ends_it_at_once() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let helper = register(&app, REDIRECT, "Helpful Assistant").await;
    let other = register(&app, REDIRECT, "Other Tool").await;
    let mut ann = Browser::new(&app);
    sign_up(&mut ann, "ann@acme.example").await;
    let t = allow(&app, &mut ann, &helper).await;
    allow(&app, &mut ann, &other).await;
    let refresh = t["refresh_token"].as_str().unwrap().to_owned();
    let (st, page, _) = ann.get("/account/apps").await;
    assert_eq!(st, 200);
    assert!(page.contains("Helpful Assistant") && page.contains("Other Tool"), "{page}");

    // Someone else cannot see or revoke Ann's grants.
    let mut bob = Browser::new(&app);
    sign_up(&mut bob, "bob@acme.example").await;
    let (_, bobs, _) = bob.get("/account/apps").await;
    assert!(!bobs.contains("Helpful Assistant"), "{bobs}");
    let families: Vec<String> =
        page.split("/account/apps/").skip(1).map(|s| s.split('/').next().unwrap().to_owned()).collect();
    assert_eq!(families.len(), 2, "{page}");
    let (st, _, _) =
        bob.post(&format!("/account/apps/{}/revoke", families[0]), &[("csrf", &hidden(&bobs, "csrf"))]).await;
    assert_eq!(st, 404);

    // Ann revokes the helper: its refresh token stops working at once; the other tool keeps its access.
    let helper_family = page
        .split("<tr>")
        .find(|row| row.contains("Helpful Assistant"))
        .and_then(|row| row.split("/account/apps/").nth(1))
        .map(|s| s.split('/').next().unwrap().to_owned())
        .unwrap();
    let (st, after, _) =
        ann.post(&format!("/account/apps/{helper_family}/revoke"), &[("csrf", &hidden(&page, "csrf"))]).await;
    assert_eq!(st, 200, "{after}");
    assert!(!after.contains("Helpful Assistant") && after.contains("Other Tool"), "{after}");
    let (st, e) =
        token(&app, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &helper)]).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")));
}

#[tokio::test]
async fn sign_out_everywhere_ends_every_session_of_the_account() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let mut laptop = Browser::new(&app);
    sign_up(&mut laptop, "ann@acme.example").await;
    let mut phone = Browser::new(&app);
    crate::pages::sign_in_with(&mut phone, "ann@acme.example", "correct horse 9").await;
    assert_eq!(phone.get("/account/apps").await.0, 200);
    let (_, page, _) = laptop.get("/account/apps").await;
    let (st, _, loc) = laptop.post("/account/signout-everywhere", &[("csrf", &hidden(&page, "csrf"))]).await;
    assert_eq!((st, loc.as_deref()), (303, Some("/signin")));
    let (st, _, loc) = phone.get("/account/apps").await;
    assert_eq!((st, loc.as_deref()), (303, Some("/signin")), "the other device is signed out too");
    assert_eq!(laptop.get("/account/apps").await.0, 303);
}

/// Registration is open, so one network registers a bounded number of clients an hour: a script's
/// thousands were each a row kept for ever. Refused metadata counts nothing; the refusal is OAuth's
/// JSON naming the quota, with Retry-After; another network is not held back. Before, all were 201.
#[tokio::test]
async fn one_network_registers_a_bounded_number_of_clients_an_hour() {
    use domain::oauth::REGISTRATIONS_PER_NETWORK_PER_HOUR as CAP;
    let app = crate::helpers::spawn_app_configured(test_support::sqlite(), false, |a| {
        a.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await;
    app.wait_ready().await;
    let send = |from: String, body: Value| {
        app.client.post(format!("{}/oauth/register", app.base)).header("x-forwarded-for", from).json(&body).send()
    };
    let good = json!({"redirect_uris": ["https://tool.example/cb"], "client_name": "Tool"});
    for i in 0..5 {
        let r =
            send(format!("2001:db8:0:9::f{i}"), json!({"redirect_uris": ["http://evil.example/cb"]})).await.unwrap();
        assert_eq!(r.status(), 400, "refused metadata");
    }
    for i in 0..CAP {
        let r = send(format!("2001:db8:0:9::{:x}", i + 1), good.clone()).await.unwrap();
        assert_eq!(r.status(), 201, "registration {}", i + 1);
    }
    let over = send("2001:db8:0:9::ffff".into(), good.clone()).await.unwrap();
    assert_eq!(over.status(), 429);
    let wait: u64 = over.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=3600).contains(&wait), "Retry-After: {wait}");
    let body: Value = over.json().await.unwrap();
    assert_eq!(body["error"], "registration_quota", "{body}");
    assert!(body["error_description"].as_str().unwrap().contains(&CAP.to_string()), "{body}");
    let elsewhere = send("198.51.100.7".into(), good).await.unwrap();
    assert_eq!(elsewhere.status(), 201, "another network");
}
