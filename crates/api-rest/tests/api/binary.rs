//! The `launchdir-api` binary as an operator runs it: serve, migrate and admin commands, on a fresh
//! SQLite file and a fresh PostgreSQL database.

use crate::helpers::{Binary, run, wait_ready};
use std::time::Duration;
use test_support::TestDatabase;

async fn serve_with_demo_data_then_stop(db: TestDatabase) {
    let bin = Binary::serve(&db, &["--demo-data"]);
    let client = reqwest::Client::new();
    let took = wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("/readyz answers 200");
    eprintln!("ready {took:?} after start ({})", if db.is_postgres() { "PostgreSQL" } else { "SQLite" });
    // 2.0–2.2 s on an idle machine; 5.3 s once with a second test suite and a build beside it.
    assert!(took < Duration::from_secs(8), "ready within 8 s of start even on a debug build: {took:?}");
    if let Some(dir) = db.sqlite_dir() {
        assert!(dir.join("test.db").exists(), "the SQLite file was created on first run");
    }
    let status = bin.terminate();
    assert!(status.success(), "graceful shutdown on SIGTERM exits 0: {status:?}");
    // A second start on the same database finds demo data present and does not load it twice.
    let again = Binary::serve(&db, &["--demo-data"]);
    wait_ready(&client, &again.base, Duration::from_secs(20)).await.expect("ready again");
    assert!(again.terminate().success());
    let (ok, out, err) = run(&db, &["admin", "generate-demo", "--listings", "5"]);
    assert!(!ok && out.is_empty(), "demo data only goes into an empty directory");
    assert!(err.contains("already has listings"), "{err}");
}

#[tokio::test]
async fn serve_on_sqlite() {
    serve_with_demo_data_then_stop(test_support::sqlite()).await;
}

#[tokio::test]
async fn serve_on_postgres() {
    if let Some(db) = test_support::postgres().await {
        serve_with_demo_data_then_stop(db).await;
    }
}

fn migrate_and_admin(db: &TestDatabase) {
    let (ok, out, err) = run(db, &["migrate"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "migrations applied");
    let (ok, _, err) = run(db, &["migrate"]);
    assert!(ok, "migrate twice is harmless: {err}");

    let (ok, out, err) = run(db, &["admin", "set-price", "--product", "launch", "--cents", "7900"]);
    assert!(ok, "{err}");
    assert!(out.contains("$79.00"), "{out}");
    let (ok, _, err) = run(db, &["admin", "set-price", "--product", "rocket", "--cents", "1"]);
    assert!(!ok && err.contains("unknown product") && err.contains("launch"), "{err}");
    let (ok, _, err) = run(db, &["admin", "set-price", "--product", "launch", "--cents", "-1"]);
    assert!(!ok && err.contains("--cents"), "{err}");

    let (ok, out, _) = run(db, &["admin", "set-setting", "free_plan_min_weeks", "5"]);
    assert!(ok && out.contains("free_plan_min_weeks = 5"));
    let (ok, _, err) = run(db, &["admin", "set-setting", "seller_country", "XX"]);
    assert!(!ok && err.contains("seller_country"), "{err}");
    let (ok, _, err) = run(db, &["admin", "set-setting", "nonsense", "1"]);
    assert!(!ok && err.contains("unknown setting"), "{err}");
}

#[tokio::test]
async fn migrate_and_admin_on_sqlite() {
    migrate_and_admin(&test_support::sqlite());
}

#[tokio::test]
async fn migrate_and_admin_on_postgres() {
    if let Some(db) = test_support::postgres().await {
        migrate_and_admin(&db);
    }
}

#[tokio::test]
async fn an_unreachable_database_fails_start_up_with_a_clear_message() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_launchdir-api"))
        .args(["migrate", "--database-url", "postgres://nobody@127.0.0.1:1/none"])
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot open the database at postgres://nobody@127.0.0.1:1/none"), "{err}");
}

/// `admin backup PATH` while the service serves, then a service started on the copy: it answers with
/// the same directory. A second backup to the same file is refused (a backup never overwrites).
#[tokio::test]
async fn a_backup_taken_while_serving_restores_and_serves() {
    let live = crate::helpers::spawn_app(true).await;
    live.wait_ready().await;
    let before: serde_json::Value = live.get("/api/v1/site").await.json().await.unwrap();
    let listing: serde_json::Value = live.get("/api/v1/listings?per_page=1").await.json().await.unwrap();
    let slug = listing["items"][0]["slug"].as_str().expect("demo data has a live listing").to_owned();

    let restored = test_support::sqlite();
    let path = restored.sqlite_dir().unwrap().join("test.db");
    let out = crate::helpers::cli(&live.db.url, &["admin", "backup", path.to_str().unwrap()]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("backed up to") && stdout.contains("root secret"), "{stdout}");
    let again = crate::helpers::cli(&live.db.url, &["admin", "backup", path.to_str().unwrap()]).await;
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists already"));
    // The service kept serving while the copy was taken.
    assert_eq!(live.get("/api/v1/site").await.status(), 200);

    let copy = crate::helpers::spawn_app_on(restored, false).await;
    copy.wait_ready().await;
    let after: serde_json::Value = copy.get("/api/v1/site").await.json().await.unwrap();
    assert!(before["counts"]["live_listings"].as_u64().unwrap() > 0, "{before}");
    assert_eq!(after["counts"], before["counts"], "the same directory");
    let page = copy.get(&format!("/api/v1/listings/{slug}")).await;
    assert_eq!(page.status(), 200, "a listing of the original is served from the copy");
}

#[tokio::test]
async fn a_postgresql_backup_points_to_pg_dump() {
    if let Some(db) = test_support::postgres().await {
        assert!(run(&db, &["migrate"]).0);
        let path = std::env::temp_dir().join(format!("launchdir-pg-backup-{}.db", std::process::id()));
        let (ok, _, err) = run(&db, &["admin", "backup", path.to_str().unwrap()]);
        assert!(!ok && err.contains("pg_dump"), "{err}");
        assert!(!path.exists(), "nothing written");
    }
}

/// `LAUNCHDIR_LOG_FORMAT=json`: every log line is one JSON object (level, message and fields at the top),
/// the request log included; an unknown format stops the start naming the setting.
#[tokio::test]
async fn logs_are_json_lines_when_asked() {
    let db = test_support::sqlite();
    let mut bin = Binary::serve_with(&db, &[], &[("LAUNCHDIR_LOG_FORMAT", "json"), ("RUST_LOG", "info")]);
    let client = reqwest::Client::new();
    wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("ready");
    assert_eq!(client.get(format!("{}/api/v1/site", bin.base)).send().await.unwrap().status(), 200);
    let stderr = bin.stop_and_read_stderr();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.len() > 3, "{stderr}");
    let mut request_lines = 0;
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert!(v["level"].is_string() && v["timestamp"].is_string(), "{l}");
        if v["path"] == "/api/v1/site" {
            assert_eq!(v["status"], 200, "{l}");
            request_lines += 1;
        }
    }
    assert_eq!(request_lines, 1, "the request is logged once, as JSON: {stderr}");

    let (ok, _, err) = {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_launchdir-api"))
            .args(["migrate"])
            .env("DATABASE_URL", &db.url)
            .env("LAUNCHDIR_LOG_FORMAT", "xml")
            .output()
            .unwrap();
        (out.status.success(), (), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    assert!(!ok && err.contains("LAUNCHDIR_LOG_FORMAT must be text or json"), "{err}");
}

/// `LAUNCHDIR_HTTP_WORKERS` starts that many request threads (actix names each `actix-rt|system:0|
/// arbiter:N`), whatever the machine's cores, and they serve; out of its bounds the start stops
/// naming the setting.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_http_workers_asked_for_are_the_threads_that_serve() {
    let db = test_support::sqlite();
    let asked = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get) + 1;
    let mut bin = Binary::serve_with(&db, &[], &[("LAUNCHDIR_HTTP_WORKERS", &asked.to_string()), ("RUST_LOG", "info")]);
    let client = reqwest::Client::new();
    wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("ready");
    assert_eq!(client.get(format!("{}/api/v1/categories", bin.base)).send().await.unwrap().status(), 200);
    let pid = bin.child.id();
    let workers = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
        .filter(|name| name.starts_with("actix-rt|system"))
        .count();
    assert_eq!(workers, asked, "request threads with {asked} asked for");
    let stderr = bin.stop_and_read_stderr();
    assert!(
        stderr.lines().any(|l| l.contains("http workers") && l.contains(&format!("workers={asked}"))),
        "the start logs the workers: {stderr:.2000}"
    );

    // A value let through would start a server that never exits: each start gets 20 s, then is killed.
    for refused in ["0", "513", "many"] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_launchdir-api"))
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env("DATABASE_URL", &db.url)
            .env("LAUNCHDIR_HTTP_WORKERS", refused)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(20) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("--http-workers"), "{refused}: {err}");
    }
}

/// The request threads run as `SCHED_BATCH` unless `LAUNCHDIR_CPU_POLICY=normal` (the policy is the
/// 41st field of a thread's `/proc/<pid>/task/<tid>/stat`: 3 batch, 0 the kernel's default), they
/// serve either way, and a value the setting does not know stops the start naming it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_request_threads_run_under_the_cpu_policy_asked_for() {
    let db = test_support::sqlite();
    for (asked, policy) in [(None, 3), (Some("batch"), 3), (Some("normal"), 0)] {
        let env: Vec<(&str, &str)> = asked.map(|a| ("LAUNCHDIR_CPU_POLICY", a)).into_iter().collect();
        let mut bin = Binary::serve_with(&db, &[], &env);
        let client = reqwest::Client::new();
        wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("ready");
        assert_eq!(client.get(format!("{}/api/v1/categories", bin.base)).send().await.unwrap().status(), 200);
        let pid = bin.child.id();
        let workers: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .map(|t| t.unwrap().path())
            .filter(|t| std::fs::read_to_string(t.join("comm")).is_ok_and(|n| n.starts_with("actix-rt|system")))
            .map(|t| {
                let stat = std::fs::read_to_string(t.join("stat")).unwrap();
                bootstrap::limits::stat_field(&stat, 41).unwrap().parse().unwrap()
            })
            .collect();
        assert!(!workers.is_empty(), "request threads");
        assert!(workers.iter().all(|p| *p == policy), "{asked:?}: policies {workers:?}, expected {policy}");
        bin.stop_and_read_stderr();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_launchdir-api"))
        .args(["serve", "--bind", "127.0.0.1:0", "--cpu-policy", "realtime"])
        .env("DATABASE_URL", &db.url)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--cpu-policy"), "{err}");
}

/// A server stopped under load stops its background work before the HTTP workers' runtimes go away:
/// nothing at warn or above is logged at shutdown. (The calendar and the read cache's change follower
/// each logged a database error at most shutdowns on PostgreSQL: pooled connections opened on a
/// worker's runtime met that runtime shutting down.)
#[tokio::test]
async fn a_server_stopped_under_load_logs_no_failure() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some(db) = test_support::postgres().await else { return };
    let mut bin = Binary::serve_with(&db, &["--demo-data"], &[("LAUNCHDIR_READ_CACHE_SECS", "60")]);
    let client = reqwest::Client::new();
    wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("/readyz answers 200");
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = ["/api/v1/launches?section=trending", "/api/v1/categories", "/api/v1/listings?q=workflow"]
        .iter()
        .cycle()
        .take(12)
        .map(|path| {
            let (client, url, stop) = (client.clone(), format!("{}{path}", bin.base), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let _ = client.get(&url).send().await;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let stderr = tokio::task::spawn_blocking(move || bin.stop_and_read_stderr()).await.expect("stopped");
    stop.store(true, Ordering::Relaxed);
    for task in load {
        let _ = task.await;
    }
    let failures: Vec<&str> = stderr.lines().filter(|l| l.contains(" ERROR ") || l.contains(" WARN ")).collect();
    assert!(failures.is_empty(), "logged at shutdown: {failures:#?}");
}

/// A server stopped (SIGTERM) right after a burst of page loads has written every one's view: a page
/// answers only once its view is committed. (A page that answered first and left its view queued lost
/// up to 42 of 300 views this way when the writer lived on an HTTP worker's runtime; tried and dropped,
/// docs/BENCHMARKS.md, fourteenth sitting.)
#[tokio::test]
async fn views_handed_over_just_before_a_stop_are_all_written() {
    let db = test_support::sqlite();
    let bin = Binary::serve(&db, &["--demo-data"]);
    let client = reqwest::Client::new();
    wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("/readyz answers 200");
    let top: serde_json::Value = client
        .get(format!("{}/api/v1/listings?per_page=1&sort=votes", bin.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let slug = top["items"][0]["slug"].as_str().unwrap().to_owned();
    let profile: serde_json::Value =
        client.get(format!("{}/api/v1/listings/{slug}", bin.base)).send().await.unwrap().json().await.unwrap();
    let before = profile["views"].as_i64().unwrap();
    let loads = (0..300).map(|i| {
        let req = client
            .get(format!("{}/listings/{slug}", bin.base))
            .header("user-agent", format!("Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0 person-{i}"));
        async move { req.send().await.unwrap().status().as_u16() }
    });
    let statuses = futures_util::future::join_all(loads).await;
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    let status = tokio::task::spawn_blocking(move || bin.terminate()).await.unwrap();
    assert!(status.success(), "{status:?}");
    let store = bootstrap::App::connect(&db.url).await.unwrap();
    let slug = domain::slug::Slug::parse(&slug).unwrap();
    let l = domain::ports::ListingRepository::get_listing_by_slug(store.store.as_ref(), &slug).await.unwrap().unwrap();
    assert_eq!(l.views, before + 300, "every view handed over before the stop");
}

/// Standard error that nobody reads (a stalled log collector, a paused `| less`): requests keep being
/// answered. The request log is written by a thread of its own from a bounded buffer; lines that do not
/// fit are dropped and counted in `/metrics`, never waited for by a request. (Before, every HTTP worker
/// wrote its line itself and blocked once the pipe's 64 KiB were full: the server stopped answering.)
#[tokio::test]
async fn a_log_reader_that_stalls_never_stalls_the_requests() {
    let db = test_support::sqlite();
    // A small buffer, so that a few hundred requests fill it; the pipe is never read until the end.
    let mut bin = Binary::serve_with(
        &db,
        &[],
        &[("RUST_LOG", "info"), ("LAUNCHDIR_LOG_BUFFER_LINES", "64"), ("LAUNCHDIR_RATE_LIMIT", "100000")],
    );
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("ready");
    // Each request's log line is about 90 bytes: 3 000 of them are four times what the pipe holds.
    let path = format!("{}/api/v1/site", bin.base);
    for i in 0..3_000 {
        let res = client.get(&path).send().await;
        assert!(res.as_ref().is_ok_and(|r| r.status() == 200), "request {i} of 3 000 was not answered: {res:?}");
    }
    let metrics = client.get(format!("{}/metrics", bin.base)).send().await.unwrap().text().await.unwrap();
    let dropped: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("launchdir_log_lines_dropped_total "))
        .unwrap_or_else(|| panic!("no dropped-lines counter: {metrics}"))
        .trim()
        .parse()
        .unwrap();
    assert!((100..=3_100).contains(&dropped), "lines dropped: {dropped}");
    // The lines that fitted are there, whole; the process stops although its last lines cannot be written.
    let stderr = tokio::task::spawn_blocking(move || bin.stop_and_read_stderr()).await.unwrap();
    let requests = stderr.lines().filter(|l| l.contains("path=/api/v1/site")).count();
    assert!(requests > 100, "{requests} request lines written before the pipe filled: {stderr:.2000}");
    assert!(stderr.lines().filter(|l| l.contains("path=/api/v1/site")).all(|l| l.contains("status=200")));
}

/// A client with no connection from before asks for `/api/v1/site` and must be answered within 2 s.
async fn a_new_client_is_answered_within_2s(base: &str, when: &str) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(2)).build().unwrap();
    let started = std::time::Instant::now();
    let res = client.get(format!("{base}/api/v1/site")).send().await;
    assert!(
        res.as_ref().is_ok_and(|r| r.status() == 200),
        "a new client {when} was not answered within 2 s: {res:?} after {:?}",
        started.elapsed()
    );
}

/// A process's (soft, hard) open-file limits, from `/proc/{pid}/limits` (`self` for this one).
#[cfg(target_os = "linux")]
fn open_files(pid: &str) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits.lines().find_map(|l| l.strip_prefix("Max open files")).unwrap().to_owned();
    let mut v = line.split_whitespace().map(|n| n.parse::<u64>().unwrap_or(u64::MAX));
    (v.next().unwrap(), v.next().unwrap())
}

/// Raises this test process's own soft open-file limit to its hard one, so that the connections a
/// test opens never run it out of files: `cargo test` runs the tests side by side in one process,
/// where two of these tests hold several hundred sockets at once. (CI's soft limit once stopped a
/// test's connections at 167, which read as the server's doing.)
fn room_for_our_own_connections(need: u64) {
    let raised = bootstrap::limits::raise_open_files().expect("raise this process's open-file limit");
    assert!(raised.now >= need, "this test needs {need} open files for itself, the limit is {}", raised.now);
}

/// A script that opens many idle connections cannot fill the server's open-file table. Started with a
/// soft limit of 256 open files (launchd's; systemd's is 1 024) under a higher hard one, the server
/// raises the soft limit to the hard one: 300 idle connections are all held, and a new client is
/// answered at once. (Before, the server ran at 256: it held about 200 of them, the rest waited in the
/// listen queue, and the new client waited behind them until the idle ones timed out 5 s later.)
#[cfg(target_os = "linux")]
#[tokio::test]
async fn idle_connections_past_a_low_soft_limit_keep_no_one_out() {
    // The test needs room above the soft limit it starts the server with, for the server and itself.
    let (_, hard) = open_files("self");
    assert!(hard >= 2_048, "this test needs a hard open-file limit of at least 2 048, not {hard}");
    room_for_our_own_connections(2_048);
    let db = test_support::sqlite();
    let mut bin = Binary::serve_with_open_files(&db, 256, &[("RUST_LOG", "info")]);
    let client = reqwest::Client::builder().timeout(Duration::from_secs(2)).build().unwrap();
    wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("ready");
    assert_eq!(open_files(&bin.child.id().to_string()), (hard, hard), "the soft limit is raised to the hard one");

    // The idle connections are opened well within the 5 s a connection has to send its request's head,
    // so none has timed out when the new client comes.
    let addr = bin.base.trim_start_matches("http://").to_owned();
    let started = std::time::Instant::now();
    let mut idle = Vec::new();
    for i in 0..300 {
        let c = tokio::net::TcpStream::connect(&addr).await.unwrap_or_else(|e| panic!("connection {i}: {e}"));
        idle.push(c);
    }
    assert!(started.elapsed() < Duration::from_secs(2), "300 connections took {:?}", started.elapsed());
    // A new client: the one above keeps the connection it was answered on, from before the flood.
    a_new_client_is_answered_within_2s(&bin.base, "behind 300 idle connections").await;
    drop(idle);
    let stderr = tokio::task::spawn_blocking(move || bin.stop_and_read_stderr()).await.unwrap();
    assert!(
        stderr.lines().any(|l| l.contains("open-file limit") && l.contains("before=256")),
        "the start logs the limit it raised: {stderr:.2000}"
    );
}

/// Where the hard open-file limit itself is low (a container started with `--ulimit nofile=300`), a
/// script opening more connections than that takes connection slots, never the files the store, the
/// crawler and the mailer need: each HTTP worker stops accepting at its share of the limit, a quarter
/// of it is kept, the connections past the cap wait in the listen queue, and they are served once the
/// others go. (Before, the server accepted until `accept` failed with "Too many open files", twice a
/// second, with every file of the process taken: the database could open none either.)
#[cfg(target_os = "linux")]
#[tokio::test]
async fn connections_past_the_open_file_limit_leave_files_for_the_store() {
    const LIMIT: u64 = 300;
    room_for_our_own_connections(2 * LIMIT + 500);
    let db = test_support::sqlite();
    let mut bin = Binary::serve_with_file_limit(&db, LIMIT, &[("RUST_LOG", "info")]);
    let client = reqwest::Client::builder().timeout(Duration::from_secs(2)).build().unwrap();
    wait_ready(&client, &bin.base, Duration::from_secs(20)).await.expect("ready");
    let pid = bin.child.id().to_string();
    assert_eq!(open_files(&pid), (LIMIT, LIMIT), "the limit the server runs under");
    let files_open = || std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count() as u64;

    // More connections than the limit, opened within the 5 s a connection has to send its request's
    // head. Past the cap and a full listen queue, a connect waits for the kernel's retry (1 s): stop
    // there. Any other failure is this test's own.
    let addr = bin.base.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    while idle.len() < LIMIT as usize + 100 {
        match tokio::time::timeout(Duration::from_millis(700), tokio::net::TcpStream::connect(&addr)).await {
            Ok(Ok(c)) => idle.push(c),
            Ok(Err(e)) => panic!("connection {}: {e}", idle.len()),
            Err(_) => break,
        }
    }
    assert!(idle.len() as u64 > LIMIT, "only {} connections were opened", idle.len());
    // The workers accept what they will. A quarter of the limit is kept: the files the server had open
    // before (the store's, the log's, the runtime's) and room for more.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let open = files_open();
    assert!(open + 16 <= LIMIT, "{open} of {LIMIT} files open with {} connections made", idle.len());

    // The connections go; those waiting in the queue are accepted and a new client is served.
    drop(idle);
    a_new_client_is_answered_within_2s(&bin.base, "after the flood").await;
    let stderr = tokio::task::spawn_blocking(move || bin.stop_and_read_stderr()).await.unwrap();
    assert!(!stderr.contains("Too many open files"), "accept ran out of files: {stderr:.3000}");
    assert!(
        stderr.lines().any(|l| l.contains("http workers") && l.contains("connections_per_worker=")),
        "the start logs the cap: {stderr:.2000}"
    );
}
