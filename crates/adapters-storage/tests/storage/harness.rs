//! Test databases: a fresh SQLite file, and a fresh PostgreSQL database per test on the server named
//! by `LAUNCHDIR_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`). With
//! `CI=true` an unreachable PostgreSQL fails the test instead of skipping it.

use adapters_storage::{SeaOrmStore, db};
use sea_orm::{ConnectionTrait, Database};

pub struct TestDb {
    pub store: SeaOrmStore,
    _cleanup: Cleanup,
}

enum Cleanup {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Cleanup::Postgres { admin_url, name } = self {
            let (admin_url, name) = (admin_url.clone(), name.clone());
            // Dropping runs outside the test's runtime, so it gets its own.
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

pub async fn sqlite() -> Option<TestDb> {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("test.db").display());
    let conn = db::connect(&url).await.expect("open SQLite file");
    db::migrate(&conn).await.expect("migrate SQLite");
    Some(TestDb { store: SeaOrmStore::new(conn), _cleanup: Cleanup::Sqlite(dir) })
}

pub fn postgres_admin_url() -> String {
    std::env::var("LAUNCHDIR_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

pub async fn postgres() -> Option<TestDb> {
    let admin_url = postgres_admin_url();
    let admin = match Database::connect(&admin_url).await {
        Ok(a) => a,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("PostgreSQL unreachable at {admin_url} ({e}); skipping the PostgreSQL half (CI=true makes this fail)");
            return None;
        }
        Err(e) => panic!("PostgreSQL unreachable at {admin_url}: {e}"),
    };
    let name = format!("ld_test_{}", uuid::Uuid::new_v4().simple());
    admin.execute_unprepared(&format!("CREATE DATABASE \"{name}\"")).await.expect("create test database");
    let base = admin_url.rsplit_once('/').map_or(admin_url.as_str(), |(b, _)| b);
    let url = format!("{base}/{name}");
    let conn = db::connect(&url).await.expect("connect to test database");
    db::migrate(&conn).await.expect("migrate PostgreSQL");
    Some(TestDb { store: SeaOrmStore::new(conn), _cleanup: Cleanup::Postgres { admin_url, name } })
}

/// Declares one test body that runs on SQLite and on PostgreSQL, as `name::sqlite` and `name::postgres`.
#[macro_export]
macro_rules! on_both {
    ($name:ident, |$store:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run($store: &adapters_storage::SeaOrmStore) $body

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let db = $crate::harness::sqlite().await.expect("sqlite");
                run(&db.store).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                if let Some(db) = $crate::harness::postgres().await {
                    run(&db.store).await;
                }
            }
        }
    };
}
