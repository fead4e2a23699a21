//! Users, their email addresses, and the scopes access is granted in.

use crate::ValidationError;
use crate::ids::UserId;
use chrono::{DateTime, Utc};
use std::fmt;

/// An email address: at most 254 characters, one `@`, a non-empty local part and a dotted domain
/// without spaces. Stored with the domain lowercased.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    pub const MAX: usize = 254;
    /// The shortest address `parse` can accept: a local part, `@`, a domain.
    pub const MIN: usize = 3;

    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let raw = raw.trim();
        let bad = || ValidationError::new("email", "must be an email address");
        if raw.chars().count() > Self::MAX {
            return Err(ValidationError::new("email", "longer than 254 characters"));
        }
        let (local, domain) = raw.split_once('@').ok_or_else(bad)?;
        let ok = !local.is_empty()
            && local.len() <= 64
            && !domain.contains('@')
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains("..")
            && !raw.chars().any(|c| c.is_whitespace() || c.is_control() || c == '<' || c == '>')
            && domain.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '.');
        if !ok {
            return Err(bad());
        }
        Ok(Self(format!("{local}@{}", domain.to_lowercase())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn domain(&self) -> &str {
        self.0.split_once('@').map_or("", |(_, d)| d)
    }

    pub fn local_part(&self) -> &str {
        self.0.split_once('@').map_or("", |(l, _)| l)
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    AccountRead,
    ListingsWrite,
    OrdersWrite,
}

impl Scope {
    pub const ALL: [Self; 3] = [Self::AccountRead, Self::ListingsWrite, Self::OrdersWrite];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::AccountRead => "account:read",
            Self::ListingsWrite => "listings:write",
            Self::OrdersWrite => "orders:write",
        }
    }

    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw.trim()).ok_or_else(|| {
            ValidationError::new(
                "scopes",
                format!("unknown scope {raw:?}; use account:read, listings:write, orders:write"),
            )
        })
    }

    /// Parses a comma list (`account:read,listings:write`); refuses an empty list.
    pub fn parse_list(raw: &str) -> Result<Vec<Self>, ValidationError> {
        let mut out: Vec<Self> =
            raw.split(',').filter(|s| !s.trim().is_empty()).map(Self::parse).collect::<Result<_, _>>()?;
        out.sort();
        out.dedup();
        if out.is_empty() {
            return Err(ValidationError::new("scopes", "name at least one scope"));
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: UserId,
    pub email: Email,
    pub display_name: String,
    pub is_admin: bool,
    pub created_at: DateTime<Utc>,
    /// When the account proved it receives mail at its address (a link it opened, signed in); `None`
    /// until then. Voting, inviting and email claims need it.
    pub email_verified_at: Option<DateTime<Utc>>,
    /// When the site team suspended the account (`None`: not suspended). A suspended account's
    /// sessions, API keys and OAuth grants are refused and it cannot sign in.
    pub suspended_at: Option<DateTime<Utc>>,
}

impl User {
    pub fn email_verified(&self) -> bool {
        self.email_verified_at.is_some()
    }

    pub fn suspended(&self) -> bool {
        self.suspended_at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        assert_eq!(Email::parse("Ann@Acme.Example").unwrap().as_str(), "Ann@acme.example");
        for bad in [
            "",
            "ann",
            "ann@",
            "@acme.example",
            "ann@acme",
            "a b@acme.example",
            "ann@@acme.example",
            "ann@acme..example",
        ] {
            assert!(Email::parse(bad).is_err(), "{bad}");
        }
        let at_max = format!("{}@{}.example", "a".repeat(64), "d".repeat(254 - 64 - 1 - 8));
        assert_eq!(at_max.len(), 254);
        assert!(Email::parse(&at_max).is_ok());
        assert!(Email::parse(&format!("{at_max}x")).is_err());
    }

    #[test]
    fn scopes() {
        assert_eq!(
            Scope::parse_list("orders:write, account:read,account:read").unwrap(),
            vec![Scope::AccountRead, Scope::OrdersWrite]
        );
        assert!(Scope::parse_list("admin").is_err());
        assert!(Scope::parse_list("").is_err());
    }
}
