//! OAuth records on both databases: clients, single-use codes, refresh families with replay detection,
//! and the shared signing secret.

use crate::accounts::user;
use crate::on_both;
use chrono::{Duration, TimeZone, Utc};
use domain::oauth::{AuthCode, OAuthClient, Redeemed, RefreshGrant};
use domain::ports::{OAuthStore, RepoError, UserRepository};
use domain::user::Scope;

on_both!(oauth_codes_and_refresh_tokens_are_spent_once, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("oauth@acme.example"), now).await.unwrap();
    let client = OAuthClient {
        client_id: "ldc_test".into(),
        name: "Test".into(),
        redirect_uris: vec!["http://127.0.0.1/cb".into(), "https://a.example/cb".into()],
        client_uri: Some("https://a.example".into()),
        created_at: now,
    };
    store.create_client(&client).await.unwrap();
    assert!(matches!(store.create_client(&client).await, Err(RepoError::Conflict(_))));
    assert_eq!(store.client("ldc_test").await.unwrap(), Some(client));
    assert_eq!(store.client("ldc_other").await.unwrap(), None);

    let code = AuthCode {
        code_hash: "c".repeat(64),
        client_id: "ldc_test".into(),
        user: ann.id,
        redirect_uri: "http://127.0.0.1/cb".into(),
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        scopes: vec![Scope::AccountRead, Scope::OrdersWrite],
        resource: "https://l.example/mcp".into(),
        expires_at: now + Duration::minutes(5),
    };
    store.save_code(&code).await.unwrap();
    assert_eq!(store.redeem_code(&code.code_hash, now).await.unwrap(), Redeemed::Fresh(code.clone()));
    assert_eq!(store.redeem_code(&code.code_hash, now).await.unwrap(), Redeemed::Replayed(code.clone()));
    assert_eq!(store.redeem_code("nope", now).await.unwrap(), Redeemed::Unknown);

    let grant = |hash: &str| RefreshGrant {
        token_hash: hash.into(),
        family: code.code_hash.clone(),
        client_id: "ldc_test".into(),
        user: ann.id,
        scopes: vec![Scope::AccountRead],
        resource: "https://l.example/mcp".into(),
        expires_at: now + Duration::days(30),
    };
    store.save_refresh(&grant("r1"), now).await.unwrap();
    store.save_refresh(&grant("r2"), now).await.unwrap();
    assert_eq!(store.redeem_refresh("r1", now).await.unwrap(), Redeemed::Fresh(grant("r1")));
    assert_eq!(store.redeem_refresh("r1", now).await.unwrap(), Redeemed::Replayed(grant("r1")));
    assert_eq!(store.refresh_family("r2").await.unwrap(), Some(code.code_hash.clone()));
    store.revoke_family(&code.code_hash, now).await.unwrap();
    assert_eq!(store.redeem_refresh("r2", now).await.unwrap(), Redeemed::Unknown, "revoked with its family");

    let first = store.server_secret("k", "one", now).await.unwrap();
    let second = store.server_secret("k", "two", now).await.unwrap();
    assert_eq!((first.as_str(), second.as_str()), ("one", "one"), "the first stored secret is everyone's");
});
