//! Identifiers. Integer ids are positive (`minimum 1` in the spec); drafts are UUIDs.

use crate::ValidationError;
use std::fmt;
use uuid::Uuid;

macro_rules! int_id {
    ($(#[$m:meta])* $name:ident, $field:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(i64);

        impl $name {
            pub const FIELD: &'static str = $field;

            /// Parses an id from a client: an integer of at least 1.
            pub fn parse(raw: i64) -> Result<Self, ValidationError> {
                if raw >= 1 {
                    Ok(Self(raw))
                } else {
                    Err(ValidationError::new($field, "must be an integer of at least 1"))
                }
            }

            /// Parses an id from a path segment.
            pub fn parse_str(raw: &str) -> Result<Self, ValidationError> {
                raw.parse::<i64>()
                    .map_err(|_| ValidationError::new($field, "must be an integer of at least 1"))
                    .and_then(Self::parse)
            }

            /// Wraps an id that storage handed back; storage only hands out ids it assigned.
            pub fn from_db(raw: i64) -> Self {
                Self(raw)
            }

            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

int_id!(ListingId, "listing_id");
int_id!(CategoryId, "category_id");
int_id!(UserId, "user_id");
int_id!(FounderId, "founder_id");
int_id!(BlogPostId, "blog_post_id");
int_id!(MilestoneId, "milestone_id");
int_id!(QuestionId, "question_id");
int_id!(ClaimId, "claim_id");
int_id!(OrderId, "order_id");
int_id!(AwardId, "award_id");
int_id!(ApiKeyId, "api_key_id");

/// A draft's id: a UUID, as the spec says (`id`: string, uuid format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DraftId(Uuid);

impl DraftId {
    pub fn new_random() -> Self {
        Self(Uuid::new_v4())
    }

    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        Uuid::try_parse(raw).map(Self).map_err(|_| ValidationError::new("id", "must be a UUID"))
    }

    pub fn from_uuid(u: Uuid) -> Self {
        Self(u)
    }

    pub fn as_uuid(&self) -> Uuid {
        self.0
    }
}

impl fmt::Display for DraftId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ids_start_at_one() {
        assert!(ListingId::parse(0).is_err());
        assert!(ListingId::parse(-5).is_err());
        assert_eq!(ListingId::parse(1).unwrap().get(), 1);
        assert_eq!(ListingId::parse_str("42").unwrap().get(), 42);
        let e = MilestoneId::parse_str("x").unwrap_err();
        assert_eq!(e.field, "milestone_id");
    }

    #[test]
    fn draft_ids_are_uuids() {
        let id = DraftId::new_random();
        assert_eq!(DraftId::parse(&id.to_string()).unwrap(), id);
        assert!(DraftId::parse("not-a-uuid").is_err());
    }
}
