//! Trending by forward decay. Until now each listing stored the sum of its votes' weights relative to
//! an instant kept in `site_settings` (`_trending_as_of`), and every hour the calendar multiplied every
//! sum down to the new hour: at a million listings one `UPDATE` of 780 000 rows that held SQLite's write
//! lock for 35 s. From here each listing stores its rank, `ln(1 + Σ wᵢ)` with the weights relative to a
//! fixed epoch, 2026-01-01T00:00:00Z (`domain::listing::trending`): it sorts as the decayed sums do at
//! any moment, and nothing is rewritten as time passes.
//!
//! This converts the kept sums in one transaction: `ln(1 + S · 2^((T − epoch) / 72 h))` for a sum `S`
//! as of `T`, computed here (SQLite has no logarithm), 10 000 rows read at a time, 500 written a
//! statement. A marker setting makes a second run (after a crash between the commit and the
//! migration's own record) change nothing. The half-life is written out here, not taken from the
//! domain: a migration converts what was stored then.
//!
//! Measured on a million demo listings (779 547 with votes), SQLite: 35–42 s, once, at the upgrade.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, Statement};

#[derive(DeriveMigrationName)]
pub struct Migration;

const HALF_LIFE_HOURS: f64 = 72.0;
const AS_OF: &str = "_trending_as_of";
const DONE: &str = "_trending_ranks";
const EPOCH: &str = "2026-01-01T00:00:00Z";
const CHUNK: usize = 500;
const PAGE: usize = 10_000;

fn epoch() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(EPOCH).map(|t| t.to_utc()).unwrap_or_default()
}

/// `ln(2^((from − to) / half-life))`: the log of the factor that takes a weight relative to `from` to
/// one relative to `to` (above 1 when `from` is the later).
fn ln_shift(from: chrono::DateTime<chrono::Utc>, to: chrono::DateTime<chrono::Utc>) -> f64 {
    (from - to).num_seconds() as f64 / 3600.0 / HALF_LIFE_HOURS * std::f64::consts::LN_2
}

async fn setting(db: &SchemaManagerConnection<'_>, key: &str) -> Result<Option<String>, DbErr> {
    let backend = db.get_database_backend();
    let row = db
        .query_one_raw(Statement::from_string(backend, format!("SELECT value FROM site_settings WHERE key = '{key}'")))
        .await?;
    row.map(|r| r.try_get::<String>("", "value")).transpose()
}

/// Writes `value(score)` over every non-zero `trending_score`, [`PAGE`] rows read at a time in id order
/// (so a million listings never sit in memory at once), [`CHUNK`] rows a statement.
async fn rewrite(db: &SchemaManagerConnection<'_>, value: impl Fn(f64) -> f64) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let mut after = i64::MIN;
    loop {
        let rows = db
            .query_all_raw(Statement::from_string(
                backend,
                format!(
                    "SELECT id, trending_score FROM listings WHERE trending_score <> 0 AND id > {after} \
                     ORDER BY id LIMIT {PAGE}"
                ),
            ))
            .await?;
        let mut pairs = Vec::with_capacity(rows.len());
        for r in rows {
            pairs.push((r.try_get::<i64>("", "id")?, r.try_get::<f64>("", "trending_score")?));
        }
        let Some(&(last, _)) = pairs.last() else { return Ok(()) };
        after = last;
        for chunk in pairs.chunks(CHUNK) {
            let mut sql = String::from("UPDATE listings SET trending_score = CASE id");
            for (id, score) in chunk {
                let v = value(*score);
                // `{:?}` writes the shortest text that reads back as the same f64.
                sql.push_str(&format!(" WHEN {id} THEN {:?}", if v.is_finite() { v } else { 0.0 }));
            }
            sql.push_str(" ELSE trending_score END WHERE id IN (");
            sql.push_str(&chunk.iter().map(|(id, _)| id.to_string()).collect::<Vec<_>>().join(","));
            sql.push(')');
            db.execute_raw(Statement::from_string(backend, sql)).await?;
        }
    }
}

async fn put_setting(db: &SchemaManagerConnection<'_>, key: &str, value: Option<&str>) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    db.execute_raw(Statement::from_string(backend, format!("DELETE FROM site_settings WHERE key = '{key}'"))).await?;
    if let Some(value) = value {
        // As sqlx writes a time on SQLite (RFC 3339 with an offset), which PostgreSQL reads as well.
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        db.execute_raw(Statement::from_string(
            backend,
            format!("INSERT INTO site_settings (key, value, updated_at) VALUES ('{key}', '{value}', '{now}')"),
        ))
        .await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let txn = manager.begin().await?;
        let db = txn.get_connection();
        if setting(db, DONE).await?.is_some() {
            return txn.commit().await;
        }
        // The instant the kept sums are relative to; a database whose clock never started kept each
        // vote at its weight as of its own instant, which is about now.
        let as_of = setting(db, AS_OF).await?;
        let as_of = as_of
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
            .map_or_else(chrono::Utc::now, |t| t.to_utc());
        let shift = ln_shift(as_of, epoch());
        rewrite(db, |sum| {
            if sum <= 0.0 {
                return 0.0; // Nothing, or what rounding left of votes taken back.
            }
            let x = sum.ln() + shift; // ln of the sum relative to the epoch
            x.max(0.0) + (-x.abs()).exp().ln_1p() // ln(1 + e^x)
        })
        .await?;
        put_setting(db, AS_OF, None).await?;
        put_setting(db, DONE, Some("1")).await?;
        txn.commit().await
    }

    /// Back to sums, relative to the epoch (`_trending_as_of` then names it). A rank beyond 709 (votes
    /// more than eight years after the epoch) has no `f64` sum; it becomes the largest one.
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let txn = manager.begin().await?;
        let db = txn.get_connection();
        if setting(db, DONE).await?.is_none() {
            return txn.commit().await;
        }
        rewrite(db, |rank| {
            let sum = rank.exp_m1();
            if sum.is_finite() { sum } else { f64::MAX }
        })
        .await?;
        put_setting(db, AS_OF, Some(&epoch().to_rfc3339_opts(chrono::SecondsFormat::Micros, true))).await?;
        put_setting(db, DONE, None).await?;
        txn.commit().await
    }
}
