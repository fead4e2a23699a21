//! Moderation's use cases with no database: every credential of a suspended account is refused in
//! the same place (API key, session, OAuth access token, sign-in), and comes back on restore; the
//! refusals of hide, restore and suspend name what is wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use operations::OpError;
use operations::moderation::{self, Actor};
use operations::oauth::{self, Audience, AuthorizeParams, TokenForm};

const REDIRECT: &str = "http://127.0.0.1:33333/callback";
const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K9DcBXXLZxYfY6dWG7GDCrOf7I";

/// An access token for `user` through the whole authorization-code flow with PKCE.
async fn access_token(app: &operations::App, user: domain::ids::UserId) -> String {
    let reg = common::registration(REDIRECT);
    let client = oauth::register(app, &reg, "ip:192.0.2.1").await.map_err(|e| format!("{e:?}")).unwrap();
    let params = AuthorizeParams {
        response_type: Some("code".into()),
        client_id: client["client_id"].as_str().map(str::to_owned),
        redirect_uri: Some(REDIRECT.into()),
        code_challenge: Some("STn9BZZqMY3XQsnSyCSQS7IZKPa2aLRvoRhWoB0SpNw".into()),
        code_challenge_method: Some("S256".into()),
        state: Some("s".into()),
        scope: Some("account:read".into()),
        resource: Some(Audience::Mcp.url(&app.public_url)),
    };
    let req = oauth::check_authorize(app, &params).await.map_err(|e| format!("{e:?}")).unwrap();
    let back = oauth::approve(app, &req, user).await.unwrap();
    let code = back.split(['?', '&']).find_map(|p| p.strip_prefix("code=")).unwrap().to_owned();
    let form = TokenForm {
        grant_type: Some("authorization_code".into()),
        code: Some(code),
        redirect_uri: Some(REDIRECT.into()),
        client_id: params.client_id.clone(),
        code_verifier: Some(VERIFIER.into()),
        refresh_token: None,
        scope: None,
        resource: params.resource.clone(),
    };
    let token = oauth::token(app, &form).await.map_err(|e| format!("{e:?}")).unwrap();
    token["access_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn every_credential_of_a_suspended_account_is_refused_until_it_is_restored() {
    let store = common::store(true).await;
    let app = common::app(store.clone(), |_| {});
    let reads = operations::ReadCache::disabled();
    let user =
        operations::accounts::create_user(&app, "sock@puppets.example", "correct horse 1", "", false).await.unwrap();
    let (_, key) =
        operations::accounts::create_api_key(&app, user.id, "k", &[domain::user::Scope::AccountRead]).await.unwrap();
    let (session, _) = operations::accounts::start_session(&app, user.id).await.unwrap();
    let token = access_token(&app, user.id).await;
    let works = |app: operations::App, key: String, session: String, token: String| async move {
        (
            operations::accounts::authenticate_bearer(&app, key.as_str()).await.is_ok(),
            operations::accounts::session(&app, &session).await.unwrap().is_some(),
            oauth::authenticate_access_token(&app, &token, Audience::Mcp).await.is_ok(),
        )
    };
    assert_eq!(works(app.clone(), key.as_str().into(), session.clone(), token.clone()).await, (true, true, true));

    let (_, effect) =
        moderation::suspend_user(&app, &reads, &Actor::Cli, "SOCK@puppets.example", "votes for itself").await.unwrap();
    assert_eq!((effect.listings, effect.votes), (0, 0));
    assert_eq!(
        works(app.clone(), key.as_str().into(), session.clone(), token.clone()).await,
        (false, false, false),
        "key, session and the access token already issued are all refused at once"
    );
    match operations::accounts::sign_in(&app, "sock@puppets.example", "correct horse 1", "ip:192.0.2.1").await.unwrap()
    {
        operations::accounts::SignIn::Suspended(why) => assert_eq!(why, "votes for itself"),
        other => panic!("told why: {other:?}"),
    }
    let e = moderation::suspend_user(&app, &reads, &Actor::Cli, "sock@puppets.example", "again").await.unwrap_err();
    assert!(matches!(e, OpError::Conflict { .. }), "{e:?}");
    let mails = domain::ports::Outbox::outbox(store.as_ref(), Some("sock@puppets.example"), 5).await.unwrap();
    assert!(mails.iter().any(|m| m.subject.contains("suspended") && m.body.contains("votes for itself")), "{mails:?}");

    moderation::restore_user(&app, &reads, &Actor::Cli, "sock@puppets.example").await.unwrap();
    // The session ended for good (a suspension signs out everywhere); the key and the token work again.
    assert_eq!(works(app.clone(), key.as_str().into(), session, token).await, (true, false, true));
    let e = moderation::restore_user(&app, &reads, &Actor::Cli, "sock@puppets.example").await.unwrap_err();
    assert!(matches!(e, OpError::Conflict { .. }), "not suspended: {e:?}");
}

#[tokio::test]
async fn refusals_name_what_is_wrong() {
    let store = common::store(true).await;
    let app = common::app(store.clone(), |_| {});
    let reads = operations::ReadCache::disabled();
    let field = |e: OpError| match e {
        OpError::Invalid(errs) => errs.0[0].field.clone(),
        other => panic!("a 400, not {other:?}"),
    };
    assert_eq!(
        field(moderation::hide_listing(&app, &reads, &Actor::Cli, "Not A Slug!", "x").await.unwrap_err()),
        "slug"
    );
    let long = "x".repeat(501);
    assert_eq!(field(moderation::hide_listing(&app, &reads, &Actor::Cli, "acme", &long).await.unwrap_err()), "reason");
    assert!(matches!(
        moderation::hide_listing(&app, &reads, &Actor::Cli, "no-such-listing", "x").await.unwrap_err(),
        OpError::NotFound("listing")
    ));
    assert_eq!(
        field(moderation::suspend_user(&app, &reads, &Actor::Cli, "not an email", "x").await.unwrap_err()),
        "email"
    );
    assert!(matches!(
        moderation::suspend_user(&app, &reads, &Actor::Cli, "nobody@nowhere.example", "x").await.unwrap_err(),
        OpError::NotFound("account")
    ));
    assert_eq!(field(moderation::block_domain(&app, &Actor::Cli, "localhost", "x").await.unwrap_err()), "domain");
    assert!(matches!(
        moderation::unblock_domain(&app, &Actor::Cli, "never.example").await.unwrap_err(),
        OpError::NotFound(_)
    ));
    let admin =
        operations::accounts::create_user(&app, "root@site.example", "correct horse 1", "", true).await.unwrap();
    let e = moderation::suspend_user(&app, &reads, &Actor::Cli, admin.email.as_str(), "x").await.unwrap_err();
    assert!(matches!(e, OpError::Conflict { .. }), "an admin cannot be suspended: {e:?}");
    assert!(moderation::audit_log(&app, 10).await.unwrap().is_empty(), "nothing refused is audited");
}

#[tokio::test]
async fn a_person_reports_at_most_twenty_listings_a_day_and_only_public_ones() {
    use domain::listing::{Lifecycle, ListingProfile, ListingStatus, NewListing, Plan};
    let store = common::store(true).await;
    let app = common::app(store.clone(), |_| {});
    let rita =
        operations::accounts::create_user(&app, "rita@people.example", "correct horse 1", "", false).await.unwrap();
    let now = chrono::Utc::now();
    let live = Lifecycle::from_parts(ListingStatus::Live, Plan::Paid, None, Some(now));
    let mut slugs = Vec::new();
    for i in 0..=domain::moderation::REPORTS_PER_ACCOUNT_PER_DAY {
        let slug = domain::slug::Slug::parse(format!("listing-{i}")).unwrap();
        let profile =
            ListingProfile::named(format!("Listing {i}"), format!("https://l{i}.example/"), format!("l{i}.example"));
        let l = domain::ports::ListingRepository::create_listing(
            store.as_ref(),
            NewListing::plain(slug, profile, live, now),
        )
        .await
        .unwrap();
        slugs.push(l.slug.to_string());
    }
    let saved = domain::ports::ListingRepository::create_listing(
        store.as_ref(),
        NewListing::plain(
            domain::slug::Slug::parse("not-public".to_owned()).unwrap(),
            ListingProfile::named("Not Public", "https://np.example/", "np.example"),
            Lifecycle::saved(),
            now,
        ),
    )
    .await
    .unwrap();
    let e = moderation::report_listing(&app, rita.id, saved.slug.as_str(), "spam", "").await.unwrap_err();
    assert!(matches!(e, OpError::NotFound("listing")), "a listing nobody can see cannot be reported: {e:?}");
    let (last, first) = slugs.split_last().unwrap();
    for slug in first {
        moderation::report_listing(&app, rita.id, slug, "spam", "").await.unwrap();
    }
    match moderation::report_listing(&app, rita.id, last, "spam", "").await.unwrap_err() {
        OpError::TooMany { code, retry_after_secs, .. } => assert!(code == "report_quota" && retry_after_secs > 0),
        other => panic!("the 21st report of the day is a 429: {other:?}"),
    }
    let reports = moderation::reports(&app, true, 100).await.unwrap();
    assert_eq!(reports.len() as i64, domain::moderation::REPORTS_PER_ACCOUNT_PER_DAY, "twenty stored, not more");
}

#[tokio::test]
async fn a_draft_started_before_its_domain_was_blocked_does_not_become_a_listing() {
    use domain::draft::{Draft, DraftField, FieldValue, SiteUrl};
    let store = common::store(true).await;
    let app = common::app(store.clone(), |_| {});
    let maker =
        operations::accounts::create_user(&app, "ann@shop.example", "correct horse 1", "", false).await.unwrap();
    // Submitted (and checked) while the domain was fine, and drafted.
    let mut d = Draft::new(
        domain::ids::DraftId::new_random(),
        maker.id,
        SiteUrl::parse("url", "https://www.shop.z.example/").unwrap(),
        chrono::Utc::now(),
    );
    d.crawled().unwrap();
    d.drafted().unwrap();
    d.profile.set_by_user(DraftField::Name, FieldValue::Text("Z Shop".into())).unwrap();
    domain::ports::DraftRepository::create_draft(store.as_ref(), &d).await.unwrap();
    moderation::block_domain(&app, &Actor::Cli, "z.example", "spam").await.unwrap();

    let ctx = common::ctx_as(&app, &maker);
    let input = serde_json::json!({"id": d.id.to_string()});
    match common::call(&ctx, "submit_draft", input.clone()).await {
        Err(OpError::Invalid(errs)) => {
            assert_eq!(errs.0[0].field, "id");
            assert!(errs.0[0].problem.contains("blocked z.example"), "{:?}", errs.0[0]);
        }
        other => panic!("a 400 naming the draft, not {other:?}"),
    }
    assert_eq!(domain::ports::ListingRepository::max_listing_id(store.as_ref()).await.unwrap(), 0, "no listing");
    moderation::unblock_domain(&app, &Actor::Cli, "z.example").await.unwrap();
    let saved = common::call(&ctx, "submit_draft", input).await.unwrap();
    assert_eq!(saved["name"], "Z Shop");
}
