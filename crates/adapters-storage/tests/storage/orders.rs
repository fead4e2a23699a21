//! Orders on both databases: an order and its lines round-trip, re-pricing only while pending, payment
//! and each line's fulfilment happen once, gateway events are seen once, and the listing effects of
//! fulfilment (extra categories up to three, billboard money once per line, unlocks, featured).

use crate::accounts::user;
use crate::{cat_id, listing, now, on_both, on_every_store, seed_categories};
use domain::ids::CategoryId;
use domain::listing::{ListingStatus, Plan};
use domain::money::Cents;
use domain::order::{Billing, LineOptions, OrderNumber, OrderStatus, price};
use domain::paging::PageRequest;
use domain::ports::OrderCreated;
use domain::vat::VatDecision;
use domain::week::LaunchWeek;

/// The order `create_order` stored (it had room).
fn made(r: domain::ports::RepoResult<OrderCreated>) -> domain::order::Order {
    match r.unwrap() {
        OrderCreated::Created(o) => o,
        other => panic!("not stored: {other:?}"),
    }
}

fn vat(bp: u32) -> VatDecision {
    VatDecision { rate_bp: bp, reverse_charge: false, note: format!("{bp} bp"), final_rate: true }
}

on_every_store!(orders_are_priced_paid_and_fulfilled_once, |store| {
    demo_free_products(store).await;
    let products = store.list_products().await.unwrap();
    let pick = |code: &str| products.iter().find(|p| p.code.as_str() == code).unwrap().clone();
    let cats = seed_categories(store).await;
    let l =
        store.create_listing(listing("Bought", ListingStatus::Draft, Some(cat_id(&cats, "dev-tools")))).await.unwrap();
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap();
    let week = LaunchWeek::of(now()).plus_weeks(2);
    let extra = vec![cat_id(&cats, "marketing"), cat_id(&cats, "api-tools")];
    let items = vec![
        (pick("launch"), Some(l.id), LineOptions::Launch { week: Some(week) }),
        (pick("extra-category"), Some(l.id), LineOptions::ExtraCategories { categories: extra.clone() }),
        (pick("billboard"), Some(l.id), LineOptions::Billboard { amount: Cents::new(2500) }),
        (pick("unlock-story"), Some(l.id), LineOptions::None),
    ];
    let quote = price(items, vat(0));
    let number = OrderNumber::from_random(42);
    let billing = Billing::default();
    let o = made(store.create_order(ann.id, &number, &quote, &billing, "sandbox", now(), 25).await);
    assert_eq!((o.status(), o.lines.len(), o.net), (OrderStatus::Pending, 4, quote.net));
    assert_eq!(o.lines[0].line.options, LineOptions::Launch { week: Some(week) });
    assert_eq!(o.lines[1].line.options, LineOptions::ExtraCategories { categories: extra.clone() });
    assert_eq!((o.lines[1].line.quantity, o.lines[2].line.unit), (2, Cents::new(2500)));
    assert!(
        store.create_order(ann.id, &number, &quote, &billing, "sandbox", now(), 25).await.is_err(),
        "numbers are unique"
    );
    assert_eq!(store.order_by_number(&number).await.unwrap().unwrap(), o);
    assert_eq!(store.my_orders(ann.id, Default::default()).await.unwrap().items, vec![o.clone()]);

    // The billing form re-prices VAT while pending.
    let de = Billing { country: Some("DE".into()), vat_number: None, name: Some("Ann".into()) };
    let repriced = price(
        o.lines.iter().map(|s| (pick(s.line.product.as_str()), s.line.listing, s.line.options.clone())).collect(),
        vat(1900),
    );
    assert!(store.reprice_order(o.id, &repriced, &de).await.unwrap());
    let got = store.order_by_number(&number).await.unwrap().unwrap();
    assert_eq!((got.vat, got.vat_rate_bp, got.billing), (repriced.vat_total, 1900, de.clone()));
    assert_eq!(got.lines[0].line.vat, Cents::new(931));

    // A new price forgets the payment session opened for the old one; an expired session is forgotten
    // only while it is still the order's.
    store.set_gateway_ref(o.id, "cs_test_0").await.unwrap();
    assert!(store.reprice_order(o.id, &repriced, &de).await.unwrap());
    assert_eq!(store.order_by_number(&number).await.unwrap().unwrap().gateway_ref, None);
    store.set_gateway_ref(o.id, "cs_test_1").await.unwrap();
    assert!(!store.clear_gateway_ref(o.id, "cs_test_0").await.unwrap(), "not the order's session any more");
    assert_eq!(store.order_by_gateway_ref("cs_test_1").await.unwrap().unwrap().id, o.id);
    store.flag_order(o.id, "paid 1 cent").await.unwrap();
    assert_eq!(store.order_by_number(&number).await.unwrap().unwrap().flag.as_deref(), Some("paid 1 cent"));
    assert!(store.pending_orders_before(now(), 10).await.unwrap().is_empty(), "made at now(), not before");
    assert!(store.orders_to_fulfil(10).await.unwrap().is_empty(), "not paid yet");
    // Moves are compare-and-set from the status the caller read.
    assert!(!store.move_order(o.id, OrderStatus::Paid, OrderStatus::Refunded, now()).await.unwrap(), "not paid");
    assert!(store.move_order(o.id, OrderStatus::Pending, OrderStatus::Paid, now()).await.unwrap());
    assert!(!store.move_order(o.id, OrderStatus::Pending, OrderStatus::Paid, now()).await.unwrap(), "paid once");
    let paid = store.order_by_number(&number).await.unwrap().unwrap();
    assert_eq!((paid.status(), paid.paid_at.is_some()), (OrderStatus::Paid, true));
    assert!(!store.reprice_order(o.id, &repriced, &de).await.unwrap(), "a paid order keeps its prices");
    let day_later = now() + chrono::Duration::days(1);
    assert!(store.pending_orders_before(day_later, 10).await.unwrap().is_empty(), "a paid order never expires");
    let unpaid =
        made(store.create_order(ann.id, &OrderNumber::from_random(43), &quote, &billing, "sandbox", now(), 25).await);
    let due = store.pending_orders_before(day_later, 10).await.unwrap();
    assert_eq!(due.iter().map(|o| o.id).collect::<Vec<_>>(), vec![unpaid.id]);
    assert!(store.move_order(due[0].id, OrderStatus::Pending, OrderStatus::Cancelled, day_later).await.unwrap());
    let unpaid = store.order_by_number(&unpaid.number).await.unwrap().unwrap();
    assert_eq!((unpaid.status(), unpaid.paid_at), (OrderStatus::Cancelled, None));
    assert_eq!(store.orders_to_fulfil(10).await.unwrap().len(), 1);
    for s in &got.lines {
        assert!(store.fulfil_line(s.id, "done", now()).await.unwrap());
        assert!(!store.fulfil_line(s.id, "again", now()).await.unwrap());
    }
    assert!(store.orders_to_fulfil(10).await.unwrap().is_empty());
    assert!(!store.payment_event_seen("stripe", "evt_1").await.unwrap());
    assert!(store.first_payment_event("stripe", "evt_1", now()).await.unwrap());
    assert!(store.payment_event_seen("stripe", "evt_1").await.unwrap());
    assert!(!store.first_payment_event("stripe", "evt_1", now()).await.unwrap(), "a replay is seen");

    // Effects.
    assert_eq!(store.add_extra_categories(l.id, &extra).await.unwrap(), 2);
    assert_eq!(store.add_extra_categories(l.id, &extra).await.unwrap(), 2, "adding again changes nothing");
    let fourth = [cat_id(&cats, "dev-tools"), CategoryId::from_db(cat_id(&cats, "marketing").get())];
    assert_eq!(store.add_extra_categories(l.id, &fourth).await.unwrap(), 2, "the primary is no extra");
    store.add_billboard(l.id, got.lines[2].id, Cents::new(2500), now()).await.unwrap();
    store.add_billboard(l.id, got.lines[2].id, Cents::new(2500), now()).await.unwrap();
    store.unlock_sections(l.id, true, false, false).await.unwrap();
    store.set_featured(l.id).await.unwrap();
    let after = store.get_listing(l.id).await.unwrap().unwrap();
    assert_eq!(after.categories.as_ref().unwrap().extras().len(), 2);
    assert!(after.unlocked.story && !after.unlocked.milestones && after.featured);
    let board = store.launches_in(Plan::Paid, &[LaunchWeek::of(now())]).await.unwrap();
    assert!(board.is_empty(), "a draft is no launch");
    // The billboard money shows on the paid board once the listing is live: counted once per line.
    let mut live = after.lifecycle;
    live.paid_launch(None, now()).unwrap();
    assert!(store.move_lifecycle(l.id, &after.lifecycle, &live, now()).await.unwrap());
    let paid = store.ranked(domain::listing::RankMetric::BillboardCents, PageRequest::default()).await.unwrap();
    assert_eq!(paid.items.iter().map(|(s, c)| (s.id, *c)).collect::<Vec<_>>(), [(l.id, 2500)]);
});

async fn demo_free_products(store: &std::sync::Arc<dyn domain::ports::Store>) {
    store.ensure_products(&demo_data::reference::products().unwrap()).await.unwrap();
}

on_every_store!(a_weeks_queue_is_ordered_by_when_each_listing_was_listed, |store| {
    use domain::listing::{Lifecycle, Plan};
    let week = LaunchWeek::of(now()).plus_weeks(7);
    let mut ids = Vec::new();
    for (i, plan) in [Plan::Free, Plan::Free, Plan::Paid, Plan::Free].into_iter().enumerate() {
        let mut l = listing(&format!("Queued {i}"), ListingStatus::Draft, None);
        let mut lc = Lifecycle::saved();
        match plan {
            Plan::Free => lc.choose_free(week).unwrap(),
            _ => lc.paid_launch(Some(week), now()).unwrap(),
        }
        l.lifecycle = lc;
        ids.push(store.create_listing(l).await.unwrap().id);
    }
    let ahead = |i: usize| store.launches_ahead(Plan::Free, week, ids[i]);
    assert_eq!(ahead(0).await.unwrap(), 0);
    assert_eq!(ahead(1).await.unwrap(), 1);
    assert_eq!(ahead(3).await.unwrap(), 2, "the paid launch is in another queue");
    assert_eq!(store.launches_ahead(Plan::Paid, week, ids[3]).await.unwrap(), 1);
    assert_eq!(store.launches_ahead(Plan::Free, week.plus_weeks(1), ids[3]).await.unwrap(), 0, "another week");
});

on_every_store!(two_purchases_of_extra_categories_at_once_stay_within_three, |store| {
    // Two paid orders for extra categories of one listing, fulfilled at once (two instances' workers,
    // each order its own line): each reads the extras there are, then adds up to three. Both reading
    // before either added, the listing would end with six.
    let mut new = Vec::new();
    for (k, s) in ["primary", "one", "two", "three", "four", "five", "six"].iter().enumerate() {
        new.push(crate::cat(s, None, k as i32 + 1));
    }
    store.ensure_categories(&new).await.unwrap();
    let cats: Vec<(String, CategoryId)> = store
        .list_categories()
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.category.slug.to_string(), c.category.id))
        .collect();
    for round in 0..4 {
        let l = store
            .create_listing(listing(&format!("Bought {round}"), ListingStatus::Live, Some(cat_id(&cats, "primary"))))
            .await
            .unwrap();
        let sets = [["one", "two", "three"], ["four", "five", "six"]].map(|set| set.map(|s| cat_id(&cats, s)).to_vec());
        let adds = sets.map(|set| {
            let store = store.clone();
            tokio::spawn(async move { store.add_extra_categories(l.id, &set).await })
        });
        for r in futures::future::join_all(adds).await {
            assert_eq!(r.unwrap().unwrap(), 3, "round {round}: each answers the extras there are");
        }
        let got = store.get_listing(l.id).await.unwrap().unwrap();
        assert_eq!(got.categories.unwrap().extras().len(), 3, "round {round}");
    }
});

on_every_store!(checkouts_made_at_once_for_a_paid_week_hold_no_more_places_than_it_has, |store| {
    demo_free_products(store).await;
    let launch = store.list_products().await.unwrap().into_iter().find(|p| p.code.as_str() == "launch").unwrap();
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap();
    let week = LaunchWeek::of(now()).plus_weeks(3);
    let mut ids = Vec::new();
    for k in 0..10 {
        ids.push(store.create_listing(listing(&format!("Paid {k}"), ListingStatus::Draft, None)).await.unwrap().id);
    }
    let quote_for =
        |id, week| price(vec![(launch.clone(), Some(id), LineOptions::Launch { week: Some(week) })], vat(0));
    let checkouts = ids.iter().enumerate().map(|(k, id)| {
        let (store, quote) = (store.clone(), quote_for(*id, week));
        let number = OrderNumber::from_random(1000 + k as u64);
        tokio::spawn(async move {
            store.create_order(ann.id, &number, &quote, &Billing::default(), "sandbox", now(), 3).await
        })
    });
    let made_at_once: Vec<OrderCreated> =
        futures::future::join_all(checkouts).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    let stored: Vec<_> = made_at_once
        .iter()
        .filter_map(|c| match c {
            OrderCreated::Created(o) => Some(o.clone()),
            OrderCreated::WeekFull(w) => {
                assert_eq!(*w, week);
                None
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(stored.len(), 3, "{made_at_once:?}");
    assert_eq!(store.paid_places_held(week, &[], now()).await.unwrap(), 3);
    let holder = stored[0].lines[0].line.listing.unwrap();
    assert_eq!(store.paid_places_held(week, &[holder], now()).await.unwrap(), 2, "except is not counted");
    assert_eq!(store.paid_places_held(week.plus_weeks(1), &[], now()).await.unwrap(), 0, "another week");

    // A listing that holds a place may make another checkout for it: it is counted once.
    let again = store
        .create_order(
            ann.id,
            &OrderNumber::from_random(2000),
            &quote_for(holder, week),
            &Billing::default(),
            "sandbox",
            now(),
            3,
        )
        .await;
    let again = made(again);
    assert_eq!(store.paid_places_held(week, &[], now()).await.unwrap(), 3);
    // A cancelled order lets its place go only when no other order of the listing holds it.
    assert!(store.move_order(again.id, OrderStatus::Pending, OrderStatus::Cancelled, now()).await.unwrap());
    assert_eq!(store.paid_places_held(week, &[], now()).await.unwrap(), 3);

    // Paid: still held until applied; applied, held by the listing itself, once, even before the line
    // is marked; the mark changes nothing.
    let first = &stored[0];
    assert!(store.move_order(first.id, OrderStatus::Pending, OrderStatus::Paid, now()).await.unwrap());
    assert_eq!(store.paid_places_held(week, &[], now()).await.unwrap(), 3);
    let before = store.get_listing(holder).await.unwrap().unwrap().lifecycle;
    let mut scheduled = before;
    scheduled.paid_launch(Some(week), now()).unwrap();
    assert!(store.move_lifecycle(holder, &before, &scheduled, now()).await.unwrap());
    assert_eq!(store.paid_places_held(week, &[], now()).await.unwrap(), 3, "moved, line not marked: once");
    assert!(store.fulfil_line(first.lines[0].id, "scheduled", now()).await.unwrap());
    assert_eq!(store.paid_places_held(week, &[], now()).await.unwrap(), 3);

    // An unpaid checkout holds its place as long as it can be paid, and not a second longer; a paid
    // launch holds its week for good.
    let made_at = stored[1].created_at;
    let last = made_at + chrono::Duration::hours(domain::order::PENDING_HOURS);
    assert_eq!(store.paid_places_held(week, &[], last).await.unwrap(), 3);
    let after = last + chrono::Duration::seconds(1);
    assert_eq!(store.paid_places_held(week, &[], after).await.unwrap(), 1, "only the scheduled listing");
    let refused = ids.iter().find(|id| !stored.iter().any(|o| o.lines[0].line.listing == Some(**id))).unwrap();
    let late = store
        .create_order(
            ann.id,
            &OrderNumber::from_random(3000),
            &quote_for(*refused, week),
            &Billing::default(),
            "sandbox",
            after,
            3,
        )
        .await;
    made(late);
    // A full week stores nothing: no order, no line.
    let mine = store.my_orders(ann.id, PageRequest::default()).await.unwrap().total;
    let other = ids
        .iter()
        .find(|id| **id != *refused && !stored.iter().any(|o| o.lines[0].line.listing == Some(**id)))
        .unwrap();
    let refused_now = store
        .create_order(
            ann.id,
            &OrderNumber::from_random(3001),
            &quote_for(*other, week),
            &Billing::default(),
            "sandbox",
            now(),
            3,
        )
        .await;
    assert_eq!(refused_now.unwrap(), OrderCreated::WeekFull(week));
    assert_eq!(store.my_orders(ann.id, PageRequest::default()).await.unwrap().total, mine);
});

on_both!(the_launch_week_migration_fills_in_the_lines_stored_before_it, |store| {
    use domain::ports::{ListingRepository, OrderRepository, ProductRepository, UserRepository};
    use sea_orm::ConnectionTrait;
    store.ensure_products(&demo_data::reference::products().unwrap()).await.unwrap();
    let products = store.list_products().await.unwrap();
    let pick = |code: &str| products.iter().find(|p| p.code.as_str() == code).unwrap().clone();
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap();
    let week = LaunchWeek::of(now()).plus_weeks(4);
    let (a, b) = (
        store.create_listing(listing("Before A", ListingStatus::Draft, None)).await.unwrap().id,
        store.create_listing(listing("Before B", ListingStatus::Draft, None)).await.unwrap().id,
    );
    let items = vec![
        (pick("launch"), Some(a), LineOptions::Launch { week: Some(week) }),
        (pick("launch"), Some(b), LineOptions::Launch { week: None }),
        (pick("billboard"), Some(b), LineOptions::Billboard { amount: Cents::new(900) }),
    ];
    made(
        store
            .create_order(
                ann.id,
                &OrderNumber::from_random(77),
                &price(items, vat(0)),
                &Billing::default(),
                "sandbox",
                now(),
                25,
            )
            .await,
    );
    assert_eq!(store.paid_places_held(week, &[], now()).await.unwrap(), 1);
    // As the lines were before the column: their week only in the options.
    let db = store.connection();
    crate::harness::roll_back_through(db, "m20261127_000041_order_launch_weeks").await;
    adapters_storage::db::migrate(db).await.unwrap();
    let weeks = db
        .query_all_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            "SELECT CAST(launch_week AS TEXT) AS w FROM order_lines ORDER BY id",
        ))
        .await
        .unwrap()
        .iter()
        .map(|r| r.try_get::<Option<String>>("", "w").unwrap())
        .collect::<Vec<_>>();
    assert_eq!(weeks, vec![Some(week.monday().to_string()), None, None]);
    assert_eq!(store.paid_places_held(week, &[], now()).await.unwrap(), 1);
});

on_every_store!(a_listings_latest_checkout_holds_its_week_and_an_earlier_one_for_another_week_gives_way, |store| {
    demo_free_products(store).await;
    let launch = store.list_products().await.unwrap().into_iter().find(|p| p.code.as_str() == "launch").unwrap();
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap();
    let l = store.create_listing(listing("Undecided", ListingStatus::Draft, None)).await.unwrap().id;
    let (w1, w2) = (LaunchWeek::of(now()).plus_weeks(3), LaunchWeek::of(now()).plus_weeks(4));
    let mut n = 4000;
    let mut checkout = |week| {
        n += 1;
        let quote = price(vec![(launch.clone(), Some(l), LineOptions::Launch { week: Some(week) })], vat(0));
        let number = OrderNumber::from_random(n);
        async move { made(store.create_order(ann.id, &number, &quote, &Billing::default(), "sandbox", now(), 25).await) }
    };
    let held = |w| async move { store.paid_places_held(w, &[], now()).await.unwrap() };
    checkout(w1).await;
    assert_eq!((held(w1).await, held(w2).await), (1, 0));
    // The maker changes their mind: one listing holds one week, the one it checked out for last.
    checkout(w2).await;
    assert_eq!((held(w1).await, held(w2).await), (0, 1));
    let third = checkout(w1).await;
    assert_eq!((held(w1).await, held(w2).await), (1, 0), "and back");
    // A later checkout that can no longer be paid gives the week back to the one before it.
    assert!(store.move_order(third.id, OrderStatus::Pending, OrderStatus::Cancelled, now()).await.unwrap());
    assert_eq!((held(w1).await, held(w2).await), (0, 1));
});

on_every_store!(an_account_has_at_most_ten_orders_awaiting_payment_even_made_at_once, |store| {
    use domain::order::{MAX_OPEN_ORDERS, PENDING_HOURS};
    demo_free_products(store).await;
    let unlock = store.list_products().await.unwrap().into_iter().find(|p| p.code.as_str() == "unlock-story").unwrap();
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap();
    let bob = store.create_user(user("bob@acme.example"), now()).await.unwrap();
    let quote = price(vec![(unlock, None, LineOptions::None)], vat(0));
    let t0 = now();
    let orders = (0..MAX_OPEN_ORDERS + 8).map(|k| {
        let (store, quote) = (store.clone(), quote.clone());
        let at = t0 + chrono::Duration::milliseconds(k as i64);
        tokio::spawn(async move {
            let number = OrderNumber::from_random(5000 + k as u64);
            store.create_order(ann.id, &number, &quote, &Billing::default(), "sandbox", at, 25).await
        })
    });
    let made_at_once: Vec<OrderCreated> =
        futures::future::join_all(orders).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    let stored: Vec<_> = made_at_once
        .iter()
        .filter_map(|c| match c {
            OrderCreated::Created(o) => Some(o.clone()),
            OrderCreated::TooManyOpen { .. } => None,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(stored.len(), MAX_OPEN_ORDERS, "{made_at_once:?}");
    let oldest = stored.iter().map(|o| o.created_at).min().unwrap();
    let again = |n: u64, user: domain::ids::UserId, at| {
        let quote = quote.clone();
        async move {
            store
                .create_order(user, &OrderNumber::from_random(n), &quote, &Billing::default(), "sandbox", at, 25)
                .await
                .unwrap()
        }
    };
    assert_eq!(again(6000, ann.id, t0).await, OrderCreated::TooManyOpen { oldest }, "the oldest is named");
    assert!(matches!(again(6001, bob.id, t0).await, OrderCreated::Created(_)), "another account has its own");
    // A paid one, or a cancelled one, awaits nothing: its place is free.
    assert!(store.move_order(stored[0].id, OrderStatus::Pending, OrderStatus::Paid, t0).await.unwrap());
    assert!(matches!(again(6002, ann.id, t0).await, OrderCreated::Created(_)));
    assert!(matches!(again(6003, ann.id, t0).await, OrderCreated::TooManyOpen { .. }));
    // Orders count while they can be paid: at 24 h after the first they all still do; once the last
    // made is older than that, none does.
    let day = chrono::Duration::hours(PENDING_HOURS);
    assert!(matches!(again(6004, ann.id, t0 + day).await, OrderCreated::TooManyOpen { .. }));
    let youngest = made_at_once.len() as i64;
    let all_expired = t0 + day + chrono::Duration::milliseconds(youngest + 1);
    assert!(matches!(again(6005, ann.id, all_expired).await, OrderCreated::Created(_)));
});
