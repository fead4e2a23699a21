//! Password guessing: against one account, against many from one address, and a storm of sign-ins
//! meant to starve everyone else; and the timing oracle of unknown emails.

use crate::helpers::{TestApp, cli, spawn_app_configured};
use crate::pages::{Browser, hidden};
use std::time::{Duration, Instant};

const PASSWORD: &str = "correct horse 9";

/// One sign-in from `address` (reported by the trusted proxy in front of the test service): the
/// status, the Retry-After header and the page.
async fn sign_in(app: &TestApp, email: &str, password: &str, address: &str) -> (u16, Option<u64>, String) {
    let mut b = Browser::new(app);
    let (_, form, _) = b.get("/signin").await;
    let csrf = hidden(&form, "csrf");
    let r = b
        .raw_post(
            "/signin",
            &[("email", email), ("password", password), ("csrf", &csrf)],
            &[("X-Forwarded-For", address)],
        )
        .await;
    let retry = r.headers().get("retry-after").and_then(|v| v.to_str().ok()?.parse().ok());
    (r.status().as_u16(), retry, r.text().await.unwrap())
}

async fn service() -> TestApp {
    let app = spawn_app_configured(test_support::sqlite(), false, |a| {
        a.trusted_proxies = vec![bootstrap::config::parse_cidr("127.0.0.0/8").unwrap()];
    })
    .await;
    app.wait_ready().await;
    let out = cli(&app.db.url, &["admin", "create-user", "--email", "ann@acme.example", "--password", PASSWORD]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    app
}

#[tokio::test]
async fn guessing_one_accounts_password_is_locked_out_after_five_failures_and_unknown_emails_look_the_same() {
    let app = service().await;
    for email in ["ann@acme.example", "nobody@acme.example"] {
        let mut seen = Vec::new();
        for n in 0..7 {
            let (status, retry, _) = sign_in(&app, email, &format!("wrong guess {n}"), "203.0.113.5").await;
            seen.push((status, retry.is_some()));
        }
        let want = [(401, false); 6].into_iter().chain([(429, true)]).collect::<Vec<_>>();
        assert_eq!(seen, want, "{email}");
    }
    // The right password is not even checked while the pair is locked …
    let (status, retry, page) = sign_in(&app, "ann@acme.example", PASSWORD, "203.0.113.5").await;
    assert_eq!(status, 429);
    assert!((1..=30).contains(&retry.unwrap()), "{retry:?}");
    assert!(page.contains("Too many failed sign-ins"), "{page}");
    // … while the owner, from an address that has not failed, signs in.
    assert_eq!(sign_in(&app, "ann@acme.example", PASSWORD, "198.51.100.20").await.0, 303);
}

#[tokio::test]
async fn an_account_attacked_from_many_addresses_still_lets_its_owner_in() {
    let app = service().await;
    for n in 0..domain::throttle::ACCOUNT_FAILURES_PER_HOUR {
        let (status, _, _) = sign_in(&app, "ann@acme.example", "wrong guess", &format!("203.0.113.{n}")).await;
        assert_eq!(status, 401, "attempt {n}");
    }
    // Every address that failed for the account now waits, even with its first free tries left …
    let (status, retry, _) = sign_in(&app, "ann@acme.example", "wrong guess", "203.0.113.0").await;
    assert_eq!((status, retry.is_some()), (429, true));
    // … and an address that never failed is still let in with the right password.
    assert_eq!(sign_in(&app, "ann@acme.example", PASSWORD, "192.0.2.44").await.0, 303);
}

#[tokio::test]
async fn one_address_spraying_many_accounts_waits_out_the_hour() {
    let app = service().await;
    for n in 0..domain::throttle::ADDRESS_FAILURES_PER_HOUR {
        let (status, _, _) = sign_in(&app, &format!("user{n}@acme.example"), "password1", "203.0.113.77").await;
        assert_eq!(status, 401, "attempt {n}");
    }
    let (status, retry, _) = sign_in(&app, "ann@acme.example", PASSWORD, "203.0.113.77").await;
    assert_eq!(status, 429, "even the right password for an account not tried yet");
    assert!(retry.unwrap() > 3000, "{retry:?}");
    // Headers do not buy a new address: only the trusted proxy's report counts (rightmost entry).
    let (status, _, _) = sign_in(&app, "ann@acme.example", PASSWORD, "192.0.2.1, 203.0.113.77").await;
    assert_eq!(status, 429);
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::test]
async fn an_unknown_email_takes_as_long_to_refuse_as_a_known_one() {
    let app = service().await;
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for n in 0..5 {
        // A fresh address each time, so no attempt is refused by the throttle before its check.
        let t = Instant::now();
        assert_eq!(sign_in(&app, "ann@acme.example", "wrong guess", &format!("198.51.100.{n}")).await.0, 401);
        known.push(t.elapsed());
        let t = Instant::now();
        assert_eq!(sign_in(&app, "nobody@acme.example", "wrong guess", &format!("192.0.2.{n}")).await.0, 401);
        unknown.push(t.elapsed());
    }
    let (k, u) = (median(known), median(unknown));
    // Both pay one argon2id check (19 MiB, 2 passes); before the decoy an unknown email took no check.
    assert!(u * 2 > k, "unknown {u:?} vs known {k:?}");
}

#[tokio::test]
async fn a_storm_of_sign_ins_does_not_hold_up_other_requests() {
    let app = service().await;
    let storm: Vec<_> = (0..24)
        .map(|n| {
            let app = &app;
            async move { sign_in(app, &format!("storm{n}@acme.example"), "password1", "203.0.113.99").await.0 }
        })
        .collect();
    let probe = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let t = Instant::now();
        let r = app.get("/api/v1/products").await;
        assert_eq!(r.status(), 200);
        t.elapsed()
    };
    let started = Instant::now();
    let (statuses, waited) = tokio::join!(futures_util::future::join_all(storm), probe);
    let storm_took = started.elapsed();
    assert!(statuses.iter().all(|s| *s == 401), "{statuses:?}");
    // Password checks run on the blocking pool, one per core: the read does not queue behind them.
    assert!(waited * 3 < storm_took, "a read took {waited:?} during a storm of {storm_took:?}");
}

/// Wrong guesses sent at once (email, address), each from its own browser; their statuses, sorted.
async fn burst(app: &TestApp, tries: impl Iterator<Item = (String, String)>) -> Vec<u16> {
    let all = tries.map(|(email, address)| async move { sign_in(app, &email, "wrong guess", &address).await.0 });
    let mut statuses = futures_util::future::join_all(all).await;
    statuses.sort_unstable();
    statuses
}

#[tokio::test]
async fn guesses_sent_all_at_once_get_no_more_password_checks_than_guesses_sent_one_by_one() {
    use domain::throttle::{ADDRESS_FAILURES_PER_HOUR, FREE_FAILURES};
    let app = service().await;
    // One account from one address: the free failures and the one that locks, nothing more.
    let statuses = burst(&app, (0..20).map(|_| ("ann@acme.example".into(), "203.0.113.5".into()))).await;
    let checked = statuses.iter().filter(|s| **s == 401).count() as i64;
    assert_eq!(checked, FREE_FAILURES + 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| [401, 429].contains(s)), "{statuses:?}");
    // Many accounts from one address: the address's hourly failures, nothing more.
    let n = ADDRESS_FAILURES_PER_HOUR + 10;
    let statuses = burst(&app, (0..n).map(|i| (format!("user{i}@acme.example"), "203.0.113.77".into()))).await;
    let checked = statuses.iter().filter(|s| **s == 401).count() as i64;
    assert_eq!(checked, ADDRESS_FAILURES_PER_HOUR, "{statuses:?}");
    // The refused guesses were not counted as failures: the owner, from a fresh address, is let in,
    // and the burst's address is still refused even the right password.
    assert_eq!(sign_in(&app, "ann@acme.example", PASSWORD, "192.0.2.44").await.0, 303);
    assert_eq!(sign_in(&app, "ann@acme.example", PASSWORD, "203.0.113.77").await.0, 429);
}
