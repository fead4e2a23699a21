//! The read cache: results of public read-only operations.
//!
//! Public reads are the same for every caller, so a hot listing, search or board is computed once
//! instead of once per request. Concurrent misses for one key wait for a single computation (no
//! stampede). Only successes are cached. Entries are dropped when public data changes:
//! - a successful write on this instance empties this instance's cache at once (a maker sees their
//!   own change on the next read), and counts the change in the shared `public_changes` counter;
//! - every instance polls that counter each [`POLL`] and empties its cache when it moved, so another
//!   instance's change shows within about a second;
//! - keys carry the UTC date, so answers that depend on the day ("this week", "today") never outlive it;
//! - entries live at most the TTL (`LAUNCHDIR_READ_CACHE_SECS`) as a backstop for changes nobody counted.
//!
//! This is the only state an instance keeps for itself, and losing it changes nothing but speed.
//!
//! Hot entries are refreshed ahead of expiry: a hit on an entry older than half the TTL is answered
//! from the entry while one background task recomputes it, so a busy key never makes its callers wait
//! for a recomputation (no latency spike every TTL), and no answer is ever older than the TTL.

use crate::{OpError, OpResult};
use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Entries are whole responses, kept serialized (a hit is answered with the stored bytes: no copy of a
/// JSON tree, no second serialization) and weighed by their size: this bounds the cache at 128 MiB,
/// about 40 000 listing profiles.
const CAPACITY_BYTES: u64 = 128 * 1024 * 1024;

/// How often an instance reads the shared change counter: a change on another instance shows within
/// this plus one read (the promise is "within a second"); the read is one indexed row.
pub const POLL: Duration = Duration::from_millis(250);

#[derive(Clone)]
struct Entry {
    json: bytes::Bytes,
    born: Instant,
}

/// The task following the shared change counter ([`ReadCache::follow_changes`]); dropping this stops it.
#[derive(Debug)]
#[must_use = "the change follower stops when this is dropped"]
pub struct Following {
    /// Held for its drop, which aborts the task.
    _task: Option<crate::worker::AbortOnDrop>,
}

#[cfg(test)]
fn serialize(v: &serde_json::Value) -> OpResult<bytes::Bytes> {
    serde_json::to_vec(v)
        .map(bytes::Bytes::from)
        .map_err(|e| OpError::Repo(domain::ports::RepoError::Unexpected(Box::new(e))))
}

struct Shared {
    entries: moka::future::Cache<String, Entry>,
    /// Keys being refreshed in the background, so one refresh runs per key.
    refreshing: Mutex<HashSet<String>>,
    /// Bumped by `clear`: a computation that started before a write does not keep its older answer.
    generation: AtomicU64,
    /// The shared change counter as this instance last acted on it (-1: not read yet).
    seen: AtomicI64,
    /// Reads answered from the cache, and reads that had to compute (for the operator's metrics).
    hits: AtomicU64,
    misses: AtomicU64,
}

#[derive(Clone, Default)]
pub struct ReadCache {
    shared: Option<Arc<Shared>>,
    ttl: Duration,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCache").field("enabled", &self.shared.is_some()).field("ttl", &self.ttl).finish()
    }
}

impl ReadCache {
    /// A cache whose entries live at most `ttl`; a zero TTL turns caching off.
    pub fn new(ttl: Duration) -> Self {
        if ttl.is_zero() {
            return Self::disabled();
        }
        let entries = moka::future::Cache::builder()
            .weigher(|k: &String, e: &Entry| u32::try_from(k.len() + e.json.len()).unwrap_or(u32::MAX))
            .max_capacity(CAPACITY_BYTES)
            .time_to_live(ttl)
            .support_invalidation_closures()
            .build();
        let shared = Shared {
            entries,
            refreshing: Mutex::default(),
            generation: AtomicU64::new(0),
            seen: AtomicI64::new(-1),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        };
        Self { shared: Some(Arc::new(shared)), ttl }
    }

    pub fn disabled() -> Self {
        Self::default()
    }

    pub fn is_enabled(&self) -> bool {
        self.shared.is_some()
    }

    /// Reads answered from the cache and reads that computed, since start (both zero when disabled).
    pub fn hits_and_misses(&self) -> (u64, u64) {
        self.shared.as_ref().map_or((0, 0), |s| (s.hits.load(Ordering::Relaxed), s.misses.load(Ordering::Relaxed)))
    }

    /// The cached result for `key`, or the result of `compute` (stored when it succeeds), as a JSON value.
    #[cfg(test)]
    pub(crate) async fn get_or<F>(&self, key: String, compute: F) -> OpResult<serde_json::Value>
    where
        F: Future<Output = OpResult<serde_json::Value>> + Send + 'static,
    {
        let json = self.get_or_bytes(key, async move { serialize(&compute.await?) }).await?;
        serde_json::from_slice(&json).map_err(|e| OpError::Repo(domain::ports::RepoError::Unexpected(Box::new(e))))
    }

    /// The cached result for `key`, or the result of `compute` (stored when it succeeds), serialized:
    /// an operation's JSON, or a page rendered only from public reads (the same for every visitor),
    /// kept beside the reads it came from and emptied with them. `compute` is awaited here on a miss,
    /// or spawned as the background refresh of an ageing entry.
    pub async fn get_or_bytes<F>(&self, key: String, compute: F) -> OpResult<bytes::Bytes>
    where
        F: Future<Output = OpResult<bytes::Bytes>> + Send + 'static,
    {
        let Some(shared) = &self.shared else { return compute.await };
        let started = shared.generation.load(Ordering::SeqCst);
        if let Some(hit) = shared.entries.get(&key).await {
            shared.hits.fetch_add(1, Ordering::Relaxed);
            if hit.born.elapsed() > self.ttl / 2 && shared.start_refresh(&key) {
                let shared = shared.clone();
                tokio::spawn(async move {
                    let fresh = compute.await;
                    if let (Ok(json), true) = (fresh, shared.generation.load(Ordering::SeqCst) == started) {
                        shared.entries.insert(key.clone(), Entry { json, born: Instant::now() }).await;
                    }
                    shared.refreshing.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&key);
                });
            }
            return Ok(hit.json);
        }
        shared.misses.fetch_add(1, Ordering::Relaxed);
        let out = shared
            .entries
            .try_get_with(
                key.clone(),
                async move { Ok::<_, OpError>(Entry { json: compute.await?, born: Instant::now() }) },
            )
            .await
            .map(|e| e.json)
            .map_err(unshare);
        if shared.generation.load(Ordering::SeqCst) != started {
            // Public data changed while this was computed: the answer may predate the change, so it
            // goes to this caller (whose request came first) but is not kept.
            shared.entries.invalidate(&key).await;
        }
        out
    }

    /// Forgets what `change` touched: everything; for a vote, that listing's entries and the lists
    /// and pages it can move (see [`touched_by_engagement`]); for a follow, that listing's entries and
    /// the lists ranked by followers (see [`touched_by_follow`]).
    pub fn forget(&self, change: &Change) {
        let Some(s) = &self.shared else { return };
        let (slug, touched): (&String, fn(&str, &str) -> bool) = match change {
            Change::Everything => return self.clear(),
            Change::Engagement(slug) => (slug, touched_by_engagement),
            Change::Follow(slug) => (slug, touched_by_follow),
        };
        // Computations under way may have read the listing before the change: none is kept.
        s.generation.fetch_add(1, Ordering::SeqCst);
        let slug = slug.clone();
        if s.entries.invalidate_entries_if(move |k, _| touched(k, &slug)).is_err() {
            s.entries.invalidate_all();
        }
    }

    /// Forgets everything (after a write).
    pub fn clear(&self) {
        if let Some(s) = &self.shared {
            s.generation.fetch_add(1, Ordering::SeqCst);
            s.entries.invalidate_all();
        }
    }

    /// Records that this instance's own change moved the shared counter to `counter` (its cache was
    /// already cleared), so the poll does not clear it a second time. When another change came in
    /// between, the counter skipped a value and the poll still clears.
    pub(crate) fn saw_own_change(&self, counter: i64) {
        if let Some(s) = &self.shared {
            let _ = s.seen.compare_exchange(counter - 1, counter, Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// Follows the shared change counter: every `every`, reads it and empties this cache (and the
    /// store's own caches) when it moved. The task ends when the returned [`Following`] is dropped (a
    /// server drops it before its runtime shuts down, so no read of the counter meets a runtime that is
    /// going away), and within one period of the cache being dropped.
    pub fn follow_changes(&self, app: crate::App, every: Duration) -> Following {
        let Some(shared) = &self.shared else { return Following { _task: None } };
        let weak: Weak<Shared> = Arc::downgrade(shared);
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(shared) = weak.upgrade() else { return };
                match app.store.public_changes().await {
                    Ok(now) => {
                        let before = shared.seen.swap(now, Ordering::SeqCst);
                        if before != now && before != -1 {
                            // What the changes since the last look touched; everything when the store
                            // cannot tell (it forgot older scopes, or a scope was not written).
                            let changes = match app.store.public_changes_since(before, CHANGES_PER_LOOK).await {
                                Ok(rows) if rows.len() as i64 == now - before => {
                                    rows.iter().map(|(_, scope)| Change::from_scope(scope)).collect()
                                }
                                _ => vec![Change::Everything],
                            };
                            let cache = ReadCache { shared: Some(shared.clone()), ttl: Duration::ZERO };
                            if changes.contains(&Change::Everything) {
                                cache.clear();
                            } else {
                                changes.iter().for_each(|c| cache.forget(c));
                            }
                            app.store.forget_cached();
                            tracing::debug!(before, now, "public data changed elsewhere; touched reads dropped");
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "reading the public change counter failed"),
                }
            }
        });
        Following { _task: Some(crate::worker::AbortOnDrop(task)) }
    }
}

/// Changes read per look at the shared counter; more since the last look empties the whole cache.
const CHANGES_PER_LOOK: u64 = 256;

/// What a change to public data touched, as the read cache understands it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Anything: every cached read goes.
    Everything,
    /// A vote on the listing with this slug: its counts, and the lists ranked or shown with them.
    Engagement(String),
    /// A follow or unfollow of the listing with this slug: its follower count, shown on its own
    /// profile and page only, and the lists ranked by followers.
    Follow(String),
}

impl Change {
    /// As stored with the shared counter: `*`, `engagement:{slug}` or `follow:{slug}`. (An instance
    /// of a build before `follow:` reads it as unknown, so as everything: a rolling upgrade is safe.)
    pub fn scope(&self) -> String {
        match self {
            Self::Everything => "*".into(),
            Self::Engagement(slug) => format!("engagement:{slug}"),
            Self::Follow(slug) => format!("follow:{slug}"),
        }
    }

    /// The change a stored scope names; anything unknown is everything.
    pub fn from_scope(scope: &str) -> Self {
        if let Some(slug) = scope.strip_prefix("engagement:").filter(|s| !s.is_empty()) {
            return Self::Engagement(slug.to_owned());
        }
        match scope.strip_prefix("follow:") {
            Some(slug) if !slug.is_empty() => Self::Follow(slug.to_owned()),
            _ => Self::Everything,
        }
    }
}

/// Whether the cached read under `key` can show a vote or follow on `slug`. Keys are
/// `{date}\0{operation}\0{input}`, `{date}\0page\0{page and inputs}`, `{date}\0feed\0{path}` and
/// `logo\0{slug}`. Untouched: other listings' profiles, badges and pages, the category tree and site
/// counts (a vote moves no listing in or out), the blog, founders' directory, awards (decided weekly),
/// products and questions, feeds other than this week's launches, logos. Anything else — every list
/// ranked or shown with vote counts, and any key not recognised — is touched.
pub fn touched_by_engagement(key: &str, slug: &str) -> bool {
    let (first, kind, rest) = key_parts(key);
    if first == "logo" {
        return false;
    }
    if let Some(own) = own_entry(kind, rest, slug) {
        return own;
    }
    match kind {
        "list_categories"
        | "get_site_info"
        | "list_blog_posts"
        | "get_blog_post"
        | "list_awards"
        | "list_products"
        | "list_interview_questions"
        | "list_founders" => false,
        "page" => !matches!(rest.split(' ').next(), Some("categories" | "blog" | "post" | "awards")),
        "feed" => rest == "/feeds/launches.atom",
        _ => true,
    }
}

/// Whether the cached read under `key` can show a follow of `slug`: the listing's own profile, badges
/// and page (its follower count), and any list ranked by followers (`sort=most_followed` on a search,
/// the API's or the site's, or the `most-followed` launch feed). No other read shows follower counts
/// (a listing summary carries votes, not followers), so searches, boards and the home page stay.
pub fn touched_by_follow(key: &str, slug: &str) -> bool {
    if key.contains("most_followed") || key.contains("most-followed") {
        return true;
    }
    let (_, kind, rest) = key_parts(key);
    own_entry(kind, rest, slug).unwrap_or(false)
}

/// A key's date (or `logo`), kind and the rest: `{date}\0{kind}\0{rest}`.
fn key_parts(key: &str) -> (&str, &str, &str) {
    let mut parts = key.splitn(3, '\0');
    (parts.next().unwrap_or_default(), parts.next().unwrap_or_default(), parts.next().unwrap_or_default())
}

/// For an entry of one listing's own (its profile, badges or page), whether that listing is `slug`;
/// `None` for any other entry.
fn own_entry(kind: &str, rest: &str, slug: &str) -> Option<bool> {
    match kind {
        "get_listing" | "get_badges" => Some(rest.contains(&format!("\"slug\":\"{slug}\""))),
        "page" => rest.split_once(' ').filter(|(page, _)| *page == "listing").map(|(_, other)| other == slug),
        _ => None,
    }
}

impl Shared {
    /// Claims the background refresh of `key`; false when one is already running.
    fn start_refresh(&self, key: &str) -> bool {
        self.refreshing.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key.to_owned())
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
            OpError::Upstream { code, message } => OpError::Upstream { code, message: message.clone() },
            OpError::TooMany { code, message, retry_after_secs } => {
                OpError::TooMany { code, message: message.clone(), retry_after_secs: *retry_after_secs }
            }
            OpError::Repo(e) => OpError::Repo(e.copied()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
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

    /// Keys as the registry, the pages, the feeds and the logos write them.
    fn keys() -> Vec<(&'static str, bool)> {
        vec![
            ("2026-11-24\0get_listing\0{\"slug\":\"acme\"}", true),
            ("2026-11-24\0get_listing\0{\"slug\":\"acme-two\"}", false),
            ("2026-11-24\0get_badges\0{\"slug\":\"acme\"}", true),
            ("2026-11-24\0search_listings\0{\"q\":\"rockets\"}", true),
            ("2026-11-24\0get_leaderboard\0{\"board\":\"community-weekly\"}", true),
            ("2026-11-24\0list_launches\0{}", true),
            ("2026-11-24\0list_categories\0{}", false),
            ("2026-11-24\0get_blog_post\0{\"slug\":\"acme\"}", false),
            ("2026-11-24\0page\0listing acme", true),
            ("2026-11-24\0page\0listing zeta", false),
            ("2026-11-24\0page\0home", true),
            ("2026-11-24\0page\0board community-weekly 1", true),
            ("2026-11-24\0page\0categories", false),
            ("2026-11-24\0page\0post acme", false),
            ("2026-11-24\0feed\0/feeds/launches.atom", true),
            ("2026-11-24\0feed\0/listings/acme/updates.atom", false),
            ("logo\0acme", false),
            ("2026-11-24\0something_new\0{}", true),
        ]
    }

    #[test]
    fn a_vote_touches_its_listing_and_the_ranked_lists_only() {
        for (key, touched) in keys() {
            assert_eq!(touched_by_engagement(key, "acme"), touched, "{key:?}");
        }
        assert_eq!(Change::from_scope(&Change::Engagement("acme".into()).scope()), Change::Engagement("acme".into()));
        assert_eq!(Change::from_scope("*"), Change::Everything);
        assert_eq!(Change::from_scope("engagement:"), Change::Everything, "a scope without a slug is everything");
        assert_eq!(Change::from_scope("nonsense"), Change::Everything);
    }

    #[test]
    fn a_follow_touches_its_listing_and_the_lists_ranked_by_followers_only() {
        let follows = [
            ("2026-11-24\0get_listing\0{\"slug\":\"acme\"}", true),
            ("2026-11-24\0get_listing\0{\"slug\":\"acme-two\"}", false),
            ("2026-11-24\0get_badges\0{\"slug\":\"acme\"}", true),
            ("2026-11-24\0page\0listing acme", true),
            ("2026-11-24\0page\0listing acme-two", false),
            ("2026-11-24\0search_listings\0{\"q\":\"rockets\"}", false),
            ("2026-11-24\0search_listings\0{\"sort\":\"most_followed\"}", true),
            ("2026-11-24\0list_launches\0{\"section\":\"most-followed\"}", true),
            ("2026-11-24\0list_launches\0{\"section\":\"trending\"}", false),
            ("2026-11-24\0get_leaderboard\0{\"board\":\"community-weekly\"}", false),
            ("2026-11-24\0page\0search rockets\0\0most_followed\u{0}1", true),
            ("2026-11-24\0page\0search rockets\0\0votes\u{0}1", false),
            ("2026-11-24\0page\0home", false),
            ("2026-11-24\0feed\0/feeds/launches.atom", false),
            ("logo\0acme", false),
        ];
        for (key, touched) in follows {
            assert_eq!(touched_by_follow(key, "acme"), touched, "{key:?}");
        }
        assert_eq!(Change::from_scope(&Change::Follow("acme".into()).scope()), Change::Follow("acme".into()));
        assert_eq!(Change::from_scope("follow:"), Change::Everything, "a scope without a slug is everything");
    }

    #[tokio::test]
    async fn forgetting_a_follow_keeps_searches_and_boards() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let runs = Arc::new(AtomicUsize::new(0));
        let profile = "2026-11-24\0get_listing\0{\"slug\":\"acme\"}";
        let search = "2026-11-24\0search_listings\0{\"q\":\"rockets\"}";
        let by_followers = "2026-11-24\0search_listings\0{\"sort\":\"most_followed\"}";
        for key in [profile, search, by_followers] {
            cache.get_or(key.into(), counting(&runs)).await.unwrap();
        }
        cache.forget(&Change::Follow("acme".into()));
        for (key, touched) in [(profile, true), (search, false), (by_followers, true)] {
            let n = runs.load(Ordering::SeqCst);
            cache.get_or(key.into(), counting(&runs)).await.unwrap();
            assert_eq!(runs.load(Ordering::SeqCst) > n, touched, "{key:?} recomputed only when touched");
        }
    }

    #[tokio::test]
    async fn forgetting_an_engagement_keeps_every_untouched_entry() {
        let cache = ReadCache::new(Duration::from_secs(60));
        let runs = Arc::new(AtomicUsize::new(0));
        for (key, _) in keys() {
            cache.get_or(key.into(), counting(&runs)).await.unwrap();
        }
        let before = runs.load(Ordering::SeqCst);
        cache.forget(&Change::Engagement("acme".into()));
        for (key, touched) in keys() {
            let n = runs.load(Ordering::SeqCst);
            cache.get_or(key.into(), counting(&runs)).await.unwrap();
            assert_eq!(runs.load(Ordering::SeqCst) > n, touched, "{key:?} recomputed only when touched");
        }
        assert_eq!(runs.load(Ordering::SeqCst) - before, keys().iter().filter(|(_, t)| *t).count());
        cache.forget(&Change::Everything);
        let n = runs.load(Ordering::SeqCst);
        cache.get_or("logo\0acme".into(), counting(&runs)).await.unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), n + 1, "everything goes");
    }
}
