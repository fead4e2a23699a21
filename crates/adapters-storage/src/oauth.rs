//! OAuth records (port `OAuthStore`) in plain SQL: clients, codes and refresh-token families. Times
//! are Unix seconds. Each redemption is one `UPDATE … WHERE used_at IS NULL`, so of two instances
//! racing with the same code or refresh token exactly one wins.

use crate::sql::RawQuery;
use crate::store::{SeaOrmStore, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::ids::UserId;
use domain::oauth::{AuthCode, OAuthClient, Redeemed, RefreshGrant};
use domain::ports::{OAuthStore, RepoError, RepoResult};
use domain::user::Scope;
use sea_orm::{ConnectionTrait, FromQueryResult};

fn secs(t: DateTime<Utc>) -> i64 {
    t.timestamp()
}

fn time(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(s, 0).unwrap_or(DateTime::<Utc>::UNIX_EPOCH)
}

fn scopes(raw: &str) -> Vec<Scope> {
    raw.split(' ').filter_map(|s| Scope::parse(s).ok()).collect()
}

#[derive(Debug, FromQueryResult)]
struct ClientRow {
    client_id: String,
    client_name: String,
    redirect_uris: String,
    client_uri: Option<String>,
    created_at: i64,
}

#[derive(Debug, FromQueryResult)]
struct GrantRow {
    family: String,
    client_id: String,
    scopes: String,
    resource: String,
    allowed_at: i64,
    last_used_at: i64,
}

#[derive(Debug, FromQueryResult)]
struct CodeRow {
    code_hash: String,
    client_id: String,
    user_id: i64,
    redirect_uri: String,
    code_challenge: String,
    scopes: String,
    resource: String,
    expires_at: i64,
    used_at: Option<i64>,
}

impl CodeRow {
    fn into_code(self) -> AuthCode {
        AuthCode {
            code_hash: self.code_hash,
            client_id: self.client_id,
            user: UserId::from_db(self.user_id),
            redirect_uri: self.redirect_uri,
            code_challenge: self.code_challenge,
            scopes: scopes(&self.scopes),
            resource: self.resource,
            expires_at: time(self.expires_at),
        }
    }
}

#[derive(Debug, FromQueryResult)]
struct RefreshRow {
    token_hash: String,
    family: String,
    client_id: String,
    user_id: i64,
    scopes: String,
    resource: String,
    expires_at: i64,
    used_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl RefreshRow {
    fn into_grant(self) -> RefreshGrant {
        RefreshGrant {
            token_hash: self.token_hash,
            family: self.family,
            client_id: self.client_id,
            user: UserId::from_db(self.user_id),
            scopes: scopes(&self.scopes),
            resource: self.resource,
            expires_at: time(self.expires_at),
        }
    }
}

impl SeaOrmStore {
    async fn exec(&self, q: &RawQuery) -> RepoResult<u64> {
        Ok(self.db.execute_raw(q.build()).await.map_err(repo_err)?.rows_affected())
    }

    async fn code_row(&self, code_hash: &str) -> RepoResult<Option<CodeRow>> {
        let mut q = RawQuery::new(self.backend());
        q.sql(
            "SELECT code_hash, client_id, user_id, redirect_uri, code_challenge, scopes, resource, expires_at, used_at \
             FROM oauth_codes WHERE code_hash = ",
        )
        .bind(code_hash);
        CodeRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)
    }

    async fn refresh_row(&self, token_hash: &str) -> RepoResult<Option<RefreshRow>> {
        let mut q = RawQuery::new(self.backend());
        q.sql(
            "SELECT token_hash, family, client_id, user_id, scopes, resource, expires_at, used_at, revoked_at \
             FROM oauth_refresh_tokens WHERE token_hash = ",
        )
        .bind(token_hash);
        RefreshRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)
    }
}

#[async_trait]
impl OAuthStore for SeaOrmStore {
    async fn create_client(&self, c: &OAuthClient) -> RepoResult<()> {
        let uris = serde_json::to_string(&c.redirect_uris).map_err(|e| RepoError::Unexpected(Box::new(e)))?;
        let mut q = RawQuery::new(self.backend());
        q.sql("INSERT INTO oauth_clients (client_id, client_name, redirect_uris, client_uri, created_at) VALUES (")
            .bind(c.client_id.as_str())
            .sql(", ")
            .bind(c.name.as_str())
            .sql(", ")
            .bind(uris)
            .sql(", ")
            .bind(c.client_uri.clone())
            .sql(", ")
            .bind(secs(c.created_at))
            .sql(")");
        self.exec(&q).await.map(|_| ())
    }

    async fn client(&self, client_id: &str) -> RepoResult<Option<OAuthClient>> {
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT client_id, client_name, redirect_uris, client_uri, created_at FROM oauth_clients WHERE client_id = ")
            .bind(client_id);
        let Some(r) = ClientRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)? else {
            return Ok(None);
        };
        let redirect_uris: Vec<String> = serde_json::from_str(&r.redirect_uris)
            .map_err(|e| RepoError::Unexpected(format!("client {}: redirect_uris: {e}", r.client_id).into()))?;
        Ok(Some(OAuthClient {
            client_id: r.client_id,
            name: r.client_name,
            redirect_uris,
            client_uri: r.client_uri,
            created_at: time(r.created_at),
        }))
    }

    async fn save_code(&self, c: &AuthCode) -> RepoResult<()> {
        let mut q = RawQuery::new(self.backend());
        q.sql(
            "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, scopes, resource, \
             expires_at, used_at) VALUES (",
        )
        .bind(c.code_hash.as_str())
        .sql(", ")
        .bind(c.client_id.as_str())
        .sql(", ")
        .bind(c.user.get())
        .sql(", ")
        .bind(c.redirect_uri.as_str())
        .sql(", ")
        .bind(c.code_challenge.as_str())
        .sql(", ")
        .bind(domain::oauth::scope_string(&c.scopes))
        .sql(", ")
        .bind(c.resource.as_str())
        .sql(", ")
        .bind(secs(c.expires_at))
        .sql(", NULL)");
        self.exec(&q).await?;
        let mut used = RawQuery::new(self.backend());
        used.sql("UPDATE oauth_clients SET used_at = ")
            .bind(secs(c.expires_at))
            .sql(" WHERE client_id = ")
            .bind(c.client_id.as_str())
            .sql(" AND used_at IS NULL");
        self.exec(&used).await?;
        // Codes live minutes; those a day past their expiry go with each new one.
        let mut prune = RawQuery::new(self.backend());
        prune.sql("DELETE FROM oauth_codes WHERE expires_at < ").bind(secs(c.expires_at) - 86_400);
        self.exec(&prune).await.map(|_| ())
    }

    async fn prune_unused_clients(&self, registered_before: DateTime<Utc>) -> RepoResult<u64> {
        let mut q = RawQuery::new(self.backend());
        q.sql("DELETE FROM oauth_clients WHERE used_at IS NULL AND created_at < ").bind(secs(registered_before));
        self.exec(&q).await
    }

    async fn redeem_code(&self, code_hash: &str, now: DateTime<Utc>) -> RepoResult<Redeemed<AuthCode>> {
        let mut q = RawQuery::new(self.backend());
        q.sql("UPDATE oauth_codes SET used_at = ")
            .bind(secs(now))
            .sql(" WHERE code_hash = ")
            .bind(code_hash)
            .sql(" AND used_at IS NULL");
        let spent = self.exec(&q).await? == 1;
        Ok(match self.code_row(code_hash).await? {
            None => Redeemed::Unknown,
            Some(row) if spent => Redeemed::Fresh(row.into_code()),
            Some(row) if row.used_at.is_some() => Redeemed::Replayed(row.into_code()),
            Some(_) => Redeemed::Unknown,
        })
    }

    async fn save_refresh(&self, g: &RefreshGrant, now: DateTime<Utc>) -> RepoResult<()> {
        let mut q = RawQuery::new(self.backend());
        q.sql(
            "INSERT INTO oauth_refresh_tokens (token_hash, family, client_id, user_id, scopes, resource, created_at, \
             expires_at, used_at, revoked_at) VALUES (",
        )
        .bind(g.token_hash.as_str())
        .sql(", ")
        .bind(g.family.as_str())
        .sql(", ")
        .bind(g.client_id.as_str())
        .sql(", ")
        .bind(g.user.get())
        .sql(", ")
        .bind(domain::oauth::scope_string(&g.scopes))
        .sql(", ")
        .bind(g.resource.as_str())
        .sql(", ")
        .bind(secs(now))
        .sql(", ")
        .bind(secs(g.expires_at))
        .sql(", NULL, NULL)");
        self.exec(&q).await?;
        let mut prune = RawQuery::new(self.backend());
        prune.sql("DELETE FROM oauth_refresh_tokens WHERE expires_at < ").bind(secs(now) - 86_400);
        self.exec(&prune).await.map(|_| ())
    }

    async fn redeem_refresh(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Redeemed<RefreshGrant>> {
        let mut q = RawQuery::new(self.backend());
        q.sql("UPDATE oauth_refresh_tokens SET used_at = ")
            .bind(secs(now))
            .sql(" WHERE token_hash = ")
            .bind(token_hash)
            .sql(" AND used_at IS NULL AND revoked_at IS NULL");
        let spent = self.exec(&q).await? == 1;
        Ok(match self.refresh_row(token_hash).await? {
            None => Redeemed::Unknown,
            Some(row) if spent => Redeemed::Fresh(row.into_grant()),
            Some(row) if row.revoked_at.is_some() => Redeemed::Unknown,
            Some(row) if row.used_at.is_some() => Redeemed::Replayed(row.into_grant()),
            Some(_) => Redeemed::Unknown,
        })
    }

    async fn revoke_family(&self, family: &str, now: DateTime<Utc>) -> RepoResult<()> {
        let mut q = RawQuery::new(self.backend());
        q.sql("UPDATE oauth_refresh_tokens SET revoked_at = ")
            .bind(secs(now))
            .sql(" WHERE family = ")
            .bind(family)
            .sql(" AND revoked_at IS NULL");
        self.exec(&q).await.map(|_| ())
    }

    async fn grants_of(&self, user: UserId, now: DateTime<Utc>) -> RepoResult<Vec<domain::oauth::Grant>> {
        let mut q = RawQuery::new(self.backend());
        q.sql(
            "SELECT family, MIN(client_id) AS client_id, MIN(scopes) AS scopes, MIN(resource) AS resource, \
             MIN(created_at) AS allowed_at, MAX(COALESCE(used_at, created_at)) AS last_used_at \
             FROM oauth_refresh_tokens WHERE user_id = ",
        )
        .bind(user.get())
        .sql(" GROUP BY family HAVING SUM(CASE WHEN used_at IS NULL AND revoked_at IS NULL AND expires_at > ")
        .bind(secs(now))
        .sql(" THEN 1 ELSE 0 END) > 0 ORDER BY allowed_at DESC, family");
        let rows = GrantRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows
            .into_iter()
            .map(|r| domain::oauth::Grant {
                family: r.family,
                client_id: r.client_id,
                scopes: scopes(&r.scopes),
                resource: r.resource,
                allowed_at: time(r.allowed_at),
                last_used_at: time(r.last_used_at),
            })
            .collect())
    }

    async fn revoke_grant(&self, user: UserId, family: &str, now: DateTime<Utc>) -> RepoResult<bool> {
        let mut q = RawQuery::new(self.backend());
        q.sql("UPDATE oauth_refresh_tokens SET revoked_at = ")
            .bind(secs(now))
            .sql(" WHERE family = ")
            .bind(family)
            .sql(" AND user_id = ")
            .bind(user.get())
            .sql(" AND revoked_at IS NULL");
        Ok(self.exec(&q).await? > 0)
    }

    async fn refresh_family(&self, token_hash: &str) -> RepoResult<Option<String>> {
        Ok(self.refresh_row(token_hash).await?.map(|r| r.family))
    }
}
