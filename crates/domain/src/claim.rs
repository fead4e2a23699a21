//! Claims: proving control of a listing's domain by DNS, meta tag, file or email.

use crate::ValidationError;
use crate::ids::{ClaimId, ListingId, UserId};
use crate::listing::TransitionError;
use chrono::{DateTime, Duration, Utc};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimMethod {
    Dns,
    Meta,
    File,
    Email,
}

impl ClaimMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dns => "dns",
            Self::Meta => "meta",
            Self::File => "file",
            Self::Email => "email",
        }
    }

    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        [Self::Dns, Self::Meta, Self::File, Self::Email]
            .into_iter()
            .find(|m| m.as_str() == raw)
            .ok_or_else(|| ValidationError::new("method", "must be one of dns, meta, file, email"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimStatus {
    Pending,
    Verified,
    Expired,
}

impl ClaimStatus {
    /// A claim's token is valid for 7 days.
    pub const VALIDITY_DAYS: i64 = 7;

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Verified => "verified",
            Self::Expired => "expired",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Pending, Self::Verified, Self::Expired].into_iter().find(|s| s.as_str() == raw)
    }

    fn refuse(self, action: &'static str) -> TransitionError {
        TransitionError { machine: "claim", action, current: self.as_str() }
    }

    /// When a claim started at `created_at` expires.
    pub fn expires_at(created_at: DateTime<Utc>) -> DateTime<Utc> {
        created_at + Duration::days(Self::VALIDITY_DAYS)
    }

    /// Verification succeeds only for a pending claim until it expires; a late one expires.
    pub fn verify(&mut self, expires_at: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), TransitionError> {
        match self {
            Self::Pending if now <= expires_at => {
                *self = Self::Verified;
                Ok(())
            }
            Self::Pending => {
                *self = Self::Expired;
                Err(self.refuse("verify"))
            }
            _ => Err(self.refuse("verify")),
        }
    }
}

/// One look for a claim's proof: when, whether it proved control, what was looked for and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimCheck {
    pub at: DateTime<Utc>,
    pub verified: bool,
    pub looked_for: String,
    pub found: String,
}

/// A claim as stored: who claims which listing by which method, with its public token (DNS, meta and
/// file claims; an email claim's link token is kept only as a hash) and its last check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub id: ClaimId,
    pub user: UserId,
    pub listing: ListingId,
    pub method: ClaimMethod,
    pub email: Option<String>,
    pub token: Option<String>,
    /// As stored: pending or verified ([`Claim::status_at`] says expired). Private: it moves only
    /// through [`Claim::verified`] and a compare-and-set in storage.
    status: ClaimStatus,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub verified_at: Option<DateTime<Utc>>,
    pub last_check: Option<ClaimCheck>,
}

/// A claim as storage reads it back, every field public: [`Claim::from`] it. Storage only holds
/// statuses the transitions produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRecord {
    pub id: ClaimId,
    pub user: UserId,
    pub listing: ListingId,
    pub method: ClaimMethod,
    pub email: Option<String>,
    pub token: Option<String>,
    /// As stored: pending or verified ([`Claim::status_at`] says expired).
    pub status: ClaimStatus,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub verified_at: Option<DateTime<Utc>>,
    pub last_check: Option<ClaimCheck>,
}

impl From<ClaimRecord> for Claim {
    fn from(r: ClaimRecord) -> Self {
        Self {
            id: r.id,
            user: r.user,
            listing: r.listing,
            method: r.method,
            email: r.email,
            token: r.token,
            status: r.status,
            created_at: r.created_at,
            expires_at: r.expires_at,
            verified_at: r.verified_at,
            last_check: r.last_check,
        }
    }
}

impl Claim {
    /// The status as stored (see [`Claim::status_at`] for what it is now).
    pub fn status(&self) -> ClaimStatus {
        self.status
    }

    /// The status verifying this claim at `at` moves it to, for storage to set with compare-and-set
    /// from [`Claim::status`]; refused when it is not pending or has expired by then.
    pub fn verified(&self, at: DateTime<Utc>) -> Result<ClaimStatus, TransitionError> {
        let mut next = self.status;
        next.verify(self.expires_at, at)?;
        Ok(next)
    }

    /// The status as of `now`: a pending claim past its expiry is expired.
    pub fn status_at(&self, now: DateTime<Utc>) -> ClaimStatus {
        match self.status {
            ClaimStatus::Pending if now > self.expires_at => ClaimStatus::Expired,
            s => s,
        }
    }
}

/// A claim to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewClaim {
    pub user: UserId,
    pub listing: ListingId,
    pub method: ClaimMethod,
    pub email: Option<String>,
    pub token: Option<String>,
    /// Hash of the secret (the email link's token; for other methods the public token's).
    pub token_hash: String,
    pub created_at: DateTime<Utc>,
}

/// What the claimant publishes for a method (or is told, for email).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Instructions {
    /// A TXT record at `name` whose value is `value` (other TXT records may stay).
    Dns { name: String, value: String },
    /// A `<meta>` tag in the homepage's HTML.
    Meta { tag: String, name: String, content: String },
    /// A file at `url` (path `path`) whose body is `body`.
    File { url: String, path: String, body: String },
    /// A link was emailed to `to`; opening it verifies.
    Email { to: String },
}

/// The DNS name, meta name and file path claims use; fixed so a site can keep them across claims.
pub const DNS_LABEL: &str = "_launchdir-challenge";
pub const META_NAME: &str = "launchdir-verification";
pub const FILE_PATH: &str = "/.well-known/launchdir-verification.txt";
/// The only local parts an email claim may go to (those a domain reserves for its administrators,
/// as certificate authorities accept them).
pub const EMAIL_LOCAL_PARTS: [&str; 5] = ["admin", "administrator", "webmaster", "hostmaster", "postmaster"];

/// The value a DNS record, meta tag or file must carry for `token`.
pub fn proof(token: &str) -> String {
    format!("launchdir-verification={token}")
}

/// `scheme://host[:port]` of `url`: where the verification file lives, whatever path the homepage has.
pub fn origin(url: &str) -> String {
    let (scheme, rest) = url.trim().split_once("://").unwrap_or(("https", url.trim()));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    format!("{}://{authority}", scheme.to_ascii_lowercase())
}

/// The URL of the verification file for a listing whose homepage is `homepage`.
pub fn file_url(homepage: &str) -> String {
    format!("{}{FILE_PATH}", origin(homepage))
}

/// What to publish for a claim on `domain` (the listing's, without `www.`) with `token`.
pub fn instructions(
    method: ClaimMethod,
    domain: &str,
    homepage: &str,
    token: &str,
    email: Option<&str>,
) -> Instructions {
    match method {
        ClaimMethod::Dns => Instructions::Dns { name: format!("{DNS_LABEL}.{domain}"), value: proof(token) },
        ClaimMethod::Meta => Instructions::Meta {
            tag: format!("<meta name=\"{META_NAME}\" content=\"{token}\">"),
            name: META_NAME.into(),
            content: token.into(),
        },
        ClaimMethod::File => Instructions::File { url: file_url(homepage), path: FILE_PATH.into(), body: proof(token) },
        ClaimMethod::Email => Instructions::Email { to: email.unwrap_or_default().to_owned() },
    }
}

/// The listing's domain as claims name it: lower case, without `www.`.
pub fn claim_domain(listing_domain: &str) -> String {
    let d = listing_domain.trim().trim_end_matches('.').to_ascii_lowercase();
    d.strip_prefix("www.").map(str::to_owned).unwrap_or(d)
}

/// Checks the address of an email claim: one of [`EMAIL_LOCAL_PARTS`] at the listing's domain.
pub fn check_claim_email(email: &str, listing_domain: &str) -> Result<String, ValidationError> {
    if email.chars().count() > 254 {
        return Err(ValidationError::new("email", "longer than 254 characters"));
    }
    let email = email.trim().to_ascii_lowercase();
    let domain = claim_domain(listing_domain);
    let Some((local, at)) = email.rsplit_once('@') else {
        return Err(ValidationError::new("email", "is not an email address"));
    };
    if at != domain {
        return Err(ValidationError::new("email", format!("must be an address at {domain}, the listing's domain")));
    }
    if !EMAIL_LOCAL_PARTS.contains(&local) {
        return Err(ValidationError::new(
            "email",
            format!(
                "must be one of {}",
                EMAIL_LOCAL_PARTS.iter().map(|l| format!("{l}@{domain}")).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(email)
}

/// Why a check did not verify: what was looked for and what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("looked for {looked_for}; found {found}")]
pub struct NotProven {
    pub looked_for: String,
    pub found: String,
}

fn summary(items: &[String]) -> String {
    match items {
        [] => "nothing".into(),
        [one] => format!("{one:?}"),
        many => format!(
            "{} values: {}",
            many.len(),
            many.iter().take(5).map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Whether one of the TXT records (all of them are scanned) carries the proof for `token`.
pub fn check_txt(records: &[String], name: &str, token: &str) -> Result<(), NotProven> {
    let want = proof(token);
    if records.iter().any(|r| r.trim() == want) {
        return Ok(());
    }
    Err(NotProven {
        looked_for: format!("a TXT record {want:?} at {name}"),
        found: format!("TXT {}", summary(records)),
    })
}

/// Whether one of the homepage's `launchdir-verification` meta tags carries `token`.
pub fn check_meta(contents: &[String], token: &str) -> Result<(), NotProven> {
    if contents.iter().any(|c| c.trim() == token) {
        return Ok(());
    }
    Err(NotProven {
        looked_for: format!("<meta name=\"{META_NAME}\" content=\"{token}\"> on the homepage"),
        found: format!("{META_NAME} meta tags with {}", summary(contents)),
    })
}

/// Whether the verification file's body is the proof for `token` (surrounding whitespace ignored).
pub fn check_file(body: &str, token: &str) -> Result<(), NotProven> {
    let want = proof(token);
    if body.trim() == want {
        return Ok(());
    }
    let shown: String = body.trim().chars().take(120).collect();
    Err(NotProven { looked_for: format!("{FILE_PATH} containing {want:?}"), found: format!("{shown:?}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_expire_after_seven_days() {
        let t0 = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let end = ClaimStatus::expires_at(t0);
        let mut ok = ClaimStatus::Pending;
        ok.verify(end, t0 + Duration::days(7)).unwrap();
        assert_eq!(ok, ClaimStatus::Verified);
        assert!(ok.verify(end, t0).is_err(), "verified once");
        let mut late = ClaimStatus::Pending;
        let e = late.verify(end, t0 + Duration::days(7) + Duration::seconds(1)).unwrap_err();
        assert_eq!((late, e.current), (ClaimStatus::Expired, "expired"));
        assert!(ClaimMethod::parse("sms").is_err());
    }

    #[test]
    fn instructions_name_what_to_publish() {
        let dns = instructions(ClaimMethod::Dns, "acme.example", "https://acme.example/", "t0k", None);
        assert_eq!(
            dns,
            Instructions::Dns {
                name: "_launchdir-challenge.acme.example".into(),
                value: "launchdir-verification=t0k".into()
            }
        );
        let file = instructions(ClaimMethod::File, "acme.example", "https://acme.example/app?x=1", "t0k", None);
        assert!(
            matches!(file, Instructions::File { url, .. } if url == "https://acme.example/.well-known/launchdir-verification.txt")
        );
        assert_eq!(claim_domain("WWW.Acme.Example."), "acme.example");
    }

    #[test]
    fn proofs_are_found_or_the_reason_says_what_was_seen() {
        let recs = vec!["v=spf1 -all".to_owned(), "launchdir-verification=good".to_owned()];
        assert!(check_txt(&recs, "_launchdir-challenge.acme.example", "good").is_ok());
        let e = check_txt(&recs, "_launchdir-challenge.acme.example", "other").unwrap_err();
        assert!(e.found.contains("v=spf1") && e.looked_for.contains("launchdir-verification=other"), "{e}");
        assert!(check_meta(&["good".into()], "good").is_ok());
        assert!(check_meta(&[], "good").unwrap_err().found.contains("nothing"));
        assert!(check_file("launchdir-verification=good\n", "good").is_ok());
        assert!(check_file("launchdir-verification=bad", "good").is_err());
    }

    #[test]
    fn email_claims_go_to_an_administrator_of_the_listings_domain() {
        assert_eq!(check_claim_email("Admin@Acme.example", "www.acme.example").unwrap(), "admin@acme.example");
        assert_eq!(check_claim_email("ann@acme.example", "acme.example").unwrap_err().field, "email");
        let other = check_claim_email("admin@evil.example", "acme.example").unwrap_err();
        assert!(other.problem.contains("acme.example"), "{other:?}");
        assert!(check_claim_email("admin", "acme.example").is_err());
    }
}
