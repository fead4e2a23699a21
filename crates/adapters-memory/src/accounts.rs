//! Accounts: users, API keys, browser sessions, throttles, idempotency records and OAuth grants.

use crate::{IdempotencyRow, MemoryStore, RefreshRow, SessionRow, UserRow, ok};
use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use domain::auth::ApiKey;
use domain::ids::{ApiKeyId, UserId};
use domain::oauth::{AuthCode, Grant, OAuthClient, Redeemed, RefreshGrant};
use domain::ports::{
    ApiKeyRepository, IdempotencyBegin, IdempotencyStore, NewUser, OAuthStore, PasswordReset, RepoError, RepoResult,
    SessionStore, Throttles, UserRepository,
};
use domain::throttle::Counter;
use domain::user::{Email, Scope, User};

/// The SQL stores keep OAuth and throttle times in whole seconds; so does this one, so a time read
/// back compares the same way on every store.
fn secs(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(t.timestamp(), 0).unwrap_or(t)
}

#[async_trait]
impl UserRepository for MemoryStore {
    async fn create_user(&self, new: NewUser, now: DateTime<Utc>) -> RepoResult<User> {
        let mut st = self.lock()?;
        let email = new.email.as_str().to_lowercase();
        if st.users.iter().any(|u| u.user.email.as_str().to_lowercase() == email) {
            return Err(RepoError::Conflict("an account with this email exists".into()));
        }
        let user = User {
            id: UserId::from_db(st.next_id("users")),
            email: new.email,
            display_name: new.display_name,
            is_admin: new.is_admin,
            created_at: now,
            email_verified_at: new.verified.then_some(now),
            suspended_at: None,
        };
        st.users.push(UserRow { user: user.clone(), password_hash: Some(new.password_hash), demo: false });
        Ok(user)
    }

    async fn user_by_email(&self, email: &Email) -> RepoResult<Option<(User, Option<String>)>> {
        let email = email.as_str().to_lowercase();
        let st = self.lock()?;
        ok(st
            .users
            .iter()
            .find(|u| u.user.email.as_str().to_lowercase() == email)
            .map(|u| (u.user.clone(), u.password_hash.clone())))
    }

    async fn get_user(&self, id: UserId) -> RepoResult<Option<User>> {
        ok(self.lock()?.user(id).map(|u| u.user.clone()))
    }

    async fn save_email_verification(
        &self,
        user: UserId,
        token_hash: &str,
        expires_at: DateTime<Utc>,
    ) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.verifications.contains_key(token_hash) {
            return Err(RepoError::Conflict("verification token taken".into()));
        }
        st.verifications.insert(token_hash.to_owned(), (user, secs(expires_at)));
        Ok(())
    }

    async fn email_verification(&self, token_hash: &str) -> RepoResult<Option<(UserId, DateTime<Utc>)>> {
        ok(self.lock()?.verifications.get(token_hash).copied())
    }

    async fn mark_email_verified(&self, user: UserId, now: DateTime<Utc>) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let marked = match st.users.iter_mut().find(|u| u.user.id == user) {
            Some(u) if u.user.email_verified_at.is_none() => {
                u.user.email_verified_at = Some(now);
                true
            }
            _ => false,
        };
        st.verifications.retain(|_, (u, _)| *u != user);
        Ok(marked)
    }

    async fn save_password_reset(
        &self,
        user: UserId,
        token_hash: &str,
        expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> RepoResult<()> {
        let mut st = self.lock()?;
        st.password_resets.retain(|_, (u, expires)| *u != user || *expires > now.timestamp());
        st.password_resets.insert(token_hash.to_owned(), (user, expires_at.timestamp()));
        Ok(())
    }

    async fn password_reset(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Option<UserId>> {
        let st = self.lock()?;
        ok(st.password_resets.get(token_hash).filter(|(_, expires)| *expires > now.timestamp()).map(|(u, _)| *u))
    }

    async fn reset_password(
        &self,
        token_hash: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> RepoResult<Option<PasswordReset>> {
        let mut st = self.lock()?;
        let Some(&(user, expires)) = st.password_resets.get(token_hash) else { return Ok(None) };
        if expires <= now.timestamp() {
            return Ok(None);
        }
        let Some(row) = st.users.iter_mut().find(|u| u.user.id == user) else { return Ok(None) };
        let took_over = row.user.email_verified_at.is_none();
        row.password_hash = Some(password_hash.to_owned());
        row.user.email_verified_at.get_or_insert(now);
        st.password_resets.retain(|_, (u, _)| *u != user);
        st.verifications.retain(|_, (u, _)| *u != user);
        let before = st.sessions.len();
        st.sessions.retain(|_, s| s.user != user);
        let sessions = (before - st.sessions.len()) as u64;
        if took_over {
            for (k, _) in st.api_keys.iter_mut().filter(|(k, _)| k.user_id == user && k.revoked_at.is_none()) {
                k.revoked_at = Some(now);
            }
            st.oauth_refresh.retain(|_, r| r.grant.user != user);
            st.oauth_codes.retain(|_, (c, _)| c.user != user);
        }
        Ok(Some(PasswordReset { user, took_over, sessions }))
    }
}

#[async_trait]
impl ApiKeyRepository for MemoryStore {
    async fn create_api_key(
        &self,
        user: UserId,
        name: &str,
        shown: &str,
        hash: &str,
        scopes: &[Scope],
        now: DateTime<Utc>,
    ) -> RepoResult<Option<ApiKey>> {
        let mut st = self.lock()?;
        let active = st.api_keys.iter().filter(|(k, _)| k.user_id == user && k.revoked_at.is_none()).count();
        if domain::auth::room_for_another_key(active).is_err() {
            return Ok(None);
        }
        if st.api_keys.iter().any(|(k, _)| k.shown == shown) {
            return Err(RepoError::Conflict("key prefix taken".into()));
        }
        let key = ApiKey {
            id: ApiKeyId::from_db(st.next_id("api_keys")),
            user_id: user,
            name: name.to_owned(),
            shown: shown.to_owned(),
            scopes: scopes.to_vec(),
            created_at: now,
            last_used_at: None,
            revoked_at: None,
        };
        st.api_keys.push((key.clone(), hash.to_owned()));
        Ok(Some(key))
    }

    async fn api_key_by_shown(&self, shown: &str) -> RepoResult<Option<(ApiKey, String)>> {
        ok(self.lock()?.api_keys.iter().find(|(k, _)| k.shown == shown).cloned())
    }

    async fn list_api_keys(&self, user: UserId) -> RepoResult<Vec<ApiKey>> {
        let mut keys: Vec<ApiKey> =
            self.lock()?.api_keys.iter().filter(|(k, _)| k.user_id == user).map(|(k, _)| k.clone()).collect();
        keys.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(keys)
    }

    async fn revoke_api_key(&self, user: UserId, id: ApiKeyId, now: DateTime<Utc>) -> RepoResult<ApiKey> {
        let mut st = self.lock()?;
        let (key, _) =
            st.api_keys.iter_mut().find(|(k, _)| k.id == id && k.user_id == user).ok_or(RepoError::NotFound)?;
        key.revoked_at.get_or_insert(now);
        Ok(key.clone())
    }

    async fn touch_api_key(&self, id: ApiKeyId, now: DateTime<Utc>) -> RepoResult<()> {
        let mut st = self.lock()?;
        if let Some((key, _)) = st.api_keys.iter_mut().find(|(k, _)| k.id == id)
            && key.last_used_at.is_none_or(|t| t < now - Duration::minutes(1))
        {
            key.last_used_at = Some(now);
        }
        Ok(())
    }
}

#[async_trait]
impl SessionStore for MemoryStore {
    async fn create_session(
        &self,
        user: UserId,
        token_hash: &str,
        csrf: &str,
        now: DateTime<Utc>,
        expires: DateTime<Utc>,
    ) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.sessions.contains_key(token_hash) {
            return Err(RepoError::Conflict("session token taken".into()));
        }
        st.sessions.insert(token_hash.to_owned(), SessionRow { user, csrf: csrf.to_owned(), created: now, expires });
        st.sessions.retain(|_, s| s.user != user || s.expires >= now);
        // The newest an account keeps; the rest end, oldest first (ties: the greater token hash stays).
        let mut own: Vec<(DateTime<Utc>, String)> =
            st.sessions.iter().filter(|(_, s)| s.user == user).map(|(h, s)| (s.created, h.clone())).collect();
        own.sort_unstable_by(|a, b| b.cmp(a));
        for (_, hash) in own.into_iter().skip(usize::try_from(domain::auth::MAX_SESSIONS_PER_ACCOUNT).unwrap_or(0)) {
            st.sessions.remove(&hash);
        }
        Ok(())
    }

    async fn session(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Option<(User, String)>> {
        let st = self.lock()?;
        let Some(s) = st.sessions.get(token_hash).filter(|s| s.expires > now) else { return Ok(None) };
        ok(st.user(s.user).map(|u| (u.user.clone(), s.csrf.clone())))
    }

    async fn delete_session(&self, token_hash: &str) -> RepoResult<()> {
        self.lock()?.sessions.remove(token_hash);
        Ok(())
    }

    async fn delete_sessions_of(&self, user: UserId) -> RepoResult<u64> {
        let mut st = self.lock()?;
        let before = st.sessions.len();
        st.sessions.retain(|_, s| s.user != user);
        Ok((before - st.sessions.len()) as u64)
    }
}

#[async_trait]
impl Throttles for MemoryStore {
    async fn bump_throttle(&self, key: &str, now: DateTime<Utc>, window_start: DateTime<Utc>) -> RepoResult<Counter> {
        let (now, from) = (secs(now), secs(window_start));
        let mut st = self.lock()?;
        let c = st.throttles.entry(key.to_owned()).or_insert(Counter { count: 0, since: now, locked_until: None });
        if c.since < from {
            *c = Counter { count: 1, since: now, locked_until: c.locked_until };
        } else {
            c.count += 1;
        }
        Ok(*c)
    }

    async fn give_back_throttle(&self, key: &str, since: DateTime<Utc>) -> RepoResult<()> {
        let mut st = self.lock()?;
        if let Some(c) = st.throttles.get_mut(key).filter(|c| c.since == secs(since) && c.count > 0) {
            c.count -= 1;
        }
        Ok(())
    }

    async fn throttles(&self, keys: &[String]) -> RepoResult<Vec<(String, Counter)>> {
        let st = self.lock()?;
        ok(keys.iter().filter_map(|k| Some((k.clone(), *st.throttles.get(k)?))).collect())
    }

    async fn lock_throttle(&self, key: &str, now: DateTime<Utc>, until: DateTime<Utc>) -> RepoResult<bool> {
        let now = secs(now);
        let mut st = self.lock()?;
        let Some(c) = st.throttles.get_mut(key).filter(|c| c.locked_until.is_none_or(|u| u <= now)) else {
            return Ok(false);
        };
        c.locked_until = Some(secs(until));
        Ok(true)
    }

    async fn clear_throttles(&self, keys: &[String]) -> RepoResult<()> {
        let mut st = self.lock()?;
        for k in keys {
            st.throttles.remove(k);
        }
        Ok(())
    }

    async fn prune_throttles(&self, before: DateTime<Utc>) -> RepoResult<u64> {
        let b = secs(before);
        let mut st = self.lock()?;
        let n = st.throttles.len();
        st.throttles.retain(|_, c| !(c.since < b && c.locked_until.is_none_or(|u| u < b)));
        Ok((n - st.throttles.len()) as u64)
    }
}

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn begin_idempotent(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        stale_after: Duration,
    ) -> RepoResult<IdempotencyBegin> {
        let mut st = self.lock()?;
        let id = (scope.to_owned(), key.to_owned());
        let Some(row) = st.idempotency.get_mut(&id) else {
            let row = IdempotencyRow {
                fingerprint: fingerprint.to_owned(),
                response: None,
                started_at: now,
                created_at: now,
            };
            st.idempotency.insert(id, row);
            return Ok(IdempotencyBegin::Started);
        };
        if row.fingerprint != fingerprint {
            return Ok(IdempotencyBegin::Mismatch);
        }
        if let Some(response) = &row.response {
            return Ok(IdempotencyBegin::Replay(response.clone()));
        }
        if row.started_at + stale_after > now {
            return Ok(IdempotencyBegin::InFlight);
        }
        row.started_at = now;
        Ok(IdempotencyBegin::Started)
    }

    async fn finish_idempotent(&self, scope: &str, key: &str, response: &str) -> RepoResult<()> {
        if let Some(row) = self.lock()?.idempotency.get_mut(&(scope.to_owned(), key.to_owned())) {
            row.response = Some(response.to_owned());
        }
        Ok(())
    }

    async fn abandon_idempotent(&self, scope: &str, key: &str) -> RepoResult<()> {
        let mut st = self.lock()?;
        let id = (scope.to_owned(), key.to_owned());
        if st.idempotency.get(&id).is_some_and(|r| r.response.is_none()) {
            st.idempotency.remove(&id);
        }
        Ok(())
    }

    async fn prune_idempotent(&self, before: DateTime<Utc>) -> RepoResult<u64> {
        let mut st = self.lock()?;
        let n = st.idempotency.len();
        st.idempotency.retain(|_, r| r.created_at >= before);
        Ok((n - st.idempotency.len()) as u64)
    }
}

#[async_trait]
impl OAuthStore for MemoryStore {
    async fn create_client(&self, client: &OAuthClient) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.oauth_clients.contains_key(&client.client_id) {
            return Err(RepoError::Conflict("client id taken".into()));
        }
        let mut client = client.clone();
        client.created_at = secs(client.created_at);
        st.oauth_clients.insert(client.client_id.clone(), client);
        Ok(())
    }

    async fn client(&self, client_id: &str) -> RepoResult<Option<OAuthClient>> {
        ok(self.lock()?.oauth_clients.get(client_id).cloned())
    }

    async fn save_code(&self, code: &AuthCode) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.oauth_codes.contains_key(&code.code_hash) {
            return Err(RepoError::Conflict("code taken".into()));
        }
        let mut code = code.clone();
        code.expires_at = secs(code.expires_at);
        let cut = code.expires_at - Duration::days(1);
        if st.oauth_clients.contains_key(&code.client_id) {
            st.oauth_used_clients.insert(code.client_id.clone());
        }
        st.oauth_codes.insert(code.code_hash.clone(), (code, None));
        st.oauth_codes.retain(|_, (c, _)| c.expires_at >= cut);
        Ok(())
    }

    async fn prune_unused_clients(&self, registered_before: DateTime<Utc>) -> RepoResult<u64> {
        let mut st = self.lock()?;
        let st = &mut *st;
        let before = st.oauth_clients.len();
        let used = &st.oauth_used_clients;
        st.oauth_clients.retain(|id, c| used.contains(id) || c.created_at >= registered_before);
        Ok((before - st.oauth_clients.len()) as u64)
    }

    async fn redeem_code(&self, code_hash: &str, now: DateTime<Utc>) -> RepoResult<Redeemed<AuthCode>> {
        let mut st = self.lock()?;
        Ok(match st.oauth_codes.get_mut(code_hash) {
            None => Redeemed::Unknown,
            Some((code, used)) => match used {
                Some(_) => Redeemed::Replayed(code.clone()),
                None => {
                    *used = Some(secs(now));
                    Redeemed::Fresh(code.clone())
                }
            },
        })
    }

    async fn save_refresh(&self, grant: &RefreshGrant, now: DateTime<Utc>) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.oauth_refresh.contains_key(&grant.token_hash) {
            return Err(RepoError::Conflict("refresh token taken".into()));
        }
        let mut grant = grant.clone();
        grant.expires_at = secs(grant.expires_at);
        let row = RefreshRow { grant, created_at: secs(now), used_at: None, revoked_at: None };
        st.oauth_refresh.insert(row.grant.token_hash.clone(), row);
        let cut = secs(now) - Duration::days(1);
        st.oauth_refresh.retain(|_, r| r.grant.expires_at >= cut);
        Ok(())
    }

    async fn redeem_refresh(&self, token_hash: &str, now: DateTime<Utc>) -> RepoResult<Redeemed<RefreshGrant>> {
        let mut st = self.lock()?;
        Ok(match st.oauth_refresh.get_mut(token_hash) {
            None => Redeemed::Unknown,
            Some(r) if r.revoked_at.is_some() => Redeemed::Unknown,
            Some(r) if r.used_at.is_some() => Redeemed::Replayed(r.grant.clone()),
            Some(r) => {
                r.used_at = Some(secs(now));
                Redeemed::Fresh(r.grant.clone())
            }
        })
    }

    async fn revoke_family(&self, family: &str, now: DateTime<Utc>) -> RepoResult<()> {
        for r in self.lock()?.oauth_refresh.values_mut().filter(|r| r.grant.family == family) {
            r.revoked_at.get_or_insert(secs(now));
        }
        Ok(())
    }

    async fn refresh_family(&self, token_hash: &str) -> RepoResult<Option<String>> {
        ok(self.lock()?.oauth_refresh.get(token_hash).map(|r| r.grant.family.clone()))
    }

    async fn grants_of(&self, user: UserId, now: DateTime<Utc>) -> RepoResult<Vec<Grant>> {
        let st = self.lock()?;
        let mut families: std::collections::BTreeMap<&str, Vec<&RefreshRow>> = Default::default();
        for r in st.oauth_refresh.values().filter(|r| r.grant.user == user) {
            families.entry(r.grant.family.as_str()).or_default().push(r);
        }
        let now = secs(now);
        let mut grants: Vec<Grant> = families
            .into_iter()
            .filter(|(_, rows)| {
                rows.iter().any(|r| r.used_at.is_none() && r.revoked_at.is_none() && r.grant.expires_at > now)
            })
            .filter_map(|(family, rows)| {
                Some(Grant {
                    family: family.to_owned(),
                    client_id: rows.iter().map(|r| r.grant.client_id.clone()).min()?,
                    scopes: rows
                        .iter()
                        .map(|r| domain::oauth::scope_string(&r.grant.scopes))
                        .min()
                        .map(|s| s.split(' ').filter_map(|x| Scope::parse(x).ok()).collect())?,
                    resource: rows.iter().map(|r| r.grant.resource.clone()).min()?,
                    allowed_at: rows.iter().map(|r| r.created_at).min()?,
                    last_used_at: rows.iter().map(|r| r.used_at.unwrap_or(r.created_at)).max()?,
                })
            })
            .collect();
        grants.sort_by(|a, b| b.allowed_at.cmp(&a.allowed_at).then(a.family.cmp(&b.family)));
        Ok(grants)
    }

    async fn revoke_grant(&self, user: UserId, family: &str, now: DateTime<Utc>) -> RepoResult<bool> {
        let mut revoked = false;
        for r in self.lock()?.oauth_refresh.values_mut().filter(|r| r.grant.family == family && r.grant.user == user) {
            if r.revoked_at.is_none() {
                r.revoked_at = Some(secs(now));
                revoked = true;
            }
        }
        Ok(revoked)
    }
}
