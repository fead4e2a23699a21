//! A maker's own listings: owner-scoped reads, edits kept as versions, sections, the lifecycle
//! compare-and-set, votes, views and follows, trending ranks and the weekly awards.

use crate::{MemoryStore, VoteRow, ok, page_of};
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use domain::award::Award;
use domain::engagement::{Cast, View, Vote, policy};
use domain::ids::{ListingId, MilestoneId, UserId};
use domain::interview::InterviewAnswer;
use domain::listing::{Lifecycle, Listing, ListingProfile, ListingStatus, trending};
use domain::paging::{PageRequest, Paged};
use domain::ports::{BadgeCheck, ListingVersion, OwnListingRepository, QueueMove, RepoError, RepoResult};
use domain::sections::{ListingUpdate, Milestone, StoredMilestone, Story};
use domain::user::Email;
use domain::week::LaunchWeek;

/// The clock hour of the last hourly housekeeping, a site setting no operator can set, as in the SQL
/// stores.
const HOURLY_STEP: &str = "_hourly_step";

/// Adds (`one` = 1) or takes away (-1, the vote already gone from `votes`) a vote's share of its
/// listing's total, trending rank and week's tally, as the SQL stores' `count_vote` does.
pub(crate) fn count_vote(st: &mut crate::State, vote: &VoteRow, one: i64) {
    let peak = st.trending_peaks.get(&vote.listing).copied();
    let kept = match st.listing_mut(vote.listing) {
        Some(l) if one > 0 => Some(trending::give_vote(l.trending_score, peak, vote.at, vote.weight)),
        Some(l) => trending::take_vote(l.trending_score, peak, vote.at, vote.weight, l.votes - 1),
        None => None,
    };
    // Counted afresh where the vote could not be subtracted, which starts the peak again.
    let (rank, peak) = kept.unwrap_or_else(|| {
        let rank = trending::rank(st.votes.iter().filter(|v| v.listing == vote.listing).map(|v| (v.at, v.weight)));
        (rank, Some(rank))
    });
    match peak {
        Some(p) => st.trending_peaks.insert(vote.listing, p),
        None => st.trending_peaks.remove(&vote.listing),
    };
    if let Some(l) = st.listing_mut(vote.listing) {
        l.votes += one;
        l.trending_score = rank;
    }
    *st.tallies.entry((LaunchWeek::of(vote.at).monday(), vote.listing)).or_default() += one;
}

#[async_trait]
impl OwnListingRepository for MemoryStore {
    async fn owned_listings(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Listing>> {
        let st = self.lock()?;
        let mut list: Vec<Listing> =
            st.listings.values().map(|r| &r.listing).filter(|l| st.owns(user, l.id)).cloned().collect();
        list.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(page_of(list, page))
    }

    async fn owned_listing(&self, user: UserId, id: ListingId) -> RepoResult<Option<Listing>> {
        let st = self.lock()?;
        ok(st.listing(id).filter(|_| st.owns(user, id)).cloned())
    }

    async fn save_profile_edit(
        &self,
        id: ListingId,
        user: UserId,
        p: &ListingProfile,
        before: &str,
        after: &str,
        now: DateTime<Utc>,
    ) -> RepoResult<()> {
        let mut st = self.lock()?;
        let l = st.listing_mut(id).ok_or(RepoError::NotFound)?;
        // The fields an owner edits (the SQL stores' UPDATE); name, URL, domain, stage, logo, tags and
        // what the site did not state stay.
        let o = &mut l.profile;
        o.tagline = p.tagline.clone();
        o.short_description = p.short_description.clone();
        o.description = p.description.clone();
        o.pricing_model = p.pricing_model.clone();
        o.pricing_summary = p.pricing_summary.clone();
        o.country = p.country.clone();
        o.city = p.city.clone();
        o.founded_year = p.founded_year;
        o.demo_video_url = p.demo_video_url.clone();
        o.contact_email = p.contact_email.clone();
        o.features = p.features.clone();
        o.usps = p.usps.clone();
        o.keywords = p.keywords.clone();
        o.headline = p.headline.clone();
        o.summary = p.summary.clone();
        o.seo_title = p.seo_title.clone();
        o.seo_description = p.seo_description.clone();
        o.socials = p.socials.clone();
        o.faqs = p.faqs.clone();
        l.updated_at = now;
        let vid = st.next_id("listing_versions");
        st.versions.push(ListingVersion {
            id: vid,
            listing_id: id,
            user_id: Some(user),
            before: before.to_owned(),
            after: after.to_owned(),
            created_at: now,
        });
        Ok(())
    }

    async fn listing_versions(&self, id: ListingId) -> RepoResult<Vec<ListingVersion>> {
        ok(self.lock()?.versions.iter().filter(|v| v.listing_id == id).cloned().collect())
    }

    async fn move_lifecycle(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        now: DateTime<Utc>,
    ) -> RepoResult<bool> {
        Ok(self.lock()?.move_lifecycle(id, from, to, now))
    }

    async fn move_lifecycle_within(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        now: DateTime<Utc>,
        capacity: i64,
    ) -> RepoResult<QueueMove> {
        let mut st = self.lock()?;
        if to.launch_week().is_some_and(|w| st.launches_in_week(to.plan(), w) >= capacity) {
            return Ok(QueueMove::WeekFull);
        }
        Ok(if st.move_lifecycle(id, from, to, now) { QueueMove::Moved } else { QueueMove::Stale })
    }

    async fn listings_due(&self, status: ListingStatus, week: LaunchWeek) -> RepoResult<Vec<Listing>> {
        ok(self
            .lock()?
            .listings
            .values()
            .map(|r| &r.listing)
            .filter(|l| l.lifecycle.status() == status && l.lifecycle.launch_week().is_some_and(|w| w <= week))
            .cloned()
            .collect())
    }

    async fn record_badge_check(&self, id: ListingId, check: &BadgeCheck) -> RepoResult<()> {
        if let Some(r) = self.lock()?.listings.get_mut(&id) {
            r.badge = Some(check.clone());
        }
        Ok(())
    }

    async fn badge_check(&self, id: ListingId) -> RepoResult<Option<BadgeCheck>> {
        ok(self.lock()?.listings.get(&id).and_then(|r| r.badge.clone()))
    }

    async fn post_update(&self, id: ListingId, update: &ListingUpdate) -> RepoResult<i64> {
        let mut st = self.lock()?;
        if st.listing(id).is_none() {
            return Err(RepoError::NotFound);
        }
        let uid = st.next_id("listing_updates");
        st.updates.push((uid, id, update.clone()));
        Ok(uid)
    }

    async fn add_milestone(&self, id: ListingId, m: &Milestone, max: usize) -> RepoResult<Option<MilestoneId>> {
        let mut st = self.lock()?;
        if st.listing(id).is_none() {
            return Err(RepoError::NotFound);
        }
        if st.milestones.iter().filter(|(_, l, _)| *l == id).count() >= max {
            return Ok(None);
        }
        let mid = st.next_id("milestones");
        st.milestones.push((mid, id, m.clone()));
        Ok(Some(MilestoneId::from_db(mid)))
    }

    async fn milestones(&self, id: ListingId) -> RepoResult<Vec<StoredMilestone>> {
        Ok(domain::ports::ListingRepository::listing_details(self, id, true).await?.milestones)
    }

    async fn delete_milestone(&self, id: ListingId, milestone: MilestoneId) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let n = st.milestones.len();
        st.milestones.retain(|(mid, l, _)| !(*l == id && *mid == milestone.get()));
        Ok(st.milestones.len() != n)
    }

    async fn set_story(&self, id: ListingId, story: &Story, _now: DateTime<Utc>) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.listing(id).is_none() {
            return Err(RepoError::NotFound);
        }
        st.stories.insert(id, story.clone());
        Ok(())
    }

    async fn story(&self, id: ListingId) -> RepoResult<Option<Story>> {
        ok(self.lock()?.stories.get(&id).cloned())
    }

    async fn save_interview_answers(
        &self,
        user: UserId,
        answers: &[InterviewAnswer],
        _now: DateTime<Utc>,
    ) -> RepoResult<()> {
        let mut st = self.lock()?;
        for a in answers {
            st.interview.insert((user, a.question_id.get()), a.answer.as_str().to_owned());
        }
        Ok(())
    }

    async fn cast_vote(&self, v: &Vote) -> RepoResult<Cast> {
        let mut st = self.lock()?;
        if st.votes.iter().any(|x| x.listing == v.listing_id && x.user == v.voter)
            || st.user(v.voter).is_some_and(|u| u.user.suspended_at.is_some())
        {
            return Ok(Cast::Unchanged);
        }
        if st.listing(v.listing_id).is_none() {
            return Err(RepoError::NotFound);
        }
        if let Some(key) = &v.address_key {
            let from = v.address_day();
            let standing = st.votes.iter().filter(|x| x.address_key.as_ref() == Some(key) && x.at >= from).count();
            if !policy::address_cap_allows(standing as i64 + 1) {
                return Ok(Cast::AddressCap);
            }
        }
        let row = VoteRow {
            listing: v.listing_id,
            user: v.voter,
            at: v.cast_at,
            weight: v.weight,
            address_key: v.address_key.clone(),
        };
        count_vote(&mut st, &row, 1);
        st.votes.push(row);
        Ok(Cast::Counted)
    }

    async fn uncast_vote(&self, id: ListingId, voter: UserId) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let Some(i) = st.votes.iter().position(|x| x.listing == id && x.user == voter) else { return Ok(false) };
        let vote = st.votes.remove(i);
        count_vote(&mut st, &vote, -1);
        Ok(true)
    }

    async fn engagement_of(&self, id: ListingId, user: UserId) -> RepoResult<(bool, bool)> {
        let st = self.lock()?;
        ok((st.votes.iter().any(|v| v.listing == id && v.user == user), st.follows.contains_key(&(id, user))))
    }

    async fn record_view(&self, view: &View) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if !st.view_marks.insert((view.listing_id, view.day, view.viewer_key.clone())) {
            return Ok(false);
        }
        if let Some(l) = st.listing_mut(view.listing_id) {
            l.views += 1;
        }
        Ok(true)
    }

    async fn prune_view_marks(&self, before: NaiveDate) -> RepoResult<u64> {
        let mut st = self.lock()?;
        let n = st.view_marks.len();
        st.view_marks.retain(|(_, day, _)| *day >= before);
        Ok((n - st.view_marks.len()) as u64)
    }

    async fn follow(&self, id: ListingId, user: UserId, now: DateTime<Utc>) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if st.follows.contains_key(&(id, user)) {
            return Ok(false);
        }
        let l = st.listing_mut(id).ok_or(RepoError::NotFound)?;
        l.follows += 1;
        st.follows.insert((id, user), now);
        Ok(true)
    }

    async fn unfollow(&self, id: ListingId, user: UserId) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if st.follows.remove(&(id, user)).is_none() {
            return Ok(false);
        }
        if let Some(l) = st.listing_mut(id) {
            l.follows -= 1;
        }
        Ok(true)
    }

    async fn followers(&self, id: ListingId) -> RepoResult<Vec<Email>> {
        let st = self.lock()?;
        let mut rows: Vec<(DateTime<Utc>, UserId)> =
            st.follows.iter().filter(|((l, _), _)| *l == id).map(|((_, u), at)| (*at, *u)).collect();
        rows.sort();
        ok(rows.into_iter().filter_map(|(_, u)| Some(st.user(u)?.user.email.clone())).collect())
    }

    async fn claim_hourly_step(&self, now: DateTime<Utc>) -> RepoResult<bool> {
        let hour = domain::ports::clock_hour(now);
        let mut st = self.lock()?;
        if st.settings.get(HOURLY_STEP).is_some_and(|last| *last >= hour) {
            return ok(false);
        }
        st.settings.insert(HOURLY_STEP.to_owned(), hour);
        ok(true)
    }

    async fn week_tally(&self, week: LaunchWeek) -> RepoResult<Vec<(ListingId, i64)>> {
        let st = self.lock()?;
        ok(st
            .listings
            .values()
            .map(|r| &r.listing)
            .filter(|l| l.lifecycle.status() == ListingStatus::Live && l.lifecycle.launch_week() == Some(week))
            .map(|l| (l.id, st.tallies.get(&(week.monday(), l.id)).copied().unwrap_or(0)))
            .collect())
    }

    async fn week_awarded(&self, week: LaunchWeek) -> RepoResult<bool> {
        ok(self.lock()?.awards.iter().any(|a| a.week == week))
    }

    async fn award_week(&self, week: LaunchWeek, awards: &[Award]) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if st.awards.iter().any(|a| a.week == week) {
            return Ok(false);
        }
        st.awards.extend(awards.iter().map(|a| Award { week, ..a.clone() }));
        Ok(true)
    }
}
