//! What people do on the site's listing pages: vote (and take the vote back) and follow. Never an API
//! operation: votes come only from people signed in on the site. The rules are the domain's
//! (`engagement::Vote::cast`: live listings only, never one's own); storage keeps one vote per account
//! and listing, and counts the per-address cap inside the vote's transaction.

use crate::App;
use crate::{OpError, OpResult};
use domain::engagement::{Cast, View, Vote, VoteRefused, Voter};
use domain::ids::{ListingId, UserId};
use domain::listing::{Listing, ListingStatus};
use domain::slug::Slug;

/// The live listing at `slug`, or 404.
async fn live(app: &App, slug: &str) -> OpResult<Listing> {
    let slug = Slug::parse(slug).map_err(|_| OpError::NotFound("listing"))?;
    app.store
        .get_listing_by_slug(&slug)
        .await?
        .filter(|l| l.lifecycle.status() == ListingStatus::Live)
        .ok_or(OpError::NotFound("listing"))
}

/// Casts the person's vote from `address` (the client's network as the site sees it: an IPv4 address,
/// an IPv6 /64, as `api_http::middleware::address_bucket` writes it); false when they had voted already. 409 for their own listing, and past the per-address daily cap.
pub async fn vote(app: &App, user: UserId, slug: &str, address: Option<&str>) -> OpResult<bool> {
    let l = live(app, slug).await?;
    crate::accounts::require_verified(app, user, "voting").await?;
    let owners: Vec<UserId> = app.store.listing_owners(l.id).await?.into_iter().map(|(u, _)| u).collect();
    let account = app.store.get_user(user).await?.ok_or(OpError::Unauthenticated)?;
    let now = app.now();
    let address_key = match address {
        Some(a) => Some(crate::quotas::keyed(app, "vote-address", a).await?),
        None => None,
    };
    let voter = Voter { id: user, since: account.created_at, address_key };
    let refused = |e: VoteRefused| OpError::Conflict {
        code: match e {
            VoteRefused::OwnListing => "own_listing",
            VoteRefused::NotLive => "not_live",
            VoteRefused::AddressCap => "vote_cap",
        },
        message: e.to_string(),
    };
    let v = Vote::cast(l.id, l.lifecycle.status(), &owners, &voter, now).map_err(refused)?;
    match app.store.cast_vote(&v).await? {
        Cast::Counted => Ok(true),
        Cast::Unchanged => Ok(false),
        Cast::AddressCap => Err(refused(VoteRefused::AddressCap)),
    }
}

/// A visit to the page of live listing `id` (the site takes it from the profile the page shows, and
/// keeps it beside the cached page): counts the view once a day per
/// viewer and never a bot's, and says whether the signed-in person voted for and follows it (false,
/// false when signed out). The viewer is the account when signed in, else the client's `address` (its
/// network, as [`vote`] takes it) and browser (`user_agent`): a person who signs in later counts once more, a crawler never.
/// A view that cannot be counted is logged, not returned: the page still shows.
pub async fn visit(
    app: &App,
    id: ListingId,
    user: Option<UserId>,
    user_agent: &str,
    address: Option<&str>,
) -> OpResult<(bool, bool)> {
    let viewer = match (user, address) {
        (Some(u), _) => format!("user:{}", u.get()),
        (None, a) => format!("anon:{}:{user_agent}", a.unwrap_or_default()),
    };
    let counted = match View::record(id, user_agent, crate::quotas::keyed(app, "viewer", &viewer).await?, app.now()) {
        Some(v) => record_view(app, v).await.map(|_| ()),
        None => Ok(()),
    };
    if let Err(e) = counted {
        tracing::warn!(error = %e, "a view was not counted");
    }
    match user {
        Some(u) => Ok(app.store.engagement_of(id, u).await?),
        None => Ok((false, false)),
    }
}

/// Takes the person's vote back; false when there was none. At most
/// [`domain::engagement::policy::UNVOTES_PER_ACCOUNT_PER_DAY`] a day (429 beyond).
pub async fn unvote(app: &App, user: UserId, slug: &str) -> OpResult<bool> {
    let l = live(app, slug).await?;
    let cap = crate::quotas::Cap::account_day(
        "unvote_quota",
        "unvotes-day",
        user,
        domain::engagement::policy::UNVOTES_PER_ACCOUNT_PER_DAY,
        "votes this account took back today",
    );
    crate::quotas::take(app, &[cap]).await?;
    Ok(app.store.uncast_vote(l.id, user).await?)
}

/// Follows (or, with `on` false, stops following) the listing; false when nothing changed.
pub async fn follow(app: &App, user: UserId, slug: &str, on: bool) -> OpResult<bool> {
    let l = live(app, slug).await?;
    Ok(if on { app.store.follow(l.id, user, app.now()).await? } else { app.store.unfollow(l.id, user).await? })
}

/// The most views written in one transaction.
const VIEW_BATCH: usize = 256;
/// Views waiting for the writer; a page load beyond this waits for room.
const VIEW_QUEUE: usize = 4_096;

/// A view on its way to the writer, with its key in [`SeenViews`] and where its answer goes.
type PendingView = (View, u64, tokio::sync::oneshot::Sender<domain::ports::RepoResult<bool>>);

/// This instance's writer of page views: one task that writes the views of concurrent page loads
/// together (`record_views`, one transaction a batch). Every page load still waits until its view is
/// committed, so nothing is held in memory that a crash could lose; what changes is that 64 page
/// loads at once are one writer and a few transactions, not 64 writers queueing for SQLite's one write
/// lock (whose busy wait sleeps: a listing page's p99 was 96 ms with the cache on, issue 24). A view it
/// answered before ([`SeenViews`]: a returning viewer's, the same day) is answered without it.
#[derive(Debug, Clone)]
pub(crate) struct ViewWriter {
    queue: tokio::sync::mpsc::Sender<PendingView>,
    seen: std::sync::Arc<SeenViews>,
}

/// Keys in one generation of [`SeenViews`]; two generations are kept (at most 2 × 131 072 keys: a full
/// generation's table is 262 144 slots of 9 bytes, so about 4.7 MB in all).
const SEEN_GENERATION: usize = 1 << 17;

/// The views this instance's writer has answered (counted, or counted already), so that a returning
/// viewer's page load does not go to the writer again: it would only meet its mark and write nothing.
/// A cache in the strict sense: an entry only ever skips a write the database would refuse, and a view
/// it does not know (first seen, evicted, or seen by another instance) is written and decided by the
/// database as before. Keys are 64-bit hashes of (listing, day, viewer) under a key random to each
/// process: two different views share one with odds of about one in 10^14 against a full cache, and
/// then one view goes uncounted. Two generations of [`SEEN_GENERATION`] keys: when the newer fills, the
/// older is dropped.
#[derive(Debug, Default)]
struct SeenViews {
    hasher: std::hash::RandomState,
    generations: std::sync::Mutex<[std::collections::HashSet<u64>; 2]>,
}

impl SeenViews {
    fn key(&self, view: &View) -> u64 {
        std::hash::BuildHasher::hash_one(&self.hasher, (view.listing_id.get(), view.day, view.viewer_key.as_str()))
    }

    fn generations(&self) -> std::sync::MutexGuard<'_, [std::collections::HashSet<u64>; 2]> {
        // Nothing panics while holding it; a poisoned lock's sets are still whole.
        self.generations.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn contains(&self, key: u64) -> bool {
        let g = self.generations();
        g[0].contains(&key) || g[1].contains(&key)
    }

    fn insert_all(&self, keys: impl IntoIterator<Item = u64>) {
        let mut g = self.generations();
        for key in keys {
            if g[0].len() >= SEEN_GENERATION {
                g[1] = std::mem::take(&mut g[0]);
            }
            g[0].insert(key);
        }
    }
}

impl ViewWriter {
    fn start(store: std::sync::Arc<dyn domain::ports::Store>) -> Self {
        let (queue, mut pending) = tokio::sync::mpsc::channel::<PendingView>(VIEW_QUEUE);
        let seen = std::sync::Arc::new(SeenViews::default());
        let known = seen.clone();
        tokio::spawn(async move {
            let mut batch = Vec::with_capacity(VIEW_BATCH);
            while pending.recv_many(&mut batch, VIEW_BATCH).await > 0 {
                let views: Vec<View> = batch.iter().map(|(v, _, _)| v.clone()).collect();
                let answers: Vec<domain::ports::RepoResult<bool>> = match store.record_views(&views).await {
                    Ok(counted) if counted.len() == views.len() => counted.into_iter().map(Ok).collect(),
                    // A batch that failed (a lock timeout, a deadlock between instances) is written
                    // again one view at a time, so one bad view cannot lose the others.
                    other => {
                        if let Err(e) = other {
                            tracing::warn!(error = %e, views = views.len(), "a batch of views failed; writing them one by one");
                        }
                        let mut each = Vec::with_capacity(views.len());
                        for v in &views {
                            each.push(store.record_view(v).await);
                        }
                        each
                    }
                };
                // Written or already there: either way the database has its mark now.
                known.insert_all(batch.iter().zip(&answers).filter(|(_, a)| a.is_ok()).map(|((_, key, _), _)| *key));
                for ((_, _, answer), counted) in batch.drain(..).zip(answers) {
                    let _ = answer.send(counted);
                }
            }
        });
        Self { queue, seen }
    }
}

/// Counts a view through this instance's [`ViewWriter`] (started on first use), waiting until it is
/// written; straight to the store if the writer is gone (the runtime shutting down). A view the writer
/// answered before (a returning viewer, the same day) is answered "not counted" without it.
async fn record_view(app: &App, view: View) -> domain::ports::RepoResult<bool> {
    let writer = app.views.get_or_init(|| ViewWriter::start(app.store.clone()));
    let key = writer.seen.key(&view);
    if writer.seen.contains(key) {
        return Ok(false);
    }
    let (answer, answered) = tokio::sync::oneshot::channel();
    match writer.queue.send((view, key, answer)).await {
        Ok(()) => match answered.await {
            Ok(counted) => counted,
            Err(_) => Err(domain::ports::RepoError::Unexpected("the view writer stopped".into())),
        },
        Err(tokio::sync::mpsc::error::SendError((view, _, _))) => app.store.record_view(&view).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(listing: i64, viewer: &str) -> View {
        View {
            listing_id: ListingId::parse(listing).unwrap(),
            day: chrono::NaiveDate::from_ymd_opt(2026, 11, 28).unwrap(),
            viewer_key: viewer.to_owned(),
        }
    }

    /// The set of answered views holds at most two generations: the newest key of a full cache is
    /// kept with the generation before it, and the oldest generation is forgotten (its views go to the
    /// writer again, which the database decides).
    #[test]
    fn answered_views_are_bounded_at_two_generations() {
        let seen = SeenViews::default();
        let keys: Vec<u64> = (0..2 * SEEN_GENERATION as i64 + 1).map(|i| seen.key(&view(i + 1, "someone"))).collect();
        seen.insert_all(keys[..SEEN_GENERATION].iter().copied());
        assert!(seen.contains(keys[0]) && seen.contains(keys[SEEN_GENERATION - 1]));
        seen.insert_all(keys[SEEN_GENERATION..].iter().copied());
        let g = seen.generations();
        assert_eq!(g[0].len() + g[1].len(), SEEN_GENERATION + 1, "two generations at most");
        drop(g);
        assert!(!seen.contains(keys[0]), "the oldest generation is forgotten");
        assert!(seen.contains(keys[SEEN_GENERATION]) && seen.contains(keys[2 * SEEN_GENERATION]));
        assert!(!seen.contains(seen.key(&view(1, "someone else"))), "another viewer of the same listing is new");
        let mut next_day = view(1, "someone");
        next_day.day = next_day.day.succ_opt().unwrap();
        assert!(!seen.contains(seen.key(&next_day)), "the same viewer the next day is new");
    }
}
