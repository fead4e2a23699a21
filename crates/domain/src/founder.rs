//! Founders: people behind live listings, with bios, socials and the stories they publish.

use crate::ids::{FounderId, ListingId, UserId};
use crate::slug::Slug;
use crate::social::Socials;
use crate::{ValidationError, bounded_text};

bounded_text!(FounderName, "name", 160, non_empty);
bounded_text!(FounderTitle, "title", 160);
bounded_text!(FounderBio, "bio", 3000);
bounded_text!(FounderQuery, "q", 120);

/// A founder as listed in a draft or on a listing: name required, role and bio optional.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FounderEntry {
    pub name: FounderName,
    pub title: FounderTitle,
    pub bio: FounderBio,
}

impl FounderEntry {
    pub fn parse(name: String, title: Option<String>, bio: Option<String>) -> Result<Self, ValidationError> {
        Ok(Self {
            name: FounderName::parse(name)?,
            title: FounderTitle::parse(title.unwrap_or_default())?,
            bio: FounderBio::parse(bio.unwrap_or_default())?,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Founder {
    pub id: FounderId,
    pub slug: Slug,
    pub name: String,
    pub headline: String,
    pub bio: String,
    pub country: Option<String>,
    pub avatar_url: String,
    pub socials: Socials,
    pub user_id: Option<UserId>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFounder {
    pub slug: Slug,
    pub name: String,
    pub headline: String,
    pub bio: String,
    pub country: Option<String>,
    pub avatar_url: String,
    pub socials: Socials,
}

/// A founder's role at one listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingFounder {
    pub listing_id: ListingId,
    pub founder_id: FounderId,
    pub title: String,
    pub position: i32,
}
