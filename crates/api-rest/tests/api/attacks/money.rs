//! Money: a public deployment that takes test payments by accident, a webhook for another amount or
//! currency, a price changed under an open payment session, orders left pending for ever, and a VAT
//! number typed to dodge VAT.

use crate::drafts::key_for;
use crate::helpers::{Binary, spawn_app_configured, wait_ready};
use crate::orders::{Setup, saved_listing, with_stripe};
use crate::own::call;
use crate::pages::{Browser, hidden, sign_in};
use chrono::Utc;
use domain::user::Scope::{AccountRead, ListingsWrite, OrdersWrite};
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test]
async fn a_public_deployment_refuses_to_start_without_choosing_its_payments() {
    let db = test_support::sqlite();
    let mut unset = Binary::serve_with(&db, &[], &[("LAUNCHDIR_PUBLIC_URL", "https://launch.example")]);
    let status = unset.wait_exit(Duration::from_secs(30));
    assert!(!status.success(), "it must not start");
    let err = unset.stderr();
    assert!(err.contains("LAUNCHDIR_PAYMENTS"), "the error names the setting: {err}");

    // Chosen on purpose, sandbox included, it starts.
    let chosen = Binary::serve_with(
        &db,
        &[],
        &[("LAUNCHDIR_PUBLIC_URL", "https://launch.example"), ("LAUNCHDIR_PAYMENTS", "sandbox")],
    );
    assert!(wait_ready(&reqwest::Client::new(), &chosen.base, Duration::from_secs(30)).await.is_some());
}

/// A signed Stripe event about session `session`.
fn event(id: &str, kind: &str, session: Value) -> (String, String) {
    let body = json!({"id": id, "object": "event", "type": kind, "data": {"object": session}}).to_string();
    let t = Utc::now().timestamp();
    (body.clone(), format!("t={t},v1={}", adapters_payments::Stripe::sign("whsec_launchdir", t, body.as_bytes())))
}

async fn hook(s: &Setup, (body, sig): (String, String)) -> Value {
    let r = s.app.client.post(format!("{}/webhooks/stripe", s.app.base)).header("Stripe-Signature", sig).body(body);
    r.send().await.unwrap().json().await.unwrap()
}

/// An order for `listing` billed in France, and the person pressing Pay on its checkout page.
async fn order_and_pay(s: &Setup, listing: i64) -> (String, String, Browser<'_>) {
    let body = json!({"items": [{"product": "launch", "listing_id": listing}], "billing_country": "FR"});
    let (st, o) = call(&s.app, "POST", "/orders/checkout", &s.ann, Some(body)).await;
    assert_eq!(st, 201, "{o}");
    let path = o["checkout_url"].as_str().unwrap().replacen(&s.app.base, "", 1);
    let mut b = Browser::new(&s.app);
    sign_in(&mut b, "ann@acme.example").await;
    let (_, html, _) = b.get(&path).await;
    let (st, page, _) = b.post(&format!("{path}/pay"), &[("csrf", &hidden(&html, "csrf"))]).await;
    assert_eq!(st, 303, "{page}");
    (o["number"].as_str().unwrap().to_owned(), path, b)
}

async fn status(s: &Setup, number: &str) -> Value {
    call(&s.app, "GET", &format!("/orders/{number}"), &s.ann, None).await.1
}

async fn flag(s: &Setup, number: &str) -> Option<String> {
    let n = domain::order::OrderNumber::parse(number).unwrap();
    s.store.store.order_by_number(&n).await.unwrap().unwrap().flag
}

#[tokio::test]
async fn a_webhook_for_another_amount_or_currency_fulfils_nothing_and_flags_the_order() {
    let (s, _stand_in) = with_stripe().await;
    let id = saved_listing(&s, "Paid Wrong", "ann@acme.example").await;
    let (number, _, _) = order_and_pay(&s, id).await;
    let session = |amount: i64, currency: &str| {
        json!({"id": "cs_test_1", "object": "checkout.session", "payment_status": "paid",
               "amount_total": amount, "currency": currency})
    };
    let r = hook(&s, event("evt_cheap", "checkout.session.completed", session(1, "usd"))).await;
    assert_eq!(r["outcome"], "ignored", "{r}");
    assert_eq!(status(&s, &number).await["status"], "pending");
    assert!(flag(&s, &number).await.unwrap().contains("1 cents"), "flagged for the operator");
    let r = hook(&s, event("evt_yen", "checkout.session.completed", session(5880, "jpy"))).await;
    assert_eq!(r["outcome"], "ignored", "{r}");
    assert!(flag(&s, &number).await.unwrap().contains("jpy"));
    assert_eq!(status(&s, &number).await["status"], "pending");
    // The order's own amount and currency: paid and fulfilled.
    let r = hook(&s, event("evt_right", "checkout.session.completed", session(5880, "usd"))).await;
    assert_eq!(r["outcome"], "paid", "{r}");
    assert_eq!(status(&s, &number).await["status"], "paid");
}

#[tokio::test]
async fn a_new_price_ends_the_open_payment_session_first() {
    let (s, stripe) = with_stripe().await;
    let id = saved_listing(&s, "Repriced", "ann@acme.example").await;
    let (number, path, mut ann) = order_and_pay(&s, id).await;
    let unit = |n: usize| {
        stripe.sessions()[n].iter().find(|(k, _)| k == "line_items[0][price_data][unit_amount]").unwrap().1.clone()
    };
    assert_eq!(unit(0), "5880");
    // The session ends when the order does (a day after it was made), so no one pays an expired order.
    let ends: i64 = stripe.sessions()[0].iter().find(|(k, _)| k == "expires_at").unwrap().1.parse().unwrap();
    let in_a_day = (Utc::now() + chrono::Duration::hours(24)).timestamp();
    assert!((in_a_day - 120..=in_a_day).contains(&ends), "{ends} vs {in_a_day}");
    // Billed in the US instead: VAT goes, so the old session (for 5880) is ended before the price moves.
    let (_, html, _) = ann.get(&path).await;
    let csrf = hidden(&html, "csrf");
    let (st, _, _) = ann.post(&format!("{path}/billing"), &[("csrf", &csrf), ("country", "US")]).await;
    assert_eq!(st, 303);
    assert_eq!(stripe.expired(), ["cs_test_1"]);
    assert_eq!(status(&s, &number).await["totals"]["gross_cents"], 4900);
    // Paying again opens a new session at the new price.
    let (_, html, _) = ann.get(&path).await;
    let (st, _, _) = ann.post(&format!("{path}/pay"), &[("csrf", &hidden(&html, "csrf"))]).await;
    assert_eq!(st, 303);
    assert_eq!(unit(1), "4900");
    // A session the person has paid cannot be ended, so the price cannot change under it.
    stripe.complete("cs_test_2");
    let (st, page, _) = ann.post(&format!("{path}/billing"), &[("csrf", &csrf), ("country", "DE")]).await;
    assert_eq!(st, 409, "{page}");
    assert_eq!(status(&s, &number).await["totals"]["gross_cents"], 4900, "the price stayed");
}

#[tokio::test]
async fn an_unpaid_session_frees_its_order_and_pending_orders_expire_after_a_day() {
    let (s, _stand_in) = with_stripe().await;
    let id = saved_listing(&s, "Left Pending", "ann@acme.example").await;
    let (number, path, mut ann) = order_and_pay(&s, id).await;
    let r = hook(
        &s,
        event("evt_exp", "checkout.session.expired", json!({"id": "cs_test_1", "object": "checkout.session"})),
    )
    .await;
    assert_eq!(r["outcome"], "ignored", "{r}");
    let n = domain::order::OrderNumber::parse(&number).unwrap();
    assert_eq!(s.store.store.order_by_number(&n).await.unwrap().unwrap().gateway_ref, None, "a new session may start");
    let (_, html, _) = ann.get(&path).await;
    assert_eq!(ann.post(&format!("{path}/pay"), &[("csrf", &hidden(&html, "csrf"))]).await.0, 303);

    // A day later nobody has paid: the hourly step cancels it; money arriving after that is flagged.
    let later = (Utc::now() + chrono::Duration::hours(25)).to_rfc3339();
    let out = crate::helpers::cli(&s.app.db.url, &["admin", "run-jobs", "--now", &later]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(status(&s, &number).await["status"], "cancelled");
    let paid = json!({"id": "cs_test_2", "object": "checkout.session", "payment_status": "paid",
                      "amount_total": 5880, "currency": "usd"});
    let r = hook(&s, event("evt_late", "checkout.session.completed", paid)).await;
    assert_eq!(r["outcome"], "ignored", "{r}");
    assert!(flag(&s, &number).await.unwrap().contains("refund"), "the operator is told to refund");
}

#[tokio::test]
async fn a_vat_number_alone_removes_no_vat_without_a_registry_to_confirm_it() {
    let db = test_support::sqlite();
    let key = key_for(&db.url, "ann@acme.example", &[AccountRead, ListingsWrite, OrdersWrite]).await;
    let app = spawn_app_configured(db, false, |_| {}).await;
    app.wait_ready().await;
    let store = bootstrap::App::connect(&app.db.url).await.unwrap();
    let s = Setup { app, store, ann: key.clone(), bob: key.clone(), reader: key };
    let id = saved_listing(&s, "Vat Dodger", "ann@acme.example").await;
    let body = json!({"items": [{"product": "launch", "listing_id": id}], "billing_country": "DE", "vat_number": "DE123456789"});
    let (st, q) = call(&s.app, "POST", "/orders/quote", &s.ann, Some(body)).await;
    assert_eq!(st, 200, "{q}");
    assert_eq!((q["vat"]["reverse_charge"].as_bool(), q["totals"]["vat_cents"].as_i64()), (Some(false), Some(931)));
}
