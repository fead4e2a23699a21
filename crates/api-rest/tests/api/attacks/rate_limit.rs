//! Rate-limit evasion: invented API keys, forged `X-Forwarded-For`, an IPv6 client hopping through its
//! /64, and keys minted without end.

use crate::helpers::{TestApp, cli, spawn_app_configured};

/// Runs `launchdir-api admin <args>` off the test's runtime (the in-process server keeps running
/// meanwhile); its success, then standard output on success or standard error on failure.
async fn admin(app: &TestApp, args: &[&str]) -> (bool, String) {
    let mut all = vec!["admin"];
    all.extend_from_slice(args);
    let out = cli(&app.db.url, &all).await;
    let text = if out.status.success() { &out.stdout } else { &out.stderr };
    (out.status.success(), String::from_utf8_lossy(text).into_owned())
}

async fn categories(app: &TestApp, bearer: Option<&str>, forwarded: Option<&str>) -> u16 {
    let mut r = app.client.get(format!("{}/api/v1/categories", app.base));
    if let Some(k) = bearer {
        r = r.header("Authorization", format!("Bearer {k}"));
    }
    if let Some(f) = forwarded {
        r = r.header("X-Forwarded-For", f);
    }
    r.send().await.unwrap().status().as_u16()
}

/// A well-formed key nobody issued: the format and its checksum are public.
fn invented_key(n: u32) -> String {
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (n.wrapping_mul(2_654_435_761) >> (i % 4 * 8)) as u8 ^ (i as u8).wrapping_mul(91);
    }
    domain::auth::ApiKeyToken::from_random(&bytes).as_str().to_owned()
}

#[tokio::test]
async fn invented_api_keys_count_against_the_address() {
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.rate_limit = 30).await;
    app.wait_ready().await;
    let mut statuses = Vec::new();
    for n in 0..60 {
        statuses.push(categories(&app, Some(&invented_key(n)), None).await);
    }
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 30, "{statuses:?}");
    assert_eq!(refused, 30, "every key past the address's 30 is a 429: {statuses:?}");
}

#[tokio::test]
async fn a_real_key_counts_on_its_own_and_a_spent_address_does_not_stop_it() {
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.rate_limit = 10).await;
    app.wait_ready().await;
    let (ok, out) = admin(&app, &["create-user", "--email", "kim@acme.example", "--password", "correct horse 9"]).await;
    assert!(ok, "{out}");
    let (ok, out) = admin(&app, &["create-api-key", "--email", "kim@acme.example", "--scopes", "account:read"]).await;
    assert!(ok, "{out}");
    let key = out.lines().last().unwrap().trim().to_owned();
    // A key not yet verified is checked only while its address has quota, so a key first seen from
    // a spent address waits like everyone there (no lookups are given away past the limit).
    while categories(&app, None, None).await != 429 {}
    assert_eq!(categories(&app, Some(&key), None).await, 429);

    // On a fresh service the key, once verified, has a bucket of its own the address cannot spend.
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.rate_limit = 10).await;
    app.wait_ready().await;
    let (ok, out) = admin(&app, &["create-user", "--email", "kim@acme.example", "--password", "correct horse 9"]).await;
    assert!(ok, "{out}");
    let (_, out) = admin(&app, &["create-api-key", "--email", "kim@acme.example", "--scopes", "account:read"]).await;
    let key = out.lines().last().unwrap().trim().to_owned();
    assert_eq!(categories(&app, Some(&key), None).await, 200, "first use: verified");
    while categories(&app, None, None).await != 429 {}
    let mut with_key = Vec::new();
    for _ in 0..9 {
        with_key.push(categories(&app, Some(&key), None).await);
    }
    assert!(with_key.iter().all(|s| *s == 200), "the key's own bucket: {with_key:?}");
    assert_eq!(categories(&app, Some(&key), None).await, 429, "and it has a limit too");
}

#[tokio::test]
async fn forged_forwarded_for_from_an_untrusted_peer_changes_nothing() {
    let app = spawn_app_configured(test_support::sqlite(), false, |a| a.rate_limit = 5).await;
    app.wait_ready().await;
    let mut statuses = Vec::new();
    for n in 0..10 {
        statuses.push(categories(&app, None, Some(&format!("203.0.113.{n}"))).await);
    }
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429, 429, 429, 429, 429], "loopback is no proxy unless configured");
}

#[tokio::test]
async fn a_trusted_proxy_reports_the_client_and_ipv6_clients_share_their_64() {
    let app = spawn_app_configured(test_support::sqlite(), false, |a| {
        a.rate_limit = 3;
        a.trusted_proxies = vec![bootstrap::config::parse_cidr("127.0.0.0/8").unwrap()];
    })
    .await;
    app.wait_ready().await;
    for _ in 0..3 {
        assert_eq!(categories(&app, None, Some("203.0.113.9")).await, 200);
    }
    assert_eq!(categories(&app, None, Some("203.0.113.9")).await, 429);
    assert_eq!(categories(&app, None, Some("203.0.113.10")).await, 200, "another client behind the proxy");
    // A client cannot prepend its own choice: the proxy's (rightmost untrusted) entry counts.
    assert_eq!(categories(&app, None, Some("198.51.100.1, 203.0.113.9")).await, 429);
    // Every address of one IPv6 /64 is one client.
    let mut v6 = Vec::new();
    for n in 1..=4 {
        v6.push(categories(&app, None, Some(&format!("2001:db8:1:2::{n:x}"))).await);
    }
    assert_eq!(v6, [200, 200, 200, 429]);
    assert_eq!(categories(&app, None, Some("2001:db8:1:3::1")).await, 200, "the next /64 is someone else");
}

#[tokio::test]
async fn an_account_cannot_mint_keys_without_end() {
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let (ok, out) = admin(&app, &["create-user", "--email", "max@acme.example", "--password", "correct horse 9"]).await;
    assert!(ok, "{out}");
    let mint = || admin(&app, &["create-api-key", "--email", "max@acme.example", "--scopes", "account:read"]);
    for i in 0..domain::auth::MAX_ACTIVE_API_KEYS {
        let (ok, out) = mint().await;
        assert!(ok, "key {i}: {out}");
    }
    let (ok, err) = mint().await;
    assert!(!ok && err.contains("at most 20 active API keys"), "{err}");
}

#[tokio::test]
async fn keys_created_all_at_once_from_the_site_stop_at_the_cap() {
    // Each creation counted the account's keys, then made its own: thirty sent together all counted
    // none. The store now counts under a lock on the account.
    use crate::pages::{Browser, hidden, sign_up};
    let app = spawn_app_configured(test_support::sqlite(), false, |_| {}).await;
    app.wait_ready().await;
    let mut max = Browser::new(&app);
    sign_up(&mut max, "max@acme.example").await;
    let (_, page, _) = max.get("/account/api-keys").await;
    let csrf = hidden(&page, "csrf");
    let cap = domain::auth::MAX_ACTIVE_API_KEYS;
    let made = (0..cap + 10).map(|n| {
        let (mut b, csrf) = (max.clone(), csrf.clone());
        async move {
            let name = format!("burst {n}");
            b.post("/account/api-keys", &[("csrf", &csrf), ("name", &name), ("scope_account_read", "on")]).await.0
        }
    });
    let statuses = futures_util::future::join_all(made).await;
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), cap, "{statuses:?}");
    assert!(statuses.iter().all(|s| [201, 400].contains(s)), "{statuses:?}");
    let (_, page, _) = max.get("/account/api-keys").await;
    assert_eq!(page.matches("burst ").count(), cap, "the refused ones left no key");
}
