//! The OAuth 2.1 authorization server as use cases, for MCP clients (and REST clients) acting on a
//! person's behalf: metadata (RFC 8414, RFC 9728), dynamic client registration (RFC 7591), client ID
//! metadata documents (fetched through the safe fetcher), the authorization code grant with PKCE S256,
//! the refresh-token grant with rotation and replay detection, revocation (RFC 7009), and the
//! audience-bound access tokens every operation accepts.
//!
//! Access tokens are JWTs (RFC 9068 shape, HS256) signed with a secret kept in the database, so every
//! instance can check what any instance issued. They live [`ACCESS_TOKEN_SECS`]; revoking an
//! authorization revokes its refresh tokens, and the person's account is looked up on every use.

use crate::App;
use crate::{OpError, OpResult};
use base64::Engine;
use domain::auth::{Principal, Via};
use domain::ids::UserId;
use domain::oauth::{
    ACCESS_TOKEN_SECS, AuthCode, CODE_SECS, MAX_CLIENT_NAME, MAX_REDIRECT_URIS, MAX_URI, OAuthClient, OAuthError,
    OAuthErrorCode as E, Redeemed, RefreshGrant, code_challenge_ok, code_verifier_ok, parse_scopes, scope_string,
};
use domain::user::Scope;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Digest;

/// Which surface a token is for: its `aud` is that surface's URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The REST API, `{public}/api/v1`.
    Api,
    /// The MCP server, `{public}/mcp`.
    Mcp,
}

impl Audience {
    pub fn url(self, public_url: &str) -> String {
        let base = public_url.trim_end_matches('/');
        match self {
            Self::Api => format!("{base}/api/v1"),
            Self::Mcp => format!("{base}/mcp"),
        }
    }

    fn of(resource: &str, public_url: &str) -> Option<Self> {
        let r = resource.trim_end_matches('/');
        [Self::Mcp, Self::Api].into_iter().find(|a| a.url(public_url) == r)
    }
}

/// The addresses of the authorization server, all under the public URL.
pub fn issuer(public_url: &str) -> String {
    public_url.trim_end_matches('/').to_owned()
}

fn endpoint(public_url: &str, path: &str) -> String {
    format!("{}{path}", issuer(public_url))
}

/// The scopes with what each allows, for metadata and the consent page.
pub fn scope_meaning(s: Scope) -> &'static str {
    match s {
        Scope::AccountRead => "read your account, drafts, listings, claims and orders",
        Scope::ListingsWrite => "submit, edit, claim and publish listings for you",
        Scope::OrdersWrite => "price orders and create checkout pages (you pay on the page yourself)",
    }
}

/// RFC 8414 authorization server metadata.
pub fn authorization_server_metadata(public_url: &str) -> Value {
    json!({
        "issuer": issuer(public_url),
        "authorization_endpoint": endpoint(public_url, "/oauth/authorize"),
        "token_endpoint": endpoint(public_url, "/oauth/token"),
        "registration_endpoint": endpoint(public_url, "/oauth/register"),
        "revocation_endpoint": endpoint(public_url, "/oauth/revoke"),
        "scopes_supported": Scope::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
        "service_documentation": endpoint(public_url, "/api/v1/docs"),
    })
}

/// RFC 9728 protected resource metadata of one surface.
pub fn protected_resource_metadata(public_url: &str, audience: Audience) -> Value {
    json!({
        "resource": audience.url(public_url),
        "authorization_servers": [issuer(public_url)],
        "scopes_supported": Scope::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "bearer_methods_supported": ["header"],
        "resource_name": match audience { Audience::Mcp => "launchdir MCP server", Audience::Api => "launchdir REST API" },
        "resource_documentation": endpoint(public_url, "/api/v1/docs"),
    })
}

fn bad(code: E, description: impl Into<String>) -> OAuthFailure {
    OAuthFailure::OAuth(OAuthError::new(code, description))
}

/// An OAuth endpoint's failure: an OAuth error for the client, or a storage failure (500).
#[derive(Debug, thiserror::Error)]
pub enum OAuthFailure {
    #[error(transparent)]
    OAuth(OAuthError),
    #[error(transparent)]
    Op(#[from] OpError),
}

impl From<domain::ports::RepoError> for OAuthFailure {
    fn from(e: domain::ports::RepoError) -> Self {
        Self::Op(e.into())
    }
}

// ---- registration -------------------------------------------------------------------------------

/// A dynamic client registration request (RFC 7591 §2). Metadata not listed is ignored, as §2 allows.
#[derive(Debug, Default, Deserialize)]
pub struct Registration {
    #[serde(default)]
    pub redirect_uris: Option<Vec<String>>,
    #[serde(default)]
    pub client_name: Option<String>,
    #[serde(default)]
    pub client_uri: Option<String>,
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
    #[serde(default)]
    pub scope: Option<String>,
}

fn client_metadata(
    reg: &Registration,
    client_id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<OAuthClient, OAuthError> {
    let meta = |d: String| OAuthError::new(E::InvalidClientMetadata, d);
    let uris = reg.redirect_uris.as_deref().unwrap_or_default();
    if uris.is_empty() || uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::new(
            E::InvalidRedirectUri,
            format!("redirect_uris: give 1 to {MAX_REDIRECT_URIS} redirect URIs"),
        ));
    }
    let redirect_uris = uris
        .iter()
        .map(|u| domain::oauth::redirect_uri(u).map_err(|e| OAuthError::new(E::InvalidRedirectUri, e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    match reg.token_endpoint_auth_method.as_deref() {
        None | Some("none") => {}
        Some(other) => {
            return Err(meta(format!(
                "token_endpoint_auth_method: only \"none\" (public clients with PKCE) is supported, not {other:?}"
            )));
        }
    }
    if let Some(g) = &reg.grant_types
        && let Some(other) = g.iter().find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token"))
    {
        return Err(meta(format!("grant_types: {other:?} is not supported; use authorization_code and refresh_token")));
    }
    if let Some(r) = &reg.response_types
        && let Some(other) = r.iter().find(|r| r.as_str() != "code")
    {
        return Err(meta(format!("response_types: {other:?} is not supported; use code")));
    }
    if let Some(s) = &reg.scope {
        parse_scopes(Some(s)).map_err(|e| meta(e.to_string()))?;
    }
    let name = reg.client_name.as_deref().map(str::trim).unwrap_or_default();
    if name.chars().count() > MAX_CLIENT_NAME {
        return Err(meta(format!("client_name: longer than {MAX_CLIENT_NAME} characters")));
    }
    let client_uri = match reg.client_uri.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
        Some(u) if u.len() <= MAX_URI && (u.starts_with("https://") || u.starts_with("http://")) => Some(u.to_owned()),
        Some(_) => return Err(meta("client_uri: must be an http(s) URL of at most 2048 characters".into())),
        None => None,
    };
    Ok(OAuthClient {
        client_id: client_id.to_owned(),
        name: if name.is_empty() { "Unnamed client".to_owned() } else { name.to_owned() },
        redirect_uris,
        client_uri,
        created_at: now,
    })
}

/// Registers a public client for a caller on `network` (its address as the rate limit counts it: an
/// IPv4 address, an IPv6 /64); returns the RFC 7591 §3.2.1 response body. A network registers at most
/// [`REGISTRATIONS_PER_NETWORK_PER_HOUR`](domain::oauth::REGISTRATIONS_PER_NETWORK_PER_HOUR) clients an
/// hour (then 429 with Retry-After); metadata that is refused counts nothing.
pub async fn register(app: &App, reg: &Registration, network: &str) -> Result<Value, OAuthFailure> {
    let id = format!("ldc_{}", &app.secrets.random_token()[..32]);
    let client = client_metadata(reg, &id, app.now()).map_err(OAuthFailure::OAuth)?;
    crate::quotas::take(
        app,
        &[crate::quotas::Cap {
            code: "registration_quota",
            purpose: "oauth-register-network",
            subject: network.to_owned(),
            limit: domain::oauth::REGISTRATIONS_PER_NETWORK_PER_HOUR,
            window: chrono::Duration::hours(1),
            what: "client registrations from this network this hour",
        }],
    )
    .await?;
    app.store.create_client(&client).await?;
    Ok(json!({
        "client_id": client.client_id,
        "client_id_issued_at": client.created_at.timestamp(),
        "client_name": client.name,
        "redirect_uris": client.redirect_uris,
        "client_uri": client.client_uri,
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": scope_string(&Scope::ALL),
    }))
}

/// The client behind `client_id`: a registered one, or the client ID metadata document at that URL
/// (fetched through the safe fetcher, so never from an internal address), whose own `client_id` must
/// be that URL.
pub async fn resolve_client(app: &App, client_id: &str) -> Result<OAuthClient, String> {
    if client_id.is_empty() || client_id.len() > MAX_URI {
        return Err("client_id is missing or too long".into());
    }
    if !OAuthClient::is_metadata_document(client_id) {
        return match app.store.client(client_id).await {
            Ok(Some(c)) => Ok(c),
            Ok(None) => Err(format!("no client is registered as {client_id:?}")),
            Err(e) => {
                tracing::error!(error = %e, "could not read an OAuth client");
                Err("the client could not be looked up; try again".into())
            }
        };
    }
    let url = url_with_path(client_id, &app.allowed_hosts)
        .ok_or("a client ID metadata document URL must be https with a path")?;
    let body = app
        .reader
        .read_file(&url)
        .await
        .map_err(|e| format!("the client ID metadata document at {client_id} could not be read: {e}"))?;
    let doc: Value =
        serde_json::from_str(&body).map_err(|_| format!("the document at {client_id} is not JSON client metadata"))?;
    if doc.get("client_id").and_then(Value::as_str) != Some(client_id) {
        return Err(format!("the document at {client_id} names another client_id"));
    }
    let reg: Registration = serde_json::from_value(doc)
        .map_err(|e| format!("the document at {client_id} is not valid client metadata: {e}"))?;
    client_metadata(&reg, client_id, app.now()).map_err(|e| format!("the document at {client_id}: {e}"))
}

/// The metadata document URL as given, when it is https (or http to a `host:port` the operator allowed
/// the fetcher to reach, as tests and intranets do) with a path beyond `/`.
fn url_with_path(id: &str, allowed_http: &[String]) -> Option<String> {
    let (rest, plain) = match id.strip_prefix("https://") {
        Some(r) => (r, false),
        None => (id.strip_prefix("http://")?, true),
    };
    let (host, path) = rest.split_once('/')?;
    let http_ok = !plain || allowed_http.iter().any(|a| a.eq_ignore_ascii_case(host));
    (http_ok && !host.is_empty() && !path.is_empty() && !id.contains('#')).then(|| id.to_owned())
}

// ---- authorization --------------------------------------------------------------------------------

/// The authorization request's query parameters, as received.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct AuthorizeParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

/// A checked authorization request, ready for the person's decision.
#[derive(Debug, Clone)]
pub struct AuthorizeRequest {
    pub client: OAuthClient,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub scopes: Vec<Scope>,
    pub resource: String,
    pub code_challenge: String,
}

/// Why an authorization request cannot go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizeRefusal {
    /// The client or its redirect URI cannot be trusted: tell the person, never redirect (RFC 6749
    /// §4.1.2.1).
    Show(String),
    /// Send the browser back to the client with this URL (error and state in its query).
    Redirect(String),
}

fn with_query(uri: &str, pairs: &[(&str, &str)]) -> String {
    let sep = if uri.contains('?') { '&' } else { '?' };
    let q: String = pairs.iter().map(|(k, v)| format!("{k}={}", urlencode(v))).collect::<Vec<_>>().join("&");
    format!("{uri}{sep}{q}")
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
fn urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Checks an authorization request the way RFC 6749 §4.1.2.1 orders it: first the client and its
/// redirect URI (errors shown to the person), then everything else (errors sent back to the client).
pub async fn check_authorize(app: &App, p: &AuthorizeParams) -> Result<AuthorizeRequest, AuthorizeRefusal> {
    let client_id = p.client_id.as_deref().unwrap_or_default();
    let client = resolve_client(app, client_id).await.map_err(AuthorizeRefusal::Show)?;
    let redirect_uri = match p.redirect_uri.as_deref() {
        Some(u) if client.allows_redirect(u) => u.to_owned(),
        Some(u) => {
            return Err(AuthorizeRefusal::Show(format!(
                "the redirect URI {u:?} is not one this client registered, so we will not send you there"
            )));
        }
        // OAuth 2.1 requires it whenever several are registered; we require it always.
        None => return Err(AuthorizeRefusal::Show("the request has no redirect_uri".into())),
    };
    let state = p.state.clone().filter(|s| !s.is_empty());
    if state.as_ref().is_some_and(|s| s.len() > MAX_URI) {
        return Err(AuthorizeRefusal::Show("the state parameter is longer than 2048 characters".into()));
    }
    let back = |code: E, desc: &str| {
        let iss = issuer(&app.public_url);
        let mut pairs = vec![("error", code.as_str()), ("error_description", desc), ("iss", iss.as_str())];
        if let Some(s) = &state {
            pairs.push(("state", s.as_str()));
        }
        AuthorizeRefusal::Redirect(with_query(&redirect_uri, &pairs))
    };
    if p.response_type.as_deref() != Some("code") {
        return Err(back(E::UnsupportedResponseType, "response_type must be code"));
    }
    if p.code_challenge_method.as_deref() != Some("S256") {
        return Err(back(E::InvalidRequest, "PKCE is required: code_challenge_method must be S256"));
    }
    let challenge = p.code_challenge.as_deref().unwrap_or_default();
    if !code_challenge_ok(challenge) {
        return Err(back(
            E::InvalidRequest,
            "code_challenge must be the 43-character base64url SHA-256 of the verifier",
        ));
    }
    let scopes = parse_scopes(p.scope.as_deref()).map_err(|e| back(E::InvalidScope, &e.problem))?;
    let resource = match p.resource.as_deref() {
        None | Some("") => Audience::Mcp.url(&app.public_url),
        Some(r) => match Audience::of(r, &app.public_url) {
            Some(a) => a.url(&app.public_url),
            None => {
                return Err(back(
                    E::InvalidTarget,
                    &format!(
                        "resource must be {} or {}",
                        Audience::Mcp.url(&app.public_url),
                        Audience::Api.url(&app.public_url)
                    ),
                ));
            }
        },
    };
    Ok(AuthorizeRequest { client, redirect_uri, state, scopes, resource, code_challenge: challenge.to_owned() })
}

/// The person allowed access: stores a single-use code and returns where to send the browser.
pub async fn approve(app: &App, req: &AuthorizeRequest, user: UserId) -> OpResult<String> {
    let code = app.secrets.random_token();
    let row = AuthCode {
        code_hash: app.secrets.hash_token(&code),
        client_id: req.client.client_id.clone(),
        user,
        redirect_uri: req.redirect_uri.clone(),
        code_challenge: req.code_challenge.clone(),
        scopes: req.scopes.clone(),
        resource: req.resource.clone(),
        expires_at: app.now() + chrono::Duration::seconds(CODE_SECS),
    };
    app.store.save_code(&row).await?;
    let iss = issuer(&app.public_url);
    let mut pairs = vec![("code", code.as_str()), ("iss", iss.as_str())];
    if let Some(s) = &req.state {
        pairs.push(("state", s.as_str()));
    }
    Ok(with_query(&req.redirect_uri, &pairs))
}

/// The person said no.
pub fn deny(app: &App, req: &AuthorizeRequest) -> String {
    let iss = issuer(&app.public_url);
    let mut pairs = vec![
        ("error", "access_denied"),
        ("error_description", "the person did not allow access"),
        ("iss", iss.as_str()),
    ];
    if let Some(s) = &req.state {
        pairs.push(("state", s.as_str()));
    }
    with_query(&req.redirect_uri, &pairs)
}

// ---- tokens ---------------------------------------------------------------------------------------

/// The token endpoint's form (RFC 6749 §4.1.3 and §6).
#[derive(Debug, Default, Deserialize)]
pub struct TokenForm {
    #[serde(default)]
    pub grant_type: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub redirect_uri: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub code_verifier: Option<String>,
    #[serde(default)]
    pub refresh_token: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub resource: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct AccessClaims {
    iss: String,
    sub: String,
    aud: String,
    exp: i64,
    iat: i64,
    jti: String,
    scope: String,
    client_id: String,
}

fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

/// Issues an access token and a refresh token of `family` for a grant.
async fn issue(
    app: &App,
    client_id: &str,
    user: UserId,
    scopes: &[Scope],
    resource: &str,
    family: &str,
) -> Result<Value, OAuthFailure> {
    let now = app.now();
    let claims = AccessClaims {
        iss: issuer(&app.public_url),
        sub: user.get().to_string(),
        aud: resource.to_owned(),
        exp: now.timestamp() + ACCESS_TOKEN_SECS,
        iat: now.timestamp(),
        jti: app.secrets.random_token()[..32].to_owned(),
        scope: scope_string(scopes),
        client_id: client_id.to_owned(),
    };
    let keys = crate::quotas::keyring(app).await?;
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.typ = Some("at+jwt".into());
    header.kid = Some(keys.access.kid.clone());
    let access = jsonwebtoken::encode(&header, &claims, &jsonwebtoken::EncodingKey::from_secret(&keys.access.bytes))
        .map_err(|e| OpError::Repo(domain::ports::RepoError::Unexpected(Box::new(e))))?;
    let refresh = app.secrets.random_token();
    let grant = RefreshGrant {
        token_hash: app.secrets.hash_token(&refresh),
        family: family.to_owned(),
        client_id: client_id.to_owned(),
        user,
        scopes: scopes.to_vec(),
        resource: resource.to_owned(),
        expires_at: RefreshGrant::expires(now),
    };
    app.store.save_refresh(&grant, now).await?;
    Ok(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": ACCESS_TOKEN_SECS,
        "refresh_token": refresh,
        "scope": claims.scope,
    }))
}

/// The token endpoint: exchanges a code (with its PKCE verifier) or rotates a refresh token.
pub async fn token(app: &App, f: &TokenForm) -> Result<Value, OAuthFailure> {
    let client_id = f.client_id.as_deref().unwrap_or_default();
    if client_id.is_empty() {
        return Err(bad(E::InvalidRequest, "client_id is required (public clients identify themselves)"));
    }
    match f.grant_type.as_deref() {
        Some("authorization_code") => exchange_code(app, f, client_id).await,
        Some("refresh_token") => refresh(app, f, client_id).await,
        Some(other) => Err(bad(
            E::UnsupportedGrantType,
            format!("grant_type {other:?} is not supported; use authorization_code or refresh_token"),
        )),
        None => Err(bad(E::InvalidRequest, "grant_type is required")),
    }
}

fn check_resource(asked: Option<&str>, granted: &str) -> Result<(), OAuthFailure> {
    match asked {
        None | Some("") => Ok(()),
        Some(r) if r.trim_end_matches('/') == granted => Ok(()),
        Some(r) => {
            Err(bad(E::InvalidTarget, format!("resource {r:?} is not the one access was granted for ({granted})")))
        }
    }
}

async fn exchange_code(app: &App, f: &TokenForm, client_id: &str) -> Result<Value, OAuthFailure> {
    let code = f.code.as_deref().unwrap_or_default();
    let verifier = f.code_verifier.as_deref().unwrap_or_default();
    if code.is_empty() || code.len() > 256 {
        return Err(bad(E::InvalidRequest, "code is required"));
    }
    if !code_verifier_ok(verifier) {
        return Err(bad(E::InvalidRequest, "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~"));
    }
    let now = app.now();
    let hash = app.secrets.hash_token(code);
    let granted = match app.store.redeem_code(&hash, now).await? {
        Redeemed::Fresh(c) => c,
        Redeemed::Replayed(_) => {
            // A code used twice: whoever holds it may be an attacker; the tokens it gave go too.
            app.store.revoke_family(&hash, now).await?;
            return Err(bad(E::InvalidGrant, "this code was already used; the tokens it gave are revoked"));
        }
        Redeemed::Unknown => return Err(bad(E::InvalidGrant, "unknown code")),
    };
    if granted.expires_at <= now {
        return Err(bad(E::InvalidGrant, "the code expired; start the sign-in again"));
    }
    if granted.client_id != client_id {
        return Err(bad(E::InvalidGrant, "the code was issued to another client"));
    }
    if f.redirect_uri.as_deref() != Some(granted.redirect_uri.as_str()) {
        return Err(bad(E::InvalidGrant, "redirect_uri does not match the one of the authorization request"));
    }
    if !app.secrets.same_hash(&s256(verifier), &granted.code_challenge) {
        return Err(bad(E::InvalidGrant, "code_verifier does not match the code_challenge"));
    }
    check_resource(f.resource.as_deref(), &granted.resource)?;
    issue(app, client_id, granted.user, &granted.scopes, &granted.resource, &hash).await
}

async fn refresh(app: &App, f: &TokenForm, client_id: &str) -> Result<Value, OAuthFailure> {
    let token = f.refresh_token.as_deref().unwrap_or_default();
    if token.is_empty() || token.len() > 256 {
        return Err(bad(E::InvalidRequest, "refresh_token is required"));
    }
    let now = app.now();
    let grant = match app.store.redeem_refresh(&app.secrets.hash_token(token), now).await? {
        Redeemed::Fresh(g) => g,
        Redeemed::Replayed(g) => {
            app.store.revoke_family(&g.family, now).await?;
            return Err(bad(
                E::InvalidGrant,
                "this refresh token was already used; every token of this sign-in is now revoked",
            ));
        }
        Redeemed::Unknown => return Err(bad(E::InvalidGrant, "unknown or revoked refresh token")),
    };
    if grant.expires_at <= now {
        return Err(bad(E::InvalidGrant, "the refresh token expired; sign in again"));
    }
    if grant.client_id != client_id {
        app.store.revoke_family(&grant.family, now).await?;
        return Err(bad(E::InvalidGrant, "the refresh token was issued to another client"));
    }
    check_resource(f.resource.as_deref(), &grant.resource)?;
    // A refresh may narrow the scopes, never widen them (RFC 6749 §6).
    let scopes = match f.scope.as_deref().filter(|s| !s.trim().is_empty()) {
        None => grant.scopes.clone(),
        Some(s) => {
            let asked = parse_scopes(Some(s)).map_err(|e| bad(E::InvalidScope, e.problem))?;
            if let Some(extra) = asked.iter().find(|s| !grant.scopes.contains(s)) {
                return Err(bad(E::InvalidScope, format!("{} was not granted", extra.as_str())));
            }
            asked
        }
    };
    issue(app, client_id, grant.user, &scopes, &grant.resource, &grant.family).await
}

/// RFC 7009: revokes the sign-in a refresh token belongs to. Unknown tokens (and access tokens, which
/// expire on their own within minutes) are answered the same way, as §2.2 asks.
pub async fn revoke(app: &App, token: &str) -> OpResult<()> {
    if token.is_empty() || token.len() > 256 {
        return Ok(());
    }
    if let Some(family) = app.store.refresh_family(&app.secrets.hash_token(token)).await? {
        app.store.revoke_family(&family, app.now()).await?;
    }
    Ok(())
}

/// An application a person allowed, with the name to show for it: a registered client's name, or the
/// host of a client ID metadata document.
#[derive(Debug, Clone)]
pub struct Application {
    pub grant: domain::oauth::Grant,
    pub name: String,
}

/// The applications `user` has allowed and not taken back, newest first.
pub async fn applications(app: &App, user: UserId) -> OpResult<Vec<Application>> {
    let grants = app.store.grants_of(user, app.now()).await?;
    let mut out = Vec::with_capacity(grants.len());
    for grant in grants {
        let name = match app.store.client(&grant.client_id).await? {
            Some(c) => c.name,
            None => grant
                .client_id
                .split("://")
                .nth(1)
                .and_then(|r| r.split('/').next())
                .unwrap_or(&grant.client_id)
                .to_owned(),
        };
        out.push(Application { grant, name });
    }
    Ok(out)
}

/// Takes back what `user` allowed an application (its refresh tokens stop working at once; access
/// tokens it holds expire within their 15 minutes); false when the grant is not theirs or gone.
pub async fn revoke_application(app: &App, user: UserId, family: &str) -> OpResult<bool> {
    Ok(app.store.revoke_grant(user, family, app.now()).await?)
}

/// Whether a bearer credential looks like one of our access tokens (a JWT) rather than an API key.
pub fn looks_like_access_token(credential: &str) -> bool {
    credential.starts_with("eyJ") && credential.matches('.').count() == 2
}

/// The caller behind an access token meant for `audience`: signature, issuer, audience and expiry
/// checked, then the account looked up. Every refusal is the same `InvalidToken`.
pub async fn authenticate_access_token(app: &App, token: &str, audience: Audience) -> OpResult<Principal> {
    let keys = crate::quotas::keyring(app).await?;
    // The key the token names (the previous root secret's, after a rotation); one we never had: refused.
    let kid = jsonwebtoken::decode_header(token).map_err(|_| OpError::InvalidToken)?.kid;
    let key = keys.verifying(kid.as_deref()).ok_or(OpError::InvalidToken)?.bytes.clone();
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    v.set_issuer(&[issuer(&app.public_url)]);
    v.set_audience(&[audience.url(&app.public_url)]);
    // Expiry is checked below against the service's clock (the Clock port), not the system's.
    v.validate_exp = false;
    v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let data = jsonwebtoken::decode::<AccessClaims>(token, &jsonwebtoken::DecodingKey::from_secret(&key), &v).map_err(
        |e| {
            tracing::debug!(reason = %e, "refused an access token");
            OpError::InvalidToken
        },
    )?;
    let c = data.claims;
    if c.exp <= app.now().timestamp() {
        return Err(OpError::InvalidToken);
    }
    let Ok(id) = c.sub.parse::<i64>() else { return Err(OpError::InvalidToken) };
    let Some(user) = crate::accounts::active(app.store.get_user(UserId::from_db(id)).await?) else {
        return Err(OpError::InvalidToken);
    };
    // Issued before the account's address was verified: refused from then on. A password reset that
    // takes over an account someone made with another person's address verifies it, and the access
    // tokens that someone held must stop then, not up to 15 minutes later (their refresh tokens are
    // revoked with it). An owner who verifies by the emailed link has their client refresh once.
    if user.email_verified_at.is_some_and(|at| c.iat < at.timestamp()) {
        return Err(OpError::InvalidToken);
    }
    Ok(Principal {
        user_id: user.id,
        email: user.email,
        is_admin: user.is_admin,
        scopes: c.scope.split(' ').filter_map(|s| Scope::parse(s).ok()).collect(),
        via: Via::OAuth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_is_base64url_of_sha256_without_padding() {
        // Worked out independently: base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=").
        assert_eq!(s256("dBjftJeZ4CVP-mJ92K9DcBXXLZxYfY6dWG7GDCrOf7I"), "STn9BZZqMY3XQsnSyCSQS7IZKPa2aLRvoRhWoB0SpNw");
    }

    #[test]
    fn errors_go_back_in_the_query() {
        assert_eq!(with_query("https://c.example/cb", &[("a", "b c")]), "https://c.example/cb?a=b%20c");
        assert_eq!(with_query("https://c.example/cb?x=1", &[("state", "s&t")]), "https://c.example/cb?x=1&state=s%26t");
    }

    #[test]
    fn audiences() {
        assert_eq!(Audience::of("https://l.example/mcp", "https://l.example"), Some(Audience::Mcp));
        assert_eq!(Audience::of("https://l.example/mcp/", "https://l.example/"), Some(Audience::Mcp));
        assert_eq!(Audience::of("https://l.example/api/v1", "https://l.example"), Some(Audience::Api));
        assert_eq!(Audience::of("https://evil.example/mcp", "https://l.example"), None);
    }

    #[test]
    fn metadata_urls_need_a_path_and_https() {
        let none: &[String] = &[];
        assert!(url_with_path("https://app.example/oauth/client.json", none).is_some());
        assert!(url_with_path("https://app.example/", none).is_none());
        assert!(url_with_path("https://app.example", none).is_none());
        assert!(url_with_path("ftp://app.example/x", none).is_none());
        // Plain http only to a host:port the operator allowed.
        assert!(url_with_path("http://app.example/oauth/client.json", none).is_none());
        let allowed = ["127.0.0.1:4000".to_owned()];
        assert!(url_with_path("http://127.0.0.1:4000/client.json", &allowed).is_some());
        assert!(url_with_path("http://127.0.0.1:4001/client.json", &allowed).is_none());
    }
}
