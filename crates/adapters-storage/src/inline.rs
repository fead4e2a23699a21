//! Short public reads of a SQLite file, run on the calling thread.
//!
//! sqlx gives each SQLite connection its own thread: a statement is sent to it and its rows come back
//! through channels, and each way is a thread wake-up. For a read of 50 µs that hand-off was most of
//! the cost (perf on the 100k benchmark: about two thirds of the server's CPU was in the connections'
//! threads, most of it in the kernel switching between threads). The reads of a page, a board or a
//! profile — bounded, indexed, well under a millisecond — run here instead, on a small set of
//! read-only connections to the same file, without leaving the thread. Writes, transactions and the
//! reads whose cost has no bound (a filtered list, a sitemap slice, the operator's reports) stay on the
//! sea-orm pool.
//!
//! WAL mode lets these readers run beside the pool's writer; each statement sees the last committed
//! state, as a read on the pool does. A reader waits at most [`BUSY_WAIT`] for a lock (WAL readers meet
//! one only in rare moments: recovery after a crash, another process holding the file exclusively);
//! then the read goes to the pool, whose threads can wait without holding up this one. An in-memory
//! database has no file to share: reads stay on the pool there.
//!
//! These connections also rank searches with [`LISTING_RANK`], a function registered on each; a read
//! that uses it gives the pool a statement with bm25 instead (`SeaOrmStore::short_read_or`).

use domain::ports::{RepoError, RepoResult};
use rusqlite::{Connection, OpenFlags, Row};
use sea_orm::{Statement, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// A row type a short read decodes from a SQLite row: its fields from consecutive columns, the first
/// at `*at` (moved past the last). By position, not by name: looking each field's column up by name
/// was a sixth of an uncached profile's CPU (57 columns, each lookup a scan of the names). Debug
/// builds check each column's name, so a statement whose columns are not in the row's order fails
/// every test that reads it.
pub(crate) trait FromSqliteRow: Sized {
    fn from_sqlite(row: &Row<'_>, at: &mut usize) -> rusqlite::Result<Self>;
}

/// The value of the column at `*at`, which must be named `name`; moves `at` to the next column.
pub(crate) fn column<T: rusqlite::types::FromSql>(row: &Row<'_>, at: &mut usize, name: &str) -> rusqlite::Result<T> {
    let i = *at;
    *at += 1;
    debug_assert_eq!(row.as_ref().column_name(i).ok(), Some(name), "column {i} of {:?}", row.as_ref().expanded_sql());
    row.get(i)
}

/// Read-only connections to one SQLite file, opened on demand and kept for reuse.
pub(crate) struct InlineReader {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

/// Idle connections kept: one per thread that reads at once (actix runs one worker per core).
const MAX_IDLE: usize = 8;

/// How long a read here waits for a lock before the pool takes it over.
pub(crate) const BUSY_WAIT: Duration = Duration::from_millis(50);

/// What a read here gives: the rows, or that the file was locked (the caller reads through the pool).
pub(crate) enum Inline<T> {
    Rows(Vec<T>),
    Busy,
}

/// The ranking function these connections have and the pool's do not: bm25, with each term's
/// listing count read from `listing_terms` (migration 32) instead of counted in the index at every
/// search, and each row's length from the `listings_fts_docsize` record the statement joins, its
/// first argument (see the `fts5-rank` crate). The pool ranks with bm25 itself.
pub(crate) const LISTING_RANK: &str = "listing_rank";

/// The term the full-text index matches for a one-word query, as it spells it (stemmed): these
/// connections have it and the pool's do not (see `fts5_rank::register_query_term`).
pub(crate) const QUERY_TERM: &str = "listing_query_term";

/// Prepared statements each connection keeps (the ported reads are about a dozen shapes).
const STATEMENT_CACHE: usize = 64;

impl std::fmt::Debug for InlineReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InlineReader").field("path", &self.path).finish_non_exhaustive()
    }
}

impl InlineReader {
    /// A reader for the database file at `path`; `None` for an in-memory database (sqlx names those
    /// `file:sqlx-in-memory-N`, a URI: nothing on disk to share) or any other URI name.
    pub(crate) fn for_file(path: &Path) -> Option<Self> {
        let name = path.to_string_lossy();
        if name.is_empty() || name.starts_with(':') || name.starts_with("file:") {
            return None;
        }
        Some(Self { path: path.to_owned(), idle: Mutex::new(Vec::new()) })
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        // Opened read-write (a read-only connection cannot recover the WAL index after a crash) and
        // then made query-only: nothing written through here.
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_WAIT)?;
        // The same page budget as the pool's connections (db.rs).
        conn.execute_batch("PRAGMA query_only = 1; PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -8192;")?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        fts5_rank::register_sized(&conn, LISTING_RANK, "SELECT docs FROM listing_terms WHERE term = ?1")?;
        fts5_rank::register_query_term(&conn, QUERY_TERM)?;
        Ok(conn)
    }

    /// Every row of `stmt`, decoded as `T` (or [`Inline::Busy`]).
    pub(crate) fn all<T: FromSqliteRow>(&self, stmt: &Statement) -> RepoResult<Inline<T>> {
        let conn = self.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
        let conn = match conn {
            Some(c) => c,
            None => match self.open() {
                Ok(c) => c,
                Err(e) if is_busy(&e) => return Ok(Inline::Busy),
                Err(e) => return Err(fault(e)),
            },
        };
        let rows = match run(&conn, stmt) {
            Err(Failed::Busy) => return Ok(Inline::Busy),
            Err(Failed::Other(e)) => Err(e),
            Ok(rows) => Ok(Inline::Rows(rows)),
        };
        // A connection is kept unless its read failed (it may be what failed).
        if rows.is_ok() {
            let mut idle = self.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if idle.len() < MAX_IDLE {
                idle.push(conn);
            }
        }
        rows
    }
}

/// Why a read here did not give rows.
enum Failed {
    Busy,
    Other(RepoError),
}

impl From<rusqlite::Error> for Failed {
    fn from(e: rusqlite::Error) -> Self {
        if is_busy(&e) { Self::Busy } else { Self::Other(fault(e)) }
    }
}

impl From<RepoError> for Failed {
    fn from(e: RepoError) -> Self {
        Self::Other(e)
    }
}

fn run<T: FromSqliteRow>(conn: &Connection, stmt: &Statement) -> Result<Vec<T>, Failed> {
    let mut prepared = conn.prepare_cached(&stmt.sql)?;
    let values = stmt.values.as_ref().map(|v| v.0.as_slice()).unwrap_or_default();
    for (i, v) in values.iter().enumerate() {
        prepared.raw_bind_parameter(i + 1, to_sqlite(v)?)?;
    }
    let mut rows = prepared.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(T::from_sqlite(row, &mut 0)?);
    }
    Ok(out)
}

/// SQLite's "the file is locked": another connection holds a lock this one would wait for.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// A bound value as the pool's driver (sqlx) writes it to SQLite, so a comparison with stored text
/// (dates) means the same on both paths.
fn to_sqlite(v: &Value) -> RepoResult<rusqlite::types::Value> {
    use rusqlite::types::Value as S;
    Ok(match v {
        Value::Bool(b) => b.map_or(S::Null, |b| S::Integer(i64::from(b))),
        Value::TinyInt(n) => n.map_or(S::Null, |n| S::Integer(i64::from(n))),
        Value::SmallInt(n) => n.map_or(S::Null, |n| S::Integer(i64::from(n))),
        Value::Int(n) => n.map_or(S::Null, |n| S::Integer(i64::from(n))),
        Value::BigInt(n) => n.map_or(S::Null, S::Integer),
        Value::Double(n) => n.map_or(S::Null, S::Real),
        Value::String(s) => s.as_ref().map_or(S::Null, |s| S::Text(s.to_string())),
        Value::ChronoDate(d) => d.as_ref().map_or(S::Null, |d| S::Text(d.to_string())),
        Value::ChronoDateTimeWithTimeZone(t) => {
            t.as_ref().map_or(S::Null, |t| S::Text(t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)))
        }
        Value::ChronoDateTimeUtc(t) => {
            t.as_ref().map_or(S::Null, |t| S::Text(t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)))
        }
        other => return Err(RepoError::Unexpected(format!("no inline SQLite binding for {other:?}").into())),
    })
}

fn fault(e: rusqlite::Error) -> RepoError {
    RepoError::Unexpected(format!("sqlite: {e}").into())
}

/// The date in the column at `*at` (`YYYY-MM-DD` text, as sqlx writes it), read from the row's own
/// bytes: rusqlite's conversion interprets a format string at every value, and going through a
/// `String` and chrono's parser was still 3.6 % of a weekly board's server time (a date on each row,
/// `perf`, 100k). Text of any other shape goes to chrono's ISO parser, which says what is wrong.
pub(crate) fn date_column(row: &Row<'_>, at: &mut usize, name: &str) -> rusqlite::Result<Option<chrono::NaiveDate>> {
    let i = *at;
    *at += 1;
    debug_assert_eq!(row.as_ref().column_name(i).ok(), Some(name), "column {i} of {:?}", row.as_ref().expanded_sql());
    let failed = |e: Box<dyn std::error::Error + Send + Sync>| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e)
    };
    match row.get_ref(i)? {
        rusqlite::types::ValueRef::Null => Ok(None),
        rusqlite::types::ValueRef::Text(t) => match iso_date(t) {
            Some(day) => Ok(Some(day)),
            None => {
                let text = std::str::from_utf8(t).map_err(|e| failed(Box::new(e)))?;
                text.parse().map(Some).map_err(|e| failed(Box::new(e)))
            }
        },
        other => Err(rusqlite::Error::InvalidColumnType(i, name.to_owned(), other.data_type())),
    }
}

/// `YYYY-MM-DD` of a real day; `None` for anything else (another shape, or a day that does not exist).
fn iso_date(t: &[u8]) -> Option<chrono::NaiveDate> {
    let [y1, y2, y3, y4, b'-', m1, m2, b'-', d1, d2] = *t else { return None };
    let digits = |ds: &[u8]| ds.iter().try_fold(0u32, |n, &d| d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0')));
    let year = i32::try_from(digits(&[y1, y2, y3, y4])?).ok()?;
    chrono::NaiveDate::from_ymd_opt(year, digits(&[m1, m2])?, digits(&[d1, d2])?)
}

/// `Ok(T { field, … })` with the fields read from consecutive columns named as they are (see
/// [`column`]): the decoding `#[derive(FromQueryResult)]` does on the pool, for the reads run here.
macro_rules! from_sqlite_row {
    ($row:ident, $at:ident, $ty:ident { $($field:ident),* $(,)? }) => {
        Ok($ty { $($field: $crate::inline::column($row, $at, stringify!($field))?),* })
    };
}
pub(crate) use from_sqlite_row;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::CountRow;
    use chrono::{DateTime, FixedOffset, NaiveDate, TimeZone, Utc};
    use sea_orm::{ConnectionTrait, DbBackend};

    /// A reader of the test database's file (`sqlite://PATH?mode=rwc`).
    fn reader_for(t: &test_support::TestDatabase) -> InlineReader {
        let path = t.url.trim_start_matches("sqlite://").split('?').next().unwrap_or_default();
        InlineReader::for_file(Path::new(path)).expect("a file")
    }

    /// The rows of a read that was not refused for a lock.
    fn rows<T>(read: RepoResult<Inline<T>>) -> RepoResult<Vec<T>> {
        match read? {
            Inline::Rows(rows) => Ok(rows),
            Inline::Busy => panic!("the file was not locked"),
        }
    }

    fn stmt(sql: &str, values: Vec<Value>) -> Statement {
        Statement::from_sql_and_values(DbBackend::Sqlite, sql, values)
    }

    #[test]
    fn in_memory_databases_have_no_reader() {
        assert!(InlineReader::for_file(Path::new(":memory:")).is_none());
        // What sqlx names `sqlite::memory:` (a URI to a shared in-memory database).
        assert!(InlineReader::for_file(Path::new("file:sqlx-in-memory-3")).is_none());
        assert!(InlineReader::for_file(Path::new("")).is_none());
        assert!(InlineReader::for_file(Path::new("/var/lib/launchdir/launchdir.db")).is_some());
    }

    #[tokio::test]
    async fn a_file_store_reads_inline_and_an_in_memory_one_through_the_pool() {
        let t = test_support::sqlite();
        let file = crate::SeaOrmStore::new(crate::db::connect(&t.url).await.expect("open the file"));
        assert!(file.inline.is_some());
        let memory = crate::SeaOrmStore::new(crate::db::connect("sqlite::memory:").await.expect("open memory"));
        assert!(memory.inline.is_none());
    }

    /// A value bound here compares equal to the same value written through the pool (sqlx's text
    /// encodings of dates and times), so a read means the same on both paths.
    #[tokio::test]
    async fn values_bind_as_the_pool_writes_them() {
        let t = test_support::sqlite();
        let db = crate::db::connect(&t.url).await.expect("open the file");
        db.execute_unprepared("CREATE TABLE t (d TEXT, at TEXT, at_utc TEXT, b INTEGER, n INTEGER, x REAL, s TEXT)")
            .await
            .expect("create the table");
        let day = NaiveDate::from_ymd_opt(2026, 11, 23).expect("a date");
        let at: DateTime<FixedOffset> =
            FixedOffset::east_opt(3600).expect("an offset").with_ymd_and_hms(2026, 11, 25, 14, 3, 9).unwrap()
                + chrono::Duration::milliseconds(120);
        let at_utc = Utc.with_ymd_and_hms(2026, 11, 25, 13, 3, 9).unwrap();
        let values: Vec<Value> =
            vec![day.into(), at.into(), at_utc.into(), true.into(), 7i64.into(), 2.5f64.into(), "Zoë's".into()];
        db.execute_raw(stmt("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", values.clone())).await.expect("write a row");
        let reader = reader_for(&t);
        let same = rows(reader.all::<CountRow>(&stmt(
            "SELECT COUNT(*) AS n FROM t WHERE d = ? AND at = ? AND at_utc = ? AND b = ? AND n = ? AND x = ? AND s = ?",
            values,
        )))
        .expect("read");
        assert_eq!(same[0].n, 1);
        let next_day = vec![day.succ_opt().unwrap().into()];
        let none =
            rows(reader.all::<CountRow>(&stmt("SELECT COUNT(*) AS n FROM t WHERE d = ?", next_day))).expect("read");
        assert_eq!(none[0].n, 0);
    }

    /// A stored date reads back as the same day on both paths, at the edges of the fast decoder: the
    /// shape it knows, a day that does not exist, and text it leaves to chrono.
    #[tokio::test]
    async fn a_date_column_reads_the_day_written_and_refuses_what_is_not_one() {
        #[derive(Debug)]
        struct Day(Option<NaiveDate>);
        impl FromSqliteRow for Day {
            fn from_sqlite(row: &Row<'_>, at: &mut usize) -> rusqlite::Result<Self> {
                Ok(Self(date_column(row, at, "d")?))
            }
        }
        let t = test_support::sqlite();
        let db = crate::db::connect(&t.url).await.expect("open the file");
        db.execute_unprepared("CREATE TABLE t (d TEXT)").await.expect("create the table");
        let reader = reader_for(&t);
        let read = |sql: &str| rows(reader.all::<Day>(&stmt(sql, vec![]))).map(|r| r[0].0);
        for day in [(2026, 11, 23), (2024, 2, 29), (1, 1, 1), (9999, 12, 31)] {
            let d = NaiveDate::from_ymd_opt(day.0, day.1, day.2).expect("a date");
            db.execute_unprepared("DELETE FROM t").await.expect("empty");
            db.execute_raw(stmt("INSERT INTO t VALUES (?)", vec![d.into()])).await.expect("write the day");
            assert_eq!(read("SELECT d FROM t").expect("read"), Some(d), "{d}");
        }
        assert_eq!(read("SELECT NULL AS d").expect("read"), None);
        // Not the fixed shape, still a date chrono reads: the slow path answers it.
        assert_eq!(read("SELECT '+2026-11-23' AS d").expect("read"), NaiveDate::from_ymd_opt(2026, 11, 23));
        for bad in ["'2025-02-29'", "'2026-13-01'", "'2026-11-00'", "'2026-1a-01'", "'2026-11-23x'", "''", "7"] {
            assert!(read(&format!("SELECT {bad} AS d")).is_err(), "{bad} is not a day");
        }
    }

    /// The workspace builds SQLite without the process-wide mutexes of memory management and memory
    /// statistics (`.cargo/config.toml`): with them, concurrent searches of a million listings ran at
    /// 40 % of the rate. A build that lost the setting fails here, not only in a benchmark.
    #[test]
    fn sqlite_is_built_without_the_global_mutexes_or_page_blocks() {
        let conn = Connection::open_in_memory().expect("open");
        let options: Vec<String> = conn
            .prepare("PRAGMA compile_options")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("read the compile options");
        assert!(options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"), "{options:?}");
        assert!(!options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"), "{options:?}");
        assert!(options.iter().any(|o| o == "ENABLE_FTS5"), "{options:?}");
        // No block of 20 pages allocated (and written) for each temporary table a statement opens.
        assert!(options.iter().any(|o| o == "DEFAULT_PCACHE_INITSZ=0"), "{options:?}");
    }

    #[tokio::test]
    async fn nothing_is_written_through_a_reader() {
        let t = test_support::sqlite();
        let db = crate::db::connect(&t.url).await.expect("open the file");
        db.execute_unprepared("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1)").await.expect("a row");
        let reader = reader_for(&t);
        let err =
            rows(reader.all::<CountRow>(&stmt("DELETE FROM t RETURNING n", vec![]))).expect_err("a write is refused");
        assert!(format!("{err:?}").contains("readonly"), "{err:?}");
        let left = rows(reader.all::<CountRow>(&stmt("SELECT COUNT(*) AS n FROM t", vec![]))).expect("read");
        assert_eq!(left[0].n, 1);
    }

    #[tokio::test]
    async fn a_value_of_an_unknown_kind_is_an_error_not_a_wrong_answer() {
        let t = test_support::sqlite();
        let _db = crate::db::connect(&t.url).await.expect("open the file");
        let reader = reader_for(&t);
        let err = rows(reader.all::<CountRow>(&stmt("SELECT ? AS n", vec![Value::Bytes(Some(vec![1, 2]))])))
            .expect_err("bytes are not bound here");
        assert!(format!("{err:?}").contains("no inline SQLite binding"), "{err:?}");
    }

    /// A file another connection holds exclusively: the read here gives up after [`BUSY_WAIT`]
    /// instead of holding up its thread, and the store's read goes through the pool.
    #[tokio::test]
    async fn a_locked_file_sends_the_read_to_the_pool_instead_of_holding_up_the_thread() {
        // The pool's database, and a second file (the pool's own connections would keep it from
        // being locked exclusively) that one connection holds.
        let t = test_support::sqlite();
        let mut store = crate::SeaOrmStore::new(crate::db::connect(&t.url).await.expect("open the file"));
        store.db.execute_unprepared("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1)").await.expect("a row");
        let dir = tempfile::tempdir().expect("a folder");
        let locked = dir.path().join("locked.db");
        Connection::open(&locked)
            .expect("create")
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (7);")
            .expect("a row");
        let (locked_tx, locked_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let path = locked.clone();
        let holder = std::thread::spawn(move || {
            let c = Connection::open(&path).expect("open");
            c.execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE t SET n = 8;").expect("lock");
            locked_tx.send(()).expect("say locked");
            let _ = done_rx.recv_timeout(Duration::from_secs(10));
            c.execute_batch("COMMIT").expect("commit");
        });
        locked_rx.recv().expect("the file is locked");

        let reader = InlineReader::for_file(&locked).expect("a file");
        let started = std::time::Instant::now();
        let read = reader.all::<CountRow>(&stmt("SELECT n FROM t", vec![])).expect("no error");
        assert!(matches!(read, Inline::Busy), "the lock is reported, not waited for");
        assert!(started.elapsed() < Duration::from_millis(400), "gave up after {:?}", started.elapsed());

        store.inline = Some(std::sync::Arc::new(reader));
        let n = store.short_read::<CountRow>(stmt("SELECT n AS n FROM t", vec![])).await.expect("read");
        assert_eq!(n[0].n, 1, "the pool's answer");
        done_tx.send(()).expect("release");
        holder.join().expect("the holder");
    }
}
