//! Short public reads of PostgreSQL, pipelined on a few shared connections.
//!
//! Through the pool, every read takes a connection for itself, sends one statement and waits for its
//! rows before the connection can serve anyone else: a backend process woken, run and put to sleep
//! again per statement, and as many backends wanting a core as there are reads at once. For a read of
//! a few rows that hand-off is most of the cost. On this project's 2-core benchmark machine
//! PostgreSQL alone ran the category counts' statement 50 000–62 000 times a second one at a time, and
//! 146 000 times a second sixteen to a pipeline (pgbench, docs/BENCHMARKS.md).
//!
//! Here a read is written to one of a few connections shared by every request (tokio-postgres's
//! client; one a core, see [`lanes`]): statements asked at once go out back to back and each gets its
//! own rows as they come, so a backend works through them without a round trip between. Nothing is
//! shared but the connection: each statement is its own, run after its request asked, and sees the
//! last committed state, as a read on the pool does. Writes, transactions and the reads whose cost
//! has no bound stay on the pool.
//!
//! A lane is opened on first use and again after it is lost. Whenever a lane cannot be had or a read
//! on it fails, the read goes to the pool, which answers as it always did (a lost database is a 503
//! there). These connections carry no TLS, so they are used only where the pool's would not protect
//! anything either: `sslmode=disable`, or a Unix socket or loopback address (see [`PgPipe::for_url`]).

use sea_orm::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

/// Connections reads are spread over: one a core, as many as the HTTP workers actix-web starts by
/// default, so each request thread reads on a lane of its own and a busy lane's statements go out
/// in deeper pipelines.
///
/// A lane's I/O runs on the thread that opened it (a task of that worker's runtime), so a read on
/// another thread's lane wakes that thread twice, to write the statement and to hand the rows back.
/// With every thread on every lane most reads did; with a lane of its own a thread's reads never wake
/// another (threads past the lanes, `--http-workers` above the cores, share them in turn). On two
/// 2-core benchmark machines, since the request threads run as `SCHED_BATCH`, one lane a thread served
/// the trending list faster than two a thread (of four) in ten alternated rounds of ten, the weekly
/// board and the category counts in eight, a profile and the all-time board alike (docs/BENCHMARKS.md,
/// seventy-first and seventy-second sittings); before `SCHED_BATCH` it had measured worse
/// (twenty-fifth sitting). At most [`MOST_LANES`].
fn lanes() -> usize {
    crate::db::cores().min(MOST_LANES)
}

/// The most lanes a pipe opens, whatever the cores: each is a connection beside the pool's (16 by
/// default), and instances sharing one PostgreSQL must stay under its `max_connections` (100 by
/// default), so a many-core machine's threads share eight lanes rather than open one each.
const MOST_LANES: usize = 8;

/// Pipes a thread keeps its place in before it forgets them all (a process has one store, so one
/// pipe, but tests make many).
const PLACES_KEPT: usize = 16;

/// A numbering of pipes, so a thread can keep its place in each.
static PIPES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's place in each pipe it has read on: the pipe's number, and the thread's place among
    /// the pipe's threads (first come, first placed), which names its lane.
    static PLACES: std::cell::RefCell<Vec<(usize, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Prepared statements a lane keeps. The short reads are a few dozen shapes, but a board's week is
/// written into its statement, so the set grows with the weeks asked for: at this many it starts
/// again (dropping a statement closes it on the server).
const MOST_STATEMENTS: usize = 256;

/// How long opening a lane may take before the read goes to the pool.
const CONNECT_WAIT: Duration = Duration::from_secs(2);

/// How long after a lane failed to open it is not tried again (its reads go to the pool): a database
/// that refuses these connections is not asked again at every read.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// A row type a pipelined read decodes: its fields from consecutive columns, the first at `*at`.
/// Types whose statements never run here keep the provided method, which refuses: a debug build
/// fails, a release build reads through the pool.
pub(crate) trait FromPgRow: Sized {
    fn from_pg(_row: &Row, _at: &mut usize) -> Result<Self, String> {
        Err(format!("{} is not read through the pipe", std::any::type_name::<Self>()))
    }
}

/// The value of the column at `*at`, which must be named `name`; moves `at` to the next column.
pub(crate) fn pg_column<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    at: &mut usize,
    name: &str,
) -> Result<T, String> {
    let i = *at;
    *at += 1;
    match row.columns().get(i) {
        Some(c) if c.name() == name => row.try_get(i).map_err(|e| format!("column {i} ({name}): {e}")),
        Some(c) => Err(format!("column {i} is {}, not {name}", c.name())),
        None => Err(format!("no column {i} ({name})")),
    }
}

/// The fields of a row type from consecutive columns named as the fields (see [`pg_column`]).
macro_rules! from_pg_row {
    ($row:ident, $at:ident, $ty:ident { $($field:ident),* $(,)? }) => {
        Ok($ty { $($field: $crate::pipe::pg_column($row, $at, stringify!($field))?),* })
    };
}
pub(crate) use from_pg_row;

/// One shared connection and the statements prepared on it.
struct Lane {
    client: Client,
    prepared: Mutex<HashMap<String, Statement>>,
}

/// A few connections to one PostgreSQL database that every short read shares (see the module).
pub(crate) struct PgPipe {
    config: Config,
    lanes: Vec<RwLock<Option<Arc<Lane>>>>,
    /// Held while a lane is being opened, so one request opens it and the others go to the pool; it
    /// holds when the lane last failed to open.
    opening: Vec<tokio::sync::Mutex<Option<std::time::Instant>>>,
    /// This pipe's number (see [`PLACES`]).
    id: usize,
    /// Threads that have read on this pipe: the next one's place.
    threads: AtomicUsize,
}

impl std::fmt::Debug for PgPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPipe").field("lanes", &self.lanes.len()).finish_non_exhaustive()
    }
}

impl PgPipe {
    /// A pipe to the database at `url`, or `None` where it would not be used: a URL tokio-postgres
    /// does not read, or one whose connections the pool would encrypt to another machine (TLS here
    /// would need the pool's trust settings, and these connections carry none).
    pub(crate) fn for_url(url: &str) -> Option<Self> {
        Self::for_url_with(url, |name| std::env::var(name).ok())
    }

    /// [`PgPipe::for_url`] with the environment read through `env`. The pool takes `PGSSLMODE`,
    /// `PGUSER` and `PGPASSWORD` where the URL leaves them out, and so does the pipe; tokio-postgres
    /// alone would not, and could connect in the clear where the pool requires TLS.
    fn for_url_with(url: &str, env: impl Fn(&str) -> Option<String>) -> Option<Self> {
        Self::with_lanes(url, env, lanes())
    }

    /// [`PgPipe::for_url_with`] with `lanes` connections (at least one).
    fn with_lanes(url: &str, env: impl Fn(&str) -> Option<String>, lanes: usize) -> Option<Self> {
        let lanes = lanes.max(1);
        let mut config: Config = url.parse().ok()?;
        if !url.contains("sslmode=") {
            match env("PGSSLMODE").as_deref() {
                None | Some("prefer") => {}
                Some("disable" | "allow") => {
                    config.ssl_mode(tokio_postgres::config::SslMode::Disable);
                }
                Some(_) => return None,
            }
        }
        if config.get_user().is_none()
            && let Some(user) = env("PGUSER")
        {
            config.user(user);
        }
        if config.get_password().is_none()
            && let Some(password) = env("PGPASSWORD")
        {
            config.password(password);
        }
        let mut options = config.get_options().unwrap_or_default().to_owned();
        if !options.contains("enable_memoize") {
            // The reads here are pages of distinct listings joined by key, where Memoize's cache never
            // hits and only costs: the weekly board's statement ran 19 800 times a second with it and
            // 27 500 without (pgbench, 100k, 4 clients).
            options.push_str(" -c enable_memoize=off");
        }
        if !options.contains("jit") {
            // As on the pool's connections (`crate::db::connect_with`).
            options.push_str(" -c jit=off");
        }
        if !options.contains("synchronize_seqscans") {
            // As on the pool's connections: every scan from the first block, and no parallel
            // workers, so a `LIMIT` without an order reads the same rows each time.
            options.push_str(" -c synchronize_seqscans=off");
        }
        if !options.contains("max_parallel_workers_per_gather") {
            options.push_str(" -c max_parallel_workers_per_gather=0");
        }
        if !options.contains("work_mem") {
            // As on the pool's connections: a bitmap of a common value stays exact.
            options.push_str(" -c work_mem=");
            options.push_str(crate::db::WORK_MEM);
        }
        config.options(options.trim_start());
        if config.get_application_name().is_none() {
            // So an operator tells these connections from the pool's in `pg_stat_activity`.
            config.application_name("launchdir read pipe");
        }
        let local = config.get_hosts().iter().all(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => crate::db::is_loopback_host(name),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(_) => true,
        }) && config.get_hostaddrs().iter().all(std::net::IpAddr::is_loopback);
        let plain = config.get_ssl_mode() == tokio_postgres::config::SslMode::Disable;
        if !(plain || local && config.get_ssl_mode() == tokio_postgres::config::SslMode::Prefer) {
            return None;
        }
        Some(Self {
            config,
            lanes: (0..lanes).map(|_| RwLock::new(None)).collect(),
            opening: (0..lanes).map(|_| tokio::sync::Mutex::new(None)).collect(),
            id: PIPES.fetch_add(1, Ordering::Relaxed),
            threads: AtomicUsize::new(0),
        })
    }

    /// Every row of `sql` with `values`, read on a lane; `None` when the pool should read it instead
    /// (no lane to be had, a value this does not carry, or the read failed). Debug builds fail on a
    /// row that does not decode or a statement PostgreSQL refuses, so every test that reads one
    /// through here shows it; a lost connection is expected and goes to the pool in every build.
    pub(crate) async fn all<T: FromPgRow>(&self, sql: &str, values: &[Value]) -> Option<Vec<T>> {
        let params = values.iter().map(param).collect::<Option<Vec<_>>>()?;
        let lane = self.lane().await?;
        let started = std::time::Instant::now();
        let rows = match lane.query(sql, &params).await {
            Ok(rows) => rows,
            Err(e) => {
                lane.forget(sql);
                let gone = lost(&e);
                debug_assert!(gone || stale(&e), "a pipelined read failed: {e} ({sql})");
                if gone {
                    // The server may have restarted: the pool's connections may be gone too.
                    crate::db::note_connection_lost();
                }
                tracing::debug!(error = %e, "a pipelined read failed; the pool reads it");
                return None;
            }
        };
        let elapsed = started.elapsed();
        if elapsed >= crate::db::SLOW_STATEMENT {
            tracing::info!(elapsed_ms = elapsed.as_millis() as u64, sql, "slow pipelined read");
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            match T::from_pg(row, &mut 0) {
                Ok(r) => out.push(r),
                Err(e) => {
                    debug_assert!(false, "a pipelined read's row does not decode: {e} ({sql})");
                    tracing::warn!(error = %e, "a pipelined read's row does not decode; the pool reads it");
                    return None;
                }
            }
        }
        Some(out)
    }

    /// How many lanes this pipe reads on.
    pub(crate) fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// The index of this thread's lane: the threads that read here are placed in the order they came,
    /// each on the lane of its place (past the last lane, the first again).
    pub(crate) fn lane_index(&self) -> usize {
        PLACES.with(|places| {
            let mut places = places.borrow_mut();
            let at = match places.iter().position(|(pipe, ..)| *pipe == self.id) {
                Some(at) => at,
                None => {
                    if places.len() >= PLACES_KEPT {
                        places.clear();
                    }
                    places.push((self.id, self.threads.fetch_add(1, Ordering::Relaxed)));
                    places.len() - 1
                }
            };
            places[at].1 % self.lanes.len()
        })
    }

    /// This thread's next lane, opened if it is not (or no longer) open; `None` while another request
    /// is opening it or when it cannot be opened.
    async fn lane(&self) -> Option<Arc<Lane>> {
        let i = self.lane_index();
        let current = self.lanes[i].read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        match current {
            Some(lane) if !lane.client.is_closed() => return Some(lane),
            // Lost while idle: the server may have restarted, and the pool's connections with it.
            Some(_) => crate::db::note_connection_lost(),
            None => {}
        }
        let mut opening = self.opening[i].try_lock().ok()?;
        if opening.is_some_and(|failed| failed.elapsed() < RETRY_AFTER) {
            return None;
        }
        let opened = match tokio::time::timeout(CONNECT_WAIT, self.config.connect(NoTls)).await {
            Ok(opened) => opened.map_err(|e| e.to_string()),
            Err(_) => Err(format!("no connection in {CONNECT_WAIT:?}")),
        };
        let (client, connection) = match opened {
            Ok(c) => c,
            Err(error) => {
                *opening = Some(std::time::Instant::now());
                tracing::warn!(%error, "a read lane to PostgreSQL could not be opened; the pool reads for a while");
                return None;
            }
        };
        *opening = None;
        // The connection's I/O runs as a task of the runtime that opened it; it ends when the
        // connection is lost or the lane dropped.
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "a read lane to PostgreSQL closed");
            }
        });
        let lane = Arc::new(Lane { client, prepared: Mutex::new(HashMap::new()) });
        *self.lanes[i].write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(lane.clone());
        Some(lane)
    }
}

impl Lane {
    /// The rows of `sql` with `params`, prepared on this lane first if it is not yet.
    async fn query(&self, sql: &str, params: &[Param]) -> Result<Vec<Row>, tokio_postgres::Error> {
        let statement = self.statement(sql, params).await?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|(v, _)| &**v as &(dyn ToSql + Sync)).collect();
        self.client.query(&statement, &refs).await
    }

    /// `sql` prepared on this lane, with the parameter types of its values (as the pool sends them,
    /// so PostgreSQL plans it alike).
    async fn statement(&self, sql: &str, params: &[Param]) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(sql) {
            return Ok(s.clone());
        }
        let types: Vec<Type> = params.iter().map(|(_, t)| t.clone()).collect();
        let statement = self.client.prepare_typed(sql, &types).await?;
        let mut prepared = self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if prepared.len() >= MOST_STATEMENTS {
            prepared.clear();
        }
        prepared.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Drops `sql`'s prepared statement after it failed, so the next read prepares it again (a table
    /// it reads may have changed shape under it).
    fn forget(&self, sql: &str) {
        self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(sql);
    }

    #[cfg(test)]
    fn prepared_count(&self) -> usize {
        self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }
}

/// Whether `e` is the connection lost or the server going away (as the pool tells it,
/// [`crate::db::session_ended`]).
fn lost(e: &tokio_postgres::Error) -> bool {
    e.is_closed()
        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
        || e.code().is_some_and(|c| crate::db::session_ended(c.code()))
}

/// Whether `e` is a prepared statement that no longer fits its tables (0A000, after a migration).
fn stale(e: &tokio_postgres::Error) -> bool {
    e.code().is_some_and(|c| c.code() == "0A000")
}

/// A statement's value and the type it is sent as.
type Param = (Box<dyn ToSql + Sync + Send>, Type);

/// `v` as a parameter, for the kinds of value short reads bind; `None` for any other.
fn param(v: &Value) -> Option<Param> {
    Some(match v {
        Value::Bool(b) => (Box::new(*b), Type::BOOL),
        Value::SmallInt(n) => (Box::new(*n), Type::INT2),
        Value::Int(n) => (Box::new(*n), Type::INT4),
        Value::BigInt(n) => (Box::new(*n), Type::INT8),
        Value::Double(n) => (Box::new(*n), Type::FLOAT8),
        Value::String(s) => (Box::new(s.clone()), Type::TEXT),
        Value::ChronoDate(d) => (Box::new(*d), Type::DATE),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::CountRow;

    #[test]
    fn the_pipe_is_used_only_where_it_carries_nothing_the_pool_would_encrypt() {
        let on = |url: &str| PgPipe::for_url(url).is_some();
        assert!(on("postgres://postgres@127.0.0.1:5432/db"), "loopback, TLS preferred");
        assert!(on("postgres://postgres@localhost/db"));
        assert!(on("postgres://postgres@[::1]:5432/db"));
        assert!(on("postgres://db.internal/db?sslmode=disable"), "another machine, TLS off by the operator");
        assert!(on("postgresql://u@%2Fvar%2Frun%2Fpostgresql/db"), "a Unix socket");
        assert!(!on("postgres://db.internal/db"), "another machine with TLS preferred: the pool's only");
        assert!(!on("postgres://10.0.0.5/db?sslmode=prefer"));
        assert!(!on("postgres://127.0.0.1/db?sslmode=require"), "TLS required");
        assert!(!on("postgres://127.0.0.1/db?sslmode=verify-full"), "a mode this does not read");
        assert!(!on("postgres://127.0.0.1/db?statement-cache-capacity=10"), "a parameter this does not read");
        assert!(!on("sqlite://x.db"));
    }

    /// Where the URL leaves them out, the pipe takes the TLS mode, user and password from the
    /// environment as the pool does: never in the clear where the pool requires TLS.
    #[test]
    fn the_environment_fills_in_what_the_url_leaves_out() {
        let with = |url: &str, vars: &'static [(&'static str, &'static str)]| {
            PgPipe::for_url_with(url, |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))
        };
        assert!(with("postgres://127.0.0.1/db", &[("PGSSLMODE", "require")]).is_none());
        assert!(with("postgres://127.0.0.1/db", &[("PGSSLMODE", "verify-full")]).is_none());
        assert!(with("postgres://db.internal/db", &[("PGSSLMODE", "disable")]).is_some(), "TLS off by the operator");
        assert!(
            with("postgres://db.internal/db?sslmode=prefer", &[("PGSSLMODE", "disable")]).is_none(),
            "the URL wins"
        );
        let pipe = with("postgres://127.0.0.1/db", &[("PGUSER", "reader"), ("PGPASSWORD", "secret")]).expect("a pipe");
        assert_eq!((pipe.config.get_user(), pipe.config.get_password()), (Some("reader"), Some(&b"secret"[..])));
        let own =
            with("postgres://me:mine@127.0.0.1/db", &[("PGUSER", "reader"), ("PGPASSWORD", "secret")]).expect("a pipe");
        assert_eq!((own.config.get_user(), own.config.get_password()), (Some("me"), Some(&b"mine"[..])));
    }

    /// A database that refuses the pipe's connections is not asked again at every read: each lane
    /// tries once, then its reads go to the pool for [`RETRY_AFTER`].
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lane_that_cannot_open_is_not_tried_at_every_read() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("an address").port();
        let tries = Arc::new(AtomicUsize::new(0));
        let counted = tries.clone();
        let refuser = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                drop(socket);
            }
        });
        let pipe = PgPipe::for_url(&format!("postgres://u@127.0.0.1:{port}/db")).expect("a loopback URL");
        let lanes = pipe.lanes.len();
        for _ in 0..(lanes * 10) {
            assert!(pipe.all::<CountRow>("SELECT CAST(1 AS BIGINT) AS n", &[]).await.is_none(), "the pool reads");
        }
        refuser.abort();
        let tries = tries.load(Ordering::SeqCst);
        assert!((1..=lanes).contains(&tries), "{tries} connections tried for {} reads", lanes * 10);
    }

    /// A pipe opens one lane a core, never none and never past [`MOST_LANES`] (each is a connection
    /// the operator counts against PostgreSQL's `max_connections`).
    #[test]
    fn a_pipe_has_one_lane_a_core_between_one_and_the_most() {
        let url = "postgres://u@127.0.0.1:5432/db";
        let pipe = PgPipe::for_url_with(url, |_| None).expect("a loopback URL");
        assert_eq!(pipe.lanes.len(), crate::db::cores().clamp(1, MOST_LANES));
        assert_eq!(PgPipe::with_lanes(url, |_| None, 0).expect("a loopback URL").lanes.len(), 1);
        assert_eq!(PgPipe::with_lanes(url, |_| None, 3).expect("a loopback URL").opening.len(), 3);
    }

    /// Each thread reads on a lane of its own, so a read wakes no other thread; a thread past the
    /// lanes (here the third of two) shares the first one's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_thread_reads_on_lanes_of_its_own() {
        use std::collections::BTreeSet;
        let Some(t) = test_support::postgres().await else { return };
        let pipe = Arc::new(PgPipe::with_lanes(&t.url, |_| None, 2).expect("a loopback database"));
        let (backends_tx, backends) = std::sync::mpsc::channel::<BTreeSet<i64>>();
        let mut threads = Vec::new();
        let mut seen = Vec::new();
        for _ in 0..3 {
            let (pipe, backends_tx) = (pipe.clone(), backends_tx.clone());
            let (end, ended) = tokio::sync::oneshot::channel::<()>();
            threads.push((
                end,
                std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
                    rt.block_on(async {
                        let mut own = BTreeSet::new();
                        for _ in 0..8 {
                            let sql = "SELECT CAST(pg_backend_pid() AS BIGINT) AS n";
                            let rows = pipe.all::<CountRow>(sql, &[]).await.expect("read on the pipe");
                            own.extend(rows.iter().map(|r| r.n));
                        }
                        backends_tx.send(own).expect("send");
                        // Runs this thread's lanes until the test ends (a lane's I/O is a task here).
                        let _ = ended.await;
                    });
                }),
            ));
            // One thread after another: each has its place before the next comes.
            seen.push(backends.recv().expect("a thread's backends"));
        }
        for (end, thread) in threads {
            let _ = end.send(());
            thread.join().expect("a reading thread");
        }
        assert_eq!(seen.iter().map(BTreeSet::len).collect::<Vec<_>>(), [1, 1, 1], "{seen:?}");
        assert!(seen[0].is_disjoint(&seen[1]), "the first two threads share no lane: {seen:?}");
        assert_eq!(seen[2], seen[0], "the third reads where the first does");
    }

    /// The statements a lane keeps stay bounded however many shapes are read (a board's week is part
    /// of its statement), and a read after the bound answers as before.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lane_keeps_a_bounded_number_of_statements() {
        let Some(t) = test_support::postgres().await else { return };
        let pipe = PgPipe::for_url(&t.url).expect("a loopback database");
        for i in 0..(MOST_STATEMENTS + 40) {
            let sql = format!("SELECT CAST({i} AS BIGINT) AS n");
            let rows = pipe.all::<CountRow>(&sql, &[]).await.expect("read on the pipe");
            assert_eq!(rows.iter().map(|r| r.n).collect::<Vec<_>>(), [i as i64]);
        }
        let kept: Vec<usize> = pipe
            .lanes
            .iter()
            .filter_map(|l| l.read().ok().and_then(|l| l.as_ref().map(|l| l.prepared_count())))
            .collect();
        assert!(!kept.is_empty() && kept.iter().all(|n| *n <= MOST_STATEMENTS), "{kept:?}");
        let values = [Value::BigInt(Some(7))];
        let rows = pipe.all::<CountRow>("SELECT $1 AS n", &values).await.expect("a bound value");
        assert_eq!(rows.iter().map(|r| r.n).collect::<Vec<_>>(), [7]);
    }

    /// The pipe's sessions plan without Memoize or parallel workers, compile nothing (JIT off), start
    /// every scan at a table's first block (no synchronized scans), and keep what the URL's own
    /// `options` set.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_pipe_plans_without_memoize_jit_parallel_workers_or_synchronized_scans_and_keeps_the_urls_options() {
        let Some(t) = test_support::postgres().await else { return };
        let sep = if t.url.contains('?') { '&' } else { '?' };
        let url = format!("{}{sep}options=-c%20work_mem%3D5MB", t.url);
        let pipe = PgPipe::for_url(&url).expect("a loopback database");
        let sql = "SELECT CAST((current_setting('enable_memoize') = 'off')::int * 10000 \
                   + (current_setting('jit') = 'off')::int * 1000 \
                   + (current_setting('synchronize_seqscans') = 'off')::int * 100 \
                   + (current_setting('max_parallel_workers_per_gather') = '0')::int * 10 \
                   + (current_setting('work_mem') = '5MB')::int AS BIGINT) AS n";
        let rows = pipe.all::<CountRow>(sql, &[]).await.expect("read on the pipe");
        assert_eq!(
            rows.iter().map(|r| r.n).collect::<Vec<_>>(),
            [11111],
            "memoize off (10000), jit off (1000), synchronized scans off (100), no parallel workers (10), \
             work_mem kept (1)"
        );
        let pipe = PgPipe::for_url(&t.url).expect("a loopback database");
        let sql = format!("SELECT CAST((current_setting('work_mem') = '{}')::int AS BIGINT) AS n", crate::db::WORK_MEM);
        let rows = pipe.all::<CountRow>(&sql, &[]).await.expect("read on the pipe");
        assert_eq!(rows.iter().map(|r| r.n).collect::<Vec<_>>(), [1], "the service's work_mem without the URL's");
    }
}
