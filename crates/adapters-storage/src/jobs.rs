//! The job queue. A claim is one UPDATE … WHERE id = (SELECT … LIMIT 1) … RETURNING: on PostgreSQL the
//! subquery locks its row with FOR UPDATE SKIP LOCKED, so concurrent claimers take different jobs
//! without waiting; SQLite runs one writer at a time, so the statement is atomic as it stands.

use crate::entity::jobs;
use crate::sql::RawQuery;
use crate::store::{SeaOrmStore, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, FixedOffset, Utc};
use domain::ports::{Job, JobBacklog, JobQueue, RepoResult};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ActiveValue::Set, ColumnTrait, DbBackend, EntityTrait, FromQueryResult, QueryFilter};

const QUEUED: &str = "queued";
const RUNNING: &str = "running";
const DONE: &str = "done";
const FAILED: &str = "failed";

fn ts(t: DateTime<Utc>) -> DateTime<FixedOffset> {
    t.into()
}

#[derive(Debug, FromQueryResult)]
struct Claimed {
    id: i64,
    kind: String,
    payload: String,
    attempts: i32,
}

#[derive(Debug, FromQueryResult)]
struct BacklogRow {
    queued: i64,
    due: i64,
    running: i64,
    oldest_due: Option<DateTime<FixedOffset>>,
}

#[async_trait]
impl JobQueue for SeaOrmStore {
    async fn job_backlog(&self, now: DateTime<Utc>) -> RepoResult<JobBacklog> {
        // One pass over the unfinished jobs (the status index), not one count per figure.
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT COUNT(CASE WHEN status = ")
            .bind(QUEUED)
            .sql(" THEN 1 END) AS queued, COUNT(CASE WHEN status = ")
            .bind(QUEUED)
            .sql(" AND run_at <= ")
            .bind(ts(now))
            .sql(" THEN 1 END) AS due, COUNT(CASE WHEN status = ")
            .bind(RUNNING)
            .sql(" THEN 1 END) AS running, MIN(CASE WHEN status = ")
            .bind(QUEUED)
            .sql(" AND run_at <= ")
            .bind(ts(now))
            .sql(" THEN run_at END) AS oldest_due FROM jobs WHERE status IN (")
            .bind(QUEUED)
            .sql(", ")
            .bind(RUNNING)
            .sql(")");
        let row = BacklogRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        let n = |v: i64| v.max(0) as u64;
        Ok(row.map_or_else(JobBacklog::default, |r| JobBacklog {
            queued: n(r.queued),
            due: n(r.due),
            running: n(r.running),
            oldest_due: r.oldest_due.map(|t| t.with_timezone(&Utc)),
        }))
    }

    async fn enqueue_job(
        &self,
        kind: &str,
        payload: &str,
        run_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> RepoResult<i64> {
        let m = jobs::ActiveModel {
            kind: Set(kind.to_owned()),
            payload: Set(payload.to_owned()),
            run_at: Set(ts(run_at)),
            status: Set(QUEUED.to_owned()),
            attempts: Set(0),
            locked_by: Set(None),
            locked_until: Set(None),
            last_error: Set(None),
            created_at: Set(ts(now)),
            finished_at: Set(None),
            ..Default::default()
        }
        .insert(&self.db)
        .await
        .map_err(repo_err)?;
        Ok(m.id)
    }

    async fn claim_job(&self, worker: &str, now: DateTime<Utc>, lease: chrono::Duration) -> RepoResult<Option<Job>> {
        let backend = self.backend();
        let mut q = RawQuery::new(backend);
        q.sql("UPDATE jobs SET status = ")
            .bind(RUNNING)
            .sql(", locked_by = ")
            .bind(worker)
            .sql(", locked_until = ")
            .bind(ts(now + lease))
            .sql(", attempts = attempts + 1 WHERE id = (SELECT id FROM jobs WHERE (status = ")
            .bind(QUEUED)
            .sql(" AND run_at <= ")
            .bind(ts(now))
            .sql(") OR (status = ")
            .bind(RUNNING)
            .sql(" AND locked_until < ")
            .bind(ts(now))
            .sql(") ORDER BY run_at, id LIMIT 1");
        if backend == DbBackend::Postgres {
            q.sql(" FOR UPDATE SKIP LOCKED");
        }
        q.sql(") RETURNING id, kind, payload, attempts");
        let claimed = Claimed::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(claimed.map(|c| Job { id: c.id, kind: c.kind, payload: c.payload, attempts: c.attempts }))
    }

    async fn complete_job(&self, id: i64, worker: &str, now: DateTime<Utc>) -> RepoResult<bool> {
        let r = jobs::Entity::update_many()
            .col_expr(jobs::Column::Status, Expr::value(DONE))
            .col_expr(jobs::Column::FinishedAt, Expr::value(ts(now)))
            .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<DateTime<FixedOffset>>::None))
            .filter(jobs::Column::Id.eq(id))
            .filter(jobs::Column::Status.eq(RUNNING))
            .filter(jobs::Column::LockedBy.eq(worker))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(r.rows_affected == 1)
    }

    async fn fail_job(
        &self,
        id: i64,
        worker: &str,
        error: &str,
        retry_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> RepoResult<bool> {
        let mut update = jobs::Entity::update_many()
            .col_expr(jobs::Column::LastError, Expr::value(error.chars().take(2000).collect::<String>()))
            .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<DateTime<FixedOffset>>::None));
        update = match retry_at {
            Some(at) => update
                .col_expr(jobs::Column::Status, Expr::value(QUEUED))
                .col_expr(jobs::Column::RunAt, Expr::value(ts(at))),
            None => update
                .col_expr(jobs::Column::Status, Expr::value(FAILED))
                .col_expr(jobs::Column::FinishedAt, Expr::value(ts(now))),
        };
        let r = update
            .filter(jobs::Column::Id.eq(id))
            .filter(jobs::Column::Status.eq(RUNNING))
            .filter(jobs::Column::LockedBy.eq(worker))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(r.rows_affected == 1)
    }
}
