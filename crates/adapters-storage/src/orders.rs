//! Orders (port `OrderRepository`): an order and its lines written in one transaction, payment as a
//! compare-and-set on the status, each line's fulfilment recorded once, gateway events de-duplicated by
//! their primary key, and the listing effects fulfilment applies (each safe to apply twice).

use crate::entity::{billboard_contributions, listing_categories, listings, order_lines, orders, payment_events};
use crate::sql::RawQuery;
use crate::store::{SeaOrmStore, is_unique_violation, newest_page, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, FixedOffset, Utc};
use domain::ids::{CategoryId, ListingId, UserId};
use domain::listing::Plan;
use domain::money::Cents;
use domain::order::{Billing, LineOptions, Order, OrderLine, OrderNumber, OrderRecord, OrderStatus, Quote, StoredLine};
use domain::paging::{PageRequest, Paged};
use domain::ports::{OrderCreated, OrderRepository, RepoError, RepoResult};
use domain::product::{ProductCode, ProductKind};
use domain::week::LaunchWeek;
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, FromQueryResult, QueryFilter, QueryOrder, QuerySelect,
};
use serde_json::json;

fn ts(t: DateTime<Utc>) -> DateTime<FixedOffset> {
    t.into()
}

fn options_json(l: &OrderLine) -> String {
    let mut v = json!({
        "kind": l.kind.as_str(), "name": l.name, "quantity": l.quantity, "unit_cents": l.unit.get(),
    });
    match &l.options {
        LineOptions::None => {}
        LineOptions::Launch { week } => v["week"] = json!(week.map(|w| w.monday().to_string())),
        LineOptions::ExtraCategories { categories } => {
            v["categories"] = json!(categories.iter().map(|c| c.get()).collect::<Vec<_>>());
        }
        LineOptions::Billboard { amount } => v["amount_cents"] = json!(amount.get()),
    }
    v.to_string()
}

fn to_line(m: order_lines::Model) -> RepoResult<StoredLine> {
    let bad = || RepoError::Unexpected(format!("order line {} has unreadable options", m.id).into());
    let v: serde_json::Value = serde_json::from_str(&m.options).map_err(|_| bad())?;
    let kind = v["kind"].as_str().and_then(ProductKind::parse).ok_or_else(bad)?;
    let options = match kind {
        ProductKind::Launch => LineOptions::Launch {
            week: v["week"]
                .as_str()
                .and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
                .map(LaunchWeek::containing),
        },
        ProductKind::ExtraCategory => LineOptions::ExtraCategories {
            categories: v["categories"]
                .as_array()
                .map(|a| a.iter().filter_map(|c| c.as_i64()).map(CategoryId::from_db).collect())
                .unwrap_or_default(),
        },
        ProductKind::Billboard => {
            LineOptions::Billboard { amount: Cents::new(v["amount_cents"].as_i64().unwrap_or(0)) }
        }
        _ => LineOptions::None,
    };
    Ok(StoredLine {
        id: m.id,
        line: OrderLine {
            product: ProductCode::parse(&m.product_code).map_err(|_| bad())?,
            kind,
            name: v["name"].as_str().unwrap_or_default().to_owned(),
            listing: m.listing_id.map(ListingId::from_db),
            options,
            quantity: v["quantity"].as_u64().unwrap_or(1) as u32,
            unit: Cents::new(v["unit_cents"].as_i64().unwrap_or(0)),
            net: Cents::new(m.net_cents),
            vat: Cents::new(m.vat_cents),
            gross: Cents::new(m.gross_cents),
        },
        fulfilled_at: m.fulfilled_at.map(|t| t.with_timezone(&Utc)),
        fulfilment_note: m.fulfilment_note,
    })
}

fn to_order(m: orders::Model, lines: Vec<order_lines::Model>) -> RepoResult<Order> {
    let bad = |what: &str| RepoError::Unexpected(format!("order {} has an unreadable {what}", m.id).into());
    Ok(OrderRecord {
        id: m.id,
        number: OrderNumber::parse(&m.number).map_err(|_| bad("number"))?,
        user: UserId::from_db(m.user_id),
        status: OrderStatus::parse(&m.status).ok_or_else(|| bad("status"))?,
        billing: Billing { country: m.billing_country, vat_number: m.vat_number, name: m.billing_name },
        vat_rate_bp: u32::try_from(m.vat_rate_bp).map_err(|_| bad("VAT rate"))?,
        reverse_charge: m.reverse_charge,
        vat_note: m.vat_note,
        vat_final: m.vat_final,
        net: Cents::new(m.net_cents),
        vat: Cents::new(m.vat_cents),
        gross: Cents::new(m.gross_cents),
        gateway: m.gateway,
        gateway_ref: m.gateway_ref,
        created_at: m.created_at.with_timezone(&Utc),
        paid_at: m.paid_at.map(|t| t.with_timezone(&Utc)),
        lines: lines.into_iter().map(to_line).collect::<RepoResult<Vec<_>>>()?,
        flag: m.flag,
    }
    .into())
}

#[derive(Debug, FromQueryResult)]
struct WeekCount {
    launch_week: chrono::NaiveDate,
    n: i64,
}

/// The launches on `plan` holding a place in each of `weeks` (awaiting the badge, scheduled or live),
/// on `db` (the store, or a transaction that must count inside itself); weeks holding none are left out.
pub(crate) async fn launches_in_on(
    db: &impl sea_orm::ConnectionTrait,
    plan: Plan,
    weeks: &[LaunchWeek],
) -> RepoResult<Vec<(LaunchWeek, i64)>> {
    if weeks.is_empty() {
        return Ok(Vec::new());
    }
    let mut q = RawQuery::new(db.get_database_backend());
    q.sql("SELECT launch_week, COUNT(*) AS n FROM listings WHERE plan = ")
        .bind(plan.as_str())
        .sql(" AND status IN ('awaiting_badge', 'scheduled', 'live') AND launch_week IN ")
        .bind_list(weeks.iter().map(|w| w.monday()))
        .sql(" GROUP BY launch_week");
    let rows = WeekCount::find_by_statement(q.build()).all(db).await.map_err(repo_err)?;
    Ok(rows.into_iter().map(|r| (LaunchWeek::containing(r.launch_week), r.n)).collect())
}

/// The listings other than `except` holding a place in paid launch `week` at `now`, on `db` (see
/// `OrderRepository::paid_places_held`). One statement, so one snapshot: a launch being applied (the
/// listing moved, its line not yet marked) is counted once, through the listing.
async fn paid_places_held_on(
    db: &impl sea_orm::ConnectionTrait,
    week: LaunchWeek,
    except: &[ListingId],
    now: DateTime<Utc>,
) -> RepoResult<i64> {
    const WAITING_OR_LIVE: &str = " IN ('awaiting_badge', 'scheduled', 'live')";
    let not_except = |q: &mut RawQuery, column: &str| {
        if !except.is_empty() {
            q.sql(" AND ").sql(column).sql(" NOT IN ").bind_list(except.iter().map(|id| id.get()));
        }
    };
    let mut q = RawQuery::new(db.get_database_backend());
    q.sql("SELECT (SELECT COUNT(*) FROM listings WHERE plan = ")
        .bind(Plan::Paid.as_str())
        .sql(" AND status")
        .sql(WAITING_OR_LIVE)
        .sql(" AND launch_week = ")
        .bind(week.monday());
    not_except(&mut q, "id");
    q.sql(") + (SELECT COUNT(DISTINCT ol.listing_id) FROM order_lines ol JOIN orders o ON o.id = ol.order_id")
        .sql(" WHERE ol.launch_week = ")
        .bind(week.monday())
        .sql(" AND ol.fulfilled_at IS NULL AND ol.listing_id IS NOT NULL");
    not_except(&mut q, "ol.listing_id");
    let since = ts(domain::order::holds_from(now));
    q.sql(" AND (o.status = 'paid' OR (o.status = 'pending' AND o.created_at >= ")
        .bind(since)
        // The listing's latest launch line for a week holds; an earlier one for another week gave way.
        .sql(")) AND NOT EXISTS (SELECT 1 FROM order_lines nl JOIN orders n ON n.id = nl.order_id")
        .sql(" WHERE nl.listing_id = ol.listing_id AND nl.id > ol.id AND nl.launch_week IS NOT NULL")
        .sql(" AND nl.launch_week <> ol.launch_week AND nl.fulfilled_at IS NULL")
        .sql(" AND (n.status = 'paid' OR (n.status = 'pending' AND n.created_at >= ")
        .bind(since)
        .sql(")))")
        .sql(" AND NOT EXISTS (SELECT 1 FROM listings l WHERE l.id = ol.listing_id AND l.plan = ")
        .bind(Plan::Paid.as_str())
        .sql(" AND l.launch_week = ol.launch_week AND l.status")
        .sql(WAITING_OR_LIVE)
        .sql(")) AS n");
    let row = crate::store::CountRow::find_by_statement(q.build()).one(db).await.map_err(repo_err)?;
    Ok(row.map_or(0, |r| r.n))
}

impl SeaOrmStore {
    /// The orders of `rows` with their lines (one query for all lines).
    async fn with_lines(&self, rows: Vec<orders::Model>) -> RepoResult<Vec<Order>> {
        let ids: Vec<i64> = rows.iter().map(|o| o.id).collect();
        let mut lines = order_lines::Entity::find()
            .filter(order_lines::Column::OrderId.is_in(ids))
            .order_by_asc(order_lines::Column::Id)
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        rows.into_iter()
            .map(|o| {
                let (mine, rest): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut lines).into_iter().partition(|l| l.order_id == o.id);
                lines = rest;
                to_order(o, mine)
            })
            .collect()
    }

    async fn one_order(&self, q: sea_orm::Select<orders::Entity>) -> RepoResult<Option<Order>> {
        let Some(row) = q.one(&self.db).await.map_err(repo_err)? else { return Ok(None) };
        Ok(self.with_lines(vec![row]).await?.pop())
    }
}

/// The columns a quote sets on an order.
fn priced(am: &mut orders::ActiveModel, quote: &Quote, billing: &Billing) {
    am.billing_country = Set(billing.country.clone());
    am.vat_number = Set(billing.vat_number.clone());
    am.billing_name = Set(billing.name.clone());
    am.reverse_charge = Set(quote.vat.reverse_charge);
    am.vat_rate_bp = Set(i32::try_from(quote.vat.rate_bp).unwrap_or(i32::MAX));
    am.vat_final = Set(quote.vat.final_rate);
    am.vat_note = Set(quote.vat.note.clone());
    am.net_cents = Set(quote.net.get());
    am.vat_cents = Set(quote.vat_total.get());
    am.gross_cents = Set(quote.gross.get());
}

#[async_trait]
impl OrderRepository for SeaOrmStore {
    async fn create_order(
        &self,
        user: UserId,
        number: &OrderNumber,
        quote: &Quote,
        billing: &Billing,
        gateway: &str,
        now: DateTime<Utc>,
        paid_capacity: i64,
    ) -> RepoResult<OrderCreated> {
        let txn = self.begin_write().await?;
        // The account's open orders, counted under its lock (PostgreSQL; SQLite writes one at a time),
        // before any week's lock: orders made at once stop at the bound too.
        crate::own::lock_account(&txn, user).await?;
        let open = orders::Entity::find()
            .filter(orders::Column::UserId.eq(user.get()))
            .filter(orders::Column::Status.eq(OrderStatus::Pending.as_str()))
            .filter(orders::Column::CreatedAt.gte(ts(domain::order::holds_from(now))))
            .order_by_asc(orders::Column::CreatedAt)
            .limit(domain::order::MAX_OPEN_ORDERS as u64)
            .all(&txn)
            .await
            .map_err(repo_err)?;
        if open.len() >= domain::order::MAX_OPEN_ORDERS {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(OrderCreated::TooManyOpen { oldest: open[0].created_at.with_timezone(&Utc) });
        }
        for (week, listings) in quote.launch_weeks() {
            // One count of a paid week at a time, earliest week first.
            crate::own::lock_week(&txn, Plan::Paid, week).await?;
            let held = paid_places_held_on(&txn, week, &listings, now).await?;
            if !domain::order::week_has_room(held, listings.len(), paid_capacity) {
                txn.rollback().await.map_err(repo_err)?;
                return Ok(OrderCreated::WeekFull(week));
            }
        }
        let mut am = orders::ActiveModel {
            number: Set(number.as_str().to_owned()),
            user_id: Set(user.get()),
            status: Set(OrderStatus::Pending.as_str().to_owned()),
            gateway: Set(gateway.to_owned()),
            gateway_ref: Set(None),
            created_at: Set(ts(now)),
            paid_at: Set(None),
            ..Default::default()
        };
        priced(&mut am, quote, billing);
        let order = am.insert(&txn).await.map_err(|e| {
            if is_unique_violation(&e) { RepoError::Conflict("order number taken".into()) } else { repo_err(e) }
        })?;
        for l in &quote.lines {
            order_lines::ActiveModel {
                order_id: Set(order.id),
                product_code: Set(l.product.as_str().to_owned()),
                listing_id: Set(l.listing.map(|id| id.get())),
                options: Set(options_json(l)),
                net_cents: Set(l.net.get()),
                vat_cents: Set(l.vat.get()),
                gross_cents: Set(l.gross.get()),
                fulfilled_at: Set(None),
                fulfilment_note: Set(String::new()),
                launch_week: Set(l.launch_week().map(|w| w.monday())),
                ..Default::default()
            }
            .insert(&txn)
            .await
            .map_err(repo_err)?;
        }
        txn.commit().await.map_err(repo_err)?;
        let order = self.one_order(orders::Entity::find_by_id(order.id)).await?.ok_or(RepoError::NotFound)?;
        Ok(OrderCreated::Created(order))
    }

    async fn paid_places_held(&self, week: LaunchWeek, except: &[ListingId], now: DateTime<Utc>) -> RepoResult<i64> {
        paid_places_held_on(&self.db, week, except, now).await
    }

    async fn my_orders(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Order>> {
        let q = orders::Entity::find().filter(orders::Column::UserId.eq(user.get()));
        let (rows, total) = newest_page(&self.db, q, orders::Column::CreatedAt, orders::Column::Id, page).await?;
        Ok(Paged::new(self.with_lines(rows).await?, page, total))
    }

    async fn order_by_number(&self, number: &OrderNumber) -> RepoResult<Option<Order>> {
        self.one_order(orders::Entity::find().filter(orders::Column::Number.eq(number.as_str()))).await
    }

    async fn order_by_gateway_ref(&self, gateway_ref: &str) -> RepoResult<Option<Order>> {
        self.one_order(orders::Entity::find().filter(orders::Column::GatewayRef.eq(gateway_ref))).await
    }

    async fn reprice_order(&self, id: i64, quote: &Quote, billing: &Billing) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        let mut am = <orders::ActiveModel as Default>::default();
        priced(&mut am, quote, billing);
        am.gateway_ref = Set(None);
        let res = orders::Entity::update_many()
            .set(am)
            .filter(orders::Column::Id.eq(id))
            .filter(orders::Column::Status.eq(OrderStatus::Pending.as_str()))
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        if res.rows_affected != 1 {
            return Ok(false);
        }
        let stored = order_lines::Entity::find()
            .filter(order_lines::Column::OrderId.eq(id))
            .order_by_asc(order_lines::Column::Id)
            .all(&txn)
            .await
            .map_err(repo_err)?;
        if stored.len() != quote.lines.len() {
            return Err(RepoError::Unexpected(format!("order {id}: a re-price must keep its lines").into()));
        }
        for (row, l) in stored.iter().zip(&quote.lines) {
            order_lines::Entity::update_many()
                .col_expr(order_lines::Column::VatCents, Expr::value(l.vat.get()))
                .col_expr(order_lines::Column::GrossCents, Expr::value(l.gross.get()))
                .col_expr(order_lines::Column::NetCents, Expr::value(l.net.get()))
                .filter(order_lines::Column::Id.eq(row.id))
                .exec(&txn)
                .await
                .map_err(repo_err)?;
        }
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn set_gateway_ref(&self, id: i64, gateway_ref: &str) -> RepoResult<()> {
        orders::Entity::update_many()
            .col_expr(orders::Column::GatewayRef, Expr::value(gateway_ref))
            .filter(orders::Column::Id.eq(id))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }

    async fn clear_gateway_ref(&self, id: i64, gateway_ref: &str) -> RepoResult<bool> {
        let res = orders::Entity::update_many()
            .col_expr(orders::Column::GatewayRef, Expr::value(Option::<String>::None))
            .filter(orders::Column::Id.eq(id))
            .filter(orders::Column::GatewayRef.eq(gateway_ref))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(res.rows_affected == 1)
    }

    async fn flag_order(&self, id: i64, note: &str) -> RepoResult<()> {
        orders::Entity::update_many()
            .col_expr(orders::Column::Flag, Expr::value(note))
            .filter(orders::Column::Id.eq(id))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }

    async fn pending_orders_before(&self, before: DateTime<Utc>, limit: u64) -> RepoResult<Vec<Order>> {
        let rows = orders::Entity::find()
            .filter(orders::Column::Status.eq(OrderStatus::Pending.as_str()))
            .filter(orders::Column::CreatedAt.lt(ts(before)))
            .order_by_asc(orders::Column::CreatedAt)
            .limit(limit)
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        self.with_lines(rows).await
    }

    async fn move_order(&self, id: i64, from: OrderStatus, to: OrderStatus, now: DateTime<Utc>) -> RepoResult<bool> {
        let mut update = orders::Entity::update_many()
            .col_expr(orders::Column::Status, Expr::value(to.as_str()))
            .filter(orders::Column::Id.eq(id))
            .filter(orders::Column::Status.eq(from.as_str()));
        if to == OrderStatus::Paid {
            update = update.col_expr(orders::Column::PaidAt, Expr::value(ts(now)));
        }
        let res = update.exec(&self.db).await.map_err(repo_err)?;
        Ok(res.rows_affected == 1)
    }

    async fn fulfil_line(&self, line_id: i64, note: &str, now: DateTime<Utc>) -> RepoResult<bool> {
        let res = order_lines::Entity::update_many()
            .col_expr(order_lines::Column::FulfilledAt, Expr::value(ts(now)))
            .col_expr(order_lines::Column::FulfilmentNote, Expr::value(note))
            .filter(order_lines::Column::Id.eq(line_id))
            .filter(order_lines::Column::FulfilledAt.is_null())
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(res.rows_affected == 1)
    }

    async fn orders_to_fulfil(&self, limit: u64) -> RepoResult<Vec<Order>> {
        let rows = orders::Entity::find()
            .filter(orders::Column::Status.eq(OrderStatus::Paid.as_str()))
            .filter(
                orders::Column::Id.in_subquery(
                    sea_orm::sea_query::Query::select()
                        .column(order_lines::Column::OrderId)
                        .from(order_lines::Entity)
                        .and_where(order_lines::Column::FulfilledAt.is_null())
                        .to_owned(),
                ),
            )
            .order_by_asc(orders::Column::Id)
            .limit(limit)
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        self.with_lines(rows).await
    }

    async fn payment_event_seen(&self, gateway: &str, event_id: &str) -> RepoResult<bool> {
        let row = payment_events::Entity::find_by_id((gateway.to_owned(), event_id.to_owned()))
            .one(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(row.is_some())
    }

    async fn first_payment_event(&self, gateway: &str, event_id: &str, now: DateTime<Utc>) -> RepoResult<bool> {
        let row = payment_events::ActiveModel {
            gateway: Set(gateway.to_owned()),
            event_id: Set(event_id.to_owned()),
            received_at: Set(ts(now)),
        };
        match payment_events::Entity::insert(row).exec_without_returning(&self.db).await {
            Ok(_) => Ok(true),
            Err(e) if is_unique_violation(&e) => Ok(false),
            Err(e) => Err(repo_err(e)),
        }
    }

    async fn launches_in(&self, plan: Plan, weeks: &[LaunchWeek]) -> RepoResult<Vec<(LaunchWeek, i64)>> {
        launches_in_on(&self.db, plan, weeks).await
    }

    async fn launches_ahead(&self, plan: Plan, week: LaunchWeek, before: ListingId) -> RepoResult<i64> {
        #[derive(Debug, FromQueryResult)]
        struct Count {
            n: i64,
        }
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT COUNT(*) AS n FROM listings WHERE plan = ")
            .bind(plan.as_str())
            .sql(" AND status IN ('awaiting_badge', 'scheduled', 'live') AND launch_week = ")
            .bind(week.monday())
            .sql(" AND id < ")
            .bind(before.get());
        let row = Count::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.map_or(0, |r| r.n))
    }

    async fn add_extra_categories(&self, listing: ListingId, categories: &[CategoryId]) -> RepoResult<usize> {
        let txn = self.begin_write().await?;
        // Two purchases fulfilled at once each read the extras there are before adding: without the
        // lock both read none and the listing ended with six of three.
        crate::own::lock_listing(&txn, listing).await?;
        let current = listing_categories::Entity::find()
            .filter(listing_categories::Column::ListingId.eq(listing.get()))
            .all(&txn)
            .await
            .map_err(repo_err)?;
        let mut extras = current.iter().filter(|c| !c.is_primary).count();
        for c in categories {
            if extras >= domain::category::ListingCategories::MAX_EXTRAS {
                break;
            }
            if current.iter().any(|x| x.category_id == c.get()) {
                continue;
            }
            listing_categories::ActiveModel {
                listing_id: Set(listing.get()),
                category_id: Set(c.get()),
                is_primary: Set(false),
            }
            .insert(&txn)
            .await
            .map_err(repo_err)?;
            extras += 1;
        }
        txn.commit().await.map_err(repo_err)?;
        Ok(extras)
    }

    async fn set_featured(&self, listing: ListingId) -> RepoResult<()> {
        listings::Entity::update_many()
            .col_expr(listings::Column::Featured, Expr::value(true))
            .filter(listings::Column::Id.eq(listing.get()))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }

    async fn unlock_sections(&self, listing: ListingId, story: bool, milestones: bool, media: bool) -> RepoResult<()> {
        let mut q = listings::Entity::update_many().filter(listings::Column::Id.eq(listing.get()));
        for (on, col) in [
            (story, listings::Column::UnlockedStory),
            (milestones, listings::Column::UnlockedMilestones),
            (media, listings::Column::UnlockedMedia),
        ] {
            if on {
                q = q.col_expr(col, Expr::value(true));
            }
        }
        if story || milestones || media {
            q.exec(&self.db).await.map_err(repo_err)?;
        }
        Ok(())
    }

    async fn add_billboard(
        &self,
        listing: ListingId,
        line_id: i64,
        amount: Cents,
        now: DateTime<Utc>,
    ) -> RepoResult<()> {
        let txn = self.begin_write().await?;
        let seen = billboard_contributions::Entity::find()
            .filter(billboard_contributions::Column::OrderLineId.eq(line_id))
            .one(&txn)
            .await
            .map_err(repo_err)?;
        if seen.is_none() {
            billboard_contributions::ActiveModel {
                listing_id: Set(listing.get()),
                order_line_id: Set(Some(line_id)),
                amount_cents: Set(amount.get()),
                created_at: Set(ts(now)),
                ..Default::default()
            }
            .insert(&txn)
            .await
            .map_err(repo_err)?;
            listings::Entity::update_many()
                .col_expr(
                    listings::Column::BillboardCents,
                    Expr::col(listings::Column::BillboardCents).add(amount.get()),
                )
                .filter(listings::Column::Id.eq(listing.get()))
                .exec(&txn)
                .await
                .map_err(repo_err)?;
        }
        txn.commit().await.map_err(repo_err)
    }
}
