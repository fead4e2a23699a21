//! `SeaOrmStore`: one connection pool, implementing every repository port of the domain on SQLite or
//! PostgreSQL. Each port's implementation lives in its own module beside this one.

use crate::sql::RawQuery;
use domain::category::Category;
use domain::ports::{RepoError, RepoResult};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, DbErr, FromQueryResult, SqlErr, Statement};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct SeaOrmStore {
    pub(crate) db: DatabaseConnection,
    /// The category tree (41 rows, edited by operators only), kept [`CATEGORY_TTL`]; every profile needs it.
    pub(crate) categories: Arc<RwLock<Option<CachedCategories>>>,
    /// Totals of paged reads, kept for a few seconds when enabled (see [`SeaOrmStore::with_count_cache`]).
    counts: Option<moka::future::Cache<String, u64>>,
    /// Short reads of a SQLite file on the calling thread (see [`crate::inline`]); `None` on PostgreSQL
    /// and in-memory SQLite.
    pub(crate) inline: Option<Arc<crate::inline::InlineReader>>,
    /// Concurrent profile reads shared on PostgreSQL (see [`crate::profiles`]); `None` on SQLite.
    pub(crate) profiles: Option<Arc<crate::profiles::ProfileReads>>,
    /// Short reads of PostgreSQL pipelined on a few shared connections (see [`crate::pipe`]); `None`
    /// on SQLite and until [`SeaOrmStore::with_read_pipe`].
    pipe: Option<Arc<crate::pipe::PgPipe>>,
    /// Searches let into the database at once, first come first served (see
    /// [`SeaOrmStore::with_search_slots`]).
    searches: SearchSlots,
    /// On a SQLite file, the one connection the page views' batches are written on (see
    /// [`SeaOrmStore::begin_views_write`]); `None` on PostgreSQL and in-memory SQLite.
    views: Option<DatabaseConnection>,
    /// Imports' turns at reserving their listings' ids on PostgreSQL (`import::reserve_ids`), first
    /// come first served: imports started one after another take their ids in that order, however their
    /// transactions then overlap, so a bulk load in lanes numbers its listings as one in a single lane.
    pub(crate) import_turn: Arc<tokio::sync::Mutex<()>>,
}

/// The slots of [`SeaOrmStore::with_search_slots`], how long a search waits for one, and what the
/// operator's metrics read of them.
#[derive(Debug, Clone)]
struct SearchSlots {
    slots: Arc<tokio::sync::Semaphore>,
    size: usize,
    wait: Duration,
    /// Searches asking for a slot now.
    waiting: Arc<std::sync::atomic::AtomicUsize>,
    /// Searches answered busy since start.
    busy: Arc<std::sync::atomic::AtomicU64>,
}

impl SearchSlots {
    fn new(size: usize, wait: Duration) -> Self {
        let size = size.max(1);
        Self {
            slots: Arc::new(tokio::sync::Semaphore::new(size)),
            size,
            wait,
            waiting: Arc::default(),
            busy: Arc::default(),
        }
    }
}

/// How the search slots are used now, for the operator's metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchSlotStats {
    /// The most searches let into the database at once.
    pub slots: u32,
    /// Searches in the database now.
    pub in_use: u32,
    /// Searches waiting for a slot now.
    pub waiting: u32,
    /// Searches answered busy since start (none came free in time).
    pub busy_total: u64,
}

/// How long a search waits for a slot before it is answered "busy": the pool's own wait for a
/// connection.
pub const SEARCH_SLOT_WAIT: Duration = crate::db::CONNECTION_WAIT;

/// Searches let into the database at once unless configured: one per core of this machine, and one
/// more so that a core is not left idle while a finished search's rows travel back.
pub fn default_search_slots() -> usize {
    crate::db::cores() + 1
}

/// The rows a page may skip and still be a short read ([`SeaOrmStore::paged_read`]): the first 50
/// pages of 20.
pub(crate) const SHORT_OFFSET: u64 = 1_000;

/// The category tree and when it was read.
pub(crate) type CachedCategories = (Instant, Arc<Vec<Category>>);

/// How long another instance's category edit may take to show here (this instance's own edits show at once).
pub(crate) const CATEGORY_TTL: Duration = Duration::from_secs(30);

impl SeaOrmStore {
    pub fn new(db: DatabaseConnection) -> Self {
        let inline = (db.get_database_backend() == sea_orm::DbBackend::Sqlite)
            .then(|| {
                crate::inline::InlineReader::for_file(db.get_sqlite_connection_pool().connect_options().get_filename())
            })
            .flatten()
            .map(Arc::new);
        let profiles = (db.get_database_backend() == sea_orm::DbBackend::Postgres)
            .then(|| Arc::new(crate::profiles::ProfileReads::new(db.clone(), None)));
        let searches = SearchSlots::new(default_search_slots(), SEARCH_SLOT_WAIT);
        let views = inline.is_some().then(|| views_connection(&db));
        Self {
            db,
            categories: Arc::default(),
            counts: None,
            inline,
            profiles,
            pipe: None,
            searches,
            views,
            import_turn: Arc::default(),
        }
    }

    /// Lets at most `slots` searches that run through the pool (on PostgreSQL text searches, and on
    /// both stores lists whose filters or order the indexes do not bound) run in the database at once;
    /// the others wait their turn, first come first served, for at most `wait`, then are answered
    /// "busy" (a 503). Each such search costs milliseconds of CPU: more at once than there are cores
    /// only shares those cores out, so every search ends later, and the reads and writes beside them
    /// queue behind them for the pool's connections and the CPU. Measured on 2 cores (100k listings):
    /// on PostgreSQL, with 32 connections searching, a profile read's p50 64 ms and p99 116 ms with
    /// every search let in, 5.0 and 17 ms with 3 slots; on SQLite, 16 connections of filtered word
    /// searches took every pooled connection, and new viewers' pages (each a write) fell from 2 600 to
    /// 22 a second (docs/BENCHMARKS.md). By default [`default_search_slots`] and [`SEARCH_SLOT_WAIT`].
    /// SQLite's text searches without a filter run on the calling thread and take no slot.
    #[must_use]
    pub fn with_search_slots(mut self, slots: usize, wait: Duration) -> Self {
        self.searches = SearchSlots::new(slots, wait);
        self
    }

    /// A slot for a search, held until the permit drops (see [`SeaOrmStore::with_search_slots`]).
    /// Unavailable (a 503) when none came free in time.
    pub(crate) async fn search_slot(&self) -> RepoResult<Option<tokio::sync::SemaphorePermit<'_>>> {
        use std::sync::atomic::Ordering;
        /// Counts a search as waiting until it has its slot, its time is up, or its request is dropped.
        struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        let s = &self.searches;
        s.waiting.fetch_add(1, Ordering::Relaxed);
        let waiting = Waiting(&s.waiting);
        let got = tokio::time::timeout(s.wait, s.slots.acquire()).await;
        drop(waiting);
        match got {
            Ok(Ok(permit)) => Ok(Some(permit)),
            // The semaphore is never closed.
            Ok(Err(_)) => Ok(None),
            Err(_) => {
                s.busy.fetch_add(1, Ordering::Relaxed);
                Err(RepoError::Unavailable(
                    format!("every search slot stayed taken for {} s", s.wait.as_secs_f64()).into(),
                ))
            }
        }
    }

    /// How the search slots are used now (see [`SeaOrmStore::with_search_slots`]).
    pub fn search_slot_stats(&self) -> SearchSlotStats {
        use std::sync::atomic::Ordering;
        let s = &self.searches;
        let as_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        SearchSlotStats {
            slots: as_u32(s.size),
            in_use: as_u32(s.size.saturating_sub(s.slots.available_permits())),
            waiting: as_u32(s.waiting.load(Ordering::Relaxed)),
            busy_total: s.busy.load(Ordering::Relaxed),
        }
    }

    /// Keeps the totals of paged reads (`COUNT(*)` over a search, a board, a week) for `ttl`, so a
    /// total over tens of thousands of rows is counted once per `ttl` per query, not per request; zero
    /// keeps them exact. Concurrent requests for one total count once.
    #[must_use]
    pub fn with_count_cache(mut self, ttl: Duration) -> Self {
        self.counts =
            (!ttl.is_zero()).then(|| moka::future::Cache::builder().max_capacity(10_000).time_to_live(ttl).build());
        self
    }

    /// On PostgreSQL, runs the short public reads on a few connections of their own to `url` (the
    /// pool's database), pipelined (see [`crate::pipe`]); the pool reads them where that cannot be.
    /// A no-op on SQLite, and where the pipe would carry in the clear what the pool encrypts to
    /// another machine.
    #[must_use]
    pub fn with_read_pipe(mut self, url: &str) -> Self {
        if self.backend() == DbBackend::Postgres {
            self.pipe = crate::pipe::PgPipe::for_url(url).map(Arc::new);
            // The profile readers read on the pipe's lanes, each thread's on its own.
            self.profiles = Some(Arc::new(crate::profiles::ProfileReads::new(self.db.clone(), self.pipe.clone())));
        }
        self
    }

    /// Whether short reads go through the pipe (see [`SeaOrmStore::with_read_pipe`]).
    pub fn has_read_pipe(&self) -> bool {
        self.pipe.is_some()
    }

    pub fn connection(&self) -> &DatabaseConnection {
        &self.db
    }

    pub fn backend(&self) -> DbBackend {
        self.db.get_database_backend()
    }

    /// How the connection pool is used now, for the operator's metrics.
    pub fn pool_stats(&self) -> PoolStats {
        fn of<DB: sea_orm::sqlx::Database>(pool: &sea_orm::sqlx::Pool<DB>) -> PoolStats {
            let open = pool.size();
            let idle = u32::try_from(pool.num_idle()).unwrap_or(open).min(open);
            PoolStats { open, idle, max: pool.options().get_max_connections() }
        }
        match self.backend() {
            DbBackend::Postgres => of(self.db.get_postgres_connection_pool()),
            _ => of(self.db.get_sqlite_connection_pool()),
        }
    }
}

/// Connections of the pool: open (idle or in use), idle, and the most it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    pub open: u32,
    pub idle: u32,
    pub max: u32,
}

#[derive(Debug, FromQueryResult)]
pub(crate) struct CountRow {
    pub(crate) n: i64,
}

impl crate::inline::FromSqliteRow for CountRow {
    fn from_sqlite(row: &rusqlite::Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
        crate::inline::from_sqlite_row!(row, at, Self { n })
    }
}

impl crate::pipe::FromPgRow for CountRow {
    fn from_pg(row: &tokio_postgres::Row, at: &mut usize) -> Result<Self, String> {
        crate::pipe::from_pg_row!(row, at, Self { n })
    }
}

impl SeaOrmStore {
    /// Runs a `SELECT COUNT(*) AS n …` statement (through the count cache when enabled).
    pub(crate) async fn count(&self, q: &RawQuery) -> RepoResult<u64> {
        self.count_via(q, false).await
    }

    /// [`SeaOrmStore::count`] of a count bounded by the index it walks (see [`SeaOrmStore::short_read`]).
    pub(crate) async fn count_short(&self, q: &RawQuery) -> RepoResult<u64> {
        self.count_via(q, true).await
    }

    async fn count_via(&self, q: &RawQuery, short: bool) -> RepoResult<u64> {
        let stmt = q.build();
        let run = |stmt: Statement| async move {
            let rows = if short {
                self.short_read::<CountRow>(stmt).await?
            } else {
                CountRow::find_by_statement(stmt).all(&self.db).await.map_err(repo_err)?
            };
            Ok::<u64, RepoError>(rows.first().map_or(0, |r| r.n).max(0) as u64)
        };
        let Some(cache) = &self.counts else { return run(stmt).await };
        let key = format!("{}\u{0}{:?}", stmt.sql, stmt.values);
        // The same kind of failure: an unreachable database stays a 503 through the shared count.
        cache.try_get_with(key, run(stmt)).await.map_err(|e| e.copied())
    }

    /// Every row of a short public read: on the calling thread when the store is a SQLite file (see
    /// [`crate::inline`]), on the read pipe on PostgreSQL (see [`crate::pipe`]), else — or when the
    /// file is locked, or no lane of the pipe can be had — through the pool.
    pub(crate) async fn short_read<T>(&self, stmt: Statement) -> RepoResult<Vec<T>>
    where
        T: FromQueryResult + crate::inline::FromSqliteRow + crate::pipe::FromPgRow,
    {
        self.short_read_or(stmt, |s| s).await
    }

    /// Every row of a page of a list (`stmt` ends with the page's `LIMIT … OFFSET …`): as a short read
    /// near the top, but through the pool in a search slot past [`SHORT_OFFSET`] rows, which the
    /// database walks before the page's own. On PostgreSQL eight connections asking for page 1 000
    /// (35–90 ms each) on the short reads' pipe took profile reads from a p99 of 2.7 to 18 ms.
    pub(crate) async fn paged_read<T>(&self, stmt: Statement, page: domain::paging::PageRequest) -> RepoResult<Vec<T>>
    where
        T: FromQueryResult + crate::inline::FromSqliteRow + crate::pipe::FromPgRow,
    {
        if page.offset() < SHORT_OFFSET {
            return self.short_read(stmt).await;
        }
        let _slot = self.search_slot().await?;
        T::find_by_statement(stmt).all(&self.db).await.map_err(repo_err)
    }

    /// [`SeaOrmStore::short_read`] of a statement that uses what only the inline readers have (the
    /// `listing_rank` function, see [`crate::inline`]): the pool runs `for_pool(stmt)` instead.
    pub(crate) async fn short_read_or<T>(
        &self,
        stmt: Statement,
        for_pool: impl FnOnce(Statement) -> Statement,
    ) -> RepoResult<Vec<T>>
    where
        T: FromQueryResult + crate::inline::FromSqliteRow + crate::pipe::FromPgRow,
    {
        if let Some(reader) = &self.inline
            && let crate::inline::Inline::Rows(rows) = reader.all(&stmt)?
        {
            return Ok(rows);
        }
        if let Some(pipe) = &self.pipe
            && let Some(rows) = pipe.all::<T>(&stmt.sql, stmt.values.as_ref().map_or(&[], |v| &v.0)).await
        {
            return Ok(rows);
        }
        T::find_by_statement(for_pool(stmt)).all(&self.db).await.map_err(repo_err)
    }

    /// Forgets the cached category tree (after this instance changed it).
    pub(crate) fn forget_categories(&self) {
        *self.categories.write().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

impl domain::ports::StoreCache for SeaOrmStore {
    /// Forgets everything this store keeps in memory (the category tree and the totals), after public
    /// data changed here or on another instance.
    fn forget_cached(&self) {
        self.forget_categories();
        if let Some(c) = &self.counts {
            c.invalidate_all();
        }
    }
}

#[derive(Debug, FromQueryResult)]
struct CounterRow {
    counter: i64,
}

impl SeaOrmStore {
    /// Runs a statement that returns the change counter.
    async fn change_counter(&self, sql: &str) -> RepoResult<i64> {
        let row = CounterRow::find_by_statement(Statement::from_string(self.backend(), sql))
            .one(&self.db)
            .await
            .map_err(repo_err)?;
        row.map(|r| r.counter).ok_or(RepoError::NotFound)
    }
}

#[async_trait::async_trait]
impl domain::ports::PublicChanges for SeaOrmStore {
    async fn note_public_change(&self, scope: &str) -> RepoResult<i64> {
        let counter = self
            .change_counter("UPDATE public_changes SET counter = counter + 1 WHERE id = 1 RETURNING counter")
            .await?;
        // The scope beside the count. Should this write fail, the other instances see a counter that
        // moved without a scope and empty their whole cache: never a stale entry.
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("INSERT INTO public_change_scopes (counter, scope) VALUES (")
            .bind(counter)
            .sql(", ")
            .bind(scope)
            .sql(")");
        self.db.execute_raw(q.build()).await.map_err(repo_err)?;
        if counter % 256 == 0 {
            let mut prune = crate::sql::RawQuery::new(self.backend());
            prune
                .sql("DELETE FROM public_change_scopes WHERE counter <= ")
                .bind(counter - domain::ports::REMEMBERED_CHANGES);
            self.db.execute_raw(prune.build()).await.map_err(repo_err)?;
        }
        Ok(counter)
    }

    async fn public_changes(&self) -> RepoResult<i64> {
        self.change_counter("SELECT counter FROM public_changes WHERE id = 1").await
    }

    async fn public_changes_since(&self, seen: i64, limit: u64) -> RepoResult<Vec<(i64, String)>> {
        #[derive(Debug, FromQueryResult)]
        struct Row {
            counter: i64,
            scope: String,
        }
        let mut q = crate::sql::RawQuery::new(self.backend());
        q.sql("SELECT counter, scope FROM public_change_scopes WHERE counter > ")
            .bind(seen)
            .sql(" ORDER BY counter LIMIT ")
            .bind(limit as i64);
        let rows = Row::find_by_statement(q.build()).all(&self.db).await.map_err(repo_err)?;
        Ok(rows.into_iter().map(|r| (r.counter, r.scope)).collect())
    }
}

/// Maps a database error to the port's error: uniqueness → Conflict, everything else → Unexpected.
pub(crate) fn repo_err(e: DbErr) -> RepoError {
    crate::db::note_if_connection_lost(&e);
    if crate::db::unreachable(&e) {
        return RepoError::Unavailable(Box::new(e));
    }
    match e.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(msg)) => RepoError::Conflict(msg),
        _ => RepoError::Unexpected(Box::new(e)),
    }
}

pub(crate) fn is_unique_violation(e: &DbErr) -> bool {
    matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}

/// One page of `q`'s rows, newest first (`created`, then `id`, descending), with the total count.
pub(crate) async fn newest_page<E>(
    db: &DatabaseConnection,
    q: sea_orm::Select<E>,
    created: E::Column,
    id: E::Column,
    page: domain::paging::PageRequest,
) -> RepoResult<(Vec<E::Model>, u64)>
where
    E: sea_orm::EntityTrait,
    E::Model: Sync,
{
    use sea_orm::{PaginatorTrait, QueryOrder, QuerySelect};
    let total = q.clone().count(db).await.map_err(repo_err)?;
    let rows = q
        .order_by_desc(created)
        .order_by_desc(id)
        .offset(page.offset())
        .limit(u64::from(page.per_page()))
        .all(db)
        .await
        .map_err(repo_err)?;
    Ok((rows, total))
}

/// Makes `user` an owner of `listing` with `role`, keeping an existing ownership (and its role) as it is.
pub(crate) async fn add_owner(
    txn: &sea_orm::DatabaseTransaction,
    listing: i64,
    user: i64,
    role: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> RepoResult<()> {
    use crate::entity::listing_owners;
    use sea_orm::ActiveValue::Set;
    use sea_orm::EntityTrait;
    use sea_orm::sea_query::OnConflict;
    listing_owners::Entity::insert(listing_owners::ActiveModel {
        listing_id: Set(listing),
        user_id: Set(user),
        role: Set(role.to_owned()),
        created_at: Set(now.into()),
    })
    .on_conflict(
        OnConflict::columns([listing_owners::Column::ListingId, listing_owners::Column::UserId])
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(txn)
    .await
    .map_err(repo_err)?;
    Ok(())
}

impl SeaOrmStore {
    /// Opens a transaction that will write. On SQLite it is `BEGIN IMMEDIATE`: it takes the write lock at
    /// once, waiting its turn (busy timeout), where a deferred transaction that reads before writing fails
    /// with SQLITE_BUSY_SNAPSHOT whenever another write lands in between. PostgreSQL ignores the mode.
    pub(crate) async fn begin_write(&self) -> RepoResult<sea_orm::DatabaseTransaction> {
        begin_immediate(&self.db).await
    }

    /// [`SeaOrmStore::begin_write`] for a batch of page views: on a SQLite file, on a connection kept
    /// for them alone.
    ///
    /// A SQLite connection that begins a transaction after another connection committed drops its
    /// whole mapping of the file and its page cache (WAL mode), and faults back in every page it
    /// then touches. Written on whichever pooled connection was free, each batch met the commits of
    /// the batches before it on other connections: under new viewers page faults and `munmap` were a
    /// quarter of the server's CPU (docs/BENCHMARKS.md). On one connection, a batch follows its own
    /// commits and keeps its pages mapped. (The pool's other writes and the readers still remap once
    /// after a batch, as before.)
    pub(crate) async fn begin_views_write(&self) -> RepoResult<sea_orm::DatabaseTransaction> {
        begin_immediate(self.views.as_ref().unwrap_or(&self.db)).await
    }
}

/// See [`SeaOrmStore::begin_write`].
async fn begin_immediate(db: &DatabaseConnection) -> RepoResult<sea_orm::DatabaseTransaction> {
    use sea_orm::TransactionTrait;
    let options = sea_orm::TransactionOptions {
        sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
        ..Default::default()
    };
    db.begin_with_options(options).await.map_err(repo_err)
}

/// A pool of one connection to the SQLite file of `db`, with its connections' settings, opened on
/// first use and kept open.
fn views_connection(db: &DatabaseConnection) -> DatabaseConnection {
    use sea_orm::sqlx::sqlite::SqlitePoolOptions;
    let pool = db.get_sqlite_connection_pool();
    let views = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .acquire_timeout(pool.options().get_acquire_timeout())
        .test_before_acquire(false)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_lazy_with((*pool.connect_options()).clone());
    sea_orm::SqlxSqliteConnector::from_sqlx_sqlite_pool(views)
}
