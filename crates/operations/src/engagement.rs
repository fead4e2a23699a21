//! What people do on the site's listing pages: vote (and take the vote back) and follow. Never an API
//! operation: votes come only from people signed in on the site. The rules are the domain's
//! (`engagement::Vote::cast`: live listings only, never one's own); storage keeps one vote per account
//! and listing.

use crate::App;
use crate::{OpError, OpResult};
use domain::engagement::{View, Vote, VoteRefused, Voter};
use domain::ids::UserId;
use domain::listing::{Listing, ListingStatus};
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

/// Casts the person's vote from `address` (the client's IP as the site sees it); false when they had
/// voted already. 409 for their own listing, and past the per-address daily cap.
pub async fn vote(app: &App, user: UserId, slug: &str, address: Option<&str>) -> OpResult<bool> {
    let l = live(app, slug).await?;
    crate::accounts::require_verified(app, user, "voting").await?;
    let owners: Vec<UserId> = app.store.listing_owners(l.id).await?.into_iter().map(|(u, _)| u).collect();
    let account = app.store.get_user(user).await?.ok_or(OpError::Unauthenticated)?;
    let now = app.now();
    let address_key = match address {
        Some(a) => Some(crate::quotas::keyed(app, "vote-address", a).await?),
        None => None,
    };
    let address_votes_today = match &address_key {
        Some(k) => {
            let midnight = now.date_naive().and_hms_opt(0, 0, 0).map_or(now, |t| t.and_utc());
            app.store.votes_from_address_since(k, midnight).await?
        }
        None => 0,
    };
    let voter = Voter { id: user, since: account.created_at, address_key, address_votes_today };
    let v = Vote::cast(l.id, l.lifecycle.status(), &owners, &voter, now).map_err(|e| OpError::Conflict {
        code: match e {
            VoteRefused::OwnListing => "own_listing",
            VoteRefused::NotLive => "not_live",
            VoteRefused::AddressCap => "vote_cap",
        },
        message: e.to_string(),
    })?;
    Ok(app.store.cast_vote(&v).await?)
}

/// A visit to the listing page, with one lookup of the listing: counts the view once a day per
/// viewer and never a bot's, and says whether the signed-in person voted for and follows it (false,
/// false when signed out). The viewer is the account when signed in, else the client's `address` and
/// browser (`user_agent`): a person who signs in later counts once more, a crawler never.
/// A view that cannot be counted is logged, not returned: the page still shows.
pub async fn visit(
    app: &App,
    slug: &str,
    user: Option<UserId>,
    user_agent: &str,
    address: Option<std::net::IpAddr>,
) -> OpResult<(bool, bool)> {
    let viewer = match (user, address) {
        (Some(u), _) => format!("user:{}", u.get()),
        (None, a) => format!("anon:{}:{user_agent}", a.map(|a| a.to_string()).unwrap_or_default()),
    };
    // Only the id is needed (the page reads the listing itself through get_listing).
    let slug = Slug::parse(slug).map_err(|_| OpError::NotFound("listing"))?;
    let id = app.store.live_listing_id(&slug).await?.ok_or(OpError::NotFound("listing"))?;
    let counted = match View::record(id, user_agent, crate::quotas::keyed(app, "viewer", &viewer).await?, app.now()) {
        Some(v) => app.store.record_view(&v).await.map(|_| ()),
        None => Ok(()),
    };
    if let Err(e) = counted {
        tracing::warn!(error = %e, "a view was not counted");
    }
    match user {
        Some(u) => Ok(app.store.engagement_of(id, u).await?),
        None => Ok((false, false)),
    }
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
