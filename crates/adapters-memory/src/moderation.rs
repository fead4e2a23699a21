//! `ModerationRepository` in memory, as the SQL stores keep it: a hidden listing's lifecycle holds the
//! status to come back to, a hold says why; a suspended account's votes wait apart, out of every count.

use crate::{MemoryStore, State, VoteRow, ok};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::ids::{ListingId, UserId};
use domain::listing::{Lifecycle, Listing};
use domain::moderation::{AuditEntry, BlockedDomain, Hold, HoldCause, NewAuditEntry, NewReport, Report};
use domain::ports::{Blocked, ListingVersionOf, ModerationRepository, RepoResult, SuspensionEffect};

/// Moderation's part of the state.
#[derive(Debug, Default, Clone)]
pub(crate) struct Moderation {
    holds: std::collections::HashMap<ListingId, Hold>,
    held_votes: Vec<VoteRow>,
    suspensions: std::collections::HashMap<UserId, String>,
    /// (id, report, closed at).
    reports: Vec<(i64, NewReport, Option<DateTime<Utc>>)>,
    blocked: std::collections::BTreeMap<String, Blocked>,
    audit: Vec<AuditEntry>,
}

impl State {
    fn write_audit(&mut self, a: &NewAuditEntry) {
        let id = self.next_id("audit_log");
        self.moderation.audit.push(AuditEntry { id, entry: a.clone() });
    }

    fn close_reports(&mut self, id: ListingId, at: DateTime<Utc>) -> u64 {
        let mut n = 0;
        for (_, _, closed) in self.moderation.reports.iter_mut().filter(|(_, r, c)| r.listing == id && c.is_none()) {
            *closed = Some(at);
            n += 1;
        }
        n
    }

    /// The listings `user` controls (`domain::moderation::CONTROLLING_ROLES`), by id.
    fn controlled_by(&self, user: UserId) -> Vec<Listing> {
        let mut ids: Vec<ListingId> = self
            .owners
            .iter()
            .filter(|o| o.user == user && domain::moderation::CONTROLLING_ROLES.contains(&o.role))
            .map(|o| o.listing)
            .collect();
        ids.sort();
        ids.iter().filter_map(|id| self.listing(*id).cloned()).collect()
    }
}

#[async_trait]
impl ModerationRepository for MemoryStore {
    async fn hide_listing(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        hold: &Hold,
        audit: &NewAuditEntry,
    ) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if !st.move_lifecycle(id, from, to, hold.at) {
            return Ok(false);
        }
        st.moderation.holds.insert(id, hold.clone());
        st.close_reports(id, hold.at);
        st.write_audit(audit);
        Ok(true)
    }

    async fn restore_listing(
        &self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        audit: &NewAuditEntry,
    ) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if !st.move_lifecycle(id, from, to, audit.at) {
            return Ok(false);
        }
        st.moderation.holds.remove(&id);
        st.write_audit(audit);
        Ok(true)
    }

    async fn listing_hold(&self, id: ListingId) -> RepoResult<Option<Hold>> {
        ok(self.lock()?.moderation.holds.get(&id).cloned())
    }

    async fn suspend_user(
        &self,
        user: UserId,
        hold: &Hold,
        audit: &NewAuditEntry,
    ) -> RepoResult<Option<SuspensionEffect>> {
        let mut st = self.lock()?;
        match st.users.iter_mut().find(|u| u.user.id == user) {
            Some(u) if u.user.suspended_at.is_none() => u.user.suspended_at = Some(hold.at),
            _ => return Ok(None),
        }
        st.moderation.suspensions.insert(user, audit.reason.clone());
        st.sessions.retain(|_, s| s.user != user);
        st.oauth_refresh.retain(|_, r| r.grant.user != user);
        st.oauth_codes.retain(|_, (c, _)| c.user != user);
        let mut effect = SuspensionEffect::default();
        for l in st.controlled_by(user) {
            let mut to = l.lifecycle;
            if to.hide().is_ok() && st.move_lifecycle(l.id, &l.lifecycle, &to, hold.at) {
                st.moderation.holds.insert(l.id, hold.clone());
                effect.listings += 1;
            }
        }
        let (held, kept): (Vec<VoteRow>, Vec<VoteRow>) =
            std::mem::take(&mut st.votes).into_iter().partition(|v| v.user == user);
        st.votes = kept;
        for v in &held {
            crate::own::count_vote(&mut st, v, -1);
            effect.votes += 1;
        }
        st.moderation.held_votes.extend(held);
        st.write_audit(audit);
        Ok(Some(effect))
    }

    async fn restore_user(&self, user: UserId, audit: &NewAuditEntry) -> RepoResult<Option<SuspensionEffect>> {
        let mut st = self.lock()?;
        match st.users.iter_mut().find(|u| u.user.id == user) {
            Some(u) if u.user.suspended_at.is_some() => u.user.suspended_at = None,
            _ => return Ok(None),
        }
        st.moderation.suspensions.remove(&user);
        let mut effect = SuspensionEffect::default();
        for l in st.controlled_by(user) {
            if st.moderation.holds.get(&l.id).is_none_or(|h| h.cause != HoldCause::Suspension) {
                continue;
            }
            let mut to = l.lifecycle;
            if to.restore().is_ok() && st.move_lifecycle(l.id, &l.lifecycle, &to, audit.at) {
                st.moderation.holds.remove(&l.id);
                effect.listings += 1;
            }
        }
        let (back, rest): (Vec<VoteRow>, Vec<VoteRow>) =
            std::mem::take(&mut st.moderation.held_votes).into_iter().partition(|v| v.user == user);
        st.moderation.held_votes = rest;
        for v in back {
            if st.listing(v.listing).is_none() || st.votes.iter().any(|x| x.listing == v.listing && x.user == v.user) {
                continue;
            }
            crate::own::count_vote(&mut st, &v, 1);
            st.votes.push(v);
            effect.votes += 1;
        }
        st.write_audit(audit);
        Ok(Some(effect))
    }

    async fn suspension(&self, user: UserId) -> RepoResult<Option<(DateTime<Utc>, String)>> {
        let st = self.lock()?;
        let at = st.users.iter().find(|u| u.user.id == user).and_then(|u| u.user.suspended_at);
        ok(at.map(|at| (at, st.moderation.suspensions.get(&user).cloned().unwrap_or_default())))
    }

    async fn file_report(&self, r: &NewReport) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if st.listing(r.listing).is_none() {
            return Err(domain::ports::RepoError::NotFound);
        }
        if st.moderation.reports.iter().any(|(_, x, _)| x.listing == r.listing && x.reporter == r.reporter) {
            return Ok(false);
        }
        let id = st.next_id("reports");
        st.moderation.reports.push((id, r.clone(), None));
        Ok(true)
    }

    async fn reports(&self, open_only: bool, limit: u64) -> RepoResult<Vec<Report>> {
        let st = self.lock()?;
        let out = st
            .moderation
            .reports
            .iter()
            .rev()
            .filter(|(_, _, closed)| !open_only || closed.is_none())
            .filter_map(|(id, r, closed)| {
                let l = st.listing(r.listing)?;
                Some(Report {
                    id: *id,
                    listing: r.listing,
                    listing_slug: l.slug.to_string(),
                    listing_name: l.profile.name.clone(),
                    reporter: st.user(r.reporter).map(|u| u.user.email.to_string()),
                    reason: r.reason,
                    note: r.note.as_str().to_owned(),
                    at: r.at,
                    closed_at: *closed,
                })
            })
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .collect();
        ok(out)
    }

    async fn close_reports(&self, id: ListingId, at: DateTime<Utc>, audit: &NewAuditEntry) -> RepoResult<u64> {
        let mut st = self.lock()?;
        let n = st.close_reports(id, at);
        if n > 0 {
            st.write_audit(audit);
        }
        ok(n)
    }

    async fn block_domain(&self, b: &Blocked, audit: &NewAuditEntry) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if st.moderation.blocked.contains_key(b.domain.as_str()) {
            return Ok(false);
        }
        st.moderation.blocked.insert(b.domain.as_str().to_owned(), b.clone());
        st.write_audit(audit);
        Ok(true)
    }

    async fn unblock_domain(&self, domain: &BlockedDomain, audit: &NewAuditEntry) -> RepoResult<bool> {
        let mut st = self.lock()?;
        if st.moderation.blocked.remove(domain.as_str()).is_none() {
            return Ok(false);
        }
        st.write_audit(audit);
        Ok(true)
    }

    async fn blocked_domains(&self) -> RepoResult<Vec<Blocked>> {
        ok(self.lock()?.moderation.blocked.values().cloned().collect())
    }

    async fn blocked_among(&self, domains: &[String]) -> RepoResult<Option<Blocked>> {
        let st = self.lock()?;
        ok(domains.iter().find_map(|d| st.moderation.blocked.get(d).cloned()))
    }

    async fn audit_log(&self, limit: u64) -> RepoResult<Vec<AuditEntry>> {
        let st = self.lock()?;
        ok(st.moderation.audit.iter().rev().take(usize::try_from(limit).unwrap_or(usize::MAX)).cloned().collect())
    }

    async fn recent_listings(&self, limit: u64) -> RepoResult<Vec<Listing>> {
        let st = self.lock()?;
        let n = usize::try_from(limit).unwrap_or(usize::MAX);
        ok(st.listings.values().rev().take(n).map(|r| r.listing.clone()).collect())
    }

    async fn recent_edits(&self, limit: u64) -> RepoResult<Vec<ListingVersionOf>> {
        let st = self.lock()?;
        let n = usize::try_from(limit).unwrap_or(usize::MAX);
        ok(st
            .versions
            .iter()
            .rev()
            .take(n)
            .map(|v| ListingVersionOf {
                version: v.clone(),
                slug: st.listing(v.listing_id).map(|l| l.slug.to_string()).unwrap_or_default(),
                editor: v.user_id.and_then(|u| st.user(u)).map(|u| u.user.email.to_string()),
            })
            .collect())
    }
}
