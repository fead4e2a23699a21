//! My listings through the REST API: a listing taken from a saved draft to live on the free plan (the
//! badge placed on a fixture homepage, weeks driven by `admin run-jobs --now`), the awards of a driven
//! week, every update_my_listing bound at its edge, the version history, sections, owners and scopes.

use crate::drafts::key_for;
use crate::helpers::{TestApp, cli, spawn_app_configured};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use domain::user::Scope::{AccountRead, ListingsWrite};
use serde_json::{Value, json};
use test_support::FixtureSite;

const PUBLIC: &str = "https://launchdir.example";

pub(crate) async fn call(app: &TestApp, method: &str, path: &str, key: &str, body: Option<Value>) -> (u16, Value) {
    let url = format!("{}/api/v1{path}", app.base);
    let mut req = match method {
        "GET" => app.client.get(url),
        "POST" => app.client.post(url),
        "PATCH" => app.client.patch(url),
        "PUT" => app.client.put(url),
        "DELETE" => app.client.delete(url),
        _ => unreachable!(),
    }
    .header("Authorization", format!("Bearer {key}"));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// A copy of the acme-rockets fixture site the test can edit, and the server reading it.
struct Setup {
    app: TestApp,
    site: FixtureSite,
    site_dir: std::path::PathBuf,
    key: String,
    other: String,
    reader: String,
}

async fn setup() -> Setup {
    let db = test_support::sqlite();
    let site_dir = db.sqlite_dir().unwrap().join("site");
    test_support::copy_site("acme-rockets", &site_dir);
    let site = FixtureSite::serve_dir(site_dir.clone(), "http://127.0.0.1:9").await;
    let key = key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite]).await;
    let other = key_for(&db.url, "bob@other.example", &[AccountRead, ListingsWrite]).await;
    let reader = key_for(&db.url, "ann@acme.example", &[AccountRead]).await;
    let allowed = site.host_port();
    let app = spawn_app_configured(db, false, move |a| {
        a.outbound.crawler_allowed_hosts = vec![allowed];
        a.read_cache_secs = 0;
        a.public_url = Some(PUBLIC.into());
    })
    .await;
    app.wait_ready().await;
    Setup { app, site, site_dir, key, other, reader }
}

/// Submits the fixture site and saves its draft as a listing; returns the listing id.
async fn saved_listing(s: &Setup) -> i64 {
    saved_listing_with(s, None).await
}

/// As [`saved_listing`], applying `edit` (an update_draft body) to the ready draft first.
async fn saved_listing_with(s: &Setup, edit: Option<Value>) -> i64 {
    let (st, d) = call(&s.app, "POST", "/drafts", &s.key, Some(json!({"url": s.site.url()}))).await;
    assert_eq!(st, 201, "{d}");
    let id = d["id"].as_str().unwrap().to_owned();
    for _ in 0..200 {
        let (_, d) = call(&s.app, "GET", &format!("/drafts/{id}"), &s.key, None).await;
        if d["status"] == "ready" {
            break;
        }
        assert_ne!(d["status"], "failed", "{d}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    if let Some(body) = edit {
        let (st, d) = call(&s.app, "PATCH", &format!("/drafts/{id}"), &s.key, Some(body)).await;
        assert_eq!(st, 200, "{d}");
    }
    let (st, saved) = call(&s.app, "POST", &format!("/drafts/{id}/submit"), &s.key, None).await;
    assert_eq!((st, saved["created"].as_bool()), (200, Some(true)), "{saved}");
    saved["listing_id"].as_i64().unwrap()
}

/// `admin run-jobs --now at`, off the test's runtime so the server keeps answering meanwhile.
async fn run_jobs(s: &Setup, at: DateTime<Utc>) -> String {
    let (allowed, now) = (s.site.host_port(), at.to_rfc3339());
    let out = cli(
        &s.app.db.url,
        &["admin", "run-jobs", "--crawler-allowed-hosts", &allowed, "--public-url", PUBLIC, "--now", &now],
    )
    .await;
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    stdout.into_owned()
}

fn monday(v: &Value) -> NaiveDate {
    NaiveDate::parse_from_str(v.as_str().unwrap(), "%Y-%m-%d").unwrap()
}

#[tokio::test]
async fn a_free_listing_goes_live_through_the_badge_and_the_weeks_and_wins_by_votes() {
    let s = setup().await;
    let id = saved_listing(&s).await;
    let (st, mine) = call(&s.app, "GET", &format!("/me/listings/{id}"), &s.key, None).await;
    assert_eq!(st, 200, "{mine}");
    assert_eq!(
        (mine["status"].as_str(), mine["plan"].as_str(), mine["public"].as_bool()),
        (Some("draft"), Some("none"), Some(false))
    );
    let slug = mine["slug"].as_str().unwrap().to_owned();
    assert_eq!(call(&s.app, "GET", &format!("/listings/{slug}"), &s.key, None).await.0, 404, "not public yet");
    // Someone else's listing is as unknown as a missing one; a read-only key cannot choose a plan.
    assert_eq!(call(&s.app, "GET", &format!("/me/listings/{id}"), &s.other, None).await.0, 404);
    assert_eq!(call(&s.app, "POST", &format!("/me/listings/{id}/free"), &s.other, None).await.0, 404);
    assert_eq!(call(&s.app, "POST", &format!("/me/listings/{id}/free"), &s.reader, None).await.0, 403);

    // The free plan: a Monday 6 to 8 weeks out, waiting for our badge.
    let chosen_at = Utc::now();
    let (st, free) = call(&s.app, "POST", &format!("/me/listings/{id}/free"), &s.key, None).await;
    assert_eq!(st, 200, "{free}");
    assert_eq!((free["status"].as_str(), free["plan"].as_str()), (Some("awaiting_badge"), Some("free")));
    let week = monday(&free["launch_week"]);
    assert_eq!(week.format("%a").to_string(), "Mon");
    // The week and place promised before choosing are the ones the choice gives, and stay so.
    let promised = &mine["free_launch"];
    assert_eq!(free["free_launch"], *promised, "before: {promised}, after: {}", free["free_launch"]);
    assert_eq!(promised["week"], free["launch_week"]);
    assert!(promised["position"].as_i64().is_some_and(|p| p >= 1) && promised["capacity"].as_i64() > Some(0));
    let (_, later) = call(&s.app, "GET", &format!("/me/listings/{id}"), &s.key, None).await;
    assert_eq!(later["free_launch"], *promised);
    let days = (week.and_hms_opt(0, 0, 0).unwrap().and_utc() - chosen_at).num_days();
    assert!((41..=56).contains(&days), "{week} is {days} days out");
    let badge = &free["badge"];
    let link = format!("{PUBLIC}/listings/{slug}");
    assert_eq!(badge["link_url"], link.as_str());
    assert!(badge["embed_html"].as_str().unwrap().contains(&format!("href=\"{link}\"")), "{badge}");
    // The badge image answers before the launch (the maker places it first).
    let img = badge["image_url"].as_str().unwrap().replace(PUBLIC, &s.app.base);
    let r = s.app.client.get(&img).send().await.unwrap();
    assert_eq!((r.status().as_u16(), r.headers()["content-type"].to_str().unwrap()), (200, "image/svg+xml"));
    // Illegal moves are 409s naming the status.
    let (st, again) = call(&s.app, "POST", &format!("/me/listings/{id}/free"), &s.key, None).await;
    assert_eq!(st, 409, "{again}");
    assert!(again["error"]["message"].as_str().unwrap().contains("awaiting_badge"), "{again}");

    // The server's worker looks at once: no badge yet, and the maker can read what it saw.
    let mut last = Value::Null;
    for _ in 0..200 {
        let (_, m) = call(&s.app, "GET", &format!("/me/listings/{id}"), &s.key, None).await;
        last = m["badge"]["last_check"].clone();
        if !last.is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(last["found"].is_null(), "{last}");
    assert!(last["detail"].as_str().unwrap().contains("no link to"), "{last}");

    // The maker places the badge (a hidden one would not count); the next check, 6 hours on, finds it.
    let index = s.site_dir.join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();
    std::fs::write(&index, html.replace("</body>", &format!("{}\n</body>", badge["embed_html"].as_str().unwrap())))
        .unwrap();
    let out = run_jobs(&s, chosen_at + Duration::hours(7)).await;
    assert!(out.contains("ran 1 job"), "{out}");
    let (_, m) = call(&s.app, "GET", &format!("/me/listings/{id}"), &s.key, None).await;
    assert_eq!(m["status"], "scheduled", "{m}");
    let week_path = format!("/launches/weeks/{week}");
    let (_, w) = call(&s.app, "GET", &week_path, &s.key, None).await;
    assert!(w["scheduled"].to_string().contains(&slug), "a future week shows its scheduled launches: {w}");
    assert!(!w["launches"].to_string().contains(&slug), "but not as a live launch: {w}");
    let (_, found) = call(&s.app, "GET", "/listings?q=rockets&per_page=100", &s.key, None).await;
    assert!(!found.to_string().contains(&slug), "not searchable before it is live");

    // Go-live when the week begins (not a minute before).
    let start = week.and_hms_opt(0, 0, 0).unwrap().and_utc();
    run_jobs(&s, start - Duration::minutes(1)).await;
    assert_eq!(call(&s.app, "GET", &format!("/me/listings/{id}"), &s.key, None).await.1["status"], "scheduled");
    let out = run_jobs(&s, start + Duration::minutes(1)).await;
    assert!(out.contains("calendar: 1 change"), "{out}");
    let (st, public) = call(&s.app, "GET", &format!("/listings/{slug}"), &s.key, None).await;
    assert_eq!(st, 200, "{public}");
    let (_, found) = call(&s.app, "GET", "/listings?q=rockets&per_page=100", &s.key, None).await;
    assert!(found.to_string().contains(&slug), "searchable once live: {found}");
    let (_, w) = call(&s.app, "GET", &week_path, &s.key, None).await;
    assert!(w["launches"].to_string().contains(&slug), "a live launch of its week: {w}");
    assert!(!w["scheduled"].to_string().contains(&slug), "{w}");

    // Three more launches that week and votes cast in it: the awards follow the week's vote order.
    let app = bootstrap::App::connect(&s.app.db.url).await.unwrap();
    let mut ids = vec![domain::ids::ListingId::from_db(id)];
    for name in ["Alpha", "Bravo", "Charlie"] {
        let mut new = domain::listing::NewListing {
            slug: domain::slug::Slug::parse(name.to_lowercase()).unwrap(),
            profile: domain::listing::ListingProfile::named(
                name,
                format!("https://{name}.example"),
                format!("{name}.example"),
            ),
            lifecycle: domain::listing::Lifecycle::saved(),
            categories: None,
            unlocked: Default::default(),
            featured: false,
            verified: false,
            domain_rating: None,
            revenue: None,
            created_at: start,
        };
        new.lifecycle.paid_launch(None, start).unwrap();
        let l = domain::ports::ListingRepository::create_listing(app.store.as_ref(), new).await.unwrap();
        ids.push(l.id);
    }
    let votes = [3, 5, 1, 0]; // ours, Alpha, Bravo, Charlie
    let mut voter = 0;
    for (listing, n) in ids.iter().zip(votes) {
        for _ in 0..n {
            voter += 1;
            let u = operations::accounts::create_user(
                &app,
                &format!("v{voter}@voters.example"),
                "correct horse 1",
                "",
                false,
            )
            .await
            .unwrap();
            let v = domain::engagement::Vote::plain(*listing, u.id, start + Duration::hours(voter));
            assert!(domain::ports::OwnListingRepository::cast_vote(app.store.as_ref(), &v).await.unwrap().counted());
        }
    }
    let out = run_jobs(&s, start + Duration::days(7) + Duration::minutes(5)).await;
    assert!(out.contains("calendar: 1 change"), "the week ended: {out}");
    assert!(
        run_jobs(&s, start + Duration::days(7) + Duration::minutes(6)).await.contains("calendar: 0 change"),
        "awarded once"
    );
    let (_, awards) = call(&s.app, "GET", "/awards", &s.key, None).await;
    let got: Vec<(i64, String)> = awards["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["rank"].as_i64().unwrap(), a["listing"]["slug"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(got, vec![(1, "alpha".to_owned()), (2, slug.clone()), (3, "bravo".to_owned())], "{awards}");
    let (_, profile) = call(&s.app, "GET", &format!("/listings/{slug}"), &s.key, None).await;
    assert_eq!(profile["awards"], json!([{"week": week.to_string(), "rank": 2}]));
    let (_, badges) = call(&s.app, "GET", &format!("/listings/{slug}/badges"), &s.key, None).await;
    assert!(badges.to_string().contains("launch-of-the-week-2"), "{badges}");
}

#[tokio::test]
async fn update_my_listing_bounds_history_and_sections() {
    let s = setup().await;
    let id = saved_listing(&s).await;
    let path = format!("/me/listings/{id}");
    let patch = |fields: Value| Some(json!({ "fields": fields }));
    // Every bound at its edge: the max passes, max+1 is a 400 naming the field.
    let text = [
        ("tagline", 200),
        ("short_description", 300),
        ("description", 20000),
        ("pricing_model", 40),
        ("pricing_summary", 300),
        ("city", 120),
        ("headline", 200),
        ("summary", 20000),
        ("seo_title", 200),
        ("seo_description", 320),
    ];
    for (field, max) in text {
        let (st, body) = call(&s.app, "PATCH", &path, &s.key, patch(json!({ field: "x".repeat(max) }))).await;
        assert_eq!(st, 200, "{field} at {max}: {body}");
        let (st, body) = call(&s.app, "PATCH", &path, &s.key, patch(json!({ field: "x".repeat(max + 1) }))).await;
        assert_eq!(st, 400, "{field} at {}: {body}", max + 1);
        assert_eq!(body["error"]["details"][0]["field"], format!("fields.{field}"), "{body}");
    }
    let url = format!("https://v.example/{}", "v".repeat(500 - 18));
    assert_eq!(url.chars().count(), 500);
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, patch(json!({"demo_video_url": url}))).await.0, 200);
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, patch(json!({"demo_video_url": format!("{url}v")}))).await.0, 400);
    let email =
        |c: usize| format!("{}@{}.{}.{}.example", "e".repeat(64), "a".repeat(60), "b".repeat(60), "c".repeat(c));
    assert_eq!(email(59).len(), 254);
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, patch(json!({"contact_email": email(59)}))).await.0, 200);
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, patch(json!({"contact_email": email(60)}))).await.0, 400);
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, patch(json!({"contact_email": "not an address"}))).await.0, 400);
    for (year, want) in [(1800, 200), (2100, 200), (1799, 400), (2101, 400)] {
        assert_eq!(call(&s.app, "PATCH", &path, &s.key, patch(json!({"founded_year": year}))).await.0, want, "{year}");
    }
    for (country, want) in [("IE", 200), ("USA", 400), ("I", 400)] {
        assert_eq!(call(&s.app, "PATCH", &path, &s.key, patch(json!({"country": country}))).await.0, want, "{country}");
    }
    for list in ["features", "usps", "keywords"] {
        let ok = vec!["f".repeat(200); 20];
        assert_eq!(call(&s.app, "PATCH", &path, &s.key, patch(json!({ list: ok }))).await.0, 200, "{list}");
        let (st, b) = call(&s.app, "PATCH", &path, &s.key, patch(json!({ list: vec!["f"; 21] }))).await;
        assert_eq!(
            (st, b["error"]["details"][0]["field"].as_str()),
            (400, Some(format!("fields.{list}").as_str())),
            "{b}"
        );
        assert_eq!(
            call(&s.app, "PATCH", &path, &s.key, patch(json!({ list: ["f".repeat(201)] }))).await.0,
            400,
            "{list}"
        );
    }
    let faq = json!({"question": "q".repeat(300), "answer": "a".repeat(1500)});
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, Some(json!({"faqs": vec![faq.clone(); 10]}))).await.0, 200);
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, Some(json!({"faqs": vec![faq; 11]}))).await.0, 400);
    let link = format!("https://x.example/{}", "l".repeat(500 - 18));
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, Some(json!({"socials": {"x": link}}))).await.0, 200);
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, Some(json!({"socials": {"x": format!("{link}l")}}))).await.0, 400);
    assert_eq!(
        call(&s.app, "PATCH", &path, &s.key, Some(json!({"socials": {"myspace": "https://m.example"}}))).await.0,
        400
    );
    let (st, b) = call(&s.app, "PATCH", &path, &s.key, patch(json!({"name": "Renamed"}))).await;
    assert_eq!(
        (st, b["error"]["details"][0]["field"].as_str()),
        (400, Some("fields.name")),
        "unknown keys are refused: {b}"
    );
    assert_eq!(call(&s.app, "PATCH", &path, &s.key, Some(json!({"color": "red"}))).await.0, 400);
    assert_eq!(call(&s.app, "PATCH", &path, &s.other, patch(json!({"tagline": "mine"}))).await.0, 404);
    assert_eq!(call(&s.app, "PATCH", &path, &s.reader, patch(json!({"tagline": "mine"}))).await.0, 403);

    // Edits publish at once and every one is kept with its before/after copy.
    let (st, edited) =
        call(&s.app, "PATCH", &path, &s.key, patch(json!({"tagline": "Cats in orbit", "city": null}))).await;
    assert_eq!(st, 200, "{edited}");
    assert_eq!(
        (edited["profile"]["tagline"].as_str(), edited["profile"]["city"].as_str()),
        (Some("Cats in orbit"), Some(""))
    );
    let (ok, out, err) = crate::helpers::run(&s.app.db, &["admin", "listing-history", &id.to_string()]);
    assert!(ok, "{err}");
    assert!(out.contains("tagline:") && out.contains("after:  \"Cats in orbit\""), "{out}");
    let store = bootstrap::App::connect(&s.app.db.url).await.unwrap();
    let versions = domain::ports::OwnListingRepository::listing_versions(
        store.store.as_ref(),
        domain::ids::ListingId::from_db(id),
    )
    .await
    .unwrap();
    let last = versions.last().unwrap();
    let (before, after): (Value, Value) =
        (serde_json::from_str(&last.before).unwrap(), serde_json::from_str(&last.after).unwrap());
    assert_eq!(after["tagline"], "Cats in orbit");
    assert_ne!(before["tagline"], after["tagline"]);
    assert_eq!(after["city"], "");
    let count = versions.len();
    call(&s.app, "PATCH", &path, &s.key, patch(json!({"tagline": "Cats in orbit"}))).await;
    let again = domain::ports::OwnListingRepository::listing_versions(
        store.store.as_ref(),
        domain::ids::ListingId::from_db(id),
    )
    .await
    .unwrap();
    assert_eq!(again.len(), count, "an edit that changes nothing is not a version");

    // Updates, milestones, the story and the interview.
    let up = format!("{path}/updates");
    let (st, posted) =
        call(&s.app, "POST", &up, &s.key, Some(json!({"title": "t".repeat(200), "body": "b".repeat(5000)}))).await;
    assert_eq!(st, 201, "{posted}");
    assert_eq!(call(&s.app, "POST", &up, &s.key, Some(json!({"title": "t".repeat(201), "body": "b"}))).await.0, 400);
    assert_eq!(call(&s.app, "POST", &up, &s.key, Some(json!({"title": "t", "body": "b".repeat(5001)}))).await.0, 400);
    assert_eq!(call(&s.app, "POST", &up, &s.key, Some(json!({"title": "t"}))).await.0, 400);
    let ms = format!("{path}/milestones");
    let (st, m) = call(
        &s.app,
        "POST",
        &ms,
        &s.key,
        Some(json!({"date": "2026-01-31", "title": "Launched", "url": "https://acme.example/news"})),
    )
    .await;
    assert_eq!(st, 201, "{m}");
    let mid = m["id"].as_i64().unwrap();
    assert_eq!(call(&s.app, "POST", &ms, &s.key, Some(json!({"date": "2026-02-30", "title": "x"}))).await.0, 400);
    assert_eq!(
        call(&s.app, "POST", &ms, &s.key, Some(json!({"date": "2026-02-01", "title": "x", "url": "http://a.example"})))
            .await
            .0,
        400
    );
    for n in 1..50 {
        assert_eq!(
            call(&s.app, "POST", &ms, &s.key, Some(json!({"date": "2026-02-01", "title": format!("m{n}")}))).await.0,
            201
        );
    }
    let (st, full) = call(&s.app, "POST", &ms, &s.key, Some(json!({"date": "2026-02-01", "title": "51st"}))).await;
    assert_eq!(st, 409, "50 milestones at most: {full}");
    assert_eq!(call(&s.app, "DELETE", &format!("{ms}/{mid}"), &s.other, None).await.0, 404);
    assert_eq!(call(&s.app, "DELETE", &format!("{ms}/{mid}"), &s.key, None).await.0, 200);
    assert_eq!(call(&s.app, "DELETE", &format!("{ms}/{mid}"), &s.key, None).await.0, 404);
    let story = format!("{path}/story");
    let (st, saved) =
        call(&s.app, "PUT", &story, &s.key, Some(json!({"title": "t".repeat(200), "story": "s".repeat(8000)}))).await;
    assert_eq!(st, 200, "{saved}");
    assert_eq!(saved["public"], false, "a free listing's story is not public unless unlocked");
    let (st, b) = call(&s.app, "PUT", &story, &s.key, Some(json!({"title": "t".repeat(201)}))).await;
    assert_eq!((st, b["error"]["details"][0]["field"].as_str()), (400, Some("title")), "{b}");
    assert_eq!(call(&s.app, "PUT", &story, &s.key, Some(json!({"lessons": "l".repeat(8001)}))).await.0, 400);
    let (_, mine) = call(&s.app, "GET", &path, &s.key, None).await;
    assert_eq!(mine["profile"]["milestones"].as_array().unwrap().len(), 49, "the owner sees every section");
    assert_eq!(mine["profile"]["story"]["title"].as_str().map(str::len), Some(200));
    let answers: Vec<Value> = (1..=10).map(|q| json!({"question_id": q, "answer": "a".repeat(4000)})).collect();
    let (st, ok) = call(&s.app, "PUT", "/me/interview", &s.key, Some(json!({"answers": answers}))).await;
    assert_eq!((st, ok["saved"].as_u64()), (200, Some(10)), "{ok}");
    let (st, b) =
        call(&s.app, "PUT", "/me/interview", &s.key, Some(json!({"answers": [{"question_id": 999, "answer": "x"}]})))
            .await;
    assert_eq!((st, b["error"]["details"][0]["field"].as_str()), (400, Some("answers[0].question_id")), "{b}");
    let many: Vec<Value> = (0..31).map(|_| json!({"question_id": 1, "answer": "x"})).collect();
    assert_eq!(call(&s.app, "PUT", "/me/interview", &s.key, Some(json!({"answers": many}))).await.0, 400);
    assert_eq!(
        call(
            &s.app,
            "PUT",
            "/me/interview",
            &s.key,
            Some(json!({"answers": [{"question_id": 1, "answer": "a".repeat(4001)}]}))
        )
        .await
        .0,
        400
    );
    let (st, list) = call(&s.app, "GET", "/me/listings", &s.key, None).await;
    assert_eq!((st, list["pagination"]["total"].as_u64()), (200, Some(1)), "{list}");
    assert_eq!(call(&s.app, "GET", "/me/listings", &s.other, None).await.1["pagination"]["total"], 0);
    assert_eq!(call(&s.app, "GET", "/me/listings?per_page=101", &s.key, None).await.0, 400);
}

#[tokio::test]
async fn followers_are_told_of_updates_through_the_outbox() {
    let s = setup().await;
    let id = saved_listing(&s).await;
    let app = bootstrap::App::connect(&s.app.db.url).await.unwrap();
    let fan =
        operations::accounts::create_user(&app, "fan@people.example", "correct horse 1", "", false).await.unwrap();
    let lid = domain::ids::ListingId::from_db(id);
    assert!(app.store.follow(lid, fan.id, Utc::now()).await.unwrap());
    assert!(!app.store.follow(lid, fan.id, Utc::now()).await.unwrap(), "once");
    let (st, posted) = call(
        &s.app,
        "POST",
        &format!("/me/listings/{id}/updates"),
        &s.key,
        Some(json!({"title": "v2 is out", "body": "Faster rockets."})),
    )
    .await;
    assert_eq!((st, posted["followers_notified"].as_u64()), (201, Some(1)), "{posted}");
    let mut out = String::new();
    for _ in 0..100 {
        out = crate::helpers::run(&s.app.db, &["admin", "outbox", "--to", "fan@people.example"]).1;
        if out.contains("v2 is out") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(out.contains("Subject: Acme") || out.contains("v2 is out"), "{out}");
    assert!(out.contains("Faster rockets.") && out.contains(&format!("{PUBLIC}/listings/")), "{out}");
    assert!(app.store.unfollow(lid, fan.id).await.unwrap());
    let (_, posted) = call(
        &s.app,
        "POST",
        &format!("/me/listings/{id}/updates"),
        &s.key,
        Some(json!({"title": "v3", "body": "More."})),
    )
    .await;
    assert_eq!(posted["followers_notified"], 0);
}

#[tokio::test]
async fn the_drafts_story_and_milestones_become_the_listings() {
    let s = setup().await;
    let edit = json!({
        "story": {"title": "Why cats", "problem": "Cats could not reach orbit."},
        "milestones": [{"date": "2025-05-01", "title": "First launch"}],
    });
    let id = saved_listing_with(&s, Some(edit)).await;
    let (_, mine) = call(&s.app, "GET", &format!("/me/listings/{id}"), &s.key, None).await;
    assert_eq!(mine["profile"]["story"]["problem"], "Cats could not reach orbit.", "{mine}");
    let ms = mine["profile"]["milestones"].as_array().unwrap();
    assert_eq!((ms.len(), ms[0]["title"].as_str()), (1, Some("First launch")));
}

/// The free queue's weekly capacity against listings queued all at once: each chose its week on counts
/// read before any of them had moved, so a week took more than its capacity. The store now counts the
/// week again as it moves a listing in, one move into a week at a time.
#[tokio::test]
async fn listings_queued_for_free_all_at_once_do_not_overfill_a_week() {
    for db in [Some(test_support::sqlite()), test_support::postgres().await].into_iter().flatten() {
        let app = spawn_app_configured(db, false, |a| a.read_cache_secs = 0).await;
        app.wait_ready().await;
        let key = key_for(&app.db.url, "queue@makers.example", &[AccountRead, ListingsWrite]).await;
        let store = bootstrap::App::connect(&app.db.url).await.unwrap();
        // Two free launches a week over the window of weeks 6 to 8 out (two or three weeks, by the day).
        domain::ports::SettingsRepository::set_setting(store.store.as_ref(), "free_plan_weekly_capacity", "2")
            .await
            .unwrap();
        let settings = domain::settings::SiteSettings::from_pairs([("free_plan_weekly_capacity", "2")]);
        let weeks = domain::own::free_window(Utc::now(), &settings).len();
        let mut ids = Vec::new();
        for n in 0..10 {
            let saved = domain::listing::Lifecycle::saved();
            ids.push(
                crate::orders::owned_listing_in(&store, &format!("Queued {n}"), "queue@makers.example", saved).await,
            );
        }
        let choices = ids.iter().map(|id| {
            let (app, key) = (&app, &key);
            async move { call(app, "POST", &format!("/me/listings/{id}/free"), key, None).await }
        });
        let answers = futures_util::future::join_all(choices).await;
        let queued: Vec<&Value> = answers.iter().filter(|(s, _)| *s == 200).map(|(_, b)| b).collect();
        assert_eq!(queued.len(), 2 * weeks, "{answers:?}");
        for (s, body) in answers.iter().filter(|(s, _)| *s != 200) {
            assert_eq!((*s, body["error"]["code"].as_str()), (409, Some("free_queue_full")), "{body}");
        }
        let mut per_week: std::collections::BTreeMap<String, usize> = Default::default();
        for b in &queued {
            *per_week.entry(b["launch_week"].to_string()).or_default() += 1;
        }
        assert_eq!(per_week.values().copied().collect::<Vec<_>>(), vec![2; weeks], "{per_week:?}");
    }
}
