//! Starting the service for a test: in process (`spawn_app`) or as the real binary (`Binary`).

use api_rest::server::Application;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use test_support::TestDatabase;

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub db: TestDatabase,
    /// The in-process server, stopped when the test is done.
    server: actix_web::dev::ServerHandle,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Sends the stop at once; the server's own thread finishes it.
        drop(self.server.stop(false));
    }
}

impl TestApp {
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(format!("{}{path}", self.base)).send().await.expect("request")
    }

    /// Waits until /readyz says 200 (start-up runs in the background).
    pub async fn wait_ready(&self) {
        wait_ready(&self.client, &self.base, Duration::from_secs(20)).await.expect("ready in time");
    }
}

pub async fn wait_ready(client: &reqwest::Client, base: &str, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Ok(r) = client.get(format!("{base}/readyz")).send().await
            && r.status() == 200
        {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// Starts the server in this process on a free port with a fresh SQLite file.
pub async fn spawn_app(demo_data: bool) -> TestApp {
    spawn_app_on(test_support::sqlite(), demo_data).await
}

/// Starts the server in this process on a free port with the given test database.
pub async fn spawn_app_on(db: TestDatabase, demo_data: bool) -> TestApp {
    spawn_app_with(db, demo_data, false).await
}

/// Starts the server in this process, optionally without the MCP endpoint.
pub async fn spawn_app_with(db: TestDatabase, demo_data: bool, no_mcp: bool) -> TestApp {
    spawn_app_configured(db, demo_data, |a| a.no_mcp = no_mcp).await
}

/// Starts the server in this process with the default flags changed by `configure`.
pub async fn spawn_app_configured(
    db: TestDatabase,
    demo_data: bool,
    configure: impl FnOnce(&mut bootstrap::ServeArgs),
) -> TestApp {
    // The log thread lives as long as the test process: the guard is never dropped.
    std::mem::forget(bootstrap::telemetry::init().expect("LAUNCHDIR_LOG_FORMAT is valid in tests"));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut args = bootstrap::ServeArgs {
        bind: listener.local_addr().unwrap().to_string(),
        db: bootstrap::DatabaseArgs {
            database_url: db.url.clone(),
            database_max_connections: None,
            database_search_slots: None,
        },
        public_url: None,
        demo_data,
        no_mcp: false,
        read_cache_secs: 5,
        http_workers: None,
        // The test process's threads keep the kernel's default.
        cpu_policy: bootstrap::limits::CpuPolicy::Normal,
        rate_limit: 600,
        body_timeout_secs: 30,
        redis_url: None,
        trusted_proxies: Vec::new(),
        metrics_allow: Vec::new(),
        metrics_bind: None,
        outbound: bootstrap::OutboundArgs::default(),
        // A SQLite test keeps its generated secret beside its database file; a PostgreSQL test has no
        // such folder of its own, so it is given one.
        secrets: bootstrap::keys::SecretArgs {
            secret_key: db.is_postgres().then(|| "a-test-secret-of-at-least-32-characters".to_owned()),
            ..Default::default()
        },
    };
    configure(&mut args);
    // Tests take test payments on purpose, whatever public URL they pretend to have (a deployment that
    // leaves LAUNCHDIR_PAYMENTS unset off loopback refuses to start: tests/api/attacks/money.rs).
    args.outbound.payments.get_or_insert_with(|| "sandbox".into());
    // The server runs on a runtime and thread of its own, as the binary does: a test that blocks its
    // own thread (running an admin command and waiting for it) never freezes the server mid-write.
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(async move {
            match Application::build(&args, listener).await {
                Ok(app) => {
                    let _ = tx.send(Ok((app.port(), app.handle())));
                    let _ = app.run_until_stopped().await;
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        });
    });
    let (port, server) = rx.await.expect("the server's thread").expect("build");
    TestApp { base: format!("http://127.0.0.1:{port}"), client: reqwest::Client::new(), db, server }
}

/// The real `launchdir-api` binary, killed when dropped.
pub struct Binary {
    pub child: Child,
    pub base: String,
}

impl Binary {
    pub fn serve(db: &TestDatabase, extra: &[&str]) -> Self {
        Self::start(db, extra, &[], Stdio::inherit(), None)
    }

    /// `serve` with extra environment variables; its standard error is kept for [`Binary::stderr`].
    pub fn serve_with(db: &TestDatabase, extra: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start(db, extra, env, Stdio::piped(), None)
    }

    /// [`Binary::serve_with`], started with a soft open-file limit of `soft` (as a service manager
    /// would: `ulimit -Sn` in a shell that then runs the binary in its place, under the same pid).
    pub fn serve_with_open_files(db: &TestDatabase, soft: u64, env: &[(&str, &str)]) -> Self {
        Self::start(db, &[], env, Stdio::piped(), Some(format!("-Sn {soft}")))
    }

    /// [`Binary::serve_with`], started with both open-file limits at `limit`: the process cannot raise
    /// it (a container started with `--ulimit nofile=…`).
    pub fn serve_with_file_limit(db: &TestDatabase, limit: u64, env: &[(&str, &str)]) -> Self {
        Self::start(db, &[], env, Stdio::piped(), Some(format!("-n {limit}")))
    }

    fn start(db: &TestDatabase, extra: &[&str], env: &[(&str, &str)], stderr: Stdio, ulimit: Option<String>) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let bin = env!("CARGO_BIN_EXE_launchdir-api");
        let mut command = match ulimit {
            Some(limit) => {
                let mut c = Command::new("sh");
                c.args(["-c", &format!("ulimit {limit} && exec \"$0\" serve \"$@\""), bin]);
                c
            }
            None => {
                let mut c = Command::new(bin);
                c.arg("serve");
                c
            }
        };
        let child = command
            .args(extra)
            .env("LAUNCHDIR_BIND", format!("127.0.0.1:{port}"))
            .env("DATABASE_URL", &db.url)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("start launchdir-api");
        Self { child, base: format!("http://127.0.0.1:{port}") }
    }

    /// Waits for the process to exit by itself (panics after `limit`).
    pub fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "launchdir-api did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server (SIGTERM) and returns what it wrote to standard error (`serve_with`).
    pub fn stop_and_read_stderr(&mut self) -> String {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().expect("kill");
        self.wait_exit(Duration::from_secs(30));
        self.stderr()
    }

    /// What the process wrote to standard error (after it exited; started with `serve_with`).
    pub fn stderr(&mut self) -> String {
        use std::io::Read;
        let mut out = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut out);
        }
        out
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().expect("kill");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "launchdir-api did not stop after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `launchdir-api <args>` to completion with `DATABASE_URL`; returns (success, stdout, stderr).
pub fn run(db: &TestDatabase, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_launchdir-api"))
        .args(args)
        .env("DATABASE_URL", &db.url)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run launchdir-api");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `launchdir-api <args>` with `DATABASE_URL` off the test's runtime (so an in-process server keeps
/// answering meanwhile); returns its output.
pub async fn cli(db_url: &str, args: &[&str]) -> std::process::Output {
    let url = db_url.to_owned();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_launchdir-api"))
            .args(&args)
            .env("DATABASE_URL", url)
            .env("RUST_LOG", "warn")
            .output()
            .expect("run launchdir-api")
    })
    .await
    .expect("the command's thread")
}
