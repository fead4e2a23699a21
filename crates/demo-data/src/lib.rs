//! Reference data (seeded into every database) and demo content (loaded with `--demo-data` or
//! `admin generate-demo`), written through the domain's ports only.
//!
//! Architecture invariant: knows no storage technology; everything it writes goes through
//! `domain::ports`. The fixtures it reads are compiled in from `fixtures/`.

pub mod blog;
pub mod generate;
pub mod reference;
mod rng;

use domain::award::{Award, launch_of_the_week};
use domain::ids::ListingId;
use domain::ports::{
    CategoryRepository, DirectoryImport, ImportTransaction, InterviewRepository, ProductRepository, RepoError,
    SettingsRepository,
};
use domain::week::LaunchWeek;
use generate::{DemoConfig, Generator};
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Fixture(#[from] reference::FixtureError),
    #[error("fixtures/demo/blog: {0}")]
    Blog(String),
    #[error("storage: {0}")]
    Repo(#[from] RepoError),
}

/// What seeding inserted (zero everywhere on a database that was already seeded).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReferenceReport {
    pub categories: usize,
    pub products: usize,
    pub questions: usize,
    pub settings: usize,
}

/// Seeds what every database needs, inserting only what is missing: never overwrites an admin's
/// prices, settings or category edits.
pub async fn seed_reference<S>(store: &S) -> Result<ReferenceReport, LoadError>
where
    S: CategoryRepository + ProductRepository + SettingsRepository + InterviewRepository + ?Sized,
{
    let questions = reference::interview_questions()?;
    let q: Vec<&str> = questions.iter().map(String::as_str).collect();
    Ok(ReferenceReport {
        categories: store.ensure_categories(&reference::categories()?).await?,
        products: store.ensure_products(&reference::products()?).await?,
        questions: store.ensure_questions(&q).await?,
        settings: store.ensure_settings(&domain::settings::DEFAULTS).await?,
    })
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DemoReport {
    pub founders: usize,
    pub listings: usize,
    pub votes: usize,
    pub blog_posts: usize,
    pub awards: usize,
}

/// Listings per import transaction: bounds memory at any scale.
const BATCH: usize = 1000;

/// `0..n` in consecutive ranges of at most BATCH.
fn batches(n: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..n).step_by(BATCH).map(move |start| start..(start + BATCH).min(n))
}

/// Loads demo content as [`load_demo`] does, as one bulk load: the store builds its secondary indexes
/// once at the end instead of after every batch (`admin generate-demo`, at up to a million listings).
/// The indexes are built also when the load fails. Each batch is a transaction of its own (one for a
/// million listings would hold the store's write lock, and its log, for the whole load): a load stopped
/// part-way keeps the batches it wrote.
pub async fn bulk_load_demo<S>(store: &S, cfg: DemoConfig, with_blog: bool) -> Result<DemoReport, LoadError>
where
    S: CategoryRepository + DirectoryImport + ?Sized,
{
    store.begin_bulk_load().await?;
    let loaded = write_demo(store, &Writes::PerCall(store), cfg, with_blog).await;
    let built = store.end_bulk_load().await;
    let report = loaded?;
    built?;
    Ok(report)
}

/// Loads demo content in one import transaction: all of it or, when the load fails or is stopped
/// part-way (Ctrl-C during the first `serve --demo-data`), none of it, so the next start loads it
/// whole. Categories must be seeded first. Awards are computed with the domain's rule from the
/// generated votes of each past week.
pub async fn load_demo<S>(store: &S, cfg: DemoConfig, with_blog: bool) -> Result<DemoReport, LoadError>
where
    S: CategoryRepository + DirectoryImport + ?Sized,
{
    let writes = Writes::<S>::Together(store.begin_import().await?);
    let report = write_demo(store, &writes, cfg, with_blog).await?;
    if let Writes::Together(txn) = writes {
        txn.commit().await?;
    }
    Ok(report)
}

/// Where a load's writes go: one import transaction for all of them, or one per call.
enum Writes<'a, S: ?Sized> {
    Together(Box<dyn ImportTransaction + 'a>),
    PerCall(&'a S),
}

impl<S: DirectoryImport + ?Sized> Writes<'_, S> {
    async fn founders(&self, list: &[domain::founder::NewFounder]) -> Result<Vec<domain::ids::FounderId>, RepoError> {
        match self {
            Self::Together(txn) => txn.import_founders(list).await,
            Self::PerCall(store) => store.import_founders(list).await,
        }
    }

    async fn listings(
        &self,
        list: &[domain::ports::ImportListing],
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<ListingId>, RepoError> {
        match self {
            Self::Together(txn) => txn.import_listings(list, now).await,
            Self::PerCall(store) => store.import_listings(list, now).await,
        }
    }

    /// Listing batches that may be written at once: one inside a single transaction.
    async fn lanes(&self) -> Result<usize, RepoError> {
        match self {
            Self::Together(_) => Ok(1),
            Self::PerCall(store) => Ok(store.import_lanes().await?.max(1)),
        }
    }

    async fn awards(&self, list: &[Award]) -> Result<usize, RepoError> {
        match self {
            Self::Together(txn) => txn.import_awards(list).await,
            Self::PerCall(store) => store.import_awards(list).await,
        }
    }

    async fn blog_posts(&self, list: &[domain::blog::NewBlogPost]) -> Result<usize, RepoError> {
        match self {
            Self::Together(txn) => txn.import_blog_posts(list).await,
            Self::PerCall(store) => store.import_blog_posts(list).await,
        }
    }
}

/// Generates demo content and writes it through `writes`.
async fn write_demo<S>(
    store: &S,
    writes: &Writes<'_, S>,
    cfg: DemoConfig,
    with_blog: bool,
) -> Result<DemoReport, LoadError>
where
    S: CategoryRepository + DirectoryImport + ?Sized,
{
    let fixtures = reference::category_fixtures()?;
    let categories: HashMap<String, domain::ids::CategoryId> =
        store.list_categories().await?.into_iter().map(|c| (c.category.slug.to_string(), c.category.id)).collect();
    let now = cfg.now;
    let total = cfg.listings;
    let cfg_founders = cfg.founder_count();
    let mut gen_ = Generator::new(cfg, &fixtures);
    // Founders in batches too: at a million listings the pool is 666 666 people.
    let mut founder_ids = Vec::with_capacity(cfg_founders);
    for batch in batches(cfg_founders) {
        let founders: Vec<_> = batch.map(|i| gen_.founder(i)).collect();
        founder_ids.extend(writes.founders(&founders).await?);
    }
    let mut report = DemoReport { founders: founder_ids.len(), ..Default::default() };
    let mut tallies: BTreeMap<LaunchWeek, Vec<(ListingId, i64)>> = BTreeMap::new();
    // Up to `lanes` batches are written at once (each its own transaction, on a store that says its
    // imports can run side by side); the next batch is generated while they run. Batches are generated,
    // and their results taken, in order, so the content is the same whatever the lanes.
    let lanes = writes.lanes().await?;
    let mut pending = batches(total);
    let mut running = futures_util::stream::FuturesOrdered::new();
    loop {
        while running.len() < lanes {
            let Some(batch) = pending.next() else { break };
            let (items, launch_votes): (Vec<_>, Vec<_>) =
                batch.map(|i| gen_.listing(i, &categories, &founder_ids)).map(|g| (g.item, g.launch_votes)).unzip();
            running.push_back(async move {
                let ids = writes.listings(&items, now).await?;
                let votes = items.iter().map(|i| i.votes.len()).sum::<usize>();
                Ok::<_, LoadError>((ids, launch_votes, votes))
            });
        }
        let Some(done) = futures_util::StreamExt::next(&mut running).await else { break };
        let (ids, launch_votes, votes) = done?;
        report.votes += votes;
        report.listings += ids.len();
        for (launch, id) in launch_votes.into_iter().zip(ids) {
            if let Some((week, votes)) = launch {
                tallies.entry(week).or_default().push((id, votes));
            }
        }
    }
    let this_week = LaunchWeek::of(now);
    let awards: Vec<Award> = tallies
        .into_iter()
        .filter(|(w, _)| *w < this_week)
        .flat_map(|(w, tally)| launch_of_the_week(w, tally))
        .collect();
    report.awards = writes.awards(&awards).await?;
    if with_blog {
        report.blog_posts = writes.blog_posts(&blog::posts().map_err(LoadError::Blog)?).await?;
    }
    Ok(report)
}
