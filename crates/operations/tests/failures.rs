//! Failure injection with mockall: what the caller gets when something outside fails — a payment
//! gateway that times out, an SMTP server that refuses, a DNS lookup that fails, storage that breaks —
//! and that nothing is left half-done. The use cases run on the in-memory store, built without
//! `bootstrap`; only the failing port is a mock (or, for storage, the store broken on purpose).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use common::{call, ctx_as};
use domain::order::{Billing, LineOptions, Order, OrderNumber, OrderStatus, price};
use domain::ports::{
    DnsError, DnsResolver, FixedClock, MailSender, OutboxEmail, PaymentError, PaymentEvent, PaymentGateway,
    PaymentStart, Store,
};
use domain::vat::VatDecision;
use operations::orders::PaymentStarted;
use operations::{App, OpError, Ports, ReadCache};
use std::sync::Arc;

mockall::mock! {
    pub Gateway {}
    #[async_trait]
    impl PaymentGateway for Gateway {
        fn name(&self) -> &'static str;
        async fn start(&self, order: &Order, return_url: &str) -> Result<PaymentStart, PaymentError>;
        async fn cancel(&self, reference: &str) -> Result<(), PaymentError>;
        fn verify_webhook<'a>(&self, signature: Option<&'a str>, body: &[u8], now: DateTime<Utc>) -> Result<PaymentEvent, PaymentError>;
    }
}

mockall::mock! {
    pub Mailer {}
    #[async_trait]
    impl MailSender for Mailer {
        async fn send(&self, email: &OutboxEmail) -> Result<(), String>;
    }
}

mockall::mock! {
    pub Dns {}
    #[async_trait]
    impl DnsResolver for Dns {
        async fn txt(&self, name: &str) -> Result<Vec<String>, DnsError>;
    }
}

// The ports are Debug (for logs); the mocks say which mock they are.
macro_rules! debug_as_name {
    ($($t:ty),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($t))
            }
        }
    )*};
}
debug_as_name!(MockGateway, MockMailer, MockDns);

async fn store() -> Arc<adapters_memory::MemoryStore> {
    common::store(true).await
}

fn app(store: Arc<dyn Store>, change: impl FnOnce(&mut Ports)) -> App {
    common::app(store, change)
}

/// A pending order of one product, made directly in the store.
async fn pending_order(app: &App, gateway: &str) -> Order {
    let email = format!("ann+{}@acme.example", app.secrets.random_token().get(..8).unwrap_or_default());
    let user = operations::accounts::create_user(app, &email, "correct horse 1", "", false).await.unwrap();
    let products = app.store.list_products().await.unwrap();
    let unlock = products.iter().find(|p| p.code.as_str() == "unlock-story").unwrap().clone();
    let vat = VatDecision { rate_bp: 0, reverse_charge: false, note: "none".into(), final_rate: true };
    let quote = price(vec![(unlock, None, LineOptions::None)], vat);
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(7);
    let number = OrderNumber::from_random(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    match app.store.create_order(user.id, &number, &quote, &Billing::default(), gateway, Utc::now(), 25).await.unwrap()
    {
        domain::ports::OrderCreated::Created(o) => o,
        full => panic!("{full:?}"),
    }
}

#[tokio::test]
async fn a_payment_gateway_that_times_out_is_a_502_to_retry_and_changes_nothing() {
    let store = store().await;
    let mut gateway = MockGateway::new();
    gateway.expect_name().return_const("stripe");
    gateway.expect_start().times(1).returning(|_, _| Err(PaymentError::Gateway("operation timed out".into())));
    gateway.expect_cancel().never();
    let app = app(store.clone(), |p| p.payments = Arc::new(gateway));
    let order = pending_order(&app, "stripe").await;

    let answer = operations::orders::start_payment(&app, &ReadCache::disabled(), &order, "http://test/back").await;
    match answer {
        Err(OpError::Upstream { code, message }) => {
            assert_eq!(code, "payment_provider_failed");
            assert!(message.contains("try again"), "{message}");
        }
        other => panic!("expected a 502 to retry, got {other:?}"),
    }
    let after = app.store.order_by_number(&order.number).await.unwrap().unwrap();
    assert_eq!((after.status(), after.gateway_ref.clone()), (OrderStatus::Pending, None), "nothing stored");

    // The retry, with the provider back, goes through and records the session.
    let mut back = MockGateway::new();
    back.expect_name().return_const("stripe");
    back.expect_start().times(1).returning(|_, _| {
        Ok(PaymentStart::Redirect { url: "https://pay.example/cs_1".into(), reference: "cs_1".into() })
    });
    let app = crate::app(store, |p| p.payments = Arc::new(back));
    let answer = operations::orders::start_payment(&app, &ReadCache::disabled(), &after, "http://test/back").await;
    assert_eq!(answer.unwrap(), PaymentStarted::Redirect("https://pay.example/cs_1".into()));
    let stored = app.store.order_by_number(&order.number).await.unwrap().unwrap();
    assert_eq!(stored.gateway_ref.as_deref(), Some("cs_1"));
}

/// What checkout's pay button may do is the use case's rule, not the page's: an order made for another
/// gateway is refused, one whose VAT is not final names the billing country, and one already paid
/// asks nothing of the gateway.
#[tokio::test]
async fn paying_checks_the_gateway_the_vat_and_the_status_before_the_provider_is_asked() {
    let store = store().await;
    let mut gateway = MockGateway::new();
    gateway.expect_name().return_const("stripe");
    gateway.expect_start().never();
    let app = app(store.clone(), |p| p.payments = Arc::new(gateway));
    let reads = ReadCache::disabled();

    let sandbox_order = pending_order(&app, "sandbox").await;
    match operations::orders::start_payment(&app, &reads, &sandbox_order, "http://test/back").await {
        Err(OpError::Conflict { code, .. }) => assert_eq!(code, "gateway_changed"),
        other => panic!("expected gateway_changed, got {other:?}"),
    }

    let mut unsure = pending_order(&app, "stripe").await;
    unsure.vat_final = false;
    match operations::orders::start_payment(&app, &reads, &unsure, "http://test/back").await {
        Err(OpError::Invalid(errs)) => assert_eq!(errs.0[0].field, "billing_country"),
        other => panic!("expected the billing country to be asked for, got {other:?}"),
    }

    let order = pending_order(&app, "stripe").await;
    assert!(operations::orders::paid(&app, &reads, &order).await.unwrap());
    let settled = app.store.order_by_number(&order.number).await.unwrap().unwrap();
    let answer = operations::orders::start_payment(&app, &reads, &settled, "http://test/back").await;
    assert_eq!(answer.unwrap(), PaymentStarted::Settled);
}

#[tokio::test]
async fn a_session_that_cannot_be_ended_keeps_the_price_it_was_opened_with() {
    let store = store().await;
    let mut gateway = MockGateway::new();
    gateway.expect_name().return_const("stripe");
    gateway.expect_cancel().times(1).returning(|_| Err(PaymentError::Gateway("the session was completed".into())));
    let app = app(store, |p| p.payments = Arc::new(gateway));
    let order = pending_order(&app, "stripe").await;
    app.store.set_gateway_ref(order.id, "cs_9").await.unwrap();
    let order = app.store.order_by_number(&order.number).await.unwrap().unwrap();

    let billing = Billing { country: Some("DE".into()), ..Billing::default() };
    match operations::orders::set_billing(&app, &order, billing).await {
        Err(OpError::Conflict { code, .. }) => assert_eq!(code, "payment_in_progress"),
        other => panic!("expected a 409, got {other:?}"),
    }
    let after = app.store.order_by_number(&order.number).await.unwrap().unwrap();
    assert_eq!((after.gross, after.gateway_ref.as_deref()), (order.gross, Some("cs_9")), "the order is as it was");
}

#[tokio::test]
async fn an_smtp_refusal_keeps_the_email_and_retries_it_later() {
    let store = store().await;
    let t0 = Utc::now();
    let mut refusing = MockMailer::new();
    refusing.expect_send().times(1).returning(|_| Err("550 5.1.1 mailbox unavailable".into()));
    let app = app(store.clone(), |p| {
        p.mailer = Some(Arc::new(refusing));
        p.clock = Arc::new(FixedClock::new(t0));
    });
    assert!(operations::worker::send_email(&app, "bo@acme.example", "Hello", "Body", t0).await.unwrap());
    assert_eq!(operations::worker::run_due(&app, "w1").await.unwrap(), 1, "the delivery job ran");
    let mail = app.store.outbox(Some("bo@acme.example"), 1).await.unwrap().remove(0);
    assert_eq!((mail.sent_at, mail.attempts), (None, 1), "kept, one attempt counted");
    assert!(mail.last_error.as_deref().unwrap_or_default().contains("550"), "{:?}", mail.last_error);
    assert_eq!(operations::worker::run_due(&app, "w1").await.unwrap(), 0, "not retried at once");

    // After the back-off, with the server accepting again, it is delivered once.
    let mut accepting = MockMailer::new();
    accepting.expect_send().times(1).returning(|_| Ok(()));
    let later = crate::app(store, |p| {
        p.mailer = Some(Arc::new(accepting));
        p.clock = Arc::new(FixedClock::new(t0 + chrono::Duration::minutes(5)));
    });
    assert_eq!(operations::worker::run_due(&later, "w2").await.unwrap(), 1);
    let mail = later.store.outbox(Some("bo@acme.example"), 1).await.unwrap().remove(0);
    assert!(mail.sent_at.is_some(), "delivered on the retry");
}

#[tokio::test]
async fn storage_that_breaks_is_a_logged_server_fault_not_a_panic_or_a_wrong_answer() {
    let store = store().await;
    let app = app(store.clone(), |_| {});
    store.break_down();
    let list = operations::registry().into_iter().find(|o| o.id == "list_categories").unwrap();
    let ctx = operations::Ctx {
        app: app.clone(),
        public_url: "http://test".into(),
        reads: ReadCache::disabled(),
        caller: operations::Caller::Anonymous,
        rate_limit_per_minute: 600,
        idempotency_key: None,
        audience: operations::oauth::Audience::Api,
    };
    match list.call(ctx, serde_json::json!({})).await {
        Err(OpError::Repo(domain::ports::RepoError::Unexpected(_))) => {}
        other => panic!("expected a storage failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_dns_lookup_that_fails_leaves_the_claim_pending_and_says_why() {
    use domain::listing::{Lifecycle, ListingProfile, ListingStatus, NewListing, Plan};
    let mut dns = MockDns::new();
    dns.expect_txt().times(2).returning(|name| Err(DnsError(format!("SERVFAIL looking up {name}"))));
    let store = store().await;
    let app = app(store, |p| p.dns = Arc::new(dns));
    let lifecycle = Lifecycle::from_parts(ListingStatus::Live, Plan::Free, None, Some(Utc::now()));
    let profile = ListingProfile::named("Orbit Labs", "https://orbit.example/", "orbit.example");
    let slug = domain::slug::Slug::parse("orbit-labs".to_owned()).unwrap();
    app.store.create_listing(NewListing::plain(slug, profile, lifecycle, Utc::now())).await.unwrap();
    let user =
        operations::accounts::create_user(&app, "ann@orbit.example", "correct horse 1", "", false).await.unwrap();
    let ctx = ctx_as(&app, &user);

    let claim = call(&ctx, "claim_listing", serde_json::json!({"slug": "orbit-labs", "method": "dns"})).await.unwrap();
    let id = claim["claim_id"].as_i64().unwrap();
    match call(&ctx, "verify_claim", serde_json::json!({"claim_id": id})).await {
        Err(OpError::Conflict { code, message }) => {
            assert_eq!(code, "claim_not_verified");
            assert!(message.contains("SERVFAIL"), "the person is told the lookup failed: {message}");
        }
        other => panic!("expected a 409 saying what was found, got {other:?}"),
    }
    let mine = call(&ctx, "list_my_claims", serde_json::json!({})).await.unwrap();
    let c = &mine["items"][0];
    assert_eq!(c["status"], "pending", "a failed lookup is not a refusal: {c}");
    assert_eq!(c["verified_at"], serde_json::Value::Null);
    assert!(c["last_check"]["found"].as_str().unwrap().contains("SERVFAIL"), "{c}");
}

/// A name server that answers after `delay` with the records it is given.
#[derive(Debug, Default)]
struct SlowDns {
    records: std::sync::Mutex<Vec<String>>,
    delay: std::time::Duration,
}

#[async_trait]
impl DnsResolver for SlowDns {
    async fn txt(&self, _name: &str) -> Result<Vec<String>, DnsError> {
        tokio::time::sleep(self.delay).await;
        Ok(self.records.lock().unwrap().clone())
    }
}

/// A caller that stops waiting — an embedding service's timeout, a `select!` that took another branch —
/// does not stop a write half way: the claim being checked when it gave up is verified once the name
/// server answers, and the listing's other owner is told. Before, the operation ran in the caller's
/// future and died with it, wherever it was: between the claim's verification and the owners' mail it
/// made an owner nobody heard of.
#[tokio::test]
async fn a_caller_that_stops_waiting_does_not_stop_a_write_half_way() {
    use domain::listing::{Lifecycle, ListingProfile, ListingStatus, NewListing, Plan};
    let dns = Arc::new(SlowDns { delay: std::time::Duration::from_millis(300), ..SlowDns::default() });
    let store = store().await;
    let app = app(store.clone(), |p| p.dns = dns.clone());
    let lifecycle = Lifecycle::from_parts(ListingStatus::Live, Plan::Free, None, Some(Utc::now()));
    let profile = ListingProfile::named("Orbit Labs", "https://orbit.example/", "orbit.example");
    let slug = domain::slug::Slug::parse("orbit-labs".to_owned()).unwrap();
    let listing = app.store.create_listing(NewListing::plain(slug, profile, lifecycle, Utc::now())).await.unwrap();
    common::owner_of(&app, store.as_ref(), listing.id, "carol@orbit.example", Utc::now()).await;
    let bob = operations::accounts::create_user(&app, "bob@other.example", "correct horse 1", "", false).await.unwrap();
    let ctx = ctx_as(&app, &bob);
    let claim = call(&ctx, "claim_listing", serde_json::json!({"slug": "orbit-labs", "method": "dns"})).await.unwrap();
    *dns.records.lock().unwrap() = vec![claim["instructions"]["dns"]["value"].as_str().unwrap().to_owned()];

    let id = claim["claim_id"].as_i64().unwrap();
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(100),
        call(&ctx, "verify_claim", serde_json::json!({"claim_id": id})),
    )
    .await;
    assert!(gave_up.is_err(), "the caller stopped waiting before the name server answered: {gave_up:?}");

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let mine = call(&ctx, "list_my_claims", serde_json::json!({})).await.unwrap();
        let told = app.store.outbox(Some("carol@orbit.example"), 10).await.unwrap();
        if mine["items"][0]["status"] == "verified" && !told.is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "after the caller gave up: {mine}, told {told:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let told = app.store.outbox(Some("carol@orbit.example"), 10).await.unwrap();
    assert_eq!(told.len(), 1, "the other owner is told: {told:?}");
    assert!(told[0].body.contains("bob@other.example"), "{}", told[0].body);
}
