//! Durable background jobs, claimed from the database so that no two instances run one job and a job
//! whose worker died is picked up again when its lease runs out.

use super::RepoResult;
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// A claimed job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: i64,
    pub kind: String,
    /// JSON text, the job kind's own shape.
    pub payload: String,
    /// Including this one.
    pub attempts: i32,
}

/// How the queue stands, for the operator's metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobBacklog {
    /// Jobs waiting (due or not).
    pub queued: u64,
    /// Waiting jobs whose time has come.
    pub due: u64,
    /// Jobs a worker holds now.
    pub running: u64,
    /// When the longest-waiting due job became due.
    pub oldest_due: Option<DateTime<Utc>>,
}

#[async_trait]
pub trait JobQueue: Send + Sync {
    /// How many jobs wait, are due and run at `now`, and since when the oldest due one waits.
    async fn job_backlog(&self, now: DateTime<Utc>) -> RepoResult<JobBacklog>;

    /// Queues a job to run at `run_at` or later; returns its id.
    async fn enqueue_job(
        &self,
        kind: &str,
        payload: &str,
        run_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> RepoResult<i64>;

    /// Atomically claims the oldest due job — queued and due, or running with a lease that ran out — for
    /// `worker` until `now + lease`. Concurrent claimers never get the same job.
    async fn claim_job(&self, worker: &str, now: DateTime<Utc>, lease: chrono::Duration) -> RepoResult<Option<Job>>;

    /// Marks the job done; false when `worker` no longer holds it (its lease ran out and another took it).
    async fn complete_job(&self, id: i64, worker: &str, now: DateTime<Utc>) -> RepoResult<bool>;

    /// Records a failure: queued again at `retry_at`, or failed for good when `None`. False when `worker`
    /// no longer holds it.
    async fn fail_job(
        &self,
        id: i64,
        worker: &str,
        error: &str,
        retry_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> RepoResult<bool>;
}
