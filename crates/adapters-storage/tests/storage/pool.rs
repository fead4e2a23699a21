//! What a pooled PostgreSQL connection sends when it goes back to the pool (the patched sqlx-core in
//! `vendor/`): nothing after a statement that finished, and the rollback of a transaction dropped
//! without commit or rollback, at once — on SQLite too, whose connections are no longer pinged on release.
//! And what replaces the ping where it mattered: a connection the server closed is not used again.

use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement, TransactionTrait};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback proxy in front of PostgreSQL that counts the Sync messages clients send (one ends every
/// extended-protocol exchange, and sqlx's ping is a Sync alone) and the Execute messages (one per
/// statement run; a ping or a statement's preparation sends none).
struct SyncCounter {
    port: u16,
    syncs: Arc<AtomicUsize>,
    executes: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SyncCounter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `url` with its host and port replaced by the proxy's, over plain TCP so the proxy can read the messages.
fn through(url: &str, port: u16) -> String {
    let via = test_support::url_via(url, &format!("127.0.0.1:{port}"));
    let sep = if via.contains('?') { '&' } else { '?' };
    format!("{via}{sep}sslmode=disable")
}

/// Reads one frontend message into `buf` (the first of a connection has no type byte); returns its type.
async fn message(from: &mut tokio::net::tcp::OwnedReadHalf, first: bool, buf: &mut Vec<u8>) -> Option<u8> {
    buf.clear();
    let mut head = [0u8; 5];
    let head = if first { &mut head[1..] } else { &mut head[..] };
    from.read_exact(head).await.ok()?;
    buf.extend_from_slice(head);
    let len = u32::from_be_bytes(head[head.len() - 4..].try_into().ok()?) as usize;
    let start = buf.len();
    buf.resize(start + len.checked_sub(4)?, 0);
    from.read_exact(&mut buf[start..]).await.ok()?;
    Some(if first { 0 } else { head[0] })
}

impl SyncCounter {
    async fn start(upstream: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound address").port();
        let syncs = Arc::new(AtomicUsize::new(0));
        let executes = Arc::new(AtomicUsize::new(0));
        let counted = (syncs.clone(), executes.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = tokio::net::TcpStream::connect(&upstream).await.expect("reach PostgreSQL");
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
                });
                let counted = counted.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut first = true;
                    while let Some(kind) = message(&mut client_read, first, &mut buf).await {
                        first = false;
                        match kind {
                            b'S' => counted.0.fetch_add(1, Ordering::SeqCst),
                            b'E' => counted.1.fetch_add(1, Ordering::SeqCst),
                            _ => 0,
                        };
                        if server_write.write_all(&buf).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        Self { port, syncs, executes, task }
    }
}

/// A pool of one connection to `url` (so every statement runs on the same, already prepared, connection),
/// checked before use only after 30 s idle, as `db::connect`'s pool is.
async fn one_connection(url: &str) -> DatabaseConnection {
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.max_connections(1)
        .min_connections(1)
        .test_before_acquire_if_idle_for(Duration::from_secs(30))
        .sqlx_logging(false);
    Database::connect(opts).await.expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_goes_back_to_the_pool_without_a_round_trip() {
    let Some(t) = test_support::postgres().await else { return };
    let proxy = SyncCounter::start(test_support::url_parts(&t.url, 5432).2).await;
    let db = one_connection(&through(&t.url, proxy.port)).await;
    let select = || Statement::from_sql_and_values(DbBackend::Postgres, "SELECT $1::int AS n", [7i32.into()]);
    db.query_one_raw(select()).await.expect("prepare on the connection");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = proxy.syncs.load(Ordering::SeqCst);
    for _ in 0..10 {
        let row = db.query_one_raw(select()).await.expect("select").expect("a row");
        assert_eq!(row.try_get::<i32>("", "n").expect("n"), 7);
    }
    // The release runs on a spawned task: give a ping, if one is sent, time to arrive.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = proxy.syncs.load(Ordering::SeqCst) - before;
    assert_eq!(sent, 10, "ten statements, each one Sync; {sent} Syncs means the pool pinged on release");
    db.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_transaction_releases_its_locks_when_its_connection_goes_back() {
    let Some(t) = test_support::postgres().await else { return };
    let db = one_connection(&t.url).await;
    db.execute_unprepared("CREATE TABLE held (id int PRIMARY KEY); INSERT INTO held VALUES (1)").await.expect("table");
    {
        let txn = db.begin().await.expect("begin");
        txn.execute_unprepared("SELECT id FROM held WHERE id = 1 FOR UPDATE").await.expect("lock the row");
        // Dropped here without commit or rollback, as when a request's future is cancelled.
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Another connection must get the row's lock: the rollback was sent when the connection went back,
    // not left in its buffer until someone next uses it.
    let other = one_connection(&t.url).await;
    let txn = other.begin().await.expect("begin");
    txn.execute_unprepared("SET LOCAL lock_timeout = '2s'").await.expect("timeout");
    txn.execute_unprepared("SELECT id FROM held WHERE id = 1 FOR UPDATE")
        .await
        .expect("the dropped transaction's lock is gone");
    txn.rollback().await.expect("rollback");
    other.close().await.expect("close");
    db.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_sqlite_transaction_releases_the_write_lock_when_its_connection_goes_back() {
    let t = test_support::sqlite();
    let db = one_connection(&t.url).await;
    db.execute_unprepared("CREATE TABLE held (id integer PRIMARY KEY)").await.expect("table");
    {
        let txn = db.begin().await.expect("begin");
        txn.execute_unprepared("INSERT INTO held VALUES (1)").await.expect("take the write lock");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let other = one_connection(&t.url).await;
    other.execute_unprepared("PRAGMA busy_timeout = 2000").await.expect("timeout");
    other.execute_unprepared("INSERT INTO held VALUES (2)").await.expect("the dropped transaction's lock is gone");
    let n = other.query_one_raw(Statement::from_string(DbBackend::Sqlite, "SELECT COUNT(*) AS n FROM held")).await;
    let n: i64 = n.expect("count").expect("a row").try_get("", "n").expect("n");
    assert_eq!(n, 1, "the dropped transaction's row was rolled back");
    other.close().await.expect("close");
    db.close().await.expect("close");
}

/// PostgreSQL closes the pool's connections (a restart or a failover; here its backends are
/// terminated): the read that finds its connection closed fails, and the reads after it are served on
/// new connections. Before, the closed connection went back to the pool without a ping and, hot, was
/// never pinged before use either: every read after the restart failed, until the service itself was
/// restarted (seen by hand: 65 requests of 65 answered 500 after `pg_ctlcluster restart`, and
/// `/readyz` said 503).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_the_server_closed_are_replaced_not_reused() {
    use domain::ports::CategoryRepository;
    let Some(t) = crate::harness::postgres().await else { return };
    let store = &t.store;
    for _ in 0..5 {
        store.list_categories().await.expect("a read before");
    }
    let admin = one_connection(&test_support::postgres_admin_url()).await;
    let terminated = admin
        .query_all_raw(Statement::from_string(
            DbBackend::Postgres,
            format!(
                "SELECT pg_terminate_backend(pid) AS gone FROM pg_stat_activity WHERE datname = '{}'",
                store.connection().get_postgres_connection_pool().connect_options().get_database().unwrap_or_default()
            ),
        ))
        .await
        .expect("terminate the store's connections");
    assert!(!terminated.is_empty(), "the store had connections to close");
    admin.close().await.expect("close");
    tokio::time::sleep(Duration::from_millis(200)).await;

    let mut results = Vec::new();
    for _ in 0..20 {
        let read = store.list_categories().await;
        // A lost connection is the store unreachable for a moment (a 503 to retry), not a failure.
        if let Err(e) = &read {
            assert!(matches!(e, domain::ports::RepoError::Unavailable(_)), "{e:?}");
        }
        results.push(read.is_ok());
        // The failed read's connection goes back to the pool on a spawned task.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let failed = results.iter().filter(|ok| !**ok).count();
    assert!(failed <= 1, "{failed} of 20 reads failed after the connections were closed: {results:?}");
    assert!(results[1..].iter().all(|ok| *ok), "reads after the first must be served: {results:?}");
    assert!(adapters_storage::db::ping(store.connection()).await.is_ok(), "the readiness ping");
}

/// Live listings of these names in the categories' first, imported into `t`.
async fn live_listings(t: &crate::harness::TestDb, names: impl Iterator<Item = String>) {
    use domain::ports::DirectoryImport;
    let shared: Arc<dyn domain::ports::Store> = Arc::new(t.store.clone());
    let dev = crate::cat_id(&crate::seed_categories(&shared).await, "dev-tools");
    let new: Vec<_> =
        names.map(|n| crate::import(crate::listing(&n, domain::listing::ListingStatus::Live, Some(dev)), 0)).collect();
    t.store.import_listings(&new, crate::now()).await.expect("import");
}

/// Profile reads asked at once share statements on PostgreSQL (`crate::profiles`): 64 reads of 64
/// listings run a few statements, not 64. Read one at a time, each still runs its own: nobody waits
/// for company. Statements are counted by their Execute messages, so a ping the pool sends before use
/// is not one: under `cargo test` this binary's tests share a process, and one that terminates
/// backends makes the pool ping its older connections for a minute (`db::LOST_AT_MS`) — counted as
/// Syncs, that once read as 21 statements for ten reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile_reads_asked_together_share_statements() {
    use domain::ports::ListingRepository;
    let Some(t) = crate::harness::postgres().await else { return };
    live_listings(&t, (0..64).map(|i| format!("Many {i}"))).await;
    let proxy = SyncCounter::start(test_support::url_parts(t.url(), 5432).2).await;
    let store = adapters_storage::SeaOrmStore::new(
        adapters_storage::db::connect(&through(t.url(), proxy.port)).await.expect("connect through the proxy"),
    );
    let slugs: Vec<_> = (0..64).map(|i| crate::slug(&format!("many-{i}"))).collect();
    let together = || {
        futures::future::join_all(slugs.iter().map(|s| {
            let (store, s) = (store.clone(), s.clone());
            tokio::spawn(async move { store.listing_with_details(&s).await.expect("a read").map(|(l, _)| l.slug) })
        }))
    };
    // Once to open the readers' connections and prepare the statement on them.
    together().await;
    let before = proxy.executes.load(Ordering::SeqCst);
    let read = together().await;
    let sent = proxy.executes.load(Ordering::SeqCst) - before;
    for (s, got) in slugs.iter().zip(read) {
        assert_eq!(got.expect("joined").as_ref(), Some(s), "each read gets its own listing");
    }
    assert!((1..=16).contains(&sent), "64 reads asked at once ran {sent} statements");

    let before = proxy.executes.load(Ordering::SeqCst);
    for s in &slugs[..10] {
        assert!(store.listing_with_details(s).await.expect("a read").is_some());
    }
    let sent = proxy.executes.load(Ordering::SeqCst) - before;
    assert_eq!(sent, 10, "ten reads one at a time ran {sent} statements");
}

/// A profile read alone runs PostgreSQL's generic plan of its prepared statement, planned once. Read
/// with `slug = ANY(…)` like the shared reads, a slug alone was planned again at every run (the
/// planner guesses a list holds 10 slugs, so the generic plan looked dearer than one made for the
/// value): 45 % fewer profile reads a second at 2 concurrent requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_read_alone_is_not_planned_again_each_time() {
    use domain::ports::ListingRepository;
    let Some(t) = crate::harness::postgres().await else { return };
    // Enough listings, and their statistics, for the planner's estimates to be a real table's.
    live_listings(&t, std::iter::once("Alone".to_owned()).chain((1..3000).map(|i| format!("Other {i}")))).await;
    t.store.connection().execute_unprepared("ANALYZE").await.expect("analyze");
    // One connection, so the statement's counts below are the reads' own.
    let conn = adapters_storage::db::connect_with(t.url(), Some(1)).await.expect("connect");
    let store = adapters_storage::SeaOrmStore::new(conn);
    for _ in 0..20 {
        assert!(store.listing_with_details(&crate::slug("alone")).await.expect("a read").is_some());
    }
    let plans = store
        .connection()
        .query_all_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements \
             WHERE statement LIKE '%d.founders_json%' AND statement NOT LIKE '%pg_prepared_statements%'",
        ))
        .await
        .expect("the connection's prepared statements");
    let counts: Vec<(i64, i64)> = plans
        .iter()
        .map(|r| (r.try_get("", "generic").expect("generic"), r.try_get("", "custom").expect("custom")))
        .collect();
    assert_eq!(counts.len(), 1, "one profile statement prepared: {counts:?}");
    let (generic, custom) = counts[0];
    assert!(custom <= 5 && generic >= 15, "20 reads alone: {generic} generic plans, {custom} planned for the value");
}

/// The backends of the read pipe's connections to `t`'s database (`adapters_storage::pipe`), by the
/// application name it gives them.
async fn pipe_backends(t: &crate::harness::TestDb) -> Vec<i32> {
    pipe_backends_where(t, "").await
}

/// [`pipe_backends`] whose `pg_stat_activity` rows also meet `and` (`AND …`, or nothing).
async fn pipe_backends_where(t: &crate::harness::TestDb, and: &str) -> Vec<i32> {
    let admin = one_connection(&test_support::postgres_admin_url()).await;
    let options = t.store.connection().get_postgres_connection_pool().connect_options();
    let db = options.get_database().unwrap_or_default();
    let rows = admin
        .query_all_raw(Statement::from_string(
            DbBackend::Postgres,
            format!(
                "SELECT pid FROM pg_stat_activity WHERE datname = '{db}' \
                 AND application_name = 'launchdir read pipe' {and} ORDER BY pid"
            ),
        ))
        .await
        .expect("the pipe's backends");
    admin.close().await.expect("close");
    rows.iter().map(|r| r.try_get("", "pid").expect("pid")).collect()
}

/// Every public read this store answers, as one value to compare.
async fn short_reads(store: &adapters_storage::SeaOrmStore) -> String {
    use domain::listing::{ListingSearch, SearchSort};
    use domain::paging::PageRequest;
    use domain::ports::{CategoryRepository, ListingRepository};
    let week = domain::week::LaunchWeek::of(crate::now());
    let mut trending = ListingSearch { sort: SearchSort::Trending, ..Default::default() };
    let first = trending.clone();
    trending.sort = SearchSort::Votes;
    let page2 = PageRequest::parse(Some(2), Some(3)).expect("a page");
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        store.live_listing_counts().await.expect("counts").iter().collect::<std::collections::BTreeMap<_, _>>(),
        store.search_listings(&first, PageRequest::default()).await.expect("trending"),
        store.search_listings(&trending, page2).await.expect("by votes, page 2"),
        store.ranked(domain::listing::RankMetric::Votes, PageRequest::default()).await.expect("all-time board"),
        store.weekly_votes(week, PageRequest::default()).await.expect("weekly board"),
        store.weekly_votes(week.plus_weeks(-3), PageRequest::default()).await.expect("a week with no votes"),
        store.week_launches(week, domain::listing::StatusFilter::Live, 50).await.expect("the week's launches"),
    )
}

/// On PostgreSQL the short public reads go through the read pipe (`adapters_storage::pipe`): a few
/// connections of their own, shared by every read. They answer exactly what the pool answers, read
/// many at once, and take no more connections than the pipe has lanes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_reads_on_the_read_pipe_answer_as_the_pool_does() {
    let Some(t) = crate::harness::postgres().await else { return };
    assert!(t.store.has_read_pipe(), "a loopback database gets the pipe");
    let shared: Arc<dyn domain::ports::Store> = Arc::new(t.store.clone());
    let dev = crate::cat_id(&crate::seed_categories(&shared).await, "dev-tools");
    let new: Vec<_> = (0..12)
        .map(|i| {
            crate::import(crate::listing(&format!("Piped {i}"), domain::listing::ListingStatus::Live, Some(dev)), i)
        })
        .collect();
    use domain::ports::DirectoryImport;
    t.store.import_listings(&new, crate::now()).await.expect("import");

    let pool_only = adapters_storage::SeaOrmStore::new(adapters_storage::db::connect(t.url()).await.expect("connect"));
    assert!(!pool_only.has_read_pipe());
    let expected = short_reads(&pool_only).await;
    assert!(expected.contains("Piped 11"), "{expected}");
    assert_eq!(short_reads(&t.store).await, expected, "one read at a time");
    let together = futures::future::join_all((0..24).map(|_| short_reads(&t.store))).await;
    assert!(together.iter().all(|r| *r == expected), "24 of each read at once");

    let lanes = pipe_backends(&t).await;
    assert!(!lanes.is_empty() && lanes.len() <= 4, "the pipe's connections: {lanes:?}");
}

/// On PostgreSQL with the read pipe, profile reads are read on its lanes too (`adapters_storage::profiles`:
/// each thread's readers on its own lane): alone or many at once, each gets the listing and details the
/// pool reads, and the statement ran on the pipe's connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile_reads_on_the_read_pipe_answer_as_the_pool_does() {
    use domain::ports::ListingRepository;
    let Some(t) = crate::harness::postgres().await else { return };
    live_listings(&t, (0..24).map(|i| format!("Profiled {i}"))).await;
    let pool_only = adapters_storage::SeaOrmStore::new(adapters_storage::db::connect(t.url()).await.expect("connect"));
    let slugs: Vec<_> =
        (0..24).map(|i| crate::slug(&format!("profiled-{i}"))).chain([crate::slug("no-such")]).collect();
    let mut expected = Vec::new();
    for s in &slugs {
        expected.push(pool_only.listing_with_details(s).await.expect("a read through the pool"));
    }
    assert!(expected[..24].iter().all(Option::is_some) && expected[24].is_none(), "{expected:?}");
    for (s, want) in slugs.iter().zip(&expected) {
        assert_eq!(&t.store.listing_with_details(s).await.expect("a read alone"), want, "{s}");
    }
    let together = futures::future::join_all(slugs.iter().map(|s| {
        let (store, s) = (t.store.clone(), s.clone());
        tokio::spawn(async move { store.listing_with_details(&s).await.expect("a read") })
    }))
    .await;
    for (got, want) in together.into_iter().zip(&expected) {
        assert_eq!(&got.expect("joined"), want, "read at once");
    }
    let on_pipe = pipe_backends_where(&t, "AND query LIKE '%d.founders_json%'").await;
    assert!(!on_pipe.is_empty(), "the profile statement ran on the read pipe's connections");
}

/// PostgreSQL closes the read pipe's connections (a restart, or here its backends terminated): reads
/// go on being answered, and the pipe opens new connections instead of failing on the closed ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_pipe_connections_the_server_closed_are_opened_again() {
    use domain::ports::CategoryRepository;
    let Some(t) = crate::harness::postgres().await else { return };
    let reads = || futures::future::join_all((0..8).map(|_| t.store.live_listing_counts()));
    assert!(reads().await.iter().all(Result::is_ok), "reads before");
    let before = pipe_backends(&t).await;
    assert!(!before.is_empty(), "the reads opened the pipe");

    let admin = one_connection(&test_support::postgres_admin_url()).await;
    let list = before.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
    admin
        .execute_unprepared(&format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid IN ({list})"))
        .await
        .expect("terminate the pipe's connections");
    admin.close().await.expect("close");
    tokio::time::sleep(Duration::from_millis(200)).await;

    for round in 0..5 {
        let answered = reads().await;
        assert!(answered.iter().all(Result::is_ok), "round {round} after the close: {answered:?}");
    }
    let after = pipe_backends(&t).await;
    assert!(!after.is_empty(), "the pipe opened again");
    assert!(after.iter().all(|pid| !before.contains(pid)), "no closed connection kept: {before:?} then {after:?}");
}

/// Sessions of `t`'s database waiting for a lock inside the text search.
async fn searches_waiting(db: &DatabaseConnection) -> i64 {
    let row = db
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() \
             AND wait_event_type = 'Lock' AND query LIKE '%listing_text_search(%'",
        ))
        .await
        .expect("pg_stat_activity")
        .expect("a row");
    row.try_get::<i64>("", "n").expect("n")
}

/// SQLite runs a list by a filter through its pool, the connections its writes need too: at most
/// `slots` of them search at once, the others wait their turn. (The slots were PostgreSQL's alone; a
/// script sending 16 filtered word searches at once took every pooled connection, and new viewers'
/// pages, each a write, fell from 2 600 to 22 a second.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_searches_through_the_pool_take_a_slot() {
    use domain::paging::PageRequest;
    use domain::ports::ListingRepository;
    let t = crate::harness::sqlite().await.expect("sqlite");
    live_listings(&t, (0..40).map(|i| format!("Slotted {i}"))).await;
    let store = t.store.clone().with_search_slots(1, Duration::from_secs(30));
    assert_eq!(store.search_slot_stats().slots, 1, "SQLite has its slots");
    let filtered = domain::listing::ListingSearch {
        category: Some(crate::slug("dev-tools")),
        sort: domain::listing::SearchSort::Newest,
        ..crate::search(Some("slotted"))
    };
    let searches: Vec<_> = (0..6)
        .map(|_| {
            let (store, s) = (store.clone(), filtered.clone());
            tokio::spawn(async move { store.search_listings(&s, PageRequest::default()).await })
        })
        .collect();
    while !searches.iter().all(tokio::task::JoinHandle::is_finished) {
        let seen = store.search_slot_stats();
        assert!(seen.in_use <= 1, "{seen:?}");
        tokio::task::yield_now().await;
    }
    for s in searches {
        let page = s.await.expect("joined").expect("answered in turn");
        assert_eq!(page.total, 40, "{page:?}");
    }
    assert_eq!(store.search_slot_stats().in_use, 0, "every slot given back");
}

/// What each of `tasks` answered, in order.
async fn answers_of<T>(tasks: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    futures::future::join_all(tasks).await.into_iter().map(|r| r.expect("joined")).collect()
}

/// A typed last word with more completions than SQLite spells out (a letter or two) stays a prefix
/// whose doclists FTS5 merges whole (at 100k listings one letter took 100–250 ms): such a search takes
/// a slot, and is answered busy when none comes free in time, rather than holding its HTTP worker's
/// thread. A whole word still runs on the calling thread and never waits for a slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_prefix_searches_take_a_slot_and_whole_words_do_not() {
    use domain::paging::PageRequest;
    use domain::ports::{DirectoryImport, ListingRepository};
    let t = crate::harness::sqlite().await.expect("sqlite");
    let shared: Arc<dyn domain::ports::Store> = Arc::new(t.store.clone());
    let dev = crate::cat_id(&crate::seed_categories(&shared).await, "dev-tools");
    let completions = (b'a'..=b'l').map(|c| format!("pref{}", c as char)).collect::<Vec<_>>().join(" ");
    let new: Vec<_> = (0..300)
        .map(|i| {
            let mut l = crate::listing(&format!("Prefixed {i}"), domain::listing::ListingStatus::Live, Some(dev));
            l.profile.tagline = format!("{completions} number{i}");
            crate::import(l, 0)
        })
        .collect();
    t.store.import_listings(&new, crate::now()).await.expect("import");
    let store = t.store.clone().with_search_slots(1, Duration::from_millis(1));
    let at_once = |q: &'static str| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(
                    async move { store.search_listings(&crate::search(Some(q)), PageRequest::default()).await },
                )
            })
            .collect();
        answers_of(handles)
    };
    for answer in at_once("prefixed").await {
        assert_eq!(answer.expect("a whole word takes no slot").total, 300);
    }
    assert_eq!(store.search_slot_stats().busy_total, 0, "no whole word waited for a slot");
    let answers = at_once("pref").await;
    let busy = answers.iter().filter(|a| matches!(a, Err(domain::ports::RepoError::Unavailable(_)))).count();
    assert!(busy >= 1, "eight prefixes at once, one slot, 1 ms to wait: some are answered busy");
    for answer in answers.into_iter().filter_map(Result::ok) {
        assert_eq!(answer.total, 300, "the prefix matches every listing");
    }
    assert_eq!(store.search_slot_stats().busy_total, busy as u64);
}

/// A page past the first thousand rows of a list or a board is read through the pool in a search
/// slot: the database walks every row before it (page 1 000 of 20 took 35–90 ms on PostgreSQL at 100k,
/// and eight connections asking for it on the short reads' pipe took profile reads' p99 from 2.7 to
/// 18 ms). The first pages stay short reads and never wait for a slot. Both stores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_pages_take_a_slot_and_the_first_pages_do_not() {
    use domain::listing::{ListingSearch, SearchSort};
    use domain::paging::PageRequest;
    use domain::ports::ListingRepository;
    let mut dbs = vec![crate::harness::sqlite().await.expect("sqlite")];
    dbs.extend(crate::harness::postgres().await);
    for t in dbs {
        let backend = format!("{:?}", t.store.backend());
        live_listings(&t, (0..2_100).map(|i| format!("Deep {i}"))).await;
        let store = t.store.clone().with_search_slots(1, Duration::ZERO);
        let reads = |page: i64| {
            let handles: Vec<_> = (0..8)
                .map(|k| {
                    let store = store.clone();
                    let page = PageRequest::parse(Some(page), Some(100)).unwrap();
                    tokio::spawn(async move {
                        if k % 2 == 0 {
                            let s = ListingSearch { sort: SearchSort::Votes, ..Default::default() };
                            store.search_listings(&s, page).await.map(|p| p.items.len())
                        } else {
                            store
                                .weekly_votes(domain::week::LaunchWeek::of(crate::now()), page)
                                .await
                                .map(|p| p.items.len())
                        }
                    })
                })
                .collect();
            answers_of(handles)
        };
        for answer in reads(2).await {
            answer.unwrap_or_else(|e| panic!("a first page takes no slot ({backend}): {e}"));
        }
        assert_eq!(store.search_slot_stats().busy_total, 0, "{backend}");
        let answers = reads(20).await;
        let busy = answers.iter().filter(|a| matches!(a, Err(domain::ports::RepoError::Unavailable(_)))).count();
        assert!(busy >= 1, "eight deep pages at once, one slot, no wait: some are answered busy ({backend})");
        assert_eq!(store.search_slot_stats().busy_total, busy as u64, "{backend}");
        for answer in answers.into_iter().filter_map(Result::ok) {
            assert!(answer == 100 || answer == 0, "a page of the list, or past the week's tallies ({backend})");
        }
    }
}

/// At most `slots` searches run in PostgreSQL at once; the others wait their turn in the service,
/// then are answered, and a search that waits longer than it may is answered "busy". The searches are
/// held in PostgreSQL by a lock on the search tables (a word's search reads its kept ranked words,
/// migration 54), so the test sees how many got in. Without the
/// slots all six were in PostgreSQL at once, taking six of the pool's connections and sharing the
/// database's cores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_beyond_the_slots_wait_their_turn_outside_postgres() {
    use domain::paging::PageRequest;
    use domain::ports::ListingRepository;
    let Some(t) = crate::harness::postgres().await else { return };
    live_listings(&t, (0..5).map(|i| format!("Slotted {i}"))).await;
    let store = t.store.clone().with_search_slots(2, Duration::from_secs(30));
    let watcher = one_connection(t.url()).await;
    let search = || {
        let store = store.clone();
        tokio::spawn(
            async move { store.search_listings(&crate::search(Some("slotted")), PageRequest::default()).await },
        )
    };

    let locker = one_connection(t.url()).await;
    let txn = locker.begin().await.expect("begin");
    txn.execute_unprepared("LOCK TABLE listing_search, listing_search_terms IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock");
    let searches: Vec<_> = (0..6).map(|_| search()).collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while searches_waiting(&watcher).await < 2 {
        assert!(std::time::Instant::now() < deadline, "two searches reach the lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(searches_waiting(&watcher).await, 2, "only the slots' searches are in PostgreSQL");
    let seen = store.search_slot_stats();
    let expected = adapters_storage::SearchSlotStats { slots: 2, in_use: 2, waiting: 4, busy_total: 0 };
    assert_eq!(seen, expected, "what the operator's metrics read");
    txn.commit().await.expect("release");
    for s in searches {
        let page = s.await.expect("joined").expect("answered once a slot came free");
        assert_eq!(page.total, 5, "{page:?}");
    }

    // One slot, held by a search the lock stops: the next waits its 300 ms and is answered busy.
    let store = t.store.clone().with_search_slots(1, Duration::from_millis(300));
    let txn = locker.begin().await.expect("begin");
    txn.execute_unprepared("LOCK TABLE listing_search, listing_search_terms IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock");
    let held = {
        let store = store.clone();
        tokio::spawn(
            async move { store.search_listings(&crate::search(Some("slotted")), PageRequest::default()).await },
        )
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while searches_waiting(&watcher).await < 1 {
        assert!(std::time::Instant::now() < deadline, "the held search reaches the lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = std::time::Instant::now();
    let busy = store.search_listings(&crate::search(Some("slotted")), PageRequest::default()).await;
    assert!(matches!(busy, Err(domain::ports::RepoError::Unavailable(_))), "{busy:?}");
    assert!(started.elapsed() >= Duration::from_millis(300), "waited its turn first");
    let seen = store.search_slot_stats();
    let expected = adapters_storage::SearchSlotStats { slots: 1, in_use: 1, waiting: 0, busy_total: 1 };
    assert_eq!(seen, expected, "the busy answer counted, and no longer waiting");
    // Reads that are not searches do not wait for a slot: a short read, and today's launches (the
    // home page's list, a day's rows).
    assert!(store.live_listing_id(&crate::slug("slotted-0")).await.expect("a short read").is_some());
    let midnight = chrono::Utc::now().date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
    let today = domain::listing::ListingSearch {
        launched_since: Some(midnight),
        sort: domain::listing::SearchSort::Votes,
        ..Default::default()
    };
    store.search_listings(&today, PageRequest::default()).await.expect("today's launches, no slot needed");
    // The founders' first page without a filter walks their `(name, id)` index and reads one kept
    // total; a name matched anywhere reads every founder, and is a search.
    use domain::ports::FounderRepository;
    store.list_founders(None, None, PageRequest::default()).await.expect("the founders' first page, no slot needed");
    let named = store.list_founders(Some("slot"), None, PageRequest::default()).await;
    assert!(matches!(named, Err(domain::ports::RepoError::Unavailable(_))), "{named:?}");
    txn.commit().await.expect("release");
    assert_eq!(held.await.expect("joined").expect("answered").total, 5);
}

/// Five live listings named `name` and a number, and a transaction of a connection of its own that
/// holds `table` locked against every other (the connection too: dropping it ends the lock).
async fn five_listings_and_a_locked_table(
    t: &crate::harness::TestDb,
    name: &str,
    table: &str,
) -> (DatabaseConnection, sea_orm::DatabaseTransaction) {
    live_listings(t, (0..5).map(|i| format!("{name} {i}"))).await;
    let locker = one_connection(t.url()).await;
    let txn = locker.begin().await.expect("begin");
    txn.execute_unprepared(&format!("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")).await.expect("lock");
    (locker, txn)
}

/// One word within a category on PostgreSQL reads the word's kept rows (migration 54) and the
/// category's links, never the listings' documents in `listing_search`: with that table locked, the
/// search is still answered. The general path ranked 1 000 of the word's documents and hashed every
/// live listing against the category (106 ms for `workflow` in `api-tools` at 100k listings).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_finds_a_word_within_a_category_without_reading_documents() {
    use domain::paging::PageRequest;
    use domain::ports::ListingRepository;
    let Some(t) = crate::harness::postgres().await else { return };
    let (_locker, txn) = five_listings_and_a_locked_table(&t, "Lockstep", "listing_search").await;
    let s =
        domain::listing::ListingSearch { category: Some(crate::slug("dev-tools")), ..crate::search(Some("lockstep")) };
    let found = tokio::time::timeout(Duration::from_secs(5), t.store.search_listings(&s, PageRequest::default())).await;
    txn.commit().await.expect("release");
    let found = found.expect("answered while the documents are locked").expect("a page");
    assert_eq!((found.total, found.items.len()), (5, 5));
}

/// A search that matches nothing reads no page on PostgreSQL: its count (kept, or capped) is zero,
/// and a page in an order would walk that order's whole index for rows that are not there
/// (`q=qqqzx&sort=trending` took 8.7–9.7 s at a million listings). With `listings` locked, a word
/// and a country that no listing has, in orders, are still answered; a word some listing has is not
/// (it needs its page), which shows the lock holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_search_that_matches_nothing_reads_no_page() {
    use domain::listing::{CountryCode, SearchSort};
    use domain::paging::PageRequest;
    use domain::ports::ListingRepository;
    let Some(t) = crate::harness::postgres().await else { return };
    let (_locker, txn) = five_listings_and_a_locked_table(&t, "Walkless", "listings").await;
    let nowhere = [
        domain::listing::ListingSearch { sort: SearchSort::Trending, ..crate::search(Some("qqqzx")) },
        domain::listing::ListingSearch { sort: SearchSort::Newest, ..crate::search(Some("qqqzx")) },
        domain::listing::ListingSearch {
            sort: SearchSort::Votes,
            country: Some(CountryCode::parse("aq").unwrap()),
            ..Default::default()
        },
    ];
    let mut answered = Vec::new();
    for s in &nowhere {
        let found =
            tokio::time::timeout(Duration::from_secs(5), t.store.search_listings(s, PageRequest::default())).await;
        answered.push(found.map(|r| r.map(|p| (p.total, p.items.len()))));
    }
    let some = domain::listing::ListingSearch { sort: SearchSort::Trending, ..crate::search(Some("walkless")) };
    let blocked =
        tokio::time::timeout(Duration::from_secs(1), t.store.search_listings(&some, PageRequest::default())).await;
    txn.commit().await.expect("release");
    for (s, a) in nowhere.iter().zip(answered) {
        let a = a.unwrap_or_else(|_| panic!("answered while listings are locked: {s:?}")).expect("a page");
        assert_eq!(a, (0, 0), "{s:?}");
    }
    assert!(blocked.is_err(), "a search with matches reads its page, which waits for the lock");
}

/// A word on few listings within a large category on PostgreSQL probes each of the word's kept rows
/// for a link to the category's tree instead of hashing every link of the tree (at a million demo
/// listings, `larkhub` in `developer-tools`: 981 rows against 229 294 links, 94 ms listed, 8 probed).
/// Here the tree holds 43 live listings and the word is on four, one in another category: a
/// probe that checked the wrong listing, or none, would find three, and the page's order (best rank
/// first) and total are those of the listed path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_rare_word_within_a_large_category_probes_the_category_s_links() {
    use domain::paging::PageRequest;
    use domain::ports::{DirectoryImport, ListingRepository};
    let Some(t) = crate::harness::postgres().await else { return };
    live_listings(&t, (0..40).map(|i| format!("Filler {i}")).chain(["Quokka Quokka".into(), "Quokka".into()])).await;
    let shared: Arc<dyn domain::ports::Store> = Arc::new(t.store.clone());
    let cats = crate::seed_categories(&shared).await;
    let (api, marketing) = (crate::cat_id(&cats, "api-tools"), crate::cat_id(&cats, "marketing"));
    let more = [("Quokka Api", api), ("Quokka Elsewhere", marketing)]
        .map(|(n, c)| crate::import(crate::listing(n, domain::listing::ListingStatus::Live, Some(c)), 0));
    t.store.import_listings(&more, crate::now()).await.expect("import");
    let search = |q: &'static str, page: i64| {
        let store = t.store.clone();
        async move {
            let s =
                domain::listing::ListingSearch { category: Some(crate::slug("dev-tools")), ..crate::search(Some(q)) };
            let found =
                store.search_listings(&s, PageRequest::parse(Some(page), Some(2)).unwrap()).await.expect("a page");
            (found.total, found.items.into_iter().map(|l| l.slug.to_string()).collect::<Vec<_>>())
        }
    };
    // `api-tools` is in the tree of `dev-tools`; `marketing` is not.
    assert_eq!(search("quokka", 1).await, (3, vec!["quokka-quokka".to_owned(), "quokka-api".to_owned()]));
    assert_eq!(search("quokka", 2).await, (3, vec!["quokka".to_owned()]));
    let (filler, first) = search("filler", 1).await;
    assert_eq!((filler, first.len()), (40, 2), "a word on most of the tree lists its links");
}

/// A first start stopped part-way through the migrations (here: a migration that fails after its
/// first statements) leaves the SQLite file as it was, so the next start applies every migration.
/// Before, sea-orm-migration ran SQLite's migrations without a transaction: migration 10's columns
/// stayed while it went unrecorded, and every later start failed with "duplicate column name".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_migrations_stopped_part_way_leave_nothing_behind() {
    let t = test_support::sqlite();
    let db = adapters_storage::db::connect(&t.url).await.expect("connect");
    // A table with the name of the index migration 10 creates after adding its three columns: the
    // index cannot be created (tables and indexes share one namespace in SQLite).
    db.execute_unprepared("CREATE TABLE ix_listings_status_week (x INTEGER)").await.expect("obstacle");
    let failed = adapters_storage::db::migrate(&db).await;
    assert!(failed.is_err(), "migration 10 cannot create its index");
    let tables = db
        .query_all_raw(Statement::from_string(
            DbBackend::Sqlite,
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('listings', 'seaql_migrations')",
        ))
        .await
        .expect("sqlite_master");
    assert!(tables.is_empty(), "nothing of the stopped run stays: {} tables", tables.len());

    db.execute_unprepared("DROP TABLE ix_listings_status_week").await.expect("obstacle gone");
    adapters_storage::db::migrate(&db).await.expect("the next start applies every migration");
    let listed = db
        .query_one_raw(Statement::from_string(DbBackend::Sqlite, "SELECT COUNT(badge_checked_at) AS n FROM listings"))
        .await;
    assert!(listed.is_ok(), "migration 10's column is there once: {listed:?}");
}

/// On a SQLite file the page views' batches are written on a connection of their own, not on
/// whichever pooled connection is free: one that begins after another connection's commit drops its
/// mapping of the file and faults its pages back in, which under new viewers was a quarter of the
/// server's CPU. So a batch is written while every pooled connection is taken, and before this it
/// waited the pool's 10 s for one and failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_views_are_written_on_a_connection_of_their_own() {
    use domain::ports::{ListingRepository, OwnListingRepository};
    let t = crate::harness::sqlite().await.expect("sqlite");
    live_listings(&t, ["Watched alone".to_owned()].into_iter()).await;
    let id = t.store.get_listing_by_slug(&crate::slug("watched-alone")).await.expect("read").expect("imported").id;
    let pool = t.store.connection().get_sqlite_connection_pool().clone();
    let mut held = Vec::new();
    for _ in 0..pool.options().get_max_connections() {
        held.push(pool.acquire().await.expect("a pooled connection"));
    }
    let views: Vec<domain::engagement::View> = (0..3)
        .map(|k| domain::engagement::View {
            listing_id: id,
            day: crate::now().date_naive(),
            viewer_key: format!("viewer {k}"),
        })
        .collect();
    let written = tokio::time::timeout(Duration::from_secs(5), t.store.record_views(&views))
        .await
        .expect("written while the pool is taken")
        .expect("written");
    assert_eq!(written, [true, true, true]);
    drop(held);
    assert_eq!(t.store.get_listing(id).await.expect("read").expect("the listing").views, 3);
}
