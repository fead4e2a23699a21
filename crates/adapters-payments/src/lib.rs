//! Payment gateways. `Sandbox` takes a clearly marked test payment on the checkout page itself.
//! `Stripe` creates a Stripe Checkout Session through the API (the person pays on Stripe's page, so no
//! card data reaches us) and trusts webhooks only with a valid `Stripe-Signature` (HMAC-SHA256 of
//! `"{t}.{body}"` with the endpoint secret, timestamp within 300 s); the caller de-duplicates events by id.

mod vies;

pub use vies::Vies;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::order::Order;
use domain::ports::{PaymentError, PaymentEvent, PaymentGateway, PaymentStart};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::time::Duration;
use subtle::ConstantTimeEq;

/// Test payments on the checkout page; no money moves.
#[derive(Debug, Clone, Default)]
pub struct Sandbox;

#[async_trait]
impl PaymentGateway for Sandbox {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    async fn start(&self, _order: &Order, _return_url: &str) -> Result<PaymentStart, PaymentError> {
        Ok(PaymentStart::OnPage)
    }

    async fn cancel(&self, _reference: &str) -> Result<(), PaymentError> {
        Ok(())
    }

    fn verify_webhook(&self, _: Option<&str>, _: &[u8], _: DateTime<Utc>) -> Result<PaymentEvent, PaymentError> {
        Err(PaymentError::Refused("the sandbox gateway takes no webhooks".into()))
    }
}

/// No gateway chosen (`LAUNCHDIR_PAYMENTS` unset on a deployment that is not loopback): every payment
/// is refused with a message naming the setting. `serve` does not start this way; commands that never
/// take payments (jobs, imports) do.
#[derive(Debug, Clone, Default)]
pub struct NotConfigured;

#[async_trait]
impl PaymentGateway for NotConfigured {
    fn name(&self) -> &'static str {
        "none"
    }

    async fn start(&self, _order: &Order, _return_url: &str) -> Result<PaymentStart, PaymentError> {
        Err(PaymentError::Gateway("payments are not configured (LAUNCHDIR_PAYMENTS)".into()))
    }

    async fn cancel(&self, _reference: &str) -> Result<(), PaymentError> {
        Ok(())
    }

    fn verify_webhook(&self, _: Option<&str>, _: &[u8], _: DateTime<Utc>) -> Result<PaymentEvent, PaymentError> {
        Err(PaymentError::Refused("payments are not configured (LAUNCHDIR_PAYMENTS)".into()))
    }
}

/// When a Checkout Session for an order made at `created` should end (Unix seconds): when the order
/// itself expires ([`domain::order::PENDING_HOURS`]), but within what Stripe accepts (31 minutes to 24
/// hours from now).
pub fn session_expiry(created: DateTime<Utc>, now: DateTime<Utc>) -> i64 {
    let order_ends = created + chrono::Duration::hours(domain::order::PENDING_HOURS);
    let earliest = now + chrono::Duration::minutes(31);
    let latest = now + chrono::Duration::hours(24) - chrono::Duration::minutes(1);
    order_ends.clamp(earliest, latest).timestamp()
}

/// How old (or how far in the future) a signed webhook may be.
pub const TOLERANCE_SECS: i64 = 300;

/// Stripe Checkout.
#[derive(Clone)]
pub struct Stripe {
    http: reqwest::Client,
    api_base: String,
    secret_key: String,
    webhook_secret: String,
}

impl std::fmt::Debug for Stripe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stripe").field("api_base", &self.api_base).finish_non_exhaustive()
    }
}

impl Stripe {
    /// `api_base` is `https://api.stripe.com` in production (a stand-in's address in tests).
    pub fn new(api_base: &str, secret_key: &str, webhook_secret: &str) -> Result<Self, String> {
        if secret_key.trim().is_empty() || webhook_secret.trim().is_empty() {
            return Err("STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are both required".into());
        }
        let http = reqwest::Client::builder()
            // A provider's answer is never a reason to go elsewhere: no redirects, and no proxy from
            // the environment (`*_PROXY`) sees the secret key or the payload.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            http,
            api_base: api_base.trim_end_matches('/').to_owned(),
            secret_key: secret_key.to_owned(),
            webhook_secret: webhook_secret.to_owned(),
        })
    }

    /// The `v1` signature of `payload` at `t` (hex), as Stripe computes it.
    pub fn sign(secret: &str, t: i64, payload: &[u8]) -> String {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else { return String::new() };
        mac.update(t.to_string().as_bytes());
        mac.update(b".");
        mac.update(payload);
        mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[async_trait]
impl PaymentGateway for Stripe {
    fn name(&self) -> &'static str {
        "stripe"
    }

    async fn start(&self, order: &Order, return_url: &str) -> Result<PaymentStart, PaymentError> {
        let mut form: Vec<(String, String)> = vec![
            ("mode".into(), "payment".into()),
            ("success_url".into(), return_url.to_owned()),
            ("cancel_url".into(), return_url.to_owned()),
            ("client_reference_id".into(), order.number.as_str().to_owned()),
            ("metadata[order_number]".into(), order.number.as_str().to_owned()),
            ("expires_at".into(), session_expiry(order.created_at, Utc::now()).to_string()),
        ];
        for (i, s) in order.lines.iter().enumerate() {
            let p = format!("line_items[{i}]");
            form.push((format!("{p}[quantity]"), "1".into()));
            form.push((format!("{p}[price_data][currency]"), "usd".into()));
            form.push((format!("{p}[price_data][unit_amount]"), s.line.gross.get().to_string()));
            let name = if s.line.quantity > 1 {
                format!("{} × {}", s.line.name, s.line.quantity)
            } else {
                s.line.name.clone()
            };
            form.push((format!("{p}[price_data][product_data][name]"), name));
        }
        let r = self
            .http
            .post(format!("{}/v1/checkout/sessions", self.api_base))
            .bearer_auth(&self.secret_key)
            .header("Idempotency-Key", format!("launchdir-{}-{}", order.number.as_str(), order.gross.get()))
            .form(&form)
            .send()
            .await
            .map_err(|e| PaymentError::Gateway(format!("could not reach Stripe: {e}")))?;
        let status = r.status();
        let body: serde_json::Value =
            r.json().await.map_err(|e| PaymentError::Gateway(format!("unreadable answer: {e}")))?;
        if !status.is_success() {
            let why = body["error"]["message"].as_str().unwrap_or("no message");
            return Err(PaymentError::Gateway(format!("Stripe answered {status}: {why}")));
        }
        match (body["id"].as_str(), body["url"].as_str()) {
            (Some(id), Some(url)) => Ok(PaymentStart::Redirect { url: url.to_owned(), reference: id.to_owned() }),
            _ => Err(PaymentError::Gateway("Stripe's answer has no session id or url".into())),
        }
    }

    async fn cancel(&self, reference: &str) -> Result<(), PaymentError> {
        let r = self
            .http
            .post(format!("{}/v1/checkout/sessions/{reference}/expire", self.api_base))
            .bearer_auth(&self.secret_key)
            .send()
            .await
            .map_err(|e| PaymentError::Gateway(format!("could not reach Stripe: {e}")))?;
        let status = r.status();
        if status.is_success() {
            return Ok(());
        }
        let body: serde_json::Value = r.json().await.unwrap_or_default();
        let why = body["error"]["message"].as_str().unwrap_or("no message");
        Err(PaymentError::Gateway(format!("Stripe could not end the session ({status}): {why}")))
    }

    fn verify_webhook(
        &self,
        signature: Option<&str>,
        body: &[u8],
        now: DateTime<Utc>,
    ) -> Result<PaymentEvent, PaymentError> {
        let refuse = |why: &str| Err(PaymentError::Refused(why.to_owned()));
        let Some(header) = signature else { return refuse("no Stripe-Signature header") };
        let mut t: Option<i64> = None;
        let mut v1: Vec<&str> = Vec::new();
        for part in header.split(',') {
            match part.trim().split_once('=') {
                Some(("t", v)) => t = v.parse().ok(),
                Some(("v1", v)) => v1.push(v),
                _ => {}
            }
        }
        let Some(t) = t else { return refuse("the signature has no timestamp") };
        if (now.timestamp() - t).abs() > TOLERANCE_SECS {
            return refuse("the signature's timestamp is outside the 300 s tolerance");
        }
        let want = Self::sign(&self.webhook_secret, t, body);
        if want.is_empty() || !v1.iter().any(|s| bool::from(s.as_bytes().ct_eq(want.as_bytes()))) {
            return refuse("the signature does not match");
        }
        let event: serde_json::Value =
            serde_json::from_slice(body).map_err(|_| PaymentError::Refused("the body is not JSON".into()))?;
        let Some(id) = event["id"].as_str() else { return refuse("the event has no id") };
        let kind = event["type"].as_str().unwrap_or_default().to_owned();
        let object = &event["data"]["object"];
        let paid = match kind.as_str() {
            "checkout.session.completed" => object["payment_status"].as_str() == Some("paid"),
            "checkout.session.async_payment_succeeded" => true,
            _ => false,
        };
        let expired = kind == "checkout.session.expired";
        Ok(PaymentEvent {
            id: id.to_owned(),
            kind,
            reference: object["id"].as_str().map(str::to_owned),
            paid,
            amount: object["amount_total"].as_i64(),
            currency: object["currency"].as_str().map(str::to_ascii_lowercase),
            expired,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stripe() -> Stripe {
        Stripe::new("http://127.0.0.1:9", "sk_test_x", "whsec_test").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn signatures_are_checked_with_a_tolerance() {
        let s = stripe();
        let now = Utc::now();
        let body = br#"{"id":"evt_1","type":"checkout.session.completed","data":{"object":{"id":"cs_1","payment_status":"paid"}}}"#;
        let t = now.timestamp();
        let good = format!("t={t},v1={}", Stripe::sign("whsec_test", t, body));
        let e = s.verify_webhook(Some(&good), body, now).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((e.id.as_str(), e.reference.as_deref(), e.paid), ("evt_1", Some("cs_1"), true));
        let forged = format!("t={t},v1={}", Stripe::sign("whsec_other", t, body));
        assert!(s.verify_webhook(Some(&forged), body, now).is_err(), "another secret");
        assert!(s.verify_webhook(Some(&good), b"{}", now).is_err(), "another body");
        assert!(s.verify_webhook(None, body, now).is_err());
        let old = t - TOLERANCE_SECS - 1;
        let stale = format!("t={old},v1={}", Stripe::sign("whsec_test", old, body));
        assert!(s.verify_webhook(Some(&stale), body, now).is_err(), "older than 300 s");
        let edge = t - TOLERANCE_SECS;
        let ok = format!("t={edge},v1=00,v1={}", Stripe::sign("whsec_test", edge, body));
        assert!(s.verify_webhook(Some(&ok), body, now).is_ok(), "300 s and any of several v1 values");
        assert!(Stripe::new("x", "", "whsec").is_err());
    }
}
