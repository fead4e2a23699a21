//! The directory's reads and writes: listings and their search, categories, bulk import, editorial
//! content, reference data and the public-change counter.

use crate::{ListingRow, MemoryStore, State, UserRow, VoteRow, capped_page_of, ok, page_of};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::award::Award;
use domain::blog::{BlogPost, NewBlogPost};
use domain::category::{Category, NewCategory};
use domain::founder::{Founder, NewFounder};
use domain::ids::{BlogPostId, CategoryId, FounderId, ListingId, QuestionId, UserId};
use domain::interview::InterviewQuestion;
use domain::listing::{
    CommunityRating, CountryCode, Listing, ListingDetails, ListingSearch, ListingStatus, ListingSummary, NewListing,
    RankMetric, SearchSort, StatusFilter, trending,
};
use domain::paging::{PageRequest, Paged};
use domain::ports::{
    AwardRepository, BlogRepository, CategoryRepository, DirectoryImport, FounderRepository, ImportListing,
    ImportTransaction, InterviewRepository, ListingRepository, ProductRepository, PublicChanges, RepoError, RepoResult,
    SettingsRepository,
};
use domain::product::{Product, ProductCode};
use domain::sections::StoredMilestone;
use domain::slug::Slug;
use domain::user::Email;
use domain::week::LaunchWeek;
use std::sync::Arc;

/// A listing as a new row: no counters yet.
fn new_listing(id: ListingId, slug: Slug, new: &NewListing, now: DateTime<Utc>) -> Listing {
    Listing {
        id,
        slug,
        profile: new.profile.clone(),
        lifecycle: new.lifecycle,
        categories: new.categories.clone(),
        unlocked: new.unlocked,
        featured: new.featured,
        verified: new.verified,
        votes: 0,
        follows: 0,
        views: 0,
        trending_score: 0.0,
        community_rating: None,
        domain_rating: new.domain_rating.clone(),
        revenue: new.revenue.clone(),
        created_at: new.created_at,
        updated_at: now,
    }
}

impl State {
    /// The first of `slug`, `slug-2` … `slug-50` no listing has.
    pub(crate) fn free_slug(&self, slug: &Slug) -> RepoResult<Slug> {
        (0..50u32)
            .map(|attempt| if attempt == 0 { slug.clone() } else { slug.with_suffix(attempt + 1) })
            .find(|s| !self.listings.values().any(|r| r.listing.slug == *s))
            .ok_or_else(|| RepoError::Conflict(format!("no free slug near {slug}")))
    }

    /// Stores a new listing under a free slug near its own.
    pub(crate) fn insert_listing(&mut self, new: &NewListing, now: DateTime<Utc>) -> RepoResult<ListingId> {
        let slug = self.free_slug(&new.slug)?;
        let id = ListingId::from_db(self.next_id("listings"));
        let listing = new_listing(id, slug, new, now);
        self.listings.insert(id, ListingRow { listing, billboard_cents: 0, draft: None, badge: None });
        Ok(id)
    }

    fn live(&self) -> impl Iterator<Item = &Listing> {
        self.listings.values().map(|r| &r.listing).filter(|l| l.lifecycle.status() == ListingStatus::Live)
    }

    /// The category with `slug` and its children's ids.
    fn category_and_children(&self, slug: &Slug) -> Vec<CategoryId> {
        let Some(c) = self.categories.iter().find(|c| c.slug == *slug) else { return Vec::new() };
        std::iter::once(c.id)
            .chain(self.categories.iter().filter(|x| x.parent_id == Some(c.id)).map(|x| x.id))
            .collect()
    }

    fn founder_behind_live(&self, founder: FounderId) -> bool {
        self.listing_founders.iter().any(|(l, f, _, _)| {
            *f == founder && self.listing(*l).is_some_and(|l| l.lifecycle.status() == ListingStatus::Live)
        })
    }

    /// Demo voter accounts, created up to `n`; their ids in order.
    fn demo_voters(&mut self, n: usize, now: DateTime<Utc>) -> Vec<UserId> {
        let mut ids: Vec<UserId> = self.users.iter().filter(|u| u.demo).map(|u| u.user.id).collect();
        for i in ids.len()..n {
            let id = UserId::from_db(self.next_id("users"));
            let Ok(email) = Email::parse(&format!("voter-{i:05}@voters.example")) else { continue };
            self.users.push(UserRow {
                user: domain::user::User {
                    id,
                    email,
                    display_name: format!("Voter {i}"),
                    is_admin: false,
                    created_at: now,
                    email_verified_at: None,
                    suspended_at: None,
                },
                password_hash: None,
                demo: true,
            });
            ids.push(id);
        }
        ids
    }
}

/// The words of a search (the SQL stores' tokenizer: alphanumeric runs, lower-cased, at most ten);
/// the last is matched as a prefix (the user may still be typing it).
fn query_words(q: &str) -> Vec<String> {
    q.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).take(10).map(str::to_lowercase).collect()
}

/// How well `l` matches `words`: `None` when a word is missing, else a weight (a word in the name
/// counts most, as the SQL stores' ranking weighs it).
fn relevance(l: &Listing, words: &[String]) -> Option<f64> {
    let p = &l.profile;
    let fields: [(f64, Vec<&str>); 7] = [
        (10.0, vec![p.name.as_str()]),
        (5.0, vec![p.tagline.as_str()]),
        (3.0, vec![p.short_description.as_str()]),
        (1.0, vec![p.description.as_str()]),
        (2.0, p.features.iter().map(String::as_str).collect()),
        (4.0, p.keywords.iter().map(String::as_str).collect()),
        (4.0, p.tags.iter().map(String::as_str).collect()),
    ];
    let tokens: Vec<(f64, Vec<String>)> =
        fields.iter().map(|(w, texts)| (*w, texts.iter().flat_map(|t| query_words_all(t)).collect())).collect();
    let last = words.len().saturating_sub(1);
    let mut score = 0.0;
    for (i, word) in words.iter().enumerate() {
        let hit = |t: &String| if i == last { t.starts_with(word.as_str()) } else { t == word };
        let weight: f64 = tokens.iter().map(|(w, ts)| w * ts.iter().filter(|t| hit(t)).count() as f64).sum();
        if weight == 0.0 {
            return None;
        }
        score += weight;
    }
    Some(score)
}

fn query_words_all(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

fn matches_filters(st: &State, l: &Listing, s: &ListingSearch, categories: &Option<Vec<CategoryId>>) -> bool {
    let p = &l.profile;
    let wanted_status = match s.status {
        StatusFilter::Live => ListingStatus::Live,
        StatusFilter::Upcoming => ListingStatus::Scheduled,
    };
    let _ = st;
    l.lifecycle.status() == wanted_status
        && categories
            .as_ref()
            .is_none_or(|ids| l.categories.as_ref().is_some_and(|c| c.all().any(|id| ids.contains(&id))))
        && s.stage.as_ref().is_none_or(|x| p.stage.as_ref() == Some(x))
        && s.country.as_ref().is_none_or(|x| p.country.as_ref() == Some(x))
        && s.pricing_model.as_ref().is_none_or(|x| p.pricing_model.to_lowercase() == x.as_str().to_lowercase())
        && s.launch_week.is_none_or(|w| l.lifecycle.launch_week() == Some(w))
        && s.launched_since.is_none_or(|t| l.lifecycle.launched_at().is_some_and(|at| at >= t))
        && s.domain.as_ref().is_none_or(|d| {
            let d = d.as_str().trim().to_lowercase();
            p.domain == d.strip_prefix("www.").unwrap_or(&d)
        })
}

/// Highest first, then the given tie-break.
fn desc<T: PartialOrd>(a: T, b: T) -> std::cmp::Ordering {
    b.partial_cmp(&a).unwrap_or(std::cmp::Ordering::Equal)
}

#[async_trait]
impl ListingRepository for MemoryStore {
    async fn create_listing(&self, new: NewListing) -> RepoResult<Listing> {
        let mut st = self.lock()?;
        let id = st.insert_listing(&new, Utc::now())?;
        st.listing(id).cloned().ok_or(RepoError::NotFound)
    }

    async fn get_listing(&self, id: ListingId) -> RepoResult<Option<Listing>> {
        ok(self.lock()?.listing(id).cloned())
    }

    async fn get_listing_by_slug(&self, slug: &Slug) -> RepoResult<Option<Listing>> {
        ok(self.lock()?.listings.values().find(|r| r.listing.slug == *slug).map(|r| r.listing.clone()))
    }

    async fn live_listing_id(&self, slug: &Slug) -> RepoResult<Option<ListingId>> {
        ok(self.lock()?.live().find(|l| l.slug == *slug).map(|l| l.id))
    }

    async fn search_listings(&self, s: &ListingSearch, page: PageRequest) -> RepoResult<Paged<ListingSummary>> {
        let st = self.lock()?;
        let words = s.q.as_ref().map(|q| query_words(q.as_str())).unwrap_or_default();
        if s.has_words() && words.is_empty() {
            // Only punctuation: the SQL stores match nothing either.
            return Ok(Paged::new(vec![], page, 0));
        }
        let categories = s.category.as_ref().map(|c| st.category_and_children(c));
        let mut hits: Vec<(&Listing, f64)> = st
            .listings
            .values()
            .map(|r| &r.listing)
            .filter(|l| matches_filters(&st, l, s, &categories))
            .filter_map(|l| if words.is_empty() { Some((l, 0.0)) } else { relevance(l, &words).map(|r| (l, r)) })
            .collect();
        let by_id_desc = |a: &Listing, b: &Listing| b.id.cmp(&a.id);
        hits.sort_by(|(a, ra), (b, rb)| match (s.sort, words.is_empty(), s.status) {
            (SearchSort::Relevance, false, _) => desc(ra, rb).then(b.votes.cmp(&a.votes)).then(by_id_desc(a, b)),
            (SearchSort::Relevance, true, StatusFilter::Upcoming) => {
                a.lifecycle.launch_week().cmp(&b.lifecycle.launch_week()).then(a.id.cmp(&b.id))
            }
            (SearchSort::Relevance | SearchSort::Votes, _, _) => b.votes.cmp(&a.votes).then(by_id_desc(a, b)),
            (SearchSort::Newest, _, StatusFilter::Live) => {
                b.lifecycle.launched_at().cmp(&a.lifecycle.launched_at()).then(by_id_desc(a, b))
            }
            (SearchSort::Newest, _, StatusFilter::Upcoming) => b.created_at.cmp(&a.created_at).then(by_id_desc(a, b)),
            (SearchSort::Trending, _, _) => desc(a.trending_score, b.trending_score).then(by_id_desc(a, b)),
            (SearchSort::MostViewed, _, _) => b.views.cmp(&a.views).then(by_id_desc(a, b)),
            (SearchSort::MostFollowed, _, _) => b.follows.cmp(&a.follows).then(by_id_desc(a, b)),
        });
        let found = hits.into_iter().map(|(l, _)| ListingSummary::of(l)).collect();
        // As the SQL stores: an unfiltered list's total is exact, any other search's counted to the cap.
        Ok(if s.is_unfiltered() { page_of(found, page) } else { capped_page_of(found, page) })
    }

    async fn count_live_listings(&self) -> RepoResult<u64> {
        ok(self.lock()?.live().count() as u64)
    }

    async fn max_listing_id(&self) -> RepoResult<i64> {
        ok(self.lock()?.listings.keys().next_back().map_or(0, |id| id.get()))
    }

    async fn live_slugs_in(&self, after: i64, up_to: i64) -> RepoResult<Vec<(Slug, DateTime<Utc>)>> {
        let st = self.lock()?;
        ok(st
            .listings
            .range(ListingId::from_db(after.saturating_add(1))..=ListingId::from_db(up_to))
            .map(|(_, r)| &r.listing)
            .filter(|l| l.lifecycle.status() == ListingStatus::Live)
            .map(|l| (l.slug.clone(), l.updated_at))
            .collect())
    }

    async fn listing_details(&self, id: ListingId, paid_sections: bool) -> RepoResult<ListingDetails> {
        let st = self.lock()?;
        let mut founders: Vec<_> = st.listing_founders.iter().filter(|(l, ..)| *l == id).collect();
        founders.sort_by_key(|(.., pos)| *pos);
        let founders = founders
            .into_iter()
            .filter_map(|(_, f, title, _)| Some((st.founders.iter().find(|x| x.id == *f)?.clone(), title.clone())))
            .collect();
        let mut updates: Vec<_> = st.updates.iter().filter(|(_, l, _)| *l == id).collect();
        updates.sort_by_key(|u| std::cmp::Reverse(u.2.posted_at));
        let updates = updates.into_iter().take(50).map(|(.., u)| u.clone()).collect();
        let (milestones, story) = if paid_sections {
            let mut ms: Vec<_> = st.milestones.iter().filter(|(_, l, _)| *l == id).collect();
            ms.sort_by(|a, b| a.2.date.cmp(&b.2.date).then(a.0.cmp(&b.0)));
            let ms = ms
                .into_iter()
                .map(|(mid, _, m)| StoredMilestone {
                    id: domain::ids::MilestoneId::from_db(*mid),
                    milestone: m.clone(),
                })
                .collect();
            (ms, st.stories.get(&id).cloned())
        } else {
            (Vec::new(), None)
        };
        let mut awards: Vec<Award> = st.awards.iter().filter(|a| a.listing_id == id).cloned().collect();
        awards.sort_by_key(|a| std::cmp::Reverse(a.week));
        Ok(ListingDetails { founders, updates, milestones, story, awards })
    }

    async fn alternatives(&self, id: ListingId, limit: u32) -> RepoResult<Vec<(ListingSummary, bool)>> {
        // No port writes approved alternatives yet: the list is the same primary category's, by votes.
        let st = self.lock()?;
        let Some(primary) = st.listing(id).and_then(|l| l.categories.as_ref()).map(|c| c.primary()) else {
            return Ok(Vec::new());
        };
        let mut same: Vec<&Listing> =
            st.live().filter(|l| l.id != id && l.categories.as_ref().is_some_and(|c| c.primary() == primary)).collect();
        same.sort_by(|a, b| b.votes.cmp(&a.votes).then(a.id.cmp(&b.id)));
        Ok(same.into_iter().take(limit as usize).map(|l| (ListingSummary::of(l), false)).collect())
    }

    async fn ranked(&self, metric: RankMetric, page: PageRequest) -> RepoResult<Paged<(ListingSummary, i64)>> {
        let st = self.lock()?;
        let mut rows: Vec<(ListingSummary, i64)> = st
            .listings
            .values()
            .filter(|r| r.listing.lifecycle.status() == ListingStatus::Live)
            .filter_map(|r| {
                let l = &r.listing;
                let value = match metric {
                    RankMetric::Votes => l.votes,
                    RankMetric::BillboardCents => r.billboard_cents,
                    RankMetric::DomainRating => l.domain_rating.as_ref().map_or(0, |d| i64::from(d.value)),
                    RankMetric::RevenueMonthlyCents => l.revenue.as_ref().map_or(0, |r| r.monthly_cents),
                };
                (value > 0).then(|| (ListingSummary::of(l), value))
            })
            .collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.id.cmp(&b.0.id)));
        Ok(capped_page_of(rows, page))
    }

    async fn weekly_votes(&self, week: LaunchWeek, page: PageRequest) -> RepoResult<Paged<(ListingSummary, i64)>> {
        let st = self.lock()?;
        let mut rows: Vec<(ListingSummary, i64)> = st
            .tallies
            .iter()
            .filter(|((w, _), n)| *w == week.monday() && **n > 0)
            .filter_map(|((_, id), n)| {
                let l = st.listing(*id).filter(|l| l.lifecycle.status() == ListingStatus::Live)?;
                Some((ListingSummary::of(l), *n))
            })
            .collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.id.cmp(&b.0.id)));
        Ok(capped_page_of(rows, page))
    }
}

#[async_trait]
impl CategoryRepository for MemoryStore {
    async fn ensure_categories(&self, cats: &[NewCategory]) -> RepoResult<usize> {
        let mut st = self.lock()?;
        // The SQL stores give a category stored without synonyms the reference's.
        for c in cats.iter().filter(|c| !c.synonyms.is_empty()) {
            if let Some(stored) = st.categories.iter_mut().find(|x| x.slug == c.slug && x.synonyms.is_empty()) {
                stored.synonyms = c.synonyms.clone();
            }
        }
        let (parents, children): (Vec<&NewCategory>, Vec<&NewCategory>) = cats.iter().partition(|c| c.parent.is_none());
        // Checked before anything is written: one refused child leaves the tree as it was.
        let mut known: Vec<Slug> = st.categories.iter().map(|c| c.slug.clone()).collect();
        known.extend(parents.iter().map(|c| c.slug.clone()));
        if let Some(c) = children.iter().find(|c| c.parent.as_ref().is_some_and(|p| !known.contains(p))) {
            let p = c.parent.as_ref().map(Slug::to_string).unwrap_or_default();
            return Err(RepoError::Conflict(format!("category {} names unknown parent {p}", c.slug)));
        }
        let mut inserted = 0;
        for c in parents.into_iter().chain(children) {
            if st.categories.iter().any(|x| x.slug == c.slug) {
                continue;
            }
            let parent_id = c.parent.as_ref().and_then(|p| st.categories.iter().find(|x| x.slug == *p)).map(|p| p.id);
            let id = CategoryId::from_db(st.next_id("categories"));
            st.categories.push(Category {
                id,
                slug: c.slug.clone(),
                name: c.name.clone(),
                description: c.description.clone(),
                parent_id,
                position: c.position,
                faqs: c.faqs.clone(),
                attributes: c.attributes.clone(),
                synonyms: c.synonyms.clone(),
            });
            inserted += 1;
        }
        st.categories.sort_by(|a, b| a.position.cmp(&b.position).then(a.id.cmp(&b.id)));
        Ok(inserted)
    }

    async fn live_listing_counts(&self) -> RepoResult<domain::category::CategoryCounts> {
        let st = self.lock()?;
        Ok(st.live().filter_map(|l| l.categories.as_ref()).flat_map(|lc| lc.all()).map(|id| (id, 1)).collect())
    }

    async fn get_category_by_slug(&self, slug: &Slug) -> RepoResult<Option<Category>> {
        ok(self.lock()?.categories.iter().find(|c| c.slug == *slug).cloned())
    }

    async fn all_categories(&self) -> RepoResult<Arc<Vec<Category>>> {
        ok(Arc::new(self.lock()?.categories.clone()))
    }
}

#[async_trait]
impl DirectoryImport for MemoryStore {
    async fn begin_import(&self) -> RepoResult<Box<dyn ImportTransaction + '_>> {
        let st = self.lock()?;
        Ok(Box::new(MemoryImport { store: self, seen: st.writes, copy: std::sync::Mutex::new(st.clone()) }))
    }

    async fn is_empty(&self) -> RepoResult<bool> {
        ok(self.lock()?.listings.is_empty())
    }
}

/// An import's transaction on the memory store: it writes into a copy of the state, which its commit
/// puts in place of the store's at once — unless anything wrote to the store meanwhile, when the
/// commit is refused (`Conflict`) rather than lose that write. Dropped without a commit, the copy goes.
struct MemoryImport<'a> {
    store: &'a MemoryStore,
    /// The store's write count when the copy was taken.
    seen: u64,
    copy: std::sync::Mutex<State>,
}

impl MemoryImport<'_> {
    fn copy(&self) -> std::sync::MutexGuard<'_, State> {
        self.copy.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl ImportTransaction for MemoryImport<'_> {
    async fn import_founders(&self, list: &[NewFounder]) -> RepoResult<Vec<FounderId>> {
        self.copy().import_founders(list)
    }

    async fn import_listings(&self, list: &[ImportListing], now: DateTime<Utc>) -> RepoResult<Vec<ListingId>> {
        self.copy().import_listings(list, now)
    }

    async fn import_blog_posts(&self, posts: &[NewBlogPost]) -> RepoResult<usize> {
        self.copy().import_blog_posts(posts)
    }

    async fn import_awards(&self, list: &[Award]) -> RepoResult<usize> {
        self.copy().import_awards(list)
    }

    async fn commit(self: Box<Self>) -> RepoResult<()> {
        let mut live = self.store.lock()?;
        if live.writes != self.seen {
            return Err(RepoError::Conflict("the directory changed while the import was open; run it again".into()));
        }
        let writes = live.writes.wrapping_add(1);
        *live = self.copy.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Counted as one write, so another import opened before this commit is refused at its own.
        live.writes = writes;
        Ok(())
    }
}

/// The writes of an import, on the state they are given (the store's copy in a [`MemoryImport`]).
impl State {
    fn import_founders(&mut self, list: &[NewFounder]) -> RepoResult<Vec<FounderId>> {
        let st = self;
        if let Some(f) = list.iter().find(|f| st.founders.iter().any(|x| x.slug == f.slug)) {
            return Err(RepoError::Conflict(format!("a founder with slug {} exists", f.slug)));
        }
        let mut ids = Vec::with_capacity(list.len());
        for f in list {
            let id = FounderId::from_db(st.next_id("founders"));
            st.founders.push(Founder {
                id,
                slug: f.slug.clone(),
                name: f.name.clone(),
                headline: f.headline.clone(),
                bio: f.bio.clone(),
                country: f.country.clone(),
                avatar_url: f.avatar_url.clone(),
                socials: f.socials.clone(),
                user_id: None,
            });
            ids.push(id);
        }
        Ok(ids)
    }

    fn import_listings(&mut self, list: &[ImportListing], now: DateTime<Utc>) -> RepoResult<Vec<ListingId>> {
        let st = self;
        // Slugs are taken as given (an import is one transaction: a taken slug refuses all of it).
        if let Some(l) = list.iter().find(|l| st.listings.values().any(|r| r.listing.slug == l.listing.slug)) {
            return Err(RepoError::Conflict(format!("a listing with slug {} exists", l.listing.slug)));
        }
        // Every founder and category named must be held, as the SQL stores' foreign keys require.
        let founders: std::collections::HashSet<FounderId> = st.founders.iter().map(|x| x.id).collect();
        let categories: std::collections::HashSet<CategoryId> = st.categories.iter().map(|x| x.id).collect();
        if !list.iter().all(|l| {
            l.founders.iter().all(|(f, _)| founders.contains(f))
                && l.listing.categories.as_ref().is_none_or(|c| c.all().all(|c| categories.contains(&c)))
        }) {
            return Err(RepoError::NotFound);
        }
        let voters = st.demo_voters(list.iter().map(|l| l.votes.len()).max().unwrap_or(0), now);
        let mut ids = Vec::with_capacity(list.len());
        for item in list {
            let id = ListingId::from_db(st.next_id("listings"));
            let mut listing = new_listing(id, item.listing.slug.clone(), &item.listing, now);
            listing.votes = item.votes.len() as i64;
            listing.follows = item.follows;
            listing.views = item.views;
            listing.trending_score = trending::rank(item.votes.iter().map(|at| (*at, 1.0)));
            listing.community_rating = CommunityRating::from_reviews(&item.reviews);
            let billboard_cents = item.billboard.iter().map(|(c, _)| c.get()).sum();
            st.listings.insert(id, ListingRow { listing, billboard_cents, draft: None, badge: None });
            for (pos, (fid, title)) in item.founders.iter().enumerate() {
                st.listing_founders.push((id, *fid, title.clone(), pos));
            }
            for (v, at) in item.votes.iter().enumerate() {
                st.votes.push(VoteRow { listing: id, user: voters[v], at: *at, weight: 1.0, address_key: None });
                *st.tallies.entry((LaunchWeek::of(*at).monday(), id)).or_default() += 1;
            }
            for u in &item.updates {
                let uid = st.next_id("listing_updates");
                st.updates.push((uid, id, u.clone()));
            }
            for m in &item.milestones {
                let mid = st.next_id("milestones");
                st.milestones.push((mid, id, m.clone()));
            }
            if let Some(story) = &item.story {
                st.stories.insert(id, story.clone());
            }
            ids.push(id);
        }
        Ok(ids)
    }

    fn import_blog_posts(&mut self, posts: &[NewBlogPost]) -> RepoResult<usize> {
        let st = self;
        if let Some(p) = posts.iter().find(|p| st.blog.iter().any(|x| x.slug == p.slug)) {
            return Err(RepoError::Conflict(format!("a blog post with slug {} exists", p.slug)));
        }
        for p in posts {
            let id = BlogPostId::from_db(st.next_id("blog_posts"));
            st.blog.push(BlogPost {
                id,
                slug: p.slug.clone(),
                title: p.title.clone(),
                summary: p.summary.clone(),
                body_markdown: p.body_markdown.clone(),
                author: p.author.clone(),
                tags: p.tags.clone(),
                faqs: p.faqs.clone(),
                published_at: p.published_at,
            });
        }
        Ok(posts.len())
    }

    fn import_awards(&mut self, list: &[Award]) -> RepoResult<usize> {
        let st = self;
        if let Some(a) = list.iter().find(|a| st.awards.iter().any(|x| x.week == a.week && x.rank == a.rank)) {
            return Err(RepoError::Conflict(format!("week {} has a rank {} award", a.week, a.rank.get())));
        }
        st.awards.extend(list.iter().cloned());
        Ok(list.len())
    }
}

/// Whether `text` contains `q`, ignoring case (the SQL stores' `lower(x) LIKE %q%`).
fn contains(text: &str, q: &str) -> bool {
    text.to_lowercase().contains(&q.to_lowercase())
}

#[async_trait]
impl BlogRepository for MemoryStore {
    async fn list_blog_posts(&self, q: Option<&str>, page: PageRequest) -> RepoResult<Paged<BlogPost>> {
        let now = Utc::now();
        let q = q.map(str::trim).filter(|q| !q.is_empty());
        let st = self.lock()?;
        let mut posts: Vec<BlogPost> = st
            .blog
            .iter()
            .filter(|p| p.published_at.is_some_and(|at| at <= now))
            .filter(|p| {
                q.is_none_or(|q| contains(&p.title, q) || contains(&p.summary, q) || contains(&p.body_markdown, q))
            })
            .cloned()
            .collect();
        posts.sort_by(|a, b| b.published_at.cmp(&a.published_at).then(b.id.cmp(&a.id)));
        Ok(page_of(posts, page))
    }

    async fn get_blog_post(&self, slug: &Slug) -> RepoResult<Option<BlogPost>> {
        let now = Utc::now();
        ok(self.lock()?.blog.iter().find(|p| p.slug == *slug && p.published_at.is_some_and(|at| at <= now)).cloned())
    }
}

#[async_trait]
impl FounderRepository for MemoryStore {
    async fn list_founders(
        &self,
        q: Option<&str>,
        country: Option<&CountryCode>,
        page: PageRequest,
    ) -> RepoResult<Paged<Founder>> {
        let q = q.map(str::trim).filter(|q| !q.is_empty());
        let st = self.lock()?;
        let mut list: Vec<Founder> = st
            .founders
            .iter()
            .filter(|f| st.founder_behind_live(f.id))
            .filter(|f| q.is_none_or(|q| contains(&f.name, q)))
            .filter(|f| country.is_none_or(|c| f.country.as_deref() == Some(c.as_str())))
            .cloned()
            .collect();
        list.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
        Ok(capped_page_of(list, page))
    }

    async fn get_founder(&self, slug: &Slug) -> RepoResult<Option<(Founder, Vec<ListingSummary>)>> {
        let st = self.lock()?;
        let Some(f) = st.founders.iter().find(|f| f.slug == *slug && st.founder_behind_live(f.id)) else {
            return Ok(None);
        };
        let mut listings: Vec<&Listing> = st
            .listing_founders
            .iter()
            .filter(|(_, fid, ..)| *fid == f.id)
            .filter_map(|(l, ..)| st.listing(*l))
            .filter(|l| l.lifecycle.status() == ListingStatus::Live)
            .collect();
        listings.sort_by(|a, b| b.votes.cmp(&a.votes).then(a.id.cmp(&b.id)));
        Ok(Some((f.clone(), listings.into_iter().map(ListingSummary::of).collect())))
    }
}

#[async_trait]
impl AwardRepository for MemoryStore {
    async fn list_awards(
        &self,
        listing: Option<ListingId>,
        page: PageRequest,
    ) -> RepoResult<Paged<(Award, ListingSummary)>> {
        let st = self.lock()?;
        let mut rows: Vec<(Award, ListingSummary)> = st
            .awards
            .iter()
            .filter(|a| listing.is_none_or(|id| a.listing_id == id))
            .filter_map(|a| Some((a.clone(), st.summary(a.listing_id)?)))
            .collect();
        rows.sort_by(|a, b| b.0.week.cmp(&a.0.week).then(a.0.rank.get().cmp(&b.0.rank.get())));
        Ok(page_of(rows, page))
    }
}

#[async_trait]
impl PublicChanges for MemoryStore {
    async fn note_public_change(&self, scope: &str) -> RepoResult<i64> {
        let mut st = self.lock()?;
        st.public_changes += 1;
        let counter = st.public_changes;
        st.change_scopes.push_back((counter, scope.to_owned()));
        while st.change_scopes.len() as i64 > domain::ports::REMEMBERED_CHANGES {
            st.change_scopes.pop_front();
        }
        Ok(counter)
    }

    async fn public_changes(&self) -> RepoResult<i64> {
        ok(self.lock()?.public_changes)
    }

    async fn public_changes_since(&self, seen: i64, limit: u64) -> RepoResult<Vec<(i64, String)>> {
        let st = self.lock()?;
        ok(st.change_scopes.iter().filter(|(c, _)| *c > seen).take(limit as usize).cloned().collect())
    }
}

#[async_trait]
impl ProductRepository for MemoryStore {
    async fn ensure_products(&self, defaults: &[Product]) -> RepoResult<usize> {
        let mut st = self.lock()?;
        let mut n = 0;
        for p in defaults {
            if !st.products.iter().any(|x| x.code == p.code) {
                st.products.push(p.clone());
                n += 1;
            }
        }
        Ok(n)
    }

    async fn list_products(&self) -> RepoResult<Vec<Product>> {
        let mut list: Vec<Product> = self.lock()?.products.iter().filter(|p| p.active).cloned().collect();
        list.sort_by(|a, b| a.position.cmp(&b.position).then(a.code.as_str().cmp(b.code.as_str())));
        Ok(list)
    }

    async fn set_price(&self, code: &ProductCode, price: domain::money::Cents) -> RepoResult<()> {
        let mut st = self.lock()?;
        let p = st.products.iter_mut().find(|p| p.code == *code).ok_or(RepoError::NotFound)?;
        p.price = price;
        Ok(())
    }
}

#[async_trait]
impl SettingsRepository for MemoryStore {
    async fn ensure_settings(&self, defaults: &[(&str, &str)]) -> RepoResult<usize> {
        let mut st = self.lock()?;
        let mut n = 0;
        for (k, v) in defaults {
            if !st.settings.contains_key(*k) {
                st.settings.insert((*k).to_owned(), (*v).to_owned());
                n += 1;
            }
        }
        Ok(n)
    }

    async fn all_settings(&self) -> RepoResult<Vec<(String, String)>> {
        ok(self.lock()?.settings.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
    }

    async fn set_setting(&self, key: &str, value: &str) -> RepoResult<()> {
        self.lock()?.settings.insert(key.to_owned(), value.to_owned());
        Ok(())
    }
}

#[async_trait]
impl InterviewRepository for MemoryStore {
    async fn ensure_questions(&self, questions: &[&str]) -> RepoResult<usize> {
        let mut st = self.lock()?;
        let mut next = st.questions.iter().map(|q| q.position).max().unwrap_or(0);
        let mut n = 0;
        for q in questions {
            if st.questions.iter().any(|x| x.text == *q) {
                continue;
            }
            next += 1;
            let id = QuestionId::from_db(st.next_id("interview_questions"));
            st.questions.push(InterviewQuestion { id, position: next, text: (*q).to_owned() });
            n += 1;
        }
        Ok(n)
    }

    async fn list_questions(&self) -> RepoResult<Vec<InterviewQuestion>> {
        let mut list = self.lock()?.questions.clone();
        list.sort_by_key(|q| q.position);
        Ok(list)
    }
}
