//! The site's pages and its vote and follow forms over HTTP: who may vote, the CSRF check, undo, one
//! vote per person, and that the API has no way to vote.

use crate::helpers::spawn_app_configured;
use crate::pages::{Browser, hidden, sign_up};
use domain::listing::{Lifecycle, ListingStatus, Plan};

fn votes_shown(html: &str) -> String {
    let start = html.find(r#"<span id="votes">"#).expect("the vote count") + r#"<span id="votes">"#.len();
    html[start..].split('<').next().unwrap().to_owned()
}

#[tokio::test]
async fn people_vote_once_undo_and_never_for_their_own_listing() {
    // With the read cache on, as deployed: the listing page is cached for everyone but each visitor's
    // buttons, and a vote or follow empties it, so every step below sees its own change at once.
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let mut maker = Browser::new(&app);
    sign_up(&mut maker, "maker@rockets.example").await;
    let live = Lifecycle::from_parts(ListingStatus::Live, Plan::Paid, None, Some(chrono::Utc::now()));
    let id = crate::orders::owned_listing_in(&store, "Makers Rocket", "maker@rockets.example", live).await;
    // A paid listing shows its milestones and story publicly.
    use domain::user::Scope::{AccountRead, ListingsWrite};
    let key = crate::drafts::key_for(&app.db.url, "maker@rockets.example", &[AccountRead, ListingsWrite]).await;
    let milestone = serde_json::json!({"date": "2026-01-31", "title": "First rocket for a cat"});
    let (s, body) =
        crate::own::call(&app, "POST", &format!("/me/listings/{id}/milestones"), &key, Some(milestone)).await;
    assert_eq!(s, 201, "{body}");
    let story = serde_json::json!({"why_started": "Our cat looked at the moon."});
    let (s, body) = crate::own::call(&app, "PUT", &format!("/me/listings/{id}/story"), &key, Some(story)).await;
    assert_eq!(s, 200, "{body}");

    // Signed out: the page shows the count and a way to sign in; the form sends to sign-in.
    let mut anon = Browser::new(&app);
    let (s, page, _) = anon.get("/listings/makers-rocket").await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(votes_shown(&page), "0 votes");
    assert!(page.contains("Sign in to vote") && !page.contains(r#"id="vote""#));
    assert!(
        page.contains("<h2>Milestones</h2>") && page.contains("First rocket for a cat"),
        "milestones when unlocked"
    );
    assert!(page.contains("The founders&#x27; story") || page.contains("The founders' story"), "{page}");
    assert!(page.contains("Our cat looked at the moon."), "the story when unlocked");
    let (s, _, loc) = anon.post("/listings/makers-rocket/vote", &[("csrf", "x"), ("action", "vote")]).await;
    assert_eq!((s, loc.as_deref()), (303, Some("/signin")));

    // The maker cannot vote for their own listing.
    let (_, page, _) = maker.get("/listings/makers-rocket").await;
    let csrf = hidden(&page, "csrf");
    let (s, body, _) = maker.post("/listings/makers-rocket/vote", &[("csrf", &csrf), ("action", "vote")]).await;
    assert_eq!(s, 409, "{body}");
    assert!(body.contains("cannot vote for their own listing"));

    // Another person votes once (a second vote changes nothing), then takes it back.
    let mut fan = Browser::new(&app);
    sign_up(&mut fan, "fan@people.example").await;
    let (_, page, _) = fan.get("/listings/makers-rocket").await;
    let csrf = hidden(&page, "csrf");
    let (s, _, _) = fan.post("/listings/makers-rocket/vote", &[("csrf", "forged"), ("action", "vote")]).await;
    assert_eq!(s, 403, "a forged CSRF token is refused");
    for _ in 0..2 {
        let (s, _, loc) = fan.post("/listings/makers-rocket/vote", &[("csrf", &csrf), ("action", "vote")]).await;
        assert_eq!(s, 303);
        assert!(loc.unwrap().ends_with("/listings/makers-rocket"));
    }
    let (_, page, _) = fan.get("/listings/makers-rocket").await;
    assert_eq!(votes_shown(&page), "1 vote", "one vote per person");
    assert!(page.contains("Voted ✓ (undo)"));
    let r: serde_json::Value = app.get("/api/v1/listings/makers-rocket").await.json().await.unwrap();
    assert_eq!(r["votes"], 1, "the API shows the vote");
    let (s, _, _) = fan.post("/listings/makers-rocket/vote", &[("csrf", &csrf), ("action", "unvote")]).await;
    assert_eq!(s, 303);
    let (_, page, _) = fan.get("/listings/makers-rocket").await;
    assert_eq!(votes_shown(&page), "0 votes");
    // A script toggling its vote is stopped at the day's cap of votes taken back (the one above counts).
    let cap = domain::engagement::policy::UNVOTES_PER_ACCOUNT_PER_DAY;
    for n in 2..=cap + 1 {
        let (s, _, _) = fan.post("/listings/makers-rocket/vote", &[("csrf", &csrf), ("action", "vote")]).await;
        assert_eq!(s, 303);
        let (s, body, _) = fan.post("/listings/makers-rocket/vote", &[("csrf", &csrf), ("action", "unvote")]).await;
        if n <= cap {
            assert_eq!(s, 303, "unvote {n} of {cap}");
        } else {
            assert_eq!(s, 429, "unvote {n} is past the cap");
            assert!(body.contains("votes this account took back today reached 20"), "{body}");
        }
    }
    let (_, page, _) = fan.get("/listings/makers-rocket").await;
    assert_eq!(votes_shown(&page), "1 vote", "the refused unvote left the vote standing");

    // Follow and stop following. The API's profile, cached before the follow, shows it at once: a
    // follow drops the followed listing's cached reads (and the lists ranked by followers).
    let follows = || async {
        let profile: serde_json::Value = app.get("/api/v1/listings/makers-rocket").await.json().await.unwrap();
        profile["follows"].as_i64().unwrap()
    };
    assert_eq!(follows().await, 0);
    let (s, _, _) = fan.post("/listings/makers-rocket/follow", &[("csrf", &csrf), ("on", "1")]).await;
    assert_eq!(s, 303);
    assert_eq!(follows().await, 1, "the cached profile was dropped by the follow");
    let (_, page, _) = fan.get("/listings/makers-rocket").await;
    assert!(page.contains("1 followers") && page.contains("Following ✓"), "{page}");
    let (s, _, _) = fan.post("/listings/makers-rocket/follow", &[("csrf", &csrf), ("on", "0")]).await;
    assert_eq!(s, 303);
    let (_, page, _) = fan.get("/listings/makers-rocket").await;
    assert!(page.contains("0 followers"));

    // Unknown listings and boards are 404 pages; there is no vote in the API.
    assert_eq!(fan.get("/listings/no-such-thing").await.0, 404);
    assert_eq!(fan.get("/leaderboards/most-hyped").await.0, 404);
    assert_eq!(fan.post("/listings/no-such-thing/vote", &[("csrf", &csrf), ("action", "vote")]).await.0, 404);
    let r = app.client.post(format!("{}/api/v1/listings/makers-rocket/vote", app.base)).send().await.unwrap();
    assert!(r.status() == 404 || r.status() == 405, "no vote operation in the API ({})", r.status());
}

/// The per-address cap: one network address casts at most `VOTES_PER_ADDRESS_PER_DAY` votes a day,
/// whatever accounts it uses; the next is refused and counts nowhere. A listing page's views count
/// once a day per person and never for a bot.
#[tokio::test]
async fn an_address_votes_a_bounded_number_of_times_a_day_and_views_count_once() {
    use domain::engagement::policy::VOTES_PER_ADDRESS_PER_DAY as CAP;
    let app = spawn_app_configured(test_support::sqlite(), true, |a| a.read_cache_secs = 0).await;
    app.wait_ready().await;
    let all: serde_json::Value = app.get("/api/v1/listings?per_page=100&sort=newest").await.json().await.unwrap();
    let slugs: Vec<String> =
        all["items"].as_array().unwrap().iter().map(|l| l["slug"].as_str().unwrap().to_owned()).collect();
    assert!(slugs.len() as i64 > CAP);
    let mut fan = Browser::new(&app);
    sign_up(&mut fan, "busy@people.example").await;
    let (_, page, _) = fan.get(&format!("/listings/{}", slugs[0])).await;
    let csrf = hidden(&page, "csrf");
    for slug in &slugs[..usize::try_from(CAP).unwrap()] {
        let (s, body, _) = fan.post(&format!("/listings/{slug}/vote"), &[("csrf", &csrf), ("action", "vote")]).await;
        assert_eq!(s, 303, "{slug}: {body}");
    }
    let over = &slugs[usize::try_from(CAP).unwrap()];
    let before: serde_json::Value = app.get(&format!("/api/v1/listings/{over}")).await.json().await.unwrap();
    let (s, body, _) = fan.post(&format!("/listings/{over}/vote"), &[("csrf", &csrf), ("action", "vote")]).await;
    assert_eq!(s, 409, "vote {} from one address: {body}", CAP + 1);
    assert!(body.contains("too many votes from this network today"));
    // A second account on the same address is capped too.
    let mut other = Browser::new(&app);
    sign_up(&mut other, "sock@people.example").await;
    let (_, page, _) = other.get(&format!("/listings/{over}")).await;
    let csrf2 = hidden(&page, "csrf");
    let (s, _, _) = other.post(&format!("/listings/{over}/vote"), &[("csrf", &csrf2), ("action", "vote")]).await;
    assert_eq!(s, 409);
    let after: serde_json::Value = app.get(&format!("/api/v1/listings/{over}")).await.json().await.unwrap();
    assert_eq!(after["votes"], before["votes"], "the refused votes count nowhere");

    // Views: this person's two visits today count once; a crawler's never.
    let views = |v: &serde_json::Value| v["views"].as_i64().unwrap();
    let start: serde_json::Value = app.get(&format!("/api/v1/listings/{over}")).await.json().await.unwrap();
    // `other` opened the page once above (reqwest sends no User-Agent: not a person, not counted).
    for ua in [
        "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
        "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
        "Googlebot/2.1",
    ] {
        let r = app.client.get(format!("{}/listings/{over}", app.base)).header("user-agent", ua).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
    let end: serde_json::Value = app.get(&format!("/api/v1/listings/{over}")).await.json().await.unwrap();
    assert_eq!(views(&end), views(&start) + 1, "one person, one view a day; bots none");
}

/// An IPv6 client is one network by its /64, as the rate limit and sign-in count it: a subscriber's /64
/// holds more addresses than anyone can use, so a cap on each address alone capped nothing. Votes from
/// `CAP + 1` addresses of one /64 stop at the cap, another /64 is another network, and a page opened
/// from two addresses of one /64 in one browser counts one view. Before, every vote was cast and both
/// views counted.
#[tokio::test]
async fn an_ipv6_network_is_capped_as_one_address() {
    use domain::engagement::policy::VOTES_PER_ADDRESS_PER_DAY as CAP;
    let app = spawn_app_configured(test_support::sqlite(), true, |a| {
        a.read_cache_secs = 0;
        a.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await;
    app.wait_ready().await;
    let all: serde_json::Value = app.get("/api/v1/listings?per_page=100&sort=newest").await.json().await.unwrap();
    let slugs: Vec<String> =
        all["items"].as_array().unwrap().iter().map(|l| l["slug"].as_str().unwrap().to_owned()).collect();
    let cap = usize::try_from(CAP).unwrap();
    assert!(slugs.len() > cap + 1);
    let mut fan = Browser::new(&app);
    sign_up(&mut fan, "rotating@people.example").await;
    let (_, page, _) = fan.get(&format!("/listings/{}", slugs[0])).await;
    let csrf = hidden(&page, "csrf");
    let mut vote_from = async |slug: &str, from: &str| {
        let form = [("csrf", csrf.as_str()), ("action", "vote")];
        fan.raw_post(&format!("/listings/{slug}/vote"), &form, &[("x-forwarded-for", from)]).await.status().as_u16()
    };
    let mut statuses = Vec::new();
    for (i, slug) in slugs[..=cap].iter().enumerate() {
        statuses.push(vote_from(slug, &format!("2001:db8:0:1::{:x}", i + 1)).await);
    }
    assert!(statuses[..cap].iter().all(|s| *s == 303), "{statuses:?}");
    assert_eq!(statuses[cap], 409, "vote {} from one /64", CAP + 1);
    assert_eq!(vote_from(&slugs[cap + 1], "2001:db8:0:2::1").await, 303, "another /64 is another network");

    let over = &slugs[cap];
    let views = || async {
        let l: serde_json::Value = app.get(&format!("/api/v1/listings/{over}")).await.json().await.unwrap();
        l["views"].as_i64().unwrap()
    };
    let start = views().await;
    for from in ["2001:db8:0:3::a", "2001:db8:0:3::b"] {
        let r = app
            .client
            .get(format!("{}/listings/{over}", app.base))
            .header("user-agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0")
            .header("x-forwarded-for", from)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    assert_eq!(views().await, start + 1, "one browser on one /64, one view a day");
}

/// The same cap against votes sent all at once: each used to count the address's votes before any of
/// them was cast, so all passed. The store counts them inside the vote's transaction, one address at a
/// time.
#[tokio::test]
async fn votes_sent_all_at_once_from_one_address_still_stop_at_its_cap() {
    use domain::engagement::policy::VOTES_PER_ADDRESS_PER_DAY as CAP;
    let app = spawn_app_configured(test_support::sqlite(), true, |a| a.read_cache_secs = 0).await;
    app.wait_ready().await;
    let all: serde_json::Value = app.get("/api/v1/listings?per_page=100&sort=newest").await.json().await.unwrap();
    let slugs: Vec<String> =
        all["items"].as_array().unwrap().iter().map(|l| l["slug"].as_str().unwrap().to_owned()).collect();
    let tries = usize::try_from(CAP).unwrap() + 10;
    assert!(slugs.len() >= tries, "{} live listings", slugs.len());
    let mut fan = Browser::new(&app);
    sign_up(&mut fan, "burst@people.example").await;
    let (_, page, _) = fan.get(&format!("/listings/{}", slugs[0])).await;
    let csrf = hidden(&page, "csrf");
    let votes = slugs[..tries].iter().map(|slug| {
        let (mut b, csrf) = (fan.clone(), csrf.clone());
        async move { b.post(&format!("/listings/{slug}/vote"), &[("csrf", &csrf), ("action", "vote")]).await.0 }
    });
    let mut statuses = futures_util::future::join_all(votes).await;
    statuses.sort_unstable();
    let cast = statuses.iter().filter(|s| **s == 303).count();
    assert_eq!(cast, usize::try_from(CAP).unwrap(), "{statuses:?}");
    assert!(statuses.iter().all(|s| [303, 409].contains(s)), "{statuses:?}");
    let mut counted = 0;
    for slug in &slugs[..tries] {
        let l: serde_json::Value = app.get(&format!("/api/v1/listings/{slug}")).await.json().await.unwrap();
        counted += l["votes"].as_i64().unwrap();
    }
    let before: i64 = all["items"].as_array().unwrap()[..tries].iter().map(|l| l["votes"].as_i64().unwrap()).sum();
    assert_eq!(counted - before, CAP, "the refused votes count nowhere");
}

/// A demo app's most voted listing's slug.
async fn most_voted(app: &crate::helpers::TestApp) -> String {
    let page: serde_json::Value = app.get("/api/v1/listings?per_page=1&sort=votes").await.json().await.unwrap();
    page["items"][0]["slug"].as_str().unwrap().to_owned()
}

/// The listing's views as its profile shows them (through the API; the read cache is off in the
/// tests that ask).
async fn profile_views(app: &crate::helpers::TestApp, slug: &str) -> i64 {
    let v: serde_json::Value = app.get(&format!("/api/v1/listings/{slug}")).await.json().await.unwrap();
    v["views"].as_i64().unwrap()
}

/// One person's load of the listing's page (a browser string naming `who`): its status.
fn page_load(app: &crate::helpers::TestApp, slug: &str, who: &str) -> impl std::future::Future<Output = u16> + use<> {
    let req = app.client.get(format!("{}/listings/{slug}", app.base));
    let ua = format!("Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0 {who}");
    async move { req.header("user-agent", ua).send().await.unwrap().status().as_u16() }
}

/// Page loads at the same moment are counted together (one writer, one transaction a batch) and
/// each exactly once: 48 people at once add 48 views, the same 48 again add none, on both stores.
#[tokio::test]
async fn concurrent_page_loads_count_each_view_once() {
    for db in [Some(test_support::sqlite()), test_support::postgres().await].into_iter().flatten() {
        let app = spawn_app_configured(db, true, |a| a.read_cache_secs = 0).await;
        app.wait_ready().await;
        let slug = most_voted(&app).await;
        let views = || profile_views(&app, &slug);
        let load_all =
            || futures_util::future::join_all((0..48).map(|i| page_load(&app, &slug, &format!("person-{i}"))));
        let before = views().await;
        assert!(load_all().await.iter().all(|s| *s == 200));
        assert_eq!(views().await, before + 48, "48 people, 48 views ({})", app.db.url);
        assert!(load_all().await.iter().all(|s| *s == 200));
        assert_eq!(views().await, before + 48, "the same people again the same day ({})", app.db.url);
    }
}

/// A returning viewer's page load (the same person, listing and day) does not go back to the database:
/// while another connection holds the lock the view writer needs, it still answers at once, and a new
/// viewer's view waiting behind the lock is counted once it is released, on both stores. (Before, every
/// page load waited for its view's transaction, a returning viewer's too: up to the 10 s lock wait.)
#[tokio::test]
async fn a_returning_viewer_does_not_wait_for_the_views_lock() {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    for db in [Some(test_support::sqlite()), test_support::postgres().await].into_iter().flatten() {
        let app = spawn_app_configured(db, true, |a| a.read_cache_secs = 0).await;
        app.wait_ready().await;
        let slug = most_voted(&app).await;
        let views = || profile_views(&app, &slug);
        let load = |who: &str| page_load(&app, &slug, who);
        let before = views().await;
        assert_eq!(load("returning").await, 200);
        let other = sea_orm::Database::connect(&app.db.url).await.unwrap();
        let immediate = sea_orm::TransactionOptions {
            sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
            ..Default::default()
        };
        let held = other.begin_with_options(immediate).await.unwrap();
        if held.get_database_backend() == sea_orm::DbBackend::Postgres {
            held.execute_unprepared("LOCK TABLE listing_view_marks IN SHARE MODE").await.unwrap();
        }
        let again = tokio::time::timeout(std::time::Duration::from_secs(3), load("returning")).await;
        let new = tokio::spawn(load("new"));
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!new.is_finished(), "a new viewer's view waits for the lock ({})", app.db.url);
        held.rollback().await.unwrap();
        assert_eq!(again, Ok(200), "the returning viewer answered while the lock was held ({})", app.db.url);
        assert_eq!(new.await.unwrap(), 200);
        assert_eq!(views().await, before + 2, "the returning viewer once, the new one once ({})", app.db.url);
    }
}

/// With the read cache on, a listing page comes from the cache with its listing's id: each new
/// visitor's view is still written (counted in the database, where the cached reads do not look) and
/// a returning one's is not.
#[tokio::test]
async fn pages_from_the_cache_still_count_each_view() {
    use sea_orm::{ConnectionTrait, Statement};
    for db in [Some(test_support::sqlite()), test_support::postgres().await].into_iter().flatten() {
        let app = spawn_app_configured(db, true, |a| a.read_cache_secs = 600).await;
        app.wait_ready().await;
        let slug = most_voted(&app).await;
        let store = sea_orm::Database::connect(&app.db.url).await.unwrap();
        let views = || {
            let (store, slug) = (&store, &slug);
            async move {
                let sql = format!(
                    "SELECT t.views FROM listing_view_totals t JOIN listings l ON l.id = t.listing_id \
                     WHERE l.slug = '{slug}'"
                );
                let row = store.query_one_raw(Statement::from_string(store.get_database_backend(), sql)).await.unwrap();
                row.unwrap().try_get_by_index::<i64>(0).unwrap()
            }
        };
        let load = |who: &str| page_load(&app, &slug, who);
        let before = views().await;
        for who in ["first", "second", "third", "second"] {
            assert_eq!(load(who).await, 200);
        }
        assert_eq!(views().await, before + 3, "three people, the second twice ({})", app.db.url);
    }
}

/// Every public page renders from the demo data, with links built from the public URL, and unknown
/// records are 404 pages.
#[tokio::test]
async fn the_public_pages_render_the_demo_data() {
    const PUBLIC: &str = "https://launch.example";
    let app = spawn_app_configured(test_support::sqlite(), true, |a| a.public_url = Some(PUBLIC.into())).await;
    app.wait_ready().await;
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let get = |path: String| {
        let c = client.clone();
        let url = format!("{}{path}", app.base);
        async move {
            let r = c.get(url).header("user-agent", "Mozilla/5.0 Firefox/140.0").send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let api = |path: &str| format!("/api/v1{path}");
    let first = |v: &serde_json::Value, key: &str| v["items"][0][key].as_str().unwrap().to_owned();
    let json = |(_, body): (u16, String)| serde_json::from_str::<serde_json::Value>(&body).unwrap();
    let blog = json(get(api("/blog")).await);
    let (post, title) = (first(&blog, "slug"), first(&blog, "title"));
    let category = first(&json(get(api("/categories")).await), "slug");
    let listing = json(get(api(&format!("/listings/{}", first(&json(get(api("/listings")).await), "slug")))).await);
    let founder = listing["founders"][0]["slug"].as_str().unwrap().to_owned();
    for (path, expect) in [
        ("/".to_owned(), "This week"),
        ("/categories".to_owned(), "Categories"),
        (format!("/categories/{category}"), "Live listings, most voted first"),
        ("/launches/this".to_owned(), "Launch week of"),
        ("/launches/last".to_owned(), "Launched, ranked by community votes"),
        (format!("/founders/{founder}"), listing["founders"][0]["name"].as_str().unwrap()),
        ("/blog".to_owned(), "Blog"),
        (format!("/blog/{post}"), title.as_str()),
        ("/awards".to_owned(), "Launch of the Week"),
        ("/leaderboards/community-all-time".to_owned(), "All time"),
        ("/leaderboards/billboard".to_owned(), "<strong>Paid.</strong>"),
    ] {
        let (s, body) = get(path.clone()).await;
        assert_eq!(s, 200, "{path}: {body}");
        assert!(body.contains(expect), "{path} shows {expect:?}");
        assert!(
            body.contains(&format!(r#"href="{PUBLIC}/"#)) || !body.contains("class=\"items\""),
            "{path}: links from the public URL"
        );
        assert!(!body.contains("http://127.0.0.1"), "{path}: no internal address in links");
        for relative in [r#"href="/"#, r#"action="/"#, r#"src="/"#] {
            assert!(!body.contains(relative), "{path}: a link not from the public URL ({relative})");
        }
    }
    let (s, _) = get("/launches".to_owned()).await;
    assert_eq!(s, 303, "the calendar opens on this week");
    // A listing page shows what it won, its alternatives and a way to compare with each.
    let awards = json(get(api("/awards")).await);
    let winner = awards["items"][0]["listing"]["slug"].as_str().unwrap().to_owned();
    let (s, page) = get(format!("/listings/{winner}")).await;
    assert_eq!(s, 200);
    assert!(page.contains("Launch of the Week #"), "the award is shown");
    assert!(page.contains("<h2>Alternatives</h2>"), "alternatives are listed");
    let compare = page.split(r#"href=""#).find(|h| h.contains("/compare?a=")).unwrap().split('"').next().unwrap();
    let compare = crate::pages::unescape(compare.trim_start_matches(PUBLIC));
    let (s, table) = get(compare.clone()).await;
    assert_eq!(s, 200, "{compare}");
    assert!(table.contains(" vs ") && table.contains("<tbody><tr>"), "{compare}: rows side by side");
    assert_eq!(get(format!("/compare?a={winner}&b=nope")).await.0, 404);
    for path in
        ["/categories/nope", "/founders/nobody-here", "/blog/no-such-post", "/launches/1999-01-04", "/listings/nope"]
    {
        assert_eq!(get(path.to_owned()).await.0, 404, "{path}");
    }
}

/// A ready app (SQLite, no read cache) whose crawler may read the acme-rockets fixture site served
/// on loopback; keep the site for as long as the app.
pub(crate) async fn app_reading_acme() -> (test_support::FixtureSite, crate::helpers::TestApp) {
    let site = test_support::FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let allowed = site.host_port();
    let app = spawn_app_configured(test_support::sqlite(), false, move |a| {
        a.outbound.crawler_allowed_hosts = vec![allowed];
        a.read_cache_secs = 0;
    })
    .await;
    app.wait_ready().await;
    (site, app)
}

/// Submits `url` with `key` and waits until its draft is ready; the draft's id.
pub(crate) async fn ready_draft(app: &crate::helpers::TestApp, key: &str, url: &str) -> String {
    let (s, draft) = crate::own::call(app, "POST", "/drafts", key, Some(serde_json::json!({"url": url}))).await;
    assert_eq!(s, 201, "{draft}");
    let id = draft["id"].as_str().unwrap().to_owned();
    for _ in 0..100 {
        let (_, d) = crate::own::call(app, "GET", &format!("/drafts/{id}"), key, None).await;
        if d["status"] == "ready" {
            return id;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("draft {id} never became ready")
}

/// The maker's pages: the draft with each field's value, state and evidence quotes, an edit that makes
/// a field the maker's, a refused edit naming the field, saving the draft as a listing, and the lists
/// of listings, claims and orders. Another person's draft is a 404.
#[tokio::test]
async fn a_maker_reviews_edits_and_saves_a_draft_on_the_site() {
    use domain::user::Scope::{AccountRead, ListingsWrite};
    let (site, app) = app_reading_acme().await;
    let mut maker = Browser::new(&app);
    sign_up(&mut maker, "ann@acme.example").await;
    let key = crate::drafts::key_for(&app.db.url, "ann@acme.example", &[AccountRead, ListingsWrite]).await;
    let id = ready_draft(&app, &key, &site.url()).await;

    let (s, list, _) = maker.get("/me/drafts").await;
    assert_eq!(s, 200);
    assert!(list.contains(&format!("/me/drafts/{id}")), "{list}");
    let (s, page, _) = maker.get(&format!("/me/drafts/{id}")).await;
    assert_eq!(s, 200, "{page}");
    assert!(page.contains("<blockquote>“") && page.contains("state-ai"), "values with their evidence and state");
    assert!(page.contains("state-not_found"), "facts the site does not state are shown as such");
    let csrf = hidden(&page, "csrf");

    // An edit makes the field the maker's; a value past its bound is refused, naming the field.
    let form = [("csrf", csrf.as_str()), ("field", "tagline"), ("value", "Rockets for cats, edited on the site")];
    let (s, _, loc) = maker.post(&format!("/me/drafts/{id}"), &form).await;
    assert_eq!(s, 303);
    assert!(loc.unwrap().contains("#field-tagline"));
    let (_, page, _) = maker.get(&format!("/me/drafts/{id}")).await;
    let row = page.split(r#"<tr id="field-tagline">"#).nth(1).unwrap().split("</tr>").next().unwrap();
    assert!(row.contains("Rockets for cats, edited on the site") && row.contains("state-edited"), "{row}");
    let long = "x".repeat(501);
    let (s, page, _) =
        maker.post(&format!("/me/drafts/{id}"), &[("csrf", &csrf), ("field", "name"), ("value", &long)]).await;
    assert_eq!(s, 400);
    assert!(page.contains("fields.name"), "the refusal names the field");
    let (s, _, _) =
        maker.post(&format!("/me/drafts/{id}"), &[("csrf", "forged"), ("field", "name"), ("value", "x")]).await;
    assert_eq!(s, 403);

    // The parts beyond the fields: each form replaces its part through update_draft.
    let faqs_before = crate::own::call(&app, "GET", &format!("/drafts/{id}"), &key, None).await.1["faqs"].clone();
    let faqs_before = faqs_before.as_array().unwrap();
    assert!(page.contains(r#"id="faqs""#) && page.contains(r#"name="question.0""#), "the FAQ form");
    let mut form: Vec<(String, String)> = vec![("csrf".into(), csrf.clone())];
    for (i, f) in faqs_before.iter().enumerate() {
        form.push((format!("question.{i}"), f["question"].as_str().unwrap().into()));
        form.push((format!("answer.{i}"), f["answer"].as_str().unwrap().into()));
    }
    let n = faqs_before.len();
    form.push((format!("question.{}", n + 1), "Do cats fly for free?".into()));
    form.push((format!("answer.{}", n + 1), "Yes, on weekdays.".into()));
    let pairs = |f: &[(String, String)]| f.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<Vec<_>>();
    let (s, _, loc) = maker.post_pairs(&format!("/me/drafts/{id}/faqs"), &pairs(&form)).await;
    assert_eq!((s, loc.unwrap().ends_with("#faqs")), (303, true));
    let d = crate::own::call(&app, "GET", &format!("/drafts/{id}"), &key, None).await.1;
    assert_eq!(d["faqs"].as_array().unwrap().len(), n + 1, "the blank row in between was not sent");
    assert_eq!(d["faqs"][n]["answer"], "Yes, on weekdays.");
    // A question without its answer is refused, naming the row on the page.
    let mut half = form.clone();
    half.push((format!("question.{}", n + 2), "And dogs?".into()));
    let (s, page2, _) = maker.post_pairs(&format!("/me/drafts/{id}/faqs"), &pairs(&half)).await;
    assert_eq!(s, 400, "{page2}");
    assert!(page2.contains(&format!("faqs[{}].answer", n + 2)), "{page2}");
    // Eleven FAQs are one past the bound.
    let mut eleven = vec![("csrf".to_owned(), csrf.clone())];
    for i in 0..11 {
        eleven.push((format!("question.{i}"), format!("Q{i}?")));
        eleven.push((format!("answer.{i}"), "A.".into()));
    }
    let (s, page2, _) = maker.post_pairs(&format!("/me/drafts/{id}/faqs"), &eleven).await;
    assert_eq!(s, 400);
    assert!(page2.contains("faqs: more than 10 items"), "{page2}");
    let ten = &eleven[..21];
    assert_eq!(maker.post_pairs(&format!("/me/drafts/{id}/faqs"), ten).await.0, 303, "ten FAQs are allowed");

    let section = |name: &str, fields: &[(&str, &str)]| {
        let mut f = vec![("csrf".to_owned(), csrf.clone())];
        f.extend(fields.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        (format!("/me/drafts/{id}/{name}"), f)
    };
    for (name, fields) in [
        ("founders", vec![("name.0", "Ann Acme"), ("title.0", "CEO"), ("name.1", "Cy Acme")]),
        ("socials", vec![("company.github", "https://github.com/acme"), ("founder.x", "https://x.com/ann")]),
        ("story", vec![("title", "Why rockets"), ("problem", "Cats could not reach the moon.")]),
        (
            "milestones",
            vec![("date.0", "2026-03-01"), ("title.0", "First launch"), ("url.0", "https://acme.example/1")],
        ),
        ("seo", vec![("title", "Acme Rockets: rockets for cats")]),
    ] {
        let (path, f) = section(name, &fields);
        let (s, body, _) = maker.post_pairs(&path, &f).await;
        assert_eq!(s, 303, "{name}: {body}");
    }
    let d = crate::own::call(&app, "GET", &format!("/drafts/{id}"), &key, None).await.1;
    assert_eq!(d["founders"].as_array().unwrap().len(), 2, "{d}");
    assert_eq!(
        (d["founders"][0]["name"].as_str(), d["founders"][0]["title"].as_str()),
        (Some("Ann Acme"), Some("CEO"))
    );
    assert_eq!(d["company_socials"], serde_json::json!({"github": "https://github.com/acme"}));
    assert_eq!(d["founder_socials"], serde_json::json!({"x": "https://x.com/ann"}));
    assert_eq!(d["story"]["problem"], "Cats could not reach the moon.");
    assert_eq!(d["milestones"][0]["title"], "First launch");
    assert_eq!(d["seo"]["title"], "Acme Rockets: rockets for cats");
    let (_, page2, _) = maker.get(&format!("/me/drafts/{id}")).await;
    assert!(page2.contains(r#"value="Ann Acme""#) && page2.contains("Cats could not reach the moon."), "shown again");
    // Refusals name the field; a part we do not have is a 404; a forged token a 403.
    for (name, fields, names) in [
        ("milestones", vec![("date.0", "2026-02-30"), ("title.0", "x")], "milestones[0].date"),
        ("socials", vec![("company.github", "ftp://github.com/acme")], "company_socials.github"),
        ("seo", vec![("title", &*"t".repeat(71))], "seo.title"),
        ("founders", vec![("title.3", "CTO")], "founders[3].name"),
    ] {
        let (path, f) = section(name, &fields);
        let (s, body, _) = maker.post_pairs(&path, &f).await;
        assert_eq!(s, 400, "{name}");
        assert!(body.contains(names), "{name}: {body}");
    }
    let (path, _) = section("votes", &[]);
    assert_eq!(maker.post_pairs(&path, &[("csrf".into(), csrf.clone())]).await.0, 404);
    let (path, _) = section("story", &[]);
    assert_eq!(maker.post_pairs(&path, &[("csrf".into(), "forged".into())]).await.0, 403);

    // Someone else sees nothing of it.
    let mut other = Browser::new(&app);
    sign_up(&mut other, "bob@other.example").await;
    assert_eq!(other.get(&format!("/me/drafts/{id}")).await.0, 404);
    let other_csrf = hidden(&other.get("/signout").await.1, "csrf");
    let (s, _, _) = other.post(&format!("/me/drafts/{id}/submit"), &[("csrf", &other_csrf)]).await;
    assert_eq!(s, 404);
    let (s, _, _) = other.post(&format!("/me/drafts/{id}/story"), &[("csrf", &other_csrf), ("title", "Mine")]).await;
    assert_eq!(s, 404);

    // Save it as a listing; the listings page shows it, unpublished.
    let (s, _, loc) = maker.post(&format!("/me/drafts/{id}/submit"), &[("csrf", &csrf)]).await;
    assert_eq!((s, loc.as_deref().map(|l| l.ends_with("/me/listings"))), (303, Some(true)));
    let (s, listings, _) = maker.get("/me/listings").await;
    assert_eq!(s, 200);
    assert!(listings.contains("Acme Rockets") && listings.contains("<td>draft</td>"), "{listings}");
    for path in ["/me/claims", "/me/orders"] {
        let (s, body, _) = maker.get(path).await;
        assert_eq!(s, 200, "{path}");
        assert!(body.contains("No "), "{path}: says it is empty");
    }
    let mut anon = Browser::new(&app);
    assert_eq!(anon.get("/me/drafts").await.2.as_deref(), Some("/signin"));
}

/// A leaderboard page's `?page=` that is not a number (an address someone edited) is the first page,
/// as an HTML page: before, the typed query made it a JSON 400 on an HTML page.
#[tokio::test]
async fn a_board_page_number_that_is_not_one_is_the_first_page() {
    let app = spawn_app_configured(test_support::sqlite(), true, |a| a.read_cache_secs = 0).await;
    app.wait_ready().await;
    let app = &app;
    let page = |q: &'static str| async move {
        let r = app.get(&format!("/leaderboards/community-all-time{q}")).await;
        let kind = r.headers()["content-type"].to_str().unwrap().to_owned();
        (r.status().as_u16(), kind, r.text().await.unwrap())
    };
    let (_, _, first) = page("").await;
    for q in ["?page=abc", "?page=99999999999999999999", "?page=", "?page=-3"] {
        let (status, kind, body) = page(q).await;
        assert_eq!(status, 200, "{q}");
        assert!(kind.starts_with("text/html"), "{q}: {kind}");
        assert_eq!(body, first, "{q} is the first page");
    }
}
