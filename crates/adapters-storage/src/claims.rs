//! Claims (port `ClaimRepository`): a claim row per attempt, verified by one compare-and-set that also
//! makes the claimant an owner and marks the listing verified.

use crate::entity::{claims, listing_owners, listings, users};
use crate::store::{SeaOrmStore, add_owner, newest_page, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, FixedOffset, Utc};
use domain::claim::{Claim, ClaimCheck, ClaimMethod, ClaimRecord, ClaimStatus, NewClaim};
use domain::ids::{ClaimId, ListingId, UserId};
use domain::paging::{PageRequest, Paged};
use domain::ports::{ClaimRepository, RepoError, RepoResult};
use domain::user::Email;
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder};

/// The role a verified claim gives (beside the submitter's `owner` and invited `cofounder`).
const CLAIMANT: &str = "claimant";

fn ts(t: DateTime<Utc>) -> DateTime<FixedOffset> {
    t.into()
}

fn check_json(c: &ClaimCheck) -> String {
    serde_json::json!({
        "at": c.at.to_rfc3339(), "verified": c.verified, "looked_for": c.looked_for, "found": c.found,
    })
    .to_string()
}

fn check_from_json(raw: &str) -> Option<ClaimCheck> {
    let v: serde_json::Value = serde_json::from_str(raw).ok()?;
    Some(ClaimCheck {
        at: DateTime::parse_from_rfc3339(v["at"].as_str()?).ok()?.with_timezone(&Utc),
        verified: v["verified"].as_bool()?,
        looked_for: v["looked_for"].as_str()?.to_owned(),
        found: v["found"].as_str()?.to_owned(),
    })
}

fn to_claim(m: claims::Model) -> RepoResult<Claim> {
    let bad = |what: &str| RepoError::Unexpected(format!("claim {} has an unknown {what}", m.id).into());
    Ok(ClaimRecord {
        id: ClaimId::from_db(m.id),
        user: UserId::from_db(m.user_id),
        listing: ListingId::from_db(m.listing_id),
        method: ClaimMethod::parse(&m.method).map_err(|_| bad("method"))?,
        email: m.email.clone(),
        token: m.token.clone(),
        status: ClaimStatus::parse(&m.status).ok_or_else(|| bad("status"))?,
        created_at: m.created_at.with_timezone(&Utc),
        expires_at: m.expires_at.with_timezone(&Utc),
        verified_at: m.verified_at.map(|t| t.with_timezone(&Utc)),
        last_check: m.last_check.as_deref().and_then(check_from_json),
    }
    .into())
}

#[async_trait]
impl ClaimRepository for SeaOrmStore {
    async fn create_claim(&self, new: &NewClaim) -> RepoResult<Claim> {
        let row = claims::ActiveModel {
            user_id: Set(new.user.get()),
            listing_id: Set(new.listing.get()),
            method: Set(new.method.as_str().to_owned()),
            email: Set(new.email.clone()),
            token_hash: Set(new.token_hash.clone()),
            token: Set(new.token.clone()),
            status: Set(ClaimStatus::Pending.as_str().to_owned()),
            created_at: Set(ts(new.created_at)),
            expires_at: Set(ts(ClaimStatus::expires_at(new.created_at))),
            verified_at: Set(None),
            last_check: Set(None),
            ..Default::default()
        };
        to_claim(row.insert(&self.db).await.map_err(repo_err)?)
    }

    async fn open_claim(
        &self,
        user: UserId,
        listing: ListingId,
        method: ClaimMethod,
        now: DateTime<Utc>,
    ) -> RepoResult<Option<Claim>> {
        claims::Entity::find()
            .filter(claims::Column::UserId.eq(user.get()))
            .filter(claims::Column::ListingId.eq(listing.get()))
            .filter(claims::Column::Method.eq(method.as_str()))
            .filter(claims::Column::Status.eq(ClaimStatus::Pending.as_str()))
            .filter(claims::Column::ExpiresAt.gte(ts(now)))
            .order_by_desc(claims::Column::Id)
            .one(&self.db)
            .await
            .map_err(repo_err)?
            .map(to_claim)
            .transpose()
    }

    async fn my_claim(&self, user: UserId, id: ClaimId) -> RepoResult<Option<Claim>> {
        claims::Entity::find_by_id(id.get())
            .filter(claims::Column::UserId.eq(user.get()))
            .one(&self.db)
            .await
            .map_err(repo_err)?
            .map(to_claim)
            .transpose()
    }

    async fn my_claims(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Claim>> {
        let q = claims::Entity::find().filter(claims::Column::UserId.eq(user.get()));
        let (rows, total) = newest_page(&self.db, q, claims::Column::CreatedAt, claims::Column::Id, page).await?;
        let items = rows.into_iter().map(to_claim).collect::<RepoResult<Vec<_>>>()?;
        Ok(Paged::new(items, page, total))
    }

    async fn claims_on_listing(&self, listing: ListingId) -> RepoResult<Vec<Claim>> {
        let rows = claims::Entity::find()
            .filter(claims::Column::ListingId.eq(listing.get()))
            .order_by_asc(claims::Column::Id)
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        rows.into_iter().map(to_claim).collect()
    }

    async fn claim_by_token_hash(&self, hash: &str) -> RepoResult<Option<Claim>> {
        claims::Entity::find()
            .filter(claims::Column::TokenHash.eq(hash))
            .filter(claims::Column::Method.eq(ClaimMethod::Email.as_str()))
            .one(&self.db)
            .await
            .map_err(repo_err)?
            .map(to_claim)
            .transpose()
    }

    async fn record_claim_check(&self, id: ClaimId, check: &ClaimCheck) -> RepoResult<()> {
        claims::Entity::update_many()
            .col_expr(claims::Column::LastCheck, Expr::value(check_json(check)))
            .filter(claims::Column::Id.eq(id.get()))
            .exec(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(())
    }

    async fn complete_claim(
        &self,
        id: ClaimId,
        from: ClaimStatus,
        to: ClaimStatus,
        check: &ClaimCheck,
    ) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        let mut update = claims::Entity::update_many()
            .col_expr(claims::Column::Status, Expr::value(to.as_str()))
            .col_expr(claims::Column::LastCheck, Expr::value(check_json(check)))
            .filter(claims::Column::Id.eq(id.get()))
            .filter(claims::Column::Status.eq(from.as_str()));
        if to == ClaimStatus::Verified {
            update = update.col_expr(claims::Column::VerifiedAt, Expr::value(ts(check.at)));
        }
        let moved = update.exec(&txn).await.map_err(repo_err)?;
        if moved.rows_affected != 1 {
            return Ok(false);
        }
        if to != ClaimStatus::Verified {
            txn.commit().await.map_err(repo_err)?;
            return Ok(true);
        }
        let claim =
            claims::Entity::find_by_id(id.get()).one(&txn).await.map_err(repo_err)?.ok_or(RepoError::NotFound)?;
        add_owner(&txn, claim.listing_id, claim.user_id, CLAIMANT, check.at).await?;
        listings::Entity::update_many()
            .col_expr(listings::Column::Verified, Expr::value(true))
            .filter(listings::Column::Id.eq(claim.listing_id))
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn email_claims_since(&self, user: UserId, listing: ListingId, since: DateTime<Utc>) -> RepoResult<u64> {
        claims::Entity::find()
            .filter(claims::Column::UserId.eq(user.get()))
            .filter(claims::Column::ListingId.eq(listing.get()))
            .filter(claims::Column::Method.eq(ClaimMethod::Email.as_str()))
            .filter(claims::Column::CreatedAt.gte(ts(since)))
            .count(&self.db)
            .await
            .map_err(repo_err)
    }

    async fn listing_owners(&self, listing: ListingId) -> RepoResult<Vec<(UserId, Email)>> {
        let owners = listing_owners::Entity::find()
            .filter(listing_owners::Column::ListingId.eq(listing.get()))
            .order_by_asc(listing_owners::Column::CreatedAt)
            .order_by_asc(listing_owners::Column::UserId)
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        let ids: Vec<i64> = owners.iter().map(|o| o.user_id).collect();
        let people =
            users::Entity::find().filter(users::Column::Id.is_in(ids)).all(&self.db).await.map_err(repo_err)?;
        Ok(owners
            .iter()
            .filter_map(|o| {
                let u = people.iter().find(|u| u.id == o.user_id)?;
                Some((UserId::from_db(u.id), Email::parse(&u.email).ok()?))
            })
            .collect())
    }
}
