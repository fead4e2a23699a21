//! What people do on the site's listing pages: vote (and take the vote back) and follow. Never an API
//! operation: votes come only from people signed in on the site. The rules are the domain's
//! (`engagement::Vote::cast`: live listings only, never one's own); storage keeps one vote per account
//! and listing.

use crate::{OpError, OpResult};
use bootstrap::App;
use domain::engagement::{Vote, VoteRefused};
use domain::ids::UserId;
use domain::listing::{Listing, ListingStatus};
use domain::ports::{ClaimRepository, ListingRepository, OwnListingRepository};
use domain::slug::Slug;

/// The live listing at `slug`, or 404.
async fn live(app: &App, slug: &str) -> OpResult<Listing> {
    let slug = Slug::parse(slug).map_err(|_| OpError::NotFound("listing"))?;
    app.store
        .get_listing_by_slug(&slug)
        .await?
        .filter(|l| l.lifecycle.status() == ListingStatus::Live)
        .ok_or(OpError::NotFound("listing"))
}

/// What the person did on a listing: voted, follows.
pub async fn state(app: &App, user: UserId, slug: &str) -> OpResult<(bool, bool)> {
    let l = live(app, slug).await?;
    Ok(app.store.engagement_of(l.id, user).await?)
}

/// Casts the person's vote; false when they had voted already. 409 for their own listing.
pub async fn vote(app: &App, user: UserId, slug: &str) -> OpResult<bool> {
    let l = live(app, slug).await?;
    let owners: Vec<UserId> = app.store.listing_owners(l.id).await?.into_iter().map(|(u, _)| u).collect();
    let v = Vote::cast(l.id, l.lifecycle.status(), &owners, user, app.now()).map_err(|e| OpError::Conflict {
        code: match e {
            VoteRefused::OwnListing => "own_listing",
            VoteRefused::NotLive => "not_live",
        },
        message: e.to_string(),
    })?;
    Ok(app.store.cast_vote(&v).await?)
}

/// Takes the person's vote back; false when there was none.
pub async fn unvote(app: &App, user: UserId, slug: &str) -> OpResult<bool> {
    let l = live(app, slug).await?;
    Ok(app.store.uncast_vote(l.id, user).await?)
}

/// Follows (or, with `on` false, stops following) the listing; false when nothing changed.
pub async fn follow(app: &App, user: UserId, slug: &str, on: bool) -> OpResult<bool> {
    let l = live(app, slug).await?;
    Ok(if on { app.store.follow(l.id, user, app.now()).await? } else { app.store.unfollow(l.id, user).await? })
}
