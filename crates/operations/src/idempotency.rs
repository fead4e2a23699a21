//! Idempotency-Key, for the operations the spec lists: the first response to (caller, operation, key)
//! is stored with a fingerprint of the request and replayed for a retry; the same key with another
//! request is a 422; a retry while the first still runs is a 409. Records live in the database (so the
//! guarantee holds across instances and restarts), are kept at least 24 hours and pruned after that.
//!
//! The operation runs in its own task, so a client that hangs up mid-request cannot cancel it between
//! its effect and the stored response. A failed request leaves no record: the key may be retried.

use crate::{Ctx, Descriptor, OpError, OpResult};
use domain::ports::IdempotencyBegin;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU64, Ordering};

/// How long a record is kept (at least; pruning runs every few hundred keyed requests).
pub const RETENTION: chrono::Duration = chrono::Duration::hours(24);
/// A record still "running" after this long belongs to a request that died; a retry takes it over.
pub const STALE_AFTER: chrono::Duration = chrono::Duration::minutes(5);

static KEYED_CALLS: AtomicU64 = AtomicU64::new(0);

/// Checks the header's value: 1 to 255 visible ASCII characters (a UUID is the usual choice).
pub fn parse_key(raw: &str) -> Result<String, domain::ValidationError> {
    let ok = (1..=255).contains(&raw.len()) && raw.bytes().all(|b| (0x21..=0x7e).contains(&b));
    if ok {
        Ok(raw.to_owned())
    } else {
        Err(domain::ValidationError::new("Idempotency-Key", "must be 1 to 255 visible ASCII characters, e.g. a UUID"))
    }
}

fn fingerprint(input: &Value) -> String {
    // serde_json maps are ordered by key, so equal requests serialize equally.
    Sha256::digest(input.to_string().as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `op` at most once for (caller, operation, key); returns its response and whether it is a replay.
pub(crate) async fn run_once(op: &Descriptor, ctx: Ctx, key: String, input: Value) -> OpResult<(bytes::Bytes, bool)> {
    let key = parse_key(&key)?;
    let user = ctx.principal()?.user_id;
    let scope = format!("user:{user}:{}", op.id);
    let store = ctx.app.store.clone();
    let now = ctx.app.now();
    if KEYED_CALLS.fetch_add(1, Ordering::Relaxed).is_multiple_of(256)
        && let Err(e) = store.prune_idempotent(now - RETENTION).await
    {
        tracing::warn!(error = %e, "could not prune idempotency records");
    }
    match store.begin_idempotent(&scope, &key, &fingerprint(&input), now, STALE_AFTER).await? {
        IdempotencyBegin::Replay(body) => Ok((bytes::Bytes::from(body), true)),
        IdempotencyBegin::InFlight => Err(OpError::IdempotencyInFlight),
        IdempotencyBegin::Mismatch => Err(OpError::IdempotencyMismatch),
        IdempotencyBegin::Started => {
            let call = op.call_fn();
            let (app, reads) = (ctx.app.clone(), ctx.reads.clone());
            let out = crate::to_the_end(app, reads, async move {
                let out = call(ctx, input).await;
                let recorded = match &out {
                    Ok(v) => store.finish_idempotent(&scope, &key, &String::from_utf8_lossy(v)).await,
                    Err(_) => store.abandon_idempotent(&scope, &key).await,
                };
                if let Err(e) = recorded {
                    tracing::error!(error = %e, %scope, "could not record an idempotent request's outcome");
                }
                out
            })
            .await;
            out.map(|v| (v, false))
        }
    }
}
