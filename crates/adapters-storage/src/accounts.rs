//! Users and API keys. Keys are stored as their shown part (`ldk_` + 8, unique, the lookup key) and a
//! hash; never the key.

use crate::entity::{api_keys, users};
use crate::store::{SeaOrmStore, is_unique_violation, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::auth::ApiKey;
use domain::ids::{ApiKeyId, UserId};
use domain::ports::{ApiKeyRepository, NewUser, PasswordReset, RepoError, RepoResult, UserRepository};
use domain::user::{Email, Scope, User};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, FromQueryResult, PaginatorTrait, QueryFilter,
    QueryOrder,
};

fn to_user(m: users::Model) -> Option<User> {
    Some(User {
        id: UserId::from_db(m.id),
        email: Email::parse(&m.email).ok()?,
        display_name: m.display_name,
        is_admin: m.is_admin,
        created_at: m.created_at.with_timezone(&Utc),
        email_verified_at: m.email_verified_at.map(|t| t.with_timezone(&Utc)),
        suspended_at: m.suspended_at.map(|t| t.with_timezone(&Utc)),
    })
}

fn scopes_to_text(scopes: &[Scope]) -> String {
    scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",")
}

fn to_key(m: api_keys::Model) -> ApiKey {
    ApiKey {
        id: ApiKeyId::from_db(m.id),
        user_id: UserId::from_db(m.user_id),
        name: m.name,
        shown: m.prefix,
        // A stored list we wrote ourselves; an unknown name (from a newer version) is dropped, never granted.
        scopes: m.scopes.split(',').filter_map(|s| Scope::parse(s).ok()).collect(),
        created_at: m.created_at.with_timezone(&Utc),
        last_used_at: m.last_used_at.map(|t| t.with_timezone(&Utc)),
        revoked_at: m.revoked_at.map(|t| t.with_timezone(&Utc)),
    }
}

/// Stores an emailed link's hash (`email_verifications`, `password_resets`) for `user` until `expires_at`.
async fn save_link(
    conn: &impl sea_orm::ConnectionTrait,
    table: &str,
    user: UserId,
    token_hash: &str,
    expires_at: DateTime<Utc>,
) -> RepoResult<()> {
    let mut q = crate::sql::RawQuery::new(conn.get_database_backend());
    q.sql(&format!("INSERT INTO {table} (token_hash, user_id, expires_at) VALUES ("))
        .bind(token_hash)
        .sql(", ")
        .bind(user.get())
        .sql(", ")
        .bind(expires_at.timestamp())
        .sql(")");
    conn.execute_raw(q.build()).await.map_err(repo_err)?;
    Ok(())
}

/// Deletes `table`'s rows of account `user`; how many.
pub(crate) async fn delete_of(conn: &impl sea_orm::ConnectionTrait, table: &str, user: i64) -> RepoResult<u64> {
    let mut q = crate::sql::RawQuery::new(conn.get_database_backend());
    q.sql(&format!("DELETE FROM {table} WHERE user_id = ")).bind(user);
    Ok(conn.execute_raw(q.build()).await.map_err(repo_err)?.rows_affected())
}

#[async_trait]
impl UserRepository for SeaOrmStore {
    async fn create_user(&self, new: NewUser, now: DateTime<Utc>) -> RepoResult<User> {
        let m = users::ActiveModel {
            email: Set(new.email.as_str().to_owned()),
            password_hash: Set(Some(new.password_hash)),
            display_name: Set(new.display_name),
            is_admin: Set(new.is_admin),
            is_demo: Set(false),
            created_at: Set(now.into()),
            email_verified_at: Set(new.verified.then(|| now.into())),
            ..Default::default()
        }
        .insert(&self.db)
        .await
        .map_err(|e| {
            if is_unique_violation(&e) {
                RepoError::Conflict("an account with this email exists".into())
            } else {
                repo_err(e)
            }
        })?;
        to_user(m).ok_or(RepoError::NotFound)
    }

    async fn user_by_email(&self, email: &Email) -> RepoResult<Option<(User, Option<String>)>> {
        let m = users::Entity::find()
            .filter(Expr::expr(Func::lower(Expr::col(users::Column::Email))).eq(email.as_str().to_lowercase()))
            .one(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(m.and_then(|m| {
            let hash = m.password_hash.clone();
            to_user(m).map(|u| (u, hash))
        }))
    }

    async fn save_email_verification(
        &self,
        user: UserId,
        token_hash: &str,
        expires_at: DateTime<Utc>,
    ) -> RepoResult<()> {
        save_link(&self.db, "email_verifications", user, token_hash, expires_at).await
    }

    async fn email_verification(&self, token_hash: &str) -> RepoResult<Option<(UserId, DateTime<Utc>)>> {
        #[derive(Debug, sea_orm::FromQueryResult)]
        struct Row {
            user_id: i64,
            expires_at: i64,
        }
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("SELECT user_id, expires_at FROM email_verifications WHERE token_hash = ").bind(token_hash);
        let row =
            <Row as sea_orm::FromQueryResult>::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.map(|r| (UserId::from_db(r.user_id), DateTime::from_timestamp(r.expires_at, 0).unwrap_or_default())))
    }

    async fn mark_email_verified(&self, user: UserId, now: DateTime<Utc>) -> RepoResult<bool> {
        let res = users::Entity::update_many()
            .col_expr(users::Column::EmailVerifiedAt, Expr::value(sea_orm::prelude::DateTimeWithTimeZone::from(now)))
            .filter(users::Column::Id.eq(user.get()))
            .filter(users::Column::EmailVerifiedAt.is_null())
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("DELETE FROM email_verifications WHERE user_id = ").bind(user.get());
        sea_orm::ConnectionTrait::execute_raw(&self.db, q.build()).await.map_err(repo_err)?;
        Ok(res.rows_affected == 1)
    }

    async fn save_password_reset(
        &self,
        user: UserId,
        token_hash: &str,
        expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> RepoResult<()> {
        let txn = self.begin_write().await?;
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("DELETE FROM password_resets WHERE user_id = ")
            .bind(user.get())
            .sql(" AND expires_at <= ")
            .bind(now.timestamp());
        sea_orm::ConnectionTrait::execute_raw(&txn, q.build()).await.map_err(repo_err)?;
        save_link(&txn, "password_resets", user, token_hash, expires_at).await?;
        txn.commit().await.map_err(repo_err)
    }

    async fn password_reset(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Option<UserId>> {
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("SELECT user_id AS n FROM password_resets WHERE token_hash = ")
            .bind(token_hash)
            .sql(" AND expires_at > ")
            .bind(now.timestamp());
        let row = crate::store::CountRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.map(|r| UserId::from_db(r.n)))
    }

    async fn reset_password(
        &self,
        token_hash: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> RepoResult<Option<PasswordReset>> {
        let txn = self.begin_write().await?;
        // Used at most once: of resets racing with one link, one deletes its row.
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("DELETE FROM password_resets WHERE token_hash = ")
            .bind(token_hash)
            .sql(" AND expires_at > ")
            .bind(now.timestamp())
            .sql(" RETURNING user_id AS n");
        let Some(row) = crate::store::CountRow::find_by_statement(q.build()).one(&txn).await.map_err(repo_err)? else {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(None);
        };
        let user = row.n;
        let Some(before) = users::Entity::find_by_id(user).one(&txn).await.map_err(repo_err)? else {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(None);
        };
        let took_over = before.email_verified_at.is_none();
        users::Entity::update_many()
            .col_expr(users::Column::PasswordHash, Expr::value(password_hash.to_owned()))
            .col_expr(
                users::Column::EmailVerifiedAt,
                Expr::value(before.email_verified_at.unwrap_or_else(|| now.into())),
            )
            .filter(users::Column::Id.eq(user))
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        delete_of(&txn, "password_resets", user).await?;
        delete_of(&txn, "email_verifications", user).await?;
        let sessions = delete_of(&txn, "sessions", user).await?;
        if took_over {
            api_keys::Entity::update_many()
                .col_expr(api_keys::Column::RevokedAt, Expr::value(sea_orm::prelude::DateTimeWithTimeZone::from(now)))
                .filter(api_keys::Column::UserId.eq(user))
                .filter(api_keys::Column::RevokedAt.is_null())
                .exec(&txn)
                .await
                .map_err(repo_err)?;
            delete_of(&txn, "oauth_refresh_tokens", user).await?;
            delete_of(&txn, "oauth_codes", user).await?;
        }
        txn.commit().await.map_err(repo_err)?;
        Ok(Some(PasswordReset { user: UserId::from_db(user), took_over, sessions }))
    }

    async fn get_user(&self, id: UserId) -> RepoResult<Option<User>> {
        Ok(users::Entity::find_by_id(id.get()).one(&self.db).await.map_err(repo_err)?.and_then(to_user))
    }
}

#[async_trait]
impl ApiKeyRepository for SeaOrmStore {
    async fn create_api_key(
        &self,
        user: UserId,
        name: &str,
        shown: &str,
        hash: &str,
        scopes: &[Scope],
        now: DateTime<Utc>,
    ) -> RepoResult<Option<ApiKey>> {
        let txn = self.begin_write().await?;
        // The account's row, on PostgreSQL: two keys created at once would each count the keys
        // committed before them and both pass. SQLite's write transactions go one at a time.
        crate::own::lock_account(&txn, user).await?;
        let active = api_keys::Entity::find()
            .filter(api_keys::Column::UserId.eq(user.get()))
            .filter(api_keys::Column::RevokedAt.is_null())
            .count(&txn)
            .await
            .map_err(repo_err)?;
        if domain::auth::room_for_another_key(usize::try_from(active).unwrap_or(usize::MAX)).is_err() {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(None);
        }
        let m = api_keys::ActiveModel {
            user_id: Set(user.get()),
            name: Set(name.to_owned()),
            prefix: Set(shown.to_owned()),
            key_hash: Set(hash.to_owned()),
            scopes: Set(scopes_to_text(scopes)),
            created_at: Set(now.into()),
            last_used_at: Set(None),
            revoked_at: Set(None),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .map_err(repo_err)?;
        txn.commit().await.map_err(repo_err)?;
        Ok(Some(to_key(m)))
    }

    async fn api_key_by_shown(&self, shown: &str) -> RepoResult<Option<(ApiKey, String)>> {
        let m = api_keys::Entity::find()
            .filter(api_keys::Column::Prefix.eq(shown))
            .one(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(m.map(|m| {
            let hash = m.key_hash.clone();
            (to_key(m), hash)
        }))
    }

    async fn list_api_keys(&self, user: UserId) -> RepoResult<Vec<ApiKey>> {
        Ok(api_keys::Entity::find()
            .filter(api_keys::Column::UserId.eq(user.get()))
            .order_by_desc(api_keys::Column::CreatedAt)
            .order_by_desc(api_keys::Column::Id)
            .all(&self.db)
            .await
            .map_err(repo_err)?
            .into_iter()
            .map(to_key)
            .collect())
    }

    async fn revoke_api_key(&self, user: UserId, id: ApiKeyId, now: DateTime<Utc>) -> RepoResult<ApiKey> {
        let m = api_keys::Entity::find_by_id(id.get())
            .filter(api_keys::Column::UserId.eq(user.get()))
            .one(&self.db)
            .await
            .map_err(repo_err)?
            .ok_or(RepoError::NotFound)?;
        if m.revoked_at.is_some() {
            return Ok(to_key(m));
        }
        let mut am: api_keys::ActiveModel = m.into();
        am.revoked_at = Set(Some(now.into()));
        Ok(to_key(am.update(&self.db).await.map_err(repo_err)?))
    }

    async fn touch_api_key(&self, id: ApiKeyId, now: DateTime<Utc>) -> RepoResult<()> {
        // At most one write a minute per key: busy keys do not turn every read into a write.
        let stale: DateTime<chrono::FixedOffset> = (now - chrono::Duration::minutes(1)).into();
        api_keys::Entity::update_many()
            .col_expr(api_keys::Column::LastUsedAt, Expr::value(DateTime::<chrono::FixedOffset>::from(now)))
            .filter(api_keys::Column::Id.eq(id.get()))
            .filter(api_keys::Column::LastUsedAt.is_null().or(api_keys::Column::LastUsedAt.lt(stale)))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }
}

#[async_trait]
impl domain::ports::SessionStore for SeaOrmStore {
    async fn create_session(
        &self,
        user: UserId,
        token_hash: &str,
        csrf: &str,
        now: DateTime<Utc>,
        expires: DateTime<Utc>,
    ) -> RepoResult<()> {
        use crate::entity::sessions;
        sessions::ActiveModel {
            token_hash: Set(token_hash.to_owned()),
            user_id: Set(user.get()),
            csrf: Set(csrf.to_owned()),
            created_at: Set(now.into()),
            expires_at: Set(expires.into()),
        }
        .insert(&self.db)
        .await
        .map_err(repo_err)?;
        // Expired sessions of this user go with each new sign-in, and so do the oldest past the most
        // an account keeps (by the index of migration 45): one statement.
        let cut: DateTime<chrono::FixedOffset> = now.into();
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("DELETE FROM sessions WHERE user_id = ")
            .bind(user.get())
            .sql(" AND (expires_at < ")
            .bind(cut)
            .sql(" OR token_hash NOT IN (SELECT token_hash FROM sessions WHERE user_id = ")
            .bind(user.get())
            .sql(" ORDER BY created_at DESC, token_hash DESC LIMIT ")
            .count_of_rows(domain::auth::MAX_SESSIONS_PER_ACCOUNT)
            .sql("))");
        sea_orm::ConnectionTrait::execute_raw(&self.db, q.build()).await.map_err(repo_err)?;
        Ok(())
    }

    async fn session(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Option<(User, String)>> {
        use crate::entity::sessions;
        let Some(s) = sessions::Entity::find_by_id(token_hash.to_owned()).one(&self.db).await.map_err(repo_err)? else {
            return Ok(None);
        };
        if s.expires_at.with_timezone(&Utc) <= now {
            return Ok(None);
        }
        Ok(self.get_user(UserId::from_db(s.user_id)).await?.map(|u| (u, s.csrf)))
    }

    async fn delete_session(&self, token_hash: &str) -> RepoResult<()> {
        use crate::entity::sessions;
        sessions::Entity::delete_by_id(token_hash.to_owned()).exec(&self.db).await.map_err(repo_err)?;
        Ok(())
    }

    async fn delete_sessions_of(&self, user: UserId) -> RepoResult<u64> {
        use crate::entity::sessions;
        let r = sessions::Entity::delete_many()
            .filter(sessions::Column::UserId.eq(user.get()))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(r.rows_affected)
    }
}
