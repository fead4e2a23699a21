//! Representative responses as reviewed diffs: what a client reads back from a listing's profile, a
//! search, the category list, a maker's own listing and a refused input, run through the registry (the
//! path REST and MCP take) on the in-memory store at a fixed instant. A change to an output's shape or
//! wording shows up here as a snapshot to accept (INSTA_UPDATE=always) or fix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use chrono::{DateTime, TimeZone, Utc};
use domain::auth::{Principal, Via};
use domain::category::ListingCategories;
use domain::listing::{CountryCode, Lifecycle, ListingProfile, ListingStatus, NewListing, Plan};
use domain::ports::{CategoryRepository, FixedClock, ListingRepository};
use domain::slug::Slug;
use operations::{App, Caller, Ctx, OpError, ReadCache};
use serde_json::{Value, json};
use std::sync::Arc;

fn at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 24, 9, 0, 0).unwrap()
}

/// A directory of one live listing with a full profile, owned by `ann@orbit.example`.
async fn directory() -> (App, domain::user::User) {
    let store = common::store(true).await;
    let app = common::app(store.clone(), |p| p.clock = Arc::new(FixedClock::new(at())));
    let cats = store.all_categories().await.unwrap();
    let primary = cats.iter().find(|c| c.slug.as_str() == "developer-tools").map_or(cats[0].id, |c| c.id);
    let mut profile = ListingProfile::named("Orbit Labs", "https://orbit.example/", "orbit.example");
    profile.tagline = "Deploy previews for every pull request".into();
    profile.short_description = "Orbit Labs builds a preview of your app for each pull request.".into();
    profile.pricing_model = "Freemium".into();
    profile.pricing_summary = "Free: 1 project; Team: $29 per month".into();
    profile.country = Some(CountryCode::parse("DE").unwrap());
    profile.city = "Berlin".into();
    profile.features = vec!["Preview per pull request".into(), "Comments on the preview".into()];
    let lifecycle = Lifecycle::from_parts(ListingStatus::Live, Plan::Free, None, Some(at()));
    let mut new = NewListing::plain(Slug::parse("orbit-labs".to_owned()).unwrap(), profile, lifecycle, at());
    new.categories = Some(ListingCategories::from_db(primary, vec![]));
    let listing = store.create_listing(new).await.unwrap();
    let user = common::owner_of(&app, store.as_ref(), listing.id, "ann@orbit.example", at()).await;
    (app, user)
}

fn ctx(app: &App, caller: Caller) -> Ctx {
    Ctx {
        app: app.clone(),
        public_url: "https://launch.test".into(),
        reads: ReadCache::disabled(),
        caller,
        rate_limit_per_minute: 600,
        idempotency_key: None,
        audience: operations::oauth::Audience::Api,
    }
}

fn as_owner(app: &App, user: &domain::user::User) -> Ctx {
    ctx(
        app,
        Caller::Principal(Principal {
            user_id: user.id,
            email: user.email.clone(),
            is_admin: false,
            scopes: domain::user::Scope::ALL.to_vec(),
            via: Via::ApiKey(domain::ids::ApiKeyId::from_db(1)),
        }),
    )
}

async fn call(ctx: &Ctx, id: &str, input: Value) -> Result<Value, OpError> {
    let op = operations::registry().into_iter().find(|o| o.id == id).unwrap();
    op.call(ctx.clone(), input).await
}

/// Times the store sets from the machine's clock (a row's `updated_at`) are not part of the shape.
fn scrub(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if k == "updated_at" && x.is_string() {
                        *x = json!("[set by the store]");
                    } else {
                        walk(x);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

macro_rules! snapshot {
    ($name:literal, $value:expr) => {
        insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
            insta::assert_json_snapshot!($name, scrub($value));
        });
    };
}

#[tokio::test]
async fn a_listing_profile() {
    let (app, _) = directory().await;
    let got = call(&ctx(&app, Caller::Anonymous), "get_listing", json!({"slug": "orbit-labs"})).await.unwrap();
    assert_eq!(got["name"], "Orbit Labs");
    snapshot!("get_listing", got);
}

#[tokio::test]
async fn a_search() {
    let (app, _) = directory().await;
    let got =
        call(&ctx(&app, Caller::Anonymous), "search_listings", json!({"q": "preview", "per_page": 5})).await.unwrap();
    assert_eq!(got["pagination"]["total"], 1, "{got}");
    snapshot!("search_listings", got);
}

#[tokio::test]
async fn the_first_categories() {
    let (app, _) = directory().await;
    let mut got = call(&ctx(&app, Caller::Anonymous), "list_categories", json!({})).await.unwrap();
    let all = got["items"].as_array_mut().expect("a list of categories");
    assert!(all.len() >= 5, "the top-level reference categories: {}", all.len());
    all.truncate(3);
    snapshot!("list_categories", got);
}

#[tokio::test]
async fn a_makers_own_listing() {
    let (app, user) = directory().await;
    let mine = call(&as_owner(&app, &user), "list_my_listings", json!({})).await.unwrap();
    let id = mine["items"][0]["listing_id"].as_i64().expect("the claimed listing is the owner's");
    let got = call(&as_owner(&app, &user), "get_my_listing", json!({"listing_id": id})).await.unwrap();
    snapshot!("get_my_listing", got);
}

#[tokio::test]
async fn a_refused_input_names_each_field() {
    let (app, user) = directory().await;
    let input = json!({"listing_id": 1, "fields": {"tagline": "t".repeat(201), "country": "Germany"}});
    let err = call(&as_owner(&app, &user), "update_my_listing", input).await.unwrap_err();
    let OpError::Invalid(errors) = err else { panic!("expected a 400, got {err:?}") };
    let fields: Vec<Value> = errors.0.iter().map(|e| json!({"field": e.field, "problem": e.problem})).collect();
    snapshot!("update_my_listing_refused", json!(fields));
}
