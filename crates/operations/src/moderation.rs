//! Moderation as use cases, for the operator's command line and the console on the site alike: hide
//! and restore a listing, suspend and restore an account, people's reports, the domain blocklist and
//! the audit log. Every action is done by an [`Actor`] and written to the audit log with its reason in
//! the same transaction; every action that changes what the public sees empties every instance's read
//! caches at once (`Change::Everything`), so a cache warmed before a hiding never shows the listing.

use crate::{App, OpError, OpResult};
use domain::ids::{ListingId, UserId};
use domain::listing::{Listing, ListingStatus};
use domain::moderation::{
    AuditAction, AuditEntry, BlockedDomain, Hold, HoldCause, ModerationReason, NewAuditEntry, NewReport, Report,
    ReportNote, ReportReason,
};
use domain::ports::{Blocked, ListingVersionOf, SuspensionEffect};
use domain::slug::Slug;
use domain::user::{Email, User};

/// Who acts: the operator's command line, or an admin account on the console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    Cli,
    Admin(Email),
}

impl Actor {
    /// As the audit log names it: `cli`, or the admin's email.
    pub fn name(&self) -> String {
        match self {
            Self::Cli => "cli".into(),
            Self::Admin(e) => e.to_string(),
        }
    }
}

fn audit(app: &App, actor: &Actor, action: AuditAction, target: &str, reason: &str) -> NewAuditEntry {
    NewAuditEntry { at: app.now(), actor: actor.name(), action, target: target.to_owned(), reason: reason.to_owned() }
}

fn conflict(code: &'static str, message: impl Into<String>) -> OpError {
    OpError::Conflict { code, message: message.into() }
}

/// The listing with this slug, any status; 404 otherwise.
async fn listing_by_slug(app: &App, slug: &str) -> OpResult<Listing> {
    let slug = Slug::parse(slug.trim().to_owned()).map_err(|e| e.named("slug"))?;
    app.store.get_listing_by_slug(&slug).await?.ok_or(OpError::NotFound("listing"))
}

/// The account with this email; 404 otherwise.
async fn user_by_email(app: &App, email: &str) -> OpResult<User> {
    let email = Email::parse(email.trim()).map_err(|e| e.named("email"))?;
    app.store.user_by_email(&email).await?.map(|(u, _)| u).ok_or(OpError::NotFound("account"))
}

/// Tells this instance (`reads`, its read cache: emptied at once) and every other (through the shared
/// change counter, within a poll) that public data changed in a way no key names — a listing left or
/// came back, an account's votes: every cached read goes.
async fn everything_changed(app: &App, reads: &crate::ReadCache) {
    crate::public_data_changed(app, reads).await;
}

/// Hides a listing from every public read, with `reason` (shown to its owners, who are emailed).
/// 409 when it is hidden already or removed.
pub async fn hide_listing(
    app: &App,
    reads: &crate::ReadCache,
    actor: &Actor,
    slug: &str,
    reason: &str,
) -> OpResult<Listing> {
    let reason = ModerationReason::parse(reason.trim())?;
    let mut l = listing_by_slug(app, slug).await?;
    let from = l.lifecycle;
    l.lifecycle.hide().map_err(|e| conflict("listing_state", e.to_string()))?;
    let hold = Hold { reason: reason.to_string(), cause: HoldCause::Moderator, at: app.now(), by: actor.name() };
    let line = audit(app, actor, AuditAction::HideListing, l.slug.as_str(), reason.as_str());
    if !app.store.hide_listing(l.id, &from, &l.lifecycle, &hold, &line).await? {
        return Err(conflict("listing_state", "the listing changed meanwhile; look again and retry"));
    }
    everything_changed(app, reads).await;
    tell_owners_hidden(app, &l, reason.as_str()).await;
    Ok(l)
}

/// Emails each owner of a listing that it was hidden and why. A failure to queue is logged: the
/// hiding stands, and the owner sees the reason on their listing's page.
async fn tell_owners_hidden(app: &App, l: &Listing, reason: &str) {
    let owners = match app.store.listing_owners(l.id).await {
        Ok(o) => o,
        Err(e) => return tracing::warn!(error = %e, "could not read a hidden listing's owners"),
    };
    let page = format!("{}/me/listings/{}", app.public_url.trim_end_matches('/'), l.id);
    let subject = format!("{} is hidden from the directory", l.profile.name);
    let body = format!(
        "The site team hid {name} from the directory: it no longer shows in search, categories, boards or \
         its public page.\n\nWhy: {reason}\n\nYour listing is kept as it was; see it on {page}\n\nIf you \
         think this is a mistake, reply to this email and tell us why.",
        name = l.profile.name
    );
    for (_, to) in owners {
        send(app, to.as_str(), &subject, &body).await;
    }
}

/// Puts an email in the outbox and queues its delivery whatever this process can send: moderation
/// runs from the command line too, and the serving instances' worker delivers it (or, without SMTP,
/// leaves it in the outbox). A failure to queue is logged: the action stands.
async fn send(app: &App, to: &str, subject: &str, body: &str) {
    let queued = async {
        let id = app.store.queue_email(to, subject, body, app.now()).await?;
        crate::worker::enqueue(app, &crate::worker::JobSpec::Email { email: id }).await
    };
    if let Err(e) = queued.await {
        tracing::warn!(error = %e, "could not queue a moderation email");
    }
}

/// Brings a hidden listing back exactly as it was. 409 when it is not hidden, or when it is hidden
/// because its owner's account is suspended (restore the account instead).
pub async fn restore_listing(app: &App, reads: &crate::ReadCache, actor: &Actor, slug: &str) -> OpResult<Listing> {
    let mut l = listing_by_slug(app, slug).await?;
    let from = l.lifecycle;
    if app.store.listing_hold(l.id).await?.is_some_and(|h| h.cause == HoldCause::Suspension) {
        return Err(conflict(
            "listing_state",
            "the listing is hidden because its owner's account is suspended: restore the account (admin restore-user)",
        ));
    }
    l.lifecycle.restore().map_err(|e| conflict("listing_state", e.to_string()))?;
    let line = audit(app, actor, AuditAction::RestoreListing, l.slug.as_str(), "");
    if !app.store.restore_listing(l.id, &from, &l.lifecycle, &line).await? {
        return Err(conflict("listing_state", "the listing changed meanwhile; look again and retry"));
    }
    if l.lifecycle.status() == ListingStatus::AwaitingBadge {
        // Badge checks stop while a listing is hidden; the next one is due now.
        crate::worker::enqueue(app, &crate::worker::JobSpec::BadgeCheck { listing: l.id.get() }).await?;
    }
    everything_changed(app, reads).await;
    Ok(l)
}

/// Why a listing is hidden (for its owners and the console); `None` when it is not.
pub async fn hold_of(app: &App, id: ListingId) -> OpResult<Option<Hold>> {
    Ok(app.store.listing_hold(id).await?)
}

/// Suspends an account: its sessions, API keys and OAuth grants stop working at once, its listings
/// are hidden, its votes stop counting. 409 when it is suspended already; an admin account cannot be
/// suspended (take its admin right away first) so the console always has someone to undo it.
pub async fn suspend_user(
    app: &App,
    reads: &crate::ReadCache,
    actor: &Actor,
    email: &str,
    reason: &str,
) -> OpResult<(User, SuspensionEffect)> {
    let reason = ModerationReason::parse(reason.trim())?;
    let user = user_by_email(app, email).await?;
    if user.is_admin {
        return Err(conflict("account_state", "an admin account cannot be suspended"));
    }
    let hold = Hold {
        reason: format!("the owner's account is suspended: {reason}"),
        cause: HoldCause::Suspension,
        at: app.now(),
        by: actor.name(),
    };
    let line = audit(app, actor, AuditAction::SuspendUser, user.email.as_str(), reason.as_str());
    let Some(effect) = app.store.suspend_user(user.id, &hold, &line).await? else {
        return Err(conflict("account_state", "the account is suspended already"));
    };
    everything_changed(app, reads).await;
    let body = format!(
        "The site team suspended your launchdir account ({email}).\n\nWhy: {reason}\n\nWhile it is suspended you \
         cannot sign in, your API keys and connected apps do not work, your listings are hidden and your votes do \
         not count. Nothing is deleted. If you think this is a mistake, reply to this email and tell us why.",
        email = user.email
    );
    send(app, user.email.as_str(), "Your launchdir account is suspended", &body).await;
    Ok((user, effect))
}

/// Undoes a suspension: the account works again, the listings hidden because of it come back, its
/// votes count again. 409 when it is not suspended.
pub async fn restore_user(
    app: &App,
    reads: &crate::ReadCache,
    actor: &Actor,
    email: &str,
) -> OpResult<(User, SuspensionEffect)> {
    let user = user_by_email(app, email).await?;
    let line = audit(app, actor, AuditAction::RestoreUser, user.email.as_str(), "");
    let Some(effect) = app.store.restore_user(user.id, &line).await? else {
        return Err(conflict("account_state", "the account is not suspended"));
    };
    everything_changed(app, reads).await;
    Ok((user, effect))
}

/// A person reports a public listing: once per listing, at most
/// [`domain::moderation::REPORTS_PER_ACCOUNT_PER_DAY`] a day (429 beyond), 409 for a second report.
pub async fn report_listing(app: &App, reporter: UserId, slug: &str, reason: &str, note: &str) -> OpResult<()> {
    let mut errs = domain::ValidationErrors::default();
    let reason = errs.take(ReportReason::parse("reason", reason));
    let note = errs.take(ReportNote::parse(note.trim()));
    errs.into_result()?;
    let (Some(reason), Some(note)) = (reason, note) else { return Err(OpError::NotFound("listing")) };
    let l = listing_by_slug(app, slug).await?;
    if !l.lifecycle.is_public() {
        return Err(OpError::NotFound("listing"));
    }
    let cap = crate::quotas::Cap::account_day(
        "report_quota",
        "reports-day",
        reporter,
        domain::moderation::REPORTS_PER_ACCOUNT_PER_DAY,
        "reports this account made today",
    );
    crate::quotas::take(app, &[cap]).await?;
    let report = NewReport { listing: l.id, reporter, reason, note, at: app.now() };
    if !app.store.file_report(&report).await? {
        return Err(conflict("already_reported", "you reported this listing already; the site team has it"));
    }
    Ok(())
}

/// When and why the account is suspended; `None` when it is not.
pub async fn suspension(app: &App, user: UserId) -> OpResult<Option<(chrono::DateTime<chrono::Utc>, String)>> {
    Ok(app.store.suspension(user).await?)
}

/// People's reports, newest first (only open ones with `open_only`).
pub async fn reports(app: &App, open_only: bool, limit: u64) -> OpResult<Vec<Report>> {
    Ok(app.store.reports(open_only, limit).await?)
}

/// Open reports grouped by listing, the most reported first: (slug, name, count, reasons, newest).
pub fn queue(reports: &[Report]) -> Vec<ReportedListing> {
    let mut by: Vec<ReportedListing> = Vec::new();
    for r in reports.iter().filter(|r| r.closed_at.is_none()) {
        match by.iter_mut().find(|x| x.listing == r.listing) {
            Some(x) => {
                x.count += 1;
                if !x.reasons.contains(&r.reason) {
                    x.reasons.push(r.reason);
                }
            }
            None => by.push(ReportedListing {
                listing: r.listing,
                slug: r.listing_slug.clone(),
                name: r.listing_name.clone(),
                count: 1,
                reasons: vec![r.reason],
                newest: r.at,
            }),
        }
    }
    by.sort_by(|a, b| b.count.cmp(&a.count).then(b.newest.cmp(&a.newest)));
    by
}

/// A listing in the report queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedListing {
    pub listing: ListingId,
    pub slug: String,
    pub name: String,
    pub count: usize,
    pub reasons: Vec<ReportReason>,
    pub newest: chrono::DateTime<chrono::Utc>,
}

/// Closes a listing's open reports without hiding it (they were not founded); how many.
pub async fn dismiss_reports(app: &App, actor: &Actor, slug: &str, reason: &str) -> OpResult<u64> {
    let reason = ModerationReason::parse(reason.trim())?;
    let l = listing_by_slug(app, slug).await?;
    let line = audit(app, actor, AuditAction::CloseReports, l.slug.as_str(), reason.as_str());
    Ok(app.store.close_reports(l.id, app.now(), &line).await?)
}

/// Adds a domain to the blocklist (it and its subdomains cannot be submitted or claimed). 409 when
/// it is there already.
pub async fn block_domain(app: &App, actor: &Actor, domain: &str, reason: &str) -> OpResult<Blocked> {
    let domain = BlockedDomain::parse("domain", domain)?;
    let reason = ModerationReason::parse(reason.trim())?;
    let blocked = Blocked { domain, reason: reason.to_string(), at: app.now(), by: actor.name() };
    let line = audit(app, actor, AuditAction::BlockDomain, blocked.domain.as_str(), reason.as_str());
    if !app.store.block_domain(&blocked, &line).await? {
        return Err(conflict("already_blocked", format!("{} is on the blocklist already", blocked.domain.as_str())));
    }
    Ok(blocked)
}

/// Takes a domain off the blocklist; 404 when it was not on it.
pub async fn unblock_domain(app: &App, actor: &Actor, domain: &str) -> OpResult<()> {
    let domain = BlockedDomain::parse("domain", domain)?;
    let line = audit(app, actor, AuditAction::UnblockDomain, domain.as_str(), "");
    if !app.store.unblock_domain(&domain, &line).await? {
        return Err(OpError::NotFound("blocked domain"));
    }
    Ok(())
}

pub async fn blocked_domains(app: &App) -> OpResult<Vec<Blocked>> {
    Ok(app.store.blocked_domains().await?)
}

/// Refuses a website whose host is on the blocklist (or under a domain that is) with a 400 naming
/// `field`; submit_listing and claim_listing call it before anything else happens.
pub async fn refuse_blocked(app: &App, field: &str, host: &str) -> OpResult<()> {
    match app.store.blocked_among(&domain::moderation::domains_of(host)).await? {
        Some(b) => Err(domain::ValidationError::new(
            field,
            format!("{} is not accepted in this directory (the site team blocked {})", host, b.domain.as_str()),
        )
        .into()),
        None => Ok(()),
    }
}

/// The audit log, newest first.
pub async fn audit_log(app: &App, limit: u64) -> OpResult<Vec<AuditEntry>> {
    Ok(app.store.audit_log(limit).await?)
}

/// What the console's front page shows: the newest listings and the latest owner edits.
pub async fn recent(app: &App, limit: u64) -> OpResult<(Vec<Listing>, Vec<ListingVersionOf>)> {
    Ok((app.store.recent_listings(limit).await?, app.store.recent_edits(limit).await?))
}
