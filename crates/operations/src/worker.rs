//! The background worker: durable jobs claimed from the database (so no two instances run one job and
//! a job whose instance died comes back when its lease runs out). `serve` runs [`run_forever`]; `admin
//! run-jobs` runs [`run_due`] once. Jobs here: reading a site and drafting (whole or `regenerate`d
//! fields), reading a competitor, delivering an email, looking for our badge on a free listing's
//! homepage, and telling followers of an update; each run also does the calendar duties of
//! `crate::lifecycle` (go-live, Launch of the Week).

use crate::App;
use crate::OpError;
use crate::drafts::{save_listing, update_draft};
use chrono::Duration;
use domain::draft::{COMPARED_FIELDS, Draft, DraftField, DraftProfile, DraftStatus};
use domain::ids::{DraftId, ListingId};
use domain::ports::{RepoError, RepoResult, Site};
use serde_json::{Value, json};
use std::time::Instant;

/// How long a claimed job is ours before another instance may take it over: longer than the slowest
/// crawl (7 pages × 30 s, plus robots.txt files) and drafting.
const LEASE_MINUTES: i64 = 15;
/// How often the calendar task asks the store to bring its search terms up to date
/// (`ListingRepository::refresh_search_terms`), or twenty times as long as the last refresh took if
/// that is longer: until then a word a listing gained completes from the index itself on SQLite
/// (slower), and a one-word search counts its matches on PostgreSQL (slower).
const SEARCH_TERMS_REFRESH: std::time::Duration = std::time::Duration::from_secs(30);
/// Attempts before a job that keeps failing on our side is given up.
const MAX_ATTEMPTS: i32 = 5;

/// A job, by kind.
#[derive(Debug, Clone, PartialEq)]
pub enum JobSpec {
    /// Read the draft's site and draft it; `only` redrafts just those fields (regenerate).
    Draft {
        draft: DraftId,
        only: Option<Vec<DraftField>>,
    },
    Competitor {
        draft: DraftId,
        url: String,
    },
    Email {
        email: i64,
    },
    /// Look for our badge on a free listing's homepage; re-queued every [`BADGE_RECHECK_HOURS`] while
    /// the listing waits for it.
    BadgeCheck {
        listing: i64,
    },
    /// Tell a listing's followers about an update it posted.
    NotifyFollowers {
        listing: i64,
        title: String,
        body: String,
    },
}

/// How often a listing waiting for its badge is looked at again.
pub const BADGE_RECHECK_HOURS: i64 = 6;

impl JobSpec {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::Draft { .. } => "draft",
            Self::Competitor { .. } => "competitor",
            Self::Email { .. } => "email",
            Self::BadgeCheck { .. } => "badge_check",
            Self::NotifyFollowers { .. } => "notify_followers",
        }
    }

    pub(crate) fn payload(&self) -> Value {
        match self {
            Self::Draft { draft, only } => json!({
                "draft": draft.to_string(),
                "only": only.as_ref().map(|fs| fs.iter().map(|f| f.as_str()).collect::<Vec<_>>()),
            }),
            Self::Competitor { draft, url } => json!({"draft": draft.to_string(), "url": url}),
            Self::Email { email } => json!({"email": email}),
            Self::BadgeCheck { listing } => json!({"listing": listing}),
            Self::NotifyFollowers { listing, title, body } => json!({"listing": listing, "title": title, "body": body}),
        }
    }

    fn parse(kind: &str, payload: &str) -> Option<Self> {
        let v: Value = serde_json::from_str(payload).ok()?;
        let draft = || v.get("draft").and_then(Value::as_str).and_then(|s| DraftId::parse(s).ok());
        Some(match kind {
            "draft" => Self::Draft {
                draft: draft()?,
                only: match v.get("only") {
                    Some(Value::Array(a)) => Some(
                        a.iter().filter_map(Value::as_str).filter_map(|s| DraftField::parse(s, "only").ok()).collect(),
                    ),
                    _ => None,
                },
            },
            "competitor" => Self::Competitor { draft: draft()?, url: v.get("url")?.as_str()?.to_owned() },
            "email" => Self::Email { email: v.get("email")?.as_i64()? },
            "badge_check" => Self::BadgeCheck { listing: v.get("listing")?.as_i64()? },
            "notify_followers" => Self::NotifyFollowers {
                listing: v.get("listing")?.as_i64()?,
                title: v.get("title")?.as_str()?.to_owned(),
                body: v.get("body")?.as_str()?.to_owned(),
            },
            _ => return None,
        })
    }
}

/// Queues a job due now and wakes this instance's worker.
pub async fn enqueue(app: &App, spec: &JobSpec) -> RepoResult<i64> {
    let now = app.now();
    let id = app.store.enqueue_job(spec.kind(), &spec.payload().to_string(), now, now).await?;
    app.wake.notify_one();
    Ok(id)
}

/// Puts an email in the outbox and, with SMTP configured, queues its delivery; true when it was handed
/// to delivery, false when it waits in the outbox (`admin outbox`).
pub async fn send_email(
    app: &App,
    to: &str,
    subject: &str,
    body: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> RepoResult<bool> {
    let id = app.store.queue_email(to, subject, body, now).await?;
    if app.mailer.is_none() {
        return Ok(false);
    }
    enqueue(app, &JobSpec::Email { email: id }).await?;
    Ok(true)
}

/// A name for this worker, unique per process.
pub fn worker_name() -> String {
    format!("{}-{}", std::process::id(), &uuid_like())
}

fn uuid_like() -> String {
    DraftId::new_random().to_string()[..8].to_owned()
}

/// Aborts a task when dropped (the calendar here, the read cache's change follower in `cache`).
#[derive(Debug)]
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The longest one job may run (a crawl of a slow site included) before it is given up as failed; well
/// inside its lease, so no second worker takes it while it still runs.
pub const JOB_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// Runs every job that is due, one at a time, until none is left; returns how many ran.
pub async fn run_due(app: &App, worker: &str) -> RepoResult<usize> {
    let mut ran = 0;
    while run_one(app, worker).await? {
        ran += 1;
    }
    Ok(ran)
}

/// Claims and runs one due job; false when none is due.
pub async fn run_one(app: &App, worker: &str) -> RepoResult<bool> {
    let Some(job) = app.store.claim_job(worker, app.now(), Duration::minutes(LEASE_MINUTES)).await? else {
        return Ok(false);
    };
    let started = Instant::now();
    let outcome = match JobSpec::parse(&job.kind, &job.payload) {
        Some(spec) => match tokio::time::timeout(JOB_DEADLINE, run(app, &spec)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("took longer than {} s", JOB_DEADLINE.as_secs())),
        },
        None => Err(format!("unknown job {:?}", job.kind)),
    };
    let now = app.now();
    match outcome {
        Ok(()) => {
            app.store.complete_job(job.id, worker, now).await?;
            tracing::info!(job = job.id, kind = %job.kind, ms = started.elapsed().as_millis() as u64, "job done");
        }
        Err(e) => {
            let retry = (job.attempts < MAX_ATTEMPTS).then(|| now + Duration::seconds(30 * i64::from(job.attempts)));
            tracing::warn!(job = job.id, kind = %job.kind, attempts = job.attempts, error = %e, will_retry = retry.is_some(), "job failed");
            app.store.fail_job(job.id, worker, &e, retry, now).await?;
            if retry.is_none() {
                given_up(app, &job.kind, &job.payload).await;
            }
        }
    }
    Ok(true)
}

/// A job that failed for good leaves its draft in a state a person can act on, never stuck.
async fn given_up(app: &App, kind: &str, payload: &str) {
    let Some(spec) = JobSpec::parse(kind, payload) else { return };
    let result = match spec {
        JobSpec::Draft { draft, only: None } => {
            move_draft(app, draft, |d| d.fail("drafting failed on our side; submit the URL again in a while")).await
        }
        JobSpec::Draft { draft, only: Some(_) } => change(app, draft, |d| d.extras.regenerating.clear()).await,
        JobSpec::Competitor { draft, .. } => {
            change(app, draft, |d| {
                if let Some(c) = &mut d.extras.competitor
                    && let Err(refused) = c.failed("reading the site failed on our side".into())
                {
                    // Read meanwhile (a retry that got through): nothing is stuck, nothing to record.
                    tracing::info!(%refused, "competitor already settled");
                }
            })
            .await
        }
        JobSpec::Email { .. } | JobSpec::BadgeCheck { .. } | JobSpec::NotifyFollowers { .. } => Ok(None),
    };
    if let Err(e) = result {
        tracing::error!(error = with_causes(&e), "could not record a failed job on its draft");
    }
}

/// [`update_draft`] for the worker, whose changes cannot fail.
/// Why moving a draft did not happen: storage failed, or the domain refused the transition (the draft
/// is no longer where this job expected it: a re-run after a lease ran out finished it already).
#[derive(Debug)]
enum NotMoved {
    Repo(RepoError),
    Refused(domain::listing::TransitionError),
}

impl From<RepoError> for NotMoved {
    fn from(e: RepoError) -> Self {
        Self::Repo(e)
    }
}

/// Applies `f` — which moves the draft through its domain transitions — and saves it; a refused
/// transition saves nothing and is logged, and the answer is `Ok(None)`.
async fn move_draft(
    app: &App,
    id: DraftId,
    mut f: impl FnMut(&mut Draft) -> Result<(), domain::listing::TransitionError>,
) -> RepoResult<Option<Draft>> {
    match update_draft::<NotMoved>(app, id, |d| f(d).map_err(NotMoved::Refused)).await {
        Ok(saved) => Ok(saved),
        Err(NotMoved::Refused(refused)) => {
            tracing::info!(draft = %id, %refused, "the draft moved on; this step of its job is skipped");
            Ok(None)
        }
        Err(NotMoved::Repo(e)) => Err(e),
    }
}

async fn change(app: &App, id: DraftId, mut f: impl FnMut(&mut Draft)) -> RepoResult<Option<Draft>> {
    update_draft::<RepoError>(app, id, |d| {
        f(d);
        Ok(())
    })
    .await
}

/// Runs one job. `Err` is a failure on our side (retried); a site that cannot be read is not one — it
/// is recorded on the draft as the reason.
async fn run(app: &App, spec: &JobSpec) -> Result<(), String> {
    let err = |e: RepoError| e.to_string();
    match spec {
        JobSpec::Draft { draft, only } => draft_job(app, *draft, only.as_deref()).await,
        JobSpec::Competitor { draft, url } => competitor_job(app, *draft, url).await,
        JobSpec::BadgeCheck { listing } => crate::lifecycle::badge_check(app, ListingId::from_db(*listing)).await,
        JobSpec::NotifyFollowers { listing, title, body } => {
            crate::lifecycle::notify_followers(app, ListingId::from_db(*listing), title, body).await
        }
        JobSpec::Email { email } => {
            let Some(mail) = app.store.get_email(*email).await.map_err(err)? else { return Ok(()) };
            if mail.sent_at.is_some() {
                return Ok(());
            }
            let Some(mailer) = &app.mailer else { return Ok(()) };
            match mailer.send(&mail).await {
                Ok(()) => app.store.mark_email_sent(mail.id, app.now()).await.map_err(err),
                Err(e) => {
                    app.store.mark_email_failed(mail.id, &e).await.map_err(err)?;
                    Err(e)
                }
            }
        }
    }
}

async fn category_terms(app: &App) -> Result<Vec<domain::category::CategoryTerms>, String> {
    Ok(app.store.all_categories().await.map_err(|e| e.to_string())?.iter().map(|c| c.terms()).collect())
}

async fn draft_job(app: &App, id: DraftId, only: Option<&[DraftField]>) -> Result<(), String> {
    let err = |e: RepoError| e.to_string();
    let Some(d) = app.store.get_draft(id).await.map_err(err)? else { return Ok(()) };
    if only.is_none() && !matches!(d.status(), DraftStatus::Crawling | DraftStatus::Drafting) {
        return Ok(()); // Already finished (a job re-run after its lease ran out).
    }
    let site = match app.reader.read_site(&d.url).await {
        Ok(site) => site,
        Err(e) => {
            let reason = e.to_string();
            move_draft(app, id, |d| match only {
                None => d.fail(reason.clone()),
                Some(fs) => {
                    d.extras.regenerating.retain(|f| !fs.contains(f));
                    Ok(())
                }
            })
            .await
            .map_err(err)?;
            return Ok(());
        }
    };
    if only.is_none() {
        // A re-run (its lease ran out) may find the draft past crawling already; only a draft still
        // crawling moves.
        let moved = move_draft(app, id, |d| if *d.status() == DraftStatus::Crawling { d.crawled() } else { Ok(()) });
        if moved.await.map_err(err)?.is_none() {
            return Ok(());
        }
    }
    let wanted: Vec<DraftField> = only.map_or_else(|| DraftField::ALL.to_vec(), <[DraftField]>::to_vec);
    let drafted = app.drafter.draft(&site, &wanted, &category_terms(app).await?).await.map_err(|e| e.to_string())?;
    let text = site.text();
    let saved = move_draft(app, id, |d| {
        if only.is_none() {
            if *d.status() == DraftStatus::Crawling {
                d.crawled()?;
            }
            d.drafted()?;
        }
        d.apply_drafted(drafted.clone(), &text, only);
        Ok(())
    })
    .await
    .map_err(err)?;
    if let Some(d) = saved.filter(|d| d.listing_id.is_some()) {
        sync_listing(app, &d).await;
    }
    Ok(())
}

/// A redraft of a submitted draft flows into its listing (when the result is a valid listing).
async fn sync_listing(app: &App, d: &Draft) {
    match save_listing(app, d).await {
        Ok(_) => {}
        Err(OpError::Invalid(problems)) => {
            tracing::info!(draft = %d.id, problems = %problems, "redraft left the listing as it was");
        }
        Err(e) => tracing::warn!(error = %e, draft = %d.id, "listing not updated after a redraft"),
    }
}

async fn competitor_job(app: &App, id: DraftId, url: &str) -> Result<(), String> {
    let err = |e: RepoError| e.to_string();
    let result: Result<(DraftProfile, Site), String> = match app.reader.read_site(url).await {
        Ok(site) => {
            let drafted = app.drafter.draft(&site, &COMPARED_FIELDS, &[]).await.map_err(|e| e.to_string())?;
            let mut theirs = Draft::new(
                DraftId::new_random(),
                domain::ids::UserId::from_db(0),
                domain::draft::SiteUrl::parse("url", url).map_err(|e| e.problem)?,
                app.now(),
            );
            theirs.apply_drafted(drafted, &site.text(), Some(&COMPARED_FIELDS));
            Ok((theirs.profile, site))
        }
        Err(e) => Err(e.to_string()),
    };
    change(app, id, |d| {
        let ours = d.profile.clone();
        let Some(c) = &mut d.extras.competitor else { return };
        if c.url != url {
            return; // Replaced by a newer competitor_url meanwhile.
        }
        let moved = match &result {
            Ok((theirs, _)) => c.compared(&ours, theirs),
            Err(reason) => c.failed(reason.clone()),
        };
        if let Err(refused) = moved {
            // Settled by an earlier run of this job; the first result stands.
            tracing::info!(%refused, "competitor already settled");
        }
    })
    .await
    .map_err(err)?;
    Ok(())
}

/// An error and each of its causes, for the log: a storage failure's own message ("storage failed")
/// does not say why (a pool timeout, a lost connection).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// The worker loop `serve` runs: the calendar duties and every due job, then wait for a wake-up (a job
/// queued on this instance) or the next poll (jobs queued elsewhere or coming due), until shutdown.
///
/// The calendar (go-live, awards, badge re-checks due, the hourly step) runs on its own task every
/// `poll`, so a queue full of slow crawls never holds up a launch; each job has [`JOB_DEADLINE`].
pub async fn run_forever(app: App, poll: std::time::Duration) {
    let worker = worker_name();
    tracing::info!(worker = %worker, "job worker started");
    let calendar_app = app.clone();
    let calendar = tokio::spawn(async move {
        let mut next_terms_refresh = Instant::now();
        loop {
            if let Err(e) = crate::lifecycle::duties(&calendar_app).await {
                tracing::error!(error = with_causes(&e), "calendar duties could not reach the database");
            }
            if Instant::now() >= next_terms_refresh {
                let started = Instant::now();
                let refreshed = calendar_app.store.refresh_search_terms().await;
                let took = started.elapsed();
                // A refresh walks the whole index (at a million listings 5.2 s on SQLite, 3.4 s on
                // PostgreSQL): at most a twentieth of the time goes to it, however often listings change.
                next_terms_refresh = Instant::now() + SEARCH_TERMS_REFRESH.max(took * 20);
                match refreshed {
                    Ok(true) => tracing::debug!(ms = took.as_millis() as u64, "search terms refreshed"),
                    Ok(false) => {}
                    Err(e) => tracing::error!(error = with_causes(&e), "search terms could not be refreshed"),
                }
            }
            tokio::time::sleep(poll).await;
        }
    });
    // The calendar task ends with this one (the server aborts the worker on shutdown).
    let _calendar = AbortOnDrop(calendar);
    loop {
        if let Err(e) = run_due(&app, &worker).await {
            tracing::error!(error = with_causes(&e), "job worker could not reach the database");
        }
        tokio::select! {
            () = app.wake.notified() => {}
            () = tokio::time::sleep(poll) => {}
        }
    }
}

#[cfg(test)]
mod log_tests {
    #[test]
    fn a_logged_storage_failure_says_why() {
        let e = domain::ports::RepoError::Unexpected("pool timed out while waiting for an open connection".into());
        assert_eq!(super::with_causes(&e), "storage failed: pool timed out while waiting for an open connection");
    }
}
