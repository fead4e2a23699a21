//! Test databases for integration tests: a fresh SQLite file, or a fresh PostgreSQL database on the
//! server named by `LAUNCHDIR_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`),
//! dropped when the guard goes. With `CI=true` an unreachable PostgreSQL is a failure, not a skip.
//!
//! Architecture invariant: a dev-dependency only; no production crate depends on it.

use sea_orm::{ConnectionTrait, Database};

/// A database URL that lives as long as this value.
#[derive(Debug)]
pub struct TestDatabase {
    pub url: String,
    cleanup: Cleanup,
}

#[derive(Debug)]
enum Cleanup {
    Sqlite(tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl TestDatabase {
    pub fn is_postgres(&self) -> bool {
        matches!(self.cleanup, Cleanup::Postgres { .. })
    }

    /// The folder holding the SQLite file (None for PostgreSQL).
    pub fn sqlite_dir(&self) -> Option<&std::path::Path> {
        match &self.cleanup {
            Cleanup::Sqlite(d) => Some(d.path()),
            Cleanup::Postgres { .. } => None,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Cleanup::Postgres { admin_url, name } = &self.cleanup {
            let (admin_url, name) = (admin_url.clone(), name.clone());
            // Drop may run inside a test's runtime, which cannot be blocked on: use a thread of its own.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
                rt.block_on(async {
                    let admin = Database::connect(&admin_url).await.ok()?;
                    admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")).await.ok()
                })
            })
            .join();
        }
    }
}

/// A URL for a new, empty SQLite file in a temporary folder (created on first connect).
pub fn sqlite() -> TestDatabase {
    let dir = tempfile::tempdir().expect("temporary folder");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("test.db").display());
    TestDatabase { url, cleanup: Cleanup::Sqlite(dir) }
}

pub fn postgres_admin_url() -> String {
    std::env::var("LAUNCHDIR_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A new, empty PostgreSQL database. `None` (with a note on stderr) when the server is unreachable
/// and `CI` is not `true`; with `CI=true` that panics, so CI cannot pass without PostgreSQL.
pub async fn postgres() -> Option<TestDatabase> {
    let admin_url = postgres_admin_url();
    let admin = match Database::connect(&admin_url).await {
        Ok(a) => a,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!(
                "PostgreSQL unreachable at {admin_url} ({e}); skipping the PostgreSQL half (CI=true makes this fail)"
            );
            return None;
        }
        Err(e) => panic!("PostgreSQL unreachable at {admin_url}: {e}"),
    };
    let name = format!("ld_test_{}", uuid::Uuid::new_v4().simple());
    admin.execute_unprepared(&format!("CREATE DATABASE \"{name}\"")).await.expect("create test database");
    let base = admin_url.rsplit_once('/').map_or(admin_url.as_str(), |(b, _)| b);
    Some(TestDatabase { url: format!("{base}/{name}"), cleanup: Cleanup::Postgres { admin_url, name } })
}
