//! The checkout page (`/checkout/{number}`, the `checkout_url` create_checkout returns): the signed-in
//! owner of the order reviews it, gives billing details (country, optional EU VAT number, name — VAT is
//! re-priced from them) and pays. With the sandbox gateway the page offers a clearly marked test
//! payment. Someone else's order is a 404 page, like an unknown one.

use crate::server::State;
use crate::web::{NEXT, cookie, html, oops, page, same, see_other, signed_in};
use actix_web::cookie::SameSite;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use domain::auth::Principal;
use domain::money::Cents;
use domain::order::{Billing, Order, OrderNumber, OrderStatus};
use operations::OpError;
use operations::badges::escape;
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

fn money(c: Cents) -> String {
    c.to_string()
}

fn render(state: &State, o: &Order, csrf: &str, error: Option<&str>) -> String {
    let rows: String = o
        .lines
        .iter()
        .map(|s| {
            let l = &s.line;
            let done = match (&s.fulfilled_at, s.fulfilment_note.is_empty()) {
                (Some(_), false) => format!("<br><span class=\"muted\">{}</span>", escape(&s.fulfilment_note)),
                _ => String::new(),
            };
            format!(
                "<tr><td>{}{}{done}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(&l.name),
                l.listing.map(|id| format!(" <span class=\"muted\">(listing {id})</span>")).unwrap_or_default(),
                l.quantity,
                money(l.net),
                money(l.vat),
                money(l.gross)
            )
        })
        .collect();
    let table = format!(
        "<table class=\"order\"><thead><tr><th>Item</th><th class=\"num\">Qty</th><th class=\"num\">Net</th><th class=\"num\">VAT</th><th class=\"num\">Total</th></tr></thead>\
         <tbody>{rows}</tbody><tfoot><tr><th>Total (USD)</th><td></td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
         <td class=\"num\"><strong>{}</strong></td></tr></tfoot></table><p class=\"muted\">{}</p>",
        money(o.net),
        money(o.vat),
        money(o.gross),
        escape(&o.vat_note),
    );
    let err = error.map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e))).unwrap_or_default();
    let n = escape(o.number.as_str());
    let base = &state.public_url;
    let body = match o.status() {
        OrderStatus::Pending => {
            let b = &o.billing;
            let billing = format!(
                r#"<h2>Billing details</h2><form method="post" action="{base}/checkout/{n}/billing" class="stack">
<input type="hidden" name="csrf" value="{csrf}">
<label>Name or company <input type="text" name="name" maxlength="200" value="{name}" autocomplete="name"></label>
<label>Country (ISO code, e.g. DE, US) <input type="text" name="country" required maxlength="2" minlength="2" value="{country}" autocomplete="country"></label>
<label>EU VAT number (businesses; optional) <input type="text" name="vat_number" maxlength="20" value="{vat}"></label>
<button type="submit">Update VAT</button></form>"#,
                name = escape(b.name.as_deref().unwrap_or_default()),
                country = escape(b.country.as_deref().unwrap_or_default()),
                vat = escape(b.vat_number.as_deref().unwrap_or_default()),
            );
            let pay = if !o.vat_final {
                "<p>Enter your billing country above to see the VAT and pay.</p>".to_owned()
            } else if o.gateway == "sandbox" {
                format!(
                    r#"<h2>Pay</h2><div class="sandbox" role="note"><strong>Test mode.</strong> This service runs with the
sandbox payment gateway: the button below records a test payment. No card is asked for and no money moves.</div>
<form method="post" action="{base}/checkout/{n}/pay"><input type="hidden" name="csrf" value="{csrf}">
<button type="submit" id="pay">Pay {total} (test payment)</button></form>"#,
                    total = money(o.gross)
                )
            } else if o.gateway == "stripe" {
                let waiting = if o.gateway_ref.is_some() {
                    "<p role=\"status\">If you paid already, the confirmation from Stripe arrives in a few seconds; reload \
                     this page.</p>"
                } else {
                    ""
                };
                format!(
                    r#"<h2>Pay</h2>{waiting}<p>You pay on Stripe's secure page (card, Apple Pay, Google Pay and the other
methods it offers); we never see your card.</p><form method="post" action="{base}/checkout/{n}/pay"><input type="hidden" name="csrf" value="{csrf}">
<button type="submit" id="pay">Pay {total}</button></form>"#,
                    total = money(o.gross)
                )
            } else {
                "<p>Payments are not available right now.</p>".to_owned()
            };
            format!("{table}{billing}{pay}")
        }
        OrderStatus::Paid => format!(
            "<p class=\"ok\" role=\"status\">Paid on {}. Thank you.</p>{table}",
            o.paid_at.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string()).unwrap_or_default()
        ),
        other => format!("<p>This order is {}.</p>{table}", other.as_str()),
    };
    format!("<section class=\"card\"><h1>Order {n}</h1>{err}{body}</section>")
}

pub async fn show(state: web::Data<State>, req: HttpRequest, number: web::Path<String>) -> HttpResponse {
    let Some((p, csrf)) = signed_in(&state, &req).await else {
        let body = format!(
            "<section class=\"card narrow\"><h1>Sign in to pay</h1><p>Sign in with the account that made the \
             order; you will come back here.</p><p><a class=\"button\" href=\"{}\">Sign in</a></p></section>",
            state.url("/signin")
        );
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
    let name = opt(&form.name).map(|n| n.chars().take(200).collect());
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
