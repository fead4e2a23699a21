//! Submit by URL through the REST API: a fixture site on loopback becomes a ready draft with evidence,
//! every update_draft bound at its edge, the field states, submit_draft and its listing, invites
//! through the outbox, Idempotency-Key, owners and scopes, and drafts that fail with a reason.

use crate::helpers::{TestApp, spawn_app_configured};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use test_support::FixtureSite;

pub(crate) struct Maker {
    pub(crate) app: TestApp,
    pub(crate) key: String,
    pub(crate) other_key: String,
    read_only_key: String,
}

pub(crate) async fn key_for(db_url: &str, email: &str, scopes: &[domain::user::Scope]) -> String {
    let app = bootstrap::App::connect(db_url).await.unwrap();
    app.start(false).await.unwrap();
    let parsed = domain::user::Email::parse(email).unwrap();
    let user = match domain::ports::UserRepository::user_by_email(app.store.as_ref(), &parsed).await.unwrap() {
        Some((u, _)) => u,
        None => operations::accounts::create_user(&app, email, "correct horse 1", "", false).await.unwrap(),
    };
    let (_, token) = operations::accounts::create_api_key(&app, user.id, "t", scopes).await.unwrap();
    token.as_str().to_owned()
}

pub(crate) async fn maker(allowed: Vec<String>) -> Maker {
    maker_on(test_support::sqlite(), allowed).await
}

/// [`maker`] on the database `db` (SQLite or PostgreSQL).
pub(crate) async fn maker_on(db: test_support::TestDatabase, allowed: Vec<String>) -> Maker {
    use domain::user::Scope::*;
    let key = key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite]).await;
    let other_key = key_for(&db.url, "bob@acme.example", &[AccountRead, ListingsWrite]).await;
    let read_only_key = key_for(&db.url, "ann@acme.example", &[AccountRead]).await;
    let app = spawn_app_configured(db, false, move |a| {
        a.outbound.crawler_allowed_hosts = allowed;
        a.read_cache_secs = 0;
    })
    .await;
    app.wait_ready().await;
    Maker { app, key, other_key, read_only_key }
}

impl Maker {
    pub(crate) async fn call(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<Value>,
        idem: Option<&str>,
    ) -> (u16, Value) {
        let url = format!("{}/api/v1{path}", self.app.base);
        let mut req = match method {
            "GET" => self.app.client.get(url),
            "POST" => self.app.client.post(url),
            "PATCH" => self.app.client.patch(url),
            _ => unreachable!(),
        }
        .header("Authorization", format!("Bearer {key}"));
        if let Some(b) = body {
            req = req.json(&b);
        }
        if let Some(k) = idem {
            req = req.header("Idempotency-Key", k);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn submit(&self, url: &str) -> String {
        let (s, d) = self.call("POST", "/drafts", &self.key, Some(json!({"url": url})), None).await;
        assert_eq!(s, 201, "{d}");
        assert_eq!(d["status"], "crawling");
        d["id"].as_str().unwrap().to_owned()
    }

    /// Polls get_draft until it leaves crawling/drafting; returns the draft and how long it took.
    pub(crate) async fn settle(&self, id: &str) -> (Value, Duration) {
        let started = Instant::now();
        loop {
            let (s, d) = self.call("GET", &format!("/drafts/{id}"), &self.key, None, None).await;
            assert_eq!(s, 200, "{d}");
            if d["status"] != "crawling" && d["status"] != "drafting" {
                return (d, started.elapsed());
            }
            assert!(started.elapsed() < Duration::from_secs(30), "the draft is stuck: {d}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn patch(&self, id: &str, body: Value) -> (u16, Value) {
        self.call("PATCH", &format!("/drafts/{id}"), &self.key, Some(body), None).await
    }
}

fn problem_field(body: &Value) -> String {
    body["error"]["details"][0]["field"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_url_becomes_a_ready_draft_with_evidence_and_blanks() {
    let site = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let mut took = Vec::new();
    let mut last = Value::Null;
    for _ in 0..10 {
        let id = m.submit(&site.url()).await;
        let (d, t) = m.settle(&id).await;
        took.push(t);
        last = d;
    }
    took.sort();
    let p95 = took[(took.len() * 95).div_ceil(100) - 1];
    println!(
        "draft ready: p50 {:?}, p95 {:?} over {} drafts (loopback site, extractive drafter)",
        took[took.len() / 2],
        p95,
        took.len()
    );
    let d = last;
    assert_eq!(d["status"], "ready", "{d}");
    assert_eq!(d["fields"]["name"]["value"], "Acme Rockets");
    assert_eq!(d["fields"]["name"]["state"], "ai");
    let quote = d["fields"]["founded_year"]["evidence"][0]["quote"].as_str().unwrap();
    assert!(quote.contains("2019"), "{quote}");
    assert_eq!(d["fields"]["stage"]["state"], "not_found");
    assert_eq!(d["fields"]["stage"]["value"], Value::Null);
    let not_found: Vec<&str> =
        d["not_found_on_website"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(not_found.contains(&"stage") && !not_found.contains(&"name"), "{not_found:?}");
    assert!(d["completeness"].as_u64().unwrap() > 50);
    assert!(!site.paths().iter().any(|p| p.starts_with("/private")));
    assert!(site.requests().iter().all(|r| r.user_agent.starts_with("launchdir/") && r.user_agent.contains("/bot")));
    // Listed newest first with status and completeness.
    let (s, list) = m.call("GET", "/drafts?per_page=3", &m.key, None, None).await;
    assert_eq!(s, 200);
    assert_eq!(list["items"].as_array().unwrap().len(), 3);
    assert_eq!(list["pagination"]["total"], 10);
    assert_eq!(list["items"][0]["id"], d["id"]);
    assert_eq!(list["items"][0]["completeness"], d["completeness"]);
}

#[tokio::test]
async fn drafts_fail_with_a_reason_a_person_understands() {
    let blocked = FixtureSite::serve("blocked", "http://127.0.0.1:9").await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let m = maker(vec![blocked.host_port(), format!("127.0.0.1:{closed}")]).await;
    let (d, _) = m.settle(&m.submit(&blocked.url()).await).await;
    assert_eq!(d["status"], "failed");
    assert!(d["failure_reason"].as_str().unwrap().contains("robots.txt"), "{d}");
    assert_eq!(blocked.paths(), ["/robots.txt"]);
    let (d, _) = m.settle(&m.submit(&format!("http://127.0.0.1:{closed}/")).await).await;
    assert_eq!(d["status"], "failed");
    assert!(d["failure_reason"].as_str().unwrap().contains("could not reach"), "{d}");
    // Not allowed: a private address is refused, and said so.
    let (d, _) = m.settle(&m.submit("http://10.0.0.1:8080/").await).await;
    assert_eq!(d["status"], "failed");
    assert!(d["failure_reason"].as_str().unwrap().contains("private network"), "{d}");
    // Malformed URLs are a 400 naming url.
    for bad in ["", "ftp://acme.example/", "https://user:pw@acme.example/", "https://"] {
        let (s, e) = m.call("POST", "/drafts", &m.key, Some(json!({"url": bad})), None).await;
        assert_eq!((s, problem_field(&e).as_str()), (400, "url"), "{bad}: {e}");
    }
    let long = format!("https://acme.example/{}", "a".repeat(2048 - 21));
    assert_eq!(long.len(), 2048);
    let (s, _) = m.call("POST", "/drafts", &m.key, Some(json!({"url": long})), None).await;
    assert_eq!(s, 201);
    let (s, e) = m.call("POST", "/drafts", &m.key, Some(json!({"url": format!("{long}a")})), None).await;
    assert_eq!((s, problem_field(&e).as_str()), (400, "url"));
    let (s, e) = m.call("POST", "/drafts", &m.key, Some(json!({"url": "https://a.example", "name": "x"})), None).await;
    assert_eq!((s, problem_field(&e).as_str()), (400, "name"));
}

#[tokio::test]
async fn owners_scopes_and_ids() {
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let id = m.submit(&site.url()).await;
    let (s, _) = m.call("GET", &format!("/drafts/{id}"), &m.other_key, None, None).await;
    assert_eq!(s, 404, "another person's draft is not found");
    let (s, _) = m.call("PATCH", &format!("/drafts/{id}"), &m.other_key, Some(json!({})), None).await;
    assert_eq!(s, 404);
    let (s, _) = m.call("GET", &format!("/drafts/{}", uuid_like()), &m.key, None, None).await;
    assert_eq!(s, 404);
    let (s, e) = m.call("GET", "/drafts/not-a-uuid", &m.key, None, None).await;
    assert_eq!((s, problem_field(&e).as_str()), (400, "id"));
    let (s, e) = m.call("POST", "/drafts", &m.read_only_key, Some(json!({"url": site.url()})), None).await;
    assert_eq!(s, 403, "{e}");
    let r = m
        .app
        .client
        .post(format!("{}/api/v1/drafts", m.app.base))
        .json(&json!({"url": site.url()}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // Submitting before the draft is ready is a 409, not a half-saved listing.
    let slow = m.submit(&site.url()).await;
    let (s, body) = m.call("POST", &format!("/drafts/{slow}/submit"), &m.key, None, None).await;
    assert!(s == 409 || s == 200, "{body}");
}

fn uuid_like() -> String {
    "0b1c6a50-8b0e-4e0e-9a7e-2b3c4d5e6f70".to_owned()
}

#[tokio::test]
async fn every_update_draft_bound_at_its_edge() {
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let id = m.submit(&site.url()).await;
    m.settle(&id).await;
    let s = |n: usize| "x".repeat(n);
    let items = |n: usize, each: usize| vec![s(each); n];
    let faq = json!({"question": "Q?", "answer": "A."});
    let founder = json!({"name": "Ann Example"});
    let milestone = json!({"date": "2024-01-02", "title": "Launch"});
    // (body at the bound, body one past it, the field a 400 names)
    let cases: Vec<(Value, Value, &str)> = vec![
        (json!({"fields": {"name": s(500)}}), json!({"fields": {"name": s(501)}}), "fields.name"),
        (json!({"fields": {"tagline": s(500)}}), json!({"fields": {"tagline": s(501)}}), "fields.tagline"),
        (
            json!({"fields": {"short_description": s(500)}}),
            json!({"fields": {"short_description": s(501)}}),
            "fields.short_description",
        ),
        (
            json!({"fields": {"description": s(20000)}}),
            json!({"fields": {"description": s(20001)}}),
            "fields.description",
        ),
        (json!({"fields": {"stage": s(500)}}), json!({"fields": {"stage": s(501)}}), "fields.stage"),
        (
            json!({"fields": {"pricing_model": s(500)}}),
            json!({"fields": {"pricing_model": s(501)}}),
            "fields.pricing_model",
        ),
        (
            json!({"fields": {"pricing_summary": s(500)}}),
            json!({"fields": {"pricing_summary": s(501)}}),
            "fields.pricing_summary",
        ),
        (json!({"fields": {"country": s(500)}}), json!({"fields": {"country": s(501)}}), "fields.country"),
        (json!({"fields": {"city": s(500)}}), json!({"fields": {"city": s(501)}}), "fields.city"),
        (
            json!({"fields": {"founded_year": s(500)}}),
            json!({"fields": {"founded_year": s(501)}}),
            "fields.founded_year",
        ),
        (
            json!({"fields": {"contact_email": s(500)}}),
            json!({"fields": {"contact_email": s(501)}}),
            "fields.contact_email",
        ),
        (
            json!({"fields": {"demo_video_url": s(500)}}),
            json!({"fields": {"demo_video_url": s(501)}}),
            "fields.demo_video_url",
        ),
        (json!({"fields": {"logo_url": s(500)}}), json!({"fields": {"logo_url": s(501)}}), "fields.logo_url"),
        (json!({"fields": {"tags": items(20, 200)}}), json!({"fields": {"tags": items(21, 1)}}), "fields.tags"),
        (
            json!({"fields": {"features": items(20, 200)}}),
            json!({"fields": {"features": items(1, 201)}}),
            "fields.features[0]",
        ),
        (json!({"fields": {"usps": items(20, 200)}}), json!({"fields": {"usps": items(21, 1)}}), "fields.usps"),
        (
            json!({"fields": {"keywords": items(20, 200)}}),
            json!({"fields": {"keywords": items(21, 1)}}),
            "fields.keywords",
        ),
        (json!({"lock_fields": vec!["name"; 20]}), json!({"lock_fields": vec!["name"; 21]}), "lock_fields"),
        (json!({"restore": vec!["name"; 20]}), json!({"restore": vec!["name"; 21]}), "restore"),
        (json!({"faqs": vec![faq.clone(); 10]}), json!({"faqs": vec![faq.clone(); 11]}), "faqs"),
        (
            json!({"faqs": [{"question": s(300), "answer": s(1500)}]}),
            json!({"faqs": [{"question": s(301), "answer": "a"}]}),
            "faqs[0].question",
        ),
        (
            json!({"faqs": [{"question": "q", "answer": s(1500)}]}),
            json!({"faqs": [{"question": "q", "answer": s(1501)}]}),
            "faqs[0].answer",
        ),
        (json!({"founders": vec![founder.clone(); 6]}), json!({"founders": vec![founder.clone(); 7]}), "founders"),
        (
            json!({"founders": [{"name": s(160), "title": s(160), "bio": s(3000)}]}),
            json!({"founders": [{"name": "a", "bio": s(3001)}]}),
            "founders[0].bio",
        ),
        (json!({"founders": [{"name": s(160)}]}), json!({"founders": [{"name": s(161)}]}), "founders[0].name"),
        (
            json!({"founders": [{"name": "a", "title": s(160)}]}),
            json!({"founders": [{"name": "a", "title": s(161)}]}),
            "founders[0].title",
        ),
        (
            json!({"milestones": vec![milestone.clone(); 50]}),
            json!({"milestones": vec![milestone.clone(); 51]}),
            "milestones",
        ),
        (
            json!({"milestones": [{"date": "2024-01-02", "title": s(200), "description": s(2000)}]}),
            json!({"milestones": [{"date": "2024-01-02", "title": s(201)}]}),
            "milestones[0].title",
        ),
        (
            json!({"milestones": [{"date": "2024-01-02", "title": "t", "description": s(2000)}]}),
            json!({"milestones": [{"date": "2024-01-02", "title": "t", "description": s(2001)}]}),
            "milestones[0].description",
        ),
        (
            json!({"milestones": [{"date": "2024-01-02", "title": "t", "url": format!("https://{}", s(492))}]}),
            json!({"milestones": [{"date": "2024-01-02", "title": "t", "url": format!("https://{}", s(493))}]}),
            "milestones[0].url",
        ),
        (
            json!({"milestones": [milestone.clone()]}),
            json!({"milestones": [{"date": "2024-13-02", "title": "t"}]}),
            "milestones[0].date",
        ),
        (
            json!({"story": {"title": s(8000), "story": s(8000), "whats_next": s(8000)}}),
            json!({"story": {"lessons": s(8001)}}),
            "story.lessons",
        ),
        (json!({"seo": {"title": s(70), "meta": s(170)}}), json!({"seo": {"title": s(71)}}), "seo.title"),
        (json!({"seo": {"meta": s(170)}}), json!({"seo": {"meta": s(171)}}), "seo.meta"),
        (
            json!({"company_socials": {"github": format!("https://{}", s(492))}}),
            json!({"company_socials": {"github": format!("https://{}", s(493))}}),
            "company_socials.github",
        ),
        (
            json!({"founder_socials": {"x": format!("https://{}", s(492))}}),
            json!({"founder_socials": {"x": format!("https://{}", s(493))}}),
            "founder_socials.x",
        ),
        (
            json!({"competitor_url": format!("https://c.example/{}", s(2048 - 18))}),
            json!({"competitor_url": format!("https://c.example/{}", s(2048 - 17))}),
            "competitor_url",
        ),
        (json!({"fields": {"name": null}}), json!({"fields": {"nickname": "x"}}), "fields.nickname"),
        (json!({"seo": {}}), json!({"colour": "red"}), "colour"),
        (json!({"seo": {"title": "T"}}), json!({"seo": [null, null]}), "seo"),
        (json!({"founders": []}), json!({"founders": [["Ann"]]}), "founders[0]"),
        (
            json!({"company_socials": {}}),
            json!({"company_socials": {"myspace": "https://m.example"}}),
            "company_socials.myspace",
        ),
        (json!({"lock_fields": ["tagline"]}), json!({"lock_fields": ["nickname"]}), "lock_fields[0]"),
    ];
    for (ok, bad, field) in cases {
        let (s1, b1) = m.patch(&id, ok.clone()).await;
        assert_eq!(s1, 200, "{field} at its bound: {b1}");
        let (s2, b2) = m.patch(&id, bad.clone()).await;
        assert_eq!((s2, problem_field(&b2).as_str()), (400, field), "{field} past its bound: {b2}");
    }
    m.patch(&id, json!({"restore": ["name", "tagline"]})).await;
    // regenerate: 5 at the bound (a ready draft), 6 past it.
    let five = json!({"regenerate": ["name", "tagline", "city", "country", "founded_year"]});
    let (s, b) = m.patch(&id, five).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) =
        m.patch(&id, json!({"regenerate": ["name", "tagline", "city", "country", "founded_year", "stage"]})).await;
    assert_eq!((s, problem_field(&b).as_str()), (400, "regenerate"));
}

#[tokio::test]
async fn field_states_follow_the_users_moves() {
    let site = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let id = m.submit(&site.url()).await;
    m.settle(&id).await;
    let state = |d: &Value, f: &str| d["fields"][f]["state"].as_str().unwrap().to_owned();
    let (_, d) = m.patch(&id, json!({"fields": {"tagline": "Cat rockets", "stage": "beta", "city": null}})).await;
    assert_eq!(state(&d, "tagline"), "edited");
    assert_eq!(state(&d, "stage"), "manual");
    assert_eq!(state(&d, "city"), "deleted");
    assert_eq!(d["fields"]["tagline"]["evidence"], json!([]));
    let (_, d) = m.patch(&id, json!({"lock_fields": ["tagline"]})).await;
    assert_eq!(state(&d, "tagline"), "override");
    let (s, e) = m.patch(&id, json!({"regenerate": ["tagline"]})).await;
    assert_eq!((s, problem_field(&e).as_str()), (400, "regenerate[0]"), "a locked field is not redrafted");
    let (_, d) = m.patch(&id, json!({"restore": ["tagline", "city"]})).await;
    assert_eq!(state(&d, "tagline"), "ai");
    assert_eq!(d["fields"]["tagline"]["value"], "Launch your cat into orbit");
    assert_eq!(state(&d, "city"), "ai");
    // regenerate redrafts only the named field, from the site, in the background.
    m.patch(&id, json!({"fields": {"city": "Dublin"}})).await;
    let (_, d) = m.patch(&id, json!({"regenerate": ["name"], "restore": ["city"]})).await;
    assert_eq!(d["regenerating"], json!(["name"]));
    let started = Instant::now();
    loop {
        let (_, d) = m.call("GET", &format!("/drafts/{id}"), &m.key, None, None).await;
        if d["regenerating"] == json!([]) {
            assert_eq!(d["fields"]["name"]["value"], "Acme Rockets");
            assert_eq!(state(&d, "city"), "ai");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "regenerate is stuck");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // regenerate replaces what the maker set with what the site says now: an edited value becomes the
    // fresh AI value, a manual value of a fact the site does not state becomes not found.
    let (_, d) = m.patch(&id, json!({"fields": {"tagline": "Cat rockets", "stage": "beta"}})).await;
    assert_eq!((state(&d, "tagline").as_str(), state(&d, "stage").as_str()), ("edited", "manual"));
    let (s, d) = m.patch(&id, json!({"regenerate": ["tagline", "stage"]})).await;
    assert_eq!(s, 200, "{d}");
    let started = Instant::now();
    loop {
        let (_, d) = m.call("GET", &format!("/drafts/{id}"), &m.key, None, None).await;
        if d["regenerating"] == json!([]) {
            assert_eq!(d["fields"]["tagline"]["value"], "Launch your cat into orbit");
            assert_eq!(state(&d, "tagline"), "ai");
            assert!(!d["fields"]["tagline"]["evidence"].as_array().unwrap().is_empty());
            assert_eq!(d["fields"]["stage"]["value"], Value::Null);
            assert_eq!(state(&d, "stage"), "not_found");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "regenerate is stuck");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Replacing lists marks them as the user's; a redraft leaves them alone.
    let (_, d) = m.patch(&id, json!({"faqs": [{"question": "Why?", "answer": "Because."}], "founders": [{"name": "Ann Example", "title": "CEO"}]})).await;
    assert_eq!(d["faqs"].as_array().unwrap().len(), 1);
    assert_eq!(d["founders"][0]["name"], "Ann Example");
}

#[tokio::test]
async fn submit_saves_one_listing_and_later_edits_flow_into_it() {
    let site = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let id = m.submit(&site.url()).await;
    m.settle(&id).await;
    let (s, saved) = m.call("POST", &format!("/drafts/{id}/submit"), &m.key, None, None).await;
    assert_eq!(s, 200, "{saved}");
    assert_eq!(saved["created"], true);
    assert_eq!(saved["status"], "draft");
    let listing_id = saved["listing_id"].as_i64().unwrap();
    assert!(listing_id >= 1);
    let (s, again) = m.call("POST", &format!("/drafts/{id}/submit"), &m.key, None, None).await;
    assert_eq!((s, again["listing_id"].as_i64(), again["created"].as_bool()), (200, Some(listing_id), Some(false)));
    let (s, d) = m.patch(&id, json!({"fields": {"tagline": "Orbit for every cat"}})).await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["listing_id"], listing_id);
    let app = bootstrap::App::connect(&m.app.db.url).await.unwrap();
    let l =
        domain::ports::ListingRepository::get_listing(app.store.as_ref(), domain::ids::ListingId::from_db(listing_id))
            .await
            .unwrap()
            .unwrap();
    assert_eq!(l.profile.tagline, "Orbit for every cat");
    assert_eq!(l.profile.name, "Acme Rockets");
    assert!(l.profile.not_found_on_website.contains(&"stage".to_owned()));
    // Saved, not published: the public profile does not show it.
    let r = m.app.get(&format!("/api/v1/listings/{}", l.slug)).await;
    assert_eq!(r.status(), 404);
    // An edit that would make an invalid listing is refused whole.
    let (s, e) = m.patch(&id, json!({"fields": {"country": "Ireland"}})).await;
    assert_eq!((s, problem_field(&e).as_str()), (400, "fields.country"), "{e}");
    let (_, d) = m.call("GET", &format!("/drafts/{id}"), &m.key, None, None).await;
    assert_eq!(d["fields"]["country"]["value"], "IE", "nothing was half-written");
}

#[tokio::test]
async fn idempotency_key_gives_one_draft() {
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let body = json!({"url": site.url()});
    let (s1, a) = m.call("POST", "/drafts", &m.key, Some(body.clone()), Some("submit-1")).await;
    let (s2, b) = m.call("POST", "/drafts", &m.key, Some(body), Some("submit-1")).await;
    assert_eq!((s1, s2), (201, 201));
    assert_eq!(a["id"], b["id"]);
    let (_, list) = m.call("GET", "/drafts", &m.key, None, None).await;
    assert_eq!(list["pagination"]["total"], 1);
    let id = a["id"].as_str().unwrap();
    m.settle(id).await;
    let patch = json!({"fields": {"city": "Cork"}});
    let (s1, x) = m.call("PATCH", &format!("/drafts/{id}"), &m.key, Some(patch.clone()), Some("patch-1")).await;
    let (s2, y) = m.call("PATCH", &format!("/drafts/{id}"), &m.key, Some(patch), Some("patch-1")).await;
    assert_eq!((s1, s2), (200, 200));
    assert_eq!(x["updated_at"], y["updated_at"], "the retry is the first answer replayed");
}

// The binary is run synchronously: other threads keep the fixture site and worker going.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invites_go_through_the_outbox_and_stop_at_ten() {
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let id = m.submit(&site.url()).await;
    let path = format!("/drafts/{id}/invites");
    let (s, inv) = m.call("POST", &path, &m.key, Some(json!({"email": "cofounder@acme.example"})), None).await;
    assert_eq!(s, 201, "{inv}");
    assert_eq!(inv["delivery"], "queued");
    assert_eq!(inv["invites_left"], 9);
    // The same address again: a fresh link, and it uses an invite (sending again is sending).
    let (s, inv) = m.call("POST", &path, &m.key, Some(json!({"email": "cofounder@acme.example"})), None).await;
    assert_eq!((s, inv["invites_used"].as_u64()), (201, Some(2)));
    for n in 3..=10 {
        let (s, _) = m.call("POST", &path, &m.key, Some(json!({"email": format!("p{n}@acme.example")})), None).await;
        assert_eq!(s, 201);
    }
    let (s, e) = m.call("POST", &path, &m.key, Some(json!({"email": "p11@acme.example"})), None).await;
    assert_eq!((s, e["error"]["code"].as_str()), (429, Some("mail_quota")), "{e}");
    let (s, e) = m.call("POST", &path, &m.key, Some(json!({"email": "not-an-email"})), None).await;
    assert_eq!((s, problem_field(&e).as_str()), (400, "email"));
    let (s, _) = m.call("POST", &path, &m.other_key, Some(json!({"email": "x@acme.example"})), None).await;
    assert_eq!(s, 404);
    let (ok, out, err) = crate::helpers::run(&m.app.db, &["admin", "outbox", "--to", "cofounder@acme.example"]);
    assert!(ok, "{err}");
    assert_eq!(out.matches("--- #").count(), 2, "{out}");
    assert!(out.contains(&format!("{}/invites/", m.app.base)), "the email carries the accept link: {out}");
}

#[tokio::test]
async fn an_invite_link_makes_the_invited_person_a_member() {
    use crate::pages::{Browser, hidden};
    use sea_orm::ConnectionTrait;
    let site = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let id = m.submit(&site.url()).await;
    m.settle(&id).await;
    let (s, saved) = m.call("POST", &format!("/drafts/{id}/submit"), &m.key, None, None).await;
    assert_eq!(s, 200, "{saved}");
    let (s, _) =
        m.call("POST", &format!("/drafts/{id}/invites"), &m.key, Some(json!({"email": "cy@acme.example"})), None).await;
    assert_eq!(s, 201);
    let app = bootstrap::App::connect(&m.app.db.url).await.unwrap();
    let mail = domain::ports::Outbox::outbox(app.store.as_ref(), Some("cy@acme.example"), 1).await.unwrap().remove(0);
    let link = mail.body.lines().find(|l| l.contains("/invites/")).unwrap().trim().to_owned();
    let path = link.strip_prefix(&m.app.base).unwrap().to_owned();

    let mut b = Browser::new(&m.app);
    let (s, html, _) = b.get(&path).await;
    assert_eq!(s, 200);
    assert!(html.contains("Acme Rockets") && html.contains("cy@acme.example"), "{html}");
    assert_eq!(b.get("/invites/not-a-real-token").await.0, 404);
    // Sign up with the invited address: back to the invite, then accept.
    let (_, form, _) = b.get("/signup").await;
    let csrf = hidden(&form, "csrf");
    let (s, _, loc) =
        b.post("/signup", &[("email", "cy@acme.example"), ("password", "correct horse 2"), ("csrf", &csrf)]).await;
    assert_eq!((s, loc.as_deref()), (303, Some("/signup/sent")));
    let back = crate::pages::sign_in_with(&mut b, "cy@acme.example", "correct horse 2").await;
    assert_eq!(back.as_deref(), Some(path.as_str()), "signing in returns to the invite");
    let (_, html, _) = b.get(&path).await;
    let csrf = hidden(&html, "csrf");
    let (s, html, _) = b.post(&path, &[("csrf", "wrong")]).await;
    assert_eq!(s, 403, "{html}");
    let (s, html, _) = b.post(&path, &[("csrf", &csrf)]).await;
    assert_eq!(s, 200, "{html}");
    assert!(html.contains("co-founder of Acme Rockets"));
    let rows = app
        .sea_orm()
        .connection()
        .query_all_raw(sea_orm::Statement::from_string(
            app.sea_orm().backend(),
            format!("SELECT role FROM listing_owners WHERE listing_id = {}", saved["listing_id"]),
        ))
        .await
        .unwrap();
    let roles: Vec<String> = rows.iter().map(|r| r.try_get::<String>("", "role").unwrap()).collect();
    assert_eq!(roles.len(), 2, "owner and co-founder: {roles:?}");
    assert!(roles.contains(&"cofounder".to_owned()));
    // The page that explains the crawler names its user agent.
    let (s, html, _) = b.get("/bot").await;
    assert!(s == 200 && html.contains("launchdir/") && html.contains("robots.txt"));
}

// The binary is run synchronously: other threads keep the fixture site and worker going.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_smtp_configured_invites_are_delivered_by_the_worker() {
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let sink = test_support::SmtpSink::start().await;
    use domain::user::Scope::*;
    let db = test_support::sqlite();
    let key = key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite]).await;
    let (allowed, smtp) = (site.host_port(), sink.url());
    let app = spawn_app_configured(db, false, move |a| {
        a.outbound.crawler_allowed_hosts = vec![allowed];
        a.outbound.smtp_url = Some(smtp);
    })
    .await;
    app.wait_ready().await;
    let m = Maker { app, key: key.clone(), other_key: key.clone(), read_only_key: key };
    let id = m.submit(&site.url()).await;
    let (s, inv) =
        m.call("POST", &format!("/drafts/{id}/invites"), &m.key, Some(json!({"email": "cy@acme.example"})), None).await;
    assert_eq!((s, inv["delivery"].as_str()), (201, Some("sent")), "{inv}");
    let started = Instant::now();
    while sink.messages().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(20), "the email was not delivered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(sink.messages()[0].contains("/invites/"));
    let (ok, out, err) = crate::helpers::run(&m.app.db, &["admin", "outbox", "--to", "cy@acme.example"]);
    assert!(ok, "{err}");
    let started = Instant::now();
    let mut out = out;
    while !out.contains("· sent ") {
        assert!(started.elapsed() < Duration::from_secs(10), "not marked sent: {out}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        out = crate::helpers::run(&m.app.db, &["admin", "outbox", "--to", "cy@acme.example"]).1;
    }
}

// The binary is run synchronously: other threads keep the fixture site and worker going.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_run_jobs_drafts_what_is_queued() {
    let site = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let db = test_support::sqlite();
    let app = bootstrap::App::connect(&db.url).await.unwrap();
    app.start(false).await.unwrap();
    let user = operations::accounts::create_user(&app, "ann@acme.example", "correct horse 1", "", false).await.unwrap();
    let url = domain::draft::SiteUrl::parse("url", &site.url()).unwrap();
    let d = domain::draft::Draft::new(domain::ids::DraftId::new_random(), user.id, url, app.now());
    domain::ports::DraftRepository::create_draft(app.store.as_ref(), &d).await.unwrap();
    operations::worker::enqueue(&app, &operations::worker::JobSpec::Draft { draft: d.id, only: None }).await.unwrap();
    // Without the exemption the fixture (on loopback) is a private address: the draft fails, said so.
    let (ok, out, err) = crate::helpers::run(&db, &["admin", "run-jobs"]);
    assert!(ok && out.contains("ran 1 job"), "{out}{err}");
    let failed = domain::ports::DraftRepository::get_draft(app.store.as_ref(), d.id).await.unwrap().unwrap();
    assert_eq!(failed.status().as_str(), "failed");
    let d2 = domain::draft::Draft::new(
        domain::ids::DraftId::new_random(),
        user.id,
        domain::draft::SiteUrl::parse("url", &site.url()).unwrap(),
        app.now(),
    );
    domain::ports::DraftRepository::create_draft(app.store.as_ref(), &d2).await.unwrap();
    operations::worker::enqueue(&app, &operations::worker::JobSpec::Draft { draft: d2.id, only: None }).await.unwrap();
    // A minute ahead of the real clock (the job is due), in whole seconds so it reads back exactly.
    let ahead = chrono::DateTime::from_timestamp(chrono::Utc::now().timestamp() + 60, 0).unwrap();
    let (ok, out, err) = crate::helpers::run(
        &db,
        &["admin", "run-jobs", "--crawler-allowed-hosts", &site.host_port(), "--now", &ahead.to_rfc3339()],
    );
    assert!(ok && out.contains("ran 1 job"), "{out}{err}");
    let ready = domain::ports::DraftRepository::get_draft(app.store.as_ref(), d2.id).await.unwrap().unwrap();
    assert_eq!(ready.status().as_str(), "ready", "{:?}", ready.status());
    assert_eq!(ready.updated_at, ahead, "run as if the clock read --now");
    let (ok, out, _) = crate::helpers::run(&db, &["admin", "run-jobs"]);
    assert!(ok && out.contains("ran 0 job"), "{out}");
    // A job whose instance died mid-way (claimed, never finished) is taken over once its lease is out.
    let d3 = domain::draft::Draft::new(
        domain::ids::DraftId::new_random(),
        user.id,
        domain::draft::SiteUrl::parse("url", &site.url()).unwrap(),
        app.now(),
    );
    domain::ports::DraftRepository::create_draft(app.store.as_ref(), &d3).await.unwrap();
    operations::worker::enqueue(&app, &operations::worker::JobSpec::Draft { draft: d3.id, only: None }).await.unwrap();
    let t0 = chrono::Utc::now();
    let claimed = domain::ports::JobQueue::claim_job(app.store.as_ref(), "died", t0, chrono::Duration::minutes(15))
        .await
        .unwrap();
    assert!(claimed.is_some());
    let at = |m: i64| (t0 + chrono::Duration::minutes(m)).to_rfc3339();
    let allowed = site.host_port();
    let (_, out, _) =
        crate::helpers::run(&db, &["admin", "run-jobs", "--crawler-allowed-hosts", &allowed, "--now", &at(5)]);
    assert!(out.contains("ran 0 job"), "the lease still holds: {out}");
    let (_, out, _) =
        crate::helpers::run(&db, &["admin", "run-jobs", "--crawler-allowed-hosts", &allowed, "--now", &at(16)]);
    assert!(out.contains("ran 1 job"), "{out}");
    let taken_over = domain::ports::DraftRepository::get_draft(app.store.as_ref(), d3.id).await.unwrap().unwrap();
    assert_eq!(taken_over.status().as_str(), "ready");
    assert!(!crate::helpers::run(&db, &["admin", "run-jobs", "--now", "yesterday"]).0);
}

#[tokio::test]
async fn a_competitor_is_read_the_same_way_and_compared() {
    let ours = FixtureSite::serve("acme-rockets", "http://127.0.0.1:9").await;
    let theirs = FixtureSite::serve("ledgerly", "http://127.0.0.1:9").await;
    let m = maker(vec![ours.host_port(), theirs.host_port()]).await;
    let id = m.submit(&ours.url()).await;
    m.settle(&id).await;
    let (s, d) = m.patch(&id, json!({"competitor_url": theirs.url()})).await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["competitor"]["status"], "reading");
    let started = Instant::now();
    let d = loop {
        let (_, d) = m.call("GET", &format!("/drafts/{id}"), &m.key, None, None).await;
        if d["competitor"]["status"] != "reading" {
            break d;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the comparison is stuck");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(d["competitor"]["status"], "ready", "{d}");
    let rows = d["competitor"]["rows"].as_array().unwrap();
    let row = |f: &str| rows.iter().find(|r| r["field"] == f).unwrap().clone();
    assert_eq!(row("country")["ours"], "IE");
    assert_eq!(row("country")["theirs"], "DE");
    assert!(!row("country")["their_evidence"].as_array().unwrap().is_empty());
    assert_eq!(row("founded_year")["theirs"], "2017");
    assert_eq!(
        (row("name")["ours"].as_str(), row("name")["theirs"].as_str()),
        (Some("Acme Rockets"), Some("Ledgerly"))
    );
    assert_eq!(row("features")["theirs"], Value::Null, "a blank cell where Ledgerly states no features");
    let (_, d) = m.patch(&id, json!({"competitor_url": ""})).await;
    assert_eq!(d["competitor"], Value::Null, "an empty competitor_url clears it");
}

#[tokio::test]
async fn the_draft_tools_work_over_mcp_with_an_api_key() {
    use crate::mcp::{refused, rpc_as};
    let site = FixtureSite::serve("quietnotes", "http://127.0.0.1:9").await;
    let m = maker(vec![site.host_port()]).await;
    let call = |name: &str, args: Value| json!({"name": name, "arguments": args});
    // Without sign-in, or without the scope, the HTTP answer starts (or steps up) the OAuth flow.
    let (s, www) = refused(&m.app, None, "tools/call", call("submit_listing", json!({"url": site.url()}))).await;
    assert_eq!(s, 401);
    assert!(www.contains("resource_metadata=") && www.contains(r#"scope="listings:write""#), "{www}");
    let (s, www) =
        refused(&m.app, Some(&m.read_only_key), "tools/call", call("submit_listing", json!({"url": site.url()}))).await;
    assert_eq!(s, 403);
    assert!(www.contains(r#"error="insufficient_scope""#), "{www}");
    let made = rpc_as(&m.app, Some(&m.key), "tools/call", call("submit_listing", json!({"url": site.url()}))).await;
    assert_eq!(made["result"]["isError"], false, "{made}");
    let id = made["result"]["structuredContent"]["id"].as_str().unwrap().to_owned();
    m.settle(&id).await;
    let got = rpc_as(&m.app, Some(&m.key), "tools/call", call("get_draft", json!({"id": id}))).await;
    assert_eq!(got["result"]["structuredContent"]["fields"]["name"]["value"], "QuietNotes");
    let bad = rpc_as(
        &m.app,
        Some(&m.key),
        "tools/call",
        call("update_draft", json!({"id": id, "fields": {"name": "x".repeat(501)}})),
    )
    .await;
    assert_eq!(bad["result"]["structuredContent"]["error"]["details"][0]["field"], "fields.name");
    let other = rpc_as(&m.app, Some(&m.other_key), "tools/call", call("get_draft", json!({"id": id}))).await;
    assert_eq!(other["result"]["structuredContent"]["error"]["code"], "not_found");
}
