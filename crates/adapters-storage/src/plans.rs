//! Query plans for tests: a statement's plan on a migrated database of each store, so a test can say
//! which index a read walks and that it sorts nothing.

use sea_orm::ConnectionTrait;

/// The plan of `statement`: SQLite's `EXPLAIN QUERY PLAN` details, or PostgreSQL's `EXPLAIN` lines.
pub(crate) async fn plan_of(db: &impl ConnectionTrait, statement: sea_orm::Statement) -> Vec<String> {
    let backend = db.get_database_backend();
    let (explain, column) = match backend {
        sea_orm::DbBackend::Sqlite => (format!("EXPLAIN QUERY PLAN {}", statement.sql), "detail"),
        _ => (format!("EXPLAIN (COSTS OFF) {}", statement.sql), "QUERY PLAN"),
    };
    let values = statement.values.unwrap_or(sea_orm::Values(Vec::new()));
    let plan = db.query_all_raw(sea_orm::Statement::from_sql_and_values(backend, explain, values)).await;
    plan.expect("explain").iter().map(|r| r.try_get::<String>("", column).expect("a plan line")).collect()
}

/// A migrated SQLite database, and its file.
pub(crate) async fn sqlite_db() -> (test_support::TestDatabase, sea_orm::DatabaseConnection) {
    let t = test_support::sqlite();
    let db = crate::db::connect(&t.url).await.expect("open the file");
    crate::db::migrate(&db).await.expect("migrate");
    (t, db)
}

/// A transaction on a migrated PostgreSQL database in which the planner plans as for full tables
/// (an empty table scans cheaper than any index), with the database it holds; `None` without one.
pub(crate) async fn postgres_planning() -> Option<(test_support::TestDatabase, sea_orm::DatabaseTransaction)> {
    let t = test_support::postgres().await?;
    let db = crate::db::connect(&t.url).await.expect("connect");
    crate::db::migrate(&db).await.expect("migrate");
    let txn = sea_orm::TransactionTrait::begin(&db).await.expect("begin");
    txn.execute_unprepared("SET LOCAL enable_seqscan = off").await.expect("set");
    Some((t, txn))
}
