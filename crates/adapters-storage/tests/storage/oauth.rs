//! OAuth records on both databases: clients, single-use codes, refresh families with replay detection.

use crate::accounts::user;
use crate::on_every_store;
use chrono::{Duration, TimeZone, Utc};
use domain::oauth::{AuthCode, OAuthClient, Redeemed, RefreshGrant};
use domain::ports::RepoError;
use domain::user::Scope;

on_every_store!(oauth_codes_and_refresh_tokens_are_spent_once, |store| {
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
});

on_every_store!(a_person_lists_and_revokes_only_their_own_grants, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("grants@acme.example"), now).await.unwrap();
    let bob = store.create_user(user("bob-grants@acme.example"), now).await.unwrap();
    let grant = |hash: &str, family: &str, who, expires| RefreshGrant {
        token_hash: hash.into(),
        family: family.into(),
        client_id: format!("ldc_{family}"),
        user: who,
        scopes: vec![Scope::AccountRead, Scope::ListingsWrite],
        resource: "https://l.example/mcp".into(),
        expires_at: expires,
    };
    let month = now + Duration::days(30);
    store.save_refresh(&grant("a1", "fam-a", ann.id, month), now).await.unwrap();
    // fam-b rotated once: its first token used, the second current.
    store.save_refresh(&grant("b1", "fam-b", ann.id, month), now).await.unwrap();
    store.redeem_refresh("b1", now + Duration::hours(1)).await.unwrap();
    store.save_refresh(&grant("b2", "fam-b", ann.id, month), now + Duration::hours(1)).await.unwrap();
    store.save_refresh(&grant("c1", "fam-c", ann.id, now + Duration::minutes(1)), now).await.unwrap();
    store.save_refresh(&grant("d1", "fam-d", bob.id, month), now).await.unwrap();
    let later = now + Duration::hours(2);
    let mine = store.grants_of(ann.id, later).await.unwrap();
    let families: Vec<&str> = mine.iter().map(|g| g.family.as_str()).collect();
    assert_eq!(families, ["fam-a", "fam-b"], "one entry a family; the expired one is gone");
    let b = &mine[1];
    assert_eq!((b.client_id.as_str(), b.allowed_at, b.last_used_at), ("ldc_fam-b", now, now + Duration::hours(1)));
    assert_eq!(b.scopes, vec![Scope::AccountRead, Scope::ListingsWrite]);
    assert!(!store.revoke_grant(bob.id, "fam-a", later).await.unwrap(), "not Bob's");
    assert!(store.revoke_grant(ann.id, "fam-a", later).await.unwrap());
    assert!(!store.revoke_grant(ann.id, "fam-a", later).await.unwrap(), "gone already");
    assert_eq!(store.redeem_refresh("a1", later).await.unwrap(), Redeemed::Unknown);
    let left: Vec<String> = store.grants_of(ann.id, later).await.unwrap().into_iter().map(|g| g.family).collect();
    assert_eq!(left, ["fam-b"]);
    assert_eq!(store.grants_of(bob.id, later).await.unwrap().len(), 1);
});

on_every_store!(signing_out_everywhere_ends_only_that_persons_sessions, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("sessions@acme.example"), now).await.unwrap();
    let bob = store.create_user(user("bob-sessions@acme.example"), now).await.unwrap();
    let day = now + Duration::days(1);
    for (who, hash) in [(ann.id, "s1"), (ann.id, "s2"), (bob.id, "s3")] {
        store.create_session(who, hash, "csrf", now, day).await.unwrap();
    }
    assert_eq!(store.delete_sessions_of(ann.id).await.unwrap(), 2);
    assert!(store.session("s1", now).await.unwrap().is_none() && store.session("s2", now).await.unwrap().is_none());
    assert!(store.session("s3", now).await.unwrap().is_some(), "Bob stays signed in");
});

// A sign-in takes that person's expired sessions away with it (in the statement that also ends those
// past the most an account keeps); nobody else's, expired or not.
on_every_store!(a_sign_in_clears_that_person_s_expired_sessions, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("expired-sessions@acme.example"), now).await.unwrap();
    let bob = store.create_user(user("bob-expired@acme.example"), now).await.unwrap();
    let (hour, week) = (now + Duration::hours(1), now + Duration::days(7));
    store.create_session(ann.id, "ann-short", "csrf", now, hour).await.unwrap();
    store.create_session(ann.id, "ann-long", "csrf", now, week).await.unwrap();
    store.create_session(bob.id, "bob-short", "csrf", now, hour).await.unwrap();
    let later = now + Duration::hours(2);
    store.create_session(ann.id, "ann-new", "csrf", later, later + Duration::days(30)).await.unwrap();
    assert_eq!(store.delete_sessions_of(ann.id).await.unwrap(), 2, "the week's and the new one: the expired one went");
    assert_eq!(store.delete_sessions_of(bob.id).await.unwrap(), 1, "Bob's expired session waits for his own sign-in");
});

// A person keeps at most `MAX_SESSIONS_PER_ACCOUNT` browser sessions: a new sign-in past it ends the
// oldest. Before, every successful sign-in was a row kept for its 30 days, so one account signing in
// in a loop (600 a minute under the rate limit) grew the table without bound. Another person's
// sessions are not touched.
on_every_store!(a_person_keeps_a_bounded_number_of_sessions_the_oldest_ending_first, |store| {
    use domain::auth::MAX_SESSIONS_PER_ACCOUNT as MAX;
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("many-sessions@acme.example"), now).await.unwrap();
    let bob = store.create_user(user("one-session@acme.example"), now).await.unwrap();
    let month = now + Duration::days(30);
    store.create_session(bob.id, "bob", "csrf", now, month).await.unwrap();
    let extra = 5;
    for i in 0..MAX + extra {
        let at = now + Duration::seconds(i);
        store.create_session(ann.id, &format!("ann-{i:03}"), "csrf", at, month).await.unwrap();
    }
    let later = now + Duration::hours(1);
    for i in 0..MAX + extra {
        let live = store.session(&format!("ann-{i:03}"), later).await.unwrap().is_some();
        assert_eq!(live, i >= extra, "session {i} of {}", MAX + extra);
    }
    assert!(store.session("bob", later).await.unwrap().is_some(), "Bob stays signed in");
});

// Registration is open, so clients nobody ever allowed are forgotten once old enough: a client a code
// was issued to stays however old (even after its codes are long gone), a young unused one stays, an
// old unused one goes. Before, every registration was kept for ever.
on_every_store!(registered_clients_nobody_allowed_are_forgotten_once_old, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("prune@acme.example"), now).await.unwrap();
    let client = |id: &str, age: Duration| OAuthClient {
        client_id: id.into(),
        name: id.into(),
        redirect_uris: vec!["http://127.0.0.1/cb".into()],
        client_uri: None,
        created_at: now - age,
    };
    for c in [
        client("ldc_old_unused", Duration::days(8)),
        client("ldc_old_used", Duration::days(30)),
        client("ldc_young_unused", Duration::days(6)),
    ] {
        store.create_client(&c).await.unwrap();
    }
    let code = AuthCode {
        code_hash: "u".repeat(64),
        client_id: "ldc_old_used".into(),
        user: ann.id,
        redirect_uri: "http://127.0.0.1/cb".into(),
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        scopes: vec![Scope::AccountRead],
        resource: "https://l.example/mcp".into(),
        expires_at: now - Duration::days(29),
    };
    store.save_code(&code).await.unwrap();
    // Another code, much later, takes the first one away with the codes a day past their expiry.
    let later =
        AuthCode { code_hash: "v".repeat(64), client_id: "ldc_metadata_document".into(), expires_at: now, ..code };
    store.save_code(&later).await.unwrap();
    assert_eq!(store.redeem_code(&"u".repeat(64), now).await.unwrap(), Redeemed::Unknown, "the old code is gone");

    assert_eq!(store.prune_unused_clients(now - Duration::days(7)).await.unwrap(), 1);
    assert_eq!(store.client("ldc_old_unused").await.unwrap(), None);
    assert!(store.client("ldc_old_used").await.unwrap().is_some(), "allowed once: kept");
    assert!(store.client("ldc_young_unused").await.unwrap().is_some(), "young: kept");
    assert_eq!(store.prune_unused_clients(now - Duration::days(7)).await.unwrap(), 0);
});
