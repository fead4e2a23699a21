//! The stores the suite runs on: the in-memory store, and a migrated sea-orm store on a fresh SQLite
//! file and on a fresh PostgreSQL database (see the test-support crate).

use adapters_storage::{SeaOrmStore, db};
use domain::ports::Store;
use std::sync::Arc;
use test_support::TestDatabase;

pub struct TestDb {
    pub store: SeaOrmStore,
    _db: TestDatabase,
}

impl TestDb {
    /// The database's URL, for a second connection to it.
    pub fn url(&self) -> &str {
        &self._db.url
    }
}

async fn open(t: TestDatabase) -> TestDb {
    let conn = db::connect(&t.url).await.expect("connect to the test database");
    db::migrate(&conn).await.expect("migrate the test database");
    // On PostgreSQL the short reads go through the read pipe, as in the service.
    TestDb { store: SeaOrmStore::new(conn).with_read_pipe(&t.url), _db: t }
}

pub async fn sqlite() -> Option<TestDb> {
    Some(open(test_support::sqlite()).await)
}

pub async fn postgres() -> Option<TestDb> {
    Some(open(test_support::postgres().await?).await)
}

pub fn memory() -> Arc<dyn Store> {
    Arc::new(adapters_memory::MemoryStore::new())
}

/// Declares one test of the storage ports that runs on every store: `name::memory`, `name::sqlite`
/// and `name::postgres`, the body seeing only `store: &Arc<dyn Store>` (the port, never the adapter).
/// This is the port contract: a behaviour that differs between stores fails here.
#[macro_export]
macro_rules! on_every_store {
    ($name:ident, |$store:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run($store: &std::sync::Arc<dyn domain::ports::Store>) $body

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn memory() {
                run(&$crate::harness::memory()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let db = $crate::harness::sqlite().await.expect("sqlite");
                let store: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(db.store.clone());
                run(&store).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                if let Some(db) = $crate::harness::postgres().await {
                    let store: std::sync::Arc<dyn domain::ports::Store> = std::sync::Arc::new(db.store.clone());
                    run(&store).await;
                }
            }
        }
    };
}

/// Declares a test of what only the SQL stores have (migrations, the search index, SQL they are
/// read with), on SQLite and on PostgreSQL, as `name::sqlite` and `name::postgres`.
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

/// Rolls `db`'s schema back to just before the migration named `name` (it and every one after it),
/// so a test of what one migration does to data stored before it keeps its meaning as others follow.
/// In one transaction, as `db::migrate` goes up: on the pool, SQLite's statements could go to
/// connections whose copy of the schema predates the one before (a trigger dropped and created again
/// was refused as "already exists"). Go up again with `db::migrate`.
pub async fn roll_back_through(db: &sea_orm::DatabaseConnection, name: &str) {
    use migration::{Migrator, MigratorTrait};
    use sea_orm::TransactionTrait;
    let all = Migrator::migrations();
    let at = all.iter().position(|m| m.name() == name).unwrap_or_else(|| panic!("no migration {name}"));
    let txn = db.begin().await.unwrap();
    Migrator::down(&txn, Some((all.len() - at) as u32)).await.unwrap();
    txn.commit().await.unwrap();
}
