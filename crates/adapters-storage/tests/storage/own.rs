//! Own listings on both databases: lifecycle compare-and-set, free-week counts, due listings, badge
//! checks, edits with versions, milestones up to their cap, votes into the week's tally, one award set
//! per week, and follows.

use crate::accounts::user;
use crate::{listing, now, on_every_store};
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
            assert!(store.cast_vote(&v).await.unwrap());
            assert!(!store.cast_vote(&v).await.unwrap(), "one vote per person and listing");
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

on_every_store!(trending_scores_decay_once_per_step_and_votes_count_as_of_it, |store| {
    let l = store.create_listing(listing("Trendy", ListingStatus::Live, None)).await.unwrap();
    let t0 = now();
    assert_eq!(store.trending_as_of().await.unwrap(), None);
    assert!(store.decay_trending(None, t0, 1.0).await.unwrap(), "the clock starts");
    assert!(!store.decay_trending(None, t0, 1.0).await.unwrap(), "once");
    assert_eq!(store.trending_as_of().await.unwrap(), Some(t0));
    // A vote cast 72 hours after the scores' instant weighs 2 as of that instant…
    let u = store.create_user(user("fan@people.example"), now()).await.unwrap();
    let cast = t0 + Duration::hours(72);
    assert!(store.cast_vote(&Vote::plain(l.id, u.id, cast)).await.unwrap());
    let score = |s: f64| (s * 1e6).round() / 1e6;
    assert_eq!(score(store.get_listing(l.id).await.unwrap().unwrap().trending_score), 2.0);
    // …so decaying the scores to the vote's own instant leaves it at exactly 1, and 72 hours later at ½.
    let f = domain::listing::trending::weight_as_of(t0, cast);
    assert!(store.decay_trending(Some(t0), cast, f).await.unwrap());
    assert!(!store.decay_trending(Some(t0), cast, f).await.unwrap(), "a second instance does not decay twice");
    assert_eq!(score(store.get_listing(l.id).await.unwrap().unwrap().trending_score), 1.0);
    let later = cast + Duration::hours(72);
    assert!(
        store.decay_trending(Some(cast), later, domain::listing::trending::weight_as_of(cast, later)).await.unwrap()
    );
    assert_eq!(score(store.get_listing(l.id).await.unwrap().unwrap().trending_score), 0.5);
    // Taking the vote back removes exactly what it still weighs, its total and its week's tally.
    assert_eq!(store.engagement_of(l.id, u.id).await.unwrap(), (true, false));
    assert!(store.uncast_vote(l.id, u.id).await.unwrap());
    assert!(!store.uncast_vote(l.id, u.id).await.unwrap(), "only once");
    let after = store.get_listing(l.id).await.unwrap().unwrap();
    assert_eq!((after.votes, score(after.trending_score)), (0, 0.0));
    assert_eq!(store.week_tally(LaunchWeek::of(cast)).await.unwrap().iter().map(|(_, n)| *n).sum::<i64>(), 0);
    assert_eq!(store.engagement_of(l.id, u.id).await.unwrap(), (false, false));
    // And the person may vote again.
    assert!(store.cast_vote(&Vote::plain(l.id, u.id, later)).await.unwrap());
    assert_eq!(store.get_listing(l.id).await.unwrap().unwrap().votes, 1);
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
    assert!(store.decay_trending(None, t0, 1.0).await.unwrap());
    let mut n = 0;
    for weight in [0.5, 1.0] {
        n += 1;
        let u = store.create_user(user(&format!("w{n}@voters.example")), now()).await.unwrap();
        let v = Vote { weight, address_key: Some("net-1".into()), ..Vote::plain(l.id, u.id, t0) };
        assert!(store.cast_vote(&v).await.unwrap());
    }
    let score = |s: f64| (s * 1e6).round() / 1e6;
    let after = store.get_listing(l.id).await.unwrap().unwrap();
    assert_eq!((after.votes, score(after.trending_score)), (2, 1.5));
    assert_eq!(store.votes_from_address_since("net-1", t0).await.unwrap(), 2);
    assert_eq!(store.votes_from_address_since("net-1", t0 + Duration::seconds(1)).await.unwrap(), 0);
    assert_eq!(store.votes_from_address_since("net-2", t0).await.unwrap(), 0);
});
