//! The public read operations over REST, against demo data: shapes, defaults and every bound at its
//! edge (the largest valid value and one past it).

use crate::helpers::{TestApp, spawn_app, spawn_app_configured};
use serde_json::Value;

async fn demo() -> TestApp {
    let app = spawn_app(true).await;
    app.wait_ready().await;
    app
}

async fn json(app: &TestApp, path: &str) -> (u16, Value) {
    let r = app.get(&format!("/api/v1{path}")).await;
    let status = r.status().as_u16();
    (status, r.json().await.unwrap())
}

/// Asserts a 400 whose details name `field`.
async fn refused(app: &TestApp, path: &str, field: &str) {
    let (status, body) = json(app, path).await;
    assert_eq!(status, 400, "{path}: {body}");
    assert_eq!(body["error"]["code"], "invalid_request", "{path}");
    let named: Vec<&str> =
        body["error"]["details"].as_array().unwrap().iter().filter_map(|d| d["field"].as_str()).collect();
    assert!(named.contains(&field), "{path}: details name {named:?}, expected {field}");
}

async fn accepted(app: &TestApp, path: &str) -> Value {
    let (status, body) = json(app, path).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

#[tokio::test]
async fn site_info_points_at_the_docs() {
    let app = demo().await;
    let body = accepted(&app, "/site").await;
    assert!(body["counts"]["live_listings"].as_u64().unwrap() >= 300);
    assert_eq!(body["counts"]["categories"], 41);
    assert_eq!(body["links"]["openapi"], format!("{}/api/v1/openapi.json", app.base));
    assert_eq!(body["links"]["mcp"], format!("{}/mcp", app.base));
    let doc = accepted(&app, "/openapi.json").await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["servers"][0]["url"], format!("{}/api/v1", app.base));
}

#[tokio::test]
async fn search_listings_defaults_and_bounds() {
    let app = demo().await;
    let first = accepted(&app, "/listings").await;
    let items = first["items"].as_array().unwrap();
    assert_eq!(items.len(), 20, "per_page defaults to 20");
    assert_eq!(first["pagination"]["page"], 1);
    for i in items {
        assert!(i["name"].is_string() && i["url"].is_string() && i["votes"].is_i64());
        assert_eq!(i["status"], "live", "status defaults to live");
    }
    let votes: Vec<i64> = items.iter().map(|i| i["votes"].as_i64().unwrap()).collect();
    assert!(votes.windows(2).all(|w| w[0] >= w[1]), "without q, relevance means most voted first");

    accepted(&app, "/listings?page=1000&per_page=100").await;
    refused(&app, "/listings?page=1001", "page").await;
    refused(&app, "/listings?page=0", "page").await;
    refused(&app, "/listings?per_page=101", "per_page").await;
    refused(&app, "/listings?per_page=0", "per_page").await;
    refused(&app, "/listings?page=abc", "page").await;
    accepted(&app, &format!("/listings?q={}", "a".repeat(200))).await;
    refused(&app, &format!("/listings?q={}", "a".repeat(201)), "q").await;
    accepted(&app, "/listings?country=de").await;
    refused(&app, "/listings?country=USA", "country").await;
    refused(&app, "/listings?country=1a", "country").await;
    accepted(&app, &format!("/listings?category={}", "a".repeat(220))).await;
    refused(&app, &format!("/listings?category={}", "a".repeat(221)), "category").await;
    refused(&app, "/listings?category=Not_A_Slug", "category").await;
    refused(&app, "/listings?stage=-x", "stage").await;
    accepted(&app, &format!("/listings?pricing_model={}", "p".repeat(40))).await;
    refused(&app, &format!("/listings?pricing_model={}", "p".repeat(41)), "pricing_model").await;
    accepted(&app, &format!("/listings?domain={}", "d".repeat(253))).await;
    refused(&app, &format!("/listings?domain={}", "d".repeat(254)), "domain").await;
    refused(&app, "/listings?sort=hot", "sort").await;
    refused(&app, "/listings?status=draft", "status").await;
    refused(&app, "/listings?perpage=3", "perpage").await;
    refused(&app, "/listings?page=1&page=2", "page").await;
    // Bytes that are not UTF-8 once percent-decoded name their parameter; before, they became U+FFFD
    // and the search answered for a text nobody sent. Encoded UTF-8 (é, U+FFFD itself) is text.
    refused(&app, "/listings?q=%ff%fe", "q").await;
    refused(&app, "/listings?q=caf%c3", "q").await;
    refused(&app, "/listings?%ff=1", "\u{fffd}").await;
    accepted(&app, "/listings?q=caf%c3%a9").await;
    accepted(&app, "/listings?q=%ef%bf%bd").await;

    let upcoming = accepted(&app, "/listings?status=upcoming&per_page=100").await;
    assert!(!upcoming["items"].as_array().unwrap().is_empty());
    assert!(upcoming["items"].as_array().unwrap().iter().all(|i| i["status"] == "scheduled"));
    let found = accepted(&app, "/listings?q=workflow&sort=relevance").await;
    let total = found["pagination"]["total"].as_u64().unwrap();
    assert!(total >= 60, "a common word finds many listings: {total}");
    for sort in ["newest", "votes", "trending", "most_viewed", "most_followed"] {
        accepted(&app, &format!("/listings?sort={sort}")).await;
    }
}

#[tokio::test]
async fn categories_tree_and_counts() {
    let app = demo().await;
    let all = accepted(&app, "/categories").await;
    let tops = all["items"].as_array().unwrap();
    assert_eq!(tops.len(), 9);
    let subs: usize = tops.iter().map(|t| t["subcategories"].as_array().unwrap().len()).sum();
    assert_eq!(tops.len() + subs, 41, "include_empty defaults to true");
    for t in tops {
        let sum: u64 =
            t["subcategories"].as_array().unwrap().iter().map(|s| s["live_listings"].as_u64().unwrap()).sum();
        assert_eq!(t["live_listings_total"].as_u64().unwrap(), t["live_listings"].as_u64().unwrap() + sum);
    }
    let non_empty = accepted(&app, "/categories?include_empty=false").await;
    fn all_nodes(v: &Value) -> Vec<&Value> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| std::iter::once(t).chain(t["subcategories"].as_array().unwrap()))
            .collect()
    }
    assert!(all_nodes(&non_empty).iter().all(|n| n["live_listings_total"].as_u64().unwrap() > 0));
    refused(&app, "/categories?include_empty=maybe", "include_empty").await;
}

#[tokio::test]
async fn products_and_questions_come_from_the_database() {
    // A one-second read cache: another instance's change shows once the cached answer has expired.
    let app = spawn_app_configured(test_support::sqlite(), true, |a| a.read_cache_secs = 1).await;
    app.wait_ready().await;
    let products = accepted(&app, "/products").await;
    let launch = products["items"].as_array().unwrap().iter().find(|p| p["id"] == "launch").unwrap();
    assert_eq!((launch["price_cents"].as_i64(), launch["currency"].as_str()), (Some(4900), Some("USD")));
    assert_eq!(launch["vat_included"], false);
    let other = bootstrap::App::connect(&app.db.url).await.unwrap();
    other
        .store
        .set_price(&domain::product::ProductCode::parse("launch").unwrap(), domain::money::Cents::new(5900))
        .await
        .unwrap();
    let cached = accepted(&app, "/products").await;
    let launch = cached["items"].as_array().unwrap().iter().find(|p| p["id"] == "launch").unwrap();
    assert_eq!(launch["price_cents"], 4900, "within the TTL the cached answer stands");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let again = accepted(&app, "/products").await;
    let launch = again["items"].as_array().unwrap().iter().find(|p| p["id"] == "launch").unwrap();
    assert_eq!(launch["price_cents"], 5900, "prices are read from the database, never hard-coded");
    let questions = accepted(&app, "/interview-questions").await;
    let q = questions["items"].as_array().unwrap();
    assert_eq!(q.len(), 10);
    assert!(q.iter().all(|x| x["id"].as_i64().unwrap() >= 1 && x["question"].is_string()));
    refused(&app, "/products?x=1", "x").await;
}

#[tokio::test]
async fn another_instances_change_empties_the_read_cache_within_seconds() {
    // A long TTL: only the shared change counter can make the new price show in time.
    let app = spawn_app_configured(test_support::sqlite(), true, |a| a.read_cache_secs = 600).await;
    app.wait_ready().await;
    let price = |v: &Value| {
        v["items"].as_array().unwrap().iter().find(|p| p["id"] == "launch").unwrap()["price_cents"].as_i64().unwrap()
    };
    assert_eq!(price(&accepted(&app, "/products").await), 4900);
    let other = bootstrap::App::connect(&app.db.url).await.unwrap();
    let launch = domain::product::ProductCode::parse("launch").unwrap();
    other.store.set_price(&launch, domain::money::Cents::new(6100)).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(price(&accepted(&app, "/products").await), 4900, "an uncounted change waits for the TTL");
    operations::public_data_changed(&other, &operations::ReadCache::disabled()).await;
    let started = std::time::Instant::now();
    let mut seen = 4900;
    while started.elapsed() < std::time::Duration::from_secs(5) && seen != 6100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        seen = price(&accepted(&app, "/products").await);
    }
    assert_eq!(seen, 6100, "a counted change shows on this instance");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(2500),
        "within about a second: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_worker_brings_the_search_terms_up_to_date() {
    // The demo listings are loaded at start-up, which leaves SQLite's table of search terms behind the
    // index; the worker's first pass brings it up to date (and searches complete meanwhile anyway).
    use sea_orm::{ConnectionTrait, Statement};
    let app = demo().await;
    let body = accepted(&app, "/listings?q=workf").await;
    assert!(body["pagination"]["total"].as_u64().unwrap() > 0, "a typed prefix completes: {body}");
    let db = sea_orm::Database::connect(&app.db.url).await.unwrap();
    let one = |sql: &'static str| {
        let db = &db;
        async move {
            let row = db.query_one_raw(Statement::from_string(db.get_database_backend(), sql)).await.unwrap().unwrap();
            row.try_get_by_index::<i64>(0).unwrap()
        }
    };
    let started = std::time::Instant::now();
    while one("SELECT changes - refreshed FROM listing_terms_state").await != 0 {
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "the table stayed behind");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let kept = one("SELECT COUNT(*) FROM listing_terms").await;
    assert!(kept > 100, "{kept} terms");
    assert_eq!(kept, one("SELECT COUNT(*) FROM listings_fts_vocab").await);
}

async fn live_slugs(app: &TestApp, n: usize) -> Vec<String> {
    let body = accepted(app, &format!("/listings?sort=votes&per_page={n}")).await;
    body["items"].as_array().unwrap().iter().map(|i| i["slug"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn get_listing_full_profile_and_paid_sections() {
    let app = demo().await;
    let slugs = live_slugs(&app, 100).await;
    let other = bootstrap::App::connect(&app.db.url).await.unwrap();
    let (mut with_story, mut without) = (0, 0);
    for slug in &slugs {
        let p = accepted(&app, &format!("/listings/{slug}")).await;
        for key in [
            "name",
            "url",
            "description",
            "features",
            "categories",
            "faqs",
            "socials",
            "founders",
            "latest_updates",
            "not_found_on_website",
            "links",
        ] {
            assert!(!p[key].is_null(), "{slug}: {key}");
        }
        assert!(p["community_rating"].is_null() || p["community_rating"]["basis"] == "genuine reviews only");
        if let Some(dr) = p["domain_rating"].as_object() {
            assert!(["up", "down", "flat"].contains(&dr["trend"].as_str().unwrap()));
        }
        let l =
            other.store.get_listing_by_slug(&domain::slug::Slug::parse(slug.clone()).unwrap()).await.unwrap().unwrap();
        let unlocked = l.unlocked.effective(l.lifecycle.plan());
        assert_eq!(p.get("milestones").is_some(), unlocked.milestones, "{slug}: milestones only when unlocked");
        if unlocked.story {
            with_story += usize::from(p.get("story").is_some());
        } else {
            assert!(p.get("story").is_none(), "{slug}: story only when unlocked");
            without += 1;
        }
    }
    assert!(with_story > 0 && without > 0, "the demo has both kinds: {with_story} / {without}");

    let (status, body) = json(&app, "/listings/no-such-listing").await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")));
    refused(&app, "/listings/Bad_Slug", "slug").await;
    refused(&app, &format!("/listings/{}", "a".repeat(221)), "slug").await;
    let upcoming = accepted(&app, "/listings?status=upcoming&per_page=1").await;
    let scheduled = upcoming["items"][0]["slug"].as_str().unwrap();
    assert_eq!(json(&app, &format!("/listings/{scheduled}")).await.0, 404, "not public before it is live");
}

#[tokio::test]
async fn get_category_with_tree_and_listings() {
    let app = demo().await;
    let top = accepted(&app, "/categories/developer-tools").await;
    assert!(top["parent"].is_null());
    assert_eq!(top["subcategories"].as_array().unwrap().len(), 5);
    assert!(!top["faqs"].as_array().unwrap().is_empty());
    let items = top["listings"]["items"].as_array().unwrap();
    assert!(!items.is_empty(), "a top-level category shows its subcategories' listings");
    let votes: Vec<i64> = items.iter().map(|i| i["votes"].as_i64().unwrap()).collect();
    assert!(votes.windows(2).all(|w| w[0] >= w[1]), "most voted first");
    let child = accepted(&app, "/categories/api-tools?per_page=100").await;
    assert_eq!(child["parent"]["slug"], "developer-tools");
    assert_eq!(json(&app, "/categories/no-such-category").await.0, 404);
    refused(&app, "/categories/api-tools?page=1001", "page").await;
    refused(&app, "/categories/API", "slug").await;
}

#[tokio::test]
async fn launch_feeds_and_weeks() {
    let app = demo().await;
    let this_monday = domain::week::LaunchWeek::of(chrono::Utc::now()).to_string();
    for section in
        ["today", "this-week", "trending", "most-voted", "recent", "most-viewed", "most-followed", "upcoming"]
    {
        accepted(&app, &format!("/launches?section={section}")).await;
    }
    let week = accepted(&app, "/launches").await;
    assert!(
        week["items"].as_array().unwrap().iter().all(|i| i["launch_week"] == this_monday.as_str()),
        "this-week is the default"
    );
    let upcoming = accepted(&app, "/launches?section=upcoming&per_page=100").await;
    let weeks: Vec<&str> =
        upcoming["items"].as_array().unwrap().iter().map(|i| i["launch_week"].as_str().unwrap()).collect();
    assert!(!weeks.is_empty() && weeks.windows(2).all(|w| w[0] <= w[1]), "upcoming: soonest first");
    refused(&app, "/launches?section=yesterday", "section").await;

    let this = accepted(&app, "/launches/weeks/this").await;
    assert_eq!(this["week"], this_monday.as_str());
    let ranked: Vec<i64> =
        this["launches"].as_array().unwrap().iter().map(|r| r["listing"]["votes"].as_i64().unwrap()).collect();
    assert!(ranked.windows(2).all(|w| w[0] >= w[1]));
    let next = accepted(&app, "/launches/weeks/next").await;
    assert!(next["launches"].as_array().unwrap().is_empty(), "nothing is live in a future week");
    let any_scheduled = futures_any(&app).await;
    assert!(any_scheduled, "some future week shows its scheduled launches");
    let last = accepted(&app, "/launches/weeks/last").await;
    let snapped = accepted(&app, &format!("/launches/weeks/{}", date_in_week(last["week"].as_str().unwrap()))).await;
    assert_eq!(snapped["week"], last["week"], "a date snaps to its Monday");
    refused(&app, "/launches/weeks/2026-13-01", "week").await;
    refused(&app, "/launches/weeks/soon", "week").await;
    refused(&app, "/launches/weeks/2026-11-221", "week").await;
    assert_eq!(json(&app, "/launches/weeks/2026-02-30").await.0, 404, "shaped as the pattern says, but no day");
    assert_eq!(json(&app, "/launches/weeks/1999-06-01").await.0, 404);
    assert_eq!(json(&app, "/launches/weeks/2099-06-01").await.0, 404);
}

/// Thursday of the week that starts on `monday`.
fn date_in_week(monday: &str) -> String {
    let d = chrono::NaiveDate::parse_from_str(monday, "%Y-%m-%d").unwrap() + chrono::Duration::days(3);
    d.to_string()
}

async fn futures_any(app: &TestApp) -> bool {
    for n in 1..=8 {
        let monday = domain::week::LaunchWeek::of(chrono::Utc::now()).plus_weeks(n).to_string();
        if !accepted(app, &format!("/launches/weeks/{monday}")).await["scheduled"].as_array().unwrap().is_empty() {
            return true;
        }
    }
    false
}

#[tokio::test]
async fn the_five_leaderboards() {
    let app = demo().await;
    for board in ["community-weekly", "community-all-time", "billboard", "domain-rating", "revenue"] {
        let b = accepted(&app, &format!("/leaderboards/{board}")).await;
        let items = b["items"].as_array().unwrap();
        assert!(!items.is_empty(), "{board} has items");
        let values: Vec<i64> = items.iter().map(|i| i["metric"]["value"].as_i64().unwrap()).collect();
        assert!(values.windows(2).all(|w| w[0] >= w[1]), "{board} ranked by its metric");
        let ranks: Vec<u64> = items.iter().map(|i| i["rank"].as_u64().unwrap()).collect();
        assert_eq!(ranks, (1..=ranks.len() as u64).collect::<Vec<_>>());
        let paid = board == "billboard";
        assert_eq!(b["paid"], paid, "{board}");
        assert!(items.iter().all(|i| i["paid"] == paid), "{board}: every billboard item is marked paid, no other");
    }
    let last = accepted(&app, "/leaderboards/community-weekly?week=last").await;
    assert!(last["week"].is_string());
    let page2 = accepted(&app, "/leaderboards/community-all-time?page=2&per_page=5").await;
    assert_eq!(page2["items"][0]["rank"], 6, "ranks continue across pages");
    assert_eq!(json(&app, "/leaderboards/most-hyped").await.0, 404);
    // Only the weekly board has weeks: another board has no such edition.
    let (status, body) = json(&app, "/leaderboards/billboard?week=last").await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")), "{body}");
    refused(&app, "/leaderboards/community-weekly?week=someday", "week").await;
    refused(&app, "/leaderboards/revenue?per_page=101", "per_page").await;
}

#[tokio::test]
async fn the_openapi_document_covers_every_route() {
    let app = demo().await;
    let doc = accepted(&app, "/openapi.json").await;
    let ids: Vec<String> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values().map(|op| op["operationId"].as_str().unwrap().to_owned()))
        .collect();
    let mut want: Vec<String> = operations::registry().iter().map(|o| o.id.to_owned()).collect();
    let mut got = ids.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert!(doc["paths"]["/listings/{slug}"]["get"]["responses"]["404"].is_object());
}

#[tokio::test]
async fn blog_founders_and_awards() {
    let app = demo().await;
    let posts = accepted(&app, "/blog").await;
    assert_eq!(posts["pagination"]["total"], 13);
    let first = posts["items"][0]["slug"].as_str().unwrap().to_owned();
    let post = accepted(&app, &format!("/blog/{first}")).await;
    assert!(post["body_markdown"].as_str().unwrap().len() > 300 && !post["faqs"].as_array().unwrap().is_empty());
    assert_eq!(post["slug"], first.as_str());
    assert!(accepted(&app, "/blog?q=billboard").await["pagination"]["total"].as_u64().unwrap() >= 1);
    accepted(&app, &format!("/blog?q={}", "b".repeat(200))).await;
    refused(&app, &format!("/blog?q={}", "b".repeat(201)), "q").await;
    assert_eq!(json(&app, "/blog/no-such-post").await.0, 404);

    let founders = accepted(&app, "/founders?per_page=100").await;
    assert!(founders["pagination"]["total"].as_u64().unwrap() >= 60);
    let f = &founders["items"][0];
    let one = accepted(&app, &format!("/founders/{}", f["slug"].as_str().unwrap())).await;
    assert!(!one["companies"].as_array().unwrap().is_empty() && one["bio"].is_string());
    let mut storied = 0;
    for item in founders["items"].as_array().unwrap().iter().take(40) {
        let full = accepted(&app, &format!("/founders/{}", item["slug"].as_str().unwrap())).await;
        storied += usize::from(!full["stories"].as_array().unwrap().is_empty());
    }
    assert!(storied > 0, "founders publish stories");
    accepted(&app, &format!("/founders?q={}", "n".repeat(120))).await;
    refused(&app, &format!("/founders?q={}", "n".repeat(121)), "q").await;
    refused(&app, "/founders?country=IRL", "country").await;
    let ie = accepted(&app, "/founders?country=ie").await;
    assert!(ie["items"].as_array().unwrap().iter().all(|f| f["country"] == "IE"));
    assert_eq!(json(&app, "/founders/nobody-at-all").await.0, 404);

    let awards = accepted(&app, "/awards?per_page=100").await;
    let items = awards["items"].as_array().unwrap();
    assert!(items.len() >= 48);
    assert!(items.iter().all(|a| a["title"].as_str().unwrap().starts_with("Launch of the Week #")));
    let winner = items[0]["listing"]["slug"].as_str().unwrap();
    let own = accepted(&app, &format!("/awards?listing={winner}")).await;
    assert!(own["items"].as_array().unwrap().iter().all(|a| a["listing"]["slug"] == winner));
    let profile = accepted(&app, &format!("/listings/{winner}")).await;
    assert!(!profile["awards"].as_array().unwrap().is_empty(), "the winner's profile shows the award");
    assert_eq!(accepted(&app, "/awards?listing=not-a-listing").await["pagination"]["total"], 0);
    refused(&app, "/awards?listing=Not_A_Slug", "listing").await;
}

#[tokio::test]
async fn alternatives_and_compare() {
    let app = demo().await;
    let slugs = live_slugs(&app, 50).await;
    let alts = accepted(&app, &format!("/listings/{}/alternatives", slugs[0])).await;
    let items = alts["items"].as_array().unwrap();
    assert!(!items.is_empty() && items.len() <= 20);
    assert!(items.iter().all(|i| i["listing"]["slug"] != slugs[0].as_str()), "never the listing itself");
    let approved: Vec<bool> = items.iter().map(|i| i["approved"].as_bool().unwrap()).collect();
    assert!(approved.windows(2).all(|w| w[0] >= w[1]), "approved ones first");
    assert_eq!(json(&app, "/listings/no-such-listing/alternatives").await.0, 404);

    // Find two listings where one states its founding year and the other does not.
    let mut pair = None;
    'outer: for a in &slugs {
        let pa = accepted(&app, &format!("/listings/{a}")).await;
        for b in &slugs {
            let pb = accepted(&app, &format!("/listings/{b}")).await;
            if pa["founded_year"].is_i64() && pb["founded_year"].is_null() {
                pair = Some((a.clone(), b.clone(), pa["founded_year"].clone()));
                break 'outer;
            }
        }
    }
    let (a, b, year) = pair.expect("the demo has listings with and without a founding year");
    let cmp = accepted(&app, &format!("/compare?a={a}&b={b}")).await;
    assert_eq!(cmp["a"]["slug"], a.as_str());
    let row = cmp["rows"].as_array().unwrap().iter().find(|r| r["attribute"] == "founded_year").unwrap();
    assert_eq!(row["a"], year);
    assert!(row["b"].is_null(), "a fact the listing does not state is an empty cell, never a guess");
    assert!(!cmp["categories"].as_array().unwrap().is_empty());
    refused(&app, &format!("/compare?a={a}"), "b").await;
    refused(&app, &format!("/compare?a=Bad_Slug&b={b}"), "a").await;
    assert_eq!(json(&app, &format!("/compare?a={a}&b=no-such-listing")).await.0, 404);
}

#[tokio::test]
async fn badges_list_embed_code_and_every_image_renders() {
    let app = demo().await;
    let awards = accepted(&app, "/awards?per_page=1").await;
    let winner = awards["items"][0]["listing"]["slug"].as_str().unwrap().to_owned();
    let badges = accepted(&app, &format!("/listings/{winner}/badges?shape=pill&mode=dark&size=l")).await;
    let items = badges["items"].as_array().unwrap();
    let keys: Vec<&str> = items.iter().map(|b| b["key"].as_str().unwrap()).collect();
    assert!(keys.contains(&"listed-on") && keys.contains(&"launched-on"));
    assert!(keys.iter().any(|k| k.starts_with("launch-of-the-week-")), "the winner shows its award: {keys:?}");
    let page = format!("{}/listings/{winner}", app.base);
    let mut fetched = 0;
    for b in items {
        assert!(b["image_url"].as_str().unwrap().contains("shape=pill&mode=dark&size=l"));
        let embed = b["embed_html"].as_str().unwrap();
        assert!(embed.starts_with(&format!("<a href=\"{page}\"")) && embed.contains("<img src="));
        let images = b["images"].as_array().unwrap();
        assert_eq!(images.len(), 5 * 3 * 3, "every shape, mode and size");
        for img in images {
            let r = app.client.get(img["url"].as_str().unwrap()).send().await.unwrap();
            assert_eq!(r.status(), 200, "{}", img["url"]);
            assert_eq!(r.headers()["content-type"], "image/svg+xml");
            let svg = r.text().await.unwrap();
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
            assert_eq!(svg.contains("prefers-color-scheme"), img["mode"] == "auto");
            fetched += 1;
        }
    }
    assert!(fetched >= 3 * 45);

    let plain = accepted(&app, &format!("/listings/{winner}/badges")).await;
    assert!(plain["items"][0]["image_url"].as_str().unwrap().contains("shape=standard&mode=auto&size=m"), "defaults");
    refused(&app, &format!("/listings/{winner}/badges?shape=hexagon"), "shape").await;
    refused(&app, &format!("/listings/{winner}/badges?size=xl"), "size").await;
    assert_eq!(json(&app, "/listings/no-such-listing/badges").await.0, 404);
    let img = |path: String| {
        let url = format!("{}{path}", app.base);
        let client = app.client.clone();
        async move { client.get(url).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(img(format!("/badges/{winner}/rocket.svg")).await, 404);
    assert_eq!(img("/badges/no-such-listing/listed-on.svg".to_owned()).await, 404);
    assert_eq!(img(format!("/badges/{winner}/listed-on.svg?mode=neon")).await, 400);
    // A listing that is not featured has no featured badge image.
    let listed = accepted(&app, "/listings?per_page=100").await;
    let mut refused_one = false;
    for item in listed["items"].as_array().unwrap() {
        let s = item["slug"].as_str().unwrap();
        let b = accepted(&app, &format!("/listings/{s}/badges")).await;
        if !b["items"].as_array().unwrap().iter().any(|x| x["key"] == "featured") {
            assert_eq!(img(format!("/badges/{s}/featured.svg")).await, 404);
            refused_one = true;
            break;
        }
    }
    assert!(refused_one);
}

#[tokio::test]
async fn the_reference_page_is_served_offline() {
    let app = spawn_app(false).await;
    app.wait_ready().await;
    let r = app.get("/api/v1/docs").await;
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = r.text().await.unwrap();
    assert!(html.contains("id=\"search_listings\"") && html.contains("/openapi.json"));
    assert!(!html.contains("<script") && !html.contains("<link"), "no script and nothing fetched from elsewhere");
}
