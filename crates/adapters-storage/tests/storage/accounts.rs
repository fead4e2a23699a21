//! Users and API keys on both databases.

use crate::on_every_store;
use chrono::{Duration, TimeZone, Utc};
use domain::ids::ApiKeyId;
use domain::ports::{NewUser, RepoError};
use domain::user::{Email, Scope};

pub(crate) fn user(email: &str) -> NewUser {
    NewUser {
        email: Email::parse(email).unwrap(),
        password_hash: "$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaA".into(),
        display_name: "Ann".into(),
        is_admin: false,
        verified: true,
    }
}

on_every_store!(users_are_unique_by_email_whatever_the_case, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("Ann@Acme.example"), now).await.unwrap();
    assert_eq!(ann.email.as_str(), "Ann@acme.example");
    let again = store.create_user(user("ann@ACME.example"), now).await;
    assert!(matches!(again, Err(RepoError::Conflict(_))), "{again:?}");
    let (found, hash) = store.user_by_email(&Email::parse("ANN@acme.example").unwrap()).await.unwrap().unwrap();
    assert_eq!((found.id, hash.unwrap().starts_with("$argon2id$")), (ann.id, true));
    assert!(store.user_by_email(&Email::parse("bob@acme.example").unwrap()).await.unwrap().is_none());
    assert_eq!(store.get_user(ann.id).await.unwrap().unwrap().email, ann.email);
});

on_every_store!(keys_created_all_at_once_stop_at_an_accounts_cap, |store| {
    use domain::auth::MAX_ACTIVE_API_KEYS as CAP;
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("ann@acme.example"), now).await.unwrap();
    let made = (0..CAP + 10).map(|n| {
        let store = store.clone();
        tokio::spawn(async move {
            let shown = format!("ldk_{n:08}");
            store.create_api_key(ann.id, "burst", &shown, &format!("{n:064}"), &[Scope::AccountRead], now).await
        })
    });
    let made: Vec<_> = futures::future::join_all(made).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    let keys: Vec<domain::auth::ApiKey> = made.into_iter().flatten().collect();
    assert_eq!(keys.len(), CAP, "each key counted the ones before it");
    assert_eq!(store.list_api_keys(ann.id).await.unwrap().len(), CAP);
    // A revoked key frees its place; the place is taken once.
    store.revoke_api_key(ann.id, keys[0].id, now).await.unwrap();
    let again = |shown: &'static str| store.create_api_key(ann.id, "again", shown, shown, &[Scope::AccountRead], now);
    assert!(again("ldk_AGAIN001").await.unwrap().is_some());
    assert!(again("ldk_AGAIN002").await.unwrap().is_none());
});

on_every_store!(api_keys_are_found_by_their_shown_part_and_revoked_by_their_owner_only, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let ann = store.create_user(user("ann@acme.example"), now).await.unwrap();
    let bob = store.create_user(user("bob@acme.example"), now).await.unwrap();
    let scopes = [Scope::AccountRead, Scope::ListingsWrite];
    let k1 = store.create_api_key(ann.id, "CI", "ldk_AAAAAAAA", &"a".repeat(64), &scopes, now).await.unwrap().unwrap();
    let later = now + Duration::minutes(5);
    let k2 = store
        .create_api_key(ann.id, "laptop", "ldk_BBBBBBBB", &"b".repeat(64), &scopes[..1], later)
        .await
        .unwrap()
        .unwrap();
    let dup = store.create_api_key(bob.id, "x", "ldk_AAAAAAAA", &"c".repeat(64), &scopes, now).await;
    assert!(matches!(dup, Err(RepoError::Conflict(_))), "shown parts are unique: {dup:?}");

    let (found, hash) = store.api_key_by_shown("ldk_AAAAAAAA").await.unwrap().unwrap();
    assert_eq!((found.id, found.scopes.clone(), hash), (k1.id, scopes.to_vec(), "a".repeat(64)));
    assert!(store.api_key_by_shown("ldk_CCCCCCCC").await.unwrap().is_none());
    let listed: Vec<_> = store.list_api_keys(ann.id).await.unwrap().into_iter().map(|k| k.name).collect();
    assert_eq!(listed, ["laptop", "CI"], "newest first");
    assert!(store.list_api_keys(bob.id).await.unwrap().is_empty());

    // Another user's key and a missing key give the same answer.
    assert!(matches!(store.revoke_api_key(bob.id, k1.id, later).await, Err(RepoError::NotFound)));
    assert!(matches!(store.revoke_api_key(ann.id, ApiKeyId::from_db(999_999), later).await, Err(RepoError::NotFound)));
    let revoked = store.revoke_api_key(ann.id, k1.id, later).await.unwrap();
    assert_eq!(revoked.revoked_at, Some(later));
    let twice = store.revoke_api_key(ann.id, k1.id, later + Duration::hours(1)).await.unwrap();
    assert_eq!(twice.revoked_at, Some(later), "revoking twice keeps the first time");
    assert!(store.api_key_by_shown("ldk_BBBBBBBB").await.unwrap().unwrap().0.revoked_at.is_none());

    // Use is recorded at most once a minute.
    store.touch_api_key(k2.id, later).await.unwrap();
    store.touch_api_key(k2.id, later + Duration::seconds(30)).await.unwrap();
    let seen = store.api_key_by_shown("ldk_BBBBBBBB").await.unwrap().unwrap().0.last_used_at;
    assert_eq!(seen, Some(later));
    store.touch_api_key(k2.id, later + Duration::seconds(90)).await.unwrap();
    let seen = store.api_key_by_shown("ldk_BBBBBBBB").await.unwrap().unwrap().0.last_used_at;
    assert_eq!(seen, Some(later + Duration::seconds(90)));
});

on_every_store!(idempotency_records_claim_replay_take_over_and_prune, |store| {
    use domain::ports::IdempotencyBegin as B;
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let stale = Duration::minutes(5);
    assert_eq!(store.begin_idempotent("user:1:op", "k", "f1", now, stale).await.unwrap(), B::Started);
    assert_eq!(store.begin_idempotent("user:1:op", "k", "f1", now, stale).await.unwrap(), B::InFlight);
    assert_eq!(store.begin_idempotent("user:1:op", "k", "f2", now, stale).await.unwrap(), B::Mismatch);
    // The first request died: after the stale period one retry takes the key over, once.
    let later = now + Duration::minutes(6);
    assert_eq!(store.begin_idempotent("user:1:op", "k", "f1", later, stale).await.unwrap(), B::Started);
    assert_eq!(store.begin_idempotent("user:1:op", "k", "f1", later, stale).await.unwrap(), B::InFlight);
    store.finish_idempotent("user:1:op", "k", r#"{"ok":true}"#).await.unwrap();
    let replay = store.begin_idempotent("user:1:op", "k", "f1", later, stale).await.unwrap();
    assert_eq!(replay, B::Replay(r#"{"ok":true}"#.into()));
    // Abandoned keys are free again; other scopes are separate.
    assert_eq!(store.begin_idempotent("user:2:op", "k", "f9", now, stale).await.unwrap(), B::Started);
    store.abandon_idempotent("user:2:op", "k").await.unwrap();
    assert_eq!(store.begin_idempotent("user:2:op", "k", "f8", now, stale).await.unwrap(), B::Started);
    // Pruning removes records created before the cut only.
    assert_eq!(store.prune_idempotent(now).await.unwrap(), 0);
    assert_eq!(store.prune_idempotent(now + Duration::hours(25)).await.unwrap(), 2);
    assert_eq!(store.begin_idempotent("user:1:op", "k", "f2", later, stale).await.unwrap(), B::Started);
});

on_every_store!(of_many_concurrent_claims_of_a_key_exactly_one_starts, |store| {
    use domain::ports::IdempotencyBegin as B;
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let claims = (0..50).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.begin_idempotent("user:1:op", "k", "f1", now, Duration::minutes(5)).await })
    });
    let answers: Vec<B> = futures::future::join_all(claims).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    assert_eq!(answers.iter().filter(|a| **a == B::Started).count(), 1, "{answers:?}");
    assert!(answers.iter().all(|a| matches!(a, B::Started | B::InFlight)), "{answers:?}");
});

on_every_store!(throttle_counters_count_every_bump_restart_after_their_window_and_lock, |store| {
    let t0 = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let key = "k".repeat(64);
    for n in 1..=3 {
        let c = store.bump_throttle(&key, t0 + Duration::seconds(n), t0 - Duration::hours(1)).await.unwrap();
        assert_eq!((c.count, c.since, c.locked_until), (n, t0 + Duration::seconds(1), None));
    }
    // Concurrent bumps all count (one statement each).
    let bumps = (0..10).map(|_| store.bump_throttle(&key, t0 + Duration::seconds(5), t0 - Duration::hours(1)));
    let counts: Vec<i64> = futures::future::join_all(bumps).await.into_iter().map(|c| c.unwrap().count).collect();
    assert_eq!(counts.iter().max(), Some(&13));
    let until = t0 + Duration::minutes(2);
    // Of locks taken at once, one wins; a lock still running is not taken again, an ended one is.
    let locks = (0..8).map(|_| store.lock_throttle(&key, t0, until));
    let took: Vec<bool> = futures::future::join_all(locks).await.into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(took.iter().filter(|t| **t).count(), 1, "{took:?}");
    assert!(!store.lock_throttle(&key, until - Duration::seconds(1), until + Duration::minutes(1)).await.unwrap());
    assert!(!store.lock_throttle("absent", t0, until).await.unwrap(), "no counter, no lock");
    let found = store.throttles(&[key.clone(), "absent".into()]).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].1.count, found[0].1.locked_until), (13, Some(until)));
    assert!(store.lock_throttle(&key, until, until + Duration::minutes(1)).await.unwrap(), "it ended at `until`");
    // A refused request gives back its count; one from an earlier window gives back nothing.
    let since = t0 + Duration::seconds(1);
    store.give_back_throttle(&key, since).await.unwrap();
    store.give_back_throttle(&key, since - Duration::seconds(1)).await.unwrap();
    assert_eq!(store.throttles(std::slice::from_ref(&key)).await.unwrap()[0].1.count, 12);
    // A bump once the window moved past the count's start begins again at 1.
    let later = t0 + Duration::hours(2);
    let c = store.bump_throttle(&key, later, later - Duration::hours(1)).await.unwrap();
    assert_eq!((c.count, c.since), (1, later));
    store.give_back_throttle(&key, since).await.unwrap();
    assert_eq!(store.throttles(std::slice::from_ref(&key)).await.unwrap()[0].1.count, 1, "the old window's");
    for _ in 0..2 {
        store.give_back_throttle(&key, later).await.unwrap();
    }
    assert_eq!(store.throttles(std::slice::from_ref(&key)).await.unwrap()[0].1.count, 0, "never below 0");
    store.bump_throttle("other", t0, t0).await.unwrap();
    assert_eq!(store.prune_throttles(t0 + Duration::minutes(1)).await.unwrap(), 1, "only the old, unlocked one");
    store.clear_throttles(std::slice::from_ref(&key)).await.unwrap();
    assert!(store.throttles(&[key]).await.unwrap().is_empty());
});

on_every_store!(an_address_is_verified_once_by_its_link_and_the_links_go, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let new = NewUser { verified: false, ..user("fresh@acme.example") };
    let u = store.create_user(new, now).await.unwrap();
    assert!(!u.email_verified());
    let day = now + Duration::days(1);
    store.save_email_verification(u.id, &"v".repeat(64), day).await.unwrap();
    store.save_email_verification(u.id, &"w".repeat(64), day).await.unwrap();
    assert_eq!(store.email_verification(&"v".repeat(64)).await.unwrap(), Some((u.id, day)));
    assert_eq!(store.email_verification("unknown").await.unwrap(), None);
    assert!(store.mark_email_verified(u.id, now).await.unwrap());
    assert!(!store.mark_email_verified(u.id, day).await.unwrap(), "verified once");
    assert_eq!(store.get_user(u.id).await.unwrap().unwrap().email_verified_at, Some(now));
    assert_eq!(store.email_verification(&"w".repeat(64)).await.unwrap(), None, "its links are gone");
    let operator = store.create_user(user("op@acme.example"), now).await.unwrap();
    assert!(operator.email_verified(), "an operator-made account is verified");
});

// A password-reset link sets the password once, before it expires, in one transaction: the account's
// links and sessions go; an account whose address was never verified is verified by it and loses the
// keys and grants whoever made it set up (someone who signed up with another person's address); a
// verified account keeps them.
on_every_store!(a_reset_link_sets_the_password_once_and_takes_an_unverified_account_over, |store| {
    use domain::oauth::RefreshGrant;
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let hour = now + Duration::hours(1);
    let squatted = store.create_user(NewUser { verified: false, ..user("victim@acme.example") }, now).await.unwrap();
    let owner = store.create_user(user("owner@acme.example"), now).await.unwrap();
    for (who, n) in [(squatted.id, 1), (owner.id, 2)] {
        let shown = format!("ldk_reset{n:03}");
        store.create_api_key(who, "key", &shown, &format!("{n:064}"), &[Scope::AccountRead], now).await.unwrap();
        store.create_session(who, &format!("session-{n}"), "csrf", now, hour).await.unwrap();
        let grant = RefreshGrant {
            token_hash: format!("refresh-{n}"),
            family: format!("family-{n}"),
            client_id: "ldc_app".into(),
            user: who,
            scopes: vec![Scope::AccountRead],
            resource: "https://l.example/mcp".into(),
            expires_at: now + Duration::days(30),
        };
        store.save_refresh(&grant, now).await.unwrap();
    }
    let (a, b, old) = ("a".repeat(64), "b".repeat(64), "o".repeat(64));
    store.save_password_reset(squatted.id, &old, now + Duration::minutes(1), now).await.unwrap();
    store.save_password_reset(squatted.id, &a, hour, now).await.unwrap();
    store.save_password_reset(owner.id, &b, hour, now).await.unwrap();
    assert_eq!(store.password_reset(&a, now).await.unwrap(), Some(squatted.id));
    assert_eq!(store.password_reset(&a, now).await.unwrap(), Some(squatted.id), "reading uses nothing");
    assert_eq!(store.password_reset(&a, hour).await.unwrap(), None, "expired at its hour");
    assert_eq!(store.password_reset("unknown", now).await.unwrap(), None);
    assert_eq!(store.reset_password(&a, "$new", hour).await.unwrap(), None, "an expired link sets nothing");
    assert_eq!(store.reset_password("unknown", "$new", now).await.unwrap(), None);

    let later = now + Duration::minutes(5);
    // A second link of the owner's, which the owner's reset must forget.
    store.save_password_reset(owner.id, &"c".repeat(64), hour, later).await.unwrap();
    let done = store.reset_password(&a, "$new-hash", later).await.unwrap().expect("the link works");
    assert_eq!((done.user, done.took_over, done.sessions), (squatted.id, true, 1));
    let (u, hash) = store.user_by_email(&squatted.email).await.unwrap().unwrap();
    assert_eq!((hash.as_deref(), u.email_verified_at), (Some("$new-hash"), Some(later)), "set and verified");
    assert_eq!(store.reset_password(&a, "$again", later).await.unwrap(), None, "used once");
    assert_eq!(store.password_reset(&old, now).await.unwrap(), None, "the account's other links went too");
    assert!(store.session("session-1", later).await.unwrap().is_none(), "its sessions ended");
    let keys = store.list_api_keys(squatted.id).await.unwrap();
    assert!(keys.iter().all(|k| k.revoked_at == Some(later)), "the maker's keys revoked: {keys:?}");
    assert!(store.grants_of(squatted.id, later).await.unwrap().is_empty(), "the maker's apps revoked");

    let done = store.reset_password(&b, "$owner-new", later).await.unwrap().expect("the owner's link works");
    assert_eq!((done.user, done.took_over, done.sessions), (owner.id, false, 1));
    assert_eq!(store.get_user(owner.id).await.unwrap().unwrap().email_verified_at, Some(now), "verified before");
    assert!(store.list_api_keys(owner.id).await.unwrap().iter().all(|k| k.revoked_at.is_none()), "keys kept");
    assert_eq!(store.grants_of(owner.id, later).await.unwrap().len(), 1, "apps kept");
    assert_eq!(store.password_reset(&"c".repeat(64), later).await.unwrap(), None, "a reset forgets every link");
});
