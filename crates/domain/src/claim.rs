//! Claims: proving control of a listing's domain by DNS, meta tag, file or email.

use crate::ValidationError;
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

    /// Verification succeeds only for a pending claim within its validity; a late one expires.
    pub fn verify(&mut self, created_at: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), TransitionError> {
        match self {
            Self::Pending if now - created_at <= Duration::days(Self::VALIDITY_DAYS) => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_expire_after_seven_days() {
        let t0 = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let mut ok = ClaimStatus::Pending;
        ok.verify(t0, t0 + Duration::days(7)).unwrap();
        assert_eq!(ok, ClaimStatus::Verified);
        assert!(ok.verify(t0, t0).is_err(), "verified once");
        let mut late = ClaimStatus::Pending;
        let e = late.verify(t0, t0 + Duration::days(7) + Duration::seconds(1)).unwrap_err();
        assert_eq!((late, e.current), (ClaimStatus::Expired, "expired"));
        assert!(ClaimMethod::parse("sms").is_err());
    }
}
