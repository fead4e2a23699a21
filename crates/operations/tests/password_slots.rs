//! A sign-up that finds every password slot taken. Alone in its test binary: the slots are the
//! process's (one per core), and this test holds all of them for 10 s, which would make any other
//! test's sign-in or account creation in the same process wait or be answered "busy" (`cargo test`
//! runs a binary's tests as threads of one process).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use operations::OpError;
use std::sync::Arc;
/// Password hashing that waits until the test opens its gate, then hashes nothing (a fixed string):
/// sign-ups that hold every password slot, and then many cheap ones.
#[derive(Debug)]
struct GatedHashing {
    inner: adapters_auth::OsSecrets,
    open: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    waiting: Arc<std::sync::atomic::AtomicUsize>,
}

impl domain::ports::Secrets for GatedHashing {
    fn new_api_key(&self) -> domain::auth::ApiKeyToken {
        self.inner.new_api_key()
    }
    fn hash_password(&self, _: &domain::auth::Password) -> String {
        self.waiting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (lock, opened) = &*self.open;
        let _open = opened.wait_while(lock.lock().unwrap(), |open| !*open).unwrap();
        "not-a-hash".into()
    }
    fn verify_password(&self, password: &str, hash: &str) -> bool {
        self.inner.verify_password(password, hash)
    }
    fn decoy_password_hash(&self) -> String {
        self.inner.decoy_password_hash()
    }
    fn hash_api_key(&self, key: &domain::auth::ApiKeyToken) -> String {
        self.inner.hash_api_key(key)
    }
    fn same_hash(&self, a: &str, b: &str) -> bool {
        self.inner.same_hash(a, b)
    }
    fn random_token(&self) -> String {
        self.inner.random_token()
    }
    fn hash_token(&self, token: &str) -> String {
        self.inner.hash_token(token)
    }
}

/// A sign-up answered "busy" (every password slot stayed taken for `PASSWORD_QUEUE_WAIT`) did nothing,
/// so it takes nothing from its network's hourly quota: the try the answer asks for is not refused
/// for it. Before, each "busy" answer spent one of the network's 20 sign-ups an hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_up_answered_busy_takes_nothing_from_the_quotas() {
    let store = common::store(true).await;
    let open = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let waiting = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let secrets =
        GatedHashing { inner: adapters_auth::OsSecrets::default(), open: open.clone(), waiting: waiting.clone() };
    let app = Arc::new(common::app(store, |p| p.secrets = Arc::new(secrets)));
    let url = "http://test";
    // One sign-up per password slot (one per core), each from its own network, held in its hash.
    let slots = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    let held: Vec<_> = (0..slots)
        .map(|i| {
            let app = app.clone();
            tokio::spawn(async move {
                operations::accounts::sign_up(
                    &app,
                    url,
                    &format!("held{i}@people.example"),
                    "correct horse 1",
                    &format!("ip:198.51.100.{i}"),
                )
                .await
            })
        })
        .collect();
    while waiting.load(std::sync::atomic::Ordering::SeqCst) < slots {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    // Waits out `PASSWORD_QUEUE_WAIT` (10 s) for a slot.
    let busy = operations::accounts::sign_up(&app, url, "late@people.example", "correct horse 1", "ip:192.0.2.7").await;
    assert!(matches!(&busy, Err(OpError::Conflict { code: "busy", .. })), "{busy:?}");
    *open.0.lock().unwrap() = true;
    open.1.notify_all();
    for h in held {
        h.await.unwrap().unwrap();
    }
    // The network still has all of its sign-ups for the hour, and no more.
    let cap = domain::throttle::mail::SIGNUPS_PER_NETWORK_PER_HOUR;
    for i in 0..cap {
        operations::accounts::sign_up(&app, url, &format!("p{i}@people.example"), "correct horse 1", "ip:192.0.2.7")
            .await
            .unwrap_or_else(|e| panic!("sign-up {} of {cap} after the busy one: {e:?}", i + 1));
    }
    let over = operations::accounts::sign_up(&app, url, "over@people.example", "correct horse 1", "ip:192.0.2.7").await;
    assert!(matches!(&over, Err(OpError::TooMany { code: "signup_quota", .. })), "{over:?}");
}
