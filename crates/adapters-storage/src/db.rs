//! Connecting to SQLite or PostgreSQL and bringing the schema up to date.

use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{ConnectOptions, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, TransactionTrait};
use std::time::Duration;

/// Opens a pool for `url` (`sqlite://file.db?mode=rwc` or `postgres://…`). SQLite runs in WAL mode
/// with a busy timeout so readers never block the writer and concurrent writers wait, not fail.
pub async fn connect(url: &str) -> Result<DatabaseConnection, DbErr> {
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.sqlx_logging(false).connect_timeout(Duration::from_secs(5)).acquire_timeout(Duration::from_secs(10));
    if url.starts_with("sqlite:") {
        // A file has no server or proxy to drop a connection: no ping before each checkout (by default
        // every acquire pays one extra round trip to the connection's worker thread).
        opts.test_before_acquire(false);
        opts.max_connections(8).min_connections(1).map_sqlx_sqlite_opts(|o| {
            o.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(10))
                .foreign_keys(true)
                // Reads map the file instead of copying pages through read(2), and each connection
                // keeps 32 MiB of pages (the default 2 MiB makes every pooled connection re-read the
                // hot pages of a large directory). Measured on the 100k benchmark: see issue 3's note.
                .pragma("mmap_size", "1073741824")
                .pragma("cache_size", "-32768")
        });
    } else {
        // Ping only connections idle long enough for a server, proxy or firewall to have dropped them;
        // hot connections skip the extra round trip.
        opts.max_connections(16).min_connections(1).test_before_acquire_if_idle_for(Duration::from_secs(30));
    }
    sea_orm::Database::connect(opts).await
}

/// Applies every pending migration. Safe to run from several instances at once on PostgreSQL: they
/// run inside one transaction holding a transaction-scoped advisory lock, so one instance migrates
/// while the others wait and then find nothing to do. (A session-level lock would be wrong here: taken
/// and released through a pool, lock and unlock can land on different connections and the lock is
/// never released.)
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    if db.get_database_backend() == DbBackend::Postgres {
        let txn = db.begin().await?;
        txn.execute_unprepared("SELECT pg_advisory_xact_lock(7262021)").await?;
        Migrator::up(&txn, None).await?;
        txn.commit().await
    } else {
        Migrator::up(db, None).await
    }
}

/// Migrations not yet applied; `/readyz` reports not ready while any remain.
pub async fn pending_migrations(db: &DatabaseConnection) -> Result<usize, DbErr> {
    Ok(Migrator::get_pending_migrations(db).await?.len())
}

/// A trivial round trip, for readiness.
pub async fn ping(db: &DatabaseConnection) -> Result<(), DbErr> {
    db.ping().await
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
