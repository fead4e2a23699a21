//! Orders: quote_order prices items at the admin's current prices with VAT previewed, create_checkout
//! stores the order and hands back the checkout page's address (the person pays there; no card data
//! ever passes through a client), list_my_orders and get_order read them back with each line's
//! fulfilment. Fulfilment — what a paid line does to its listing — lives here too, run when an order is
//! paid and by the worker for any paid line left unfulfilled.

use crate::public::Pagination;
use crate::{Ctx, Descriptor, Method, OpError, OpResult, Operation};
use async_trait::async_trait;
use chrono::NaiveDate;
use domain::ValidationError;
use domain::ValidationErrors;
use domain::ids::{CategoryId, ListingId};
use domain::listing::{CountryCode, Listing, ListingStatus, Plan};
use domain::money::Cents;
use domain::order::{Billing, LineOptions, Order, OrderNumber, OrderStatus, Quote, StoredLine, price};
use domain::paging::PageRequest;
use domain::ports::{OrderCreated, RepoError};
use domain::product::{Product, ProductKind};
use domain::user::Scope;
use domain::vat::{VatCheck, VatDecision, pct};
use domain::week::LaunchWeek;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub(crate) fn descriptors() -> Vec<Descriptor> {
    vec![
        Descriptor::of::<QuoteOrder>(),
        Descriptor::of::<CreateCheckout>(),
        Descriptor::of::<ListMyOrders>(),
        Descriptor::of::<GetOrder>(),
    ]
}

pub use domain::order::MAX_ITEMS;

/// The checkout page of an order.
pub fn checkout_url(public_url: &str, number: &OrderNumber) -> String {
    format!("{public_url}/checkout/{}", number.as_str())
}

// ---- inputs ----

/// A category name or slug from list_categories.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(value_type = String, max_length = 100, min_length = 1)]
pub struct CategoryName(pub String);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderItemInput {
    /// A product id from list_products (launch, extra-category, featured, billboard, unlock-story,
    /// unlock-milestones, unlock-media).
    pub product: String,
    /// One of the caller's listings (every product is bought for a listing).
    #[schema(minimum = 1)]
    pub listing_id: Option<i64>,
    /// launch only: a date in the launch week wanted (snapped to its Monday), at most 52 weeks ahead;
    /// omitted or this week = live at once.
    #[schema(format = Date)]
    pub week: Option<String>,
    /// extra-category only: 1 to 3 category names or slugs from list_categories (one unit each; a listing
    /// holds at most 3 extras).
    #[schema(inline)]
    pub categories: Option<Vec<CategoryName>>,
    /// billboard only: the amount in USD cents, at least the billboard product's price.
    pub amount_cents: Option<i64>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderInput {
    #[schema(inline)]
    pub items: Vec<OrderItemInput>,
    /// ISO 3166-1 code of the billing address; decides VAT (the checkout page asks when omitted).
    pub billing_country: Option<String>,
    /// An EU VAT number (prefix and number); a valid one of another member state than the seller's gives
    /// reverse charge.
    pub vat_number: Option<String>,
}

/// Items take one shape per kind of product on sale (filled in from the database); the billing
/// country is an assigned ISO code.
fn refine_order_input(schema: &mut serde_json::Value) {
    use crate::refine::set;
    use domain::listing::CountryCode;
    use serde_json::json;
    set(schema, &["items"], "minItems", json!(1));
    set(schema, &["items"], "maxItems", json!(MAX_ITEMS));
    let item = ["items", "[]"];
    set(schema, &crate::refine::under(&item, &["product"]), "maxLength", json!(domain::product::ProductCode::MAX));
    set(schema, &crate::refine::under(&item, &["product"]), "pattern", json!(domain::product::ProductCode::PATTERN));
    set(schema, &crate::refine::under(&item, &["week"]), "maxLength", json!(domain::week::LaunchWeek::MAX_PARAM_LEN));
    set(schema, &crate::refine::under(&item, &["categories"]), "minItems", json!(1));
    set(
        schema,
        &crate::refine::under(&item, &["categories"]),
        "maxItems",
        json!(domain::category::ListingCategories::MAX_EXTRAS),
    );
    set(schema, &crate::refine::under(&item, &["amount_cents"]), "minimum", json!(1));
    set(schema, &crate::refine::under(&item, &["amount_cents"]), "maximum", json!(domain::order::MAX_BILLBOARD_CENTS));
    set(schema, &["billing_country"], "minLength", json!(CountryCode::LEN));
    set(schema, &["billing_country"], "maxLength", json!(CountryCode::LEN));
    set(schema, &["billing_country"], "pattern", json!(CountryCode::PATTERN));
    set(schema, &["vat_number"], "minLength", json!(domain::vat::VatTable::NUMBER_MIN));
    set(schema, &["vat_number"], "maxLength", json!(domain::vat::VatTable::NUMBER_MAX));
    crate::refine::mark(schema, &["items", "[]"], "order-item");
    crate::refine::mark(schema, &["items", "[]", "categories", "[]"], "category");
    crate::refine::set(schema, &["billing_country"], "pattern", crate::refine::country_pattern().into());
}

// ---- outputs ----

#[derive(Debug, Serialize, ToSchema)]
pub struct LineOut {
    pub product: String,
    pub name: String,
    pub listing_id: Option<i64>,
    /// launch: Monday of the week bought (null: at once).
    pub week: Option<String>,
    /// extra-category: the categories' slugs.
    pub categories: Vec<String>,
    pub quantity: u32,
    /// Price per unit, USD cents, VAT excluded (billboard: the amount).
    pub unit_cents: i64,
    pub net_cents: i64,
    pub vat_rate_bp: u32,
    pub vat_cents: i64,
    pub gross_cents: i64,
    /// After payment: whether the line took effect, when, and what it did.
    pub fulfilled: bool,
    pub fulfilled_at: Option<String>,
    pub fulfilment: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VatOut {
    /// Basis points: 1900 = 19 %.
    pub rate_bp: u32,
    pub rate: String,
    pub reverse_charge: bool,
    /// Why this rate; on an invoice with reverse charge, the note it must carry.
    pub note: String,
    /// False until a billing country is known.
    #[serde(rename = "final")]
    pub is_final: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TotalsOut {
    /// Always USD.
    pub currency: String,
    pub net_cents: i64,
    pub vat_cents: i64,
    pub gross_cents: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct QuoteOut {
    pub lines: Vec<LineOut>,
    pub vat: VatOut,
    pub totals: TotalsOut,
    /// Nothing was saved or charged.
    pub saved: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BillingOut {
    pub country: Option<String>,
    pub vat_number: Option<String>,
    pub name: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderOut {
    pub number: String,
    /// pending, paid, cancelled or refunded.
    pub status: String,
    /// The page where the person reviews the order and pays (while pending).
    pub checkout_url: Option<String>,
    /// sandbox (test payments) or stripe.
    pub gateway: String,
    pub created_at: String,
    pub paid_at: Option<String>,
    pub billing: BillingOut,
    pub lines: Vec<LineOut>,
    pub vat: VatOut,
    pub totals: TotalsOut,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderPage {
    pub items: Vec<OrderOut>,
    pub pagination: Pagination,
}

fn vat_out(d: &VatDecision) -> VatOut {
    VatOut {
        rate_bp: d.rate_bp,
        rate: pct(d.rate_bp),
        reverse_charge: d.reverse_charge,
        note: d.note.clone(),
        is_final: d.final_rate,
    }
}

fn totals(net: Cents, vat: Cents, gross: Cents) -> TotalsOut {
    TotalsOut { currency: "USD".into(), net_cents: net.get(), vat_cents: vat.get(), gross_cents: gross.get() }
}

fn line_out(
    l: &domain::order::OrderLine,
    rate_bp: u32,
    slugs: &[(CategoryId, String)],
    done: Option<&StoredLine>,
) -> LineOut {
    let (week, categories) = match &l.options {
        LineOptions::Launch { week } => (week.map(|w| w.monday().to_string()), Vec::new()),
        LineOptions::ExtraCategories { categories } => (
            None,
            categories
                .iter()
                .map(|c| slugs.iter().find(|(id, _)| id == c).map_or_else(|| c.to_string(), |(_, s)| s.clone()))
                .collect(),
        ),
        _ => (None, Vec::new()),
    };
    LineOut {
        product: l.product.as_str().into(),
        name: l.name.clone(),
        listing_id: l.listing.map(|id| id.get()),
        week,
        categories,
        quantity: l.quantity,
        unit_cents: l.unit.get(),
        net_cents: l.net.get(),
        vat_rate_bp: rate_bp,
        vat_cents: l.vat.get(),
        gross_cents: l.gross.get(),
        fulfilled: done.is_some_and(|s| s.fulfilled_at.is_some()),
        fulfilled_at: done.and_then(|s| s.fulfilled_at).map(|t| t.to_rfc3339()),
        fulfilment: done.map(|s| s.fulfilment_note.clone()).unwrap_or_default(),
    }
}

async fn category_slugs(app: &crate::App) -> OpResult<Vec<(CategoryId, String, String)>> {
    Ok(app
        .store
        .list_categories()
        .await?
        .into_iter()
        .map(|c| (c.category.id, c.category.slug.to_string(), c.category.name))
        .collect())
}

/// Category ids and slugs, to name an order's extra categories.
async fn slugs(app: &crate::App) -> OpResult<Vec<(CategoryId, String)>> {
    Ok(category_slugs(app).await?.into_iter().map(|(id, s, _)| (id, s)).collect())
}

pub(crate) async fn order_out(app: &crate::App, public_url: &str, o: &Order) -> OpResult<OrderOut> {
    Ok(order_out_with(&slugs(app).await?, public_url, o))
}

fn order_out_with(cats: &[(CategoryId, String)], public_url: &str, o: &Order) -> OrderOut {
    let decision = VatDecision {
        rate_bp: o.vat_rate_bp,
        reverse_charge: o.reverse_charge,
        note: o.vat_note.clone(),
        final_rate: o.vat_final,
    };
    OrderOut {
        number: o.number.as_str().into(),
        status: o.status().as_str().into(),
        checkout_url: (o.status() == OrderStatus::Pending).then(|| checkout_url(public_url, &o.number)),
        gateway: o.gateway.clone(),
        created_at: o.created_at.to_rfc3339(),
        paid_at: o.paid_at.map(|t| t.to_rfc3339()),
        billing: BillingOut {
            country: o.billing.country.clone(),
            vat_number: o.billing.vat_number.clone(),
            name: o.billing.name.clone(),
        },
        lines: o.lines.iter().map(|s| line_out(&s.line, o.vat_rate_bp, cats, Some(s))).collect(),
        vat: vat_out(&decision),
        totals: totals(o.net, o.vat, o.gross),
    }
}

// ---- pricing ----

/// The VAT decision for a billing country and VAT number: the number's format offline, then VIES when
/// configured.
pub async fn decide_vat(
    app: &crate::App,
    seller: &str,
    country: Option<&str>,
    vat_number: Option<&str>,
) -> Result<(VatDecision, Billing), ValidationErrors> {
    let mut errs = ValidationErrors::default();
    let billing =
        country.and_then(|c| errs.take(CountryCode::parse_assigned(c).map_err(|e| e.named("billing_country"))));
    let number = vat_number.filter(|n| !n.trim().is_empty()).and_then(|n| errs.take(app.vat.parse_number(n)));
    if !errs.is_empty() {
        return Err(errs);
    }
    // `seller_country` is checked when it is set; a value that is not a code reads as the default, IE.
    let Ok(seller) = CountryCode::parse_assigned(seller).or_else(|_| CountryCode::parse("IE")) else {
        return Err(ValidationError::new("seller_country", "is not a country code").into());
    };
    let check = match (&number, &app.vat_registry) {
        (Some(n), Some(registry)) => registry.check(n).await,
        _ => VatCheck::FormatOnly,
    };
    let decision = domain::vat::decide(&app.vat, &seller, billing.as_ref(), number.as_ref().map(|n| (n, &check)))
        .map_err(ValidationErrors::from)?;
    let billing =
        Billing { country: billing.map(|c| c.as_str().to_owned()), vat_number: number.map(|n| n.full()), name: None };
    Ok((decision, billing))
}

/// Validates the items against the products, the caller's listings, the calendar and the categories,
/// and prices them. Every problem is a 400 naming `items[i].field`; a listing not the caller's is a 404.
/// Also answers the site settings it read (a checkout stores the order against the same capacity).
async fn priced(ctx: &Ctx, input: OrderInput) -> OpResult<(Quote, Billing, domain::settings::SiteSettings)> {
    let user = ctx.principal()?.user_id;
    let app = &ctx.app;
    if input.items.is_empty() || input.items.len() > MAX_ITEMS {
        return Err(ValidationError::new("items", format!("must hold 1 to {MAX_ITEMS} items")).into());
    }
    let settings = crate::own::site_settings(app).await?;
    let products = app.store.list_products().await?;
    let cats = category_slugs(app).await?;
    let now = app.now();
    let this_week = LaunchWeek::of(now);
    let mut errs = ValidationErrors::default();
    let mut items: Vec<(Product, Option<ListingId>, LineOptions)> = Vec::new();
    let mut launches: Vec<ListingId> = Vec::new();
    for (i, it) in input.items.into_iter().enumerate() {
        let f = |name: &str| format!("items[{i}].{name}");
        let Some(p) = products.iter().find(|p| p.code.as_str() == it.product).cloned() else {
            errs.push(ValidationError::new(f("product"), "unknown product; see list_products"));
            continue;
        };
        let only = |present: bool, name: &str, kind: ProductKind| {
            (present && p.kind != kind)
                .then(|| ValidationError::new(f(name), format!("is only for the {} product", kind.as_str())))
        };
        for e in [
            only(it.week.is_some(), "week", ProductKind::Launch),
            only(it.categories.is_some(), "categories", ProductKind::ExtraCategory),
            only(it.amount_cents.is_some(), "amount_cents", ProductKind::Billboard),
        ]
        .into_iter()
        .flatten()
        {
            errs.push(e);
        }
        let listing: Option<Listing> = match (p.needs_listing, it.listing_id) {
            (true, None) => {
                errs.push(ValidationError::new(
                    f("listing_id"),
                    "is required: this product is bought for one of your listings",
                ));
                continue;
            }
            (false, Some(_)) => {
                errs.push(ValidationError::new(f("listing_id"), "is not taken by this product"));
                continue;
            }
            (_, Some(raw)) => {
                let id = ListingId::parse(raw).map_err(|e| e.named(&f("listing_id")))?;
                Some(app.store.owned_listing(user, id).await?.ok_or(OpError::NotFound("listing"))?)
            }
            (false, None) => None,
        };
        if listing.as_ref().is_some_and(|l| l.lifecycle.status() == ListingStatus::Hidden) {
            errs.push(ValidationError::new(
                f("listing_id"),
                "is hidden by the site team; nothing can be bought for it until they restore it",
            ));
            continue;
        }
        let options = match p.kind {
            ProductKind::Launch => {
                let Some(l) = &listing else { continue };
                let launchable = match l.lifecycle.status() {
                    ListingStatus::Draft | ListingStatus::AwaitingBadge => true,
                    ListingStatus::Scheduled => l.lifecycle.plan() == Plan::Free,
                    _ => false,
                };
                if !launchable {
                    errs.push(ValidationError::new(
                        f("listing_id"),
                        format!(
                            "is {} already; launch is for a saved listing or one on the free plan",
                            l.lifecycle.status().as_str()
                        ),
                    ));
                    continue;
                }
                if launches.contains(&l.id) {
                    errs.push(ValidationError::new(f("listing_id"), "has a launch in this order already"));
                    continue;
                }
                launches.push(l.id);
                let week = match it.week.as_deref() {
                    None => None,
                    Some(raw) => match NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
                        Err(_) => {
                            errs.push(ValidationError::new(f("week"), "must be a date, YYYY-MM-DD"));
                            continue;
                        }
                        Ok(d) => {
                            let w = LaunchWeek::containing(d);
                            if w < this_week {
                                errs.push(ValidationError::new(
                                    f("week"),
                                    format!("the week of {} is in the past", w.monday()),
                                ));
                                continue;
                            }
                            if this_week.weeks_until(w) > LaunchWeek::MAX_WEEKS_AHEAD {
                                errs.push(ValidationError::new(
                                    f("week"),
                                    format!(
                                        "is more than {} weeks ahead; the latest week is that of {}",
                                        LaunchWeek::MAX_WEEKS_AHEAD,
                                        this_week.plus_weeks(LaunchWeek::MAX_WEEKS_AHEAD).monday()
                                    ),
                                ));
                                continue;
                            }
                            (w > this_week).then_some(w)
                        }
                    },
                };
                if let Some(w) = week {
                    let held = app.store.paid_places_held(w, &[l.id], app.now()).await?;
                    if !domain::order::week_has_room(held, 1, settings.paid_plan_weekly_capacity) {
                        errs.push(week_full(i, w));
                        continue;
                    }
                }
                LineOptions::Launch { week }
            }
            ProductKind::ExtraCategory => {
                let Some(l) = &listing else { continue };
                let Some(names) = it.categories.filter(|c| !c.is_empty()) else {
                    errs.push(ValidationError::new(f("categories"), "is required: 1 to 3 names from list_categories"));
                    continue;
                };
                let (current_primary, current_extras) = match &l.categories {
                    Some(c) => (Some(c.primary()), c.extras().to_vec()),
                    None => (None, Vec::new()),
                };
                let mut chosen: Vec<CategoryId> = Vec::new();
                for (j, CategoryName(n)) in names.iter().enumerate() {
                    let key = n.trim().to_lowercase();
                    match cats.iter().find(|(_, slug, name)| *slug == key || name.to_lowercase() == key) {
                        None => errs.push(ValidationError::new(
                            format!("items[{i}].categories[{j}]"),
                            "unknown category; use a name or slug from list_categories",
                        )),
                        Some((id, _, _))
                            if Some(*id) == current_primary || current_extras.contains(id) || chosen.contains(id) =>
                        {
                            errs.push(ValidationError::new(
                                format!("items[{i}].categories[{j}]"),
                                "is one of the listing's categories already",
                            ));
                        }
                        Some((id, _, _)) => chosen.push(*id),
                    }
                }
                let max = domain::category::ListingCategories::MAX_EXTRAS;
                if current_extras.len() + chosen.len() > max {
                    errs.push(ValidationError::new(
                        f("categories"),
                        format!(
                            "a listing holds at most {max} extra categories; this one has {}",
                            current_extras.len()
                        ),
                    ));
                    continue;
                }
                LineOptions::ExtraCategories { categories: chosen }
            }
            ProductKind::Billboard => match it.amount_cents {
                None => {
                    errs.push(ValidationError::new(
                        f("amount_cents"),
                        format!("is required: at least {} ({} cents)", p.price, p.price.get()),
                    ));
                    continue;
                }
                Some(a) if a < p.price.get() => {
                    errs.push(ValidationError::new(
                        f("amount_cents"),
                        format!("is below the billboard minimum of {} ({} cents)", p.price, p.price.get()),
                    ));
                    continue;
                }
                Some(a) if a > domain::order::MAX_BILLBOARD_CENTS => {
                    errs.push(ValidationError::new(f("amount_cents"), "must be at most 100000000"));
                    continue;
                }
                Some(a) => LineOptions::Billboard { amount: Cents::new(a) },
            },
            _ => LineOptions::None,
        };
        items.push((p, listing.map(|l| l.id), options));
    }
    let vat =
        decide_vat(app, &settings.seller_country, input.billing_country.as_deref(), input.vat_number.as_deref()).await;
    let (decision, billing) = match vat {
        Ok(v) => v,
        Err(e) => {
            errs.0.extend(e.0);
            return Err(errs.into());
        }
    };
    if !errs.is_empty() {
        return Err(errs.into());
    }
    Ok((price(items, decision), billing, settings))
}

// ---- quote_order ----

#[derive(Debug)]
pub struct QuoteOrder;

#[async_trait]
impl Operation for QuoteOrder {
    const ID: &'static str = "quote_order";
    const NOT_FOUND: bool = true;
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/orders/quote";
    const SCOPE: Option<Scope> = Some(Scope::OrdersWrite);
    const SUMMARY: &'static str = "Price an order with VAT, without saving or charging anything";
    const DESCRIPTION: &'static str = "Prices items at the admin's current prices (USD cents, VAT excluded; see \
        list_products) and previews VAT from billing_country and vat_number: EU consumers pay their country's \
        standard rate, an EU business with a valid VAT number of another member state gets reverse charge at 0 %, \
        buyers outside the EU pay no VAT. Each line shows net, VAT rate, VAT and gross; totals are the lines' sums \
        (VAT rounded per line, half away from zero). Items: product plus listing_id (one of your listings; \
        404 otherwise) and the product's option — week for launch (not past, not full), categories for \
        extra-category (names from list_categories, at most 3 extras), amount_cents for billboard (at least its \
        price). Nothing is saved or charged; create_checkout with the same body makes the order.";
    type Input = OrderInput;

    fn refine_input_schema(schema: &mut serde_json::Value) {
        refine_order_input(schema);
    }
    type Output = QuoteOut;

    async fn run(ctx: &Ctx, input: OrderInput) -> OpResult<QuoteOut> {
        let (q, _, _) = priced(ctx, input).await?;
        let cats = slugs(&ctx.app).await?;
        Ok(QuoteOut {
            lines: q.lines.iter().map(|l| line_out(l, q.vat.rate_bp, &cats, None)).collect(),
            vat: vat_out(&q.vat),
            totals: totals(q.net, q.vat_total, q.gross),
            saved: false,
        })
    }
}

// ---- create_checkout ----

#[derive(Debug)]
pub struct CreateCheckout;

#[async_trait]
impl Operation for CreateCheckout {
    const ID: &'static str = "create_checkout";
    const NOT_FOUND: bool = true;
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/orders/checkout";
    const SCOPE: Option<Scope> = Some(Scope::OrdersWrite);
    const STATUS: u16 = 201;
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "Create an order and the checkout page where the person pays";
    const DESCRIPTION: &'static str = "Validates and prices the items exactly as quote_order does, stores a \
        pending order, and returns it with checkout_url: a page on this service where the person reviews the \
        order, enters billing details and pays themselves. Give the link to the person; never ask for card \
        details. A launch for a chosen week holds its place in that week while the order can be paid (24 \
        hours); a week whose paid places are all taken or held is refused with 400 naming items[i].week. An \
        account has at most 10 orders awaiting payment at once (429 open_orders, with Retry-After). \
        Send an Idempotency-Key so a retry returns the same order. Afterwards read the status with \
        get_order: once paid, each line takes effect (launch makes the listing live or scheduled for its week) \
        and get_order shows what each did.";
    type Input = OrderInput;

    fn refine_input_schema(schema: &mut serde_json::Value) {
        refine_order_input(schema);
    }
    type Output = OrderOut;

    async fn run(ctx: &Ctx, input: OrderInput) -> OpResult<OrderOut> {
        let user = ctx.principal()?.user_id;
        let (q, billing, settings) = priced(ctx, input).await?;
        let app = &ctx.app;
        // Checked again as the order is stored: checkouts made at once for a week's last place.
        let capacity = settings.paid_plan_weekly_capacity;
        for _ in 0..5 {
            let bits = u64::from_str_radix(&app.secrets.random_token()[..16], 16).unwrap_or_default();
            let number = OrderNumber::from_random(bits);
            match app.store.create_order(user, &number, &q, &billing, app.payments.name(), app.now(), capacity).await {
                Ok(OrderCreated::Created(o)) => return order_out(app, &ctx.public_url, &o).await,
                Ok(OrderCreated::TooManyOpen { oldest }) => {
                    let expires = oldest + chrono::Duration::hours(domain::order::PENDING_HOURS);
                    return Err(OpError::TooMany {
                        code: "open_orders",
                        message: format!(
                            "this account has {} orders awaiting payment, the most it may have; pay one, or \
                             wait until the oldest expires ({}); nothing was stored",
                            domain::order::MAX_OPEN_ORDERS,
                            expires.format("%Y-%m-%d %H:%M UTC")
                        ),
                        retry_after_secs: domain::throttle::retry_after_secs(expires - app.now()),
                    });
                }
                Ok(OrderCreated::WeekFull(w)) => {
                    // Lines are the items in their order (pricing refuses the whole order otherwise).
                    let i = q.lines.iter().position(|l| l.launch_week() == Some(w)).unwrap_or_default();
                    return Err(week_full(i, w).into());
                }
                Err(RepoError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(OpError::Repo(RepoError::Unexpected("five order numbers in a row were taken".into())))
    }
}

/// The refusal of a launch in week `w`, item `i`: its paid places are taken, or held by checkouts
/// that can still be paid.
fn week_full(i: usize, w: LaunchWeek) -> ValidationError {
    ValidationError::new(
        format!("items[{i}].week"),
        format!(
            "the week of {} is full: its paid places are taken or held by checkouts awaiting payment; choose another week",
            w.monday()
        ),
    )
}

// ---- list_my_orders / get_order ----

#[derive(Debug)]
pub struct ListMyOrders;

#[async_trait]
impl Operation for ListMyOrders {
    const ID: &'static str = "list_my_orders";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/orders";
    const SCOPE: Option<Scope> = Some(Scope::AccountRead);
    const SUMMARY: &'static str = "The caller's orders, newest first, with status";
    const DESCRIPTION: &'static str = "Lists the caller's orders newest first with status (pending, paid, \
        cancelled, refunded), totals with VAT, lines and their fulfilment. Read-only.";
    type Input = crate::drafts::PageInput;
    type Output = OrderPage;

    async fn run(ctx: &Ctx, i: crate::drafts::PageInput) -> OpResult<OrderPage> {
        let user = ctx.principal()?.user_id;
        let page = PageRequest::parse(i.page, i.per_page)?;
        let orders = ctx.app.store.my_orders(user, page).await?;
        let cats = slugs(&ctx.app).await?;
        let items = orders.items.iter().map(|o| order_out_with(&cats, &ctx.public_url, o)).collect();
        Ok(OrderPage { pagination: Pagination::from(&orders), items })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderNumberInput {
    /// The order's number (`LD-` and 10 characters, as create_checkout returned it). Any other string
    /// names no order of the caller's: 404.
    pub number: String,
}

#[derive(Debug)]
pub struct GetOrder;

#[async_trait]
impl Operation for GetOrder {
    const ID: &'static str = "get_order";
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/orders/{number}";
    const SCOPE: Option<Scope> = Some(Scope::AccountRead);
    const SUMMARY: &'static str = "One order: status, totals with VAT, lines and their fulfilment";
    const DESCRIPTION: &'static str = "Returns the caller's order: status, billing details, VAT (rate, reverse \
        charge and its note), totals, lines, whether each line was fulfilled and what it did, and while pending \
        the checkout_url to give the person. 404 for another person's order. Read-only.";
    type Input = OrderNumberInput;
    type Output = OrderOut;

    async fn run(ctx: &Ctx, i: OrderNumberInput) -> OpResult<OrderOut> {
        let o = order_of(&ctx.app, ctx.principal()?.user_id, &i.number).await?;
        order_out(&ctx.app, &ctx.public_url, &o).await
    }
}

/// `user`'s order with this number; any number that is not one of theirs (malformed, unknown, someone
/// else's) is the same 404.
pub async fn order_of(app: &crate::App, user: domain::ids::UserId, number: &str) -> OpResult<Order> {
    let number = OrderNumber::parse(number).map_err(|_| OpError::NotFound("order"))?;
    app.store.order_by_number(&number).await?.filter(|o| o.user == user).ok_or(OpError::NotFound("order"))
}

// ---- payment and fulfilment ----

/// Re-prices a pending order's VAT for the billing details the checkout page collected.
pub async fn set_billing(app: &crate::App, o: &Order, billing: Billing) -> OpResult<Order> {
    if let Some(name) = &billing.name {
        domain::text::check_max("billing_name", name, domain::order::MAX_BILLING_NAME)?;
    }
    let settings = crate::own::site_settings(app).await?;
    let (decision, checked) =
        decide_vat(app, &settings.seller_country, billing.country.as_deref(), billing.vat_number.as_deref()).await?;
    let products = app.store.list_products().await?;
    let items = o
        .lines
        .iter()
        .map(|s| {
            // The order keeps the price it was made with: the unit stored on the line.
            let p = products.iter().find(|p| p.code == s.line.product).cloned().map(|mut p| {
                p.price = s.line.unit;
                p.name = s.line.name.clone();
                p
            });
            p.map(|p| (p, s.line.listing, s.line.options.clone()))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| ValidationError::new("order", "a product of this order no longer exists"))?;
    let quote = price(items, decision);
    let billing = Billing { name: billing.name, ..checked };
    // A payment session holds the price it was opened with: end it before the price changes, and
    // refuse the change when it cannot be ended (it may have been paid meanwhile).
    if let Some(reference) = &o.gateway_ref {
        app.payments.cancel(reference).await.map_err(|e| OpError::Conflict {
            code: "payment_in_progress",
            message: format!("the payment already started cannot be changed: {e}"),
        })?;
    }
    if !app.store.reprice_order(o.id, &quote, &billing).await? {
        return Err(OpError::Conflict {
            code: "order_not_pending",
            message: format!("the order is {}", o.status().as_str()),
        });
    }
    app.store.order_by_number(&o.number).await?.ok_or(OpError::NotFound("order"))
}

/// Why a payment the gateway reports is not this order's price, if it is not: the amount charged must
/// be the order's gross total and the currency ours (USD). A gateway event without them is trusted
/// (the sandbox has none).
fn payment_mismatch(o: &Order, event: &domain::ports::PaymentEvent) -> Option<String> {
    if let Some(amount) = event.amount
        && amount != o.gross.get()
    {
        return Some(format!("the payment was {amount} cents, the order is {} cents", o.gross.get()));
    }
    if let Some(currency) = &event.currency
        && currency != "usd"
    {
        return Some(format!("the payment was in {currency}, the order in usd"));
    }
    None
}

/// Cancels the orders nobody paid within [`domain::order::PENDING_HOURS`] (their payment sessions were
/// made to end then too), each through the domain's transition and a compare-and-set, so an order paid
/// at the same moment stays paid; how many were cancelled.
pub async fn expire_pending(app: &crate::App, now: chrono::DateTime<chrono::Utc>) -> domain::ports::RepoResult<u64> {
    let before = now - chrono::Duration::hours(domain::order::PENDING_HOURS);
    let mut cancelled = 0;
    loop {
        let batch = app.store.pending_orders_before(before, 200).await?;
        let full = batch.len() == 200;
        let mut moved_any = false;
        for o in &batch {
            match o.moved(OrderStatus::cancel) {
                Ok(to) => {
                    if app.store.move_order(o.id, o.status(), to, now).await? {
                        cancelled += 1;
                        moved_any = true;
                    }
                }
                Err(refused) => tracing::warn!(order = o.number.as_str(), %refused, "a pending order could not expire"),
            }
        }
        if !full || !moved_any {
            return Ok(cancelled);
        }
    }
}

/// Where starting a payment left the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentStarted {
    /// Paid on our own page (the sandbox): the order is paid and fulfilled.
    Paid,
    /// Sent to the gateway's page at this address; the session's reference is stored on the order.
    Redirect(String),
    /// Nothing to pay: the order is no longer pending (paid, cancelled or refunded).
    Settled,
}

/// Starts paying an order with the configured gateway: only a pending order (else `Settled`), made
/// for this gateway (else 409 `gateway_changed`: a sandbox order cannot be paid through Stripe, nor
/// the reverse), whose VAT is final (else 400 naming `billing_country`). When the gateway fails or
/// does not answer, nothing is stored and the answer is a 502 `payment_provider_failed` the person
/// can retry; when the reference cannot be stored, the session is ended again, so no payment can
/// arrive for a session the order does not know.
pub async fn start_payment(
    app: &crate::App,
    reads: &crate::ReadCache,
    o: &Order,
    return_url: &str,
) -> OpResult<PaymentStarted> {
    use domain::ports::PaymentStart;
    if o.gateway != app.payments.name() {
        return Err(OpError::Conflict {
            code: "gateway_changed",
            message: "this order was made for another payment provider; start a new checkout".into(),
        });
    }
    if o.status() != OrderStatus::Pending {
        return Ok(PaymentStarted::Settled);
    }
    if !o.vat_final {
        return Err(ValidationError::new("billing_country", "enter your billing country first").into());
    }
    match app.payments.start(o, return_url).await {
        Ok(PaymentStart::OnPage) => {
            paid(app, reads, o).await?;
            Ok(PaymentStarted::Paid)
        }
        Ok(PaymentStart::Redirect { url, reference }) => match app.store.set_gateway_ref(o.id, &reference).await {
            Ok(()) => Ok(PaymentStarted::Redirect(url)),
            Err(e) => {
                if let Err(c) = app.payments.cancel(&reference).await {
                    tracing::error!(error = %c, order = o.number.as_str(), "could not end a session whose reference was not stored");
                }
                Err(e.into())
            }
        },
        Err(e) => {
            tracing::warn!(error = %e, order = o.number.as_str(), "the payment provider refused to start a payment");
            Err(OpError::Upstream {
                code: "payment_provider_failed",
                message: "the payment provider could not start the payment; try again in a moment".into(),
            })
        }
    }
}

/// Marks a pending order paid (once) and fulfils it; false when it was not pending (the domain refuses
/// the move, or another request moved it first).
pub async fn paid(app: &crate::App, reads: &crate::ReadCache, o: &Order) -> OpResult<bool> {
    let Ok(to) = o.moved(OrderStatus::pay) else { return Ok(false) };
    if !app.store.move_order(o.id, o.status(), to, app.now()).await? {
        return Ok(false);
    }
    tracing::info!(order = o.number.as_str(), gross = o.gross.get(), "order paid");
    if let Some(o) = app.store.order_by_number(&o.number).await? {
        fulfil(app, &o).await?;
    }
    crate::public_data_changed(app, reads).await;
    Ok(true)
}

/// Applies each unfulfilled line of a paid order to its listing and records what it did. Every effect is
/// safe to apply twice, so a crash between an effect and its record only repeats a harmless step.
pub async fn fulfil(app: &crate::App, o: &Order) -> OpResult<usize> {
    if o.status() != OrderStatus::Paid {
        return Ok(0);
    }
    let mut done = 0;
    for s in o.lines.iter().filter(|s| s.fulfilled_at.is_none()) {
        let now = app.now();
        let note = match (s.line.listing, &s.line.options) {
            (None, _) => "nothing to apply".to_owned(),
            (Some(id), LineOptions::Launch { week }) => match app.store.get_listing(id).await? {
                None => "the listing no longer exists".into(),
                Some(l) => {
                    let mut next = l.lifecycle;
                    match next.paid_launch(*week, now) {
                        Err(e) => format!("not applied: {e}"),
                        Ok(()) if app.store.move_lifecycle(l.id, &l.lifecycle, &next, now).await? => {
                            match next.status() {
                                ListingStatus::Live => format!("live since {}", now.to_rfc3339()),
                                _ => format!(
                                    "scheduled for the week of {}",
                                    next.launch_week().map(|w| w.monday().to_string()).unwrap_or_default()
                                ),
                            }
                        }
                        Ok(()) => continue, // moved meanwhile: the next pass sees its new state
                    }
                }
            },
            (Some(id), LineOptions::ExtraCategories { categories }) => {
                let n = app.store.add_extra_categories(id, categories).await?;
                format!("{} extra categor{} now", n, if n == 1 { "y" } else { "ies" })
            }
            (Some(id), LineOptions::Billboard { amount }) => {
                app.store.add_billboard(id, s.id, *amount, now).await?;
                format!("{amount} on the billboard")
            }
            (Some(id), LineOptions::None) => match s.line.kind {
                ProductKind::Featured => {
                    app.store.set_featured(id).await?;
                    "featured".into()
                }
                ProductKind::UnlockStory => {
                    app.store.unlock_sections(id, true, false, false).await?;
                    "founder story unlocked".into()
                }
                ProductKind::UnlockMilestones => {
                    app.store.unlock_sections(id, false, true, false).await?;
                    "milestones unlocked".into()
                }
                ProductKind::UnlockMedia => {
                    app.store.unlock_sections(id, false, false, true).await?;
                    "media unlocked".into()
                }
                other => format!("nothing to apply for {}", other.as_str()),
            },
        };
        if app.store.fulfil_line(s.id, &note, now).await? {
            done += 1;
        }
    }
    Ok(done)
}

/// Fulfils paid orders whose lines are not all fulfilled (a crash after payment); the worker runs it.
pub async fn fulfil_pending(app: &crate::App) -> OpResult<usize> {
    let mut n = 0;
    for o in app.store.orders_to_fulfil(50).await? {
        n += fulfil(app, &o).await?;
    }
    Ok(n)
}

/// What a payment gateway's webhook did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookOutcome {
    /// The event was seen before: nothing changed.
    Duplicate,
    /// The event marked this order paid.
    Paid(String),
    /// A valid event that changes nothing (another type, an order paid already, an unknown reference).
    Ignored(String),
}

/// Why a webhook was not taken.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error(transparent)]
    Refused(#[from] domain::ports::PaymentError),
    #[error(transparent)]
    Failed(#[from] OpError),
}

/// Takes a gateway webhook: the signature must hold (else nothing is read), an event id seen before
/// changes nothing, and a payment moves its order from pending to paid once, then fulfils it. The event
/// is recorded as seen only after it was handled, so a failure here is retried by the gateway.
pub async fn webhook(
    app: &crate::App,
    reads: &crate::ReadCache,
    signature: Option<&str>,
    body: &[u8],
) -> Result<WebhookOutcome, WebhookError> {
    let event = app.payments.verify_webhook(signature, body, app.now())?;
    let gateway = app.payments.name();
    if app.store.payment_event_seen(gateway, &event.id).await.map_err(OpError::from)? {
        return Ok(WebhookOutcome::Duplicate);
    }
    let order = match &event.reference {
        Some(r) => app.store.order_by_gateway_ref(r).await.map_err(OpError::from)?,
        None => None,
    };
    let outcome = match (&event.reference, order) {
        (Some(r), Some(o)) if event.expired => {
            // The session ended unpaid: the order may be paid again with a new one.
            app.store.clear_gateway_ref(o.id, r).await.map_err(OpError::from)?;
            WebhookOutcome::Ignored(format!("the payment session of order {} expired", o.number.as_str()))
        }
        (Some(_), Some(o)) if event.paid => match payment_mismatch(&o, &event) {
            Some(why) => {
                // Money that is not this order's price: fulfil nothing, and tell the operator.
                tracing::error!(order = o.number.as_str(), event = %event.id, problem = %why, "payment does not match its order");
                app.store.flag_order(o.id, &why).await.map_err(OpError::from)?;
                WebhookOutcome::Ignored(format!("order {} flagged: {why}", o.number.as_str()))
            }
            None if paid(app, reads, &o).await? => {
                tracing::info!(order = o.number.as_str(), event = %event.id, "paid through the gateway");
                WebhookOutcome::Paid(o.number.as_str().to_owned())
            }
            None if o.status() == OrderStatus::Cancelled => {
                let why = "paid after the order expired: refund the payment or fulfil it by hand";
                tracing::error!(order = o.number.as_str(), event = %event.id, "{why}");
                app.store.flag_order(o.id, why).await.map_err(OpError::from)?;
                WebhookOutcome::Ignored(format!("order {} flagged: {why}", o.number.as_str()))
            }
            None => WebhookOutcome::Ignored(format!("order {} is {} already", o.number.as_str(), o.status().as_str())),
        },
        (Some(r), None) if event.paid => WebhookOutcome::Ignored(format!("no order has the reference {r}")),
        _ => WebhookOutcome::Ignored(format!("{} changes no order", event.kind)),
    };
    app.store.first_payment_event(gateway, &event.id, app.now()).await.map_err(OpError::from)?;
    Ok(outcome)
}
