//! What moves listings along the calendar without anyone asking: the badge check of free listings, the
//! go-live at the start of each launch week, a new free week for a listing whose badge never came, the
//! Launch of the Week awards when a week ends, and followers' emails. The rules are the domain's
//! (`Lifecycle`, `own::free_launch_week`, `own::badge_placed`, `award::launch_of_the_week`); this
//! module reads and writes through the ports.
//!
//! Trending needs no work as time passes: each listing keeps a rank relative to a fixed epoch (forward
//! decay, `domain::listing::trending`), which orders listings as their decayed scores of any moment do.
//! Once an hour one instance forgets old view marks and sign-in counters.
//!
//! The duties run with every pass of the worker on every instance. Each change is a compare-and-set
//! (a listing moves only from the state it was read in) and a week is awarded once (storage refuses a
//! second set), so two instances running them at once change nothing twice.

use crate::App;
use crate::worker::{BADGE_RECHECK_HOURS, JobSpec};
use chrono::Duration;
use domain::ids::ListingId;
use domain::listing::ListingStatus;
use domain::ports::{BadgeCheck, RepoError, RepoResult};
use domain::week::LaunchWeek;

/// Looks for our badge on the listing's homepage; a find schedules the launch, anything else is recorded
/// for the maker and looked at again in [`BADGE_RECHECK_HOURS`] while the week has not begun.
pub(crate) async fn badge_check(app: &App, id: ListingId) -> Result<(), String> {
    look_for_badge(app, id, true).await
}

/// As [`badge_check`]; `reschedule` false leaves the next look to the one already queued (a maker's
/// own "check now" must not add a queued look per click).
pub(crate) async fn look_for_badge(app: &App, id: ListingId, reschedule: bool) -> Result<(), String> {
    let err = |e: RepoError| e.to_string();
    let Some(l) = app.store.get_listing(id).await.map_err(err)? else { return Ok(()) };
    let now = app.now();
    let Some(week) = l.lifecycle.launch_week() else { return Ok(()) };
    if l.lifecycle.status() != ListingStatus::AwaitingBadge || week.starts_at() <= now {
        return Ok(()); // Found earlier, moved on, or its week began (the duties give it a new one).
    }
    let page = domain::own::listing_page(&app.public_url, l.slug.as_str());
    let (found, detail) = match app.reader.read_homepage(&l.profile.url).await {
        Ok(home) => match domain::own::badge_placed(&home.hrefs, &home.images, &app.public_url, l.slug.as_str()) {
            Some(what) => (Some(what), format!("found on {}", home.url)),
            None => (None, format!("no link to {page} and none of our badge images on {}", home.url)),
        },
        Err(e) => (None, format!("could not read the homepage: {e}")),
    };
    app.store
        .record_badge_check(id, &BadgeCheck { checked_at: now, found: found.clone(), detail: detail.clone() })
        .await
        .map_err(err)?;
    if found.is_some() {
        let mut next = l.lifecycle;
        if next.badge_found().is_ok() && app.store.move_lifecycle(id, &l.lifecycle, &next, now).await.map_err(err)? {
            tracing::info!(listing = id.get(), week = %week.monday(), "badge found; launch scheduled");
            crate::public_data_changed(app, &crate::ReadCache::disabled()).await;
        }
        return Ok(());
    }
    let again = now + Duration::hours(BADGE_RECHECK_HOURS);
    if reschedule && again < week.starts_at() {
        enqueue_at(app, &JobSpec::BadgeCheck { listing: id.get() }, again).await.map_err(err)?;
    }
    Ok(())
}

async fn enqueue_at(app: &App, spec: &JobSpec, at: chrono::DateTime<chrono::Utc>) -> RepoResult<i64> {
    app.store.enqueue_job(spec.kind(), &spec.payload().to_string(), at, app.now()).await
}

/// Queues one email per follower of the listing, each delivered by its own job.
pub(crate) async fn notify_followers(app: &App, id: ListingId, title: &str, body: &str) -> Result<(), String> {
    let err = |e: RepoError| e.to_string();
    let Some(l) = app.store.get_listing(id).await.map_err(err)? else { return Ok(()) };
    if l.lifecycle.status() == domain::listing::ListingStatus::Hidden {
        return Ok(()); // Hidden after the update was posted: nothing is sent for it.
    }
    let page = domain::own::listing_page(&app.public_url, l.slug.as_str());
    let subject = format!("{}: {title}", l.profile.name);
    let text = format!(
        "{name} posted an update.\n\n{title}\n\n{body}\n\nSee it on {page}\n\nYou get this email because you follow {name}; \
         unfollow on that page to stop.",
        name = l.profile.name
    );
    let now = app.now();
    for to in app.store.followers(id).await.map_err(err)? {
        let mail = app.store.queue_email(to.as_str(), &subject, &text, now).await.map_err(err)?;
        crate::worker::enqueue(app, &JobSpec::Email { email: mail }).await.map_err(err)?;
    }
    Ok(())
}

/// The calendar duties as of `app.now()`; returns how many listings they moved or weeks they awarded
/// (the hourly housekeeping is not counted).
pub async fn duties(app: &App) -> RepoResult<usize> {
    let now = app.now();
    let this_week = LaunchWeek::of(now);
    let mut changed = 0;
    // Go-live: scheduled listings whose week began.
    for l in app.store.listings_due(ListingStatus::Scheduled, this_week).await? {
        let mut next = l.lifecycle;
        if next.go_live(now).is_ok() && app.store.move_lifecycle(l.id, &l.lifecycle, &next, now).await? {
            tracing::info!(listing = l.id.get(), "launch week began; live");
            changed += 1;
        }
    }
    // A free listing whose week began before its badge was found gets the next free week.
    for l in app.store.listings_due(ListingStatus::AwaitingBadge, this_week).await? {
        let Some(week) =
            crate::own::free_week_for(app, now).await.map_err(|e| RepoError::Unexpected(e.to_string().into()))?
        else {
            // Logged at debug: the duties run every second, and the listing's page shows the state.
            tracing::debug!(listing = l.id.get(), "badge never found and every free week is full; it keeps waiting");
            continue;
        };
        let mut next = l.lifecycle;
        // The week's capacity is checked again as it moves (a week that filled meanwhile: next tick).
        let capacity = crate::own::site_settings(app).await.map_err(|e| RepoError::Unexpected(e.to_string().into()))?;
        let capacity = capacity.free_plan_weekly_capacity;
        if next.requeue_free(week, now).is_ok()
            && app.store.move_lifecycle_within(l.id, &l.lifecycle, &next, now, capacity).await?
                == domain::ports::QueueMove::Moved
        {
            tracing::info!(listing = l.id.get(), week = %week.monday(), "badge not found in time; queued for a later free week");
            enqueue_at(app, &JobSpec::BadgeCheck { listing: l.id.get() }, now).await?;
            changed += 1;
        }
    }
    // Launch of the Week for the week that ended (and any earlier one missed while nothing ran).
    for back in 1..=4 {
        let week = this_week.plus_weeks(-back);
        if app.store.week_awarded(week).await? {
            continue; // The common case, one indexed count: the tally is read once per week.
        }
        let tally = app.store.week_tally(week).await?;
        if tally.is_empty() {
            continue;
        }
        let awards = domain::award::launch_of_the_week(week, tally);
        if !awards.is_empty() && app.store.award_week(week, &awards).await? {
            tracing::info!(week = %week.monday(), winners = awards.len(), "Launch of the Week awarded");
            changed += 1;
        }
    }
    // Paid orders whose lines were not all applied (an instance stopped right after a payment).
    changed += crate::orders::fulfil_pending(app).await.map_err(|e| match e {
        crate::OpError::Repo(r) => r,
        other => RepoError::Unexpected(other.to_string().into()),
    })?;
    // Once an hour, on one instance: forget who viewed before yesterday (a repeat view is only ever
    // looked for on its own day), sign-in failures whose day is over, and the OAuth clients registered
    // over a week ago that nobody ever allowed.
    if app.store.claim_hourly_step(now).await? {
        let pruned = app.store.prune_view_marks(now.date_naive() - Duration::days(1)).await?;
        tracing::debug!(pruned, "old view marks forgotten");
        let pruned = app.store.prune_throttles(now - domain::throttle::PAIR_WINDOW).await?;
        tracing::debug!(pruned, "old sign-in counters forgotten");
        let pruned = app.store.prune_unused_clients(now - Duration::days(domain::oauth::UNUSED_CLIENT_DAYS)).await?;
        if pruned > 0 {
            tracing::info!(pruned, "OAuth clients nobody allowed forgotten");
        }
    }
    // Orders nobody paid within a day expire (their payment sessions were made to end then too).
    let expired = crate::orders::expire_pending(app, now).await?;
    if expired > 0 {
        tracing::info!(expired, "pending orders expired");
    }
    if changed > 0 {
        crate::public_data_changed(app, &crate::ReadCache::disabled()).await;
    }
    Ok(changed)
}
