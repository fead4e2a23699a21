//! Votes, follows and views: what people do on the site. Votes come only from signed-in people on the
//! site, never through the API; a maker cannot vote for their own listing; one vote per account and
//! listing (storage enforces it with a unique index).

use crate::ids::{ListingId, UserId};
use crate::listing::ListingStatus;
use chrono::{DateTime, NaiveDate, Utc};

/// The abuse defences votes pass (docs/DECISIONS.md, "Voting and following on the site").
pub mod policy {
    /// An account younger than this votes at [`NEW_ACCOUNT_WEIGHT`] in trending: a burst of fresh
    /// accounts cannot push a listing up the live feeds. Its vote still counts as one vote.
    pub const NEW_ACCOUNT_HOURS: i64 = 24;
    pub const NEW_ACCOUNT_WEIGHT: f64 = 0.5;
    /// At most this many votes a UTC day from one network address, all its accounts together.
    pub const VOTES_PER_ADDRESS_PER_DAY: i64 = 20;

    /// Whether a vote may stand, given the votes standing from its address today, itself included.
    /// The store asks inside the vote's transaction, one address at a time: votes sent at once are
    /// judged one after another, not all on the count before any of them.
    pub fn address_cap_allows(standing_today: i64) -> bool {
        standing_today <= VOTES_PER_ADDRESS_PER_DAY
    }
    /// At most this many votes one account takes back in a day (429 beyond). Taking a vote back
    /// counts the listing's trending rank afresh from its votes (`listing::trending::rank`), so a
    /// script toggling one vote would make the store read a popular listing's votes again and again;
    /// and the address cap counts the votes that stand, so a toggle would not spend it.
    pub const UNVOTES_PER_ACCOUNT_PER_DAY: i64 = 20;
}

#[derive(Debug, Clone, PartialEq)]
pub struct Vote {
    pub listing_id: ListingId,
    pub voter: UserId,
    pub cast_at: DateTime<Utc>,
    /// 1, or less for a new account (see [`policy`]); scales the vote's trending weight.
    pub weight: f64,
    /// A keyed hash of the voter's network address, for the per-address cap; never the address.
    pub address_key: Option<String>,
}

/// Who is voting, as the defences need to know them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voter {
    pub id: UserId,
    /// When the account was created.
    pub since: DateTime<Utc>,
    pub address_key: Option<String>,
}

/// What the store did with a vote (`OwnListingRepository::cast_vote`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cast {
    /// Recorded and counted.
    Counted,
    /// Nothing changed: this person already voted for the listing, or their account is suspended.
    Unchanged,
    /// Not recorded: its address already has [`policy::VOTES_PER_ADDRESS_PER_DAY`] votes standing today.
    AddressCap,
}

impl Cast {
    pub fn counted(self) -> bool {
        self == Cast::Counted
    }
}

/// Why a vote is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VoteRefused {
    #[error("only live listings can be voted for")]
    NotLive,
    #[error("makers cannot vote for their own listing")]
    OwnListing,
    #[error("too many votes from this network today; try again tomorrow")]
    AddressCap,
}

impl Vote {
    /// A vote for a listing with `status` owned by `owners`, plain (weight 1, no address): what
    /// imports and tests record.
    pub fn plain(listing_id: ListingId, voter: UserId, cast_at: DateTime<Utc>) -> Self {
        Self { listing_id, voter, cast_at, weight: 1.0, address_key: None }
    }

    /// A person's vote, through the rules that need nothing stored: live listings only, never one's
    /// own, and half weight for an account younger than a day. The per-address cap is the store's to
    /// check when it records the vote ([`policy::address_cap_allows`], from [`Vote::address_day`]).
    pub fn cast(
        listing_id: ListingId,
        status: ListingStatus,
        owners: &[UserId],
        voter: &Voter,
        now: DateTime<Utc>,
    ) -> Result<Self, VoteRefused> {
        if status != ListingStatus::Live {
            return Err(VoteRefused::NotLive);
        }
        if owners.contains(&voter.id) {
            return Err(VoteRefused::OwnListing);
        }
        let new = now - voter.since < chrono::Duration::hours(policy::NEW_ACCOUNT_HOURS);
        Ok(Self {
            listing_id,
            voter: voter.id,
            cast_at: now,
            weight: if new { policy::NEW_ACCOUNT_WEIGHT } else { 1.0 },
            address_key: voter.address_key.clone(),
        })
    }

    /// When the day its address's cap counts over began: midnight UTC of the day it was cast.
    pub fn address_day(&self) -> DateTime<Utc> {
        self.cast_at.date_naive().and_hms_opt(0, 0, 0).map_or(self.cast_at, |t| t.and_utc())
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

    fn voter(id: i64, age_hours: i64) -> Voter {
        Voter {
            id: UserId::from_db(id),
            since: now() - chrono::Duration::hours(age_hours),
            address_key: Some("k".into()),
        }
    }

    #[test]
    fn votes_only_for_live_listings_by_others() {
        let (l, maker) = (ListingId::from_db(1), UserId::from_db(1));
        let fan = voter(2, 100);
        assert!(Vote::cast(l, ListingStatus::Live, &[maker], &fan, now()).is_ok());
        assert_eq!(Vote::cast(l, ListingStatus::Live, &[maker], &voter(1, 100), now()), Err(VoteRefused::OwnListing));
        assert_eq!(Vote::cast(l, ListingStatus::Scheduled, &[maker], &fan, now()), Err(VoteRefused::NotLive));
    }

    #[test]
    fn new_accounts_weigh_half_and_an_address_has_a_daily_cap() {
        let l = ListingId::from_db(1);
        let cast = |v: &Voter| Vote::cast(l, ListingStatus::Live, &[], v, now());
        assert_eq!(cast(&voter(2, 23)).unwrap().weight, policy::NEW_ACCOUNT_WEIGHT);
        assert_eq!(cast(&voter(2, 24)).unwrap().weight, 1.0, "a day old counts fully");
        let cap = policy::VOTES_PER_ADDRESS_PER_DAY;
        assert!(policy::address_cap_allows(cap), "the last vote within the cap (itself counted)");
        assert!(!policy::address_cap_allows(cap + 1), "one past it");
        // The cap's day is the vote's UTC day, from midnight.
        let late = DateTime::parse_from_rfc3339("2026-11-27T23:59:59Z").unwrap().to_utc();
        let v = cast(&voter(2, 100)).map(|v| Vote { cast_at: late, ..v }).unwrap();
        assert_eq!(v.address_day(), DateTime::parse_from_rfc3339("2026-11-27T00:00:00Z").unwrap().to_utc());
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
