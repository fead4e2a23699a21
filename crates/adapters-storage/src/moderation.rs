//! `ModerationRepository` on SQLite and PostgreSQL: a hidden listing is `status = 'hidden'` with the
//! status to come back to in `held_status` and why in `listing_holds`; a suspended account's votes wait
//! in `held_votes`, taken out of (and later put back into) the kept figures by the same `count_vote`
//! a vote and an unvote use. Each action and its audit line are one transaction.

use crate::entity::{
    audit_log, blocked_domains, held_votes, listing_holds, listing_owners, listings, reports, users, votes,
};
use crate::listings::lifecycle_of;
use crate::own::{Count, count_vote, insert_once, move_lifecycle_on, ts};
use crate::sql::RawQuery;
use crate::store::{SeaOrmStore, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::ids::{ListingId, UserId};
use domain::listing::{Lifecycle, Listing, ListingStatus};
use domain::moderation::{
    AuditAction, AuditEntry, BlockedDomain, Hold, HoldCause, NewAuditEntry, NewReport, Report, ReportReason,
};
use domain::ports::{Blocked, ListingVersion, ListingVersionOf, ModerationRepository, RepoResult, SuspensionEffect};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, FromQueryResult, QueryFilter,
    QueryOrder, QuerySelect, QueryTrait,
};

fn utc(t: sea_orm::prelude::DateTimeWithTimeZone) -> DateTime<Utc> {
    t.with_timezone(&Utc)
}

async fn write_audit(txn: &DatabaseTransaction, a: &NewAuditEntry) -> RepoResult<()> {
    audit_log::Entity::insert(audit_log::ActiveModel {
        at: Set(ts(a.at)),
        actor: Set(a.actor.clone()),
        action: Set(a.action.as_str().to_owned()),
        target: Set(a.target.clone()),
        reason: Set(a.reason.clone()),
        ..Default::default()
    })
    .exec(txn)
    .await
    .map_err(repo_err)?;
    Ok(())
}

async fn keep_hold(txn: &DatabaseTransaction, id: ListingId, hold: &Hold) -> RepoResult<()> {
    listing_holds::Entity::delete_by_id(id.get()).exec(txn).await.map_err(repo_err)?;
    listing_holds::Entity::insert(listing_holds::ActiveModel {
        listing_id: Set(id.get()),
        reason: Set(hold.reason.clone()),
        cause: Set(hold.cause.as_str().to_owned()),
        hidden_at: Set(ts(hold.at)),
        hidden_by: Set(hold.by.clone()),
    })
    .exec(txn)
    .await
    .map_err(repo_err)?;
    Ok(())
}

async fn close_open_reports(txn: &DatabaseTransaction, id: ListingId, at: DateTime<Utc>) -> RepoResult<u64> {
    let r = reports::Entity::update_many()
        .col_expr(reports::Column::ClosedAt, Expr::value(ts(at)))
        .filter(reports::Column::ListingId.eq(id.get()))
        .filter(reports::Column::ClosedAt.is_null())
        .exec(txn)
        .await
        .map_err(repo_err)?;
    Ok(r.rows_affected)
}

/// The ids of the listings `user` controls (`domain::moderation::CONTROLLING_ROLES`), as a subquery.
fn controlled_by(user: UserId) -> sea_orm::sea_query::SelectStatement {
    listing_owners::Entity::find()
        .select_only()
        .column(listing_owners::Column::ListingId)
        .filter(listing_owners::Column::UserId.eq(user.get()))
        .filter(listing_owners::Column::Role.is_in(domain::moderation::CONTROLLING_ROLES))
        .into_query()
}

/// Locks, on PostgreSQL, every listing a suspension or restore of an account will change: the ones
/// it controls and the ones `voted` (a subquery of listing ids) names. One order, ascending id, for
/// every such transaction: changing the rows one by one as they come, two at once over crossing sets
/// (each account voting for the other's listings) would each hold a row the other waits for, and
/// PostgreSQL would abort one as a deadlock. SQLite runs one write transaction at a time.
async fn lock_touched(
    txn: &DatabaseTransaction,
    user: UserId,
    voted: sea_orm::sea_query::SelectStatement,
) -> RepoResult<()> {
    if txn.get_database_backend() != sea_orm::DbBackend::Postgres {
        return Ok(());
    }
    listings::Entity::find()
        .select_only()
        .column(listings::Column::Id)
        .filter(
            sea_orm::Condition::any()
                .add(listings::Column::Id.in_subquery(controlled_by(user)))
                .add(listings::Column::Id.in_subquery(voted)),
        )
        .order_by_asc(listings::Column::Id)
        .lock(sea_orm::sea_query::LockType::NoKeyUpdate)
        .into_tuple::<i64>()
        .all(txn)
        .await
        .map_err(repo_err)?;
    Ok(())
}

/// The listings `user` controls and where each stands, as stored, inside `txn`.
async fn owned_by(txn: &DatabaseTransaction, user: UserId) -> RepoResult<Vec<(ListingId, Lifecycle)>> {
    let rows = listings::Entity::find()
        .filter(listings::Column::Id.in_subquery(controlled_by(user)))
        .order_by_asc(listings::Column::Id)
        .all(txn)
        .await
        .map_err(repo_err)?;
    Ok(rows.iter().map(|m| (ListingId::from_db(m.id), lifecycle_of(m))).collect())
}

fn to_hold(m: listing_holds::Model) -> Hold {
    Hold {
        reason: m.reason,
        cause: HoldCause::parse(&m.cause).unwrap_or(HoldCause::Moderator),
        at: utc(m.hidden_at),
        by: m.hidden_by,
    }
}

fn to_blocked(m: blocked_domains::Model) -> Option<Blocked> {
    Some(Blocked {
        domain: BlockedDomain::parse("domain", &m.domain).ok()?,
        reason: m.reason,
        at: utc(m.created_at),
        by: m.created_by,
    })
}

#[derive(Debug, FromQueryResult)]
struct ReportRow {
    id: i64,
    listing_id: i64,
    slug: String,
    name: String,
    email: Option<String>,
    reason: String,
    note: String,
    created_at: sea_orm::prelude::DateTimeWithTimeZone,
    closed_at: Option<sea_orm::prelude::DateTimeWithTimeZone>,
}

#[derive(Debug, FromQueryResult)]
struct EditRow {
    id: i64,
    listing_id: i64,
    user_id: Option<i64>,
    before: String,
    after: String,
    created_at: sea_orm::prelude::DateTimeWithTimeZone,
    slug: String,
    email: Option<String>,
}

#[async_trait]
impl ModerationRepository for SeaOrmStore {
    async fn hide_listing(
        &self,
        id: ListingId,
        from: &domain::listing::Lifecycle,
        to: &domain::listing::Lifecycle,
        hold: &Hold,
        audit: &NewAuditEntry,
    ) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        if !move_lifecycle_on(&txn, id, from, to, hold.at).await? {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        }
        keep_hold(&txn, id, hold).await?;
        close_open_reports(&txn, id, hold.at).await?;
        write_audit(&txn, audit).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn restore_listing(
        &self,
        id: ListingId,
        from: &domain::listing::Lifecycle,
        to: &domain::listing::Lifecycle,
        audit: &NewAuditEntry,
    ) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        if !move_lifecycle_on(&txn, id, from, to, audit.at).await? {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        }
        listing_holds::Entity::delete_by_id(id.get()).exec(&txn).await.map_err(repo_err)?;
        write_audit(&txn, audit).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn listing_hold(&self, id: ListingId) -> RepoResult<Option<Hold>> {
        let row = listing_holds::Entity::find_by_id(id.get()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.map(to_hold))
    }

    async fn suspend_user(
        &self,
        user: UserId,
        hold: &Hold,
        audit: &NewAuditEntry,
    ) -> RepoResult<Option<SuspensionEffect>> {
        let txn = self.begin_write().await?;
        let marked = users::Entity::update_many()
            .col_expr(users::Column::SuspendedAt, Expr::value(ts(hold.at)))
            .col_expr(users::Column::SuspendedReason, Expr::value(audit.reason.clone()))
            .filter(users::Column::Id.eq(user.get()))
            .filter(users::Column::SuspendedAt.is_null())
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        if marked.rows_affected != 1 {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(None);
        }
        for table in ["sessions", "oauth_refresh_tokens", "oauth_codes"] {
            crate::accounts::delete_of(&txn, table, user.get()).await?;
        }
        let voted = votes::Entity::find()
            .select_only()
            .column(votes::Column::ListingId)
            .filter(votes::Column::UserId.eq(user.get()))
            .into_query();
        lock_touched(&txn, user, voted).await?;
        let mut effect = SuspensionEffect::default();
        for (id, was) in owned_by(&txn, user).await? {
            let mut to = was;
            if to.hide().is_ok() && move_lifecycle_on(&txn, id, &was, &to, hold.at).await? {
                keep_hold(&txn, id, hold).await?;
                effect.listings += 1;
            }
        }
        let held =
            votes::Entity::find().filter(votes::Column::UserId.eq(user.get())).all(&txn).await.map_err(repo_err)?;
        for v in held {
            votes::Entity::delete_by_id(v.id).exec(&txn).await.map_err(repo_err)?;
            count_vote(&txn, v.listing_id, utc(v.created_at), v.weight, Count::Take).await?;
            held_votes::Entity::insert(held_votes::ActiveModel {
                listing_id: Set(v.listing_id),
                user_id: Set(v.user_id),
                created_at: Set(v.created_at),
                weight: Set(v.weight),
                address_key: Set(v.address_key),
            })
            .exec(&txn)
            .await
            .map_err(repo_err)?;
            effect.votes += 1;
        }
        write_audit(&txn, audit).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(Some(effect))
    }

    async fn restore_user(&self, user: UserId, audit: &NewAuditEntry) -> RepoResult<Option<SuspensionEffect>> {
        let txn = self.begin_write().await?;
        let cleared = users::Entity::update_many()
            .col_expr(users::Column::SuspendedAt, Expr::value(Option::<sea_orm::prelude::DateTimeWithTimeZone>::None))
            .col_expr(users::Column::SuspendedReason, Expr::value(Option::<String>::None))
            .filter(users::Column::Id.eq(user.get()))
            .filter(users::Column::SuspendedAt.is_not_null())
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        if cleared.rows_affected != 1 {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(None);
        }
        let held = held_votes::Entity::find()
            .select_only()
            .column(held_votes::Column::ListingId)
            .filter(held_votes::Column::UserId.eq(user.get()))
            .into_query();
        lock_touched(&txn, user, held).await?;
        let mut effect = SuspensionEffect::default();
        for (id, was) in owned_by(&txn, user).await? {
            let hold = listing_holds::Entity::find_by_id(id.get()).one(&txn).await.map_err(repo_err)?;
            if hold.is_none_or(|h| h.cause != HoldCause::Suspension.as_str()) {
                continue;
            }
            let mut to = was;
            if to.restore().is_ok() && move_lifecycle_on(&txn, id, &was, &to, audit.at).await? {
                listing_holds::Entity::delete_by_id(id.get()).exec(&txn).await.map_err(repo_err)?;
                effect.listings += 1;
            }
        }
        let held = held_votes::Entity::find()
            .filter(held_votes::Column::UserId.eq(user.get()))
            .all(&txn)
            .await
            .map_err(repo_err)?;
        for v in held {
            let row = votes::ActiveModel {
                listing_id: Set(v.listing_id),
                user_id: Set(v.user_id),
                created_at: Set(v.created_at),
                weight: Set(v.weight),
                address_key: Set(v.address_key.clone()),
                ..Default::default()
            };
            if insert_once(&txn, row).await? {
                let status = listings::Entity::find_by_id(v.listing_id)
                    .select_only()
                    .column(listings::Column::Status)
                    .into_tuple::<String>()
                    .one(&txn)
                    .await
                    .map_err(repo_err)?;
                let live = status.as_deref() == Some(ListingStatus::Live.as_str());
                count_vote(&txn, v.listing_id, utc(v.created_at), v.weight, Count::Add { live }).await?;
                effect.votes += 1;
            }
        }
        held_votes::Entity::delete_many()
            .filter(held_votes::Column::UserId.eq(user.get()))
            .exec(&txn)
            .await
            .map_err(repo_err)?;
        write_audit(&txn, audit).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(Some(effect))
    }

    async fn suspension(&self, user: UserId) -> RepoResult<Option<(DateTime<Utc>, String)>> {
        let row = users::Entity::find_by_id(user.get()).one(&self.db).await.map_err(repo_err)?;
        Ok(row.and_then(|u| Some((utc(u.suspended_at?), u.suspended_reason.unwrap_or_default()))))
    }

    async fn file_report(&self, r: &NewReport) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        let row = reports::ActiveModel {
            listing_id: Set(r.listing.get()),
            reporter_id: Set(Some(r.reporter.get())),
            reason: Set(r.reason.as_str().to_owned()),
            note: Set(r.note.as_str().to_owned()),
            created_at: Set(ts(r.at)),
            closed_at: Set(None),
            ..Default::default()
        };
        let filed = insert_once(&txn, row).await?;
        if filed { txn.commit().await } else { txn.rollback().await }.map_err(repo_err)?;
        Ok(filed)
    }

    async fn reports(&self, open_only: bool, limit: u64) -> RepoResult<Vec<Report>> {
        let mut q = RawQuery::new(self.backend());
        q.sql(
            "SELECT r.id, r.listing_id, l.slug, l.name, u.email, r.reason, r.note, r.created_at, r.closed_at \
             FROM reports r JOIN listings l ON l.id = r.listing_id LEFT JOIN users u ON u.id = r.reporter_id",
        );
        if open_only {
            q.sql(" WHERE r.closed_at IS NULL");
        }
        q.sql(" ORDER BY r.id DESC LIMIT ").bind(i64::try_from(limit).unwrap_or(i64::MAX));
        let rows = ReportRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows
            .into_iter()
            .map(|r| Report {
                id: r.id,
                listing: ListingId::from_db(r.listing_id),
                listing_slug: r.slug,
                listing_name: r.name,
                reporter: r.email,
                reason: ReportReason::parse("reason", &r.reason).unwrap_or(ReportReason::Other),
                note: r.note,
                at: utc(r.created_at),
                closed_at: r.closed_at.map(utc),
            })
            .collect())
    }

    async fn close_reports(&self, id: ListingId, at: DateTime<Utc>, audit: &NewAuditEntry) -> RepoResult<u64> {
        let txn = self.begin_write().await?;
        let closed = close_open_reports(&txn, id, at).await?;
        if closed > 0 {
            write_audit(&txn, audit).await?;
        }
        txn.commit().await.map_err(repo_err)?;
        Ok(closed)
    }

    async fn block_domain(&self, b: &Blocked, audit: &NewAuditEntry) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        let row = blocked_domains::ActiveModel {
            domain: Set(b.domain.as_str().to_owned()),
            reason: Set(b.reason.clone()),
            created_at: Set(ts(b.at)),
            created_by: Set(b.by.clone()),
        };
        if !insert_once(&txn, row).await? {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        }
        write_audit(&txn, audit).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn unblock_domain(&self, domain: &BlockedDomain, audit: &NewAuditEntry) -> RepoResult<bool> {
        let txn = self.begin_write().await?;
        let gone =
            blocked_domains::Entity::delete_by_id(domain.as_str().to_owned()).exec(&txn).await.map_err(repo_err)?;
        if gone.rows_affected != 1 {
            txn.rollback().await.map_err(repo_err)?;
            return Ok(false);
        }
        write_audit(&txn, audit).await?;
        txn.commit().await.map_err(repo_err)?;
        Ok(true)
    }

    async fn blocked_domains(&self) -> RepoResult<Vec<Blocked>> {
        let rows = blocked_domains::Entity::find()
            .order_by_asc(blocked_domains::Column::Domain)
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(rows.into_iter().filter_map(to_blocked).collect())
    }

    async fn blocked_among(&self, domains: &[String]) -> RepoResult<Option<Blocked>> {
        if domains.is_empty() {
            return Ok(None);
        }
        let rows = blocked_domains::Entity::find()
            .filter(blocked_domains::Column::Domain.is_in(domains.iter().cloned()))
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        let first = domains.iter().find_map(|d| rows.iter().find(|r| &r.domain == d).cloned());
        Ok(first.and_then(to_blocked))
    }

    async fn audit_log(&self, limit: u64) -> RepoResult<Vec<AuditEntry>> {
        let rows = audit_log::Entity::find()
            .order_by_desc(audit_log::Column::Id)
            .limit(limit)
            .all(&self.db)
            .await
            .map_err(repo_err)?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                Some(AuditEntry {
                    id: r.id,
                    entry: NewAuditEntry {
                        at: utc(r.at),
                        actor: r.actor,
                        action: AuditAction::parse(&r.action)?,
                        target: r.target,
                        reason: r.reason,
                    },
                })
            })
            .collect())
    }

    async fn recent_listings(&self, limit: u64) -> RepoResult<Vec<Listing>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.load_listings(|q| {
            q.sql(" ORDER BY l.id DESC LIMIT ").bind(limit);
        })
        .await
    }

    async fn recent_edits(&self, limit: u64) -> RepoResult<Vec<ListingVersionOf>> {
        let mut q = RawQuery::new(self.backend());
        q.sql(
            "SELECT v.id, v.listing_id, v.user_id, v.before, v.after, v.created_at, l.slug, u.email \
             FROM listing_versions v JOIN listings l ON l.id = v.listing_id LEFT JOIN users u ON u.id = v.user_id \
             ORDER BY v.id DESC LIMIT ",
        )
        .bind(i64::try_from(limit).unwrap_or(i64::MAX));
        let rows = EditRow::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows
            .into_iter()
            .map(|r| ListingVersionOf {
                version: ListingVersion {
                    id: r.id,
                    listing_id: ListingId::from_db(r.listing_id),
                    user_id: r.user_id.map(UserId::from_db),
                    before: r.before,
                    after: r.after,
                    created_at: utc(r.created_at),
                },
                slug: r.slug,
                editor: r.email,
            })
            .collect())
    }
}
