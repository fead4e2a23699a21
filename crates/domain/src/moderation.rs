//! Moderation: the site team hides listings and suspends accounts, with a reason; people report
//! listings; domains can be blocked from submission; every action of the site team is written to an
//! audit log (who, when, what, why). A hidden listing's status is `hidden` (see
//! [`crate::listing::Lifecycle::hide`]), so every public read, which shows only `live`, leaves it out.

use crate::ids::{ListingId, UserId};
use crate::{ValidationError, bounded_text};
use chrono::{DateTime, Utc};

bounded_text!(
    /// Why the site team hid a listing or suspended an account: shown to its owner, kept in the audit log.
    ModerationReason,
    "reason",
    500,
    non_empty
);

bounded_text!(
    /// What a person adds to a report (optional).
    ReportNote,
    "note",
    1000
);

/// Why a listing is hidden: the site team hid it, or its owner's account is suspended (restoring the
/// account restores only these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldCause {
    Moderator,
    Suspension,
}

impl HoldCause {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Moderator => "moderator",
            Self::Suspension => "suspension",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Moderator, Self::Suspension].into_iter().find(|c| c.as_str() == raw)
    }
}

/// Why and since when a listing is hidden, and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub reason: String,
    pub cause: HoldCause,
    pub at: DateTime<Utc>,
    /// Who hid it: an admin's email, or `cli` for the operator's command line.
    pub by: String,
}

/// What the site team did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    HideListing,
    RestoreListing,
    SuspendUser,
    RestoreUser,
    BlockDomain,
    UnblockDomain,
    CloseReports,
}

impl AuditAction {
    pub const ALL: [Self; 7] = [
        Self::HideListing,
        Self::RestoreListing,
        Self::SuspendUser,
        Self::RestoreUser,
        Self::BlockDomain,
        Self::UnblockDomain,
        Self::CloseReports,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::HideListing => "hide_listing",
            Self::RestoreListing => "restore_listing",
            Self::SuspendUser => "suspend_user",
            Self::RestoreUser => "restore_user",
            Self::BlockDomain => "block_domain",
            Self::UnblockDomain => "unblock_domain",
            Self::CloseReports => "close_reports",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == raw)
    }
}

/// One line of the audit log, to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAuditEntry {
    pub at: DateTime<Utc>,
    /// An admin's email, or `cli`.
    pub actor: String,
    pub action: AuditAction,
    /// What it was done to: a listing's slug, an account's email, a domain.
    pub target: String,
    pub reason: String,
}

/// One line of the audit log, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: i64,
    pub entry: NewAuditEntry,
}

/// What a person reports a listing for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReportReason {
    Spam,
    Scam,
    BrokenLink,
    Duplicate,
    Inappropriate,
    Other,
}

impl ReportReason {
    pub const ALL: [Self; 6] =
        [Self::Spam, Self::Scam, Self::BrokenLink, Self::Duplicate, Self::Inappropriate, Self::Other];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Spam => "spam",
            Self::Scam => "scam",
            Self::BrokenLink => "broken_link",
            Self::Duplicate => "duplicate",
            Self::Inappropriate => "inappropriate",
            Self::Other => "other",
        }
    }

    /// For a person.
    pub fn label(self) -> &'static str {
        match self {
            Self::Spam => "Spam",
            Self::Scam => "Scam or fraud",
            Self::BrokenLink => "Broken link",
            Self::Duplicate => "Duplicate of another listing",
            Self::Inappropriate => "Inappropriate content",
            Self::Other => "Something else",
        }
    }

    pub fn parse(field: &str, raw: &str) -> Result<Self, ValidationError> {
        Self::ALL.into_iter().find(|r| r.as_str() == raw).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|r| r.as_str()).collect();
            ValidationError::new(field, format!("must be one of {}", names.join(", ")))
        })
    }
}

/// A person's report on a listing, to be stored (one per person and listing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReport {
    pub listing: ListingId,
    pub reporter: UserId,
    pub reason: ReportReason,
    pub note: ReportNote,
    pub at: DateTime<Utc>,
}

/// A stored report, with what the queue shows beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub id: i64,
    pub listing: ListingId,
    pub listing_slug: String,
    pub listing_name: String,
    /// The reporter's email (`None` once the account was deleted).
    pub reporter: Option<String>,
    pub reason: ReportReason,
    pub note: String,
    pub at: DateTime<Utc>,
    /// When the site team closed it (hid the listing or dismissed the reports); open while `None`.
    pub closed_at: Option<DateTime<Utc>>,
}

/// The roles at a listing whose holder controls it (the maker who submitted it, a person who proved
/// domain control): suspending the holder hides the listing. A co-founder's suspension does not hide
/// the listing of the others.
pub const CONTROLLING_ROLES: [&str; 2] = ["owner", "claimant"];

/// Reports a person may file in a day (every listing together).
pub const REPORTS_PER_ACCOUNT_PER_DAY: i64 = 20;

/// A domain that cannot be submitted or claimed: lower-case, without `www.`; it blocks its subdomains.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BlockedDomain(String);

impl BlockedDomain {
    /// `evil.example`, `EVIL.example.`, `https://www.evil.example/x` all give `evil.example`.
    pub fn parse(field: &str, raw: &str) -> Result<Self, ValidationError> {
        let s = raw.trim().to_ascii_lowercase();
        let s = s.split_once("://").map_or(s.as_str(), |(_, rest)| rest);
        let host = s.split(['/', '?', '#']).next().unwrap_or_default();
        let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
        let host = host.split(':').next().unwrap_or_default().trim_end_matches('.');
        let host = host.strip_prefix("www.").unwrap_or(host);
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if host.len() > 253 || !host.contains('.') || !host.split('.').all(label_ok) {
            return Err(ValidationError::new(field, "must be a domain name such as spam.example"));
        }
        Ok(Self(host.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `host` (a URL's host) is this domain or one of its subdomains.
    pub fn covers(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        host == self.0 || host.strip_suffix(&self.0).is_some_and(|rest| rest.ends_with('.'))
    }
}

/// The domains `host` falls under, most specific first (`a.b.example` → `a.b.example`, `b.example`,
/// `example`): a store looks each up in the blocklist.
pub fn domains_of(host: &str) -> Vec<String> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_owned();
    let mut out = vec![host.clone()];
    let mut rest = host.as_str();
    while let Some((_, parent)) = rest.split_once('.') {
        out.push(parent.to_owned());
        rest = parent;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_domain_is_read_from_what_an_operator_pastes_and_covers_its_subdomains() {
        for raw in ["spam.example", "SPAM.example.", "https://www.spam.example/buy?x=1", "http://u@spam.example:8080"] {
            assert_eq!(BlockedDomain::parse("domain", raw).unwrap().as_str(), "spam.example", "{raw}");
        }
        for bad in
            ["", "localhost", "spam..example", "-spam.example", "sp am.example", &format!("{}.example", "a".repeat(64))]
        {
            assert_eq!(BlockedDomain::parse("domain", bad).unwrap_err().field, "domain", "{bad:?}");
        }
        let d = BlockedDomain::parse("domain", "spam.example").unwrap();
        assert!(d.covers("spam.example") && d.covers("shop.spam.example") && d.covers("SPAM.EXAMPLE."));
        assert!(!d.covers("notspam.example") && !d.covers("spam.example.org"));
        assert_eq!(domains_of("www.a.b.example"), ["a.b.example", "b.example", "example"]);
    }

    #[test]
    fn reasons_and_notes_are_bounded() {
        assert!(ModerationReason::parse(" ").is_err(), "a reason is required");
        assert!(ModerationReason::parse("x".repeat(500)).is_ok());
        assert_eq!(ModerationReason::parse("x".repeat(501)).unwrap_err().field, "reason");
        assert!(ReportNote::parse("").is_ok(), "a note is optional");
        assert!(ReportNote::parse("é".repeat(1000)).is_ok());
        assert_eq!(ReportNote::parse("é".repeat(1001)).unwrap_err().field, "note");
        assert_eq!(ReportReason::parse("reason", "broken_link").unwrap(), ReportReason::BrokenLink);
        let e = ReportReason::parse("reason", "meh").unwrap_err();
        assert!(e.problem.contains("spam, scam, broken_link, duplicate, inappropriate, other"), "{e:?}");
        for a in AuditAction::ALL {
            assert_eq!(AuditAction::parse(a.as_str()), Some(a));
        }
    }
}
