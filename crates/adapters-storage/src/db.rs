//! Connecting to SQLite or PostgreSQL and bringing the schema up to date.

use crate::sql::RawQuery;
use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::postgres::PgSslMode;
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{ConnectOptions, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, TransactionTrait};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest a statement waits for a lock another connection holds before it gives up: SQLite's busy
/// timeout, and PostgreSQL's `lock_timeout` unless the URL's `options` set one. A statement that gives up
/// is [`RepoError::Unavailable`](domain::ports::RepoError) (a 503 with Retry-After), so a table an
/// operator's `ALTER TABLE` or a stuck transaction holds makes requests fail fast and retryable instead
/// of piling up without end. What waits on another instance by design (migrations, deferred index
/// builds, the search terms' refresh) waits without this bound.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// PostgreSQL's `work_mem` on the service's connections (the pool's and the read pipe's) unless the
/// URL's `options` set one: enough for a search's bitmap of a value on every page of a million
/// listings' search rows to stay exact (`connect_with`).
pub const WORK_MEM: &str = "16MB";

/// How long a statement waits for one of the pool's connections before it is answered "unavailable".
pub const CONNECTION_WAIT: Duration = Duration::from_secs(10);

/// Opens a pool for `url` (`sqlite://file.db?mode=rwc` or `postgres://…`) of the default size. SQLite
/// runs in WAL mode with a busy timeout so readers never block the writer and concurrent writers wait,
/// not fail.
pub async fn connect(url: &str) -> Result<DatabaseConnection, DbErr> {
    connect_with(url, None).await
}

/// A statement that ran this long is logged at info, on the pool and on the read pipe alike.
pub(crate) const SLOW_STATEMENT: Duration = Duration::from_secs(1);

/// [`connect`] with a pool of at most `max_connections` (`None`: 16 on PostgreSQL, 8 on SQLite).
///
/// On a small machine shared with PostgreSQL a smaller pool trades throughput for a shorter tail:
/// on 2 cores at 100k listings, 4 connections instead of 16 brought a common word's search p99 at 8
/// concurrent requests from 32 to 12–15 ms (mixed words: 37–42 to 18 ms) and cost a fifth of the
/// profile reads a second at 64 (docs/BENCHMARKS.md). Every backend is a process that wants a core
/// when it runs.
pub async fn connect_with(url: &str, max_connections: Option<u32>) -> Result<DatabaseConnection, DbErr> {
    let mut opts = ConnectOptions::new(url.to_owned());
    // Every statement at debug (`RUST_LOG=sqlx::query=debug` shows what a request runs), one over a
    // second at info: neither shows at the default level, so bulk loads and tests stay quiet.
    opts.sqlx_logging(true)
        .sqlx_logging_level(log::LevelFilter::Debug)
        .sqlx_slow_statements_logging_settings(log::LevelFilter::Info, SLOW_STATEMENT);
    opts.connect_timeout(Duration::from_secs(5)).acquire_timeout(CONNECTION_WAIT);
    if url.starts_with("sqlite:") {
        // A file has no server or proxy to drop a connection: no ping before each checkout (by default
        // every acquire pays one extra round trip to the connection's worker thread).
        opts.test_before_acquire(false);
        opts.max_connections(max_connections.unwrap_or(8)).min_connections(1).map_sqlx_sqlite_opts(|o| {
            o.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(LOCK_WAIT)
                .foreign_keys(true)
                // Reads map the file instead of copying pages through read(2); each connection keeps
                // 8 MiB of pages (the WAL's and written ones: mapped pages are not copied into it). 32 MiB
                // measured no faster on the 100k benchmark and put eight pooled connections' caches at a
                // quarter of a gigabyte of anonymous memory at 1M listings (issue 24).
                .pragma("mmap_size", "1073741824")
                .pragma("cache_size", "-8192")
                // Temporary data (sorts and temporary tables past their page cache, an index build's
                // sort of 29 million votes) goes to files, not memory, whatever the build's default:
                // set here, once per connection, because a connection cannot change it inside a
                // transaction once its temporary schema is open (an `ALTER TABLE … DROP COLUMN`,
                // migration 48, opens it), and the index builds asked for it inside one.
                .pragma("temp_store", "file")
        });
    } else {
        // Ping only connections idle long enough for a server, proxy or firewall to have dropped them,
        // or older than a connection this process saw lost; hot connections skip the extra round trip.
        // JIT off: the service's statements are short, and where the planner's estimate of one passes
        // `jit_above_cost` anyway (the capped count of founders behind live listings, priced per
        // founder's subquery) compiling it made it 168 ms instead of 69 (100k demo listings).
        // Synchronized sequential scans off: a search ranks the first candidates its scan hands out
        // (`LIMIT`, no order), and a scan of a table larger than a quarter of `shared_buffers` starts
        // where the last one stopped, so the same search gave another first page each time
        // (`q=workflow&stage=growing` at 100k listings) and its page 2 could repeat page 1. Off,
        // every scan starts at the first block. No parallel workers, for the same reason: the rows
        // of a `Gather` come in whichever order its workers finish (`q=s&status=upcoming`, eight
        // buckets appended in `listing_text_search`, changed its first page from one request to the
        // next), and every statement here is bounded, on a machine whose cores the server shares.
        // `work_mem` 16 MB (PostgreSQL's default is 4): a search of words with a value intersects two
        // bitmaps of `listing_search`, and one of a value on a sixth of a million listings (150 000
        // rows on most of the table's 94 000 pages) no longer fits in 4 MB, so it turned lossy and
        // every row of 7 400 pages was checked again against the words: the count of
        // `q=kanban&pricing_model=free` at a million listings took 394 ms, 43–78 exact. Every
        // statement here is bounded (pages, capped counts), so a connection's sorts and hashes stay
        // far below it; it is what a bitmap may hold before it loses its rows.
        // A setting the URL's `options` name (`lock_timeout`, any `jit` one, `synchronize_seqscans`,
        // `max_parallel_workers_per_gather`, `work_mem`) stays the URL's, and with it that setting's
        // effect.
        opts.map_sqlx_postgres_opts(|o| {
            // TLS preferred (the default) to this machine's own PostgreSQL protects nothing: loopback
            // traffic never leaves the host, and whoever can read it can read the database's files.
            // It costs every statement its encryption on both ends (rustls was a tenth of the server's
            // CPU in a search; a profile read ran 9–28 % faster without it). So a loopback host with
            // TLS only preferred connects in the clear, as the read pipe does (`crate::pipe`); TLS
            // asked for (`sslmode=require` or stricter, in the URL or `PGSSLMODE`) and every other
            // host keep it. (A Unix socket never had TLS.)
            let o = if matches!(o.get_ssl_mode(), PgSslMode::Prefer) && is_loopback_host(o.get_host()) {
                o.ssl_mode(PgSslMode::Disable)
            } else {
                o
            };
            let given = o.get_options().unwrap_or_default().to_owned();
            let mut ours = Vec::new();
            if !given.contains("lock_timeout") {
                ours.push(("lock_timeout", format!("{}ms", LOCK_WAIT.as_millis())));
            }
            if !given.contains("jit") {
                ours.push(("jit", "off".to_owned()));
            }
            if !given.contains("synchronize_seqscans") {
                ours.push(("synchronize_seqscans", "off".to_owned()));
            }
            if !given.contains("max_parallel_workers_per_gather") {
                ours.push(("max_parallel_workers_per_gather", "0".to_owned()));
            }
            if !given.contains("work_mem") {
                ours.push(("work_mem", WORK_MEM.to_owned()));
            }
            o.options(ours)
        });
        opts.max_connections(max_connections.unwrap_or(16))
            .min_connections(1)
            .test_before_acquire_if_idle_for(Duration::from_secs(30))
            .map_sqlx_postgres_before_acquire(|conn, meta| {
                Box::pin(async move {
                    if !lost_since(meta.age) {
                        return Ok(true);
                    }
                    // A dead connection is dropped here and the pool opens or picks another.
                    Ok(sea_orm::sqlx::Connection::ping(conn).await.is_ok())
                })
            });
    }
    sea_orm::Database::connect(opts).await
}

/// Whether a PostgreSQL host names this machine over TCP: `localhost` or a loopback address.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// When this process last saw a connection to PostgreSQL lost, in milliseconds since [`clock`]'s
/// start (0: never).
///
/// A pooled connection goes back to the pool without a ping (the patch in `vendor/`), and a hot one is
/// not pinged before use either, so a connection the server closed — a restart, a failover, an idle
/// timeout — would go back and fail every statement it was given, for as long as it stayed hot: after a
/// PostgreSQL restart, every request failed until the service was restarted too. Each lost connection
/// seen is noted here ([`note_if_connection_lost`]); for a minute after, a connection opened before
/// it is pinged before use and replaced if dead. A connection from before that is first used later
/// has been idle over 30 s and is pinged anyway.
static LOST_AT_MS: AtomicU64 = AtomicU64::new(0);

/// How long after a lost connection older connections are pinged before use.
const LOST_WINDOW: Duration = Duration::from_secs(60);

/// Milliseconds since this process first asked, from 1 (0 is "never" in [`LOST_AT_MS`]).
fn clock() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// The cores this process may use (2 where the system does not say): the search slots and the read
/// pipe's lanes are counted in them, as actix-web counts its default HTTP workers.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
}

/// Whether `e` says a connection to the database was lost — its socket failed or closed, the
/// protocol lost its place, or the server ended the session (SQLSTATE class 57P, "operator
/// intervention": a shutdown or restart; class 08, a connection exception) — not that a statement was
/// refused.
pub(crate) fn connection_lost(e: &DbErr) -> bool {
    use sea_orm::{RuntimeErr, SqlxError};
    let (DbErr::Conn(RuntimeErr::SqlxError(e))
    | DbErr::Exec(RuntimeErr::SqlxError(e))
    | DbErr::Query(RuntimeErr::SqlxError(e))) = e
    else {
        return false;
    };
    match &**e {
        SqlxError::Io(_) | SqlxError::Tls(_) | SqlxError::Protocol(_) => true,
        SqlxError::Database(d) => d.code().is_some_and(|c| session_ended(&c)),
        _ => false,
    }
}

/// Whether SQLSTATE `code` says the server ended the session or the connection failed (classes 57P,
/// "operator intervention": a shutdown or restart; 08, a connection exception).
pub(crate) fn session_ended(code: &str) -> bool {
    code.starts_with("57P") || code.starts_with("08")
}

/// Whether `e` says the database could not be reached: a connection lost ([`connection_lost`]) or
/// none to be had from the pool in time (every attempt to open one failed, or all stayed busy).
pub(crate) fn unreachable(e: &DbErr) -> bool {
    connection_lost(e) || matches!(e, DbErr::ConnectionAcquire(_)) || gave_up(e)
}

/// Lifts [`LOCK_WAIT`] for the rest of PostgreSQL transaction `txn`: for work that waits on another
/// instance's by design (a migration, an index build, the search terms' refresh), however long that
/// runs. A no-op on SQLite, whose writers wait in `BEGIN IMMEDIATE` with the busy timeout.
pub(crate) async fn unbounded_lock_wait(txn: &sea_orm::DatabaseTransaction) -> Result<(), DbErr> {
    if txn.get_database_backend() == DbBackend::Postgres {
        txn.execute_unprepared("SET LOCAL lock_timeout = 0").await?;
    }
    Ok(())
}

/// Whether `e` says a statement gave up and may well succeed if tried again: a lock not had within
/// [`LOCK_WAIT`] (SQLite's `SQLITE_BUSY` and `SQLITE_LOCKED` with their extended codes; PostgreSQL's
/// `lock_not_available`), a deadlock or serialization failure PostgreSQL broke by cancelling this side,
/// or a statement cancelled by a `statement_timeout` an operator set.
fn gave_up(e: &DbErr) -> bool {
    use sea_orm::{RuntimeErr, SqlxError};
    let (DbErr::Conn(RuntimeErr::SqlxError(e))
    | DbErr::Exec(RuntimeErr::SqlxError(e))
    | DbErr::Query(RuntimeErr::SqlxError(e))) = e
    else {
        return false;
    };
    let SqlxError::Database(d) = &**e else { return false };
    let Some(code) = d.code() else { return false };
    match d.try_downcast_ref::<sea_orm::sqlx::sqlite::SqliteError>() {
        Some(_) => code.parse::<i32>().is_ok_and(|c| matches!(c & 0xff, 5 | 6)),
        None => matches!(&*code, "55P03" | "40P01" | "40001" | "57014"),
    }
}

/// Notes `e` if it says a connection was lost (see [`LOST_AT_MS`]).
pub(crate) fn note_if_connection_lost(e: &DbErr) {
    if connection_lost(e) {
        note_connection_lost();
    }
}

/// Notes that a connection to the database was lost now (one of the read pipe's, see
/// [`crate::pipe`]): the pool's older connections are pinged before use for a while.
pub(crate) fn note_connection_lost() {
    LOST_AT_MS.store(clock(), Ordering::Relaxed);
}

/// Whether a connection of this `age` was opened before a connection was lost within [`LOST_WINDOW`].
fn lost_since(age: Duration) -> bool {
    let lost = LOST_AT_MS.load(Ordering::Relaxed);
    if lost == 0 {
        return false;
    }
    let since = Duration::from_millis(clock().saturating_sub(lost));
    since < LOST_WINDOW && age >= since
}

/// Applies every pending migration. Safe to run from several instances at once on PostgreSQL: they
/// run inside one transaction holding a transaction-scoped advisory lock, so one instance migrates
/// while the others wait and then find nothing to do. (A session-level lock would be wrong here: taken
/// and released through a pool, lock and unlock can land on different connections and the lock is
/// never released.) On SQLite too the pending migrations run in one transaction: sea-orm-migration runs
/// SQLite's without one, so a start stopped between a migration's statements (Ctrl-C during the first
/// start) left a column added but the migration unrecorded, and every later start failed on it
/// ("duplicate column name"). SQLite's schema changes are transactional; none of ours needs to run
/// outside a transaction (no `PRAGMA foreign_keys`, no `VACUUM`).
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    let txn = db.begin().await?;
    if db.get_database_backend() == DbBackend::Postgres {
        unbounded_lock_wait(&txn).await?;
        txn.execute_unprepared("SELECT pg_advisory_xact_lock(7262021)").await?;
    }
    Migrator::up(&txn, None).await?;
    txn.commit().await?;
    // A bulk load that was interrupted left its indexes unbuilt: build them before serving.
    let built = build_deferred_indexes(db).await?;
    if built > 0 {
        tracing::warn!(built, "built the indexes an interrupted bulk load had put off");
    }
    Ok(())
}

#[derive(Debug, sea_orm::FromQueryResult)]
struct IndexDefinition {
    name: String,
    definition: String,
}

/// Drops every non-unique index of the schema and keeps the statement that creates it in
/// `deferred_indexes`, in one transaction, so a bulk load writes its rows without updating indexes in
/// random order batch after batch; [`build_deferred_indexes`] builds each once afterwards. Unique indexes
/// and keys stay (they guard the data, and the load writes them in key order).
pub async fn defer_indexes(db: &DatabaseConnection) -> Result<usize, DbErr> {
    let list = match db.get_database_backend() {
        DbBackend::Sqlite => {
            "SELECT name, sql AS definition FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL \
             AND sql NOT LIKE 'CREATE UNIQUE%'"
        }
        _ => {
            "SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = current_schema() \
             AND indexdef NOT LIKE 'CREATE UNIQUE%'"
        }
    };
    let backend = db.get_database_backend();
    let txn = db.begin().await?;
    let found = <IndexDefinition as sea_orm::FromQueryResult>::find_by_statement(sea_orm::Statement::from_string(
        backend, list,
    ))
    .all(&txn)
    .await?;
    for ix in &found {
        let mut keep = RawQuery::new(backend);
        keep.sql("INSERT INTO deferred_indexes (name, definition) VALUES (")
            .bind(ix.name.clone())
            .sql(", ")
            .bind(ix.definition.clone())
            .sql(")");
        txn.execute_raw(keep.build()).await?;
        txn.execute_unprepared(&format!("DROP INDEX \"{}\"", ix.name.replace('"', "\"\""))).await?;
    }
    // The kept details stop following their tables while the row is here (their refreshes would read
    // tables without their indexes) and are rebuilt from them after the indexes.
    let mut rebuild = RawQuery::new(backend);
    rebuild
        .sql("INSERT INTO deferred_indexes (name, definition) VALUES (")
        .bind(migration::LISTING_DETAILS_REBUILD)
        .sql(", ")
        .bind(migration::listing_details_rebuild())
        .sql(")");
    txn.execute_raw(rebuild.build()).await?;
    txn.commit().await?;
    Ok(found.len())
}

/// After a bulk load on PostgreSQL: rewrites the tables of kept counts and gathers the planner's
/// statistics. The load moved their few rows many times through the triggers (each listing made live
/// its categories' `live_listings` and its status's `listing_counts`, each first vote of a listing in a
/// week its `week_counts`, each listing entering a board its `board_counts`, each searchable listing
/// the change count in `listing_terms_state`), and PostgreSQL keeps each old row version until a
/// vacuum: after 20 000 listings the 41 rows of `categories` filled 18 MB,
/// which every category list and every kept total then read in full (1.8 ms a read at 20 000 listings,
/// measured with EXPLAIN). SQLite updates rows in place; there the full-text index is merged into one
/// segment instead: a load leaves it in the many segments of its batches, and a search reads each
/// term in every segment (at a million listings, 8 connections: a rare word's search 178 → 274 req/s,
/// a common word's 697 → 920, after a merge of 4 s).
pub async fn compact_after_bulk_load(db: &DatabaseConnection) -> Result<(), DbErr> {
    match db.get_database_backend() {
        DbBackend::Postgres => {
            db.execute_unprepared(
                "VACUUM (FULL, ANALYZE) categories, listing_counts, listing_value_counts, week_listing_counts, \
                 day_listing_counts, week_counts, board_counts, listing_terms_state",
            )
            .await?;
            db.execute_unprepared("ANALYZE").await?;
        }
        _ => {
            db.execute_unprepared("INSERT INTO listings_fts (listings_fts) VALUES ('optimize')").await?;
        }
    }
    Ok(())
}

/// Builds the indexes [`defer_indexes`] put off (each in its own transaction with the removal of its
/// row, so a build that stops half-way is resumed, never repeated), then rebuilds the listings' kept
/// details if the load put them off too. Returns how many were built.
pub async fn build_deferred_indexes(db: &DatabaseConnection) -> Result<usize, DbErr> {
    let backend = db.get_database_backend();
    let pending = <IndexDefinition as sea_orm::FromQueryResult>::find_by_statement(sea_orm::Statement::from_string(
        backend,
        "SELECT name, definition FROM deferred_indexes ORDER BY name",
    ))
    .all(db)
    .await?;
    // PostgreSQL builds in two lanes, every other index in each (a build's lock lets another build on
    // the same table proceed): at a million listings eight of the largest took 38 s one after another
    // and 29 s in two lanes. SQLite has one writer.
    // The details' rebuild (migration 36) comes after every index: it reads the tables by them.
    let (details, pending): (Vec<_>, Vec<_>) =
        pending.into_iter().partition(|ix| ix.name == migration::LISTING_DETAILS_REBUILD);
    let pending = &pending;
    let lane = |first: usize, step: usize| async move {
        let mut built = 0;
        for ix in pending.iter().skip(first).step_by(step) {
            built += usize::from(build_deferred_index(db, ix).await?);
        }
        Ok::<usize, DbErr>(built)
    };
    let built = if backend == DbBackend::Postgres {
        let (a, b) = futures::future::try_join(lane(0, 2), lane(1, 2)).await?;
        a + b
    } else {
        lane(0, 1).await?
    };
    let mut rebuilt = 0;
    for d in &details {
        rebuilt += usize::from(build_deferred_index(db, d).await?);
    }
    Ok(built + rebuilt)
}

/// Builds one index [`defer_indexes`] put off and removes its row, in one transaction; does nothing (and
/// returns false) when the row is gone. Instances that start together after an interrupted load each run this for every
/// row they read: the first to hold the index's lock (PostgreSQL: an advisory lock on its name; SQLite:
/// the write lock, taken as the transaction begins) builds it, and the others then find no row.
async fn build_deferred_index(db: &DatabaseConnection, ix: &IndexDefinition) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let started = std::time::Instant::now();
    let options = sea_orm::TransactionOptions {
        sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
        ..Default::default()
    };
    let txn = db.begin_with_options(options).await?;
    if backend == DbBackend::Postgres {
        unbounded_lock_wait(&txn).await?;
        let mut lock = RawQuery::new(backend);
        lock.sql("SELECT pg_advisory_xact_lock(7262022, hashtext(").bind(ix.name.clone()).sql("))");
        txn.execute_raw(lock.build()).await?;
    }
    let mut still = RawQuery::new(backend);
    still.sql("SELECT COUNT(*) AS n FROM deferred_indexes WHERE name = ").bind(ix.name.clone());
    let left = txn.query_one_raw(still.build()).await?.map(|r| r.try_get::<i64>("", "n")).transpose()?;
    if left.unwrap_or(0) == 0 {
        txn.commit().await?;
        return Ok(false);
    }
    if backend == DbBackend::Sqlite {
        // The sort goes through temporary files, not memory (`temp_store` is set on every connection,
        // see `connect`): sorting 29 million votes must not take a gigabyte.
        // Read the schema first: a pooled connection that last saw this index before another
        // connection dropped it parses CREATE INDEX against its stale copy ("already exists")
        // unless a statement has checked the schema cookie inside this transaction.
        txn.execute_unprepared("SELECT COUNT(*) FROM sqlite_master").await?;
    }
    if backend == DbBackend::Postgres && ix.name == migration::LISTING_DETAILS_REBUILD {
        // The kept details in two lanes, half the listings on this connection and half on another:
        // one statement keeps one core busy (at a million listings 44.5 s of a 500 s load). A lane that
        // commits before the other fails is rebuilt again with it at the next start (the row stays).
        let other = async {
            let lane = db.begin().await?;
            unbounded_lock_wait(&lane).await?;
            lane.execute_unprepared(&migration::listing_details_rebuild_lane(1, 2)).await?;
            lane.commit().await
        };
        futures::future::try_join(txn.execute_unprepared(&migration::listing_details_rebuild_lane(0, 2)), other)
            .await?;
    } else if backend == DbBackend::Sqlite {
        // SQLite sorts the keys with a helper thread beside the connection's own (`PRAGMA threads`; its
        // default is none), for this build only: the connection goes back to the pool as it came,
        // whether or not the build succeeded. At a million listings the indexes a bulk load puts off
        // took 56.7–78.0 s to build without a helper and 43.3–45.7 s with one (the votes' `created_at`
        // index 22.6–27.2 s and 16.5–18.0 s); in the `sqlite3` shell two helpers sorted that index
        // more slowly than one on two cores (docs/BENCHMARKS.md, fifty-seventh sitting).
        txn.execute_unprepared("PRAGMA threads = 1").await?;
        let built = txn.execute_unprepared(&ix.definition).await;
        let reset = txn.execute_unprepared("PRAGMA threads = 0").await;
        built?;
        reset?;
    } else {
        txn.execute_unprepared(&ix.definition).await?;
    }
    let mut done = RawQuery::new(backend);
    done.sql("DELETE FROM deferred_indexes WHERE name = ").bind(ix.name.clone());
    txn.execute_raw(done.build()).await?;
    txn.commit().await?;
    tracing::info!(index = %ix.name, ms = started.elapsed().as_millis() as u64, "index built");
    Ok(true)
}

/// Migrations not yet applied; `/readyz` reports not ready while any remain.
pub async fn pending_migrations(db: &DatabaseConnection) -> Result<usize, DbErr> {
    Ok(Migrator::get_pending_migrations(db).await?.len())
}

/// A trivial round trip, for readiness.
pub async fn ping(db: &DatabaseConnection) -> Result<(), DbErr> {
    db.ping().await.inspect_err(note_if_connection_lost)
}

/// Why a backup was not written.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{0} exists already; choose a new file (a backup never overwrites one)")]
    Exists(String),
    #[error(
        "admin backup copies SQLite databases; for PostgreSQL run pg_dump --format=custom --file=launchdir.dump \"$DATABASE_URL\" (docs/OPERATIONS.md)"
    )]
    NotSqlite,
    #[error("the backup failed: {0}")]
    Failed(#[from] DbErr),
}

/// Writes a consistent copy of a SQLite database to `path` with `VACUUM INTO`, while the service keeps
/// serving (readers and the writer are not stopped; the copy is one read transaction's snapshot, already
/// compacted). Refuses a path that exists and a PostgreSQL database.
pub async fn backup(db: &DatabaseConnection, path: &std::path::Path) -> Result<(), BackupError> {
    if db.get_database_backend() != DbBackend::Sqlite {
        return Err(BackupError::NotSqlite);
    }
    if path.exists() {
        return Err(BackupError::Exists(path.display().to_string()));
    }
    let target = path.to_string_lossy().replace('\'', "''");
    db.execute_unprepared(&format!("VACUUM INTO '{target}'")).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn threads(db: &DatabaseConnection, pragma: &str) -> i64 {
        let row = db.query_one_raw(sea_orm::Statement::from_string(DbBackend::Sqlite, pragma)).await.unwrap().unwrap();
        row.try_get_by_index(0).unwrap()
    }

    /// SQLite builds an index a bulk load put off with a helper thread for its sort (this build of
    /// SQLite has one to give: a build without helper threads answers 0), and the connection that
    /// built it goes back to the pool without one. The pool has one connection, so every statement
    /// here runs on the one that built the indexes.
    #[tokio::test]
    async fn sqlite_sorts_a_put_off_index_with_a_helper_and_the_connection_goes_back_without_it() {
        let t = test_support::sqlite();
        let db = connect_with(&t.url, Some(1)).await.unwrap();
        migrate(&db).await.unwrap();
        assert_eq!(threads(&db, "PRAGMA threads = 1").await, 1, "SQLite may sort with a helper thread");
        assert_eq!(threads(&db, "PRAGMA threads = 0").await, 0);
        let put_off = defer_indexes(&db).await.unwrap();
        assert!(put_off >= 20, "{put_off} indexes put off");
        assert_eq!(build_deferred_indexes(&db).await.unwrap(), put_off + 1, "every index, and the kept details");
        assert_eq!(threads(&db, "PRAGMA threads").await, 0, "no helper left on the pooled connection");
    }
}
