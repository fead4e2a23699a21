//! Claims through the REST API against real things: a meta tag and a file on a fixture site the test
//! edits, TXT records on a DNS server started on loopback, and an email link read from the outbox and
//! opened over HTTP. Wrong tokens, expired claims and wrong-domain addresses are refused with reasons;
//! other people's claims are 404; the bounds of claim_listing at their edges.

use crate::drafts::key_for;
use crate::helpers::{TestApp, cli, spawn_app_configured};
use crate::own::call;
use crate::pages::{Browser, sign_in};
use adapters_storage::entity::claims;
use chrono::{Duration, Utc};
use domain::listing::{Lifecycle, ListingProfile, NewListing};
use domain::slug::Slug;
use domain::user::Scope::{AccountRead, ListingsWrite};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};
use test_support::{DnsServer, FixtureSite};

pub(crate) const PUBLIC: &str = "https://launchdir.example";

pub(crate) struct Setup {
    pub(crate) app: TestApp,
    pub(crate) store: bootstrap::App,
    site: FixtureSite,
    site_dir: std::path::PathBuf,
    dns: DnsServer,
    pub(crate) ann: String,
    pub(crate) bob: String,
    pub(crate) carol: String,
    reader: String,
}

pub(crate) async fn setup() -> Setup {
    let db = test_support::sqlite();
    let site_dir = db.sqlite_dir().unwrap().join("site");
    test_support::copy_site("acme-rockets", &site_dir);
    std::fs::create_dir_all(site_dir.join(".well-known")).unwrap();
    let site = FixtureSite::serve_dir(site_dir.clone(), "http://127.0.0.1:9").await;
    let dns = DnsServer::start().await;
    let ann = key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite]).await;
    let bob = key_for(&db.url, "bob@other.example", &[AccountRead, ListingsWrite]).await;
    let carol = key_for(&db.url, "carol@orbit.example", &[AccountRead, ListingsWrite]).await;
    let reader = key_for(&db.url, "ann@acme.example", &[AccountRead]).await;
    let (allowed, dns_addr) = (site.host_port(), dns.addr);
    let app = spawn_app_configured(db, false, move |a| {
        a.outbound.crawler_allowed_hosts = vec![allowed];
        a.outbound.dns_server = Some(dns_addr);
        a.read_cache_secs = 0;
        a.public_url = Some(PUBLIC.into());
    })
    .await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    Setup { app, store, site, site_dir, dns, ann, bob, carol, reader }
}

/// A listing created outside any draft (nobody owns it), live unless `published` is false.
pub(crate) async fn listing(s: &Setup, name: &str, url: &str, domain: &str, published: bool) -> i64 {
    let mut lifecycle = Lifecycle::saved();
    if published {
        lifecycle.paid_launch(None, Utc::now()).unwrap();
    }
    let new = NewListing::plain(
        Slug::slugify(name).unwrap(),
        ListingProfile::named(name, url, domain),
        lifecycle,
        Utc::now(),
    );
    s.store.store.create_listing(new).await.unwrap().id.get()
}

pub(crate) async fn claim(s: &Setup, key: &str, body: Value) -> (u16, Value) {
    call(&s.app, "POST", "/claims", key, Some(body)).await
}

async fn verify(s: &Setup, key: &str, id: i64) -> (u16, Value) {
    call(&s.app, "POST", &format!("/claims/{id}/verify"), key, None).await
}

pub(crate) async fn mails_to(s: &Setup, to: &str) -> Vec<String> {
    s.store
        .store
        .outbox(Some(to), 50)
        .await
        .unwrap()
        .into_iter()
        .map(|m| format!("{}\n{}", m.subject, m.body))
        .collect()
}

pub(crate) async fn owns(s: &Setup, key: &str, id: i64) -> bool {
    let (st, mine) = call(&s.app, "GET", "/me/listings", key, None).await;
    assert_eq!(st, 200, "{mine}");
    mine["items"].as_array().unwrap().iter().any(|l| l["listing_id"] == id)
}

#[tokio::test]
async fn meta_and_file_claims_against_a_fixture_site_and_a_second_claimant() {
    let s = setup().await;
    let id = listing(&s, "Acme Rockets", &s.site.url(), "acme-rockets.example", true).await;
    let (st, before) = call(&s.app, "GET", "/listings/acme-rockets", &s.ann, None).await;
    assert_eq!(st, 200, "{before}");

    // Meta: instructions name the tag; nothing published yet, then a wrong token, then the right one.
    let (st, c) = claim(&s, &s.ann, json!({"slug": "acme-rockets", "method": "meta"})).await;
    assert_eq!(st, 201, "{c}");
    assert_eq!((c["status"].as_str(), c["method"].as_str()), (Some("pending"), Some("meta")));
    let meta = &c["instructions"]["meta"];
    let token = meta["content"].as_str().unwrap().to_owned();
    assert_eq!(token.len(), 64, "a 256-bit token in hex: {token}");
    assert_eq!(meta["tag"], format!("<meta name=\"launchdir-verification\" content=\"{token}\">"));
    assert_eq!(meta["page"], s.site.url());
    let cid = c["claim_id"].as_i64().unwrap();
    let (st, again) = claim(&s, &s.ann, json!({"slug": "acme-rockets", "method": "meta"})).await;
    assert_eq!((st, again["claim_id"].as_i64()), (201, Some(cid)), "asking again returns the open claim");

    let (st, e) = verify(&s, &s.ann, cid).await;
    assert_eq!((st, e["error"]["code"].as_str()), (409, Some("claim_not_verified")), "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains(&token) && msg.contains("found launchdir-verification meta tags with nothing"), "{msg}");
    let index = s.site_dir.join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();
    let wrong = "0".repeat(64);
    let with = |t: &str| {
        html.replacen("<head>", &format!("<head>\n<meta name=\"launchdir-verification\" content=\"{t}\">"), 1)
    };
    std::fs::write(&index, with(&wrong)).unwrap();
    let (st, e) = verify(&s, &s.ann, cid).await;
    assert_eq!(st, 409, "{e}");
    assert!(e["error"]["message"].as_str().unwrap().contains(&wrong), "what was found is named: {e}");
    let (_, mine) = call(&s.app, "GET", "/claims", &s.ann, None).await;
    let last = &mine["items"][0]["last_check"];
    assert_eq!((last["verified"].as_bool(), mine["pagination"]["total"].as_u64()), (Some(false), Some(1)), "{mine}");
    assert!(last["found"].as_str().unwrap().contains(&wrong), "{last}");
    // A tag in the body (where a site shows its users' text) is not read.
    std::fs::write(
        &index,
        html.replacen("</body>", &format!("<meta name=\"launchdir-verification\" content=\"{token}\"></body>"), 1),
    )
    .unwrap();
    assert_eq!(verify(&s, &s.ann, cid).await.0, 409, "only the <head> counts");

    // Another account cannot see or verify ann's claim.
    assert_eq!(verify(&s, &s.bob, cid).await.0, 404);
    std::fs::write(&index, with(&token)).unwrap();
    assert!(!owns(&s, &s.ann, id).await);
    let (st, ok) = verify(&s, &s.ann, cid).await;
    assert_eq!((st, ok["status"].as_str()), (200, Some("verified")), "{ok}");
    assert!(ok["verified_at"].is_string() && ok["last_check"]["verified"] == true, "{ok}");
    assert_eq!(verify(&s, &s.ann, cid).await.0, 200, "verifying a verified claim returns it");
    assert!(owns(&s, &s.ann, id).await, "the claimant owns the listing");
    let (_, mine) = call(&s.app, "GET", &format!("/me/listings/{id}"), &s.ann, None).await;
    assert_eq!(
        (mine["status"].as_str(), mine["plan"].as_str()),
        (Some("live"), Some("paid")),
        "plan unchanged: {mine}"
    );
    let (_, after) = call(&s.app, "GET", "/listings/acme-rockets", &s.ann, None).await;
    assert_eq!(after["votes"], before["votes"]);
    let (_, badges) = call(&s.app, "GET", "/listings/acme-rockets/badges", &s.ann, None).await;
    assert!(badges.to_string().contains("verified"), "the listing shows the verified badge: {badges}");
    assert_eq!(claim(&s, &s.ann, json!({"slug": "acme-rockets", "method": "dns"})).await.0, 409, "already an owner");

    // File: a second claimant; the current owner is told through the outbox.
    let (st, c) = claim(&s, &s.bob, json!({"slug": "acme-rockets", "method": "file"})).await;
    assert_eq!(st, 201, "{c}");
    let file = &c["instructions"]["file"];
    assert_eq!(file["url"], format!("{}.well-known/launchdir-verification.txt", s.site.url()));
    let (bid, body) = (c["claim_id"].as_i64().unwrap(), file["body"].as_str().unwrap().to_owned());
    let (st, e) = verify(&s, &s.bob, bid).await;
    assert!(st == 409 && e["error"]["message"].as_str().unwrap().contains("404"), "no file yet: {e}");
    std::fs::write(s.site_dir.join(".well-known/launchdir-verification.txt"), "launchdir-verification=nope\n").unwrap();
    let (st, e) = verify(&s, &s.bob, bid).await;
    assert!(st == 409 && e["error"]["message"].as_str().unwrap().contains("nope"), "{e}");
    assert!(mails_to(&s, "ann@acme.example").await.is_empty());
    std::fs::write(s.site_dir.join(".well-known/launchdir-verification.txt"), format!("{body}\n")).unwrap();
    let (st, ok) = verify(&s, &s.bob, bid).await;
    assert_eq!((st, ok["status"].as_str()), (200, Some("verified")), "{ok}");
    assert!(owns(&s, &s.bob, id).await && owns(&s, &s.ann, id).await, "both own it now");
    let told = mails_to(&s, "ann@acme.example").await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("bob@other.example") && told[0].contains("file"), "{}", told[0]);
    assert!(s.site.paths().iter().any(|p| p == "/.well-known/launchdir-verification.txt"));

    // The site team sees who verified what, when.
    let out = cli(&s.app.db.url, &["admin", "listing-claims", &id.to_string()]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("ann@acme.example · meta · verified") && text.contains("bob@other.example · file · verified"),
        "{text}"
    );
    assert!(text.contains("found the file at"), "{text}");
}

#[tokio::test]
async fn dns_and_email_claims_with_wrong_tokens_wrong_domains_and_expiry() {
    let s = setup().await;
    let id = listing(&s, "Orbit Labs", "https://www.orbit.example/", "www.orbit.example", true).await;

    // DNS against the loopback server: every TXT record is scanned.
    let (st, c) = claim(&s, &s.carol, json!({"slug": "orbit-labs", "method": "dns"})).await;
    assert_eq!(st, 201, "{c}");
    let rec = &c["instructions"]["dns"];
    assert_eq!((rec["type"].as_str(), rec["name"].as_str()), (Some("TXT"), Some("_launchdir-challenge.orbit.example")));
    let (cid, value) = (c["claim_id"].as_i64().unwrap(), rec["value"].as_str().unwrap().to_owned());
    s.dns.set_txt("_launchdir-challenge.orbit.example", &[&["v=spf1 -all"], &["launchdir-verification=", "0000"]]);
    let (st, e) = verify(&s, &s.carol, cid).await;
    assert_eq!(st, 409, "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("v=spf1 -all") && msg.contains("launchdir-verification=0000") && msg.contains(&value),
        "{msg}"
    );
    let (first, rest) = value.split_at(30);
    s.dns.set_txt("_launchdir-challenge.orbit.example", &[&["v=spf1 -all"], &[first, rest]]);
    let (st, ok) = verify(&s, &s.carol, cid).await;
    assert_eq!((st, ok["status"].as_str()), (200, Some("verified")), "a record split in strings counts: {ok}");
    assert!(owns(&s, &s.carol, id).await);
    assert!(s.dns.questions().iter().any(|q| q == "_launchdir-challenge.orbit.example"));

    // Email: only an administrator address at the listing's domain.
    for (email, problem) in [
        ("ceo@orbit.example", "admin@orbit.example"),
        ("admin@evil.example", "orbit.example"),
        ("admin@www.orbit.example", "orbit.example"),
    ] {
        let (st, e) = claim(&s, &s.bob, json!({"slug": "orbit-labs", "method": "email", "email": email})).await;
        assert_eq!((st, e["error"]["details"][0]["field"].as_str()), (400, Some("email")), "{email}: {e}");
        assert!(e["error"]["details"][0]["problem"].as_str().unwrap().contains(problem), "{e}");
    }
    let (st, c) =
        claim(&s, &s.bob, json!({"slug": "orbit-labs", "method": "email", "email": "Admin@Orbit.example"})).await;
    assert_eq!(st, 201, "{c}");
    assert_eq!(c["instructions"]["email"]["sent_to"], "admin@orbit.example");
    assert!(c["instructions"]["email"]["accepted_local_parts"].to_string().contains("webmaster"), "{c}");
    let bid = c["claim_id"].as_i64().unwrap();
    let (st, e) = verify(&s, &s.bob, bid).await;
    assert_eq!((st, e["error"]["code"].as_str()), (409, Some("claim_by_email")), "{e}");
    let mail = mails_to(&s, "admin@orbit.example").await;
    assert_eq!(mail.len(), 1);
    let link = mail[0].split_whitespace().find(|w| w.starts_with(&format!("{PUBLIC}/claims/confirm/"))).unwrap();
    let local = link.replacen(PUBLIC, &s.app.base, 1);
    let wrong = format!("{}/claims/confirm/{}", s.app.base, "f".repeat(64));
    assert_eq!(s.app.client.get(&wrong).send().await.unwrap().status(), 404, "a wrong token does nothing");
    assert!(!owns(&s, &s.bob, id).await);
    // The claimant opens it signed in (tests/api/attacks/claim_links.rs: nobody else can).
    let mut bob = Browser::new(&s.app);
    sign_in(&mut bob, "bob@other.example").await;
    let (st, page, _) = bob.get(local.strip_prefix(&s.app.base).unwrap()).await;
    assert_eq!(st, 200);
    assert!(page.contains("Claim verified"), "{page}");
    assert!(owns(&s, &s.bob, id).await, "opening the link once verified it");
    let (_, mine) = call(&s.app, "GET", "/claims", &s.bob, None).await;
    assert_eq!(mine["items"][0]["status"], "verified", "{mine}");
    assert!(mine["items"][0]["last_check"]["looked_for"].as_str().unwrap().contains("admin@orbit.example"));
    let again = s.app.client.get(&local).send().await.unwrap();
    assert!(again.status() == 200 && again.text().await.unwrap().contains("used already"));
    assert_eq!(mails_to(&s, "carol@orbit.example").await.len(), 1, "the first owner was told");

    // Expired after 7 days: verify says so, and so does the link.
    let (_, c) = claim(&s, &s.ann, json!({"slug": "orbit-labs", "method": "meta"})).await;
    let (_, m) =
        claim(&s, &s.ann, json!({"slug": "orbit-labs", "method": "email", "email": "postmaster@orbit.example"})).await;
    let past = Utc::now() - Duration::seconds(1);
    claims::Entity::update_many()
        .col_expr(claims::Column::ExpiresAt, Expr::value(chrono::DateTime::<chrono::FixedOffset>::from(past)))
        .filter(claims::Column::Id.is_in([c["claim_id"].as_i64().unwrap(), m["claim_id"].as_i64().unwrap()]))
        .exec(s.store.sea_orm().connection())
        .await
        .unwrap();
    let (st, e) = verify(&s, &s.ann, c["claim_id"].as_i64().unwrap()).await;
    assert_eq!((st, e["error"]["code"].as_str()), (409, Some("claim_expired")), "{e}");
    let (_, mine) = call(&s.app, "GET", "/claims", &s.ann, None).await;
    assert!(mine["items"].as_array().unwrap().iter().all(|c| c["status"] == "expired"), "{mine}");
    let mail = mails_to(&s, "postmaster@orbit.example").await;
    let link =
        mail[0].split_whitespace().find(|w| w.contains("/claims/confirm/")).unwrap().replacen(PUBLIC, &s.app.base, 1);
    assert_eq!(s.app.client.get(&link).send().await.unwrap().status(), 410);
    assert!(!owns(&s, &s.ann, id).await);
    let (st, fresh) = claim(&s, &s.ann, json!({"slug": "orbit-labs", "method": "meta"})).await;
    assert_eq!(st, 201);
    assert_ne!(fresh["claim_id"], c["claim_id"], "an expired claim is not reused");
}

#[tokio::test]
async fn claim_listing_bounds_scopes_and_unpublished_listings() {
    let s = setup().await;
    listing(&s, "Acme Rockets", &s.site.url(), "acme-rockets.example", true).await;
    listing(&s, "Hidden Draft", "https://hidden.example/", "hidden.example", false).await;
    let ok = json!({"slug": "acme-rockets", "method": "dns"});
    let field = |e: &Value| e["error"]["details"][0]["field"].as_str().map(str::to_owned);
    for (body, f) in [
        (json!({"slug": "a".repeat(221), "method": "dns"}), "slug"),
        (json!({"slug": "Bad Slug", "method": "dns"}), "slug"),
        (json!({"method": "dns"}), "slug"),
        (json!({"slug": "acme-rockets"}), "method"),
        (json!({"slug": "acme-rockets", "method": "sms"}), "method"),
        (json!({"slug": "acme-rockets", "method": "email"}), "email"),
        (
            json!({"slug": "acme-rockets", "method": "email", "email": format!("admin@{}.example", "a".repeat(241))}),
            "email",
        ),
        (json!({"slug": "acme-rockets", "method": "dns", "plan": "paid"}), "plan"),
    ] {
        let (st, e) = claim(&s, &s.ann, body.clone()).await;
        assert_eq!((st, field(&e)), (400, Some(f.to_owned())), "{body}: {e}");
    }
    // At the edges: a 220-character slug and a 254-character address are well-formed (then unknown / wrong).
    assert_eq!(claim(&s, &s.ann, json!({"slug": "a".repeat(220), "method": "dns"})).await.0, 404);
    let long = format!("admin@{}.example", "a".repeat(240));
    assert_eq!(long.len(), 254);
    let (st, e) = claim(&s, &s.ann, json!({"slug": "acme-rockets", "method": "email", "email": long})).await;
    assert!(st == 400 && e["error"]["details"][0]["problem"].as_str().unwrap().contains("acme-rockets.example"), "{e}");
    assert_eq!(claim(&s, &s.ann, json!({"slug": "hidden-draft", "method": "dns"})).await.0, 404, "not published");
    assert_eq!(claim(&s, &s.reader, ok.clone()).await.0, 403, "listings:write is needed");
    let (st, c) = claim(&s, &s.ann, json!({"slug": "acme-rockets", "method": "dns", "email": "x@y.example"})).await;
    assert!(st == 201 && c["instructions"]["dns"].is_object(), "an address given with dns is ignored: {c}");
    let anon = s.app.client.post(format!("{}/api/v1/claims", s.app.base)).json(&ok).send().await.unwrap();
    assert_eq!(anon.status(), 401);
    assert_eq!(call(&s.app, "GET", "/claims", &s.reader, None).await.0, 200, "account:read lists claims");
    assert_eq!(call(&s.app, "GET", "/claims?per_page=101", &s.reader, None).await.0, 400);
    assert_eq!(verify(&s, &s.ann, 0).await.0, 400);
    assert_eq!(verify(&s, &s.ann, 999_999).await.0, 404);
    // Three claim emails a day per listing and person.
    for n in 0..3 {
        let (st, e) = claim(
            &s,
            &s.ann,
            json!({"slug": "acme-rockets", "method": "email", "email": "admin@acme-rockets.example"}),
        )
        .await;
        assert_eq!(st, 201, "email {n}: {e}");
    }
    let (st, e) =
        claim(&s, &s.ann, json!({"slug": "acme-rockets", "method": "email", "email": "admin@acme-rockets.example"}))
            .await;
    assert_eq!((st, e["error"]["code"].as_str()), (409, Some("too_many_claim_emails")), "{e}");
}

/// The path of a redirect to one of our pages (built from the public URL).
fn ours(to: Option<String>) -> String {
    let to = to.expect("a redirect");
    to.strip_prefix(PUBLIC).unwrap_or_else(|| panic!("{to} is not on the public URL")).to_owned()
}

#[tokio::test]
async fn a_person_claims_a_listing_on_the_site_with_a_file_and_checks_it() {
    let s = setup().await;
    let id = listing(&s, "Acme Rockets", &s.site.url(), "acme-rockets.example", true).await;
    let mut bob = Browser::new(&s.app);
    let (_, public, _) = bob.get("/listings/acme-rockets").await;
    assert!(public.contains(&format!(r#"href="{PUBLIC}/me/claims/new/acme-rockets""#)), "a way to claim: {public}");

    // Signed out, sign-in comes first and returns to the form.
    let (status, _, to) = bob.get("/me/claims/new/acme-rockets").await;
    assert_eq!((status, ours(to).as_str()), (303, "/signin"));
    let back = sign_in(&mut bob, "bob@other.example").await;
    assert_eq!(ours(back), "/me/claims/new/acme-rockets");
    let (status, form, _) = bob.get("/me/claims/new/acme-rockets").await;
    assert_eq!(status, 200, "{form}");
    let csrf = crate::pages::hidden(&form, "csrf");

    // Refusals name the field; a stale form is refused.
    let start = |method: &'static str, email: &'static str, csrf: String| {
        vec![
            ("csrf".to_owned(), csrf),
            ("slug".to_owned(), "acme-rockets".to_owned()),
            ("method".to_owned(), method.to_owned()),
            ("email".to_owned(), email.to_owned()),
        ]
    };
    let (status, page, _) = bob.post_pairs("/me/claims", &start("carrier-pigeon", "", csrf.clone())).await;
    assert!(status == 400 && page.contains("method:"), "{status} {page}");
    let (status, page, _) = bob.post_pairs("/me/claims", &start("email", "", csrf.clone())).await;
    assert!(status == 400 && page.contains("email:"), "{status} {page}");
    let (status, page, _) = bob.post_pairs("/me/claims", &start("email", "ceo@elsewhere.example", csrf.clone())).await;
    assert!(status == 400 && page.contains("email:"), "another domain's address: {status} {page}");
    let (status, _, _) = bob.post_pairs("/me/claims", &start("file", "", "stale".into())).await;
    assert_eq!(status, 403);

    // The file proof: exactly what to publish, a check that says what it found, then success.
    let (status, _, to) = bob.post_pairs("/me/claims", &start("file", "", csrf.clone())).await;
    assert_eq!(status, 303);
    let claim = ours(to);
    let (status, page, _) = bob.get(&claim).await;
    assert_eq!(status, 200, "{page}");
    let (_, api) = call(&s.app, "GET", "/claims", &s.bob, None).await;
    let body = api["items"][0]["instructions"]["file"]["body"].as_str().unwrap().to_owned();
    assert!(page.contains(&body) && page.contains(r#"id="verify-claim""#), "{page}");
    assert!(page.contains(r#"id="claim-status">pending<"#), "{page}");
    let (status, page, _) = bob.post(&format!("{claim}/verify"), &[("csrf", &csrf)]).await;
    assert_eq!(status, 409, "nothing published yet: {page}");
    assert!(page.contains("404"), "what the check found: {page}");
    assert!(!owns(&s, &s.bob, id).await);
    std::fs::write(s.site_dir.join(".well-known/launchdir-verification.txt"), format!("{body}\n")).unwrap();
    let (status, _, to) = bob.post(&format!("{claim}/verify"), &[("csrf", &csrf)]).await;
    assert_eq!((status, ours(to)), (303, claim.clone()));
    let (_, page, _) = bob.get(&claim).await;
    assert!(page.contains(r#"id="claim-status">verified<"#), "{page}");
    assert!(owns(&s, &s.bob, id).await, "the claimant owns the listing");
    let (_, list, _) = bob.get("/me/claims").await;
    assert!(list.contains(&format!(r#"href="{PUBLIC}{claim}""#)), "the claim is listed with a link: {list}");

    // Someone else's claim is not found.
    let mut carol = Browser::new(&s.app);
    sign_in(&mut carol, "carol@orbit.example").await;
    let (status, _, _) = carol.get(&claim).await;
    assert_eq!(status, 404);
}

/// A claimant who hangs up while their claim is being checked cannot stop it half way: the check
/// runs to its end, the claim is verified, and the listing's other owners are told — so no timing of
/// a hang-up makes someone an owner the owners never hear of. This passed before the operations ran
/// writes in a task of their own: actix-web keeps running a handler whose client has gone. It stays
/// as the guard over HTTP; `failures::a_caller_that_stops_waiting_does_not_stop_a_write_half_way`
/// (operations) is the one that failed, for a caller that drops the operation's future itself.
#[tokio::test]
async fn hanging_up_while_a_claim_is_checked_does_not_stop_it_half_way() {
    let s = setup().await;
    let id = listing(&s, "Orbit Labs", "https://www.orbit.example/", "www.orbit.example", true).await;
    let record = "_launchdir-challenge.orbit.example";
    // Carol owns it first.
    let (st, c) = claim(&s, &s.carol, json!({"slug": "orbit-labs", "method": "dns"})).await;
    assert_eq!(st, 201, "{c}");
    s.dns.set_txt(record, &[&[c["instructions"]["dns"]["value"].as_str().unwrap()]]);
    let (st, ok) = verify(&s, &s.carol, c["claim_id"].as_i64().unwrap()).await;
    assert_eq!((st, ok["status"].as_str()), (200, Some("verified")), "{ok}");

    // Bob's claim, checked against a slow name server; Bob hangs up before it answers.
    let (st, c) = claim(&s, &s.bob, json!({"slug": "orbit-labs", "method": "dns"})).await;
    assert_eq!(st, 201, "{c}");
    s.dns.set_txt(record, &[&[c["instructions"]["dns"]["value"].as_str().unwrap()]]);
    s.dns.answer_after(std::time::Duration::from_millis(1_200));
    let asked = s.dns.questions().len();
    let impatient = reqwest::Client::builder().timeout(std::time::Duration::from_millis(400)).build().unwrap();
    let hung_up = impatient
        .post(format!("{}/api/v1/claims/{}/verify", s.app.base, c["claim_id"].as_i64().unwrap()))
        .bearer_auth(&s.bob)
        .send()
        .await;
    assert!(hung_up.as_ref().is_err_and(reqwest::Error::is_timeout), "Bob hung up: {hung_up:?}");
    assert!(s.dns.questions().len() > asked, "the check was under way when Bob hung up");

    // The name server answers after Bob has gone; the check goes on without him.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !owns(&s, &s.bob, id).await || mails_to(&s, "carol@orbit.example").await.is_empty() {
        let owner = owns(&s, &s.bob, id).await;
        assert!(std::time::Instant::now() < deadline, "after Bob hung up: owner {owner}, Carol told: no");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let told = mails_to(&s, "carol@orbit.example").await;
    assert_eq!(told.len(), 1, "Carol is told of the new owner: {told:?}");
    assert!(told[0].contains("bob@other.example") && told[0].contains("dns"), "{}", told[0]);
}
