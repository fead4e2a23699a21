//! Work in progress: drafts and their invites, the outbox, background jobs, orders and claims.

use crate::{ClaimRow, InviteRow, JobRow, JobStatus, MemoryStore, ok, page_of};
use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use domain::category::ListingCategories;
use domain::claim::{Claim, ClaimCheck, ClaimMethod, ClaimRecord, ClaimStatus, NewClaim};
use domain::draft::{Draft, DraftStatus};
use domain::ids::{CategoryId, ClaimId, DraftId, ListingId, UserId};
use domain::listing::{ListingStatus, NewListing, Plan};
use domain::money::Cents;
use domain::order::{Billing, Order, OrderNumber, OrderRecord, OrderStatus, Quote, StoredLine};
use domain::paging::{PageRequest, Paged};
use domain::ports::{
    ClaimRepository, DraftRepository, Invite, Job, JobBacklog, JobQueue, OrderCreated, OrderRepository, Outbox,
    OutboxEmail, RepoError, RepoResult,
};
use domain::user::Email;
use domain::week::LaunchWeek;

#[async_trait]
impl DraftRepository for MemoryStore {
    async fn create_draft(&self, draft: &Draft) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.drafts.contains_key(&draft.id) {
            return Err(RepoError::Conflict("draft id taken".into()));
        }
        st.drafts.insert(draft.id, draft.clone());
        Ok(())
    }

    async fn create_draft_within(&self, draft: &Draft, max_in_progress: u64) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let owner = draft.owner;
        let reading =
            |d: &&Draft| d.owner == owner && matches!(d.status(), DraftStatus::Crawling | DraftStatus::Drafting);
        if st.drafts.values().filter(reading).count() as u64 >= max_in_progress {
            return Ok(false);
        }
        if st.drafts.contains_key(&draft.id) {
            return Err(RepoError::Conflict("draft id taken".into()));
        }
        st.drafts.insert(draft.id, draft.clone());
        Ok(true)
    }

    async fn get_draft(&self, id: DraftId) -> RepoResult<Option<Draft>> {
        ok(self.lock()?.drafts.get(&id).cloned())
    }

    async fn list_drafts(&self, owner: UserId, page: PageRequest) -> RepoResult<Paged<Draft>> {
        let mut list: Vec<Draft> = self.lock()?.drafts.values().filter(|d| d.owner == owner).cloned().collect();
        list.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.as_uuid().cmp(&a.id.as_uuid())));
        Ok(page_of(list, page))
    }

    async fn save_draft(&self, draft: &Draft, now: DateTime<Utc>) -> RepoResult<Option<Draft>> {
        let mut st = self.lock()?;
        let Some(stored) = st.drafts.get_mut(&draft.id).filter(|d| d.version == draft.version) else {
            return Ok(None);
        };
        let mut saved = draft.clone();
        saved.version += 1;
        saved.updated_at = now;
        // Storage keeps what a save writes (the SQL stores' columns): never the owner, the listing or
        // the creation time.
        saved.owner = stored.owner;
        saved.listing_id = stored.listing_id;
        saved.created_at = stored.created_at;
        *stored = saved;
        let mut answer = draft.clone();
        answer.version += 1;
        answer.updated_at = now;
        Ok(Some(answer))
    }

    async fn save_draft_listing(&self, draft: &Draft, new: &NewListing, now: DateTime<Utc>) -> RepoResult<ListingId> {
        let mut st = self.lock()?;
        let recorded = st.drafts.get(&draft.id).and_then(|d| d.listing_id).or(draft.listing_id);
        if let Some(id) = recorded {
            let row = st.listings.get_mut(&id).ok_or(RepoError::NotFound)?;
            // Only what the draft decides changes; status, plan, counters and ratings stay.
            let l = &mut row.listing;
            l.profile = new.profile.clone();
            l.categories = new.categories.clone();
            l.updated_at = now;
            row.draft = Some(draft.id);
            return Ok(id);
        }
        let id = st.insert_listing(new, now)?;
        if let Some(row) = st.listings.get_mut(&id) {
            row.draft = Some(draft.id);
        }
        st.add_owner(id, draft.owner, "owner", now);
        let cofounders: Vec<UserId> = st
            .invites
            .iter()
            .filter(|i| i.invite.draft == draft.id)
            .filter_map(|i| i.invite.accepted_by)
            .filter(|u| *u != draft.owner)
            .collect();
        for u in cofounders {
            st.add_owner(id, u, "cofounder", now);
        }
        if let Some(d) = st.drafts.get_mut(&draft.id) {
            d.listing_id = Some(id);
        }
        Ok(id)
    }

    async fn create_invite(
        &self,
        draft: DraftId,
        email: &str,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> RepoResult<Invite> {
        let mut st = self.lock()?;
        if let Some(old) = st.invites.iter_mut().find(|i| i.invite.draft == draft && i.invite.email == email) {
            old.token_hash = token_hash.to_owned();
            old.invite.created_at = now;
            return Ok(old.invite.clone());
        }
        if st.invites.iter().filter(|i| i.invite.draft == draft).count() >= domain::draft::limits::INVITES_PER_LISTING {
            return Err(RepoError::Conflict("this listing already has 10 invites".into()));
        }
        let invite = Invite {
            id: st.next_id("draft_invites"),
            draft,
            email: email.to_owned(),
            created_at: now,
            accepted_by: None,
        };
        st.invites.push(InviteRow { invite: invite.clone(), token_hash: token_hash.to_owned() });
        Ok(invite)
    }

    async fn invite_by_token(&self, token_hash: &str) -> RepoResult<Option<Invite>> {
        ok(self.lock()?.invites.iter().find(|i| i.token_hash == token_hash).map(|i| i.invite.clone()))
    }

    async fn accept_invite(&self, id: i64, user: UserId, now: DateTime<Utc>) -> RepoResult<()> {
        let mut st = self.lock()?;
        let row = st.invites.iter_mut().find(|i| i.invite.id == id).ok_or(RepoError::NotFound)?;
        row.invite.accepted_by.get_or_insert(user);
        let draft = row.invite.draft;
        if let Some(listing) = st.drafts.get(&draft).and_then(|d| d.listing_id) {
            st.add_owner(listing, user, "cofounder", now);
        }
        Ok(())
    }
}

#[async_trait]
impl Outbox for MemoryStore {
    async fn queue_email(&self, to: &str, subject: &str, body: &str, now: DateTime<Utc>) -> RepoResult<i64> {
        let mut st = self.lock()?;
        let id = st.next_id("outbox");
        st.outbox.push(OutboxEmail {
            id,
            to: to.to_owned(),
            subject: subject.to_owned(),
            body: body.to_owned(),
            created_at: now,
            sent_at: None,
            attempts: 0,
            last_error: None,
        });
        Ok(id)
    }

    async fn outbox(&self, to: Option<&str>, limit: u64) -> RepoResult<Vec<OutboxEmail>> {
        let to = to.map(str::to_lowercase);
        ok(self
            .lock()?
            .outbox
            .iter()
            .rev()
            .filter(|e| to.as_ref().is_none_or(|t| e.to.to_lowercase() == *t))
            .take(limit as usize)
            .cloned()
            .collect())
    }

    async fn get_email(&self, id: i64) -> RepoResult<Option<OutboxEmail>> {
        ok(self.lock()?.outbox.iter().find(|e| e.id == id).cloned())
    }

    async fn mark_email_sent(&self, id: i64, now: DateTime<Utc>) -> RepoResult<()> {
        if let Some(e) = self.lock()?.outbox.iter_mut().find(|e| e.id == id) {
            e.sent_at = Some(now);
            e.attempts += 1;
            e.last_error = None;
        }
        Ok(())
    }

    async fn unsent_emails(&self) -> RepoResult<(u64, Option<DateTime<Utc>>)> {
        let st = self.lock()?;
        let unsent = st.outbox.iter().filter(|e| e.sent_at.is_none());
        Ok((unsent.clone().count() as u64, unsent.map(|e| e.created_at).min()))
    }

    async fn mark_email_failed(&self, id: i64, error: &str) -> RepoResult<()> {
        if let Some(e) = self.lock()?.outbox.iter_mut().find(|e| e.id == id) {
            e.attempts += 1;
            e.last_error = Some(error.to_owned());
        }
        Ok(())
    }
}

#[async_trait]
impl JobQueue for MemoryStore {
    async fn job_backlog(&self, now: DateTime<Utc>) -> RepoResult<JobBacklog> {
        let st = self.lock()?;
        let queued: Vec<&JobRow> = st.jobs.iter().filter(|j| j.status == JobStatus::Queued).collect();
        let due: Vec<&&JobRow> = queued.iter().filter(|j| j.run_at <= now).collect();
        Ok(JobBacklog {
            queued: queued.len() as u64,
            due: due.len() as u64,
            running: st.jobs.iter().filter(|j| j.status == JobStatus::Running).count() as u64,
            oldest_due: due.iter().map(|j| j.run_at).min(),
        })
    }

    async fn enqueue_job(
        &self,
        kind: &str,
        payload: &str,
        run_at: DateTime<Utc>,
        _now: DateTime<Utc>,
    ) -> RepoResult<i64> {
        let mut st = self.lock()?;
        let id = st.next_id("jobs");
        st.jobs.push(JobRow {
            id,
            kind: kind.to_owned(),
            payload: payload.to_owned(),
            run_at,
            status: JobStatus::Queued,
            attempts: 0,
            locked_by: None,
            locked_until: None,
        });
        Ok(id)
    }

    async fn claim_job(&self, worker: &str, now: DateTime<Utc>, lease: Duration) -> RepoResult<Option<Job>> {
        let mut st = self.lock()?;
        let due = |j: &JobRow| match j.status {
            JobStatus::Queued => j.run_at <= now,
            JobStatus::Running => j.locked_until.is_some_and(|t| t < now),
            JobStatus::Done | JobStatus::Failed => false,
        };
        let Some(job) =
            st.jobs.iter_mut().filter(|j| due(j)).min_by(|a, b| a.run_at.cmp(&b.run_at).then(a.id.cmp(&b.id)))
        else {
            return Ok(None);
        };
        job.status = JobStatus::Running;
        job.locked_by = Some(worker.to_owned());
        job.locked_until = Some(now + lease);
        job.attempts += 1;
        Ok(Some(Job { id: job.id, kind: job.kind.clone(), payload: job.payload.clone(), attempts: job.attempts }))
    }

    async fn complete_job(&self, id: i64, worker: &str, _now: DateTime<Utc>) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let Some(job) = st.jobs.iter_mut().find(|j| j.id == id && j.held_by(worker)) else { return Ok(false) };
        job.status = JobStatus::Done;
        job.locked_until = None;
        Ok(true)
    }

    async fn fail_job(
        &self,
        id: i64,
        worker: &str,
        _error: &str,
        retry_at: Option<DateTime<Utc>>,
        _now: DateTime<Utc>,
    ) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let Some(job) = st.jobs.iter_mut().find(|j| j.id == id && j.held_by(worker)) else { return Ok(false) };
        job.locked_until = None;
        match retry_at {
            Some(at) => {
                job.status = JobStatus::Queued;
                job.run_at = at;
            }
            None => job.status = JobStatus::Failed,
        }
        Ok(true)
    }
}

impl JobRow {
    fn held_by(&self, worker: &str) -> bool {
        self.status == JobStatus::Running && self.locked_by.as_deref() == Some(worker)
    }
}

/// The fields a quote prices on an order.
fn priced(o: &mut OrderRecord, quote: &Quote, billing: &Billing) {
    o.billing = billing.clone();
    o.reverse_charge = quote.vat.reverse_charge;
    o.vat_rate_bp = quote.vat.rate_bp;
    o.vat_final = quote.vat.final_rate;
    o.vat_note = quote.vat.note.clone();
    o.net = quote.net;
    o.vat = quote.vat_total;
    o.gross = quote.gross;
}

fn newest_first(list: &mut [OrderRecord]) {
    list.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
}

#[async_trait]
impl OrderRepository for MemoryStore {
    async fn create_order(
        &self,
        user: UserId,
        number: &OrderNumber,
        quote: &Quote,
        billing: &Billing,
        gateway: &str,
        now: DateTime<Utc>,
        paid_capacity: i64,
    ) -> RepoResult<OrderCreated> {
        let mut st = self.lock()?;
        if st.orders.iter().any(|o| o.number == *number) {
            return Err(RepoError::Conflict("order number taken".into()));
        }
        let mut open: Vec<DateTime<Utc>> = st
            .orders
            .iter()
            .filter(|o| o.user == user && domain::order::payable(o.status, o.created_at, now))
            .map(|o| o.created_at)
            .collect();
        open.sort();
        if open.len() >= domain::order::MAX_OPEN_ORDERS {
            return Ok(OrderCreated::TooManyOpen { oldest: open[0] });
        }
        for (week, listings) in quote.launch_weeks() {
            let held = st.paid_places_held(week, &listings, now);
            if !domain::order::week_has_room(held, listings.len(), paid_capacity) {
                return Ok(OrderCreated::WeekFull(week));
            }
        }
        let id = st.next_id("orders");
        let lines = quote
            .lines
            .iter()
            .map(|l| StoredLine {
                id: st.next_id("order_lines"),
                line: l.clone(),
                fulfilled_at: None,
                fulfilment_note: String::new(),
            })
            .collect();
        let mut o = OrderRecord {
            id,
            number: number.clone(),
            user,
            status: OrderStatus::Pending,
            billing: billing.clone(),
            vat_rate_bp: 0,
            reverse_charge: false,
            vat_note: String::new(),
            vat_final: false,
            net: Cents::new(0),
            vat: Cents::new(0),
            gross: Cents::new(0),
            gateway: gateway.to_owned(),
            gateway_ref: None,
            created_at: now,
            paid_at: None,
            lines,
            flag: None,
        };
        priced(&mut o, quote, billing);
        st.orders.push(o.clone());
        Ok(OrderCreated::Created(o.into()))
    }

    async fn paid_places_held(&self, week: LaunchWeek, except: &[ListingId], now: DateTime<Utc>) -> RepoResult<i64> {
        ok(self.lock()?.paid_places_held(week, except, now))
    }

    async fn my_orders(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Order>> {
        let mut list: Vec<OrderRecord> = self.lock()?.orders.iter().filter(|o| o.user == user).cloned().collect();
        newest_first(&mut list);
        Ok(page_of(list, page).map(Order::from))
    }

    async fn order_by_number(&self, number: &OrderNumber) -> RepoResult<Option<Order>> {
        ok(self.lock()?.orders.iter().find(|o| o.number == *number).cloned().map(Order::from))
    }

    async fn order_by_gateway_ref(&self, gateway_ref: &str) -> RepoResult<Option<Order>> {
        ok(self.lock()?.orders.iter().find(|o| o.gateway_ref.as_deref() == Some(gateway_ref)).cloned().map(Order::from))
    }

    async fn reprice_order(&self, id: i64, quote: &Quote, billing: &Billing) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let Some(o) = st.orders.iter_mut().find(|o| o.id == id && o.status == OrderStatus::Pending) else {
            return Ok(false);
        };
        if o.lines.len() != quote.lines.len() {
            return Err(RepoError::Unexpected(format!("order {id}: a re-price must keep its lines").into()));
        }
        priced(o, quote, billing);
        o.gateway_ref = None;
        for (stored, l) in o.lines.iter_mut().zip(&quote.lines) {
            stored.line.net = l.net;
            stored.line.vat = l.vat;
            stored.line.gross = l.gross;
        }
        Ok(true)
    }

    async fn set_gateway_ref(&self, id: i64, gateway_ref: &str) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.orders.iter().any(|o| o.id != id && o.gateway_ref.as_deref() == Some(gateway_ref)) {
            return Err(RepoError::Conflict("gateway reference taken".into()));
        }
        if let Some(o) = st.orders.iter_mut().find(|o| o.id == id) {
            o.gateway_ref = Some(gateway_ref.to_owned());
        }
        Ok(())
    }

    async fn clear_gateway_ref(&self, id: i64, gateway_ref: &str) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let Some(o) = st.orders.iter_mut().find(|o| o.id == id && o.gateway_ref.as_deref() == Some(gateway_ref)) else {
            return Ok(false);
        };
        o.gateway_ref = None;
        Ok(true)
    }

    async fn flag_order(&self, id: i64, note: &str) -> RepoResult<()> {
        if let Some(o) = self.lock()?.orders.iter_mut().find(|o| o.id == id) {
            o.flag = Some(note.to_owned());
        }
        Ok(())
    }

    async fn pending_orders_before(&self, before: DateTime<Utc>, limit: u64) -> RepoResult<Vec<Order>> {
        let mut list: Vec<OrderRecord> = self
            .lock()?
            .orders
            .iter()
            .filter(|o| o.status == OrderStatus::Pending && o.created_at < before)
            .cloned()
            .collect();
        list.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        Ok(list.into_iter().take(limit as usize).map(Order::from).collect())
    }

    async fn move_order(&self, id: i64, from: OrderStatus, to: OrderStatus, now: DateTime<Utc>) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let Some(o) = st.orders.iter_mut().find(|o| o.id == id && o.status == from) else { return Ok(false) };
        o.status = to;
        if to == OrderStatus::Paid {
            o.paid_at = Some(now);
        }
        Ok(true)
    }

    async fn fulfil_line(&self, line_id: i64, note: &str, now: DateTime<Utc>) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let line = st.orders.iter_mut().flat_map(|o| o.lines.iter_mut()).find(|l| l.id == line_id);
        match line {
            Some(l) if l.fulfilled_at.is_none() => {
                l.fulfilled_at = Some(now);
                l.fulfilment_note = note.to_owned();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn orders_to_fulfil(&self, limit: u64) -> RepoResult<Vec<Order>> {
        let mut list: Vec<OrderRecord> = self
            .lock()?
            .orders
            .iter()
            .filter(|o| o.status == OrderStatus::Paid && o.lines.iter().any(|l| l.fulfilled_at.is_none()))
            .cloned()
            .collect();
        list.sort_by_key(|o| o.id);
        Ok(list.into_iter().take(limit as usize).map(Order::from).collect())
    }

    async fn payment_event_seen(&self, gateway: &str, event_id: &str) -> RepoResult<bool> {
        ok(self.lock()?.payment_events.contains(&(gateway.to_owned(), event_id.to_owned())))
    }

    async fn first_payment_event(&self, gateway: &str, event_id: &str, _now: DateTime<Utc>) -> RepoResult<bool> {
        ok(self.lock()?.payment_events.insert((gateway.to_owned(), event_id.to_owned())))
    }

    async fn launches_in(&self, plan: Plan, weeks: &[LaunchWeek]) -> RepoResult<Vec<(LaunchWeek, i64)>> {
        let st = self.lock()?;
        let counts = weeks.iter().map(|w| (*w, st.launches_in_week(plan, *w))).filter(|(_, n)| *n > 0);
        ok(counts.collect::<std::collections::BTreeMap<_, _>>().into_iter().collect())
    }

    async fn launches_ahead(&self, plan: Plan, week: LaunchWeek, before: ListingId) -> RepoResult<i64> {
        let st = self.lock()?;
        ok(st
            .listings
            .range(..before)
            .map(|(_, r)| &r.listing.lifecycle)
            .filter(|lc| {
                lc.plan() == plan
                    && lc.launch_week() == Some(week)
                    && matches!(
                        lc.status(),
                        ListingStatus::AwaitingBadge | ListingStatus::Scheduled | ListingStatus::Live
                    )
            })
            .count() as i64)
    }

    async fn add_extra_categories(&self, listing: ListingId, categories: &[CategoryId]) -> RepoResult<usize> {
        let mut st = self.lock()?;
        let Some(l) = st.listing_mut(listing) else { return Ok(0) };
        let Some(current) = l.categories.clone() else { return Ok(0) };
        let mut extras: Vec<CategoryId> = current.extras().to_vec();
        for c in categories {
            if extras.len() >= ListingCategories::MAX_EXTRAS {
                break;
            }
            if current.primary() != *c && !extras.contains(c) {
                extras.push(*c);
            }
        }
        extras.sort();
        let n = extras.len();
        l.categories = Some(ListingCategories::from_db(current.primary(), extras));
        Ok(n)
    }

    async fn set_featured(&self, listing: ListingId) -> RepoResult<()> {
        if let Some(l) = self.lock()?.listing_mut(listing) {
            l.featured = true;
        }
        Ok(())
    }

    async fn unlock_sections(&self, listing: ListingId, story: bool, milestones: bool, media: bool) -> RepoResult<()> {
        if let Some(l) = self.lock()?.listing_mut(listing) {
            l.unlocked.story |= story;
            l.unlocked.milestones |= milestones;
            l.unlocked.media |= media;
        }
        Ok(())
    }

    async fn add_billboard(
        &self,
        listing: ListingId,
        line_id: i64,
        amount: Cents,
        _now: DateTime<Utc>,
    ) -> RepoResult<()> {
        let mut st = self.lock()?;
        if st.billboard_lines.insert(line_id)
            && let Some(row) = st.listings.get_mut(&listing)
        {
            row.billboard_cents += amount.get();
        }
        Ok(())
    }
}

#[async_trait]
impl ClaimRepository for MemoryStore {
    async fn create_claim(&self, new: &NewClaim) -> RepoResult<Claim> {
        let mut st = self.lock()?;
        let claim = ClaimRecord {
            id: ClaimId::from_db(st.next_id("claims")),
            user: new.user,
            listing: new.listing,
            method: new.method,
            email: new.email.clone(),
            token: new.token.clone(),
            status: ClaimStatus::Pending,
            created_at: new.created_at,
            expires_at: ClaimStatus::expires_at(new.created_at),
            verified_at: None,
            last_check: None,
        };
        st.claims.push(ClaimRow { claim: claim.clone(), token_hash: new.token_hash.clone() });
        Ok(claim.into())
    }

    async fn open_claim(
        &self,
        user: UserId,
        listing: ListingId,
        method: ClaimMethod,
        now: DateTime<Utc>,
    ) -> RepoResult<Option<Claim>> {
        ok(self
            .lock()?
            .claims
            .iter()
            .map(|r| &r.claim)
            .filter(|c| c.user == user && c.listing == listing && c.method == method)
            .filter(|c| c.status == ClaimStatus::Pending && c.expires_at >= now)
            .max_by_key(|c| c.id)
            .cloned()
            .map(Claim::from))
    }

    async fn my_claim(&self, user: UserId, id: ClaimId) -> RepoResult<Option<Claim>> {
        ok(self
            .lock()?
            .claims
            .iter()
            .map(|r| &r.claim)
            .find(|c| c.id == id && c.user == user)
            .cloned()
            .map(Claim::from))
    }

    async fn my_claims(&self, user: UserId, page: PageRequest) -> RepoResult<Paged<Claim>> {
        let mut list: Vec<ClaimRecord> =
            self.lock()?.claims.iter().map(|r| &r.claim).filter(|c| c.user == user).cloned().collect();
        list.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(page_of(list, page).map(Claim::from))
    }

    async fn claims_on_listing(&self, listing: ListingId) -> RepoResult<Vec<Claim>> {
        let mut list: Vec<ClaimRecord> =
            self.lock()?.claims.iter().map(|r| &r.claim).filter(|c| c.listing == listing).cloned().collect();
        list.sort_by_key(|c| c.id);
        Ok(list.into_iter().map(Claim::from).collect())
    }

    async fn claim_by_token_hash(&self, hash: &str) -> RepoResult<Option<Claim>> {
        ok(self
            .lock()?
            .claims
            .iter()
            .find(|r| r.token_hash == hash && r.claim.method == ClaimMethod::Email)
            .map(|r| r.claim.clone().into()))
    }

    async fn record_claim_check(&self, id: ClaimId, check: &ClaimCheck) -> RepoResult<()> {
        if let Some(r) = self.lock()?.claims.iter_mut().find(|r| r.claim.id == id) {
            r.claim.last_check = Some(check.clone());
        }
        Ok(())
    }

    async fn complete_claim(
        &self,
        id: ClaimId,
        from: ClaimStatus,
        to: ClaimStatus,
        check: &ClaimCheck,
    ) -> RepoResult<bool> {
        let mut st = self.lock()?;
        let Some(r) = st.claims.iter_mut().find(|r| r.claim.id == id && r.claim.status == from) else {
            return Ok(false);
        };
        r.claim.status = to;
        r.claim.last_check = Some(check.clone());
        if to != ClaimStatus::Verified {
            return Ok(true);
        }
        r.claim.verified_at = Some(check.at);
        let (listing, user) = (r.claim.listing, r.claim.user);
        st.add_owner(listing, user, "claimant", check.at);
        if let Some(l) = st.listing_mut(listing) {
            l.verified = true;
        }
        Ok(true)
    }

    async fn email_claims_since(&self, user: UserId, listing: ListingId, since: DateTime<Utc>) -> RepoResult<u64> {
        ok(self
            .lock()?
            .claims
            .iter()
            .map(|r| &r.claim)
            .filter(|c| {
                c.user == user && c.listing == listing && c.method == ClaimMethod::Email && c.created_at >= since
            })
            .count() as u64)
    }

    async fn listing_owners(&self, listing: ListingId) -> RepoResult<Vec<(UserId, Email)>> {
        let st = self.lock()?;
        let mut owners: Vec<_> = st.owners.iter().filter(|o| o.listing == listing).collect();
        owners.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.user.cmp(&b.user)));
        ok(owners.into_iter().filter_map(|o| Some((o.user, st.user(o.user)?.user.email.clone()))).collect())
    }
}
