//! The payment gateway: how the checkout page takes a payment, and how a gateway's webhook is trusted.

use crate::order::Order;
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// How the checkout page goes on once the person presses "Pay".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentStart {
    /// The page records the payment itself (the sandbox's test payment).
    OnPage,
    /// The person continues at the gateway's page; `reference` identifies the payment in its webhooks.
    Redirect { url: String, reference: String },
}

/// A webhook event that passed its signature check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentEvent {
    /// The gateway's event id (replays carry the same id).
    pub id: String,
    pub kind: String,
    /// The payment's reference from [`PaymentStart::Redirect`].
    pub reference: Option<String>,
    /// Whether the event says the money was received.
    pub paid: bool,
    /// What the gateway says was charged, in the currency's minor unit, and the currency (lower case),
    /// when the event carries them: a payment is fulfilled only when both are the order's.
    pub amount: Option<i64>,
    pub currency: Option<String>,
    /// The payment session ended unpaid (Stripe's `checkout.session.expired`).
    pub expired: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaymentError {
    /// The gateway refused or could not be reached (the message is for logs and the person).
    #[error("the payment provider failed: {0}")]
    Gateway(String),
    /// A webhook whose signature, timestamp or body does not hold up.
    #[error("webhook refused: {0}")]
    Refused(String),
}

#[async_trait]
pub trait PaymentGateway: Send + Sync + std::fmt::Debug {
    /// `sandbox` or `stripe`, stored on each order.
    fn name(&self) -> &'static str;

    /// Starts paying `order` (its gross total, VAT included); the person comes back to `return_url`.
    async fn start(&self, order: &Order, return_url: &str) -> Result<PaymentStart, PaymentError>;

    /// Ends the payment session `reference` so it can no longer be paid (a new price needs a new
    /// session); an error when it cannot be ended, for example because it was paid meanwhile.
    async fn cancel(&self, reference: &str) -> Result<(), PaymentError>;

    /// Checks a webhook's signature header and body as of `now`.
    fn verify_webhook(
        &self,
        signature: Option<&str>,
        body: &[u8],
        now: DateTime<Utc>,
    ) -> Result<PaymentEvent, PaymentError>;
}

/// A register of VAT numbers (VIES).
#[async_trait]
pub trait VatRegistry: Send + Sync + std::fmt::Debug {
    /// Whether a well-formed number is registered; `Unavailable` when the register cannot say.
    async fn check(&self, number: &crate::vat::VatNumber) -> crate::vat::VatCheck;
}
