//! Orders through the REST API and the checkout page: quotes for a US buyer, German and French
//! consumers and a German business with a VAT number (reverse charge), with exact arithmetic; prices
//! following `admin set-price`; every option refused with a 400 naming it; one order per
//! Idempotency-Key; and a sandbox payment on the checkout page that makes the listing live.

use crate::drafts::key_for;
use crate::helpers::{TestApp, cli, spawn_app_configured};
use crate::own::call;
use crate::pages::{Browser, hidden, sign_in};
use adapters_storage::entity::listing_owners;
use chrono::Utc;
use domain::category::ListingCategories;
use domain::listing::{Lifecycle, ListingProfile, NewListing};
use domain::slug::Slug;
use domain::user::Scope::{AccountRead, ListingsWrite, OrdersWrite};
use domain::week::LaunchWeek;
use sea_orm::{ActiveValue::Set, EntityTrait};
use serde_json::{Value, json};

pub(crate) struct Setup {
    pub(crate) app: TestApp,
    pub(crate) store: bootstrap::App,
    pub(crate) ann: String,
    pub(crate) bob: String,
    pub(crate) reader: String,
}

pub(crate) async fn setup() -> Setup {
    let db = test_support::sqlite();
    let ann = key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite, OrdersWrite]).await;
    let bob = key_for(&db.url, "bob@other.example", &[AccountRead, ListingsWrite, OrdersWrite]).await;
    let reader = key_for(&db.url, "ann@acme.example", &[AccountRead]).await;
    let app = spawn_app_configured(db, false, |a| a.read_cache_secs = 0).await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    Setup { app, store, ann, bob, reader }
}

/// A saved (unpublished) listing owned by `email`'s account, in category `developer-tools`.
pub(crate) async fn saved_listing(s: &Setup, name: &str, owner: &str) -> i64 {
    owned_listing(&s.store, name, owner).await
}

/// As [`saved_listing`], with the store alone.
pub(crate) async fn owned_listing(store: &bootstrap::App, name: &str, owner: &str) -> i64 {
    owned_listing_in(store, name, owner, Lifecycle::saved()).await
}

/// A listing in `lifecycle` owned by the account `owner`.
pub(crate) async fn owned_listing_in(store: &bootstrap::App, name: &str, owner: &str, lifecycle: Lifecycle) -> i64 {
    let s = store;
    let cats = s.store.list_categories().await.unwrap();
    let primary = cats.iter().find(|c| c.category.slug.as_str() == "developer-tools").unwrap_or(&cats[0]).category.id;
    let slug = Slug::slugify(name).unwrap();
    let profile = ListingProfile::named(name, format!("https://{slug}.example/"), "x.example");
    let new = NewListing {
        categories: Some(ListingCategories::new(primary)),
        ..NewListing::plain(slug, profile, lifecycle, Utc::now())
    };
    let l = s.store.create_listing(new).await.unwrap();
    let user =
        domain::ports::UserRepository::user_by_email(s.store.as_ref(), &domain::user::Email::parse(owner).unwrap())
            .await
            .unwrap()
            .unwrap()
            .0;
    listing_owners::Entity::insert(listing_owners::ActiveModel {
        listing_id: Set(l.id.get()),
        user_id: Set(user.id.get()),
        role: Set("owner".into()),
        created_at: Set(Utc::now().into()),
    })
    .exec(s.sea_orm().connection())
    .await
    .unwrap();
    l.id.get()
}

async fn quote(s: &Setup, body: Value) -> (u16, Value) {
    call(&s.app, "POST", "/orders/quote", &s.ann, Some(body)).await
}

fn field(e: &Value) -> String {
    e["error"]["details"][0]["field"].as_str().unwrap_or_default().to_owned()
}

async fn admin(s: &Setup, args: &[&str]) {
    let out = cli(&s.app.db.url, &[&["admin"], args].concat()).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test]
async fn quotes_apply_vat_exactly_and_follow_the_admins_prices() {
    let s = setup().await;
    let id = saved_listing(&s, "Quoted One", "ann@acme.example").await;
    let items = json!([
        {"product": "launch", "listing_id": id},
        {"product": "extra-category", "listing_id": id, "categories": ["Marketing", "ui-design"]},
        {"product": "billboard", "listing_id": id, "amount_cents": 1234},
    ]);
    let (st, us) = quote(&s, json!({"items": items, "billing_country": "US"})).await;
    assert_eq!(st, 200, "{us}");
    let nets: Vec<i64> = us["lines"].as_array().unwrap().iter().map(|l| l["net_cents"].as_i64().unwrap()).collect();
    assert_eq!(nets, [4900, 3800, 1234], "{us}");
    assert_eq!(us["lines"][1]["quantity"], 2);
    assert_eq!((us["totals"]["net_cents"].as_i64(), us["totals"]["vat_cents"].as_i64()), (Some(9934), Some(0)));
    assert_eq!((us["vat"]["final"].as_bool(), us["saved"].as_bool()), (Some(true), Some(false)));

    let (_, de) = quote(&s, json!({"items": items, "billing_country": "DE"})).await;
    let vats: Vec<i64> = de["lines"].as_array().unwrap().iter().map(|l| l["vat_cents"].as_i64().unwrap()).collect();
    assert_eq!(vats, [931, 722, 234], "19 % per line, half away from zero: {de}");
    assert_eq!(de["totals"], json!({"currency": "USD", "net_cents": 9934, "vat_cents": 1887, "gross_cents": 11821}));
    assert_eq!((de["vat"]["rate_bp"].as_u64(), de["vat"]["rate"].as_str()), (Some(1900), Some("19 %")));

    let (_, fr) = quote(&s, json!({"items": items, "billing_country": "fr"})).await;
    assert_eq!(fr["totals"], json!({"currency": "USD", "net_cents": 9934, "vat_cents": 1987, "gross_cents": 11921}));
    assert_eq!(fr["lines"][0]["vat_cents"], 980);

    let (st, b2b) = quote(&s, json!({"items": items, "billing_country": "DE", "vat_number": "DE 123 456 789"})).await;
    assert_eq!(st, 200, "{b2b}");
    // Without VIES configured a VAT number alone removes no VAT (reverse charge needs the registry's
    // word: see vat_numbers_are_checked_in_vies_when_configured).
    assert_eq!(
        (b2b["vat"]["reverse_charge"].as_bool(), b2b["totals"]["vat_cents"].as_i64()),
        (Some(false), Some(1887))
    );
    assert!(b2b["vat"]["note"].as_str().unwrap().contains("confirmed in VIES"), "{b2b}");
    let (st, irish) = quote(&s, json!({"items": items, "billing_country": "IE", "vat_number": "IE1234567WA"})).await;
    assert_eq!((st, irish["vat"]["rate_bp"].as_u64()), (200, Some(2300)), "the seller's own country pays VAT: {irish}");
    let (_, unknown) = quote(&s, json!({"items": items})).await;
    assert_eq!((unknown["vat"]["final"].as_bool(), unknown["totals"]["vat_cents"].as_i64()), (Some(false), Some(0)));

    // The admin's price, read at every quote.
    admin(&s, &["set-price", "--product", "launch", "--cents", "5900"]).await;
    let (_, again) =
        quote(&s, json!({"items": [{"product": "launch", "listing_id": id}], "billing_country": "DE"})).await;
    assert_eq!(
        (again["lines"][0]["net_cents"].as_i64(), again["lines"][0]["vat_cents"].as_i64()),
        (Some(5900), Some(1121))
    );
}

#[tokio::test]
async fn options_are_validated_with_the_field_named() {
    let s = setup().await;
    let id = saved_listing(&s, "Checked One", "ann@acme.example").await;
    let bobs = saved_listing(&s, "Bobs One", "bob@other.example").await;
    let past = (LaunchWeek::of(Utc::now()).plus_weeks(-1).monday()).to_string();
    let next = LaunchWeek::of(Utc::now()).plus_weeks(3).monday();
    let furthest = LaunchWeek::of(Utc::now()).plus_weeks(LaunchWeek::MAX_WEEKS_AHEAD);
    // The Sunday that ends the furthest week still names it; the Monday after is a week too far.
    let last_day = (furthest.monday() + chrono::Days::new(6)).to_string();
    let too_far = (furthest.monday() + chrono::Days::new(7)).to_string();
    let cases = [
        (json!({"items": []}), "items"),
        (json!({"items": [{"product": "nope", "listing_id": id}]}), "items[0].product"),
        (json!({"items": [{"product": "launch"}]}), "items[0].listing_id"),
        (json!({"items": [{"product": "launch", "listing_id": id, "week": past}]}), "items[0].week"),
        (json!({"items": [{"product": "launch", "listing_id": id, "week": "next tuesday"}]}), "items[0].week"),
        (json!({"items": [{"product": "launch", "listing_id": id, "week": too_far}]}), "items[0].week"),
        (json!({"items": [{"product": "launch", "listing_id": id, "week": "9999-12-27"}]}), "items[0].week"),
        (
            json!({"items": [{"product": "launch", "listing_id": id}, {"product": "launch", "listing_id": id}]}),
            "items[1].listing_id",
        ),
        (json!({"items": [{"product": "featured", "listing_id": id, "week": next.to_string()}]}), "items[0].week"),
        (
            json!({"items": [{"product": "extra-category", "listing_id": id, "categories": ["No Such Thing"]}]}),
            "items[0].categories[0]",
        ),
        (json!({"items": [{"product": "extra-category", "listing_id": id}]}), "items[0].categories"),
        (json!({"items": [{"product": "billboard", "listing_id": id, "amount_cents": 499}]}), "items[0].amount_cents"),
        (json!({"items": [{"product": "featured", "listing_id": id}], "billing_country": "USA"}), "billing_country"),
        (
            json!({"items": [{"product": "featured", "listing_id": id}], "billing_country": "DE", "vat_number": "DE12345"}),
            "vat_number",
        ),
        (
            json!({"items": [{"product": "featured", "listing_id": id}], "billing_country": "FR", "vat_number": "DE123456789"}),
            "vat_number",
        ),
        (json!({"items": [{"product": "featured", "listing_id": id, "colour": "red"}]}), "items[0].colour"),
    ];
    for (body, f) in cases {
        let (st, e) = quote(&s, body.clone()).await;
        assert_eq!((st, field(&e)), (400, f.to_owned()), "{body}: {e}");
    }
    let many: Vec<Value> = (0..21).map(|_| json!({"product": "featured", "listing_id": id})).collect();
    assert_eq!(quote(&s, json!({"items": many})).await.0, 400, "21 items");
    let twenty: Vec<Value> = (0..20).map(|_| json!({"product": "featured", "listing_id": id})).collect();
    assert_eq!(quote(&s, json!({"items": twenty})).await.0, 200, "20 items");
    let (st, _) = quote(&s, json!({"items": [{"product": "billboard", "listing_id": id, "amount_cents": 500}]})).await;
    assert_eq!(st, 200, "the minimum itself");
    let (st, q) = quote(&s, json!({"items": [{"product": "launch", "listing_id": id, "week": last_day}]})).await;
    assert_eq!((st, q["lines"][0]["week"].as_str()), (200, Some(furthest.monday().to_string().as_str())), "{q}");
    assert_eq!(quote(&s, json!({"items": [{"product": "featured", "listing_id": bobs}]})).await.0, 404, "not yours");
    let four = json!({"items": [{"product": "extra-category", "listing_id": id, "categories": ["marketing", "ui-design", "productivity", "analytics"]}]});
    assert_eq!(quote(&s, four).await.0, 400, "at most three extras");
    // A full week.
    admin(&s, &["set-setting", "paid_plan_weekly_capacity", "1"]).await;
    let (st, o) = call(&s.app, "POST", "/orders/checkout", &s.ann,
        Some(json!({"items": [{"product": "launch", "listing_id": id, "week": next.to_string()}], "billing_country": "US"}))).await;
    assert_eq!(st, 201, "{o}");
    let page = o["checkout_url"].as_str().unwrap().replacen(&s.app.base, "", 1);
    let mut ann = Browser::new(&s.app);
    sign_in(&mut ann, "ann@acme.example").await;
    let (_, html, _) = ann.get(&page).await;
    ann.post(&format!("{page}/pay"), &[("csrf", &hidden(&html, "csrf"))]).await;
    let other = saved_listing(&s, "Late One", "ann@acme.example").await;
    let (st, e) =
        quote(&s, json!({"items": [{"product": "launch", "listing_id": other, "week": next.to_string()}]})).await;
    assert_eq!((st, field(&e)), (400, "items[0].week".to_owned()), "{e}");
    assert!(e["error"]["details"][0]["problem"].as_str().unwrap().contains("full"), "{e}");
    assert_eq!(
        call(&s.app, "POST", "/orders/quote", &s.reader, Some(json!({"items": []}))).await.0,
        403,
        "orders:write"
    );
}

#[tokio::test]
async fn checkout_once_per_key_and_a_sandbox_payment_launches_the_listing() {
    let s = setup().await;
    let id = saved_listing(&s, "Paid One", "ann@acme.example").await;
    let body = json!({"items": [
        {"product": "launch", "listing_id": id},
        {"product": "unlock-story", "listing_id": id},
        {"product": "billboard", "listing_id": id, "amount_cents": 2000},
    ]});
    let post = |key: &'static str| {
        s.app
            .client
            .post(format!("{}/api/v1/orders/checkout", s.app.base))
            .header("Authorization", format!("Bearer {}", s.ann))
            .header("Idempotency-Key", key)
            .json(&body)
    };
    let first: Value = post("order-1").send().await.unwrap().json().await.unwrap();
    let r = post("order-1").send().await.unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers().get("idempotent-replayed").map(|v| v.to_str().unwrap()), Some("true"));
    let second: Value = r.json().await.unwrap();
    assert_eq!(first["number"], second["number"], "one order per key");
    let (_, mine) = call(&s.app, "GET", "/orders", &s.ann, None).await;
    assert_eq!(mine["pagination"]["total"], 1, "{mine}");
    assert_eq!(first["status"], "pending");
    let number = first["number"].as_str().unwrap().to_owned();
    assert_eq!(call(&s.app, "GET", &format!("/orders/{number}"), &s.bob, None).await.0, 404, "another person's order");
    assert_eq!(
        call(&s.app, "GET", "/orders/LD-0000", &s.ann, None).await.0,
        404,
        "any string that is no order of yours"
    );
    assert_eq!(call(&s.app, "GET", "/orders/LD-0000000000", &s.ann, None).await.0, 404);

    // The checkout page: sign in, give billing details (VAT re-priced), pay in the sandbox.
    let url = first["checkout_url"].as_str().unwrap().to_owned();
    assert!(url.starts_with(&s.app.base) && url.ends_with(&number), "{url}");
    let path = url.replacen(&s.app.base, "", 1);
    let mut bob = Browser::new(&s.app);
    sign_in(&mut bob, "bob@other.example").await;
    assert_eq!(bob.get(&path).await.0, 404, "only the order's owner sees it");
    let mut ann = Browser::new(&s.app);
    let (st, html, _) = ann.get(&path).await;
    assert!(st == 200 && html.contains("Sign in to pay"), "{html}");
    sign_in(&mut ann, "ann@acme.example").await;
    let (st, html, _) = ann.get(&path).await;
    assert!(st == 200 && html.contains(&number) && html.contains("Enter your billing country"), "{html}");
    assert!(!html.contains("id=\"pay\""), "no payment before the VAT is known");
    let csrf = hidden(&html, "csrf");
    let (st, html, _) =
        ann.post(&format!("{path}/billing"), &[("csrf", &csrf), ("country", "ZZ"), ("name", "Ann")]).await;
    assert!(st == 400 && html.contains("billing_country"), "{html}");
    // The billing name's bound is said, not applied by cutting it short (before: 201 characters were
    // kept as 200, silently).
    let long = "N".repeat(domain::order::MAX_BILLING_NAME + 1);
    let (st, html, _) =
        ann.post(&format!("{path}/billing"), &[("csrf", &csrf), ("country", "DE"), ("name", &long)]).await;
    assert!(st == 400 && html.contains("billing_name"), "{st}: {html}");
    let (_, order) = call(&s.app, "GET", &format!("/orders/{number}"), &s.ann, None).await;
    assert!(order["billing"]["name"].is_null(), "nothing was kept: {order}");
    let longest = "N".repeat(domain::order::MAX_BILLING_NAME);
    let (st, _, _) =
        ann.post(&format!("{path}/billing"), &[("csrf", &csrf), ("country", "DE"), ("name", &longest)]).await;
    assert_eq!(st, 303, "a name at the bound is taken");
    let (st, _, loc) =
        ann.post(&format!("{path}/billing"), &[("csrf", &csrf), ("country", "DE"), ("name", "Ann GmbH")]).await;
    assert_eq!((st, loc.as_deref()), (303, Some(path.as_str())));
    let (_, order) = call(&s.app, "GET", &format!("/orders/{number}"), &s.ann, None).await;
    assert_eq!(
        order["totals"],
        json!({"currency": "USD", "net_cents": 8400, "vat_cents": 1596, "gross_cents": 9996}),
        "{order}"
    );
    assert_eq!(order["billing"]["name"], "Ann GmbH");
    let (_, html, _) = ann.get(&path).await;
    assert!(html.contains("Test mode") && html.contains("Pay $99.96 (test payment)"), "{html}");
    assert_eq!(ann.post(&format!("{path}/pay"), &[("csrf", "forged")]).await.0, 403);
    assert_eq!(call(&s.app, "GET", "/listings/paid-one", &s.ann, None).await.0, 404, "not live before payment");
    let (st, _, _) = ann.post(&format!("{path}/pay"), &[("csrf", &csrf)]).await;
    assert_eq!(st, 303);
    let (_, order) = call(&s.app, "GET", &format!("/orders/{number}"), &s.ann, None).await;
    assert_eq!((order["status"].as_str(), order["checkout_url"].as_str()), (Some("paid"), None), "{order}");
    let lines = order["lines"].as_array().unwrap();
    assert!(lines.iter().all(|l| l["fulfilled"] == true), "{order}");
    assert!(lines[0]["fulfilment"].as_str().unwrap().starts_with("live since"), "{order}");
    let (st, live) = call(&s.app, "GET", "/listings/paid-one", &s.ann, None).await;
    assert_eq!(st, 200, "live after payment: {live}");
    let (_, mine) = call(&s.app, "GET", &format!("/me/listings/{id}"), &s.ann, None).await;
    assert_eq!(
        (mine["status"].as_str(), mine["plan"].as_str(), mine["unlocked"]["story"].as_bool()),
        (Some("live"), Some("paid"), Some(true))
    );
    let (_, board) = call(&s.app, "GET", "/leaderboards/billboard", &s.ann, None).await;
    assert!(board.to_string().contains("paid-one"), "the billboard counts it: {board}");
    // Paying again changes nothing.
    let (st, _, _) = ann.post(&format!("{path}/pay"), &[("csrf", &csrf)]).await;
    assert_eq!(st, 303);
    let (_, again) = call(&s.app, "GET", &format!("/orders/{number}"), &s.ann, None).await;
    assert_eq!(again["paid_at"], order["paid_at"]);
}

/// A webhook body for a Checkout Session, and its `Stripe-Signature` with `secret` at `t`.
fn stripe_event(id: &str, session: &str, secret: &str, t: i64) -> (String, String) {
    let body = json!({
        "id": id, "object": "event", "type": "checkout.session.completed",
        "data": {"object": {"id": session, "object": "checkout.session", "payment_status": "paid"}},
    })
    .to_string();
    let sig = format!("t={t},v1={}", adapters_payments::Stripe::sign(secret, t, body.as_bytes()));
    (body, sig)
}

/// A service taking payments through a Stripe stand-in (secret `sk_test_launchdir`, webhook secret
/// `whsec_launchdir`), with Ann's key in every role.
pub(crate) async fn with_stripe() -> (Setup, test_support::StripeStandIn) {
    let stripe = test_support::StripeStandIn::start("sk_test_launchdir").await;
    let db = test_support::sqlite();
    let ann_key = key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite, OrdersWrite]).await;
    let base = stripe.url();
    let app = spawn_app_configured(db, false, move |a| {
        a.read_cache_secs = 0;
        a.outbound.payments = Some("stripe".into());
        a.outbound.stripe_secret_key = Some("sk_test_launchdir".into());
        a.outbound.stripe_webhook_secret = Some("whsec_launchdir".into());
        a.outbound.stripe_api_base = base;
    })
    .await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    (Setup { app, store, ann: ann_key.clone(), bob: ann_key.clone(), reader: ann_key }, stripe)
}

#[tokio::test]
async fn stripe_checkout_sessions_and_signed_webhooks_only() {
    let (s, stripe) = with_stripe().await;
    let id = saved_listing(&s, "Striped One", "ann@acme.example").await;
    let other = saved_listing(&s, "Striped Two", "ann@acme.example").await;
    let checkout =
        |listing: i64| json!({"items": [{"product": "launch", "listing_id": listing}], "billing_country": "FR"});
    let (st, o) = call(&s.app, "POST", "/orders/checkout", &s.ann, Some(checkout(id))).await;
    assert_eq!((st, o["gateway"].as_str()), (201, Some("stripe")), "{o}");
    let (_, o2) = call(&s.app, "POST", "/orders/checkout", &s.ann, Some(checkout(other))).await;

    // Pay: the page sends the person to a Checkout Session made through the API, for the gross amount.
    let path = o["checkout_url"].as_str().unwrap().replacen(&s.app.base, "", 1);
    let mut ann = Browser::new(&s.app);
    sign_in(&mut ann, "ann@acme.example").await;
    let (_, html, _) = ann.get(&path).await;
    assert!(html.contains("Stripe") && !html.contains("Test mode"), "{html}");
    let (st, _, loc) = ann.post(&format!("{path}/pay"), &[("csrf", &hidden(&html, "csrf"))]).await;
    assert_eq!((st, loc.as_deref()), (303, Some("https://checkout.stripe.test/c/pay/cs_test_1")));
    let form = &stripe.sessions()[0];
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("line_items[0][price_data][unit_amount]"), Some("5880"), "4900 + 20 % French VAT: {form:?}");
    assert_eq!(get("client_reference_id"), o["number"].as_str());
    assert_eq!((get("mode"), get("line_items[0][price_data][currency]")), (Some("payment"), Some("usd")));
    assert!(!form.iter().any(|(k, _)| k.contains("card")), "no card data is ever sent");

    let hook = |body: String, sig: Option<String>| {
        let mut r = s.app.client.post(format!("{}/webhooks/stripe", s.app.base)).body(body);
        if let Some(sig) = sig {
            r = r.header("Stripe-Signature", sig);
        }
        r.send()
    };
    let now = Utc::now().timestamp();
    let status = |n: &Value| n["number"].as_str().unwrap().to_owned();
    let (app, key) = (&s.app, s.ann.as_str());
    let order = |n: String| async move { call(app, "GET", &format!("/orders/{n}"), key, None).await.1 };
    // Forged: another secret, no signature, a stale timestamp — refused, nothing paid.
    let (body, forged) = stripe_event("evt_forged", "cs_test_1", "whsec_attacker", now);
    assert_eq!(hook(body.clone(), Some(forged)).await.unwrap().status(), 400);
    assert_eq!(hook(body, None).await.unwrap().status(), 400);
    let (body, stale) = stripe_event("evt_old", "cs_test_1", "whsec_launchdir", now - 301);
    assert_eq!(hook(body, Some(stale)).await.unwrap().status(), 400);
    assert_eq!(order(status(&o)).await["status"], "pending");
    // Genuine: paid and fulfilled; the replay changes nothing.
    let (body, sig) = stripe_event("evt_1", "cs_test_1", "whsec_launchdir", now);
    let r: Value = hook(body.clone(), Some(sig.clone())).await.unwrap().json().await.unwrap();
    assert_eq!(r["outcome"], "paid", "{r}");
    let paid = order(status(&o)).await;
    assert_eq!(paid["status"], "paid");
    assert!(paid["lines"][0]["fulfilment"].as_str().unwrap().starts_with("live since"), "{paid}");
    let again: Value = hook(body, Some(sig)).await.unwrap().json().await.unwrap();
    assert_eq!(again["outcome"], "duplicate");
    assert_eq!(order(status(&o)).await["paid_at"], paid["paid_at"]);
    // A genuine event for a session no order has, and the other order stays pending.
    let (body, sig) = stripe_event("evt_2", "cs_test_999", "whsec_launchdir", now);
    let r: Value = hook(body, Some(sig)).await.unwrap().json().await.unwrap();
    assert_eq!(r["outcome"], "ignored");
    assert_eq!(order(status(&o2)).await["status"], "pending");
}

/// A VIES stand-in: DE123456789 is registered, DE999999999 is not, any French number's register is down.
fn vies(head: &str, body: &str) -> (u16, String) {
    assert!(head.starts_with("POST /check-vat-number "), "{head}");
    let v: Value = serde_json::from_str(body).unwrap();
    match (v["countryCode"].as_str(), v["vatNumber"].as_str()) {
        (Some("DE"), Some("123456789")) => {
            (200, json!({"countryCode": "DE", "vatNumber": "123456789", "valid": true}).to_string())
        }
        (Some("FR"), _) => {
            (200, json!({"actionSucceed": false, "errorWrappers": [{"error": "MS_UNAVAILABLE"}]}).to_string())
        }
        (c, n) => (200, json!({"countryCode": c, "vatNumber": n, "valid": false}).to_string()),
    }
}

#[tokio::test]
async fn vat_numbers_are_checked_in_vies_when_configured() {
    let register = test_support::JsonStandIn::start(vies).await;
    let db = test_support::sqlite();
    let key = key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite, OrdersWrite]).await;
    let url = register.url();
    let app = spawn_app_configured(db, false, move |a| a.outbound.vies_url = Some(url)).await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let id = owned_listing(&store, "Vies One", "ann@acme.example").await;
    let body = |country: &str, number: &str| json!({"items": [{"product": "launch", "listing_id": id}], "billing_country": country, "vat_number": number});
    let (st, ok) = call(&app, "POST", "/orders/quote", &key, Some(body("DE", "DE123456789"))).await;
    assert_eq!((st, ok["vat"]["reverse_charge"].as_bool()), (200, Some(true)), "{ok}");
    assert!(ok["vat"]["note"].as_str().unwrap().contains("confirmed in VIES"), "{ok}");
    let (st, e) = call(&app, "POST", "/orders/quote", &key, Some(body("DE", "DE999999999"))).await;
    assert_eq!((st, field(&e)), (400, "vat_number".to_owned()), "{e}");
    assert!(e["error"]["details"][0]["problem"].as_str().unwrap().contains("not registered in VIES"));
    let (st, down) = call(&app, "POST", "/orders/quote", &key, Some(body("FR", "FRAB123456789"))).await;
    assert_eq!(
        (st, down["vat"]["reverse_charge"].as_bool(), down["vat"]["rate_bp"].as_u64()),
        (200, Some(false), Some(2000))
    );
    assert!(down["vat"]["note"].as_str().unwrap().contains("could not be checked"), "{down}");
}

#[tokio::test]
async fn checkouts_made_at_once_for_a_weeks_last_paid_places_get_only_those_places() {
    for db in [Some(test_support::sqlite()), test_support::postgres().await].into_iter().flatten() {
        let app = spawn_app_configured(db, false, |a| a.read_cache_secs = 0).await;
        app.wait_ready().await;
        let key = key_for(&app.db.url, "buyer@makers.example", &[AccountRead, ListingsWrite, OrdersWrite]).await;
        let store = bootstrap::App::connect(&app.db.url).await.unwrap();
        domain::ports::SettingsRepository::set_setting(store.store.as_ref(), "paid_plan_weekly_capacity", "2")
            .await
            .unwrap();
        let week = LaunchWeek::of(Utc::now()).plus_weeks(2).monday().to_string();
        let mut ids = Vec::new();
        for n in 0..8 {
            ids.push(owned_listing(&store, &format!("Bought {n}"), "buyer@makers.example").await);
        }
        let checkouts = ids.iter().map(|id| {
            let (app, key, week) = (&app, &key, &week);
            let body =
                json!({"items": [{"product": "launch", "listing_id": id, "week": week}], "billing_country": "US"});
            async move { call(app, "POST", "/orders/checkout", key, Some(body)).await }
        });
        let answers = futures_util::future::join_all(checkouts).await;
        let made: Vec<&Value> = answers.iter().filter(|(s, _)| *s == 201).map(|(_, b)| b).collect();
        assert_eq!(made.len(), 2, "{answers:?}");
        for (st, e) in answers.iter().filter(|(s, _)| *s != 201) {
            assert_eq!((*st, field(e)), (400, "items[0].week".to_owned()), "{e}");
            assert!(e["error"]["details"][0]["problem"].as_str().unwrap().contains("held by checkouts"), "{e}");
        }
        // Unpaid, the two still hold their places: a quote for the week says so, one by one.
        let bought: Vec<i64> = made.iter().map(|o| o["lines"][0]["listing_id"].as_i64().unwrap()).collect();
        let other = ids.iter().find(|id| !bought.contains(id)).unwrap();
        let body = json!({"items": [{"product": "launch", "listing_id": other, "week": week}]});
        let (st, e) = call(&app, "POST", "/orders/quote", &key, Some(body)).await;
        assert_eq!((st, field(&e)), (400, "items[0].week".to_owned()), "{e}");
        // A listing that holds a place is quoted for it again (its own hold is no rival).
        let body = json!({"items": [{"product": "launch", "listing_id": bought[0], "week": week}]});
        assert_eq!(call(&app, "POST", "/orders/quote", &key, Some(body)).await.0, 200);
    }
}

#[tokio::test]
async fn an_account_has_at_most_ten_orders_awaiting_payment() {
    let s = setup().await;
    let id = saved_listing(&s, "Many Orders", "ann@acme.example").await;
    let body = json!({"items": [{"product": "unlock-story", "listing_id": id}], "billing_country": "US"});
    for n in 0..domain::order::MAX_OPEN_ORDERS {
        let (st, o) = call(&s.app, "POST", "/orders/checkout", &s.ann, Some(body.clone())).await;
        assert_eq!(st, 201, "order {n}: {o}");
    }
    let r = s
        .app
        .client
        .post(format!("{}/api/v1/orders/checkout", s.app.base))
        .header("Authorization", format!("Bearer {}", s.ann))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    let wait: u64 = r.headers().get("retry-after").unwrap().to_str().unwrap().parse().unwrap();
    assert!(wait > 23 * 3600 && wait <= 24 * 3600, "until the oldest expires: {wait}");
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "open_orders", "{e}");
    let (_, mine) = call(&s.app, "GET", "/orders", &s.ann, None).await;
    assert_eq!(mine["pagination"]["total"], 10, "nothing stored: {mine}");
    // Another account has its own ten.
    let bobs = saved_listing(&s, "Bobs Order", "bob@other.example").await;
    let body = json!({"items": [{"product": "unlock-story", "listing_id": bobs}], "billing_country": "US"});
    assert_eq!(call(&s.app, "POST", "/orders/checkout", &s.bob, Some(body)).await.0, 201);
}
