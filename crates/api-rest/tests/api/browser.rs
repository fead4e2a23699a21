//! A person in headless Chromium (driven over W3C WebDriver by chromedriver) signs up, makes an API
//! key on the account page and uses it. Needs `chromium` and `chromium-driver` (Debian); `.ci/run`
//! installs them. Without them the test says so and passes only outside CI (CI=true fails it).

use crate::helpers::spawn_app_configured;
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

struct Driver {
    child: Child,
    base: String,
    session: String,
    http: reqwest::Client,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    async fn start() -> Option<Self> {
        let (driver, browser) = ("/usr/bin/chromedriver", "/usr/bin/chromium");
        if !std::path::Path::new(driver).exists() || !std::path::Path::new(browser).exists() {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "chromium and chromium-driver are required in CI"
            );
            eprintln!("skipping: install chromium and chromium-driver for the browser test");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        for _ in 0..100 {
            if http.get(format!("{base}/status")).send().await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": browser,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"]
        }}}});
        let r: Value = http.post(format!("{base}/session")).json(&caps).send().await.unwrap().json().await.unwrap();
        let session = r["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {r}")).to_owned();
        let mut d = Self { child, base, session, http };
        d.base = format!("{}/session/{}", d.base, d.session);
        Some(d)
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if !body.is_null() {
            req = req.json(&body);
        }
        let r = req.send().await.unwrap();
        let v: Value = r.json().await.unwrap();
        assert!(v["value"].get("error").is_none(), "{path}: {v}");
        v["value"].clone()
    }

    async fn go(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", json!({"url": url})).await;
    }

    /// The element matching `css`, waiting up to 10 s for it (a click's navigation may still be
    /// loading the next page).
    async fn find(&self, css: &str) -> String {
        let started = std::time::Instant::now();
        loop {
            let r = self
                .http
                .post(format!("{}/element", self.base))
                .json(&json!({"using": "css selector", "value": css}))
                .send()
                .await
                .unwrap();
            let v: Value = r.json().await.unwrap();
            if let Some(id) = v["value"][ELEMENT].as_str() {
                return id.to_owned();
            }
            assert!(started.elapsed() < Duration::from_secs(10), "{css} never appeared: {v}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn type_into(&self, css: &str, text: &str) {
        let e = self.find(css).await;
        self.cmd(reqwest::Method::POST, &format!("/element/{e}/value"), json!({"text": text})).await;
    }

    /// Clicks the element matching `css`; returns the element's reference.
    async fn click(&self, css: &str) -> String {
        let e = self.find(css).await;
        self.cmd(reqwest::Method::POST, &format!("/element/{e}/click"), json!({})).await;
        e
    }

    /// Clicks the element matching `css` (a form's button) and waits up to 10 s for the page it was
    /// on to be left: for the clicked element to be stale. What the next page shows may already be
    /// on this one (the draft page's blank rows, an open section), so waiting for it proves nothing.
    async fn submit(&self, css: &str) {
        let e = self.click(css).await;
        let started = std::time::Instant::now();
        loop {
            let r = self.http.get(format!("{}/element/{e}/name", self.base)).send().await.unwrap();
            let v: Value = r.json().await.unwrap();
            if v["value"].get("error").is_some() {
                return;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "{css}: the page was never left");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn text(&self, css: &str) -> String {
        let e = self.find(css).await;
        self.cmd(reqwest::Method::GET, &format!("/element/{e}/text"), Value::Null).await.as_str().unwrap().to_owned()
    }

    /// Waits up to 10 s for the element's text to satisfy `ok` (a form post's redirect may still be
    /// loading, so a stale element is retried); returns the text.
    async fn wait_text(&self, css: &str, ok: impl Fn(&str) -> bool) -> String {
        let started = std::time::Instant::now();
        loop {
            let e = self.find(css).await;
            let r = self.http.get(format!("{}/element/{e}/text", self.base)).send().await.unwrap();
            let v: Value = r.json().await.unwrap();
            let text = v["value"].as_str().unwrap_or_default().to_owned();
            if v["value"].get("error").is_none() && ok(&text) {
                return text;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "{css}: never as expected, last {v}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn path(&self) -> String {
        let url = self.cmd(reqwest::Method::GET, "/url", Value::Null).await;
        reqwest::Url::parse(url.as_str().unwrap()).unwrap().path().to_owned()
    }

    /// Signs up on `/signup` with `email` as a person does: the form, "check your email", signing in
    /// (the account page it lands on), and the emailed link that confirms the address.
    async fn sign_up(&self, app: &crate::helpers::TestApp, email: &str) {
        let base = &app.base;
        self.go(&format!("{base}/signup")).await;
        self.type_into("input[name=email]", email).await;
        self.type_into("input[name=password]", "correct horse battery").await;
        self.click("button[type=submit]").await;
        let started = std::time::Instant::now();
        while self.path().await != "/signup/sent" {
            assert!(started.elapsed() < Duration::from_secs(10), "sign-up never said to check the email");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.go(&format!("{base}/signin")).await;
        self.type_into("input[name=email]", email).await;
        self.type_into("input[name=password]", "correct horse battery").await;
        self.click("button[type=submit]").await;
        self.find("input[name=scope_listings_write]").await;
        let link = crate::pages::emailed_link(app, email, "/verify-email/").await;
        self.go(&format!("{base}{link}")).await;
        self.find("main h1").await;
        self.go(&format!("{base}/account/api-keys")).await;
        self.find("input[name=scope_listings_write]").await;
    }

    /// Signs out on `/signout`, as a person does: its one button, then wait until the browser has left
    /// the page (the sign-out answered).
    async fn sign_out(&self, base: &str) {
        self.go(&format!("{base}/signout")).await;
        self.click("#signout").await;
        let started = std::time::Instant::now();
        while self.path().await == "/signout" {
            assert!(started.elapsed() < Duration::from_secs(10), "sign-out never answered");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn screenshot(&self, name: &str) {
        let png = self.cmd(reqwest::Method::GET, "/screenshot", Value::Null).await;
        let bytes = base64_decode(png.as_str().unwrap());
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=').collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, c)| acc | (u32::from(val(*c)) << (18 - 6 * i)));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[tokio::test]
async fn a_person_signs_up_makes_a_key_and_uses_it_in_chromium() {
    let Some(d) = Driver::start().await else { return };
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;

    d.sign_up(&app, "grace@acme.example").await;
    assert_eq!(d.path().await, "/account/api-keys");
    assert!(d.text("header").await.contains("grace@acme.example"));

    d.type_into("input[name=name]", "my assistant").await;
    d.click("input[name=scope_listings_write]").await;
    d.click("main form[action$='/account/api-keys'] button[type=submit]").await;
    let key = d.text("#new-key").await;
    assert!(key.starts_with("ldk_") && key.len() == 42, "{key}");
    d.screenshot("account-api-keys.png").await;

    let me: Value = app
        .client
        .get(format!("{}/api/v1/me", app.base))
        .header("Authorization", format!("Bearer {key}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["user"]["email"], "grace@acme.example");
    assert_eq!(me["access"]["scopes"], json!(["account:read", "listings:write"]));
    let rows = d.text("table tbody").await;
    assert!(rows.contains("my assistant") && rows.contains(&key[..12]) && !rows.contains(&key[12..]));
    let _ = d.cmd(reqwest::Method::DELETE, "", Value::Null).await;
}

#[tokio::test]
async fn a_person_pays_an_order_on_the_checkout_page_in_chromium() {
    use domain::user::Scope::{AccountRead, ListingsWrite, OrdersWrite};
    let Some(d) = Driver::start().await else { return };
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.read_cache_secs = 0).await;
    app.wait_ready().await;
    d.sign_up(&app, "grace@acme.example").await;

    // Her assistant orders a launch with her API key and hands her the link.
    let key =
        crate::drafts::key_for(&app.db.url, "grace@acme.example", &[AccountRead, ListingsWrite, OrdersWrite]).await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let id = crate::orders::owned_listing(&store, "Graces Rocket", "grace@acme.example").await;
    let (st, order) = crate::own::call(
        &app,
        "POST",
        "/orders/checkout",
        &key,
        Some(json!({"items": [{"product": "launch", "listing_id": id}]})),
    )
    .await;
    assert_eq!(st, 201, "{order}");
    let number = order["number"].as_str().unwrap().to_owned();

    d.go(order["checkout_url"].as_str().unwrap()).await;
    assert!(d.text("main").await.contains(&number));
    assert!(d.text("main").await.contains("Enter your billing country"));
    d.type_into("input[name=name]", "Grace Rockets GmbH").await;
    d.type_into("input[name=country]", "DE").await;
    d.click("form[action$='/billing'] button[type=submit]").await;
    let pay = d.text("#pay").await;
    assert_eq!(pay, "Pay $58.31 (test payment)", "4900 + 19 % VAT");
    assert!(d.text(".sandbox").await.contains("No card is asked for"));
    d.screenshot("checkout.png").await;
    d.click("#pay").await;
    let done = d.text("p.ok").await;
    assert!(done.starts_with("Paid on"), "{done}");
    d.screenshot("checkout-paid.png").await;

    let (_, paid) = crate::own::call(&app, "GET", &format!("/orders/{number}"), &key, None).await;
    assert_eq!((paid["status"].as_str(), paid["totals"]["gross_cents"].as_i64()), (Some("paid"), Some(5831)), "{paid}");
    let (st, _) = crate::own::call(&app, "GET", "/listings/graces-rocket", &key, None).await;
    assert_eq!(st, 200, "the listing is live");
    let _ = d.cmd(reqwest::Method::DELETE, "", Value::Null).await;
}

/// A person's path from sign-up to a vote that moves the weekly board: the home page lists this
/// week's launches, the listing page takes the vote (and the follow) as plain forms, the board shows
/// the listing with the vote, and taking the vote back takes it off. Screenshots of the home, a
/// listing and the board are left in the test's target directory for review.
#[tokio::test]
async fn a_person_votes_and_the_weekly_board_moves_in_chromium() {
    let Some(d) = Driver::start().await else { return };
    let app = spawn_app_configured(test_support::sqlite(), true, |a| a.read_cache_secs = 0).await;
    app.wait_ready().await;
    let get = |path: String| {
        let c = app.client.clone();
        let url = format!("{}/api/v1{path}", app.base);
        async move { c.get(url).send().await.unwrap().json::<Value>().await.unwrap() }
    };
    // The weekly board, every page: (slug, rank, votes this week).
    let weekly = || async {
        let mut rows = Vec::new();
        for page in 1..=10 {
            let b = get(format!("/leaderboards/community-weekly?per_page=100&page={page}")).await;
            let items = b["items"].as_array().unwrap().clone();
            rows.extend(items.iter().map(|i| {
                let slug = i["listing"]["slug"].as_str().unwrap().to_owned();
                (slug, i["rank"].as_i64().unwrap(), i["metric"]["value"].as_i64().unwrap())
            }));
            if items.len() < 100 {
                break;
            }
        }
        rows
    };
    // A live listing nobody voted for this week: not on the weekly board yet.
    let ranked = weekly().await;
    let all = get("/listings?per_page=100&sort=newest".into()).await;
    let pick = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| !ranked.iter().any(|(s, _, _)| s == l["slug"].as_str().unwrap()))
        .expect("a live listing without votes this week")
        .clone();
    let (slug, name) = (pick["slug"].as_str().unwrap().to_owned(), pick["name"].as_str().unwrap().to_owned());
    let before = pick["votes"].as_i64().unwrap();
    let votes = |n: i64| if n == 1 { "1 vote".to_owned() } else { format!("{n} votes") };

    d.go(&format!("{}/", app.base)).await;
    assert!(d.text("main").await.contains("This week"));
    d.screenshot("home-signed-out.png").await;
    d.sign_up(&app, "ada@people.example").await;
    d.go(&format!("{}/", app.base)).await;
    d.screenshot("home.png").await;

    d.go(&format!("{}/listings/{slug}", app.base)).await;
    assert_eq!(d.text("h1").await, name);
    assert_eq!(d.text("#votes").await, votes(before));
    d.click("#vote").await;
    let want = votes(before + 1);
    d.wait_text("#votes", |t| t == want).await;
    d.wait_text("#vote", |t| t.starts_with("Voted")).await;
    d.click("#follow").await;
    d.wait_text("#follow", |t| t.starts_with("Following")).await;
    d.screenshot("listing.png").await;

    // The weekly board now ranks the listing with this one vote, in the API and on its page.
    let now_ranked = weekly().await;
    let (_, rank, n) = now_ranked.iter().find(|(s, _, _)| *s == slug).cloned().expect("the listing is on the board");
    assert_eq!(n, 1, "one vote this week");
    assert_eq!(now_ranked.len(), ranked.len() + 1);
    d.go(&format!("{}/leaderboards/community-weekly", app.base)).await;
    d.screenshot("board-weekly.png").await;
    d.go(&format!("{}/leaderboards/community-weekly?page={}", app.base, (rank - 1) / 100 + 1)).await;
    assert!(d.text("main").await.contains(&name), "the board's page shows {name} at #{rank}");
    d.go(&format!("{}/leaderboards/billboard", app.base)).await;
    assert!(d.text(".paid").await.starts_with("Paid."), "the billboard says it is paid");
    d.screenshot("board-billboard.png").await;
    // The other pages a person browses, for review.
    let post = get("/blog".into()).await["items"][0]["slug"].as_str().unwrap().to_owned();
    for (path, shot) in [
        ("/launches/this".to_owned(), "calendar.png"),
        ("/categories/developer-tools".to_owned(), "category.png"),
        (format!("/blog/{post}"), "blog-post.png"),
        ("/awards".to_owned(), "awards.png"),
    ] {
        d.go(&format!("{}{path}", app.base)).await;
        assert!(!d.text("h1").await.is_empty(), "{path}");
        d.screenshot(shot).await;
    }

    // Undo: the vote comes off the listing and the board.
    d.go(&format!("{}/listings/{slug}", app.base)).await;
    d.click("#vote").await;
    let want = votes(before);
    d.wait_text("#votes", |t| t == want).await;
    assert!(!weekly().await.iter().any(|(s, _, _)| *s == slug), "off the board again");
    let _ = d.cmd(reqwest::Method::DELETE, "", Value::Null).await;
}

/// A maker reviews the draft of their site in Chromium: the values with their evidence, then adds
/// an FAQ and a milestone with the page's own forms and finds them saved. A screenshot of the draft
/// page is left for review.
#[tokio::test]
async fn a_maker_edits_a_draft_in_chromium() {
    use domain::user::Scope::{AccountRead, ListingsWrite};
    let Some(d) = Driver::start().await else { return };
    let (site, app) = crate::site::app_reading_acme().await;
    d.sign_up(&app, "ann@acme.example").await;
    let key = crate::drafts::key_for(&app.db.url, "ann@acme.example", &[AccountRead, ListingsWrite]).await;
    let id = crate::site::ready_draft(&app, &key, &site.url()).await;

    d.go(&format!("{}/me/drafts", app.base)).await;
    d.click(&format!("a[href$='/me/drafts/{id}']")).await;
    assert!(d.text("h1").await.starts_with("Draft:"));
    assert!(d.text("table.draft").await.contains("source"), "values carry their evidence");
    d.screenshot("draft.png").await;

    let draft = crate::own::call(&app, "GET", &format!("/drafts/{id}"), &key, None).await.1;
    let n = draft["faqs"].as_array().unwrap().len();
    if draft["faqs"].as_array().unwrap().is_empty() {
        d.click("#faqs summary").await;
    }
    d.type_into(&format!("#faqs input[name='question.{n}']"), "Can my cat ride alone?").await;
    d.type_into(&format!("#faqs textarea[name='answer.{n}']"), "Yes, with a helmet.").await;
    d.submit("#faqs button[type=submit]").await;
    d.click("#milestones summary").await;
    d.type_into("#milestones input[name='date.0']", "03/01/2026").await;
    d.type_into("#milestones input[name='title.0']", "First cat in orbit").await;
    d.submit("#milestones button[type=submit]").await;
    d.find("#milestones details[open]").await;
    d.screenshot("draft-sections.png").await;

    let draft = crate::own::call(&app, "GET", &format!("/drafts/{id}"), &key, None).await.1;
    assert_eq!(draft["faqs"][n]["question"], "Can my cat ride alone?", "{draft}");
    assert_eq!(draft["faqs"][n]["answer"], "Yes, with a helmet.");
    assert_eq!(
        (draft["milestones"][0]["date"].as_str(), draft["milestones"][0]["title"].as_str()),
        (Some("2026-03-01"), Some("First cat in orbit"))
    );
    let _ = d.cmd(reqwest::Method::DELETE, "", Value::Null).await;
}

/// A person who forgot their password follows the sign-in page's link, asks for a link, opens the
/// emailed link and sets a new password: signed in at once, and the new password signs in after.
/// In a real browser, so the form's SameSite=Strict double-submit cookie, set by the page the link
/// opens, is sent back with the form.
#[tokio::test]
async fn a_person_who_forgot_their_password_sets_a_new_one_in_chromium() {
    let Some(d) = Driver::start().await else { return };
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let base = &app.base;
    d.sign_up(&app, "lin@acme.example").await;
    d.sign_out(base).await;
    d.go(&format!("{base}/signin")).await;
    d.click("a[href$='/forgot-password']").await;
    d.type_into("input[name=email]", "lin@acme.example").await;
    d.click("main form button[type=submit]").await;
    let sent = d.wait_text("main h1", |t| t.contains("Check your email")).await;
    assert_eq!(d.path().await, "/forgot-password/sent", "{sent}");
    let link = crate::pages::emailed_link(&app, "lin@acme.example", "/reset-password/").await;
    d.go(&format!("{base}{link}")).await;
    d.type_into("input[name=password]", "a new horse battery").await;
    d.screenshot("reset-password.png").await;
    d.click("main form button[type=submit]").await;
    d.find("input[name=scope_listings_write]").await;
    assert_eq!(d.path().await, "/account/api-keys");
    assert!(d.text("header").await.contains("lin@acme.example"), "signed in by the reset");

    d.sign_out(base).await;
    d.go(&format!("{base}/signin")).await;
    d.type_into("input[name=email]", "lin@acme.example").await;
    d.type_into("input[name=password]", "a new horse battery").await;
    d.click("button[type=submit]").await;
    d.find("input[name=scope_listings_write]").await;
    assert_eq!(d.path().await, "/account/api-keys", "the new password signs in");
    let _ = d.cmd(reqwest::Method::DELETE, "", Value::Null).await;
}

/// A person types in the header's search box, finds a listing among the results and opens it.
#[tokio::test]
async fn a_person_searches_and_finds_a_listing_in_chromium() {
    let Some(d) = Driver::start().await else { return };
    let app = crate::helpers::spawn_app(true).await;
    app.wait_ready().await;
    let first: Value = app.get("/api/v1/listings?per_page=1").await.json().await.unwrap();
    let (name, slug) = (first["items"][0]["name"].as_str().unwrap(), first["items"][0]["slug"].as_str().unwrap());
    d.go(&format!("{}/", app.base)).await;
    // The Enter key submits the search form.
    d.type_into("form.search input[name=q]", &format!("{name}\u{E007}")).await;
    let heading = d.wait_text("#results", |t| t.contains("match")).await;
    assert!(heading.contains(name) && heading.contains("match"), "{heading}");
    d.screenshot("search.png").await;
    d.click(&format!("ol.items a[href$='/listings/{slug}']")).await;
    let title = d.wait_text("article.listing h1", |t| !t.is_empty()).await;
    assert_eq!(title, name);
    let _ = d.cmd(reqwest::Method::DELETE, "", Value::Null).await;
}

/// A maker signs up, submits their website on the site, watches the draft become ready (the page
/// refreshes itself), saves it, chooses the free launch and sees the badge code to paste.
#[tokio::test]
async fn a_maker_submits_a_site_and_launches_it_for_free_in_chromium() {
    let Some(d) = Driver::start().await else { return };
    let (site, app) = crate::site::app_reading_acme().await;
    d.sign_up(&app, "maker@acme.example").await;
    d.go(&format!("{}/me/drafts", app.base)).await;
    d.type_into("#submit-url", &site.url()).await;
    d.click("#submit-site").await;
    // The draft page reloads itself while the site is read; the save button appears once it is ready.
    d.find("#submit-draft").await;
    assert!(d.text("h1").await.starts_with("Draft:"));
    d.screenshot("journey-draft-ready.png").await;
    d.click("#submit-draft").await;
    d.wait_text("main h1", |t| t == "Your listings").await;
    d.click("table a[href*='/me/listings/']").await;
    d.find("#choose-free").await;
    d.screenshot("journey-listing-saved.png").await;
    d.click("#choose-free").await;
    let status = d.wait_text("#listing-status", |t| t == "awaiting_badge").await;
    assert_eq!(status, "awaiting_badge");
    d.find("#badge-code").await;
    assert!(d.text("#next-step").await.to_lowercase().contains("badge"), "the next step is the badge");
    d.screenshot("journey-free-launch-badge.png").await;
    let _ = d.cmd(reqwest::Method::DELETE, "", Value::Null).await;
}

/// The moderation walk in Chromium: a person reports a listing from its page; an admin finds it in
/// the console's queue and hides it; it is gone from search, its page, the sitemap and MCP; its owner
/// sees why on their listing's page. Screenshots of the console and the owner's page are left for
/// review.
async fn an_admin_hides_a_reported_listing(db: test_support::TestDatabase) {
    let Some(d) = Driver::start().await else { return };
    use domain::listing::{Lifecycle, ListingStatus, Plan};
    use domain::user::Scope::AccountRead;
    crate::drafts::key_for(&db.url, "maker@rockets.example", &[AccountRead]).await;
    let app = spawn_app_configured(db, false, |a| a.read_cache_secs = 600).await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    operations::accounts::create_user(&store, "admin@site.example", "correct horse 1", "", true).await.unwrap();
    let live = Lifecycle::from_parts(ListingStatus::Live, Plan::Paid, None, Some(chrono::Utc::now()));
    let id = crate::orders::owned_listing_in(&store, "Crypto Doubler", "maker@rockets.example", live).await;
    let base = app.base.clone();
    let source = || async { d.cmd(reqwest::Method::GET, "/source", Value::Null).await.as_str().unwrap().to_owned() };
    let sign_in_as = |email: &'static str| {
        let (d, base) = (&d, base.clone());
        async move {
            d.cmd(reqwest::Method::DELETE, "/cookie", Value::Null).await;
            d.go(&format!("{base}/signin")).await;
            d.type_into("input[name=email]", email).await;
            d.type_into("input[name=password]", "correct horse 1").await;
            d.click("button[type=submit]").await;
            d.find("input[name=scope_listings_write]").await;
        }
    };
    d.go(&format!("{base}/sitemaps/listings-1.xml")).await;
    assert!(source().await.contains("/listings/crypto-doubler"), "in the sitemap (and cached) first");
    d.go(&format!("{base}/search?q=crypto")).await;
    assert!(d.text("main").await.contains("Crypto Doubler"), "found (and cached) first");

    // A person reports it from its page.
    d.sign_up(&app, "rita@people.example").await;
    d.go(&format!("{base}/listings/crypto-doubler")).await;
    d.click("#report summary").await;
    d.click("select[name=reason] option[value=scam]").await;
    d.type_into("textarea[name=note]", "Asks for your wallet's recovery words.").await;
    d.click("#report button").await;
    d.wait_text("#reported", |t| t.contains("the site team will look")).await;

    // The admin hides it from the console's queue.
    sign_in_as("admin@site.example").await;
    d.click("header a[href$='/admin']").await;
    let queue = d.text("#queue").await;
    assert!(queue.contains("Crypto Doubler") && queue.contains("Scam or fraud"), "{queue}");
    d.screenshot("console.png").await;
    d.type_into("#queue input[name=reason]", "Scam: asks for wallet recovery words").await;
    d.click("#queue button").await;
    d.wait_text("#outcome", |t| t.contains("is hidden")).await;
    d.go(&format!("{base}/admin")).await;
    assert!(d.text("#no-reports").await.contains("No open reports"), "the report is closed");

    // Gone from search, its page, the sitemap and MCP.
    d.go(&format!("{base}/search?q=crypto")).await;
    assert!(!d.text("main").await.contains("Crypto Doubler"), "not found any more");
    d.go(&format!("{base}/listings/crypto-doubler")).await;
    assert!(d.text("main").await.contains("No live listing"), "its page is a 404");
    // (The sitemap may be kept 10 minutes by a browser or proxy, as its Cache-Control says; ask anew.)
    d.go(&format!("{base}/sitemaps/listings-1.xml?after-hiding")).await;
    assert!(!source().await.contains("/listings/crypto-doubler"), "out of the sitemap");
    let mcp = crate::mcp::rpc_as(
        &app,
        None,
        "tools/call",
        json!({"name": "get_listing", "arguments": {"slug": "crypto-doubler"}}),
    )
    .await;
    assert_eq!(mcp["result"]["isError"], true, "{mcp}");

    // Its owner sees why.
    sign_in_as("maker@rockets.example").await;
    d.go(&format!("{base}/me/listings/{id}")).await;
    assert_eq!(d.text("#listing-status").await, "hidden");
    assert!(d.text("#next-step").await.contains("Scam: asks for wallet recovery words"));
    d.screenshot("hidden-listing-owner.png").await;
    let _ = d.cmd(reqwest::Method::DELETE, "", Value::Null).await;
}

#[tokio::test]
async fn an_admin_hides_a_reported_listing_in_chromium_on_sqlite() {
    an_admin_hides_a_reported_listing(test_support::sqlite()).await;
}

#[tokio::test]
async fn an_admin_hides_a_reported_listing_in_chromium_on_postgres() {
    if let Some(db) = test_support::postgres().await {
        an_admin_hides_a_reported_listing(db).await;
    }
}
