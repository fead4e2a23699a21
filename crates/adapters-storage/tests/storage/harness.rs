//! A migrated store on a fresh test database (see the test-support crate).

use adapters_storage::{SeaOrmStore, db};
use test_support::TestDatabase;

pub struct TestDb {
    pub store: SeaOrmStore,
    _db: TestDatabase,
}

async fn open(t: TestDatabase) -> TestDb {
    let conn = db::connect(&t.url).await.expect("connect to the test database");
    db::migrate(&conn).await.expect("migrate the test database");
    TestDb { store: SeaOrmStore::new(conn), _db: t }
}

pub async fn sqlite() -> Option<TestDb> {
    Some(open(test_support::sqlite()).await)
}

pub async fn postgres() -> Option<TestDb> {
    Some(open(test_support::postgres().await?).await)
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
