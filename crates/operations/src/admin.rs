//! The operator's commands (`launchdir-api admin …`) as use cases: the CLI parses flags and prints,
//! these read and change the directory through the ports.

use crate::{App, OpError, OpResult};
use domain::claim::Claim;
use domain::ids::ListingId;
use domain::money::Cents;
use domain::ports::{ListingVersion, OutboxEmail, RepoError};
use domain::product::ProductCode;
use domain::user::{Email, User};

/// The account with this email.
pub async fn user_by_email(app: &App, email: &Email) -> OpResult<Option<User>> {
    Ok(app.store.user_by_email(email).await?.map(|(u, _)| u))
}

/// Sets a product's price (VAT excluded) and tells running instances; for an unknown product, the codes
/// that exist.
pub async fn set_price(app: &App, code: &ProductCode, price: Cents) -> OpResult<Result<(), Vec<String>>> {
    match app.store.set_price(code, price).await {
        Ok(()) => {
            crate::public_data_changed(app, &crate::ReadCache::disabled()).await;
            Ok(Ok(()))
        }
        Err(RepoError::NotFound) => {
            Ok(Err(app.store.list_products().await?.into_iter().map(|p| p.code.as_str().to_owned()).collect()))
        }
        Err(e) => Err(e.into()),
    }
}

/// Emails in the outbox, newest first, optionally only those to `to`.
pub async fn outbox(app: &App, to: Option<&str>, limit: u64) -> OpResult<Vec<OutboxEmail>> {
    Ok(app.store.outbox(to, limit).await?)
}

/// Every recorded edit of a listing, oldest first.
pub async fn listing_history(app: &App, id: ListingId) -> OpResult<Vec<ListingVersion>> {
    Ok(app.store.listing_versions(id).await?)
}

/// The fields an owner's edit changed, each with its value before and after, in the edit's order
/// (`before` and `after` are a `ListingVersion`'s copies: JSON objects of the own-editable fields).
pub fn changed_fields(before: &str, after: &str) -> Vec<(String, serde_json::Value, serde_json::Value)> {
    let before: serde_json::Value = serde_json::from_str(before).unwrap_or_default();
    let after: serde_json::Value = serde_json::from_str(after).unwrap_or_default();
    after
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(field, new)| &before[field.as_str()] != *new)
        .map(|(field, new)| (field.clone(), before[field.as_str()].clone(), new.clone()))
        .collect()
}

/// Every claim on a listing with the claimant's email (or "user N" for a deleted account), oldest first.
pub async fn listing_claims(app: &App, id: ListingId) -> OpResult<Vec<(Claim, String)>> {
    let mut out = Vec::new();
    for c in app.store.claims_on_listing(id).await? {
        let who = app.store.get_user(c.user).await?.map_or_else(|| format!("user {}", c.user), |u| u.email.to_string());
        out.push((c, who));
    }
    Ok(out)
}

/// Sets a site setting after checking it, and tells running instances.
pub async fn set_setting(app: &App, key: &str, value: &str) -> OpResult<()> {
    domain::settings::validate(key, value).map_err(|e| OpError::Invalid(e.into()))?;
    app.store.set_setting(key, value).await?;
    crate::public_data_changed(app, &crate::ReadCache::disabled()).await;
    Ok(())
}

/// The background work waiting, as the operator's metrics show it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Backlog {
    pub jobs: domain::ports::JobBacklog,
    /// Seconds the oldest due job has waited (0 when none waits).
    pub oldest_job_secs: f64,
    pub emails_unsent: u64,
    /// Seconds the oldest unsent email has waited (0 when none waits).
    pub oldest_email_secs: f64,
}

/// The job queue and the outbox, as of now.
pub async fn backlog(app: &App) -> OpResult<Backlog> {
    let now = app.now();
    let age = |t: Option<chrono::DateTime<chrono::Utc>>| {
        t.map_or(0.0, |t| (now - t).num_milliseconds().max(0) as f64 / 1000.0)
    };
    let jobs = app.store.job_backlog(now).await?;
    let (emails_unsent, oldest_email) = app.store.unsent_emails().await?;
    Ok(Backlog { jobs, oldest_job_secs: age(jobs.oldest_due), emails_unsent, oldest_email_secs: age(oldest_email) })
}
