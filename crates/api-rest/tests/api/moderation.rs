//! Moderation over HTTP, the command line and MCP, on SQLite and PostgreSQL: a person reports a
//! listing from its page; an admin hides it from the console and it is gone from every public read at
//! once although each was cached; its owner sees why; the console is a 404 to everyone else; a
//! suspended account's key, session and sign-in stop; blocked domains cannot be submitted or claimed.

use crate::drafts::key_for;
use crate::helpers::{TestApp, cli, spawn_app_configured};
use crate::mcp::rpc_as;
use crate::orders::owned_listing_in;
use crate::own::call;
use crate::pages::{Browser, hidden, sign_in, sign_in_with, sign_up};
use domain::listing::{Lifecycle, ListingStatus, Plan};
use domain::user::Scope::{AccountRead, ListingsWrite, OrdersWrite};
use serde_json::{Value, json};
use test_support::TestDatabase;

const ADMIN: &str = "admin@site.example";
const MAKER: &str = "maker@rockets.example";

struct World {
    app: TestApp,
    store: bootstrap::App,
    maker_key: String,
    listing_id: i64,
}

/// A served directory with the read cache on (as deployed), an admin account, and a maker's live
/// listing "Crypto Doubler" beside another, "Honest Rockets".
async fn world(db: TestDatabase) -> World {
    let maker_key = key_for(&db.url, MAKER, &[AccountRead, ListingsWrite, OrdersWrite]).await;
    let app = spawn_app_configured(db, false, |a| a.read_cache_secs = 600).await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    operations::accounts::create_user(&store, ADMIN, "correct horse 1", "", true).await.unwrap();
    let now = chrono::Utc::now();
    let week = domain::week::LaunchWeek::of(now);
    let live = || Lifecycle::from_parts(ListingStatus::Live, Plan::Paid, Some(week), Some(now));
    let listing_id = owned_listing_in(&store, "Crypto Doubler", MAKER, live()).await;
    owned_listing_in(&store, "Honest Rockets", MAKER, live()).await;
    World { app, store, maker_key, listing_id }
}

async fn status_of(app: &TestApp, path: &str) -> u16 {
    app.get(path).await.status().as_u16()
}

async fn text(app: &TestApp, path: &str) -> String {
    app.get(path).await.text().await.unwrap()
}

/// Every public read that shows the listing, each answered (and cached) once: true where it shows.
async fn public_reads(w: &World) -> Vec<(&'static str, bool)> {
    let app = &w.app;
    let search: Value = app.get("/api/v1/listings?q=crypto").await.json().await.unwrap();
    let category: Value = app.get("/api/v1/categories/developer-tools").await.json().await.unwrap();
    let mcp =
        rpc_as(app, None, "tools/call", json!({"name": "get_listing", "arguments": {"slug": "crypto-doubler"}})).await;
    let mcp_search =
        rpc_as(app, None, "tools/call", json!({"name": "search_listings", "arguments": {"q": "crypto"}})).await;
    vec![
        ("api profile", status_of(app, "/api/v1/listings/crypto-doubler").await == 200),
        ("api search", search["items"].as_array().unwrap().iter().any(|l| l["slug"] == "crypto-doubler")),
        ("api category", category.to_string().contains("crypto-doubler")),
        ("api badges", status_of(app, "/api/v1/listings/crypto-doubler/badges").await == 200),
        ("site page", status_of(app, "/listings/crypto-doubler").await == 200),
        ("site search", text(app, "/search?q=crypto").await.contains("/listings/crypto-doubler")),
        ("site category", text(app, "/categories/developer-tools").await.contains("/listings/crypto-doubler")),
        ("sitemap", text(app, "/sitemaps/listings-1.xml").await.contains("/listings/crypto-doubler")),
        ("mcp get_listing", mcp["result"]["isError"] == false),
        ("mcp search", mcp_search["result"]["structuredContent"].to_string().contains("crypto-doubler")),
        ("api this week", text(app, "/api/v1/launches/weeks/this").await.contains("crypto-doubler")),
        ("api compare", status_of(app, "/api/v1/compare?a=crypto-doubler&b=honest-rockets").await == 200),
        (
            "api alternatives",
            text(app, "/api/v1/listings/honest-rockets/alternatives").await.contains("crypto-doubler"),
        ),
        ("site this week", text(app, "/launches/this").await.contains("/listings/crypto-doubler")),
        ("feed", text(app, "/feeds/launches.atom").await.contains("/listings/crypto-doubler")),
    ]
}

/// Posts the report form of the listing page as `b`.
async fn report(b: &mut Browser<'_>, csrf: &str, reason: &str, note: String) -> (u16, String, Option<String>) {
    let form =
        vec![("csrf".to_owned(), csrf.to_owned()), ("reason".to_owned(), reason.to_owned()), ("note".to_owned(), note)];
    b.post_pairs("/listings/crypto-doubler/report", &form).await
}

async fn cli_out(w: &World, args: &[&str]) -> String {
    let out = cli(&w.app.db.url, args).await;
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

async fn a_reported_listing_is_hidden_from_the_console_and_gone_everywhere(db: TestDatabase) {
    let w = world(db).await;
    let app = &w.app;
    let edit = json!({"fields": {"tagline": "Double your coins overnight"}});
    let (s, body) = call(app, "PATCH", &format!("/me/listings/{}", w.listing_id), &w.maker_key, Some(edit)).await;
    assert_eq!(s, 200, "{body}");
    let shown = public_reads(&w).await;
    assert!(shown.iter().all(|(_, s)| *s), "shown and cached everywhere first: {shown:?}");
    assert!(text(app, "/api/v1/listings?q=honest").await.contains("honest-rockets"));

    // A signed-in person reports it from its page: once, with a bounded note.
    let mut rita = Browser::new(app);
    sign_up(&mut rita, "rita@people.example").await;
    let (_, page, _) = rita.get("/listings/crypto-doubler").await;
    assert!(page.contains(r#"action="#) && page.contains("/listings/crypto-doubler/report"), "the report form");
    assert!(!page.contains(r#"/admin">Console"#), "no console link for a person without the admin right");
    let csrf = hidden(&page, "csrf");
    let (s, body, _) = report(&mut rita, &csrf, "meh", String::new()).await;
    assert!(s == 400 && body.contains("reason"), "an unknown reason: {s} {body}");
    let (s, body, _) = report(&mut rita, &csrf, "scam", "é".repeat(1001)).await;
    assert!(s == 400 && body.contains("note"), "a note over 1 000 characters: {s}");
    let (s, body, _) = report(&mut rita, &csrf, "scam", "asks for your wallet's keys".into()).await;
    assert_eq!(s, 200, "{body}");
    assert!(body.contains("the site team will look"), "{body}");
    let (s, _, _) = report(&mut rita, &csrf, "spam", String::new()).await;
    assert_eq!(s, 409, "once per person and listing");
    let (s, _, to) = Browser::new(app).post("/listings/crypto-doubler/report", &[("reason", "spam")]).await;
    assert_eq!((s, to.as_deref()), (303, Some("/signin")), "signed out: sign in first");
    let open = cli_out(&w, &["admin", "reports", "--open"]).await;
    assert!(open.contains("crypto-doubler · 1 open report(s) · scam"), "{open}");
    assert!(open.contains("asks for your wallet's keys") && open.contains("rita@people.example"), "{open}");

    // The console is a 404 to everyone but an admin, exactly as an address that does not exist.
    let missing = (status_of(app, "/admin-no-such-page").await, text(app, "/admin-no-such-page").await);
    for path in ["/admin", "/admin/reports", "/admin/users", "/admin/blocklist", "/admin/audit"] {
        assert_eq!((status_of(app, path).await, text(app, path).await), missing, "{path} signed out");
        let (s, body, _) = rita.get(path).await;
        assert_eq!((s, body), missing.clone(), "{path} as a person without the admin right");
    }
    let (s, _, _) =
        rita.post("/admin/listings/crypto-doubler/hide", &[("csrf", csrf.as_str()), ("reason", "mine now")]).await;
    assert_eq!(s, 404, "a non-admin's post does nothing");
    assert_eq!(status_of(app, "/api/v1/listings/crypto-doubler").await, 200);

    // The admin sees the report in the queue and hides the listing from there.
    let mut admin = Browser::new(app);
    sign_in(&mut admin, ADMIN).await;
    let (s, console, _) = admin.get("/admin").await;
    assert_eq!(s, 200, "{console}");
    assert!(console.contains("Crypto Doubler") && console.contains("Scam or fraud"), "the queue: {console}");
    assert!(console.contains(r#"/admin">Console"#), "the header links the console for an admin");
    assert!(
        crate::pages::unescape(&console).contains(r#"tagline: "" → "Double your coins overnight""#),
        "the recent edit with its change: {console}"
    );
    let admin_csrf = hidden(&console, "csrf");
    let (s, _, _) = admin.post("/admin/listings/crypto-doubler/hide", &[("csrf", "forged"), ("reason", "x")]).await;
    assert_eq!(s, 403, "a forged form is refused");
    let (s, _, _) = admin.post("/admin/listings/crypto-doubler/hide", &[("csrf", &admin_csrf), ("reason", " ")]).await;
    assert_eq!(s, 400, "a reason is required");
    let why = "Scam: asks for wallet keys";
    let (s, done, _) =
        admin.post("/admin/listings/crypto-doubler/hide", &[("csrf", &admin_csrf), ("reason", why)]).await;
    assert_eq!(s, 200, "{done}");
    assert!(done.contains("is hidden"), "{done}");

    // Gone at once from every public read, although every one of them was cached.
    let gone = public_reads(&w).await;
    assert!(gone.iter().all(|(_, s)| !*s), "gone everywhere: {gone:?}");
    assert!(text(app, "/api/v1/listings?q=honest").await.contains("honest-rockets"), "the rest stays");
    let (s, _, _) = admin.post("/admin/listings/crypto-doubler/hide", &[("csrf", &admin_csrf), ("reason", why)]).await;
    assert_eq!(s, 409, "hidden already");

    // Its owner sees it hidden and why, and was emailed.
    let (s, mine) = call(app, "GET", &format!("/me/listings/{}", w.listing_id), &w.maker_key, None).await;
    assert_eq!(s, 200, "{mine}");
    assert_eq!((mine["status"].as_str(), mine["public"].as_bool()), (Some("hidden"), Some(false)));
    assert_eq!(mine["hidden"]["reason"], why);
    // While hidden it cannot reach people another way: no update to its followers, nothing bought for it.
    let update = json!({"title": "Now 3x", "body": "More doubling"});
    let (s, body) =
        call(app, "POST", &format!("/me/listings/{}/updates", w.listing_id), &w.maker_key, Some(update)).await;
    assert_eq!(s, 409, "{body}");
    let items = json!({"items": [{"product": "billboard", "listing_id": w.listing_id, "amount_cents": 5000}], "billing_country": "US"});
    let (s, body) = call(app, "POST", "/orders/quote", &w.maker_key, Some(items)).await;
    assert_eq!((s, body["error"]["details"][0]["field"].as_str()), (400, Some("items[0].listing_id")), "{body}");
    let mails = domain::ports::Outbox::outbox(w.store.store.as_ref(), Some(MAKER), 10).await.unwrap();
    assert!(mails.iter().any(|m| m.subject.contains("Crypto Doubler is hidden") && m.body.contains(why)), "{mails:?}");
    // The reports are closed; the audit log names who, what and why (console and command line).
    assert!(cli_out(&w, &["admin", "reports", "--open"]).await.contains("no open reports"));
    let audit = cli_out(&w, &["admin", "audit"]).await;
    assert!(audit.contains(&format!("{ADMIN} · hide_listing crypto-doubler · why: {why}")), "{audit}");
    let (_, page, _) = admin.get("/admin/audit").await;
    assert!(page.contains("hide_listing") && page.contains(ADMIN), "{page}");

    // Restoring brings it back as it was, everywhere.
    let (s, done, _) = admin.post("/admin/listings/crypto-doubler/restore", &[("csrf", &admin_csrf)]).await;
    assert!(s == 200 && done.contains("is back, live"), "{s} {done}");
    let back = public_reads(&w).await;
    assert!(back.iter().all(|(_, s)| *s), "back everywhere: {back:?}");
    let (_, mine) = call(app, "GET", &format!("/me/listings/{}", w.listing_id), &w.maker_key, None).await;
    assert_eq!((mine["status"].as_str(), &mine["hidden"]), (Some("live"), &Value::Null));

    // The command line hides and restores too.
    assert!(
        cli_out(&w, &["admin", "hide-listing", "crypto-doubler", "--reason", "again"])
            .await
            .contains("hid crypto-doubler")
    );
    // Another process: the serving instance drops its cached reads at its next look at the shared
    // change counter (every 250 ms).
    let started = std::time::Instant::now();
    while status_of(app, "/api/v1/listings/crypto-doubler").await != 404 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "the command line's hiding shows within a second"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let out = cli(&w.app.db.url, &["admin", "hide-listing", "no-such-listing", "--reason", "x"]).await;
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("listing not found"));
    assert!(cli_out(&w, &["admin", "restore-listing", "crypto-doubler"]).await.contains("restored crypto-doubler"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reported_listing_is_hidden_on_sqlite() {
    a_reported_listing_is_hidden_from_the_console_and_gone_everywhere(test_support::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reported_listing_is_hidden_on_postgres() {
    if let Some(db) = test_support::postgres().await {
        a_reported_listing_is_hidden_from_the_console_and_gone_everywhere(db).await;
    }
}

async fn a_suspended_account_stops_and_blocked_domains_are_refused(db: TestDatabase) {
    let w = world(db).await;
    let app = &w.app;
    let mut maker = Browser::new(app);
    sign_in(&mut maker, MAKER).await;
    assert_eq!(maker.get("/me/listings").await.0, 200, "signed in");
    let (s, _) = call(app, "GET", "/me/listings", &w.maker_key, None).await;
    assert_eq!(s, 200);

    // Suspended from the console: key, session and sign-in stop at once; the listings are hidden.
    let mut admin = Browser::new(app);
    sign_in(&mut admin, ADMIN).await;
    let (_, page, _) = admin.get(&format!("/admin/users?email={MAKER}")).await;
    assert!(page.contains("Active."), "{page}");
    let csrf = hidden(&page, "csrf");
    let why = "sock-puppet votes";
    let (s, done, _) = admin.post("/admin/users/suspend", &[("csrf", &csrf), ("email", MAKER), ("reason", why)]).await;
    assert_eq!(s, 200, "{done}");
    assert!(done.contains("2 listing(s) hidden"), "{done}");
    let (s, body) = call(app, "GET", "/me/listings", &w.maker_key, None).await;
    assert_eq!(s, 401, "the API key: {body}");
    let mcp = crate::mcp::post(app, Some(&w.maker_key), "tools/list", json!({})).await;
    assert_eq!(mcp.status(), 401, "MCP with the key");
    let (s, _, to) = maker.get("/me/listings").await;
    assert!(s == 303 && to.as_deref().is_some_and(|t| t.ends_with("/signin")), "the session ends: {s} {to:?}");
    let mut again = Browser::new(app);
    let (_, form, _) = again.get("/signin").await;
    let c = hidden(&form, "csrf");
    let (s, body, _) = again.post("/signin", &[("email", MAKER), ("password", "correct horse 1"), ("csrf", &c)]).await;
    assert_eq!(s, 403, "{body}");
    assert!(body.contains("suspended") && body.contains(why), "told why: {body}");
    let (_, form, _) = again.get("/signin").await;
    let c = hidden(&form, "csrf");
    let (s, body, _) = again.post("/signin", &[("email", MAKER), ("password", "wrong horse 1"), ("csrf", &c)]).await;
    assert!(s == 401 && !body.contains("suspended"), "a stranger without the password learns nothing: {s} {body}");
    assert_eq!(status_of(app, "/api/v1/listings/crypto-doubler").await, 404);
    assert_eq!(status_of(app, "/api/v1/listings/honest-rockets").await, 404);
    let (s, _, _) = admin.post("/admin/users/suspend", &[("csrf", &csrf), ("email", ADMIN), ("reason", "x")]).await;
    assert_eq!(s, 409, "an admin cannot be suspended");

    // Restored from the command line: everything is back.
    let out = cli_out(&w, &["admin", "restore-user", MAKER]).await;
    assert!(out.contains("2 listing(s) back"), "{out}");
    assert_eq!(call(app, "GET", "/me/listings", &w.maker_key, None).await.0, 200, "the key works again");
    assert_eq!(status_of(app, "/api/v1/listings/crypto-doubler").await, 200);
    assert!(sign_in_with(&mut again, MAKER, "correct horse 1").await.is_some());
    let audit = cli_out(&w, &["admin", "audit"]).await;
    assert!(audit.contains(&format!("{ADMIN} · suspend_user {MAKER} · why: {why}")), "{audit}");
    assert!(audit.contains(&format!("cli · restore_user {MAKER}")), "{audit}");

    // A blocked domain (and its subdomains) cannot be submitted or claimed.
    let (_, page, _) = admin.get("/admin/blocklist").await;
    let csrf = hidden(&page, "csrf");
    let (s, _, _) = admin
        .post("/admin/blocklist", &[("csrf", &csrf), ("domain", "https://www.X.example/"), ("reason", "spam")])
        .await;
    assert_eq!(s, 200);
    let (s, body) = call(app, "POST", "/drafts", &w.maker_key, Some(json!({"url": "https://shop.x.example/"}))).await;
    assert_eq!(s, 400, "{body}");
    assert_eq!(body["error"]["details"][0]["field"], "url");
    assert!(body.to_string().contains("blocked x.example"), "{body}");
    let tool = rpc_as(
        app,
        Some(&w.maker_key),
        "tools/call",
        json!({"name": "submit_listing", "arguments": {"url": "x.example"}}),
    )
    .await;
    assert_eq!(tool["result"]["isError"], true, "{tool}");
    let rita = key_for(&w.app.db.url, "rita@people.example", &[AccountRead, ListingsWrite]).await;
    let (s, body) = call(app, "POST", "/claims", &rita, Some(json!({"slug": "crypto-doubler", "method": "dns"}))).await;
    assert_eq!((s, body["error"]["details"][0]["field"].as_str()), (400, Some("slug")), "{body}");
    let (s, _, _) = admin.post("/admin/blocklist/remove", &[("csrf", &csrf), ("domain", "x.example")]).await;
    assert_eq!(s, 200);
    let (s, body) = call(app, "POST", "/claims", &rita, Some(json!({"slug": "crypto-doubler", "method": "dns"}))).await;
    assert_eq!(s, 201, "unblocked: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspended_account_stops_on_sqlite() {
    a_suspended_account_stops_and_blocked_domains_are_refused(test_support::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspended_account_stops_on_postgres() {
    if let Some(db) = test_support::postgres().await {
        a_suspended_account_stops_and_blocked_domains_are_refused(db).await;
    }
}
