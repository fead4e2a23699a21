//! A maker's "check my homepage now": only for a listing waiting for its badge, only its owner's,
//! at most a few looks an hour, and never one more queued look per click.

mod common;

use chrono::Utc;
use domain::listing::{Lifecycle, ListingProfile, ListingStatus, NewListing, Plan};
use domain::ports::{JobQueue, ListingRepository};
use domain::slug::Slug;
use operations::{Caller, Ctx, OpError, ReadCache};

fn ctx(app: &operations::App, user: &domain::user::User) -> Ctx {
    let principal = domain::auth::Principal {
        user_id: user.id,
        email: user.email.clone(),
        is_admin: false,
        scopes: domain::user::Scope::ALL.to_vec(),
        via: domain::auth::Via::ApiKey(domain::ids::ApiKeyId::from_db(1)),
    };
    Ctx {
        app: app.clone(),
        public_url: "http://test".into(),
        reads: ReadCache::disabled(),
        caller: Caller::Principal(principal),
        rate_limit_per_minute: 600,
        idempotency_key: None,
        audience: operations::oauth::Audience::Api,
    }
}

#[tokio::test]
async fn looking_for_the_badge_now_is_the_owners_capped_and_queues_nothing_more() {
    let store = common::store(true).await;
    let app = common::app(store.clone(), |_| {});
    let week = domain::week::LaunchWeek::of(Utc::now()).plus_weeks(7);
    // A homepage our fetcher refuses at once (a loopback address): the look is recorded as failed.
    let profile = ListingProfile::named("Orbit Labs", "http://127.0.0.1:9/", "orbit.example");
    let waiting = Lifecycle::from_parts(ListingStatus::AwaitingBadge, Plan::Free, Some(week), None);
    let slug = Slug::parse("orbit-labs".to_owned()).unwrap();
    let listing = store.create_listing(NewListing::plain(slug, profile, waiting, Utc::now())).await.unwrap();
    let ann = common::owner_of(&app, store.as_ref(), listing.id, "ann@orbit.example", Utc::now()).await;
    let bob = operations::accounts::create_user(&app, "bob@else.example", "correct horse 1", "", false).await.unwrap();
    let id = listing.id.get();

    let stranger = operations::own::check_badge_now(&ctx(&app, &bob), id).await;
    assert!(matches!(stranger, Err(OpError::NotFound(_))), "{stranger:?}");

    let backlog = store.job_backlog(Utc::now()).await.unwrap();
    let first = operations::own::check_badge_now(&ctx(&app, &ann), id).await.unwrap();
    let look = first.badge.and_then(|b| b.last_check).expect("the look is recorded");
    assert!(look.found.is_none() && look.detail.contains("could not read the homepage"), "{}", look.detail);
    for _ in 1..operations::own::BADGE_LOOKS_PER_HOUR {
        operations::own::check_badge_now(&ctx(&app, &ann), id).await.unwrap();
    }
    match operations::own::check_badge_now(&ctx(&app, &ann), id).await {
        Err(OpError::TooMany { code, retry_after_secs, .. }) => {
            assert_eq!(code, "badge_look_quota");
            assert!(retry_after_secs > 0 && retry_after_secs <= 3600, "{retry_after_secs}");
        }
        other => panic!("expected the hourly cap, got {other:?}"),
    }
    assert_eq!(store.job_backlog(Utc::now()).await.unwrap(), backlog, "no look queued per click");

    let live = Lifecycle::from_parts(ListingStatus::Live, Plan::Free, None, Some(Utc::now()));
    let profile = ListingProfile::named("Live One", "http://127.0.0.1:9/", "live.example");
    let slug = Slug::parse("live-one".to_owned()).unwrap();
    let other = store.create_listing(NewListing::plain(slug, profile, live, Utc::now())).await.unwrap();
    let cy = common::owner_of(&app, store.as_ref(), other.id, "cy@live.example", Utc::now()).await;
    match operations::own::check_badge_now(&ctx(&app, &cy), other.id.get()).await {
        Err(OpError::Conflict { code, .. }) => assert_eq!(code, "not_awaiting_badge"),
        other => panic!("expected 409, got {other:?}"),
    }
}
