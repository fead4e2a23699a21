//! A maker's own listings (port `OwnListingRepository`): owner-scoped reads, edits kept as versions,
//! sections, lifecycle compare-and-set, and what the background jobs read and write.

use crate::entity::{
    awards, follows, interview_answers, listing_owners, listing_updates, listing_versions, listing_view_marks,
    listings, milestones, site_settings, stories, vote_tallies, votes,
};
use crate::json::{faqs_to_json, list_to_json, socials_to_json};
use crate::sql::RawQuery;
use crate::store::{SeaOrmStore, is_unique_violation, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, FixedOffset, Utc};
use domain::award::Award;
use domain::engagement::{Cast, policy};
use domain::ids::{ListingId, MilestoneId, UserId};
use domain::interview::InterviewAnswer;
use domain::listing::{FoundedYear, Lifecycle, Listing, ListingProfile, ListingStatus, Plan};
use domain::paging::{PageRequest, Paged};
use domain::ports::{BadgeCheck, ListingRepository, ListingVersion, OwnListingRepository, QueueMove, RepoResult};
use domain::sections::{ListingUpdate, Milestone, StoredMilestone, Story};
use domain::user::Email;
use domain::week::LaunchWeek;
use sea_orm::sea_query::{Alias, Expr, ExprTrait, OnConflict};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait,
    FromQueryResult, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};

pub(crate) fn ts(t: DateTime<Utc>) -> DateTime<FixedOffset> {
    t.into()
}

/// `WHERE` the listing is owned or co-owned by `user`.
fn owned_by(q: &mut RawQuery, user: UserId) {
    q.sql(" WHERE l.id IN (SELECT o.listing_id FROM listing_owners o WHERE o.user_id = ").bind(user.get()).sql(")");
}

#[derive(Debug, FromQueryResult)]
struct BadgeRow {
    badge_checked_at: Option<DateTime<FixedOffset>>,
    badge_found: Option<String>,
    badge_detail: Option<String>,
}

#[derive(Debug, FromQueryResult)]
struct TallyRow {
    listing_id: i64,
    votes: i64,
}

#[derive(Debug, FromQueryResult)]
struct EmailRow {
    email: String,
}

/// Inserts `row` in `txn`; false when a unique index refuses it (the caller rolls back).
pub(crate) async fn insert_once<A>(txn: &DatabaseTransaction, row: A) -> RepoResult<bool>
where
    A: ActiveModelTrait + Send,
    <A::Entity as EntityTrait>::Model: sea_orm::IntoActiveModel<A>,
{
    match <A::Entity as EntityTrait>::insert(row).exec(txn).await {
        Ok(_) => Ok(true),
        Err(e) if is_unique_violation(&e) => Ok(false),
        Err(e) => Err(repo_err(e)),
    }
}

/// The clock hour of the last hourly housekeeping (`YYYY-MM-DDTHH`, compared as text), a site setting
/// no operator can set (`validate` refuses a key that starts with `_`).
const HOURLY_STEP: &str = "_hourly_step";

/// Moves a listing's lifecycle from `from` to `to` only if it still is `from` (compare-and-set), on
/// `db` (the pool, or a transaction that does more).
pub(crate) async fn move_lifecycle_on(
    db: &impl sea_orm::ConnectionTrait,
    id: ListingId,
    from: &Lifecycle,
    to: &Lifecycle,
    now: DateTime<Utc>,
) -> RepoResult<bool> {
    let mut q = listings::Entity::update_many()
        .col_expr(listings::Column::Status, Expr::value(to.status().as_str()))
        .col_expr(listings::Column::Plan, Expr::value(to.plan().as_str()))
        .col_expr(listings::Column::LaunchWeek, Expr::value(to.launch_week().map(LaunchWeek::monday)))
        .col_expr(listings::Column::LaunchedAt, Expr::value(to.launched_at().map(ts)))
        .col_expr(listings::Column::HeldStatus, Expr::value(to.held().map(|s| s.as_str())))
        .col_expr(listings::Column::UpdatedAt, Expr::value(ts(now)))
        .filter(listings::Column::Id.eq(id.get()))
        .filter(listings::Column::Status.eq(from.status().as_str()))
        .filter(listings::Column::Plan.eq(from.plan().as_str()));
    q = match from.launch_week() {
        Some(w) => q.filter(listings::Column::LaunchWeek.eq(w.monday())),
        None => q.filter(listings::Column::LaunchWeek.is_null()),
    };
    let r = q.exec(db).await.map_err(repo_err)?;
    Ok(r.rows_affected == 1)
}

/// Whether [`count_vote`] adds a vote's share or takes it away.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Count {
    /// `live`: whether the listing is live now (the flag of a week's tally row made for this vote).
    Add {
        live: bool,
    },
    Take,
}

/// Adds or takes away one vote's share of a listing's kept figures: its total, its trending rank
/// (`domain::listing::trending`) and the tally of the week it was cast in. Inside the caller's
/// transaction; a vote taken back is already gone from `votes`.
pub(crate) async fn count_vote(
    txn: &DatabaseTransaction,
    listing: i64,
    cast_at: DateTime<Utc>,
    weight: f64,
    count: Count,
) -> RepoResult<()> {
    use domain::listing::trending;
    let backend = txn.get_database_backend();
    // The listing's row is read (and on PostgreSQL locked) before anything that sets its rank, so
    // votes and unvotes of one listing at once each see the last one's rank and votes (SQLite's write
    // transactions run one at a time). The lock is `NO KEY UPDATE`, the one the `UPDATE` below takes
    // anyway: the vote's row already holds a key-share lock on the listing (its foreign key), and
    // `FOR UPDATE` would conflict with another vote's, each waiting for the other.
    let mut q = RawQuery::new(backend);
    q.sql("SELECT trending_score AS rank, trending_peak AS peak, votes_count AS votes FROM listings WHERE id = ")
        .bind(listing);
    if backend == sea_orm::DbBackend::Postgres {
        q.sql(" FOR NO KEY UPDATE");
    }
    let RankRow { rank, peak, votes } = RankRow::find_by_statement(q.build())
        .one(txn)
        .await
        .map_err(repo_err)?
        .unwrap_or(RankRow { rank: 0.0, peak: None, votes: 0 });
    let (one, rank, peak) = match count {
        Count::Add { .. } => {
            let (rank, peak) = trending::give_vote(rank, peak, cast_at, weight);
            (1, rank, peak)
        }
        // Subtracted while the votes left keep their share of the peak (migration 42); counted
        // afresh otherwise, which starts the peak again.
        Count::Take => match trending::take_vote(rank, peak, cast_at, weight, votes - 1) {
            Some((rank, peak)) => (-1, rank, peak),
            None => {
                // Read after the lock: on PostgreSQL each statement sees what committed before it.
                let left = votes::Entity::find()
                    .select_only()
                    .column(votes::Column::CreatedAt)
                    .column(votes::Column::Weight)
                    .filter(votes::Column::ListingId.eq(listing))
                    .into_tuple::<(DateTime<FixedOffset>, f64)>()
                    .all(txn)
                    .await
                    .map_err(repo_err)?;
                let rank = trending::rank(left.into_iter().map(|(at, w)| (at.with_timezone(&Utc), w)));
                (-1, rank, Some(rank))
            }
        },
    };
    listings::Entity::update_many()
        .col_expr(listings::Column::VotesCount, Expr::col(listings::Column::VotesCount).add(one))
        .col_expr(listings::Column::TrendingScore, Expr::value(rank))
        .col_expr(Alias::new("trending_peak"), Expr::value(peak))
        .filter(listings::Column::Id.eq(listing))
        .exec(txn)
        .await
        .map_err(repo_err)?;
    let week = LaunchWeek::of(cast_at).monday();
    match count {
        Count::Add { live } => {
            vote_tallies::Entity::insert(vote_tallies::ActiveModel {
                week_start: Set(week),
                listing_id: Set(listing),
                votes: Set(1),
                live: Set(live),
                // The listing's summary: the trigger `tally_live_written` copies it (migration 72).
                ..Default::default()
            })
            .on_conflict(
                OnConflict::columns([vote_tallies::Column::WeekStart, vote_tallies::Column::ListingId])
                    .value(
                        vote_tallies::Column::Votes,
                        Expr::col((vote_tallies::Entity, vote_tallies::Column::Votes)).add(1),
                    )
                    .to_owned(),
            )
            .exec(txn)
            .await
            .map_err(repo_err)?;
        }
        Count::Take => {
            vote_tallies::Entity::update_many()
                .col_expr(vote_tallies::Column::Votes, Expr::col(vote_tallies::Column::Votes).sub(1))
                .filter(vote_tallies::Column::WeekStart.eq(week))
                .filter(vote_tallies::Column::ListingId.eq(listing))
                .exec(txn)
                .await
                .map_err(repo_err)?;
        }
    }
    Ok(())
}

#[derive(Debug, FromQueryResult)]
struct RankRow {
    rank: f64,
    peak: Option<f64>,
    votes: i64,
}

#[derive(Debug, FromQueryResult)]
struct ActiveRow {
    active: bool,
}

/// Locks the listing's row for the rest of `txn` on PostgreSQL (`FOR NO KEY UPDATE`, the lock an
/// `UPDATE` of it takes), so writers that read what the listing has and then add to it take turns: a
/// bound checked on what was read holds. SQLite's write transactions already run one at a time.
pub(crate) async fn lock_listing(txn: &DatabaseTransaction, id: ListingId) -> RepoResult<()> {
    let backend = txn.get_database_backend();
    if backend == sea_orm::DbBackend::Postgres {
        let mut q = RawQuery::new(backend);
        q.sql("SELECT id FROM listings WHERE id = ").bind(id.get()).sql(" FOR NO KEY UPDATE");
        txn.execute_raw(q.build()).await.map_err(repo_err)?;
    }
    Ok(())
}

/// Takes the lock of `plan`'s launch `week` for the rest of `txn` on PostgreSQL (an advisory lock,
/// class 7262024, key `<plan>:<monday>`; SQLite's write transactions go one at a time): whatever counts
/// the week and then adds to it (a move into the free queue, an order holding a paid place) does so one
/// at a time.
pub(crate) async fn lock_week(txn: &DatabaseTransaction, plan: Plan, week: LaunchWeek) -> RepoResult<()> {
    let backend = txn.get_database_backend();
    if backend == sea_orm::DbBackend::Postgres {
        let mut q = RawQuery::new(backend);
        let key = format!("{}:{}", plan.as_str(), week.monday());
        q.sql("SELECT pg_advisory_xact_lock(7262024, hashtext(").bind(key).sql("))");
        txn.execute_raw(q.build()).await.map_err(repo_err)?;
    }
    Ok(())
}

/// Locks the account's row for the rest of `txn` on PostgreSQL (`FOR NO KEY UPDATE`; SQLite's write
/// transactions go one at a time): a bound counted over the account's rows (its keys, its drafts being
/// read) is then counted by one request at a time.
pub(crate) async fn lock_account(txn: &DatabaseTransaction, user: UserId) -> RepoResult<()> {
    let backend = txn.get_database_backend();
    if backend == sea_orm::DbBackend::Postgres {
        let mut q = RawQuery::new(backend);
        q.sql("SELECT id FROM users WHERE id = ").bind(user.get()).sql(" FOR NO KEY UPDATE");
        txn.execute_raw(q.build()).await.map_err(repo_err)?;
    }
    Ok(())
}

/// Moves a listing's follower count by `delta`.
async fn add_follows(txn: &DatabaseTransaction, id: ListingId, delta: i64) -> RepoResult<()> {
    listings::Entity::update_many()
        .col_expr(listings::Column::FollowsCount, Expr::col(listings::Column::FollowsCount).add(delta))
        .filter(listings::Column::Id.eq(id.get()))
        .exec(txn)
        .await
        .map_err(repo_err)?;
    Ok(())
}

#[async_trait]
impl OwnListingRepository for SeaOrmStore {
    async fn owned_listings(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Listing>> {
        let total = listing_owners::Entity::find()
            .filter(listing_owners::Column::UserId.eq(user.get()))
            .count(&self.db)
            .await
            .map_err(repo_err)?;
        let items = self
            .load_listings(|q| {
                owned_by(q, user);
                q.sql(" ORDER BY l.created_at DESC, l.id DESC").page(page);
            })
            .await?;
        Ok(Paged::new(items, page, total))
    }

    async fn owned_listing(&self, user: UserId, id: ListingId) -> RepoResult<Option<Listing>> {
        let rows = self
            .load_listings(|q| {
                owned_by(q, user);
                q.sql(" AND l.id = ").bind(id.get());
            })
            .await?;
        Ok(rows.into_iter().next())
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
        let txn = self.begin_write().await?;
        let am = listings::ActiveModel {
            id: Set(id.get()),
            tagline: Set(p.tagline.clone()),
            short_description: Set(p.short_description.clone()),
            description: Set(p.description.clone()),
            pricing_model: Set(p.pricing_model.clone()),
            pricing_summary: Set(p.pricing_summary.clone()),
            country: Set(p.country.as_ref().map(|c| c.as_str().to_owned())),
            city: Set(p.city.clone()),
            founded_year: Set(p.founded_year.map(FoundedYear::get)),
            demo_video_url: Set(p.demo_video_url.clone()),
            contact_email: Set(p.contact_email.clone()),
            features: Set(list_to_json(&p.features)),
            usps: Set(list_to_json(&p.usps)),
            keywords: Set(list_to_json(&p.keywords)),
            headline: Set(p.headline.clone()),
            summary: Set(p.summary.clone()),
            seo_title: Set(p.seo_title.clone()),
            seo_description: Set(p.seo_description.clone()),
            socials: Set(socials_to_json(&p.socials)),
            faqs: Set(faqs_to_json(&p.faqs)),
            updated_at: Set(ts(now)),
            ..Default::default()
        };
        am.update(&txn).await.map_err(repo_err)?;
        listing_versions::ActiveModel {
            listing_id: Set(id.get()),
            user_id: Set(Some(user.get())),
            before: Set(before.to_owned()),
            after: Set(after.to_owned()),
            created_at: Set(ts(now)),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .map_err(repo_err)?;
        txn.commit().await.map_err(repo_err)
    }

    async fn listing_versions(&self, id: ListingId) -> RepoResult<Vec<ListingVersion>> {
        let rows = listing_versions::Entity::find()
            .filter(listing_versions::Column::ListingId.eq(id.get()))
            .order_by_asc(listing_versions::Column::Id)
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(rows
            .into_iter()
            .map(|v| ListingVersion {
                id: v.id,
                listing_id: ListingId::from_db(v.listing_id),
                user_id: v.user_id.map(UserId::from_db),
                before: v.before,
                after: v.after,
                created_at: v.created_at.with_timezone(&Utc),
            })
            .collect())
    }

    async fn move_lifecycle(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        now: DateTime<Utc>,
    ) -> RepoResult<bool> {
        move_lifecycle_on(&self.db, id, from, to, now).await
    }

    async fn move_lifecycle_within(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        now: DateTime<Utc>,
        capacity: i64,
    ) -> RepoResult<QueueMove> {
        let Some(week) = to.launch_week() else {
            let moved = move_lifecycle_on(&self.db, id, from, to, now).await?;
            return Ok(if moved { QueueMove::Moved } else { QueueMove::Stale });
        };
        let txn = self.begin_write().await?;
        // One move into a week of a plan at a time: each counts the moves committed before it.
        lock_week(&txn, to.plan(), week).await?;
        let counted = crate::orders::launches_in_on(&txn, to.plan(), &[week]).await?;
        let held = counted.first().map_or(0, |(_, n)| *n);
        let outcome = if held >= capacity {
            QueueMove::WeekFull
        } else if move_lifecycle_on(&txn, id, from, to, now).await? {
            QueueMove::Moved
        } else {
            QueueMove::Stale
        };
        txn.commit().await.map_err(repo_err)?;
        Ok(outcome)
    }

    async fn listings_due(&self, status: ListingStatus, week: LaunchWeek) -> RepoResult<Vec<Listing>> {
        self.load_listings(|q| {
            q.sql(" WHERE l.status = ")
                .bind(status.as_str())
                .sql(" AND l.launch_week <= ")
                .bind(week.monday())
                .sql(" ORDER BY l.id");
        })
        .await
    }

    async fn record_badge_check(&self, id: ListingId, check: &BadgeCheck) -> RepoResult<()> {
        let mut q = RawQuery::new(self.backend());
        q.sql("UPDATE listings SET badge_checked_at = ")
            .bind(ts(check.checked_at))
            .sql(", badge_found = ")
            .bind(check.found.clone())
            .sql(", badge_detail = ")
            .bind(check.detail.clone())
            .sql(" WHERE id = ")
            .bind(id.get());
        sea_orm::ConnectionTrait::execute_raw(&self.db, q.build()).await.map_err(repo_err)?;
        Ok(())
    }

    async fn badge_check(&self, id: ListingId) -> RepoResult<Option<BadgeCheck>> {
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT badge_checked_at, badge_found, badge_detail FROM listings WHERE id = ").bind(id.get());
        let row = BadgeRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.and_then(|r| {
            Some(BadgeCheck {
                checked_at: r.badge_checked_at?.with_timezone(&Utc),
                found: r.badge_found,
                detail: r.badge_detail.unwrap_or_default(),
            })
        }))
    }

    async fn post_update(&self, id: ListingId, u: &ListingUpdate) -> RepoResult<i64> {
        let m = listing_updates::ActiveModel {
            listing_id: Set(id.get()),
            title: Set(u.title.clone()),
            body: Set(u.body.clone()),
            posted_at: Set(ts(u.posted_at)),
            ..Default::default()
        }
        .insert(&self.db)
        .await
        .map_err(repo_err)?;
        Ok(m.id)
    }

    async fn add_milestone(&self, id: ListingId, m: &Milestone, max: usize) -> RepoResult<Option<MilestoneId>> {
        let txn = self.begin_write().await?;
        lock_listing(&txn, id).await?;
        let held = milestones::Entity::find()
            .filter(milestones::Column::ListingId.eq(id.get()))
            .count(&txn)
            .await
            .map_err(repo_err)?;
        if held >= max as u64 {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(None);
        }
        let row = milestones::ActiveModel {
            listing_id: Set(id.get()),
            date: Set(m.date),
            title: Set(m.title.as_str().to_owned()),
            description: Set(m.description.as_str().to_owned()),
            url: Set(m.url.clone()),
            ..Default::default()
        }
        .insert(&txn)
        .await
        .map_err(repo_err)?;
        txn.commit().await.map_err(repo_err)?;
        Ok(Some(MilestoneId::from_db(row.id)))
    }

    async fn milestones(&self, id: ListingId) -> RepoResult<Vec<StoredMilestone>> {
        Ok(self.listing_details(id, true).await?.milestones)
    }

    async fn delete_milestone(&self, id: ListingId, milestone: MilestoneId) -> RepoResult<bool> {
        let r = milestones::Entity::delete_many()
            .filter(milestones::Column::Id.eq(milestone.get()))
            .filter(milestones::Column::ListingId.eq(id.get()))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(r.rows_affected == 1)
    }

    async fn set_story(&self, id: ListingId, story: &Story, now: DateTime<Utc>) -> RepoResult<()> {
        let sections: Vec<(&str, &str)> = story.sections().collect();
        let json = serde_json::to_string(&sections).map_err(|e| domain::ports::RepoError::Unexpected(Box::new(e)))?;
        stories::Entity::insert(stories::ActiveModel {
            listing_id: Set(id.get()),
            sections: Set(json),
            updated_at: Set(ts(now)),
        })
        .on_conflict(
            OnConflict::column(stories::Column::ListingId)
                .update_columns([stories::Column::Sections, stories::Column::UpdatedAt])
                .to_owned(),
        )
        .exec(&self.db)
        .await
        .map_err(repo_err)?;
        Ok(())
    }

    async fn story(&self, id: ListingId) -> RepoResult<Option<Story>> {
        Ok(self.listing_details(id, true).await?.story)
    }

    async fn save_interview_answers(
        &self,
        user: UserId,
        answers: &[InterviewAnswer],
        now: DateTime<Utc>,
    ) -> RepoResult<()> {
        let txn = self.begin_write().await?;
        for a in answers {
            interview_answers::Entity::insert(interview_answers::ActiveModel {
                user_id: Set(user.get()),
                question_id: Set(a.question_id.get()),
                answer: Set(a.answer.as_str().to_owned()),
                updated_at: Set(ts(now)),
            })
            .on_conflict(
                OnConflict::columns([interview_answers::Column::UserId, interview_answers::Column::QuestionId])
                    .update_columns([interview_answers::Column::Answer, interview_answers::Column::UpdatedAt])
                    .to_owned(),
            )
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        }
        txn.commit().await.map_err(repo_err)
    }

    async fn cast_vote(&self, v: &domain::engagement::Vote) -> RepoResult<Cast> {
        let txn = self.begin_write().await?;
        // One vote of an address at a time on PostgreSQL (SQLite writes one at a time anyway), so the
        // cap below counts every vote of the address committed before this one. Taken first, before
        // any row lock: a vote waiting here holds nothing a suspension could be waiting for.
        if let (Some(key), sea_orm::DbBackend::Postgres) = (&v.address_key, self.backend()) {
            let mut lock = RawQuery::new(self.backend());
            // Class 7262023: votes by address (7262021 migrations, 7262022 index builds).
            lock.sql("SELECT pg_advisory_xact_lock(7262023, hashtext(").bind(key.as_str()).sql("))");
            txn.execute_raw(lock.build()).await.map_err(repo_err)?;
        }
        // Not for a suspended account. On PostgreSQL the account's row is read `FOR SHARE`: a
        // suspension (which updates that row, then moves the account's votes out) either committed
        // before, and this reads it, or waits until this vote is committed, and then moves it too.
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT suspended_at IS NULL AS active FROM users WHERE id = ").bind(v.voter.get());
        if self.backend() == sea_orm::DbBackend::Postgres {
            q.sql(" FOR SHARE");
        }
        let active = ActiveRow::find_by_statement(q.build()).one(&txn).await.map_err(repo_err)?;
        if active.is_some_and(|a| !a.active) {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(Cast::Unchanged);
        }
        let row = votes::ActiveModel {
            listing_id: Set(v.listing_id.get()),
            user_id: Set(v.voter.get()),
            created_at: Set(ts(v.cast_at)),
            weight: Set(v.weight),
            address_key: Set(v.address_key.clone()),
            ..Default::default()
        };
        if !insert_once(&txn, row).await? {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(Cast::Unchanged);
        }
        // The address's votes standing today, this one included (a repeat vote was answered above).
        if let Some(key) = &v.address_key {
            let standing = votes::Entity::find()
                .filter(votes::Column::AddressKey.eq(key.as_str()))
                .filter(votes::Column::CreatedAt.gte(ts(v.address_day())))
                .count(&txn)
                .await
                .map_err(repo_err)?;
            if !policy::address_cap_allows(i64::try_from(standing).unwrap_or(i64::MAX)) {
                txn.rollback().await.map_err(repo_err)?;
                return Ok(Cast::AddressCap);
            }
        }
        // A vote is only ever cast for a live listing; a trigger keeps the tally's flag true to the listing.
        count_vote(&txn, v.listing_id.get(), v.cast_at, v.weight, Count::Add { live: true }).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(Cast::Counted)
    }

    async fn uncast_vote(&self, id: ListingId, voter: UserId) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        // The listing's row first, then the vote's: the order a suspension takes them in (it locks
        // the listings it will change, then moves the account's votes). Deleting the vote first, an
        // unvote racing the voter's suspension each held what the other waited for.
        lock_listing(&txn, id).await?;
        let Some(vote) = votes::Entity::find()
            .filter(votes::Column::ListingId.eq(id.get()))
            .filter(votes::Column::UserId.eq(voter.get()))
            .one(&txn)
            .await
            .map_err(repo_err)?
        else {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        };
        let gone = votes::Entity::delete_many()
            .filter(votes::Column::ListingId.eq(id.get()))
            .filter(votes::Column::UserId.eq(voter.get()))
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        if gone.rows_affected != 1 {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        }
        count_vote(&txn, id.get(), vote.created_at.with_timezone(&Utc), vote.weight, Count::Take).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn engagement_of(&self, id: ListingId, user: UserId) -> RepoResult<(bool, bool)> {
        let voted = votes::Entity::find()
            .filter(votes::Column::ListingId.eq(id.get()))
            .filter(votes::Column::UserId.eq(user.get()))
            .count(&self.db)
            .await
            .map_err(repo_err)?;
        let following = follows::Entity::find()
            .filter(follows::Column::ListingId.eq(id.get()))
            .filter(follows::Column::UserId.eq(user.get()))
            .count(&self.db)
            .await
            .map_err(repo_err)?;
        Ok((voted > 0, following > 0))
    }

    /// One transaction of two statements whatever the number of views: the marks inserted where
    /// none exists (`RETURNING` says which), then the listings' view totals (`listing_view_totals`,
    /// not the listing rows: migration 48) raised by the new ones; on PostgreSQL a third first locks
    /// the totals' rows in ascending id. Every statement takes its rows in key order, so two batches
    /// on PostgreSQL take their row locks in the same order; no listing row is written, so a batch and
    /// an edit of a listing do not wait for each other. The views per listing and day
    /// (`listing_views`) are not written here: they are the marks' count, folded in when the marks
    /// are pruned ([`Self::prune_view_marks`]; migration 49).
    async fn record_views(&self, views: &[domain::engagement::View]) -> RepoResult<Vec<bool>> {
        #[derive(Debug, sea_orm::FromQueryResult)]
        struct Marked {
            listing_id: i64,
            day: chrono::NaiveDate,
            viewer_key: String,
        }
        if views.is_empty() {
            return Ok(Vec::new());
        }
        let backend = self.backend();
        // `VALUES (…), (…)`: one bound row per item.
        let values = |q: &mut RawQuery, rows: Vec<Vec<sea_orm::Value>>| {
            q.sql(" VALUES ");
            for (i, row) in rows.into_iter().enumerate() {
                q.sql(if i == 0 { "" } else { ", " }).bind_list(row);
            }
        };
        let key = |v: &domain::engagement::View| (v.listing_id, v.day, v.viewer_key.clone());
        let mut sorted: Vec<&domain::engagement::View> = views.iter().collect();
        sorted.sort_by_key(|v| key(v));
        sorted.dedup_by_key(|v| key(v));
        let txn = self.begin_views_write().await?;
        let mut marks = RawQuery::new(backend);
        marks.sql("INSERT INTO listing_view_marks (listing_id, day, viewer_key)");
        values(
            &mut marks,
            sorted.iter().map(|v| vec![v.listing_id.get().into(), v.day.into(), v.viewer_key.clone().into()]).collect(),
        );
        marks.sql(" ON CONFLICT DO NOTHING RETURNING listing_id, day, viewer_key");
        let marked = Marked::find_by_statement(marks.build()).all(&txn).await.map_err(repo_err)?;
        let mut per_listing: std::collections::BTreeMap<i64, i64> = Default::default();
        for m in &marked {
            *per_listing.entry(m.listing_id).or_default() += 1;
        }
        if !per_listing.is_empty() {
            // The totals' rows first, in ascending id (PostgreSQL; SQLite writes one transaction at a
            // time): the UPDATE alone takes them in its plan's order, a hash of the batch, and two
            // instances' batches could each hold a row the other waits for.
            if backend == sea_orm::DbBackend::Postgres {
                let mut lock = RawQuery::new(backend);
                lock.sql("SELECT listing_id FROM listing_view_totals WHERE listing_id IN ")
                    .bind_list(per_listing.keys().copied())
                    .sql(" ORDER BY listing_id FOR UPDATE");
                sea_orm::ConnectionTrait::execute_raw(&txn, lock.build()).await.map_err(repo_err)?;
            }
            let mut totals = RawQuery::new(backend);
            totals.sql("WITH v (id, n) AS (");
            values(&mut totals, per_listing.iter().map(|(id, n)| vec![(*id).into(), (*n).into()]).collect());
            totals.sql(
                ") UPDATE listing_view_totals SET views = views + (SELECT v.n FROM v WHERE v.id = listing_view_totals.listing_id) \
                 WHERE listing_id IN (SELECT v.id FROM v)",
            );
            sea_orm::ConnectionTrait::execute_raw(&txn, totals.build()).await.map_err(repo_err)?;
        }
        txn.commit().await.map_err(repo_err)?;
        // Each new mark answers true once, at the first view that names it.
        let mut new: std::collections::HashSet<(i64, chrono::NaiveDate, String)> =
            marked.into_iter().map(|m| (m.listing_id, m.day, m.viewer_key)).collect();
        Ok(views.iter().map(|v| new.remove(&(v.listing_id.get(), v.day, v.viewer_key.clone()))).collect())
    }

    async fn record_view(&self, view: &domain::engagement::View) -> RepoResult<bool> {
        // Most views repeat one already counted today: a plain read answers those without taking
        // the write lock (SQLite has one writer); the insert still decides a race.
        let seen = listing_view_marks::Entity::find_by_id((view.listing_id.get(), view.day, view.viewer_key.clone()))
            .one(&self.db)
            .await
            .map_err(repo_err)?;
        if seen.is_some() {
            return Ok(false);
        }
        Ok(self.record_views(std::slice::from_ref(view)).await?.first().copied().unwrap_or(false))
    }

    /// Folds the marks of each day before `before` into that day's view counts (`listing_views`), then
    /// deletes them, in one transaction. A day's marks are all there until they are pruned (each
    /// prune takes whole days), so its count is exactly the views counted that day; a page's view
    /// writes one row fewer for it.
    async fn prune_view_marks(&self, before: chrono::NaiveDate) -> RepoResult<u64> {
        let backend = self.backend();
        let txn = self.begin_write().await?;
        let mut fold = RawQuery::new(backend);
        fold.sql(
            "INSERT INTO listing_views (listing_id, day, views) SELECT listing_id, day, COUNT(*) \
             FROM listing_view_marks WHERE day < ",
        )
        .bind(before)
        .sql(
            " GROUP BY listing_id, day \
             ON CONFLICT (listing_id, day) DO UPDATE SET views = listing_views.views + excluded.views",
        );
        sea_orm::ConnectionTrait::execute_raw(&txn, fold.build()).await.map_err(repo_err)?;
        let r = listing_view_marks::Entity::delete_many()
            .filter(listing_view_marks::Column::Day.lt(before))
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        txn.commit().await.map_err(repo_err)?;
        Ok(r.rows_affected)
    }

    async fn follow(&self, id: ListingId, user: UserId, now: DateTime<Utc>) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        let row =
            follows::ActiveModel { listing_id: Set(id.get()), user_id: Set(user.get()), created_at: Set(ts(now)) };
        if !insert_once(&txn, row).await? {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        }
        add_follows(&txn, id, 1).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn unfollow(&self, id: ListingId, user: UserId) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        let r = follows::Entity::delete_many()
            .filter(follows::Column::ListingId.eq(id.get()))
            .filter(follows::Column::UserId.eq(user.get()))
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        if r.rows_affected == 1 {
            add_follows(&txn, id, -1).await?;
        }
        txn.commit().await.map_err(repo_err)?;
        Ok(r.rows_affected == 1)
    }

    async fn followers(&self, id: ListingId) -> RepoResult<Vec<Email>> {
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT u.email FROM follows f JOIN users u ON u.id = f.user_id WHERE f.listing_id = ")
            .bind(id.get())
            .sql(" ORDER BY f.created_at, u.id");
        let rows = EmailRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows.into_iter().filter_map(|r| Email::parse(&r.email).ok()).collect())
    }

    async fn claim_hourly_step(&self, now: DateTime<Utc>) -> RepoResult<bool> {
        let hour = domain::ports::clock_hour(now);
        // Every pass of every instance asks: a read answers all but the first in each hour, without
        // taking the write lock.
        let last = site_settings::Entity::find_by_id(HOURLY_STEP.to_owned()).one(&self.db).await.map_err(repo_err)?;
        if last.is_some_and(|s| s.value >= hour) {
            return Ok(false);
        }
        let txn = self.begin_write().await?;
        // Inserted when no instance ran it yet (without failing the transaction on PostgreSQL), else
        // moved on only from an earlier hour.
        let first = site_settings::Entity::insert(site_settings::ActiveModel {
            key: Set(HOURLY_STEP.to_owned()),
            value: Set(hour.clone()),
            updated_at: Set(ts(now)),
        })
        .on_conflict(OnConflict::column(site_settings::Column::Key).do_nothing().to_owned())
        .exec_without_returning(&txn)
        .await
        .map_err(repo_err)?;
        let claimed = first == 1
            || site_settings::Entity::update_many()
                .col_expr(site_settings::Column::Value, Expr::value(hour.clone()))
                .col_expr(site_settings::Column::UpdatedAt, Expr::value(ts(now)))
                .filter(site_settings::Column::Key.eq(HOURLY_STEP))
                .filter(site_settings::Column::Value.lt(hour))
                .exec(&txn)
                .await
                .map_err(repo_err)?
                .rows_affected
                == 1;
        txn.commit().await.map_err(repo_err)?;
        Ok(claimed)
    }

    async fn week_tally(&self, week: LaunchWeek) -> RepoResult<Vec<(ListingId, i64)>> {
        let mut q = RawQuery::new(self.backend());
        q.sql("SELECT l.id AS listing_id, COALESCE(v.votes, 0) AS votes FROM listings l LEFT JOIN vote_tallies v ON v.listing_id = l.id AND v.week_start = ")
            .bind(week.monday())
            .sql(" WHERE l.status = 'live' AND l.launch_week = ")
            .bind(week.monday())
            .sql(" ORDER BY l.id");
        let rows = TallyRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows.into_iter().map(|r| (ListingId::from_db(r.listing_id), r.votes)).collect())
    }

    async fn week_awarded(&self, week: LaunchWeek) -> RepoResult<bool> {
        let n = awards::Entity::find()
            .filter(awards::Column::WeekStart.eq(week.monday()))
            .count(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(n > 0)
    }

    async fn award_week(&self, week: LaunchWeek, list: &[Award]) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        let held = awards::Entity::find()
            .filter(awards::Column::WeekStart.eq(week.monday()))
            .count(&txn)
            .await
            .map_err(repo_err)?;
        if held > 0 {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        }
        for a in list {
            let row = awards::ActiveModel {
                week_start: Set(week.monday()),
                rank: Set(i16::from(a.rank.get())),
                listing_id: Set(a.listing_id.get()),
                votes: Set(a.votes),
                ..Default::default()
            };
            if let Err(e) = awards::Entity::insert(row).exec(&txn).await {
                txn.rollback().await.map_err(repo_err)?;
                // Another instance awarded the week at the same moment (unique week and rank).
                return if is_unique_violation(&e) { Ok(false) } else { Err(repo_err(e)) };
            }
        }
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }
}
