//! The checkout page (`/checkout/{number}`, the `checkout_url` create_checkout returns): the signed-in
//! owner of the order reviews it, gives billing details (country, optional EU VAT number, name — VAT is
//! re-priced from them) and pays. With the sandbox gateway the page offers a clearly marked test
//! payment. Someone else's order is a 404 page, like an unknown one.

use crate::server::State;
use crate::web::{Line, Message, NEXT, Part, cookie, html, oops, page, rendered, same, see_other, signed_in};
use actix_web::cookie::SameSite;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use domain::auth::Principal;
use domain::order::{Billing, Order, OrderNumber, OrderStatus};
use operations::OpError;
use serde::Deserialize;

fn not_found(state: &State, p: Option<&Principal>) -> HttpResponse {
    html(
        StatusCode::NOT_FOUND,
        page(
            state,
            "Order not found",
            p,
            "<section class=\"card narrow\"><h1>No such order</h1><p>Check the link, and that you are signed in with \
             the account that made the order.</p></section>",
        ),
    )
}

/// The caller's order by its number, or the page to answer instead.
async fn find(state: &State, p: &Principal, number: &str) -> Result<Order, HttpResponse> {
    match operations::orders::order_of(&state.app, p.user_id, number).await {
        Ok(o) => Ok(o),
        Err(operations::OpError::NotFound(_)) => Err(not_found(state, Some(p))),
        Err(e) => {
            tracing::error!(error = %e, "could not read an order");
            Err(oops(state, Some(p)))
        }
    }
}

/// The order page: its lines and totals; while pending, the billing form and the pay button.
#[derive(Template)]
#[template(path = "checkout.html")]
struct CheckoutView<'a> {
    base: &'a str,
    o: &'a Order,
    csrf: &'a str,
    error: Option<&'a str>,
    paid_at: String,
}

fn render(state: &State, o: &Order, csrf: &str, error: Option<&str>) -> String {
    let paid_at = o.paid_at.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string()).unwrap_or_default();
    rendered(&CheckoutView { base: &state.public_url, o, csrf, error, paid_at })
}

pub async fn show(state: web::Data<State>, req: HttpRequest, number: web::Path<String>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else {
        let m = Message::new("Sign in to pay")
            .line("Sign in with the account that made the order; you will come back here.")
            .with(Line::of(vec![Part::Button(state.url("/signin"), "Sign in".into())]));
        let body = rendered(&m);
        let mut r = html(StatusCode::OK, page(&state, "Checkout", None, &body));
        if OrderNumber::parse(&number).is_ok() {
            let _ = r.add_cookie(&cookie(&state, NEXT, format!("/checkout/{number}"), SameSite::Lax, 1));
        }
        return r;
    };
    match find(&state, &p, &number).await {
        Ok(o) => html(StatusCode::OK, page(&state, "Checkout", Some(&p), &render(&state, &o, &csrf, None))),
        Err(r) => r,
    }
}

#[derive(Debug, Deserialize)]
pub struct BillingForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    country: String,
    #[serde(default)]
    vat_number: String,
}

pub async fn billing(
    state: web::Data<State>,
    req: HttpRequest,
    number: web::Path<String>,
    form: web::Form<BillingForm>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else {
        return see_other(&state.url(&format!("/checkout/{number}")));
    };
    let o = match find(&state, &p, &number).await {
        Ok(o) => o,
        Err(r) => return r,
    };
    if !same(&state, &form.csrf, &csrf) {
        return html(
            StatusCode::FORBIDDEN,
            page(&state, "Checkout", Some(&p), &render(&state, &o, &csrf, Some("This form expired; try again."))),
        );
    }
    let opt = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    let name = opt(&form.name);
    let b = Billing { country: opt(&form.country), vat_number: opt(&form.vat_number), name };
    match operations::orders::set_billing(&state.app, &o, b).await {
        Ok(_) => see_other(&state.url(&format!("/checkout/{number}"))),
        Err(OpError::Invalid(e)) => {
            let msg: Vec<String> = e.0.iter().map(|d| format!("{}: {}", d.field, d.problem)).collect();
            html(
                StatusCode::BAD_REQUEST,
                page(&state, "Checkout", Some(&p), &render(&state, &o, &csrf, Some(&msg.join("; ")))),
            )
        }
        Err(OpError::Conflict { message, .. }) => {
            html(StatusCode::CONFLICT, page(&state, "Checkout", Some(&p), &render(&state, &o, &csrf, Some(&message))))
        }
        Err(e) => {
            tracing::error!(error = %e, "could not set billing details");
            oops(&state, Some(&p))
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct PayForm {
    #[serde(default)]
    csrf: String,
}

pub async fn pay(
    state: web::Data<State>,
    req: HttpRequest,
    number: web::Path<String>,
    form: web::Form<PayForm>,
) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else {
        return see_other(&state.url(&format!("/checkout/{number}")));
    };
    let o = match find(&state, &p, &number).await {
        Ok(o) => o,
        Err(r) => return r,
    };
    let refuse =
        |status, why: &str| html(status, page(&state, "Checkout", Some(&p), &render(&state, &o, &csrf, Some(why))));
    if !same(&state, &form.csrf, &csrf) {
        return refuse(StatusCode::FORBIDDEN, "This form expired; try again.");
    }
    let back = format!("{}/checkout/{number}", state.public_url);
    match operations::orders::start_payment(&state.app, &state.ctx.reads, &o, &back).await {
        Ok(operations::orders::PaymentStarted::Paid | operations::orders::PaymentStarted::Settled) => {
            see_other(&state.url(&format!("/checkout/{number}")))
        }
        Ok(operations::orders::PaymentStarted::Redirect(url)) => see_other(&url),
        Err(operations::OpError::Conflict { message, .. }) => refuse(StatusCode::CONFLICT, &message),
        Err(operations::OpError::Invalid(_)) => refuse(StatusCode::BAD_REQUEST, "Enter your billing country first."),
        Err(operations::OpError::Upstream { .. }) => {
            refuse(StatusCode::BAD_GATEWAY, "The payment provider could not start the payment; try again in a moment.")
        }
        Err(e) => {
            tracing::error!(error = %e, "could not start a payment");
            oops(&state, Some(&p))
        }
    }
}

/// `POST /webhooks/stripe`: Stripe's events, trusted only with a valid signature.
pub async fn stripe_webhook(state: web::Data<State>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    use operations::orders::{WebhookError, WebhookOutcome, webhook};
    if state.app.payments.name() != "stripe" {
        return actix_web::ResponseError::error_response(&crate::error::ApiError::not_found("route"));
    }
    let sig = req.headers().get("Stripe-Signature").and_then(|v| v.to_str().ok());
    match webhook(&state.app, &state.ctx.reads, sig, &body).await {
        Ok(outcome) => {
            let (what, detail) = match outcome {
                WebhookOutcome::Duplicate => ("duplicate", String::new()),
                WebhookOutcome::Paid(n) => ("paid", n),
                WebhookOutcome::Ignored(why) => ("ignored", why),
            };
            HttpResponse::Ok().json(serde_json::json!({"received": true, "outcome": what, "detail": detail}))
        }
        Err(WebhookError::Refused(e)) => {
            tracing::warn!(error = %e, "a Stripe webhook was refused");
            let err: crate::error::ApiError = domain::ValidationError::new("Stripe-Signature", e.to_string()).into();
            actix_web::ResponseError::error_response(&err)
        }
        Err(WebhookError::Failed(e)) => {
            tracing::error!(error = %e, "a Stripe webhook failed; Stripe retries it");
            actix_web::ResponseError::error_response(&crate::error::ApiError::internal())
        }
    }
}
