//! Votes, follows and views: what people do on the site. Votes come only from signed-in people on the
//! site, never through the API; a maker cannot vote for their own listing; one vote per account and
//! listing (storage enforces it with a unique index).

use crate::ids::{ListingId, UserId};
use crate::listing::ListingStatus;
use chrono::{DateTime, NaiveDate, Utc};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vote {
    pub listing_id: ListingId,
    pub voter: UserId,
    pub cast_at: DateTime<Utc>,
}

/// Why a vote is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VoteRefused {
    #[error("only live listings can be voted for")]
    NotLive,
    #[error("makers cannot vote for their own listing")]
    OwnListing,
}

impl Vote {
    /// A vote by `voter` for a listing with `status` owned by `owners`.
    pub fn cast(
        listing_id: ListingId,
        status: ListingStatus,
        owners: &[UserId],
        voter: UserId,
        now: DateTime<Utc>,
    ) -> Result<Self, VoteRefused> {
        if status != ListingStatus::Live {
            return Err(VoteRefused::NotLive);
        }
        if owners.contains(&voter) {
            return Err(VoteRefused::OwnListing);
        }
        Ok(Self { listing_id, voter, cast_at: now })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Follow {
    pub listing_id: ListingId,
    pub follower: UserId,
    pub since: DateTime<Utc>,
}

/// Views are counted per listing and day; a viewer (a hashed visitor key) counts once a day, and
/// known bots not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub listing_id: ListingId,
    pub day: NaiveDate,
    pub viewer_key: String,
}

impl View {
    /// Substrings of user agents that are crawlers, not people.
    const BOT_MARKERS: [&'static str; 8] =
        ["bot", "crawl", "spider", "slurp", "curl/", "wget/", "python-requests", "headless"];

    /// A view to count, or `None` for a bot.
    pub fn record(listing_id: ListingId, user_agent: &str, viewer_key: String, now: DateTime<Utc>) -> Option<Self> {
        let ua = user_agent.to_ascii_lowercase();
        if ua.is_empty() || Self::BOT_MARKERS.iter().any(|m| ua.contains(m)) {
            return None;
        }
        Some(Self { listing_id, day: now.date_naive(), viewer_key })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap()
    }

    #[test]
    fn votes_only_for_live_listings_by_others() {
        let (l, maker, fan) = (ListingId::from_db(1), UserId::from_db(1), UserId::from_db(2));
        assert!(Vote::cast(l, ListingStatus::Live, &[maker], fan, now()).is_ok());
        assert_eq!(Vote::cast(l, ListingStatus::Live, &[maker], maker, now()), Err(VoteRefused::OwnListing));
        assert_eq!(Vote::cast(l, ListingStatus::Scheduled, &[maker], fan, now()), Err(VoteRefused::NotLive));
    }

    #[test]
    fn bots_do_not_count_as_views() {
        let l = ListingId::from_db(1);
        assert!(View::record(l, "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", "k".into(), now()).is_some());
        for bot in ["Googlebot/2.1", "curl/8.5", "", "Mozilla/5.0 HeadlessChrome/120"] {
            assert!(View::record(l, bot, "k".into(), now()).is_none(), "{bot:?}");
        }
    }
}
