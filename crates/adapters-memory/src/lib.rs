//! `MemoryStore`: every storage port of the domain on plain collections behind one lock, with the
//! semantics the SQL store has (uniqueness, compare-and-set, paging and ordering, idempotency, job
//! leases). For unit tests of use cases and for services that embed the core without a database.
//! Nothing is written anywhere: the data lives as long as the store.
//!
//! One `Mutex` over the whole state makes every method one atomic step, the way one SQL transaction
//! is; no lock is held across an `.await`. The port-contract suite (`adapters-storage/tests/storage`)
//! runs the same tests on this store, SQLite and PostgreSQL, so they cannot drift.

mod accounts;
mod directory;
mod moderation;
mod own;
mod work;

use chrono::{DateTime, NaiveDate, Utc};
use domain::auth::ApiKey;
use domain::award::Award;
use domain::blog::BlogPost;
use domain::category::Category;
use domain::claim::ClaimRecord;
use domain::draft::Draft;
use domain::founder::Founder;
use domain::ids::{DraftId, ListingId, UserId};
use domain::interview::InterviewQuestion;
use domain::listing::{Lifecycle, Listing, ListingSummary};
use domain::oauth::{AuthCode, OAuthClient, RefreshGrant};
use domain::order::OrderRecord;
use domain::paging::{PageRequest, Paged};
use domain::ports::{BadgeCheck, ListingVersion, OutboxEmail, RepoError, RepoResult};
use domain::product::Product;
use domain::sections::{ListingUpdate, Milestone, Story};
use domain::throttle::Counter;
use domain::user::User;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The in-memory store. Cheap to create; share it behind an `Arc` like any other store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
    /// Set by [`MemoryStore::break_down`]: every call fails as a lost database connection would.
    broken: AtomicBool,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes every later call fail with `RepoError::Unexpected`, as a store whose database went away
    /// does, until [`MemoryStore::repair`]: for tests of what callers do when storage breaks.
    pub fn break_down(&self) {
        self.broken.store(true, Ordering::SeqCst);
    }

    pub fn repair(&self) {
        self.broken.store(false, Ordering::SeqCst);
    }

    /// The state, for one atomic step. A panic in another holder does not poison the store: every
    /// step leaves the state whole before it can panic.
    fn lock(&self) -> RepoResult<StateGuard<'_>> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(RepoError::Unexpected(
                "the in-memory store was broken on purpose (MemoryStore::break_down)".into(),
            ));
        }
        Ok(StateGuard(self.state.lock().unwrap_or_else(PoisonError::into_inner)))
    }
}

/// The locked state. Every mutable access counts as a write ([`State::writes`]), so an import working
/// on a copy (`directory::MemoryImport`) can tell whether anything changed the state meanwhile.
struct StateGuard<'a>(MutexGuard<'a, State>);

impl std::ops::Deref for StateGuard<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.0
    }
}

impl std::ops::DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut State {
        self.0.writes = self.0.writes.wrapping_add(1);
        &mut self.0
    }
}

impl domain::ports::StoreCache for MemoryStore {
    /// Nothing is cached: every read sees the state.
    fn forget_cached(&self) {}
}

/// A stored listing and what the SQL row holds beside the domain's `Listing`.
#[derive(Debug, Clone)]
struct ListingRow {
    listing: Listing,
    billboard_cents: i64,
    draft: Option<DraftId>,
    badge: Option<BadgeCheck>,
}

#[derive(Debug, Clone)]
struct UserRow {
    user: User,
    password_hash: Option<String>,
    demo: bool,
}

#[derive(Debug, Clone)]
struct OwnerRow {
    listing: ListingId,
    user: UserId,
    role: &'static str,
    created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
struct VoteRow {
    listing: ListingId,
    user: UserId,
    at: DateTime<Utc>,
    weight: f64,
    address_key: Option<String>,
}

#[derive(Debug, Clone)]
struct JobRow {
    id: i64,
    kind: String,
    payload: String,
    run_at: DateTime<Utc>,
    status: JobStatus,
    attempts: i32,
    locked_by: Option<String>,
    locked_until: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JobStatus {
    Queued,
    Running,
    Done,
    Failed,
}

#[derive(Debug, Clone)]
struct IdempotencyRow {
    fingerprint: String,
    response: Option<String>,
    started_at: DateTime<Utc>,
    created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
struct SessionRow {
    user: UserId,
    csrf: String,
    created: DateTime<Utc>,
    expires: DateTime<Utc>,
}

#[derive(Debug, Clone)]
struct RefreshRow {
    grant: RefreshGrant,
    created_at: DateTime<Utc>,
    used_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
struct InviteRow {
    invite: domain::ports::Invite,
    token_hash: String,
}

#[derive(Debug, Clone)]
struct ClaimRow {
    claim: ClaimRecord,
    token_hash: String,
}

/// Everything stored, table by table, as the SQL schema has it.
#[derive(Debug, Default, Clone)]
struct State {
    /// How many times the state was taken for writing ([`StateGuard`]).
    writes: u64,
    /// The last id handed out per table (ids start at 1, as SQL sequences do).
    ids: HashMap<&'static str, i64>,
    listings: BTreeMap<ListingId, ListingRow>,
    categories: Vec<Category>,
    founders: Vec<Founder>,
    /// (listing, founder, title at the listing, position).
    listing_founders: Vec<(ListingId, domain::ids::FounderId, String, usize)>,
    blog: Vec<BlogPost>,
    awards: Vec<Award>,
    updates: Vec<(i64, ListingId, ListingUpdate)>,
    milestones: Vec<(i64, ListingId, Milestone)>,
    stories: HashMap<ListingId, Story>,
    versions: Vec<ListingVersion>,
    owners: Vec<OwnerRow>,
    votes: Vec<VoteRow>,
    /// Votes per (week's Monday, listing).
    tallies: BTreeMap<(NaiveDate, ListingId), i64>,
    /// The largest trending rank since a listing's votes were last counted afresh (the SQL stores'
    /// `trending_peak`; absent: not known).
    trending_peaks: HashMap<ListingId, f64>,
    follows: BTreeMap<(ListingId, UserId), DateTime<Utc>>,
    view_marks: HashSet<(ListingId, NaiveDate, String)>,
    interview: BTreeMap<(UserId, i64), String>,
    /// Order lines whose billboard money was counted.
    billboard_lines: BTreeSet<i64>,

    users: Vec<UserRow>,
    verifications: HashMap<String, (UserId, DateTime<Utc>)>,
    /// Password-reset links: hash → (account, expiry in whole seconds, as the SQL stores keep it).
    password_resets: HashMap<String, (UserId, i64)>,
    api_keys: Vec<(ApiKey, String)>,
    sessions: HashMap<String, SessionRow>,
    throttles: HashMap<String, Counter>,
    idempotency: HashMap<(String, String), IdempotencyRow>,
    oauth_clients: HashMap<String, OAuthClient>,
    /// The registered clients someone allowed (a code was issued to them).
    oauth_used_clients: HashSet<String>,
    oauth_codes: HashMap<String, (AuthCode, Option<DateTime<Utc>>)>,
    oauth_refresh: HashMap<String, RefreshRow>,

    drafts: HashMap<DraftId, Draft>,
    invites: Vec<InviteRow>,
    outbox: Vec<OutboxEmail>,
    jobs: Vec<JobRow>,
    orders: Vec<OrderRecord>,
    payment_events: HashSet<(String, String)>,
    claims: Vec<ClaimRow>,

    products: Vec<Product>,
    settings: BTreeMap<String, String>,
    questions: Vec<InterviewQuestion>,
    public_changes: i64,
    /// The scopes of the most recent public changes (counter, scope), oldest first.
    change_scopes: std::collections::VecDeque<(i64, String)>,

    moderation: moderation::Moderation,
}

impl State {
    /// The next id of `table`.
    fn next_id(&mut self, table: &'static str) -> i64 {
        let id = self.ids.entry(table).or_insert(0);
        *id += 1;
        *id
    }

    fn listing(&self, id: ListingId) -> Option<&Listing> {
        self.listings.get(&id).map(|r| &r.listing)
    }

    fn listing_mut(&mut self, id: ListingId) -> Option<&mut Listing> {
        self.listings.get_mut(&id).map(|r| &mut r.listing)
    }

    fn summary(&self, id: ListingId) -> Option<ListingSummary> {
        self.listing(id).map(ListingSummary::of)
    }

    fn user(&self, id: UserId) -> Option<&UserRow> {
        self.users.iter().find(|u| u.user.id == id)
    }

    /// Adds `user` as a member of `listing` in `role` (owner, cofounder or claimant, as the SQL stores
    /// name them) unless they are one already.
    fn add_owner(&mut self, listing: ListingId, user: UserId, role: &'static str, now: DateTime<Utc>) {
        if !self.owners.iter().any(|o| o.listing == listing && o.user == user) {
            self.owners.push(OwnerRow { listing, user, role, created_at: now });
        }
    }

    /// The lifecycle's compare-and-set (`move_lifecycle`, and each move moderation makes inside its own
    /// step). The SQL stores compare status, plan and week (not the launch instant), and so does this.
    pub(crate) fn move_lifecycle(
        &mut self,
        id: ListingId,
        from: &Lifecycle,
        to: &Lifecycle,
        now: DateTime<Utc>,
    ) -> bool {
        let Some(l) = self.listing_mut(id) else { return false };
        let c = &l.lifecycle;
        if c.status() != from.status() || c.plan() != from.plan() || c.launch_week() != from.launch_week() {
            return false;
        }
        l.lifecycle = *to;
        l.updated_at = now;
        true
    }

    /// The listings on `plan` that hold a place in `week` (awaiting the badge, scheduled or live).
    fn launching_in(
        &self,
        plan: domain::listing::Plan,
        week: domain::week::LaunchWeek,
    ) -> impl Iterator<Item = ListingId> + '_ {
        use domain::listing::ListingStatus::{AwaitingBadge, Live, Scheduled};
        self.listings
            .iter()
            .filter(move |(_, r)| {
                let lc = &r.listing.lifecycle;
                matches!(lc.status(), AwaitingBadge | Scheduled | Live)
                    && lc.plan() == plan
                    && lc.launch_week() == Some(week)
            })
            .map(|(id, _)| *id)
    }

    /// How many launches on `plan` hold a place in `week`.
    pub(crate) fn launches_in_week(&self, plan: domain::listing::Plan, week: domain::week::LaunchWeek) -> i64 {
        self.launching_in(plan, week).count() as i64
    }

    /// The listings other than `except` holding a place in paid launch `week` at `now`
    /// (`domain::order::holds_from`): launching in it on the paid plan, or by an order that can still
    /// be paid or is paid and not applied yet; each listing once.
    pub(crate) fn paid_places_held(
        &self,
        week: domain::week::LaunchWeek,
        except: &[ListingId],
        now: chrono::DateTime<chrono::Utc>,
    ) -> i64 {
        let mut holders: std::collections::BTreeSet<ListingId> =
            self.launching_in(domain::listing::Plan::Paid, week).collect();
        let open = |o: &domain::order::OrderRecord| {
            o.status == domain::order::OrderStatus::Paid || domain::order::payable(o.status, o.created_at, now)
        };
        // Each listing's latest unapplied launch line of an open order (lines are numbered in the
        // order they were made): it holds its week, an earlier one for another week gave way.
        let mut latest: std::collections::BTreeMap<ListingId, (i64, domain::week::LaunchWeek)> = Default::default();
        for o in self.orders.iter().filter(|o| open(o)) {
            for l in o.lines.iter().filter(|l| l.fulfilled_at.is_none()) {
                if let (Some(id), Some(w)) = (l.line.listing, l.line.launch_week()) {
                    let e = latest.entry(id).or_insert((l.id, w));
                    if l.id > e.0 {
                        *e = (l.id, w);
                    }
                }
            }
        }
        holders.extend(latest.into_iter().filter(|(_, (_, w))| *w == week).map(|(id, _)| id));
        holders.iter().filter(|id| !except.contains(id)).count() as i64
    }

    fn owns(&self, user: UserId, listing: ListingId) -> bool {
        self.owners.iter().any(|o| o.listing == listing && o.user == user)
    }
}

/// One page of `items` (already in order) with the total counted as the SQL stores count a search's:
/// exact up to `domain::paging::COUNT_CAP`, then the cap and not exact.
fn capped_page_of<T>(items: Vec<T>, page: PageRequest) -> Paged<T> {
    let counted = items.len() as u64;
    let items = items.into_iter().skip(page.offset() as usize).take(page.per_page() as usize).collect();
    Paged::counted_to_cap(items, page, counted)
}

/// One page of `items` (already in order) with the total.
fn page_of<T>(items: Vec<T>, page: PageRequest) -> Paged<T> {
    let total = items.len() as u64;
    let items = items.into_iter().skip(page.offset() as usize).take(page.per_page() as usize).collect();
    Paged::new(items, page, total)
}

fn ok<T>(v: T) -> RepoResult<T> {
    Ok(v)
}
