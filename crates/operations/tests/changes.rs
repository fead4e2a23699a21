//! Two instances on one store: a vote (or follow) on one drops, on the other, that listing's cached
//! reads and the lists it moves — not every cached read — within a poll; a change it cannot tell the reach of drops
//! everything.
#![allow(clippy::unwrap_used)]

mod common;

use operations::ReadCache;
use operations::cache::Change;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const POLL: Duration = Duration::from_millis(20);

/// Reads `key` through `cache`, counting computations in `runs`.
async fn read(cache: &ReadCache, key: &str, runs: &Arc<AtomicUsize>) {
    let runs = runs.clone();
    cache
        .get_or_bytes(key.to_owned(), async move {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(bytes::Bytes::from_static(b"{}"))
        })
        .await
        .unwrap();
}

/// How many of `keys` `cache` computes again.
async fn recomputed(cache: &ReadCache, keys: &[&str]) -> Vec<String> {
    let mut again = Vec::new();
    for key in keys {
        let runs = Arc::new(AtomicUsize::new(0));
        read(cache, key, &runs).await;
        if runs.load(Ordering::SeqCst) > 0 {
            again.push((*key).to_owned());
        }
    }
    again
}

#[tokio::test]
async fn a_vote_elsewhere_drops_only_what_it_touched_here() {
    let store = common::store(true).await;
    let app = common::app(store.clone(), |_| {});
    let (here, there) = (ReadCache::new(Duration::from_secs(60)), ReadCache::new(Duration::from_secs(60)));
    let _following = (here.follow_changes(app.clone(), POLL), there.follow_changes(app.clone(), POLL));
    tokio::time::sleep(POLL * 3).await;
    let keys = [
        "d\0get_listing\0{\"slug\":\"acme\"}",
        "d\0get_listing\0{\"slug\":\"zeta\"}",
        "d\0get_leaderboard\0{\"board\":\"community-weekly\"}",
        "d\0list_categories\0{}",
        "d\0page\0listing zeta",
    ];
    let runs = Arc::new(AtomicUsize::new(0));
    for k in keys {
        read(&here, k, &runs).await;
    }

    operations::public_change(&app, &there, &Change::Engagement("acme".into())).await;
    tokio::time::sleep(POLL * 5).await;
    assert_eq!(
        recomputed(&here, &keys).await,
        vec![keys[0].to_owned(), keys[2].to_owned()],
        "the voted listing and the board, nothing else"
    );

    // A follow elsewhere (every key is cached again now) drops the followed listing's profile only:
    // no board or search shows follower counts.
    operations::public_change(&app, &there, &Change::Follow("acme".into())).await;
    tokio::time::sleep(POLL * 5).await;
    assert_eq!(recomputed(&here, &keys).await, vec![keys[0].to_owned()], "the followed listing, nothing else");

    // A change of unknown reach elsewhere drops everything here.
    operations::public_data_changed(&app, &there).await;
    tokio::time::sleep(POLL * 5).await;
    assert_eq!(recomputed(&here, &keys).await.len(), keys.len());
}

/// A server drops its follower before its runtime shuts down; from then on nothing is read or dropped
/// (each read of the counter at shutdown logged a database error before).
#[tokio::test]
async fn a_dropped_follower_stops_following() {
    let store = common::store(true).await;
    let app = common::app(store.clone(), |_| {});
    let (here, there) = (ReadCache::new(Duration::from_secs(60)), ReadCache::new(Duration::from_secs(60)));
    let following = here.follow_changes(app.clone(), POLL);
    tokio::time::sleep(POLL * 3).await;
    let keys = ["d\0list_categories\0{}"];
    let runs = Arc::new(AtomicUsize::new(0));
    read(&here, keys[0], &runs).await;

    operations::public_data_changed(&app, &there).await;
    tokio::time::sleep(POLL * 5).await;
    assert_eq!(recomputed(&here, &keys).await.len(), 1, "followed: the change elsewhere dropped it");

    drop(following);
    tokio::time::sleep(POLL * 2).await;
    operations::public_data_changed(&app, &there).await;
    tokio::time::sleep(POLL * 5).await;
    assert!(recomputed(&here, &keys).await.is_empty(), "no longer followed: kept");
}
