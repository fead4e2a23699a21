//! The job queue on both databases: concurrent claimers never share a job; a dead worker's job comes
//! back when its lease runs out, and the dead worker can no longer complete it.

use crate::on_every_store;
use chrono::{Duration, TimeZone, Utc};
use std::collections::HashSet;

on_every_store!(concurrent_claimers_take_each_job_once, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let mut ids = HashSet::new();
    for i in 0..24 {
        ids.insert(
            store.enqueue_job("crawl", &format!("{{\"n\":{i}}}"), now - Duration::seconds(i), now).await.unwrap(),
        );
    }
    let later = store.enqueue_job("crawl", "{}", now + Duration::hours(1), now).await.unwrap();
    let workers = (0..4).map(|w| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(job) = store.claim_job(&format!("w{w}"), now, Duration::minutes(5)).await.unwrap() {
                assert_eq!(job.attempts, 1);
                assert!(store.complete_job(job.id, &format!("w{w}"), now).await.unwrap());
                mine.push(job.id);
            }
            mine
        })
    });
    let mut claimed = Vec::new();
    for w in workers {
        claimed.extend(w.await.unwrap());
    }
    claimed.sort_unstable();
    let unique: HashSet<i64> = claimed.iter().copied().collect();
    assert_eq!(claimed.len(), unique.len(), "no job was claimed twice");
    assert_eq!(unique, ids, "every due job ran; the future one did not");
    assert!(!unique.contains(&later));
});

on_every_store!(a_dead_workers_job_comes_back_after_its_lease, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    let id = store.enqueue_job("draft", "{}", now, now).await.unwrap();
    let first = store.claim_job("dead", now, Duration::minutes(1)).await.unwrap().unwrap();
    assert_eq!((first.id, first.kind.as_str(), first.attempts), (id, "draft", 1));
    assert!(store.claim_job("other", now + Duration::seconds(30), Duration::minutes(1)).await.unwrap().is_none());
    let again = store.claim_job("other", now + Duration::minutes(2), Duration::minutes(1)).await.unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (id, 2));
    assert!(!store.complete_job(id, "dead", now).await.unwrap(), "the old holder lost it");
    // A failure with a retry queues it again for later; without one it fails for good.
    assert!(store.fail_job(id, "other", "site unreachable", Some(now + Duration::minutes(10)), now).await.unwrap());
    assert!(store.claim_job("w", now + Duration::minutes(5), Duration::minutes(1)).await.unwrap().is_none());
    let third = store.claim_job("w", now + Duration::minutes(10), Duration::minutes(1)).await.unwrap().unwrap();
    assert_eq!(third.attempts, 3);
    assert!(store.fail_job(id, "w", "gave up", None, now).await.unwrap());
    assert!(store.claim_job("w", now + Duration::days(1), Duration::minutes(1)).await.unwrap().is_none());
});

on_every_store!(the_backlog_counts_waiting_due_and_running_jobs, |store| {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
    assert_eq!(store.job_backlog(now).await.unwrap(), domain::ports::JobBacklog::default(), "an empty queue");
    store.enqueue_job("crawl", "{}", now - Duration::minutes(10), now).await.unwrap();
    store.enqueue_job("crawl", "{}", now - Duration::minutes(3), now).await.unwrap();
    store.enqueue_job("crawl", "{}", now + Duration::hours(1), now).await.unwrap();
    let claimed = store.claim_job("w1", now, Duration::minutes(5)).await.unwrap().unwrap();
    let b = store.job_backlog(now).await.unwrap();
    assert_eq!((b.queued, b.due, b.running), (2, 1, 1), "{b:?}");
    assert_eq!(b.oldest_due, Some(now - Duration::minutes(3)), "the first was claimed; the next waits since its time");
    assert!(store.complete_job(claimed.id, "w1", now).await.unwrap());
    let b = store.job_backlog(now).await.unwrap();
    assert_eq!((b.queued, b.due, b.running), (2, 1, 0), "a finished job is no longer counted");
});
