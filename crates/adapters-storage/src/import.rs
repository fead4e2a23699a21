//! Bulk import of directory content (demo data, benchmark scale). Rows are written with explicit ids
//! in multi-row INSERTs inside the import's transaction, which is what makes 100 000 listings load in
//! seconds rather than minutes; PostgreSQL sequences are moved past the imported ids afterwards.

use crate::entity::{
    awards, billboard_contributions, blog_posts, domain_ratings, founders, listing_founders, listing_updates,
    listing_view_totals, listings, milestones, reviews, stories, users, vote_tallies, votes,
};
use crate::json::{faqs_to_json, list_to_json, socials_to_json};
use crate::listings::{active_model, category_rows};
use crate::store::{SeaOrmStore, repo_err};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::award::Award;
use domain::blog::NewBlogPost;
use domain::founder::NewFounder;
use domain::ids::{FounderId, ListingId};
use domain::listing::{CommunityRating, ListingStatus, trending};
use domain::ports::{DirectoryImport, ImportListing, ImportTransaction, RepoError, RepoResult};
use domain::week::LaunchWeek;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr,
    EntityTrait, FromQueryResult, PaginatorTrait, Statement,
};

/// Rows per multi-row INSERT: keeps every statement under SQLite's 32 766 bound parameters
/// (a listing row has about 60 columns).
const CHUNK: usize = 250;

#[derive(Debug, FromQueryResult)]
struct MaxId {
    m: Option<i64>,
}

async fn next_id(txn: &DatabaseTransaction, table: &str) -> Result<i64, DbErr> {
    let r = MaxId::find_by_statement(Statement::from_string(
        txn.get_database_backend(),
        format!("SELECT MAX(id) AS m FROM {table}"),
    ))
    .one(txn)
    .await?;
    Ok(r.and_then(|r| r.m).unwrap_or(0) + 1)
}

/// Advisory-lock keys (the first of the two) of a bulk load's imports; 7262022 is the deferred
/// indexes' (`db::build_deferred_index`).
const RESERVE_LOCK: i64 = 7_262_023;
const KEPT_COUNTS_LOCK: i64 = 7_262_024;
const VOTERS_LOCK: i64 = 7_262_025;

/// The first of `n` consecutive ids of `table` no one else will use: read and moved past in the table's
/// PostgreSQL sequence, under an advisory lock, in a short transaction of its own on the pool, so
/// imports running side by side (`DirectoryImport::import_lanes`) never write the same id and none
/// waits for another's commit. An import that rolls back leaves its ids unused.
async fn reserve_ids(db: &DatabaseConnection, table: &str, n: usize) -> Result<i64, DbErr> {
    use sea_orm::TransactionTrait;
    let txn = db.begin().await?;
    txn.execute_unprepared(&format!("SELECT pg_advisory_xact_lock({RESERVE_LOCK}, hashtext('{table}'))")).await?;
    let seq = format!("pg_get_serial_sequence('{table}', 'id')");
    let first = MaxId::find_by_statement(Statement::from_string(
        DbBackend::Postgres,
        format!(
            "SELECT GREATEST(COALESCE(pg_sequence_last_value({seq}::regclass), 0), \
             (SELECT COALESCE(MAX(id), 0) FROM {table})) + 1 AS m"
        ),
    ))
    .one(&txn)
    .await?
    .and_then(|r| r.m)
    .unwrap_or(1);
    if n > 0 {
        txn.execute_unprepared(&format!("SELECT setval({seq}, {})", first + n as i64 - 1)).await?;
    }
    txn.commit().await?;
    Ok(first)
}

/// Moves a PostgreSQL sequence past explicitly inserted ids (SQLite needs nothing).
async fn fix_sequence(txn: &DatabaseTransaction, table: &str) -> Result<(), DbErr> {
    if txn.get_database_backend() == DbBackend::Postgres {
        txn.execute_unprepared(&format!(
            "SELECT setval(pg_get_serial_sequence('{table}', 'id'), GREATEST((SELECT COALESCE(MAX(id), 0) FROM {table}), 1))"
        ))
        .await?;
    }
    Ok(())
}

async fn insert_chunked<A, E>(txn: &DatabaseTransaction, rows: Vec<A>) -> Result<(), DbErr>
where
    A: ActiveModelTrait<Entity = E> + Send,
    E: EntityTrait,
{
    upsert_chunked(txn, rows, None).await
}

/// [`insert_chunked`] with `on_conflict` on every statement.
async fn upsert_chunked<A, E>(
    txn: &DatabaseTransaction,
    rows: Vec<A>,
    on_conflict: Option<sea_orm::sea_query::OnConflict>,
) -> Result<(), DbErr>
where
    A: ActiveModelTrait<Entity = E> + Send,
    E: EntityTrait,
{
    let chunk = match txn.get_database_backend() {
        // PostgreSQL takes up to 65 535 parameters a statement: as many rows as fit, 5 000 at most.
        DbBackend::Postgres => {
            use sea_orm::Iterable;
            let columns = rows.first().map_or(1, |r| E::Column::iter().filter(|c| r.get(*c).is_set()).count().max(1));
            (65_535 / columns).min(5_000)
        }
        _ => CHUNK,
    };
    // Full chunks, then the rest in power-of-two pieces: every statement has one of a few shapes, so
    // the connection's prepared-statement cache holds a few per table instead of one per remainder
    // size. (Measured at 100k listings, this alone barely moved peak memory; the page cache did.)
    let started = std::time::Instant::now();
    let n = rows.len();
    let mut rows = rows.into_iter();
    let mut left = rows.len();
    while left > 0 {
        let size = if left >= chunk { chunk } else { 1 << left.ilog2() };
        let chunk: Vec<A> = rows.by_ref().take(size).collect();
        left -= chunk.len();
        let mut insert = E::insert_many(chunk);
        if let Some(c) = &on_conflict {
            insert = insert.on_conflict(c.clone());
        }
        insert.exec_without_returning(txn).await?;
    }
    tracing::debug!(table = E::default().table_name(), rows = n, ms = started.elapsed().as_millis() as u64, "imported");
    Ok(())
}

/// On PostgreSQL, when the connected role may (a superuser): turns off the row triggers for the rest
/// of this transaction (`SET LOCAL session_replication_role = replica`), so that [`keep_by_set`]
/// writes what they keep once per batch instead of once per row. Measured at 50 000 generated listings
/// over the server's socket: 53 s with the triggers, 27 s with them off and the counts written by set
/// (the triggers, and the foreign-key checks of 1.45 million votes, each a lookup that also locks the
/// referenced row, were over half of the server's time). The foreign keys are not checked for the
/// imported rows: every id they hold is one this import wrote, read in the same transaction (its demo
/// voters), or found and locked in [`names_held`] (the founders and categories it was given). Other
/// sessions, and a role that may not set it, keep their triggers; the counts come out the same either
/// way (`an_import_keeps_every_count_a_recount_finds`).
async fn triggers_off_for_import(txn: &DatabaseTransaction) -> Result<bool, DbErr> {
    if txn.get_database_backend() != DbBackend::Postgres {
        return Ok(false);
    }
    let may = may_turn_triggers_off(txn).await?;
    if may {
        txn.execute_unprepared("SET LOCAL session_replication_role = replica").await?;
    }
    Ok(may)
}

/// Refuses ([`RepoError::NotFound`]) an import whose listings name a founder or a category the
/// directory does not hold, before anything is written. An import as a PostgreSQL superuser runs
/// without its foreign keys ([`triggers_off_for_import`]), so this check stands in for theirs: it
/// locks the rows it finds as theirs would (`FOR KEY SHARE`), so none can be deleted before the import
/// commits. Elsewhere the foreign keys refuse such rows too, but as a failed statement, not by name.
async fn names_held(txn: &DatabaseTransaction, list: &[ImportListing]) -> RepoResult<()> {
    use std::collections::BTreeSet;
    let founders: BTreeSet<i64> = list.iter().flat_map(|l| l.founders.iter().map(|(f, _)| f.get())).collect();
    let categories: BTreeSet<i64> =
        list.iter().filter_map(|l| l.listing.categories.as_ref()).flat_map(|c| c.all().map(|c| c.get())).collect();
    let backend = txn.get_database_backend();
    let lock = if backend == DbBackend::Postgres { " FOR KEY SHARE" } else { "" };
    for (table, ids) in [("founders", founders), ("categories", categories)] {
        if ids.is_empty() {
            continue;
        }
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        let sql = format!("SELECT count(*) AS n FROM (SELECT id FROM {table} WHERE id IN ({list}){lock}) held");
        let held = crate::store::CountRow::find_by_statement(Statement::from_string(backend, sql))
            .one(txn)
            .await
            .map_err(repo_err)?
            .map_or(0, |r| r.n);
        if usize::try_from(held).ok() != Some(ids.len()) {
            return Err(RepoError::NotFound);
        }
    }
    Ok(())
}

/// Whether the connected PostgreSQL role may turn row triggers off (a superuser).
async fn may_turn_triggers_off(db: &impl ConnectionTrait) -> Result<bool, DbErr> {
    #[derive(FromQueryResult)]
    struct May {
        may: bool,
    }
    Ok(May::find_by_statement(Statement::from_string(
        DbBackend::Postgres,
        "SELECT current_setting('is_superuser') = 'on' AS may",
    ))
    .one(db)
    .await?
    .is_some_and(|m| m.may))
}

/// What PostgreSQL's triggers on `listings`, `vote_tallies`, `listing_search` and the tables of a
/// listing's details (`listing_categories`, `listing_founders`, `listing_updates`, `milestones`,
/// `stories`, `awards`) keep, written once for the listings `first..=last` this transaction imported
/// with them turned off: the search table with its filter values and categories, its change count and its ranked
/// words (migrations 30, 64, 66, 34, 54), the live listings per category (19) and per category tree (57),
/// listings per status (21), per status and value (58), per launch week and status (37) and per launch day and status (69), listings
/// per week with votes (25) and per board (26), each founder's live listings and the founders with
/// any (59), and the listings' kept details (36; nothing while a bulk load defers them to its end).
/// `vote_tallies.live` (20) and each tally's copy of its listing's summary (72) were written with each
/// tally, and each listing's view total (48) with the listings, whether the triggers ran or not (an
/// import inserts listings: the summary's trigger on their update has nothing to do). A trigger added to these tables must be added here too: `postgres_import_knows_every_trigger`
/// lists them.
async fn keep_by_set(txn: &DatabaseTransaction, first: i64, last: i64) -> Result<(), DbErr> {
    #[derive(FromQueryResult)]
    struct Added {
        n: i64,
    }
    let of = format!("BETWEEN {first} AND {last}");
    // The search rows first (a quarter of an import's time, for the listings' text): they are these
    // listings' own, so imports running side by side write theirs at once.
    let added = Added::find_by_statement(Statement::from_string(
        DbBackend::Postgres,
        // With each row its listing's filter values and categories (migrations 64 and 66).
        format!(
            "WITH added AS (INSERT INTO listing_search (listing_id, status, doc, facets) SELECT l.id, l.status, \
             listing_search_doc(l.name, l.tagline, l.keywords, l.tags, l.short_description, l.features, l.description), {} \
             FROM listings l WHERE l.id {of} AND l.status IN ('live', 'scheduled') RETURNING 1) \
             SELECT count(*) AS n FROM added",
            migration::search_facets("l")
        ),
    ))
    .one(txn)
    .await?
    .map_or(0, |a| a.n);
    // Each search row's words, ranked (migration 54): the listings' own rows too.
    txn.execute_unprepared(&migration::insert_search_terms(&format!(
        "SELECT status, doc, listing_id FROM listing_search WHERE listing_id {of}"
    )))
    .await?;
    // The counts are rows every import updates: one import at a time from here to its commit, each
    // waiting its turn before it locks any of them, so two never hold what the other waits for.
    txn.execute_unprepared(&format!("SELECT pg_advisory_xact_lock({KEPT_COUNTS_LOCK}, 0)")).await?;
    let statements = [
        format!("UPDATE listing_terms_state SET changes = changes + {added} WHERE id = 1"),
        format!(
            "UPDATE categories c SET live_listings = live_listings + d.n FROM (SELECT lc.category_id, count(*) AS n \
             FROM listing_categories lc JOIN listings l ON l.id = lc.listing_id \
             WHERE lc.listing_id {of} AND l.status = 'live' GROUP BY lc.category_id) d WHERE c.id = d.category_id"
        ),
        // Each tree a listing has a link in, once (migration 57): the link's category and its parent.
        format!(
            "UPDATE categories c SET tree_live_listings = tree_live_listings + d.n FROM (SELECT t.id, \
             count(DISTINCT lc.listing_id) AS n FROM listing_categories lc JOIN listings l ON l.id = lc.listing_id \
             JOIN categories k ON k.id = lc.category_id JOIN categories t ON t.id = k.id OR t.id = k.parent_id \
             WHERE lc.listing_id {of} AND l.status = 'live' GROUP BY t.id) d WHERE c.id = d.id"
        ),
        // Each founder's live listings, and the founders who have their first (59): the founders'
        // counts before this statement's upsert, as every part of it reads them.
        format!(
            "WITH d AS (SELECT lf.founder_id, count(*) AS n FROM listing_founders lf JOIN listings l \
             ON l.id = lf.listing_id WHERE lf.listing_id {of} AND l.status = 'live' GROUP BY lf.founder_id), \
             first AS (SELECT count(*) AS n FROM d LEFT JOIN founder_live_listings k ON k.founder_id = d.founder_id \
             WHERE COALESCE(k.listings, 0) <= 0), \
             added AS (INSERT INTO founder_live_listings (founder_id, listings) SELECT founder_id, n FROM d \
             ON CONFLICT (founder_id) DO UPDATE SET listings = founder_live_listings.listings + EXCLUDED.listings) \
             UPDATE founder_counts SET founders = founders + (SELECT n FROM first) WHERE status = 'live'"
        ),
        // Each status's listings per stage, pricing model and country (58).
        format!(
            "INSERT INTO listing_value_counts (status, field, value, listings) SELECT l.status, v.f, v.v, count(*) \
             FROM listings l CROSS JOIN LATERAL (VALUES ('stage', l.stage), ('pricing_model', lower(l.pricing_model)), \
             ('country', l.country)) v (f, v) WHERE l.id {of} AND v.v IS NOT NULL GROUP BY l.status, v.f, v.v \
             ON CONFLICT (status, field, value) DO UPDATE SET listings = listing_value_counts.listings + EXCLUDED.listings"
        ),
        format!(
            "INSERT INTO listing_counts (status, listings) SELECT status, count(*) FROM listings WHERE id {of} \
             GROUP BY status ON CONFLICT (status) DO UPDATE SET listings = listing_counts.listings + EXCLUDED.listings"
        ),
        format!(
            "INSERT INTO week_listing_counts (status, launch_week, listings) SELECT status, launch_week, count(*) \
             FROM listings WHERE id {of} AND launch_week IS NOT NULL GROUP BY status, launch_week \
             ON CONFLICT (status, launch_week) DO UPDATE SET listings = week_listing_counts.listings + EXCLUDED.listings"
        ),
        format!(
            "INSERT INTO day_listing_counts (status, launch_day, listings) SELECT status, {day}, count(*) \
             FROM listings WHERE id {of} AND launched_at IS NOT NULL GROUP BY status, {day} \
             ON CONFLICT (status, launch_day) DO UPDATE SET listings = day_listing_counts.listings + EXCLUDED.listings",
            day = migration::POSTGRES_LAUNCH_DAY
        ),
        format!(
            "INSERT INTO week_counts (week_start, listings) SELECT week_start, count(*) FROM vote_tallies \
             WHERE listing_id {of} AND live AND votes > 0 GROUP BY week_start \
             ON CONFLICT (week_start) DO UPDATE SET listings = week_counts.listings + EXCLUDED.listings"
        ),
        format!(
            "UPDATE board_counts b SET listings = listings + d.n FROM (SELECT unnest(ARRAY['votes_count', \
             'billboard_cents', 'domain_rating', 'revenue_monthly_cents']) AS metric, unnest(ARRAY[\
             count(*) FILTER (WHERE COALESCE(votes_count, 0) > 0), \
             count(*) FILTER (WHERE COALESCE(billboard_cents, 0) > 0), \
             count(*) FILTER (WHERE COALESCE(domain_rating, 0) > 0), \
             count(*) FILTER (WHERE COALESCE(revenue_monthly_cents, 0) > 0)]) AS n \
             FROM listings WHERE id {of} AND status = 'live') d WHERE b.metric = d.metric AND d.n <> 0"
        ),
    ];
    let details = format!("SELECT listing_details_refresh(ARRAY(SELECT generate_series({first}::bigint, {last})))");
    for s in statements.iter().chain([&details]) {
        txn.execute_unprepared(s).await?;
    }
    Ok(())
}

/// Demo voter accounts `voter-N@voters.example` (never able to sign in: no password), created up to
/// `n`; returns their ids in order.
async fn demo_voters(txn: &DatabaseTransaction, n: usize, now: DateTime<Utc>) -> Result<Vec<i64>, DbErr> {
    use sea_orm::{ColumnTrait, QueryFilter, QueryOrder};
    let voters = || async {
        Ok::<Vec<i64>, DbErr>(
            users::Entity::find()
                .filter(users::Column::IsDemo.eq(true))
                .order_by_asc(users::Column::Id)
                .all(txn)
                .await?
                .into_iter()
                .map(|u| u.id)
                .collect(),
        )
    };
    let mut existing = voters().await?;
    if existing.len() >= n {
        return Ok(existing);
    }
    if txn.get_database_backend() == DbBackend::Postgres {
        // Imports running side by side create voters one at a time: the lock is held to this import's
        // commit, and whoever waited for it reads the voters the other created.
        txn.execute_unprepared(&format!("SELECT pg_advisory_xact_lock({VOTERS_LOCK}, 0)")).await?;
        existing = voters().await?;
        if existing.len() >= n {
            return Ok(existing);
        }
    }
    let mut id = next_id(txn, "users").await?;
    let mut ids = existing;
    let mut rows = Vec::new();
    for i in ids.len()..n {
        rows.push(users::ActiveModel {
            id: Set(id),
            email: Set(format!("voter-{i:05}@voters.example")),
            password_hash: Set(None),
            display_name: Set(format!("Voter {i}")),
            is_admin: Set(false),
            is_demo: Set(true),
            created_at: Set(now.into()),
            // Demo voters have no password and no mailbox; their votes are the demo's own.
            email_verified_at: Set(None),
            suspended_at: Set(None),
            suspended_reason: Set(None),
        });
        ids.push(id);
        id += 1;
    }
    insert_chunked(txn, rows).await?;
    fix_sequence(txn, "users").await?;
    Ok(ids)
}

#[async_trait]
impl DirectoryImport for SeaOrmStore {
    async fn begin_import(&self) -> RepoResult<Box<dyn ImportTransaction + '_>> {
        Ok(Box::new(SeaOrmImport { txn: self.begin_write().await?, db: self.db.clone() }))
    }

    async fn is_empty(&self) -> RepoResult<bool> {
        Ok(listings::Entity::find().count(&self.db).await.map_err(repo_err)? == 0)
    }

    /// On PostgreSQL the listings' ids are reserved first, in the order the calls were made (each waits
    /// its turn before anything else: [`SeaOrmStore::import_turn`]), then written in a transaction of
    /// the call's own, which may overlap another's.
    async fn import_listings(&self, list: &[ImportListing], now: DateTime<Utc>) -> RepoResult<Vec<ListingId>> {
        let first = if self.backend() == DbBackend::Postgres {
            let _turn = self.import_turn.lock().await;
            Some(reserve_ids(&self.db, "listings", list.len()).await.map_err(repo_err)?)
        } else {
            None
        };
        let import = SeaOrmImport { txn: self.begin_write().await?, db: self.db.clone() };
        let ids = import.import_listings_from(list, now, first).await?;
        import.txn.commit().await.map_err(repo_err)?;
        Ok(ids)
    }

    /// Two on PostgreSQL when imports keep their counts by set (`triggers_off_for_import`): what else an
    /// import writes is its own listings' rows, and its counts wait their turn (`keep_by_set`). With the
    /// row triggers on, two imports would update the same count rows in any order and could deadlock.
    /// Measured on the 2-core benchmark machine, PostgreSQL beside the loader: one load of 50 000
    /// listings 37.7 s, two loads of 50 000 into two databases at once 42.0 s (docs/BENCHMARKS.md).
    /// SQLite has one writer.
    async fn import_lanes(&self) -> RepoResult<usize> {
        if self.backend() != DbBackend::Postgres {
            return Ok(1);
        }
        Ok(if may_turn_triggers_off(&self.db).await.map_err(repo_err)? { 2 } else { 1 })
    }

    async fn begin_bulk_load(&self) -> RepoResult<()> {
        crate::db::defer_indexes(&self.db).await.map_err(repo_err)?;
        Ok(())
    }

    async fn end_bulk_load(&self) -> RepoResult<()> {
        crate::db::build_deferred_indexes(&self.db).await.map_err(repo_err)?;
        crate::db::compact_after_bulk_load(&self.db).await.map_err(repo_err)?;
        // The loaded listings' terms, so searches read their counts from the start.
        domain::ports::ListingRepository::refresh_search_terms(self).await?;
        Ok(())
    }
}

/// An import's one transaction ([`DirectoryImport::begin_import`]); dropped without a commit, sqlx
/// rolls it back.
struct SeaOrmImport {
    txn: DatabaseTransaction,
    /// The pool, for what must not wait for this transaction (`reserve_ids`).
    db: DatabaseConnection,
}

impl SeaOrmImport {
    /// [`ImportTransaction::import_listings`], with the listings' ids from `first` on when the caller
    /// reserved them already (otherwise reserved here on PostgreSQL, read from the table on SQLite).
    ///
    /// On SQLite the full-text index waits for the listings' links (their category tokens) and takes
    /// each listing once, at the end (migration 61): its triggers stand aside while
    /// `listings_fts_deferred` has its row, which is taken away again whether or not the import
    /// succeeded (a caller that went on with the transaction after a failure would otherwise leave
    /// every later listing out of the index).
    async fn import_listings_from(
        &self,
        list: &[ImportListing],
        now: DateTime<Utc>,
        first: Option<i64>,
    ) -> RepoResult<Vec<ListingId>> {
        let txn = &self.txn;
        if txn.get_database_backend() != DbBackend::Sqlite {
            return self.write_listings(list, now, first).await;
        }
        txn.execute_unprepared("INSERT OR IGNORE INTO listings_fts_deferred (id) VALUES (1)")
            .await
            .map_err(repo_err)?;
        let written = self.write_listings(list, now, first).await;
        let indexed = match written.as_deref() {
            Ok([first, .., last]) | Ok([first @ last]) => {
                let mut done = Ok(());
                for sql in migration::sqlite_index_imported() {
                    let range = [first.get().into(), last.get().into()];
                    done =
                        txn.execute_raw(Statement::from_sql_and_values(DbBackend::Sqlite, sql, range)).await.map(drop);
                    if done.is_err() {
                        break;
                    }
                }
                done
            }
            _ => Ok(()),
        };
        let cleared = txn.execute_unprepared("DELETE FROM listings_fts_deferred").await;
        let ids = written?;
        indexed.map_err(repo_err)?;
        cleared.map_err(repo_err)?;
        Ok(ids)
    }

    /// The rows of [`SeaOrmImport::import_listings_from`].
    async fn write_listings(
        &self,
        list: &[ImportListing],
        now: DateTime<Utc>,
        first: Option<i64>,
    ) -> RepoResult<Vec<ListingId>> {
        let txn = &self.txn;
        names_held(txn, list).await?;
        let by_set = triggers_off_for_import(txn).await.map_err(repo_err)?;
        let max_votes = list.iter().map(|l| l.votes.len()).max().unwrap_or(0);
        let voters = demo_voters(txn, max_votes, now).await.map_err(repo_err)?;
        let first = match (first, txn.get_database_backend()) {
            (Some(first), _) => Ok(first),
            (None, DbBackend::Postgres) => reserve_ids(&self.db, "listings", list.len()).await,
            (None, _) => next_id(txn, "listings").await,
        }
        .map_err(repo_err)?;
        let mut rows = Vec::with_capacity(list.len());
        let mut view_rows = Vec::with_capacity(list.len());
        let (mut cats, mut founders_rows, mut vote_rows, mut tally_rows, mut review_rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut update_rows, mut milestone_rows, mut story_rows, mut bill_rows, mut dr_rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, item) in list.iter().enumerate() {
            let id = first + i as i64;
            let mut am = active_model(&item.listing, Some(id), item.listing.slug.as_str(), now);
            am.votes_count = Set(item.votes.len() as i64);
            am.follows_count = Set(item.follows);
            am.trending_score = Set(trending::rank(item.votes.iter().map(|at| (*at, 1.0))));
            let rating = CommunityRating::from_reviews(&item.reviews);
            am.rating_avg = Set(rating.map(|r| r.average));
            am.rating_count = Set(rating.map_or(0, |r| r.count as i32));
            let billboard: i64 = item.billboard.iter().map(|(c, _)| c.get()).sum();
            am.billboard_cents = Set(billboard);
            // What each of its tallies copies, as written here.
            let summary = (
                am.slug.clone().unwrap(),
                am.name.clone().unwrap(),
                am.url.clone().unwrap(),
                am.tagline.clone().unwrap(),
                am.votes_count.clone().unwrap(),
                am.launch_week.clone().unwrap(),
            );
            rows.push(am);
            view_rows.push(listing_view_totals::ActiveModel {
                listing_id: Set(id),
                status: Set(item.listing.lifecycle.status().as_str().to_owned()),
                views: Set(item.views),
            });
            cats.extend(category_rows(id, &item.listing));
            for (pos, (fid, title)) in item.founders.iter().enumerate() {
                founders_rows.push(listing_founders::ActiveModel {
                    listing_id: Set(id),
                    founder_id: Set(fid.get()),
                    title: Set(title.clone()),
                    position: Set(pos as i32),
                });
            }
            let mut weeks: std::collections::BTreeMap<chrono::NaiveDate, i64> = std::collections::BTreeMap::new();
            for at in &item.votes {
                *weeks.entry(LaunchWeek::containing(at.date_naive()).monday()).or_default() += 1;
            }
            tally_rows.extend(weeks.into_iter().map(|(week, n)| vote_tallies::ActiveModel {
                week_start: Set(week),
                listing_id: Set(id),
                votes: Set(n),
                // What the trigger `tally_live_written` sets (it runs unless `triggers_off_for_import`
                // turned it off): the listing's liveness and summary (migrations 20 and 72).
                live: Set(item.listing.lifecycle.status() == ListingStatus::Live),
                slug: Set(summary.0.clone()),
                name: Set(summary.1.clone()),
                url: Set(summary.2.clone()),
                tagline: Set(summary.3.clone()),
                votes_count: Set(summary.4),
                launch_week: Set(summary.5),
            }));
            for (v, at) in item.votes.iter().enumerate() {
                vote_rows.push(votes::ActiveModel {
                    listing_id: Set(id),
                    user_id: Set(voters[v]),
                    created_at: Set((*at).into()),
                    ..Default::default()
                });
            }
            for r in &item.reviews {
                review_rows.push(reviews::ActiveModel {
                    listing_id: Set(id),
                    user_id: Set(None),
                    rating: Set(i16::from(r.rating)),
                    body: Set(String::new()),
                    genuine: Set(r.genuine),
                    created_at: Set(now.into()),
                    ..Default::default()
                });
            }
            for u in &item.updates {
                update_rows.push(listing_updates::ActiveModel {
                    listing_id: Set(id),
                    title: Set(u.title.clone()),
                    body: Set(u.body.clone()),
                    posted_at: Set(u.posted_at.into()),
                    ..Default::default()
                });
            }
            for m in &item.milestones {
                milestone_rows.push(milestones::ActiveModel {
                    listing_id: Set(id),
                    date: Set(m.date),
                    title: Set(m.title.as_str().to_owned()),
                    description: Set(m.description.as_str().to_owned()),
                    url: Set(m.url.clone()),
                    ..Default::default()
                });
            }
            if let Some(story) = &item.story {
                let sections: Vec<(&str, &str)> = story.sections().collect();
                story_rows.push(stories::ActiveModel {
                    listing_id: Set(id),
                    sections: Set(serde_json::to_string(&sections).unwrap_or_else(|_| "[]".into())),
                    updated_at: Set(now.into()),
                });
            }
            for (cents, at) in &item.billboard {
                bill_rows.push(billboard_contributions::ActiveModel {
                    listing_id: Set(id),
                    order_line_id: Set(None),
                    amount_cents: Set(cents.get()),
                    created_at: Set((*at).into()),
                    ..Default::default()
                });
            }
            if let Some(dr) = &item.listing.domain_rating {
                if let Some(prev) = dr.previous {
                    dr_rows.push(domain_ratings::ActiveModel {
                        listing_id: Set(id),
                        rating: Set(i16::from(prev)),
                        source: Set(dr.source.clone()),
                        measured_on: Set(dr.measured_on - chrono::Duration::days(30)),
                        ..Default::default()
                    });
                }
                dr_rows.push(domain_ratings::ActiveModel {
                    listing_id: Set(id),
                    rating: Set(i16::from(dr.value)),
                    source: Set(dr.source.clone()),
                    measured_on: Set(dr.measured_on),
                    ..Default::default()
                });
            }
        }
        // (`reserve_ids` moved PostgreSQL's sequence already.)
        insert_chunked(txn, rows).await.map_err(repo_err)?;
        // Each listing's view total: over the row its trigger added (`listing_view_totals_added`), or
        // in its place where `triggers_off_for_import` turned the triggers off.
        let totals = sea_orm::sea_query::OnConflict::column(listing_view_totals::Column::ListingId)
            .update_columns([listing_view_totals::Column::Status, listing_view_totals::Column::Views])
            .to_owned();
        upsert_chunked(txn, view_rows, Some(totals)).await.map_err(repo_err)?;
        insert_chunked(txn, cats).await.map_err(repo_err)?;
        insert_chunked(txn, founders_rows).await.map_err(repo_err)?;
        insert_chunked(txn, vote_rows).await.map_err(repo_err)?;
        insert_chunked(txn, tally_rows).await.map_err(repo_err)?;
        insert_chunked(txn, review_rows).await.map_err(repo_err)?;
        insert_chunked(txn, update_rows).await.map_err(repo_err)?;
        insert_chunked(txn, milestone_rows).await.map_err(repo_err)?;
        insert_chunked(txn, story_rows).await.map_err(repo_err)?;
        insert_chunked(txn, bill_rows).await.map_err(repo_err)?;
        insert_chunked(txn, dr_rows).await.map_err(repo_err)?;
        if by_set {
            if !list.is_empty() {
                keep_by_set(txn, first, first + list.len() as i64 - 1).await.map_err(repo_err)?;
            }
            // The rest of the import's transaction (its awards, its next batch's founders) runs its
            // triggers again: only these listings' rows were kept by set.
            txn.execute_unprepared("SET LOCAL session_replication_role = DEFAULT").await.map_err(repo_err)?;
        }
        Ok((0..list.len()).map(|i| ListingId::from_db(first + i as i64)).collect())
    }
}

#[async_trait]
impl ImportTransaction for SeaOrmImport {
    async fn import_founders(&self, list: &[NewFounder]) -> RepoResult<Vec<FounderId>> {
        let txn = &self.txn;
        let first = next_id(txn, "founders").await.map_err(repo_err)?;
        let now = Utc::now();
        let rows = list
            .iter()
            .enumerate()
            .map(|(i, f)| founders::ActiveModel {
                id: Set(first + i as i64),
                slug: Set(f.slug.as_str().to_owned()),
                name: Set(f.name.clone()),
                headline: Set(f.headline.clone()),
                bio: Set(f.bio.clone()),
                country: Set(f.country.clone()),
                avatar_url: Set(f.avatar_url.clone()),
                socials: Set(socials_to_json(&f.socials)),
                user_id: Set(None),
                created_at: Set(now.into()),
            })
            .collect();
        insert_chunked(txn, rows).await.map_err(repo_err)?;
        fix_sequence(txn, "founders").await.map_err(repo_err)?;
        Ok((0..list.len()).map(|i| FounderId::from_db(first + i as i64)).collect())
    }

    async fn import_listings(&self, list: &[ImportListing], now: DateTime<Utc>) -> RepoResult<Vec<ListingId>> {
        self.import_listings_from(list, now, None).await
    }

    async fn import_blog_posts(&self, posts: &[NewBlogPost]) -> RepoResult<usize> {
        let rows: Vec<blog_posts::ActiveModel> = posts
            .iter()
            .map(|p| blog_posts::ActiveModel {
                slug: Set(p.slug.as_str().to_owned()),
                title: Set(p.title.clone()),
                summary: Set(p.summary.clone()),
                body_markdown: Set(p.body_markdown.clone()),
                author: Set(p.author.clone()),
                tags: Set(list_to_json(&p.tags)),
                faqs: Set(faqs_to_json(&p.faqs)),
                published_at: Set(p.published_at.map(Into::into)),
                ..Default::default()
            })
            .collect();
        let n = rows.len();
        insert_chunked(&self.txn, rows).await.map_err(repo_err)?;
        Ok(n)
    }

    async fn import_awards(&self, list: &[Award]) -> RepoResult<usize> {
        let rows: Vec<awards::ActiveModel> = list
            .iter()
            .map(|a| awards::ActiveModel {
                week_start: Set(a.week.monday()),
                rank: Set(i16::from(a.rank.get())),
                listing_id: Set(a.listing_id.get()),
                votes: Set(a.votes),
                ..Default::default()
            })
            .collect();
        let n = rows.len();
        insert_chunked(&self.txn, rows).await.map_err(repo_err)?;
        Ok(n)
    }

    async fn commit(self: Box<Self>) -> RepoResult<()> {
        self.txn.commit().await.map_err(repo_err)
    }
}
