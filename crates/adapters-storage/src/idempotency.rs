//! Idempotency records. The claim is one INSERT … ON CONFLICT DO NOTHING, so of many concurrent
//! requests with one key exactly one inserts (and runs); the others read what it left.

use crate::entity::idempotency_keys as ik;
use crate::store::{SeaOrmStore, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, FixedOffset, Utc};
use domain::ports::{IdempotencyBegin, IdempotencyStore, RepoResult};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};

const RUNNING: &str = "running";
const DONE: &str = "done";

#[async_trait]
impl IdempotencyStore for SeaOrmStore {
    async fn begin_idempotent(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        stale_after: chrono::Duration,
    ) -> RepoResult<IdempotencyBegin> {
        let at: DateTime<FixedOffset> = now.into();
        let inserted = ik::Entity::insert(ik::ActiveModel {
            scope: Set(scope.to_owned()),
            key: Set(key.to_owned()),
            fingerprint: Set(fingerprint.to_owned()),
            state: Set(RUNNING.to_owned()),
            response: Set(None),
            started_at: Set(at),
            created_at: Set(at),
        })
        .on_conflict(OnConflict::columns([ik::Column::Scope, ik::Column::Key]).do_nothing().to_owned())
        .exec_without_returning(&self.db)
        .await
        .map_err(repo_err)?;
        if inserted == 1 {
            return Ok(IdempotencyBegin::Started);
        }
        let Some(existing) =
            ik::Entity::find_by_id((scope.to_owned(), key.to_owned())).one(&self.db).await.map_err(repo_err)?
        else {
            // Pruned between the two statements: claim again.
            return Box::pin(self.begin_idempotent(scope, key, fingerprint, now, stale_after)).await;
        };
        if existing.fingerprint != fingerprint {
            return Ok(IdempotencyBegin::Mismatch);
        }
        if existing.state == DONE {
            return Ok(IdempotencyBegin::Replay(existing.response.unwrap_or_else(|| "null".into())));
        }
        if existing.started_at.with_timezone(&Utc) + stale_after > now {
            return Ok(IdempotencyBegin::InFlight);
        }
        // Abandoned: take it over, unless another request just did (compare-and-set on started_at).
        let taken = ik::Entity::update_many()
            .col_expr(ik::Column::StartedAt, Expr::value(at))
            .filter(ik::Column::Scope.eq(scope))
            .filter(ik::Column::Key.eq(key))
            .filter(ik::Column::State.eq(RUNNING))
            .filter(ik::Column::StartedAt.eq(existing.started_at))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(if taken.rows_affected == 1 { IdempotencyBegin::Started } else { IdempotencyBegin::InFlight })
    }

    async fn finish_idempotent(&self, scope: &str, key: &str, response: &str) -> RepoResult<()> {
        ik::Entity::update_many()
            .col_expr(ik::Column::State, Expr::value(DONE))
            .col_expr(ik::Column::Response, Expr::value(response.to_owned()))
            .filter(ik::Column::Scope.eq(scope))
            .filter(ik::Column::Key.eq(key))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }

    async fn abandon_idempotent(&self, scope: &str, key: &str) -> RepoResult<()> {
        ik::Entity::delete_many()
            .filter(ik::Column::Scope.eq(scope))
            .filter(ik::Column::Key.eq(key))
            .filter(ik::Column::State.eq(RUNNING))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }

    async fn prune_idempotent(&self, before: DateTime<Utc>) -> RepoResult<u64> {
        let cut: DateTime<FixedOffset> = before.into();
        let r =
            ik::Entity::delete_many().filter(ik::Column::CreatedAt.lt(cut)).exec(&self.db).await.map_err(repo_err)?;
        Ok(r.rows_affected)
    }
}
