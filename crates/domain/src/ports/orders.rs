//! Orders: storing priced orders, moving them to paid once (compare-and-set), recording each line's
//! fulfilment once, and the effects fulfilment has on a listing.

use super::RepoResult;
use crate::ids::{CategoryId, ListingId, UserId};
use crate::listing::Plan;
use crate::money::Cents;
use crate::order::{Billing, Order, OrderNumber, OrderStatus, Quote};
use crate::paging::{PageRequest, Paged};
use crate::week::LaunchWeek;
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// What [`OrderRepository::create_order`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderCreated {
    /// Stored, pending, holding its launches' places.
    Created(Order),
    /// Nothing stored: this paid launch week has no place left for the order's launches in it.
    WeekFull(LaunchWeek),
    /// Nothing stored: the account has [`crate::order::MAX_OPEN_ORDERS`] orders awaiting payment; the
    /// oldest was made at `oldest` (it can be paid until [`crate::order::PENDING_HOURS`] after).
    TooManyOpen { oldest: DateTime<Utc> },
}

#[async_trait]
pub trait OrderRepository: Send + Sync {
    /// Stores a pending order with its lines in one transaction, unless the account has
    /// [`crate::order::MAX_OPEN_ORDERS`] awaiting payment already (counted under a lock on the account,
    /// so orders made at once stop there too), or a paid launch week of the
    /// quote ([`Quote::launch_weeks`]) has no room: the places other listings hold there
    /// ([`OrderRepository::paid_places_held`]) and the order's launches in it must fit `paid_capacity`
    /// ([`crate::order::week_has_room`]). Orders for one week are counted and stored one at a time, so
    /// checkouts made at once cannot overfill it.
    #[allow(clippy::too_many_arguments)]
    async fn create_order(
        &self,
        user: UserId,
        number: &OrderNumber,
        quote: &Quote,
        billing: &Billing,
        gateway: &str,
        now: DateTime<Utc>,
        paid_capacity: i64,
    ) -> RepoResult<OrderCreated>;

    /// How many listings other than `except` hold a place in paid launch `week` at `now`, by the rule
    /// of [`crate::order::holds_from`]: on the paid plan and waiting for, scheduled in or live in it,
    /// or launching in it by its latest order that can still be paid or is paid and not applied yet.
    async fn paid_places_held(&self, week: LaunchWeek, except: &[ListingId], now: DateTime<Utc>) -> RepoResult<i64>;

    /// `user`'s orders, newest first.
    async fn my_orders(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Order>>;

    async fn order_by_number(&self, number: &OrderNumber) -> RepoResult<Option<Order>>;

    async fn order_by_gateway_ref(&self, gateway_ref: &str) -> RepoResult<Option<Order>>;

    /// Replaces the billing details, VAT and totals of a pending order (the checkout page's billing form)
    /// and forgets its gateway reference (a new price needs a new payment session); false when the order
    /// is no longer pending.
    async fn reprice_order(&self, id: i64, quote: &Quote, billing: &Billing) -> RepoResult<bool>;

    async fn set_gateway_ref(&self, id: i64, gateway_ref: &str) -> RepoResult<()>;

    /// Forgets `gateway_ref` if it is still the order's (its session expired); false otherwise.
    async fn clear_gateway_ref(&self, id: i64, gateway_ref: &str) -> RepoResult<bool>;

    /// Flags an order for the operator with `note` (the latest note wins).
    async fn flag_order(&self, id: i64, note: &str) -> RepoResult<()>;

    /// Orders still pending that were made before `before`, oldest first, at most `limit`.
    async fn pending_orders_before(&self, before: DateTime<Utc>, limit: u64) -> RepoResult<Vec<Order>>;

    /// Moves order `id` from `from` to `to` (compare-and-set: false when it is no longer in `from`),
    /// recording `now` as the payment time when `to` is paid. The move itself is the domain's
    /// ([`Order::moved`]); storage only applies it.
    async fn move_order(&self, id: i64, from: OrderStatus, to: OrderStatus, now: DateTime<Utc>) -> RepoResult<bool>;

    /// Records a line's fulfilment once; false when it was recorded already.
    async fn fulfil_line(&self, line_id: i64, note: &str, now: DateTime<Utc>) -> RepoResult<bool>;

    /// Paid orders with a line not fulfilled yet, oldest first.
    async fn orders_to_fulfil(&self, limit: u64) -> RepoResult<Vec<Order>>;

    /// Whether a payment gateway's event id was recorded.
    async fn payment_event_seen(&self, gateway: &str, event_id: &str) -> RepoResult<bool>;

    /// Records a payment gateway's event id; false when it was seen before (a replay).
    async fn first_payment_event(&self, gateway: &str, event_id: &str, now: DateTime<Utc>) -> RepoResult<bool>;

    /// How many listings on `plan` (waiting, scheduled or live) each week holds.
    async fn launches_in(&self, plan: Plan, weeks: &[LaunchWeek]) -> RepoResult<Vec<(LaunchWeek, i64)>>;

    /// How many listings on `plan` (waiting, scheduled or live) launch in `week` ahead of listing
    /// `before`: those listed earlier (a smaller id). Its place in the week's queue is one more.
    async fn launches_ahead(&self, plan: Plan, week: LaunchWeek, before: ListingId) -> RepoResult<i64>;

    /// Adds extra categories to a listing, keeping at most three extras; returns how many it holds now.
    async fn add_extra_categories(&self, listing: ListingId, categories: &[CategoryId]) -> RepoResult<usize>;

    async fn set_featured(&self, listing: ListingId) -> RepoResult<()>;

    /// Unlocks the named sections (others stay as they are).
    async fn unlock_sections(&self, listing: ListingId, story: bool, milestones: bool, media: bool) -> RepoResult<()>;

    /// Puts money on the billboard for a listing (counted on the paid billboard board), once per line.
    async fn add_billboard(
        &self,
        listing: ListingId,
        line_id: i64,
        amount: Cents,
        now: DateTime<Utc>,
    ) -> RepoResult<()>;
}
