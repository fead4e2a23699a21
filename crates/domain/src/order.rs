//! Orders: the status machine (payment only moves forward), order numbers, and pricing an order's lines
//! with VAT (`crate::vat` decides the rate; every line is split exactly and the totals are their sums).

use crate::ValidationError;
use crate::ids::{CategoryId, ListingId, UserId};
use crate::listing::TransitionError;
use crate::money::Cents;
use crate::product::{Product, ProductCode, ProductKind};
use crate::vat::VatDecision;
use crate::week::LaunchWeek;
use chrono::{DateTime, Utc};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderStatus {
    Pending,
    Paid,
    /// The person abandoned checkout or it expired before payment.
    Cancelled,
    Refunded,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Paid => "paid",
            Self::Cancelled => "cancelled",
            Self::Refunded => "refunded",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Pending, Self::Paid, Self::Cancelled, Self::Refunded].into_iter().find(|s| s.as_str() == raw)
    }

    fn refuse(self, action: &'static str) -> TransitionError {
        TransitionError { machine: "order", action, current: self.as_str() }
    }

    pub fn pay(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Pending => {
                *self = Self::Paid;
                Ok(())
            }
            _ => Err(self.refuse("mark paid")),
        }
    }

    pub fn cancel(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Pending => {
                *self = Self::Cancelled;
                Ok(())
            }
            _ => Err(self.refuse("cancel")),
        }
    }

    pub fn refund(&mut self) -> Result<(), TransitionError> {
        match self {
            Self::Paid => {
                *self = Self::Refunded;
                Ok(())
            }
            _ => Err(self.refuse("refund")),
        }
    }
}

/// An order's public number: `LD-` and 10 characters of Crockford base32 (no I, L, O, U).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OrderNumber(String);

const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

impl OrderNumber {
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let ok = raw.len() == 13 && raw.starts_with("LD-") && raw.bytes().skip(3).all(|b| CROCKFORD.contains(&b));
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(ValidationError::new("number", "is not an order number (LD- and 10 characters)"))
        }
    }

    /// Builds a number from 50 random bits (the caller supplies the randomness).
    pub fn from_random(bits: u64) -> Self {
        let mut s = String::from("LD-");
        for i in (0..10).rev() {
            s.push(CROCKFORD[((bits >> (i * 5)) & 31) as usize] as char);
        }
        Self(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a line buys beyond its product, already validated against the listing and the calendar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineOptions {
    None,
    /// Live at once (`None`) or in that launch week.
    Launch {
        week: Option<LaunchWeek>,
    },
    /// These categories as extras (one unit each).
    ExtraCategories {
        categories: Vec<CategoryId>,
    },
    /// This much money on the billboard.
    Billboard {
        amount: Cents,
    },
}

/// One line of an order: what is bought, for which listing, and its price split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderLine {
    pub product: ProductCode,
    pub kind: ProductKind,
    pub name: String,
    pub listing: Option<ListingId>,
    pub options: LineOptions,
    pub quantity: u32,
    /// The product's price when the order was priced (for a billboard line: the amount).
    pub unit: Cents,
    pub net: Cents,
    pub vat: Cents,
    pub gross: Cents,
}

/// A priced order: its lines, the VAT decision and the totals (sums of the lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    pub lines: Vec<OrderLine>,
    pub vat: VatDecision,
    pub net: Cents,
    pub vat_total: Cents,
    pub gross: Cents,
}

impl OrderLine {
    /// The paid launch week this line takes a place in (a launch for a chosen week), if any.
    pub fn launch_week(&self) -> Option<LaunchWeek> {
        match self.options {
            LineOptions::Launch { week } => week,
            _ => None,
        }
    }
}

impl Quote {
    /// The paid launch weeks this order takes places in, earliest first (the order a store takes
    /// their locks in), each with the listings launching then.
    pub fn launch_weeks(&self) -> Vec<(LaunchWeek, Vec<ListingId>)> {
        let mut weeks: Vec<(LaunchWeek, Vec<ListingId>)> = Vec::new();
        for l in &self.lines {
            let (Some(week), Some(listing)) = (l.launch_week(), l.listing) else { continue };
            match weeks.iter_mut().find(|(w, _)| *w == week) {
                Some((_, listings)) => listings.push(listing),
                None => weeks.push((week, vec![listing])),
            }
        }
        weeks.sort_by_key(|(w, _)| *w);
        weeks
    }
}

/// The places of a paid launch week are held by the listings on the paid plan waiting for, scheduled
/// in or live in it, and by the launches of orders for that week that can still be paid (pending and
/// made since `holds_from(now)`) or were paid and are not applied yet; each listing once, and by its
/// latest such line only (an earlier one for another week gives way), so one listing holds one week.
/// A checkout holds its place until it expires, so two people paying at once for a week's last place
/// cannot both get it: an order cannot be refused once paid.
pub fn holds_from(now: DateTime<Utc>) -> DateTime<Utc> {
    now - chrono::Duration::hours(PENDING_HOURS)
}

/// Whether an order in `status` made at `created_at` can still be paid at `now`: pending, and made
/// since [`holds_from`] (after that it expires).
pub fn payable(status: OrderStatus, created_at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    status == OrderStatus::Pending && created_at >= holds_from(now)
}

/// Whether `adding` more listings fit in a week of `capacity` places of which other listings hold `held`.
pub fn week_has_room(held: i64, adding: usize, capacity: i64) -> bool {
    held.saturating_add(adding as i64) <= capacity
}

/// Prices `items` (product, listing, options) at the products' current prices with `vat`.
pub fn price(items: Vec<(Product, Option<ListingId>, LineOptions)>, vat: VatDecision) -> Quote {
    let lines: Vec<OrderLine> = items
        .into_iter()
        .map(|(p, listing, options)| {
            let (quantity, unit) = match &options {
                LineOptions::ExtraCategories { categories } => (categories.len().max(1) as u32, p.price),
                LineOptions::Billboard { amount } => (1, *amount),
                _ => (1, p.price),
            };
            let net = Cents::new(unit.get() * i64::from(quantity));
            let (net, vat_part, gross) = crate::vat::split(net, vat.rate_bp);
            OrderLine {
                product: p.code,
                kind: p.kind,
                name: p.name,
                listing,
                options,
                quantity,
                unit,
                net,
                vat: vat_part,
                gross,
            }
        })
        .collect();
    let sum = |f: fn(&OrderLine) -> Cents| lines.iter().map(f).fold(Cents::ZERO, |a, b| a + b);
    Quote { net: sum(|l| l.net), vat_total: sum(|l| l.vat), gross: sum(|l| l.gross), lines, vat }
}

/// The longest billing name kept, in characters (it goes on the receipt as given).
pub const MAX_BILLING_NAME: usize = 200;

/// Billing details given on the checkout page (or with the order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Billing {
    pub country: Option<String>,
    pub vat_number: Option<String>,
    pub name: Option<String>,
}

/// A stored line with its fulfilment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLine {
    pub id: i64,
    pub line: OrderLine,
    pub fulfilled_at: Option<DateTime<Utc>>,
    pub fulfilment_note: String,
}

/// A stored order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub id: i64,
    pub number: OrderNumber,
    pub user: UserId,
    /// Private: it moves only through [`Order::moved`] and a compare-and-set in storage.
    status: OrderStatus,
    pub billing: Billing,
    pub vat_rate_bp: u32,
    pub reverse_charge: bool,
    pub vat_note: String,
    /// Whether the VAT is final (a billing country is known).
    pub vat_final: bool,
    pub net: Cents,
    pub vat: Cents,
    pub gross: Cents,
    /// `sandbox` or `stripe`.
    pub gateway: String,
    pub gateway_ref: Option<String>,
    pub created_at: DateTime<Utc>,
    pub paid_at: Option<DateTime<Utc>>,
    pub lines: Vec<StoredLine>,
    /// Why the operator must look at this order (a payment that does not match it); nothing is
    /// fulfilled for a flagged payment.
    pub flag: Option<String>,
}

/// An order as storage reads it back, every field public: [`Order::from`] it. Storage only holds
/// statuses the transitions produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRecord {
    pub id: i64,
    pub number: OrderNumber,
    pub user: UserId,
    pub status: OrderStatus,
    pub billing: Billing,
    pub vat_rate_bp: u32,
    pub reverse_charge: bool,
    pub vat_note: String,
    /// Whether the VAT is final (a billing country is known).
    pub vat_final: bool,
    pub net: Cents,
    pub vat: Cents,
    pub gross: Cents,
    /// `sandbox` or `stripe`.
    pub gateway: String,
    pub gateway_ref: Option<String>,
    pub created_at: DateTime<Utc>,
    pub paid_at: Option<DateTime<Utc>>,
    pub lines: Vec<StoredLine>,
    /// Why the operator must look at this order (a payment that does not match it); nothing is
    /// fulfilled for a flagged payment.
    pub flag: Option<String>,
}

impl From<OrderRecord> for Order {
    fn from(r: OrderRecord) -> Self {
        Self {
            id: r.id,
            number: r.number,
            user: r.user,
            status: r.status,
            billing: r.billing,
            vat_rate_bp: r.vat_rate_bp,
            reverse_charge: r.reverse_charge,
            vat_note: r.vat_note,
            vat_final: r.vat_final,
            net: r.net,
            vat: r.vat,
            gross: r.gross,
            gateway: r.gateway,
            gateway_ref: r.gateway_ref,
            created_at: r.created_at,
            paid_at: r.paid_at,
            lines: r.lines,
            flag: r.flag,
        }
    }
}

impl Order {
    pub fn status(&self) -> OrderStatus {
        self.status
    }

    /// The status `transition` moves this order to, for storage to set with compare-and-set from
    /// [`Order::status`]; the refusal when the order is not in a state that allows it.
    pub fn moved(
        &self,
        transition: impl FnOnce(&mut OrderStatus) -> Result<(), TransitionError>,
    ) -> Result<OrderStatus, TransitionError> {
        let mut next = self.status;
        transition(&mut next)?;
        Ok(next)
    }
}

/// How long a pending order waits to be paid before it expires (its gateway session expires with it).
pub const PENDING_HOURS: i64 = 24;

/// Items one order may hold.
pub const MAX_ITEMS: usize = 20;

/// Orders one account may have awaiting payment at once (pending, made within [`PENDING_HOURS`]). Each
/// is stored and may hold a paid week's place: without a bound a script could make orders as fast as
/// the rate limit lets it, all day.
pub const MAX_OPEN_ORDERS: usize = 10;

/// The most money one billboard line may carry, in cents.
pub const MAX_BILLBOARD_CENTS: i64 = 100_000_000;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_order_moves_only_through_its_transitions() {
        let o = |status: OrderStatus| -> Order {
            OrderRecord {
                id: 1,
                number: OrderNumber::from_random(1),
                user: UserId::from_db(1),
                status,
                billing: Billing::default(),
                vat_rate_bp: 0,
                reverse_charge: false,
                vat_note: String::new(),
                vat_final: true,
                net: Cents::new(100),
                vat: Cents::new(0),
                gross: Cents::new(100),
                gateway: "sandbox".into(),
                gateway_ref: None,
                created_at: Utc::now(),
                paid_at: None,
                lines: vec![],
                flag: None,
            }
            .into()
        };
        assert_eq!(o(OrderStatus::Pending).moved(OrderStatus::pay), Ok(OrderStatus::Paid));
        assert_eq!(o(OrderStatus::Pending).moved(OrderStatus::cancel), Ok(OrderStatus::Cancelled));
        assert!(o(OrderStatus::Cancelled).moved(OrderStatus::pay).is_err(), "an expired order is not paid");
        assert!(o(OrderStatus::Paid).moved(OrderStatus::cancel).is_err(), "a paid order does not expire");
        assert_eq!(o(OrderStatus::Paid).moved(OrderStatus::refund), Ok(OrderStatus::Refunded));
        let pending = o(OrderStatus::Pending);
        let _ = pending.moved(OrderStatus::pay);
        assert_eq!(pending.status(), OrderStatus::Pending, "moving is computed, the order itself is unchanged");
    }

    fn product(code: &str, kind: ProductKind, cents: i64) -> Product {
        Product {
            code: ProductCode::parse(code).unwrap(),
            kind,
            name: code.into(),
            description: String::new(),
            price: Cents::new(cents),
            needs_listing: true,
            active: true,
            position: 0,
        }
    }

    #[test]
    fn lines_add_up_to_the_totals() {
        let vat = VatDecision { rate_bp: 1900, reverse_charge: false, note: String::new(), final_rate: true };
        let l = Some(ListingId::from_db(1));
        let q = price(
            vec![
                (product("launch", ProductKind::Launch, 4900), l, LineOptions::Launch { week: None }),
                (
                    product("extra-category", ProductKind::ExtraCategory, 1900),
                    l,
                    LineOptions::ExtraCategories { categories: vec![CategoryId::from_db(2), CategoryId::from_db(3)] },
                ),
                (
                    product("billboard", ProductKind::Billboard, 500),
                    l,
                    LineOptions::Billboard { amount: Cents::new(1234) },
                ),
            ],
            vat,
        );
        let nets: Vec<i64> = q.lines.iter().map(|l| l.net.get()).collect();
        assert_eq!(nets, [4900, 3800, 1234]);
        assert_eq!(q.lines[1].quantity, 2);
        let vats: Vec<i64> = q.lines.iter().map(|l| l.vat.get()).collect();
        assert_eq!(vats, [931, 722, 234], "1234 × 19 % = 234.46 → 234");
        assert_eq!((q.net.get(), q.vat_total.get(), q.gross.get()), (9934, 1887, 11821));
    }

    #[test]
    fn an_order_holds_a_place_in_each_week_it_launches_in_earliest_first() {
        let vat = VatDecision { rate_bp: 0, reverse_charge: false, note: String::new(), final_rate: true };
        let launch = || product("launch", ProductKind::Launch, 4900);
        let (a, b, c) = (ListingId::from_db(1), ListingId::from_db(2), ListingId::from_db(3));
        let monday = chrono::NaiveDate::from_ymd_opt(2026, 12, 7).unwrap();
        let (w1, w2) = (LaunchWeek::containing(monday), LaunchWeek::containing(monday).plus_weeks(1));
        let q = price(
            vec![
                (launch(), Some(a), LineOptions::Launch { week: Some(w2) }),
                (launch(), Some(b), LineOptions::Launch { week: None }),
                (
                    product("billboard", ProductKind::Billboard, 500),
                    Some(b),
                    LineOptions::Billboard { amount: Cents::new(500) },
                ),
                (launch(), Some(c), LineOptions::Launch { week: Some(w1) }),
                (launch(), Some(b), LineOptions::Launch { week: Some(w2) }),
            ],
            vat,
        );
        assert_eq!(q.launch_weeks(), vec![(w1, vec![c]), (w2, vec![a, b])], "live-at-once takes no week's place");
        assert_eq!(q.lines[1].launch_week(), None);
        assert_eq!(q.lines[2].launch_week(), None);
    }

    #[test]
    fn a_week_has_room_up_to_its_capacity_and_not_one_more() {
        assert!(week_has_room(24, 1, 25));
        assert!(!week_has_room(25, 1, 25));
        assert!(week_has_room(23, 2, 25));
        assert!(!week_has_room(24, 2, 25));
        assert!(week_has_room(0, 0, 1));
        assert!(!week_has_room(i64::MAX, 1, 25), "no overflow");
        let now = Utc::now();
        assert_eq!(
            now - holds_from(now),
            chrono::Duration::hours(PENDING_HOURS),
            "a hold lasts as long as the order can be paid"
        );
        let day = chrono::Duration::hours(PENDING_HOURS);
        assert!(payable(OrderStatus::Pending, now - day, now), "the last instant");
        assert!(!payable(OrderStatus::Pending, now - day - chrono::Duration::microseconds(1), now));
        assert!(!payable(OrderStatus::Paid, now, now) && !payable(OrderStatus::Cancelled, now, now));
    }

    #[test]
    fn payment_only_moves_forward() {
        let mut s = OrderStatus::Pending;
        s.pay().unwrap();
        assert_eq!(s.pay().unwrap_err().current, "paid");
        assert!(s.cancel().is_err());
        s.refund().unwrap();
        assert!(s.pay().is_err());
    }

    proptest! {
        #[test]
        fn generated_numbers_parse(bits in any::<u64>()) {
            let n = OrderNumber::from_random(bits);
            prop_assert_eq!(OrderNumber::parse(n.as_str()).unwrap(), n);
        }
    }

    #[test]
    fn bad_numbers() {
        for bad in ["", "LD-", "LD-000000000I", "XX-0000000000", "LD-00000000000"] {
            assert!(OrderNumber::parse(bad).is_err(), "{bad}");
        }
    }
}
