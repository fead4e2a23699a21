//! Accounts as use cases: creating users and API keys, and turning a bearer credential into a
//! [`Principal`]. Shared by the admin commands, the web pages and every operation call.

use crate::{OpError, OpResult};
use bootstrap::App;
use domain::ValidationErrors;
use domain::auth::{ApiKey, ApiKeyToken, Password, Principal, Via, key_name};
use domain::ids::UserId;
use domain::ports::{ApiKeyRepository, NewUser, RepoError, SessionStore, UserRepository};
use domain::user::{Email, Scope, User};

/// Creates an account. 409-style `Repo(Conflict)` when the email is taken.
pub async fn create_user(app: &App, email: &str, password: &str, display_name: &str, admin: bool) -> OpResult<User> {
    let mut errs = ValidationErrors::default();
    let email = errs.take(Email::parse(email));
    let password = errs.take(Password::parse(password));
    errs.clone().into_result()?;
    let (Some(email), Some(password)) = (email, password) else { return Err(OpError::Invalid(errs)) };
    let display_name = match display_name.trim() {
        "" => email.local_part().to_owned(),
        name => name.chars().take(100).collect(),
    };
    let hash = app.secrets.hash_password(&password);
    let new = NewUser { email, password_hash: hash, display_name, is_admin: admin };
    Ok(app.store.create_user(new, app.now()).await?)
}

/// Checks an email and password; `None` for an unknown email or a wrong password alike.
pub async fn sign_in(app: &App, email: &str, password: &str) -> OpResult<Option<User>> {
    let Ok(email) = Email::parse(email) else { return Ok(None) };
    let found = app.store.user_by_email(&email).await?;
    Ok(found.and_then(|(user, hash)| {
        let ok = hash.is_some_and(|h| app.secrets.verify_password(password, &h));
        ok.then_some(user)
    }))
}

/// Creates an API key for `user` and returns it with the key itself, which is shown this once.
pub async fn create_api_key(app: &App, user: UserId, name: &str, scopes: &[Scope]) -> OpResult<(ApiKey, ApiKeyToken)> {
    let name = key_name(name)?;
    if scopes.is_empty() {
        return Err(domain::ValidationError::new("scopes", "name at least one scope").into());
    }
    let active = app.store.list_api_keys(user).await?.iter().filter(|k| k.revoked_at.is_none()).count();
    domain::auth::room_for_another_key(active)?;
    // The shown part holds 8 random base62 characters (47 bits): a clash is astronomically rare, and
    // answered by drawing again.
    for _ in 0..3 {
        let token = app.secrets.new_api_key();
        let hash = app.secrets.hash_api_key(&token);
        match app.store.create_api_key(user, &name, token.shown(), &hash, scopes, app.now()).await {
            Ok(key) => return Ok((key, token)),
            Err(RepoError::Conflict(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(RepoError::Conflict("could not draw a unique key".into()).into())
}

/// The caller behind `Authorization: Bearer <credential>`. A malformed key (wrong prefix, length,
/// alphabet or checksum) is refused without a lookup; an unknown, mismatched or revoked key after one.
/// Every refusal is the same `InvalidToken`, so a caller learns nothing about which keys exist.
pub async fn authenticate_bearer(app: &App, credential: &str) -> OpResult<Principal> {
    let token = ApiKeyToken::parse(credential.trim()).map_err(|e| {
        tracing::debug!(reason = %e, "malformed API key");
        OpError::InvalidToken
    })?;
    let Some((key, stored_hash)) = app.store.api_key_by_shown(token.shown()).await? else {
        return Err(OpError::InvalidToken);
    };
    if !app.secrets.same_hash(&app.secrets.hash_api_key(&token), &stored_hash) || key.revoked_at.is_some() {
        return Err(OpError::InvalidToken);
    }
    let Some(user) = app.store.get_user(key.user_id).await? else { return Err(OpError::InvalidToken) };
    if let Err(e) = app.store.touch_api_key(key.id, app.now()).await {
        tracing::warn!(error = %e, "could not record an API key's use");
    }
    Ok(Principal {
        user_id: user.id,
        email: user.email,
        is_admin: user.is_admin,
        scopes: key.scopes,
        via: Via::ApiKey(key.id),
    })
}

/// How long a browser session lasts.
pub const SESSION_DAYS: i64 = 30;

/// Starts a browser session for `user`; returns the cookie's token and the session's CSRF token.
pub async fn start_session(app: &App, user: UserId) -> OpResult<(String, String)> {
    let (token, csrf) = (app.secrets.random_token(), app.secrets.random_token());
    let now = app.now();
    let expires = now + chrono::Duration::days(SESSION_DAYS);
    app.store.create_session(user, &app.secrets.hash_token(&token), &csrf, now, expires).await?;
    Ok((token, csrf))
}

/// The person behind a session cookie (all scopes: it is the account holder on our own pages) and
/// the session's CSRF token.
pub async fn session(app: &App, token: &str) -> OpResult<Option<(Principal, String)>> {
    let found = app.store.session(&app.secrets.hash_token(token), app.now()).await?;
    Ok(found.map(|(user, csrf)| {
        let p = Principal {
            user_id: user.id,
            email: user.email,
            is_admin: user.is_admin,
            scopes: Scope::ALL.to_vec(),
            via: Via::Session,
        };
        (p, csrf)
    }))
}

pub async fn end_session(app: &App, token: &str) -> OpResult<()> {
    Ok(app.store.delete_session(&app.secrets.hash_token(token)).await?)
}
