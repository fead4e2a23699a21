//! `Throttles` on one table of counters (`throttles`, migration 15): a bump is one
//! `INSERT … ON CONFLICT DO UPDATE … RETURNING`, the same SQL on SQLite and PostgreSQL, so concurrent
//! failures from several instances all count.

use crate::sql::RawQuery;
use crate::store::{SeaOrmStore, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::ports::{RepoResult, Throttles};
use domain::throttle::Counter;
use sea_orm::{ConnectionTrait, FromQueryResult};

#[derive(Debug, FromQueryResult)]
struct Row {
    key: String,
    count: i64,
    since: i64,
    locked_until: Option<i64>,
}

fn at(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).unwrap_or_default()
}

impl From<&Row> for Counter {
    fn from(r: &Row) -> Self {
        Counter { count: r.count, since: at(r.since), locked_until: r.locked_until.map(at) }
    }
}

#[async_trait]
impl Throttles for SeaOrmStore {
    async fn bump_throttle(&self, key: &str, now: DateTime<Utc>, window_start: DateTime<Utc>) -> RepoResult<Counter> {
        let (now, from) = (now.timestamp(), window_start.timestamp());
        let mut q = RawQuery::new(self.backend());
        q.sql("INSERT INTO throttles (key, count, since, locked_until) VALUES (")
            .bind(key)
            .sql(", 1, ")
            .bind(now)
            .sql(", NULL) ON CONFLICT (key) DO UPDATE SET count = CASE WHEN throttles.since < ")
            .bind(from)
            .sql(" THEN 1 ELSE throttles.count + 1 END, since = CASE WHEN throttles.since < ")
            .bind(from)
            .sql(" THEN ")
            .bind(now)
            .sql(" ELSE throttles.since END RETURNING key, count, since, locked_until");
        let row = Row::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        row.as_ref().map(Counter::from).ok_or_else(|| domain::ports::RepoError::Unexpected("no row returned".into()))
    }

    async fn give_back_throttle(&self, key: &str, since: DateTime<Utc>) -> RepoResult<()> {
        let mut q = RawQuery::new(self.backend());
        q.sql("UPDATE throttles SET count = count - 1 WHERE key = ")
            .bind(key)
            .sql(" AND since = ")
            .bind(since.timestamp())
            .sql(" AND count > 0");
        self.db.execute_raw(q.build()).await.map_err(repo_err)?;
        Ok(())
    }

    async fn throttles(&self, keys: &[String]) -> RepoResult<Vec<(String, Counter)>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT key, count, since, locked_until FROM throttles WHERE key IN ")
            .bind_list(keys.iter().map(String::as_str));
        let rows = Row::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows.iter().map(|r| (r.key.clone(), Counter::from(r))).collect())
    }

    async fn lock_throttle(&self, key: &str, now: DateTime<Utc>, until: DateTime<Utc>) -> RepoResult<bool> {
        let mut q = RawQuery::new(self.backend());
        q.sql("UPDATE throttles SET locked_until = ")
            .bind(until.timestamp())
            .sql(" WHERE key = ")
            .bind(key)
            .sql(" AND (locked_until IS NULL OR locked_until <= ")
            .bind(now.timestamp())
            .sql(")");
        Ok(self.db.execute_raw(q.build()).await.map_err(repo_err)?.rows_affected() == 1)
    }

    async fn clear_throttles(&self, keys: &[String]) -> RepoResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut q = RawQuery::new(self.backend());
        q.sql("DELETE FROM throttles WHERE key IN ").bind_list(keys.iter().map(String::as_str));
        self.db.execute_raw(q.build()).await.map_err(repo_err)?;
        Ok(())
    }

    async fn prune_throttles(&self, before: DateTime<Utc>) -> RepoResult<u64> {
        let b = before.timestamp();
        let mut q = RawQuery::new(self.backend());
        q.sql("DELETE FROM throttles WHERE since < ")
            .bind(b)
            .sql(" AND (locked_until IS NULL OR locked_until < ")
            .bind(b)
            .sql(")");
        Ok(self.db.execute_raw(q.build()).await.map_err(repo_err)?.rows_affected())
    }
}
