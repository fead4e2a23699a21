//! Products a maker buys. Prices are USD cents excluding VAT, set by the admin and always read from
//! storage; the defaults here are only what a new database starts with.

use crate::ValidationError;
use crate::money::Cents;

/// A product's identifier (`launch`, `extra-category`, …): lowercase letters, digits and hyphens.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProductCode(String);

impl ProductCode {
    pub const MAX: usize = 64;
    /// What `parse` accepts, as a regular expression (for the API's schema).
    pub const PATTERN: &'static str = "^[a-z0-9_-]{1,64}$";

    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let ok = !raw.is_empty()
            && raw.len() <= Self::MAX
            && raw.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(ValidationError::new("product", "must be a product id from list_products"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What buying the product does once paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProductKind {
    /// Publishes the listing at once or in a chosen week.
    Launch,
    /// Adds up to 3 more categories.
    ExtraCategory,
    /// Featured placement.
    Featured,
    /// Money on the paid billboard board; the amount is chosen, with a minimum.
    Billboard,
    UnlockStory,
    UnlockMilestones,
    UnlockMedia,
}

impl ProductKind {
    pub const ALL: [Self; 7] = [
        Self::Launch,
        Self::ExtraCategory,
        Self::Featured,
        Self::Billboard,
        Self::UnlockStory,
        Self::UnlockMilestones,
        Self::UnlockMedia,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Launch => "launch",
            Self::ExtraCategory => "extra_category",
            Self::Featured => "featured",
            Self::Billboard => "billboard",
            Self::UnlockStory => "unlock_story",
            Self::UnlockMilestones => "unlock_milestones",
            Self::UnlockMedia => "unlock_media",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == raw)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    pub code: ProductCode,
    pub kind: ProductKind,
    pub name: String,
    pub description: String,
    /// Current price, USD cents, VAT excluded. For a billboard contribution: the minimum amount.
    pub price: Cents,
    /// Bought for one of the caller's listings.
    pub needs_listing: bool,
    pub active: bool,
    pub position: i32,
}
