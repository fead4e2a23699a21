//! Own listings on both databases: lifecycle compare-and-set, free-week counts, due listings, badge
//! checks, edits with versions, milestones up to their cap, votes into the week's tally, one award set
//! per week, and follows.

use crate::accounts::user;
use crate::{listing, now, on_both, on_every_store};
use adapters_storage::db;
use chrono::Duration;
use domain::award::launch_of_the_week;
use domain::engagement::Vote;
use domain::listing::{ListingStatus, Plan};
use domain::ports::BadgeCheck;
use domain::sections::Milestone;
use domain::week::LaunchWeek;

on_every_store!(lifecycle_moves_compare_and_set_and_the_free_queue_counts, |store| {
    let l = store.create_listing(listing("Queue One", ListingStatus::Draft, None)).await.unwrap();
    let week = LaunchWeek::of(now()).plus_weeks(7);
    let mut free = l.lifecycle;
    free.choose_free(week).unwrap();
    assert!(store.move_lifecycle(l.id, &l.lifecycle, &free, now()).await.unwrap());
    assert!(!store.move_lifecycle(l.id, &l.lifecycle, &free, now()).await.unwrap(), "moved from a stale state");
    let got = store.get_listing(l.id).await.unwrap().unwrap();
    assert_eq!((got.lifecycle.status(), got.lifecycle.launch_week()), (ListingStatus::AwaitingBadge, Some(week)));
    let counts = store.launches_in(Plan::Free, &[week, week.plus_weeks(1)]).await.unwrap();
    assert_eq!(counts, vec![(week, 1)]);
    assert!(store.listings_due(ListingStatus::AwaitingBadge, week.plus_weeks(-1)).await.unwrap().is_empty());
    assert_eq!(store.listings_due(ListingStatus::AwaitingBadge, week).await.unwrap().len(), 1);
    assert_eq!(store.badge_check(l.id).await.unwrap(), None);
    let check = BadgeCheck { checked_at: now(), found: Some("a link".into()), detail: "found on x".into() };
    store.record_badge_check(l.id, &check).await.unwrap();
    assert_eq!(store.badge_check(l.id).await.unwrap(), Some(check));
    // Nobody owns a listing created outside a draft.
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap();
    assert_eq!(store.owned_listing(ann.id, l.id).await.unwrap(), None);
    assert_eq!(store.owned_listings(ann.id, Default::default()).await.unwrap().total, 0);
});

on_every_store!(edits_keep_versions_and_milestones_stop_at_their_cap, |store| {
    let l = store.create_listing(listing("Edited", ListingStatus::Live, None)).await.unwrap();
    let ann = store.create_user(user("ann@acme.example"), now()).await.unwrap();
    let mut p = l.profile.clone();
    p.tagline = "New tagline".into();
    store
        .save_profile_edit(l.id, ann.id, &p, r#"{"tagline":"old"}"#, r#"{"tagline":"New tagline"}"#, now())
        .await
        .unwrap();
    assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().profile.tagline, "New tagline");
    let v = store.listing_versions(l.id).await.unwrap();
    assert_eq!((v.len(), v[0].user_id, v[0].before.as_str()), (1, Some(ann.id), r#"{"tagline":"old"}"#));
    let m = Milestone::parse("2026-01-31", "Launched".into(), None, None).unwrap();
    let first = store.add_milestone(l.id, &m, 2).await.unwrap().unwrap();
    assert!(store.add_milestone(l.id, &m, 2).await.unwrap().is_some());
    assert_eq!(store.add_milestone(l.id, &m, 2).await.unwrap(), None, "the cap holds");
    assert!(store.delete_milestone(l.id, first).await.unwrap());
    assert!(!store.delete_milestone(l.id, first).await.unwrap());
    assert_eq!(store.milestones(l.id).await.unwrap().len(), 1);
});

on_every_store!(milestones_added_at_once_stop_at_their_cap, |store| {
    // Each add counts the milestones there are, then inserts: eight at once against a cap of two
    // (a maker's script, or two tabs) must still leave two.
    let l = store.create_listing(listing("Crowded", ListingStatus::Live, None)).await.unwrap();
    let m = Milestone::parse("2026-01-31", "Launched".into(), None, None).unwrap();
    let adds = (0..8).map(|_| {
        let (store, m) = (store.clone(), m.clone());
        tokio::spawn(async move { store.add_milestone(l.id, &m, 2).await })
    });
    let added =
        futures::future::join_all(adds).await.into_iter().filter(|r| r.as_ref().unwrap().as_ref().unwrap().is_some());
    assert_eq!(added.count(), 2);
    assert_eq!(store.milestones(l.id).await.unwrap().len(), 2);
});

on_every_store!(votes_fill_the_week_tally_and_a_week_is_awarded_once, |store| {
    let week = LaunchWeek::of(now());
    let a = store.create_listing(listing("Voted A", ListingStatus::Live, None)).await.unwrap();
    let b = store.create_listing(listing("Voted B", ListingStatus::Live, None)).await.unwrap();
    let mut n = 0;
    for (l, votes) in [(a.id, 2), (b.id, 3)] {
        for _ in 0..votes {
            n += 1;
            let u = store.create_user(user(&format!("v{n}@voters.example")), now()).await.unwrap();
            let v = Vote::plain(l, u.id, now() + Duration::minutes(n));
            assert!(store.cast_vote(&v).await.unwrap().counted());
            assert!(!store.cast_vote(&v).await.unwrap().counted(), "one vote per person and listing");
        }
    }
    assert_eq!(store.get_listing(b.id).await.unwrap().unwrap().votes, 3);
    let mut tally = store.week_tally(week).await.unwrap();
    tally.sort();
    assert_eq!(tally, vec![(a.id, 2), (b.id, 3)]);
    let awards = launch_of_the_week(week, tally);
    assert!(!store.week_awarded(week).await.unwrap());
    assert!(store.award_week(week, &awards).await.unwrap());
    assert!(store.week_awarded(week).await.unwrap());
    assert!(!store.award_week(week, &awards).await.unwrap(), "once per week");
    let fan = store.create_user(user("fan@people.example"), now()).await.unwrap();
    assert!(store.follow(a.id, fan.id, now()).await.unwrap());
    assert!(!store.follow(a.id, fan.id, now()).await.unwrap());
    assert_eq!(
        store.followers(a.id).await.unwrap().iter().map(|e| e.as_str().to_owned()).collect::<Vec<_>>(),
        ["fan@people.example"]
    );
    assert_eq!(store.get_listing(a.id).await.unwrap().unwrap().follows, 1);
    assert!(store.unfollow(a.id, fan.id).await.unwrap());
    assert_eq!(store.get_listing(a.id).await.unwrap().unwrap().follows, 0);
});

/// The listing's stored trending rank, from any store (`&**store` for an `Arc<dyn Store>`).
async fn rank_of<S: domain::ports::ListingRepository + ?Sized>(store: &S, id: domain::ids::ListingId) -> f64 {
    store.get_listing(id).await.unwrap().unwrap().trending_score
}

/// A plain vote on `listing` from a new person (`{name}{k}@people.example`) at each instant; the voters
/// with their instants, in order.
async fn cast_votes<S>(
    store: &S,
    listing: domain::ids::ListingId,
    name: &str,
    times: impl IntoIterator<Item = chrono::DateTime<chrono::Utc>>,
) -> Vec<(domain::ids::UserId, chrono::DateTime<chrono::Utc>)>
where
    S: domain::ports::UserRepository + domain::ports::OwnListingRepository + ?Sized,
{
    let mut cast = Vec::new();
    for (k, at) in times.into_iter().enumerate() {
        let u = store.create_user(user(&format!("{name}{k}@people.example")), now()).await.unwrap();
        assert!(store.cast_vote(&Vote::plain(listing, u.id, at)).await.unwrap().counted());
        cast.push((u.id, at));
    }
    cast
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

on_every_store!(a_trending_rank_is_a_recount_after_every_vote_and_unvote, |store| {
    use domain::listing::trending;
    let l = store.create_listing(listing("Trendy", ListingStatus::Live, None)).await.unwrap();
    let t0 = now();
    let mut cast: Vec<(domain::ids::UserId, chrono::DateTime<chrono::Utc>, f64)> = Vec::new();
    // Votes out of order in time, one at half weight, one from before the epoch.
    let at = [t0, t0 - Duration::days(400), t0 + Duration::hours(72), t0 - Duration::hours(5)];
    for (k, when) in at.iter().enumerate() {
        let u = store.create_user(user(&format!("fan{k}@people.example")), now()).await.unwrap();
        let weight = if k == 3 { 0.5 } else { 1.0 };
        assert!(store.cast_vote(&Vote { weight, ..Vote::plain(l.id, u.id, *when) }).await.unwrap().counted());
        cast.push((u.id, *when, weight));
        let want = trending::rank(cast.iter().map(|(_, t, w)| (*t, *w)));
        assert!(
            close(rank_of(&**store, l.id).await, want),
            "after vote {k}: {} != {want}",
            rank_of(&**store, l.id).await
        );
    }
    // The rank stands for the decayed score as of any moment: here 72 hours after t0.
    let then = t0 + Duration::hours(72);
    let want = 1.0 * trending::vote_weight(t0, then)
        + trending::vote_weight(t0 - Duration::days(400), then)
        + 1.0
        + 0.5 * trending::vote_weight(t0 - Duration::hours(5), then);
    let got = trending::score_of(rank_of(&**store, l.id).await, then);
    assert!((got - want).abs() < 1e-9, "{got} != {want}");
    // Taking votes back leaves the rank of the votes left, the heaviest first; none left is 0 exactly.
    let mut left = vec![0, 1, 2, 3];
    for k in [2, 0, 3] {
        let (u, _, _) = cast[k];
        assert!(store.uncast_vote(l.id, u).await.unwrap());
        assert!(!store.uncast_vote(l.id, u).await.unwrap(), "only once");
        left.retain(|i| *i != k);
        let want = trending::rank(left.iter().map(|i| (cast[*i].1, cast[*i].2)));
        assert!(
            close(rank_of(&**store, l.id).await, want),
            "after taking {k} back: {} != {want}",
            rank_of(&**store, l.id).await
        );
    }
    assert!(rank_of(&**store, l.id).await > 0.0, "a vote from before the epoch still counts, however little");
    let (u, when, _) = cast[1];
    assert!(store.uncast_vote(l.id, u).await.unwrap());
    let after = store.get_listing(l.id).await.unwrap().unwrap();
    assert_eq!((after.votes, after.trending_score), (0, 0.0));
    assert_eq!(store.week_tally(LaunchWeek::of(when)).await.unwrap().iter().map(|(_, n)| *n).sum::<i64>(), 0);
    assert_eq!(store.engagement_of(l.id, u).await.unwrap(), (false, false));
    // And the person may vote again.
    assert!(store.cast_vote(&Vote::plain(l.id, u, then)).await.unwrap().counted());
    assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().votes, 1);
    assert!(close(rank_of(&**store, l.id).await, trending::rank([(then, 1.0)])));
});

// Votes a few half-lives apart taken back newest first: each unvote takes most of what is left.
// Subtracting each against its own step let the rank drift (the error multiplies by the total over
// what is left, step after step); against the listing's peak it stays a recount at every step. Then
// many votes of one day, where one taken back is subtracted, and again after all are gone.
on_every_store!(a_run_of_unvotes_each_taking_most_of_the_rest_keeps_the_rank_a_recount, |store| {
    use domain::listing::trending;
    let l = store.create_listing(listing("Spiky", ListingStatus::Live, None)).await.unwrap();
    let t0 = now();
    let mut cast = cast_votes(&**store, l.id, "spike", (0..7).map(|k| t0 + Duration::hours(460 * k))).await;
    while let Some((u, _)) = cast.pop() {
        assert!(store.uncast_vote(l.id, u).await.unwrap());
        let want = trending::rank(cast.iter().map(|(_, at)| (*at, 1.0)));
        let got = rank_of(&**store, l.id).await;
        assert!(close(got, want), "{} votes left: {got} != {want}", cast.len());
    }
    assert_eq!(rank_of(&**store, l.id).await, 0.0);
    let mut crowd = Vec::new();
    for round in 0..2 {
        let name = format!("crowd{round}-");
        crowd.extend(cast_votes(&**store, l.id, &name, (0..40).map(|k| t0 + Duration::minutes(k))).await);
        for _ in 0..35 {
            let (u, _) = crowd.remove(crowd.len() / 2);
            assert!(store.uncast_vote(l.id, u).await.unwrap());
            let want = trending::rank(crowd.iter().map(|(_, at)| (*at, 1.0)));
            let got = rank_of(&**store, l.id).await;
            assert!(close(got, want), "{} votes left: {got} != {want}", crowd.len());
        }
    }
});

/// A listing's kept trending peak (migration 42), read as stored.
async fn peak_of(db: &sea_orm::DatabaseConnection, id: i64) -> Option<f64> {
    use sea_orm::ConnectionTrait;
    let q = sea_orm::Statement::from_string(
        db.get_database_backend(),
        format!("SELECT trending_peak AS p FROM listings WHERE id = {id}"),
    );
    db.query_one_raw(q).await.unwrap().unwrap().try_get::<Option<f64>>("", "p").unwrap()
}

// Listings voted for before migration 42 have no peak: their first unvote counts afresh (and keeps
// the peak from there), as every unvote did before it.
on_both!(a_listing_voted_for_before_the_peak_column_counts_its_first_unvote_afresh, |store| {
    use domain::listing::trending;
    use domain::ports::{ListingRepository, OwnListingRepository};
    let l = store.create_listing(listing("Older", ListingStatus::Live, None)).await.unwrap();
    let t0 = now();
    let mut cast = cast_votes(store, l.id, "old", (0..5).map(|k| t0 + Duration::hours(460 * k))).await;
    let db = store.connection();
    crate::harness::roll_back_through(db, "m20261127_000042_trending_peak").await;
    adapters_storage::db::migrate(db).await.unwrap();
    assert_eq!(peak_of(db, l.id.get()).await, None, "not known after the upgrade");
    while let Some((u, _)) = cast.pop() {
        assert!(store.uncast_vote(l.id, u).await.unwrap());
        let want = trending::rank(cast.iter().map(|(_, at)| (*at, 1.0)));
        assert!(close(rank_of(store, l.id).await, want), "{} left", cast.len());
        assert!(peak_of(db, l.id.get()).await.is_some(), "known from the first unvote on");
    }
});

on_every_store!(the_trending_feed_orders_as_the_decayed_scores_of_now, |store| {
    use domain::listing::{ListingSearch, SearchSort, trending};
    let t = now();
    let voters: Vec<_> = futures::future::join_all(
        (0..3)
            .map(|k| async move { store.create_user(user(&format!("v{k}@people.example")), now()).await.unwrap().id }),
    )
    .await;
    // Fresh, a week old three times over, a year old, two years old, and none.
    let plans: [&[i64]; 5] = [&[0], &[168, 168, 168], &[24 * 365], &[24 * 730], &[]];
    let mut expected = Vec::new();
    for (i, hours) in plans.iter().enumerate() {
        let l = store.create_listing(listing(&format!("Feed {i}"), ListingStatus::Live, None)).await.unwrap();
        for (k, h) in hours.iter().enumerate() {
            assert!(store.cast_vote(&Vote::plain(l.id, voters[k], t - Duration::hours(*h))).await.unwrap().counted());
        }
        let score = trending::score(hours.iter().map(|h| t - Duration::hours(*h)), t);
        expected.push((score, l.id.get(), l.profile.name.clone()));
    }
    expected.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    let q = ListingSearch { sort: SearchSort::Trending, ..Default::default() };
    let got = store.search_listings(&q, Default::default()).await.unwrap();
    let got: Vec<String> = got.items.iter().map(|s| s.name.clone()).collect();
    assert_eq!(got, expected.iter().map(|e| e.2.clone()).collect::<Vec<_>>());
    assert_eq!(got.last().map(String::as_str), Some("Feed 4"), "no votes ranks last");
});

on_every_store!(the_hourly_step_is_claimed_once_an_hour, |store| {
    let t = chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 11, 26, 9, 59, 0).unwrap();
    assert!(store.claim_hourly_step(t).await.unwrap());
    assert!(!store.claim_hourly_step(t).await.unwrap(), "a second instance the same minute");
    assert!(!store.claim_hourly_step(t - Duration::hours(3)).await.unwrap(), "a clock behind the claim");
    assert!(store.claim_hourly_step(t + Duration::minutes(1)).await.unwrap(), "the next clock hour");
    assert!(!store.claim_hourly_step(t + Duration::minutes(59)).await.unwrap());
    assert!(store.claim_hourly_step(t + Duration::days(1)).await.unwrap());
});

on_every_store!(views_written_together_count_as_one_by_one, |store| {
    use domain::engagement::View;
    let a = store.create_listing(listing("Viewed A", ListingStatus::Live, None)).await.unwrap();
    let b = store.create_listing(listing("Viewed B", ListingStatus::Live, None)).await.unwrap();
    let day = now();
    let view = |l: &domain::listing::Listing, k: &str, at| {
        View::record(l.id, "Mozilla/5.0 Firefox/140.0", k.to_owned(), at).unwrap()
    };
    assert!(store.record_view(&view(&a, "seen", day)).await.unwrap());
    assert_eq!(store.record_views(&[]).await.unwrap(), Vec::<bool>::new());
    let batch = [
        view(&a, "seen", day),                  // counted before this batch
        view(&a, "x", day),                     // new
        view(&b, "x", day),                     // new, another listing
        view(&a, "x", day),                     // repeated within the batch
        view(&a, "x", day + Duration::days(1)), // the next day
        view(&b, "y", day),                     // new
    ];
    assert_eq!(store.record_views(&batch).await.unwrap(), vec![false, true, true, false, true, true]);
    let views = |l: &domain::listing::Listing| {
        let id = l.id;
        async move { store.get_listing(id).await.unwrap().unwrap().views }
    };
    assert_eq!((views(&a).await, views(&b).await), (3, 2));
    // The same batch again counts nothing.
    assert_eq!(store.record_views(&batch).await.unwrap(), vec![false; batch.len()]);
    assert_eq!((views(&a).await, views(&b).await), (3, 2));
    // And a view of a batch is a view one by one.
    assert!(!store.record_view(&view(&b, "y", day)).await.unwrap());
});

// A listing's view total is kept apart from its row (migration 48): there from the listing's
// creation, raised by each counted view, read alike by the listing and its profile, and the order of
// the most viewed (most first, equal totals newest first, live listings only), with and without a
// search word.
on_every_store!(view_totals_follow_the_views_and_order_the_most_viewed, |store| {
    use domain::engagement::View;
    use domain::listing::SearchSort;
    use domain::paging::PageRequest;
    let view = |l: &domain::listing::Listing, who: usize| View {
        listing_id: l.id,
        day: now().date_naive(),
        viewer_key: format!("viewer {who}"),
    };
    let mut counted = Vec::new();
    for (k, views) in [3usize, 0, 5, 3, 1].into_iter().enumerate() {
        let l = store.create_listing(listing(&format!("Watched tool {k}"), ListingStatus::Live, None)).await.unwrap();
        assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().views, 0, "a new listing has no views");
        let batch: Vec<View> = (0..views).map(|who| view(&l, who)).collect();
        assert_eq!(store.record_views(&batch).await.unwrap(), vec![true; views]);
        counted.push((l, views as i64));
    }
    let hidden = store.create_listing(listing("Watched draft", ListingStatus::Draft, None)).await.unwrap();
    let many: Vec<View> = (0..9).map(|who| view(&hidden, who)).collect();
    assert_eq!(store.record_views(&many).await.unwrap(), vec![true; 9]);
    for (l, views) in &counted {
        assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().views, *views, "{}", l.profile.name);
        let (profile, _) = store.listing_with_details(&l.slug).await.unwrap().unwrap();
        assert_eq!(profile.views, *views, "the profile of {}", l.profile.name);
    }
    let mut want: Vec<(i64, i64, String)> =
        counted.iter().map(|(l, v)| (*v, l.id.get(), l.profile.name.clone())).collect();
    want.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let want: Vec<String> = want.into_iter().map(|(_, _, name)| name).collect();
    for q in [None, Some("watched")] {
        let mut s = crate::search(q);
        s.sort = SearchSort::MostViewed;
        let got = store.search_listings(&s, PageRequest::default()).await.unwrap();
        assert_eq!(crate::names(&got), want, "most viewed, q = {q:?}");
        assert_eq!(got.total, 5, "q = {q:?}");
    }
});

/// Each listing's views per day, from `listing_views` (listing, day, views), in key order.
async fn view_days(db: &sea_orm::DatabaseConnection) -> Vec<(i64, String, i64)> {
    use sea_orm::ConnectionTrait;
    let q = sea_orm::Statement::from_string(
        db.get_database_backend(),
        "SELECT listing_id AS l, CAST(day AS TEXT) AS d, views AS v FROM listing_views ORDER BY listing_id, day",
    );
    db.query_all_raw(q)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.try_get("", "l").unwrap(), r.try_get("", "d").unwrap(), r.try_get("", "v").unwrap()))
        .collect()
}

// A counted view writes its mark and its listing's total; the views per listing and day are the
// marks' count, written when the marks of a finished day are pruned (one row fewer a view).
on_both!(views_per_day_are_counted_from_the_marks_when_they_are_pruned, |store| {
    use domain::engagement::View;
    use domain::ports::{ListingRepository, OwnListingRepository};
    let a = store.create_listing(listing("Day counted", ListingStatus::Live, None)).await.unwrap();
    let b = store.create_listing(listing("Also counted", ListingStatus::Live, None)).await.unwrap();
    let db = store.connection();
    let t = now();
    let view = |l: &domain::listing::Listing, k: &str, days: i64| {
        View::record(l.id, "Mozilla/5.0 Firefox/140.0", k.to_owned(), t + Duration::days(days)).unwrap()
    };
    let batch = [view(&a, "x", 0), view(&a, "y", 0), view(&b, "x", 0), view(&a, "x", 1), view(&a, "x", 2)];
    assert_eq!(store.record_views(&batch).await.unwrap(), vec![true; 5]);
    assert!(!store.record_view(&view(&a, "y", 0)).await.unwrap(), "a repeat");
    assert_eq!(view_days(db).await, vec![], "nothing per day until the marks go");
    let day = |d: i64| (t + Duration::days(d)).date_naive().to_string();
    // The first two days' marks go; the third's stay, and so does its count's place.
    assert_eq!(store.prune_view_marks((t + Duration::days(2)).date_naive()).await.unwrap(), 4);
    let want = vec![(a.id.get(), day(0), 2), (a.id.get(), day(1), 1), (b.id.get(), day(0), 1)];
    assert_eq!(view_days(db).await, want);
    assert_eq!(store.prune_view_marks((t + Duration::days(2)).date_naive()).await.unwrap(), 0);
    assert_eq!(view_days(db).await, want, "a prune with nothing to take counts nothing twice");
    assert!(store.record_view(&view(&b, "z", 2)).await.unwrap());
    assert_eq!(store.prune_view_marks((t + Duration::days(3)).date_naive()).await.unwrap(), 2);
    let mut all = want.clone();
    all.insert(2, (a.id.get(), day(2), 1));
    all.push((b.id.get(), day(2), 1));
    assert_eq!(view_days(db).await, all);
    assert_eq!(store.get_listing(a.id).await.unwrap().unwrap().views, 4, "the totals are as counted");
    assert_eq!(store.get_listing(b.id).await.unwrap().unwrap().views, 2);
});

// Before migration 49 every counted view raised its day's row at once. A day whose marks are still
// there has its views in both places at the upgrade: the migration drops the row, and the prune that
// takes the marks writes it once. Days pruned before keep their rows.
on_both!(the_upgrade_counts_each_marked_day_once, |store| {
    use domain::engagement::View;
    use domain::ports::{ListingRepository, OwnListingRepository};
    use sea_orm::ConnectionTrait;
    let l = store.create_listing(listing("Upgraded views", ListingStatus::Live, None)).await.unwrap();
    let db = store.connection();
    let t = now();
    let day = |d: i64| (t + Duration::days(d)).date_naive().to_string();
    let batch: Vec<View> = ["x", "y", "z"]
        .iter()
        .map(|k| View::record(l.id, "Mozilla/5.0 Firefox/140.0", (*k).to_owned(), t + Duration::days(1)).unwrap())
        .collect();
    assert_eq!(store.record_views(&batch).await.unwrap(), vec![true; 3]);
    crate::harness::roll_back_through(db, "m20261129_000049_view_days_from_marks").await;
    // Down counts the marked day from its marks, as the code before raised it view by view.
    assert_eq!(view_days(db).await, vec![(l.id.get(), day(1), 3)]);
    // And a day pruned long before, whose row is all that is left of it.
    let sql = format!("INSERT INTO listing_views (listing_id, day, views) VALUES ({}, '{}', 7)", l.id.get(), day(0));
    db.execute_unprepared(&sql).await.unwrap();
    adapters_storage::db::migrate(db).await.unwrap();
    assert_eq!(view_days(db).await, vec![(l.id.get(), day(0), 7)], "the marked day's row waits for its marks");
    assert_eq!(store.prune_view_marks((t + Duration::days(2)).date_naive()).await.unwrap(), 3);
    assert_eq!(view_days(db).await, vec![(l.id.get(), day(0), 7), (l.id.get(), day(1), 3)], "counted once");
    assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().views, 3);
});

on_every_store!(views_count_once_a_day_and_votes_carry_weight_and_address, |store| {
    use domain::engagement::View;
    let l = store.create_listing(listing("Viewed", ListingStatus::Live, None)).await.unwrap();
    let hidden = store.create_listing(listing("Not yet live", ListingStatus::Draft, None)).await.unwrap();
    assert_eq!(store.live_listing_id(&l.slug).await.unwrap(), Some(l.id));
    assert_eq!(store.live_listing_id(&hidden.slug).await.unwrap(), None, "only live listings");
    assert_eq!(store.live_listing_id(&domain::slug::Slug::parse("no-such-listing").unwrap()).await.unwrap(), None);
    let day = now();
    let view = |k: &str, at| View::record(l.id, "Mozilla/5.0 Firefox/140.0", k.to_owned(), at).unwrap();
    assert!(store.record_view(&view("a", day)).await.unwrap());
    assert!(!store.record_view(&view("a", day)).await.unwrap(), "a repeat view the same day");
    assert!(store.record_view(&view("b", day)).await.unwrap());
    assert!(store.record_view(&view("a", day + Duration::days(1))).await.unwrap(), "the next day counts again");
    assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().views, 3);
    // Forgetting the first day's viewers keeps the counts; that day is not looked at again.
    assert_eq!(store.prune_view_marks((day + Duration::days(1)).date_naive()).await.unwrap(), 2);
    assert_eq!(store.prune_view_marks((day + Duration::days(1)).date_naive()).await.unwrap(), 0);
    assert!(!store.record_view(&view("a", day + Duration::days(1))).await.unwrap(), "the second day's mark stays");
    assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().views, 3);

    // A half-weight vote adds half to trending; votes from one address are counted together.
    let t0 = now();
    let mut n = 0;
    for weight in [0.5, 1.0] {
        n += 1;
        let u = store.create_user(user(&format!("w{n}@voters.example")), now()).await.unwrap();
        let v = Vote { weight, address_key: Some("net-1".into()), ..Vote::plain(l.id, u.id, t0) };
        assert!(store.cast_vote(&v).await.unwrap().counted());
    }
    let score = |s: f64| (domain::listing::trending::score_of(s, t0) * 1e6).round() / 1e6;
    let after = store.get_listing(l.id).await.unwrap().unwrap();
    assert_eq!((after.votes, score(after.trending_score)), (2, 1.5));
});

on_every_store!(an_address_casts_its_cap_of_votes_a_day_even_sent_all_at_once, |store| {
    use chrono::{TimeZone, Utc};
    use domain::engagement::{Cast, policy::VOTES_PER_ADDRESS_PER_DAY as CAP};
    let l = store.create_listing(listing("Popular", ListingStatus::Live, None)).await.unwrap();
    let other = store.create_listing(listing("Other", ListingStatus::Live, None)).await.unwrap();
    let day = Utc.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap();
    let mut voters = Vec::new();
    for k in 0..CAP + 5 {
        voters.push(store.create_user(user(&format!("net{k}@voters.example")), now()).await.unwrap().id);
    }
    let from = |u, at| Vote { address_key: Some("net-1".into()), ..Vote::plain(l.id, u, at) };
    let casts = voters.iter().map(|u| {
        let (store, v) = (store.clone(), from(*u, day));
        tokio::spawn(async move { store.cast_vote(&v).await })
    });
    let outcomes: Vec<Cast> = futures::future::join_all(casts).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    let counted = outcomes.iter().filter(|c| **c == Cast::Counted).count() as i64;
    assert_eq!((counted, outcomes.len() as i64 - counted), (CAP, 5), "{outcomes:?}");
    assert!(outcomes.iter().all(|c| [Cast::Counted, Cast::AddressCap].contains(c)), "{outcomes:?}");
    assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().votes, CAP, "the refused ones count nowhere");
    // At the cap: a repeat vote is unchanged (not refused), a vote from another address is counted,
    // an unvote frees a place, and a vote at 23:59:59 is refused while one at midnight is the next
    // day's first.
    let (voted, refused) = {
        let mut ids = Vec::new();
        for u in &voters {
            ids.push((*u, store.engagement_of(l.id, *u).await.unwrap().0));
        }
        (ids.iter().find(|(_, v)| *v).unwrap().0, ids.iter().find(|(_, v)| !*v).unwrap().0)
    };
    assert_eq!(store.cast_vote(&from(voted, day)).await.unwrap(), Cast::Unchanged);
    let elsewhere = Vote { address_key: Some("net-2".into()), ..Vote::plain(other.id, voted, day) };
    assert_eq!(store.cast_vote(&elsewhere).await.unwrap(), Cast::Counted);
    // A vote taken back frees its place that day.
    let one = voters.iter().find(|u| **u != voted && **u != refused).unwrap();
    assert!(store.uncast_vote(l.id, voted).await.unwrap());
    let v = Vote { address_key: Some("net-1".into()), ..Vote::plain(other.id, *one, day) };
    assert_eq!(store.cast_vote(&v).await.unwrap(), Cast::Counted);
    let late = day.date_naive().and_hms_opt(23, 59, 59).unwrap().and_utc();
    assert_eq!(store.cast_vote(&from(refused, late)).await.unwrap(), Cast::AddressCap);
    let midnight = late + Duration::seconds(1);
    assert_eq!(store.cast_vote(&from(refused, midnight)).await.unwrap(), Cast::Counted);
});

on_both!(votes_cast_at_once_for_one_listing_all_count_in_its_rank, |store| {
    use domain::listing::trending;
    use domain::ports::{ListingRepository, OwnListingRepository, UserRepository};
    let l = store.create_listing(listing("Crowded", ListingStatus::Live, None)).await.unwrap();
    let t = now();
    let mut voters = Vec::new();
    for k in 0..12 {
        voters.push(store.create_user(user(&format!("crowd{k}@people.example")), now()).await.unwrap().id);
    }
    // Each vote reads the rank and writes it back: without the row lock on PostgreSQL, two at once
    // would each add to the same old rank and one vote would be lost from it.
    let casts = voters.iter().enumerate().map(|(k, u)| {
        let store = store.clone();
        let vote = Vote::plain(l.id, *u, t - Duration::hours(k as i64));
        tokio::spawn(async move { store.cast_vote(&vote).await.map(domain::engagement::Cast::counted) })
    });
    for r in futures::future::join_all(casts).await {
        assert!(r.unwrap().unwrap());
    }
    let got = store.get_listing(l.id).await.unwrap().unwrap();
    let want = trending::rank((0..12).map(|k| (t - Duration::hours(k), 1.0)));
    assert_eq!(got.votes, 12);
    assert!(close(got.trending_score, want), "{} != {want}", got.trending_score);
    // Then half of them taken back while as many new votes come in: an unvote counts the votes left
    // afresh, so without the row lock first it would write a rank that misses a vote committed meanwhile.
    let mut newcomers = Vec::new();
    for k in 0..6 {
        newcomers.push(store.create_user(user(&format!("late{k}@people.example")), now()).await.unwrap().id);
    }
    let mixed = (0..6).flat_map(|k| {
        let (a, b) = (store.clone(), store.clone());
        let (leaving, id) = (voters[k], l.id);
        let vote = Vote::plain(l.id, newcomers[k], t + Duration::hours(k as i64));
        [
            tokio::spawn(async move { a.uncast_vote(id, leaving).await }),
            tokio::spawn(async move { b.cast_vote(&vote).await.map(domain::engagement::Cast::counted) }),
        ]
    });
    for r in futures::future::join_all(mixed).await {
        assert!(r.unwrap().unwrap());
    }
    let got = store.get_listing(l.id).await.unwrap().unwrap();
    let left = (6..12).map(|k| (t - Duration::hours(k), 1.0)).chain((0..6).map(|k| (t + Duration::hours(k), 1.0)));
    let want = trending::rank(left);
    assert_eq!(got.votes, 12);
    assert!(close(got.trending_score, want), "after the mix: {} != {want}", got.trending_score);
});

on_both!(the_kept_sums_of_before_become_ranks, |store| {
    use domain::listing::trending;
    use domain::ports::{ListingRepository, OwnListingRepository, SettingsRepository, UserRepository};
    use sea_orm::{ConnectionTrait, Statement};
    let t = now();
    let plans: [&[i64]; 4] = [&[0, 5], &[200], &[24 * 400], &[]];
    let mut ids = Vec::new();
    let mut voters = Vec::new();
    for k in 0..2 {
        voters.push(store.create_user(user(&format!("old{k}@people.example")), now()).await.unwrap().id);
    }
    for (i, hours) in plans.iter().enumerate() {
        let l = store.create_listing(listing(&format!("Old {i}"), ListingStatus::Live, None)).await.unwrap();
        for (k, h) in hours.iter().enumerate() {
            assert!(store.cast_vote(&Vote::plain(l.id, voters[k], t - Duration::hours(*h))).await.unwrap().counted());
        }
        ids.push(l.id);
    }
    let ranks: Vec<f64> = futures::future::join_all(ids.iter().map(|id| async { rank_of(store, *id).await })).await;
    // Back to the schema before ranks, with each listing's sum kept as of a day ago, as it was then.
    let db = store.connection();
    crate::harness::roll_back_through(db, "m20261126_000040_trending_ranks").await;
    let as_of = t - Duration::hours(24);
    for (id, hours) in ids.iter().zip(plans) {
        let sum: f64 = hours.iter().map(|h| trending::weight_as_of(t - Duration::hours(*h), as_of)).sum();
        let sql = format!("UPDATE listings SET trending_score = {sum:?} WHERE id = {}", id.get());
        db.execute_raw(Statement::from_string(store.backend(), sql)).await.unwrap();
    }
    let stamp = as_of.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let sql = format!("UPDATE site_settings SET value = '{stamp}' WHERE key = '_trending_as_of'");
    assert_eq!(db.execute_raw(Statement::from_string(store.backend(), sql)).await.unwrap().rows_affected(), 1);
    db::migrate(db).await.unwrap();
    for (id, want) in ids.iter().zip(&ranks) {
        let got = rank_of(store, *id).await;
        assert!((got - want).abs() <= 1e-9 * want.max(1e-300), "{id:?}: {got} != {want}");
    }
    assert_eq!(ranks[3], 0.0);
    let settings = store.all_settings().await.unwrap();
    assert!(!settings.iter().any(|(k, _)| k == "_trending_as_of"), "the instant is gone with the sums");
    // A second run (the migration's record lost after its commit) leaves the ranks as they are.
    let sql = "DELETE FROM seaql_migrations WHERE version LIKE '%trending_ranks'";
    assert_eq!(db.execute_raw(Statement::from_string(store.backend(), sql)).await.unwrap().rows_affected(), 1);
    db::migrate(db).await.unwrap();
    for (id, want) in ids.iter().zip(&ranks) {
        assert!((rank_of(store, *id).await - want).abs() <= 1e-9 * want.max(1e-300));
    }
});

/// A batch of views writes no listing row (migration 48), so an edit holding a listing's row in its
/// transaction (a maker's save, an operator's update) does not hold up that listing's new viewers:
/// before, the batch locked the row and waited out the edit (or the 10 s lock wait).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_views_does_not_wait_for_an_edit_of_its_listing() {
    use domain::engagement::View;
    use domain::ports::{ListingRepository, OwnListingRepository};
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let Some(db) = crate::harness::postgres().await else { return };
    let store = db.store.clone();
    let l = store.create_listing(listing("Edited while viewed", ListingStatus::Live, None)).await.unwrap();
    let edit = store.connection().begin().await.unwrap();
    let sql = format!("UPDATE listings SET tagline = 'Held' WHERE id = {}", l.id.get());
    edit.execute_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql)).await.unwrap();
    let batch = [View { listing_id: l.id, day: now().date_naive(), viewer_key: "new".into() }];
    let counted = tokio::time::timeout(std::time::Duration::from_secs(5), store.record_views(&batch)).await;
    edit.rollback().await.unwrap();
    assert_eq!(counted.expect("the batch waited for the edit").unwrap(), vec![true]);
    assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().views, 1);
}

/// A batch of views and a suspension must not wait for each other. When a batch raised the totals in
/// the listing rows, PostgreSQL locked those rows in the order its plan visited them (a hash of the
/// batch), while a suspension locks an account's listings in ascending id: each could hold a row the
/// other waited for. The totals are kept apart now (migration 48) and a batch writes no listing row.
/// Here a transaction plays the suspension: it holds the lowest listing while the batch runs, then
/// asks for the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_views_takes_its_listings_in_the_order_a_suspension_does() {
    use domain::engagement::View;
    use domain::ports::{ListingRepository, OwnListingRepository};
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let Some(db) = crate::harness::postgres().await else { return };
    let store = db.store.clone();
    let mut ids = Vec::new();
    for k in 0..20 {
        ids.push(store.create_listing(listing(&format!("Viewed {k}"), ListingStatus::Live, None)).await.unwrap().id);
    }
    let day = now().date_naive();
    let views: Vec<View> = ids.iter().map(|id| View { listing_id: *id, day, viewer_key: "someone".into() }).collect();
    let lowest = ids.iter().map(|id| id.get()).min().unwrap();
    let lock = |sql: String| sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql);
    // Rows move as they are updated: the lowest listing's row now sits after the others, as rows do
    // in a table that has lived (at 100 000 listings the plan visits them in hash order anyway).
    let touch = format!("UPDATE listings SET follows_count = follows_count WHERE id = {lowest}");
    store.connection().execute_raw(lock(touch)).await.unwrap();
    let moderator = store.connection().begin().await.unwrap();
    moderator
        .execute_raw(lock(format!("SELECT id FROM listings WHERE id = {lowest} FOR NO KEY UPDATE")))
        .await
        .unwrap();
    let batch = {
        let store = store.clone();
        tokio::spawn(async move { store.record_views(&views).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let rest = lock(format!("SELECT id FROM listings WHERE id > {lowest} ORDER BY id FOR NO KEY UPDATE"));
    let rest = moderator.execute_raw(rest).await;
    assert!(rest.is_ok(), "the moderator's locks: {rest:?}");
    moderator.commit().await.unwrap();
    let counted = batch.await.unwrap();
    assert_eq!(counted.as_deref().ok(), Some(&[true; 20][..]), "the batch: {counted:?}");
    for id in &ids {
        assert_eq!(store.get_listing(*id).await.unwrap().unwrap().views, 1);
    }
}

on_every_store!(moves_into_a_week_at_once_stop_at_its_capacity, |store| {
    use domain::listing::{Lifecycle, Plan};
    use domain::ports::QueueMove;
    let week = LaunchWeek::of(now()).plus_weeks(7);
    let mut ids = Vec::new();
    for k in 0..12 {
        ids.push(store.create_listing(listing(&format!("Queued {k}"), ListingStatus::Draft, None)).await.unwrap().id);
    }
    let free = |w| {
        let mut to = Lifecycle::saved();
        to.choose_free(w).unwrap();
        to
    };
    let moves = ids.iter().map(|id| {
        let (store, id, to) = (store.clone(), *id, free(week));
        tokio::spawn(async move { store.move_lifecycle_within(id, &Lifecycle::saved(), &to, now(), 5).await })
    });
    let moved: Vec<QueueMove> =
        futures::future::join_all(moves).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    let n = moved.iter().filter(|m| **m == QueueMove::Moved).count();
    assert_eq!((n, moved.len() - n), (5, 7), "{moved:?}");
    assert!(moved.iter().all(|m| [QueueMove::Moved, QueueMove::WeekFull].contains(m)), "{moved:?}");
    assert_eq!(store.launches_in(Plan::Free, &[week]).await.unwrap(), vec![(week, 5)]);
    // Another week has its own room; a listing no longer in `from` is stale, not moved.
    let refused =
        *ids.iter().find(|id| moved[ids.iter().position(|x| x == *id).unwrap()] == QueueMove::WeekFull).unwrap();
    let next = week.plus_weeks(1);
    assert_eq!(
        store.move_lifecycle_within(refused, &Lifecycle::saved(), &free(next), now(), 5).await.unwrap(),
        QueueMove::Moved
    );
    assert_eq!(
        store.move_lifecycle_within(refused, &Lifecycle::saved(), &free(next), now(), 5).await.unwrap(),
        QueueMove::Stale
    );
});
