//! `SeaOrmStore`: one connection pool, implementing every repository port of the domain on SQLite or
//! PostgreSQL. Each port's implementation lives in its own module beside this one.

use crate::sql::RawQuery;
use domain::ports::{RepoError, RepoResult};
use sea_orm::{DatabaseConnection, DbBackend, DbErr, FromQueryResult, SqlErr};

#[derive(Debug, Clone)]
pub struct SeaOrmStore {
    pub(crate) db: DatabaseConnection,
}

impl SeaOrmStore {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    pub fn connection(&self) -> &DatabaseConnection {
        &self.db
    }

    pub fn backend(&self) -> DbBackend {
        self.db.get_database_backend()
    }
}

#[derive(Debug, FromQueryResult)]
struct CountRow {
    n: i64,
}

impl SeaOrmStore {
    /// Runs a `SELECT COUNT(*) AS n …` statement.
    pub(crate) async fn count(&self, q: &RawQuery) -> RepoResult<u64> {
        let n = CountRow::find_by_statement(q.build()).one(&self.db).await.map_err(repo_err)?.map_or(0, |r| r.n);
        Ok(n.max(0) as u64)
    }
}

/// Maps a database error to the port's error: uniqueness → Conflict, everything else → Unexpected.
pub(crate) fn repo_err(e: DbErr) -> RepoError {
    match e.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(msg)) => RepoError::Conflict(msg),
        _ => RepoError::Unexpected(Box::new(e)),
    }
}

pub(crate) fn is_unique_violation(e: &DbErr) -> bool {
    matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}
