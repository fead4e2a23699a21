//! OAuth 2.1 as values: the rules of the authorization server that signs MCP clients (and REST
//! clients) in on a person's behalf. Authorization code with PKCE S256 only, public clients only
//! (`token_endpoint_auth_method: none`), exact redirect-URI matching, single-use codes, audience-bound
//! short-lived access tokens and rotating refresh tokens. Hashing, randomness, signing and storage are
//! adapters' work; nothing here does I/O.

use crate::ValidationError;
use crate::ids::UserId;
use crate::user::Scope;
use chrono::{DateTime, Duration, Utc};

/// How long an access token lives (a JWT; not revocable, so short).
pub const ACCESS_TOKEN_SECS: i64 = 15 * 60;
/// How long a refresh token lives; each use replaces it with a new one.
pub const REFRESH_TOKEN_DAYS: i64 = 30;
/// How long an authorization code may wait for its exchange.
pub const CODE_SECS: i64 = 5 * 60;
/// Redirect URIs a registered client may have.
pub const MAX_REDIRECT_URIS: usize = 10;
/// Longest client name kept.
pub const MAX_CLIENT_NAME: usize = 100;
/// Longest redirect URI, client id URL or `state` accepted.
pub const MAX_URI: usize = 2048;
/// Clients one network (an IPv4 address, an IPv6 /64) may register in an hour. Registration is open
/// (MCP clients register themselves); a person sets up a client or two, a script thousands.
pub const REGISTRATIONS_PER_NETWORK_PER_HOUR: i64 = 30;
/// How long a registered client nobody has allowed yet is kept: past this it is forgotten (the person
/// who abandoned the consent page registers again by starting over).
pub const UNUSED_CLIENT_DAYS: i64 = 7;

/// A client the service knows: registered dynamically (a `ldc_…` id) or described by a client ID
/// metadata document (the id is the document's https URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    pub client_id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// The client's home page, shown on the consent page when given.
    pub client_uri: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl OAuthClient {
    /// Exact string match, as OAuth 2.1 requires (no prefix or pattern matching), except that a
    /// loopback redirect may use any port (RFC 8252 §7.3: native apps pick a free port at run time).
    pub fn allows_redirect(&self, uri: &str) -> bool {
        self.redirect_uris.iter().any(|r| r == uri || same_loopback_but_port(r, uri))
    }

    /// Whether the id is a client ID metadata document URL rather than a registered id.
    pub fn is_metadata_document(client_id: &str) -> bool {
        client_id.starts_with("https://") || client_id.starts_with("http://")
    }
}

fn split_loopback(uri: &str) -> Option<(&str, &str)> {
    let rest = uri.strip_prefix("http://")?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = match authority.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => authority,
    };
    matches!(host, "127.0.0.1" | "[::1]" | "localhost").then_some((host, path))
}

fn same_loopback_but_port(registered: &str, asked: &str) -> bool {
    match (split_loopback(registered), split_loopback(asked)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A redirect URI a client may register: `https://…`, `http://` to a loopback host (native apps), or
/// a private-use scheme with a dot (RFC 8252 §7.1, e.g. `com.example.app:/cb`); never a fragment,
/// never `javascript:`/`data:`-like schemes.
pub fn redirect_uri(raw: &str) -> Result<String, ValidationError> {
    let field = "redirect_uris";
    if raw.is_empty() || raw.len() > MAX_URI {
        return Err(ValidationError::new(field, format!("each must be 1 to {MAX_URI} characters")));
    }
    if raw.contains('#') || raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ValidationError::new(field, format!("{raw:?} has a fragment or a space")));
    }
    let Some((scheme, rest)) = raw.split_once(':') else {
        return Err(ValidationError::new(field, format!("{raw:?} is not an absolute URI")));
    };
    let ok = match scheme {
        "https" => rest.starts_with("//") && rest.len() > 2 && !rest[2..].starts_with('/'),
        "http" => split_loopback(raw).is_some(),
        s => {
            s.contains('.')
                && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-".contains(c))
                && s.starts_with(|c: char| c.is_ascii_lowercase())
        }
    };
    if ok {
        Ok(raw.to_owned())
    } else {
        Err(ValidationError::new(
            field,
            format!(
                "{raw:?} must be https://, http:// to 127.0.0.1, [::1] or localhost, or a private-use scheme such as com.example.app:/callback"
            ),
        ))
    }
}

/// A PKCE code verifier: 43 to 128 characters of `A-Z a-z 0-9 - . _ ~` (RFC 7636 §4.1).
pub fn code_verifier_ok(v: &str) -> bool {
    (43..=128).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// An S256 code challenge: base64url without padding of a SHA-256, so exactly 43 characters.
pub fn code_challenge_ok(c: &str) -> bool {
    c.len() == 43 && c.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
}

/// Scopes as OAuth writes them: space-separated. Unknown names are an error; empty means "all the
/// service has" (the person still sees each on the consent page).
pub fn parse_scopes(raw: Option<&str>) -> Result<Vec<Scope>, ValidationError> {
    let raw = raw.unwrap_or_default();
    if raw.trim().is_empty() {
        return Ok(Scope::ALL.to_vec());
    }
    let mut out = raw
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(|s| Scope::parse(s).map_err(|_| ValidationError::new("scope", format!("unknown scope {s:?}"))))
        .collect::<Result<Vec<_>, _>>()?;
    out.sort();
    out.dedup();
    Ok(out)
}

/// Space-separated, as tokens and metadata carry them.
pub fn scope_string(scopes: &[Scope]) -> String {
    scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
}

/// What a person allowed, waiting to be exchanged for tokens. Only the code's hash is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthCode {
    pub code_hash: String,
    pub client_id: String,
    pub user: UserId,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub scopes: Vec<Scope>,
    /// The resource (audience) the tokens will be bound to.
    pub resource: String,
    pub expires_at: DateTime<Utc>,
}

/// A refresh token's grant. Tokens of one authorization form a family (named by the code's hash):
/// presenting a used token again revokes the whole family (RFC 9700 §4.14.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshGrant {
    pub token_hash: String,
    pub family: String,
    pub client_id: String,
    pub user: UserId,
    pub scopes: Vec<Scope>,
    pub resource: String,
    pub expires_at: DateTime<Utc>,
}

/// An application a person allowed (one refresh-token family), as their account page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub family: String,
    pub client_id: String,
    pub scopes: Vec<Scope>,
    pub resource: String,
    pub allowed_at: DateTime<Utc>,
    pub last_used_at: DateTime<Utc>,
}

impl RefreshGrant {
    pub fn expires(now: DateTime<Utc>) -> DateTime<Utc> {
        now + Duration::days(REFRESH_TOKEN_DAYS)
    }
}

/// What redeeming a single-use secret found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redeemed<T> {
    /// First use: it is now spent.
    Fresh(T),
    /// Spent before: a replay (its family must be revoked).
    Replayed(T),
    /// Unknown or revoked.
    Unknown,
}

/// The error codes of RFC 6749 §5.2 / §4.1.2.1 the server answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OAuthErrorCode {
    InvalidRequest,
    InvalidClient,
    InvalidGrant,
    UnauthorizedClient,
    UnsupportedGrantType,
    UnsupportedResponseType,
    InvalidScope,
    InvalidTarget,
    AccessDenied,
    InvalidRedirectUri,
    InvalidClientMetadata,
}

impl OAuthErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant => "invalid_grant",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidScope => "invalid_scope",
            Self::InvalidTarget => "invalid_target",
            Self::AccessDenied => "access_denied",
            Self::InvalidRedirectUri => "invalid_redirect_uri",
            Self::InvalidClientMetadata => "invalid_client_metadata",
        }
    }
}

/// An OAuth error: its code and a description for the developer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {description}", code.as_str())]
pub struct OAuthError {
    pub code: OAuthErrorCode,
    pub description: String,
}

impl OAuthError {
    pub fn new(code: OAuthErrorCode, description: impl Into<String>) -> Self {
        Self { code, description: description.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(uris: &[&str]) -> OAuthClient {
        OAuthClient {
            client_id: "ldc_x".into(),
            name: "x".into(),
            redirect_uris: uris.iter().map(|s| (*s).to_owned()).collect(),
            client_uri: None,
            created_at: DateTime::<Utc>::UNIX_EPOCH,
        }
    }

    #[test]
    fn redirects_match_exactly_but_loopback_ports_may_change() {
        let c = client(&["https://app.example/cb", "http://127.0.0.1:3000/callback"]);
        assert!(c.allows_redirect("https://app.example/cb"));
        assert!(!c.allows_redirect("https://app.example/cb/"));
        assert!(!c.allows_redirect("https://app.example/cb?x=1"));
        assert!(!c.allows_redirect("https://APP.example/cb"));
        assert!(c.allows_redirect("http://127.0.0.1:49152/callback"));
        assert!(!c.allows_redirect("http://127.0.0.1:49152/other"));
        assert!(!c.allows_redirect("http://localhost:3000/callback"), "another host is another URI");
    }

    #[test]
    fn redirect_uri_rules() {
        for ok in ["https://app.example/cb", "http://localhost:8080/cb", "http://[::1]/x", "com.example.app:/cb"] {
            assert!(redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://app.example/cb",
            "javascript:alert(1)",
            "data:text/html,x",
            "https://app.example/cb#frag",
            "https:///path",
            "relative/cb",
            "",
            "https://a.example/ cb",
        ] {
            assert!(redirect_uri(bad).is_err(), "{bad}");
        }
        assert!(redirect_uri(&format!("https://a.example/{}", "x".repeat(MAX_URI - 18))).is_ok());
        assert!(redirect_uri(&format!("https://a.example/{}", "x".repeat(MAX_URI - 17))).is_err());
    }

    #[test]
    fn pkce_shapes() {
        assert!(code_verifier_ok(&"a".repeat(43)));
        assert!(!code_verifier_ok(&"a".repeat(42)));
        assert!(code_verifier_ok(&"a-._~".repeat(26)[..128]));
        assert!(!code_verifier_ok(&"a".repeat(129)));
        assert!(!code_verifier_ok(&format!("{}+", "a".repeat(43))));
        assert!(code_challenge_ok("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!code_challenge_ok("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c"));
    }

    #[test]
    fn scopes_space_separated() {
        assert_eq!(parse_scopes(None).unwrap(), Scope::ALL.to_vec());
        assert_eq!(
            parse_scopes(Some("orders:write account:read")).unwrap(),
            vec![Scope::AccountRead, Scope::OrdersWrite]
        );
        assert_eq!(parse_scopes(Some("account:read admin")).unwrap_err().field, "scope");
        assert_eq!(scope_string(&[Scope::AccountRead, Scope::ListingsWrite]), "account:read listings:write");
    }
}
