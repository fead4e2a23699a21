//! A maker's own listings: reading them as their owner, editing them with a version history, their
//! sections, the lifecycle moves, and what the background jobs need (badge checks, go-live, awards).

use super::RepoResult;
use crate::award::Award;
use crate::ids::{ListingId, MilestoneId, UserId};
use crate::interview::InterviewAnswer;
use crate::listing::{Lifecycle, Listing, ListingProfile, ListingStatus};
use crate::paging::{PageRequest, Paged};
use crate::sections::{ListingUpdate, Milestone, StoredMilestone, Story};
use crate::user::Email;
use crate::week::LaunchWeek;
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// One kept copy of an edit: the own-editable fields before and after, as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingVersion {
    pub id: i64,
    pub listing_id: ListingId,
    /// Who edited (`None` once the account was deleted).
    pub user_id: Option<UserId>,
    pub before: String,
    pub after: String,
    pub created_at: DateTime<Utc>,
}

/// The last look for our badge on a listing's homepage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadgeCheck {
    pub checked_at: DateTime<Utc>,
    /// What was found (`a link to …`, `our badge image …`), or `None`.
    pub found: Option<String>,
    /// What the check saw, for the maker: the reason it found nothing or could not look.
    pub detail: String,
}

/// What [`OwnListingRepository::move_lifecycle_within`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueMove {
    Moved,
    /// The listing is no longer in `from`: another writer moved it first.
    Stale,
    /// The week holds its capacity already.
    WeekFull,
}

#[async_trait]
pub trait OwnListingRepository: Send + Sync {
    /// The listings `user` owns or co-owns, any status, newest first.
    async fn owned_listings(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Listing>>;

    /// One listing when `user` owns or co-owns it; `None` for anyone else's (and unknown ids).
    async fn owned_listing(&self, user: UserId, id: ListingId) -> RepoResult<Option<Listing>>;

    /// Saves an edited profile and keeps the before/after copy, in one transaction.
    async fn save_profile_edit(
        &self,
        id: ListingId,
        user: UserId,
        profile: &ListingProfile,
        before: &str,
        after: &str,
        now: DateTime<Utc>,
    ) -> RepoResult<()>;

    /// Every kept copy of a listing's edits, oldest first.
    async fn listing_versions(&self, id: ListingId) -> RepoResult<Vec<ListingVersion>>;

    /// Moves the lifecycle to `to` only if it is still `from` (compare-and-set); false when another
    /// writer moved it first.
    async fn move_lifecycle(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        now: DateTime<Utc>,
    ) -> RepoResult<bool>;

    /// [`move_lifecycle`](Self::move_lifecycle) into a launch week with room: moves only while
    /// `to`'s week holds fewer than `capacity` launches on `to`'s plan (awaiting the badge, scheduled
    /// or live), counted under a lock on that week and plan, so listings queued at once cannot
    /// overfill it. A `to` without a week just moves.
    async fn move_lifecycle_within(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        now: DateTime<Utc>,
        capacity: i64,
    ) -> RepoResult<QueueMove>;

    /// Listings in `status` whose launch week starts on or before `week`'s Monday.
    async fn listings_due(&self, status: ListingStatus, week: LaunchWeek) -> RepoResult<Vec<Listing>>;

    async fn record_badge_check(&self, id: ListingId, check: &BadgeCheck) -> RepoResult<()>;
    async fn badge_check(&self, id: ListingId) -> RepoResult<Option<BadgeCheck>>;

    /// Posts a "what's new" update; returns its id.
    async fn post_update(&self, id: ListingId, update: &ListingUpdate) -> RepoResult<i64>;

    /// Adds a milestone unless the listing holds `max` already (`None` then).
    async fn add_milestone(&self, id: ListingId, m: &Milestone, max: usize) -> RepoResult<Option<MilestoneId>>;
    /// Oldest first.
    async fn milestones(&self, id: ListingId) -> RepoResult<Vec<StoredMilestone>>;
    /// False when the listing has no such milestone.
    async fn delete_milestone(&self, id: ListingId, milestone: MilestoneId) -> RepoResult<bool>;

    async fn set_story(&self, id: ListingId, story: &Story, now: DateTime<Utc>) -> RepoResult<()>;
    async fn story(&self, id: ListingId) -> RepoResult<Option<Story>>;

    /// Saves (inserts or replaces) a founder's answers.
    async fn save_interview_answers(
        &self,
        user: UserId,
        answers: &[InterviewAnswer],
        now: DateTime<Utc>,
    ) -> RepoResult<()>;

    /// Records a vote (cast on the site, checked by `engagement::Vote::cast`): the listing's total, its
    /// trending rank (`trending::add_vote`) and the tally of the vote's launch week, in one
    /// transaction. `Unchanged` when this person already voted for the listing, or their account is
    /// suspended: checked inside the transaction, so a vote that raced the suspension either lands
    /// before it (and is held with the others) or is not cast. `AddressCap` when the vote has an
    /// address and that address's votes standing since [`Vote::address_day`] would pass
    /// [`policy::address_cap_allows`]: counted inside the transaction, one vote of an address at a
    /// time, so votes sent at once cannot all pass on the same count.
    ///
    /// [`Vote::address_day`]: crate::engagement::Vote::address_day
    /// [`policy::address_cap_allows`]: crate::engagement::policy::address_cap_allows
    async fn cast_vote(&self, vote: &crate::engagement::Vote) -> RepoResult<crate::engagement::Cast>;
    /// Takes a person's vote back: the listing's total, its trending rank (counted afresh from the
    /// votes left, `trending::rank`) and the tally of the week it was cast in, in one transaction.
    /// False when there was no vote.
    async fn uncast_vote(&self, id: ListingId, voter: UserId) -> RepoResult<bool>;
    /// Whether the person voted for and follows the listing.
    async fn engagement_of(&self, id: ListingId, user: UserId) -> RepoResult<(bool, bool)>;
    /// Counts a view unless this viewer saw the listing already that day; true when counted.
    async fn record_view(&self, view: &crate::engagement::View) -> RepoResult<bool>;
    /// Counts views as [`Self::record_view`] does, all in one transaction: one answer per view, in
    /// order (a view repeated within `views` counts once, at its first place). The site writes the
    /// views of concurrent page loads together this way. The default records them one at a time.
    async fn record_views(&self, views: &[crate::engagement::View]) -> RepoResult<Vec<bool>> {
        let mut counted = Vec::with_capacity(views.len());
        for v in views {
            counted.push(self.record_view(v).await?);
        }
        Ok(counted)
    }
    /// Forgets who viewed before `before` (the counts stay, and a store that keeps views per listing
    /// and day counts those days' from the marks first); the number of marks removed.
    async fn prune_view_marks(&self, before: chrono::NaiveDate) -> RepoResult<u64>;

    /// Follows a listing; false when already following.
    async fn follow(&self, id: ListingId, user: UserId, now: DateTime<Utc>) -> RepoResult<bool>;
    /// Stops following; false when not following.
    async fn unfollow(&self, id: ListingId, user: UserId) -> RepoResult<bool>;
    /// The email addresses of a listing's followers.
    async fn followers(&self, id: ListingId) -> RepoResult<Vec<Email>>;

    /// Claims the hourly housekeeping for the clock hour of `now` ([`clock_hour`]): true for the first
    /// caller in that hour on any instance, false for everyone else until the next hour
    /// (compare-and-set).
    async fn claim_hourly_step(&self, now: DateTime<Utc>) -> RepoResult<bool>;

    /// Live listings launched in `week` with the community votes cast for each in that week.
    async fn week_tally(&self, week: LaunchWeek) -> RepoResult<Vec<(ListingId, i64)>>;
    /// Whether the week has its awards already.
    async fn week_awarded(&self, week: LaunchWeek) -> RepoResult<bool>;
    /// Stores a week's awards unless the week has awards already; false then.
    async fn award_week(&self, week: LaunchWeek, awards: &[Award]) -> RepoResult<bool>;
}

/// The clock hour of `now` as stores keep the last hourly step's (`YYYY-MM-DDTHH`, UTC): fixed width,
/// so hours compare as text.
pub fn clock_hour(now: DateTime<Utc>) -> String {
    now.format("%Y-%m-%dT%H").to_string()
}
