//! Idempotency-Key on a test operation whose effect is counted, on the in-memory store: 50
//! concurrent requests with one key make one effect; a retry replays the response; the key with another
//! body is refused; another caller's key is separate; a failed request leaves the key free.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use domain::auth::{Principal, Via};
use domain::ids::{ApiKeyId, UserId};
use domain::user::{Email, Scope};
use operations::{Caller, Ctx, Descriptor, Method, OpError, OpResult, Operation, ReadCache};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use utoipa::ToSchema;

static EFFECTS: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

fn effects(run: &str) -> usize {
    EFFECTS.lock().unwrap().as_ref().and_then(|m| m.get(run).copied()).unwrap_or(0)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    run: String,
    note: Option<String>,
    fail: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
struct Output {
    effect_number: usize,
    note: Option<String>,
}

struct CountEffect;

#[async_trait]
impl Operation for CountEffect {
    const ID: &'static str = "test_count_effect";
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/test";
    const SCOPE: Option<Scope> = Some(Scope::ListingsWrite);
    const READ_ONLY: bool = false;
    const IDEMPOTENCY_KEY: bool = true;
    const SUMMARY: &'static str = "test";
    const DESCRIPTION: &'static str = "test";
    type Input = Input;
    type Output = Output;

    async fn run(_: &Ctx, i: Input) -> OpResult<Output> {
        // Long enough that concurrent retries overlap the first request.
        tokio::time::sleep(Duration::from_millis(100)).await;
        if i.fail == Some(true) {
            return Err(OpError::NotFound("thing"));
        }
        let mut all = EFFECTS.lock().unwrap();
        let n = all.get_or_insert_with(HashMap::new).entry(i.run).or_default();
        *n += 1;
        Ok(Output { effect_number: *n, note: i.note })
    }
}

fn ctx(app: &operations::App, user: i64, key: Option<&str>) -> Ctx {
    Ctx {
        app: app.clone(),
        public_url: "http://test".into(),
        reads: ReadCache::disabled(),
        caller: Caller::Principal(Principal {
            user_id: UserId::from_db(user),
            email: Email::parse("ann@acme.example").unwrap(),
            is_admin: false,
            scopes: vec![Scope::ListingsWrite],
            via: Via::ApiKey(ApiKeyId::from_db(1)),
        }),
        rate_limit_per_minute: 600,
        idempotency_key: key.map(str::to_owned),
        audience: operations::oauth::Audience::Api,
    }
}

async fn scenario(run: &str) {
    let app = common::app(common::store(false).await, |_| {});
    let op = Descriptor::of::<CountEffect>();
    let body = serde_json::json!({"run": run, "note": "first"});

    let calls = (0..50).map(|_| {
        let (op, c, body) = (op.clone(), ctx(&app, 1, Some("key-1")), body.clone());
        tokio::spawn(async move { op.call_replayable(c, body).await })
    });
    let results: Vec<_> = futures::future::join_all(calls).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(effects(run), 1, "fifty concurrent requests, one effect");
    let (mut fresh, mut replays, mut in_flight) = (0, 0, 0);
    for r in &results {
        match r {
            Ok((v, false)) => {
                fresh += 1;
                assert_eq!(v["effect_number"], 1);
            }
            Ok((v, true)) => {
                replays += 1;
                assert_eq!(v["effect_number"], 1);
            }
            Err(OpError::IdempotencyInFlight) => in_flight += 1,
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(fresh, 1, "one ran; {replays} replayed, {in_flight} found it running");

    // A later retry gets the stored response; the key with another body is refused.
    let (v, replayed) = op.call_replayable(ctx(&app, 1, Some("key-1")), body.clone()).await.unwrap();
    assert!(replayed && v == serde_json::json!({"effect_number": 1, "note": "first"}));
    let other = serde_json::json!({"run": run, "note": "second"});
    assert!(matches!(op.call_replayable(ctx(&app, 1, Some("key-1")), other).await, Err(OpError::IdempotencyMismatch)));
    // Another caller with the same key, or no key at all: separate effects.
    op.call_replayable(ctx(&app, 2, Some("key-1")), body.clone()).await.unwrap();
    op.call_replayable(ctx(&app, 1, None), body.clone()).await.unwrap();
    assert_eq!(effects(run), 3);

    // A failed request leaves no record: the same key may be retried.
    let failing = serde_json::json!({"run": run, "fail": true});
    assert!(matches!(
        op.call_replayable(ctx(&app, 1, Some("key-2")), failing.clone()).await,
        Err(OpError::NotFound(_))
    ));
    assert!(matches!(op.call_replayable(ctx(&app, 1, Some("key-2")), failing).await, Err(OpError::NotFound(_))));
    // A malformed key is a 400 naming the header.
    let bad = op.call_replayable(ctx(&app, 1, Some("has space")), body).await;
    assert!(matches!(bad, Err(OpError::Invalid(ref e)) if e.0[0].field == "Idempotency-Key"), "{bad:?}");
}

/// On the in-memory store; the store's side of the guarantee (one `Started` among concurrent
/// claims of a key) is the port-contract suite's, on every store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_effect_per_key() {
    scenario("memory").await;
}
