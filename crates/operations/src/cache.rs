//! The read cache: results of public read-only operations, kept for a few seconds.
//!
//! Public reads are the same for every caller, so a hot listing, search or board is computed once per
//! TTL instead of once per request. Concurrent misses for one key wait for a single computation (no
//! stampede when an entry expires under load). Only successes are cached. Any successful write
//! operation in this process empties the cache, so a maker sees their own change at once on the
//! instance that took it; other instances see it within the TTL. This is the only state an instance
//! keeps for itself, and losing it changes nothing but speed.
//!
//! Hot entries are refreshed ahead of expiry: a hit on an entry older than half the TTL is answered
//! from the entry while one background task recomputes it, so a busy key never makes its callers wait
//! for a recomputation (no latency spike every TTL), and no answer is ever older than the TTL.

use crate::{OpError, OpResult};
use domain::ports::RepoError;
use serde_json::Value;
use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Entries are whole responses, kept serialized (a hit is answered with the stored bytes: no copy of a
/// JSON tree, no second serialization) and weighed by their size: this bounds the cache at 128 MiB,
/// about 40 000 listing profiles.
const CAPACITY_BYTES: u64 = 128 * 1024 * 1024;

#[derive(Clone)]
struct Entry {
    json: bytes::Bytes,
    born: Instant,
}

fn serialize(v: &Value) -> OpResult<bytes::Bytes> {
    serde_json::to_vec(v).map(bytes::Bytes::from).map_err(|e| OpError::Repo(RepoError::Unexpected(Box::new(e))))
}

#[derive(Clone, Default)]
pub struct ReadCache {
    inner: Option<moka::future::Cache<String, Entry>>,
    ttl: Duration,
    /// Keys being refreshed in the background, so one refresh runs per key.
    refreshing: Arc<Mutex<HashSet<String>>>,
    /// Bumped by `clear`: a refresh that started before a write does not store its older answer.
    generation: Arc<AtomicU64>,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCache").field("enabled", &self.inner.is_some()).finish()
    }
}

impl ReadCache {
    /// A cache whose entries live `ttl`; a zero TTL turns caching off.
    pub fn new(ttl: Duration) -> Self {
        if ttl.is_zero() {
            return Self::disabled();
        }
        Self {
            inner: Some(
                moka::future::Cache::builder()
                    .weigher(|k: &String, e: &Entry| u32::try_from(k.len() + e.json.len()).unwrap_or(u32::MAX))
                    .max_capacity(CAPACITY_BYTES)
                    .time_to_live(ttl)
                    .build(),
            ),
            ttl,
            refreshing: Arc::default(),
            generation: Arc::default(),
        }
    }

    pub fn disabled() -> Self {
        Self::default()
    }

    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The cached result for `key`, or the result of `compute` (stored when it succeeds), as a JSON value.
    #[cfg(test)]
    pub(crate) async fn get_or<F>(&self, key: String, compute: F) -> OpResult<Value>
    where
        F: Future<Output = OpResult<Value>> + Send + 'static,
    {
        let json = self.get_or_json(key, compute).await?;
        serde_json::from_slice(&json).map_err(|e| OpError::Repo(RepoError::Unexpected(Box::new(e))))
    }

    /// The cached result for `key`, or the result of `compute` (stored when it succeeds), serialized.
    /// `compute` is awaited here on a miss, or spawned as the background refresh of an ageing entry.
    pub(crate) async fn get_or_json<F>(&self, key: String, compute: F) -> OpResult<bytes::Bytes>
    where
        F: Future<Output = OpResult<Value>> + Send + 'static,
    {
        let Some(cache) = &self.inner else { return serialize(&compute.await?) };
        if let Some(hit) = cache.get(&key).await {
            if hit.born.elapsed() > self.ttl / 2 && self.start_refresh(&key) {
                let (cache, refreshing, key) = (cache.clone(), self.refreshing.clone(), key);
                let (generation, started) = (self.generation.clone(), self.generation.load(Ordering::SeqCst));
                tokio::spawn(async move {
                    let fresh = compute.await.and_then(|v| serialize(&v));
                    if let (Ok(json), true) = (fresh, generation.load(Ordering::SeqCst) == started) {
                        cache.insert(key.clone(), Entry { json, born: Instant::now() }).await;
                    }
                    refreshing.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&key);
                });
            }
            return Ok(hit.json);
        }
        cache
            .try_get_with(key, async move {
                let v = compute.await?;
                Ok::<_, OpError>(Entry { json: serialize(&v)?, born: Instant::now() })
            })
            .await
            .map(|e| e.json)
            .map_err(unshare)
    }

    /// Claims the background refresh of `key`; false when one is already running.
    fn start_refresh(&self, key: &str) -> bool {
        self.refreshing.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key.to_owned())
    }

    /// Forgets everything (after a write).
    pub fn clear(&self) {
        if let Some(c) = &self.inner {
            self.generation.fetch_add(1, Ordering::SeqCst);
            c.invalidate_all();
        }
    }
}

/// The waiters of one computation share its error; each gets its own copy.
fn unshare(e: Arc<OpError>) -> OpError {
    match Arc::try_unwrap(e) {
        Ok(e) => e,
        Err(shared) => match shared.as_ref() {
            OpError::Invalid(v) => OpError::Invalid(v.clone()),
            OpError::NotFound(what) => OpError::NotFound(what),
            OpError::Unauthenticated => OpError::Unauthenticated,
            OpError::InvalidToken => OpError::InvalidToken,
            OpError::Forbidden(scope) => OpError::Forbidden(*scope),
            OpError::IdempotencyInFlight => OpError::IdempotencyInFlight,
            OpError::IdempotencyMismatch => OpError::IdempotencyMismatch,
            OpError::Conflict { code, message } => OpError::Conflict { code, message: message.clone() },
            OpError::Repo(RepoError::NotFound) => OpError::Repo(RepoError::NotFound),
            OpError::Repo(RepoError::Conflict(m)) => OpError::Repo(RepoError::Conflict(m.clone())),
            OpError::Repo(RepoError::Unexpected(e)) => OpError::Repo(RepoError::Unexpected(e.to_string().into())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn counting(runs: &Arc<AtomicUsize>) -> impl Future<Output = OpResult<Value>> + Send + 'static {
        let runs = runs.clone();
        async move { Ok(Value::from(runs.fetch_add(1, Ordering::SeqCst) + 1)) }
    }

    #[tokio::test]
    async fn hits_skip_the_computation_and_clear_forgets() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let runs = Arc::new(AtomicUsize::new(0));
        let compute = || counting(&runs);
        assert_eq!(cache.get_or("k".into(), compute()).await.unwrap(), Value::from(1));
        assert_eq!(cache.get_or("k".into(), compute()).await.unwrap(), Value::from(1));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        cache.clear();
        assert_eq!(cache.get_or("k".into(), compute()).await.unwrap(), Value::from(2));
    }

    #[tokio::test]
    async fn ageing_entries_are_answered_at_once_and_refreshed_behind() {
        let ttl = Duration::from_millis(400);
        let cache = ReadCache::new(ttl);
        let runs = Arc::new(AtomicUsize::new(0));
        assert_eq!(cache.get_or("k".into(), counting(&runs)).await.unwrap(), Value::from(1));
        tokio::time::sleep(ttl / 2 + Duration::from_millis(50)).await;
        // Past half the TTL: the old answer now, a refresh behind it.
        assert_eq!(cache.get_or("k".into(), counting(&runs)).await.unwrap(), Value::from(1));
        for _ in 0..50 {
            if runs.load(Ordering::SeqCst) == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(runs.load(Ordering::SeqCst), 2, "one background refresh");
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(cache.get_or("k".into(), counting(&runs)).await.unwrap(), Value::from(2));
        // Past the TTL with no hit in between: a plain miss, computed in line.
        tokio::time::sleep(ttl + Duration::from_millis(50)).await;
        assert_eq!(cache.get_or("k".into(), counting(&runs)).await.unwrap(), Value::from(3));
    }

    #[tokio::test]
    async fn errors_are_not_cached_and_disabled_always_computes() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let err = cache.get_or("k".into(), async { Err(OpError::NotFound("listing")) }).await;
        assert!(matches!(err, Err(OpError::NotFound("listing"))));
        let ok = cache.get_or("k".into(), async { Ok(Value::from(7)) }).await.unwrap();
        assert_eq!(ok, Value::from(7));

        let off = ReadCache::new(Duration::ZERO);
        assert!(!off.is_enabled());
        off.get_or("k".into(), async { Ok(Value::from(1)) }).await.unwrap();
        assert_eq!(off.get_or("k".into(), async { Ok(Value::from(2)) }).await.unwrap(), Value::from(2));
    }

    #[tokio::test]
    async fn concurrent_misses_compute_once() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let runs = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let (cache, runs) = (cache.clone(), runs.clone());
                tokio::spawn(async move {
                    cache
                        .get_or("k".into(), async move {
                            runs.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            Ok(Value::from("v"))
                        })
                        .await
                })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.unwrap().unwrap(), Value::from("v"));
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
