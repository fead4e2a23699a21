//! Test databases for integration tests: a fresh SQLite file, or a fresh PostgreSQL database on the
//! server named by `LAUNCHDIR_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`),
//! dropped when the guard goes. With `CI=true` an unreachable PostgreSQL is a failure, not a skip.
//!
//! Architecture invariant: a dev-dependency only; no production crate depends on it.

use sea_orm::{ConnectionTrait, Database};

/// A database URL that lives as long as this value.
#[derive(Debug)]
pub struct TestDatabase {
    pub url: String,
    cleanup: Cleanup,
}

#[derive(Debug)]
enum Cleanup {
    Sqlite(tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl TestDatabase {
    pub fn is_postgres(&self) -> bool {
        matches!(self.cleanup, Cleanup::Postgres { .. })
    }

    /// The folder holding the SQLite file (None for PostgreSQL).
    pub fn sqlite_dir(&self) -> Option<&std::path::Path> {
        match &self.cleanup {
            Cleanup::Sqlite(d) => Some(d.path()),
            Cleanup::Postgres { .. } => None,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Cleanup::Postgres { admin_url, name } = &self.cleanup {
            let (admin_url, name) = (admin_url.clone(), name.clone());
            // Drop may run inside a test's runtime, which cannot be blocked on: use a thread of its own.
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

/// A URL for a new, empty SQLite file in a temporary folder (created on first connect).
pub fn sqlite() -> TestDatabase {
    let dir = tempfile::tempdir().expect("temporary folder");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("test.db").display());
    TestDatabase { url, cleanup: Cleanup::Sqlite(dir) }
}

pub fn postgres_admin_url() -> String {
    std::env::var("LAUNCHDIR_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A new, empty PostgreSQL database. `None` (with a note on stderr) when the server is unreachable
/// and `CI` is not `true`; with `CI=true` that panics, so CI cannot pass without PostgreSQL.
pub async fn postgres() -> Option<TestDatabase> {
    let admin_url = postgres_admin_url();
    let admin = match Database::connect(&admin_url).await {
        Ok(a) => a,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!(
                "PostgreSQL unreachable at {admin_url} ({e}); skipping the PostgreSQL half (CI=true makes this fail)"
            );
            return None;
        }
        Err(e) => panic!("PostgreSQL unreachable at {admin_url}: {e}"),
    };
    let name = format!("ld_test_{}", uuid::Uuid::new_v4().simple());
    admin.execute_unprepared(&format!("CREATE DATABASE \"{name}\"")).await.expect("create test database");
    let base = admin_url.rsplit_once('/').map_or(admin_url.as_str(), |(b, _)| b);
    Some(TestDatabase { url: format!("{base}/{name}"), cleanup: Cleanup::Postgres { admin_url, name } })
}

/// The Redis the service's shared rate limits can use (`LAUNCHDIR_TEST_REDIS_URL`, default
/// `redis://127.0.0.1:6379`), when something answers there. `None` (with a note on stderr) when it
/// does not and `CI` is not `true`; with `CI=true` that panics, as for PostgreSQL.
pub async fn redis() -> Option<String> {
    let url = std::env::var("LAUNCHDIR_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let addr = url.trim_start_matches("redis://").trim_end_matches('/').to_owned();
    let answered = async {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(&addr).await.ok()?;
        s.write_all(b"PING\r\n").await.ok()?;
        let mut buf = [0u8; 7];
        s.read_exact(&mut buf).await.ok()?;
        (&buf == b"+PONG\r\n").then_some(())
    };
    match tokio::time::timeout(std::time::Duration::from_secs(2), answered).await {
        Ok(Some(())) => Some(url),
        _ if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("Redis unreachable at {url}; skipping (CI=true makes this fail)");
            None
        }
        _ => panic!("Redis unreachable at {url}"),
    }
}

/// The task of a loopback stand-in server, stopped when the server's handle is dropped.
#[derive(Debug)]
struct Background(tokio::task::JoinHandle<()>);

impl Background {
    fn spawn(task: impl std::future::Future<Output = ()> + Send + 'static) -> Self {
        Self(tokio::spawn(task))
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A fixture site from `fixtures/sites/<name>` served on loopback (see fixtures/sites/README.md),
/// recording every request in order.
#[derive(Debug)]
pub struct FixtureSite {
    pub port: u16,
    requests: std::sync::Arc<std::sync::Mutex<Vec<Request>>>,
    _task: Background,
}

/// One request a fixture site received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub path: String,
    pub user_agent: String,
}

/// The repository's `fixtures/sites` directory.
pub fn sites_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sites")
}

/// Copies fixture site `name` into `dest` (created), for a test that edits the site while it is served.
pub fn copy_site(name: &str, dest: &std::path::Path) {
    std::fs::create_dir_all(dest).expect("create the site's copy");
    for f in std::fs::read_dir(sites_dir().join(name)).expect("the fixture site exists") {
        let f = f.expect("a directory entry");
        std::fs::copy(f.path(), dest.join(f.file_name())).expect("copy a fixture file");
    }
}

impl FixtureSite {
    /// Serves site `name`; `{canary}` in its `_redirects` becomes `canary` (a base URL).
    pub async fn serve(name: &str, canary: &str) -> Self {
        Self::serve_dir(sites_dir().join(name), canary).await
    }

    pub async fn serve_dir(dir: std::path::PathBuf, canary: &str) -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound address").port();
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let redirects: Vec<(String, u16, String)> = std::fs::read_to_string(dir.join("_redirects"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut p = l.split_whitespace();
                Some((p.next()?.to_owned(), p.next()?.parse().ok()?, p.next()?.replace("{canary}", canary)))
            })
            .collect();
        let (log, dir, redirects) = (requests.clone(), std::sync::Arc::new(dir), std::sync::Arc::new(redirects));
        let task = Background::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let (log, dir, redirects) = (log.clone(), dir.clone(), redirects.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16384];
                    let mut n = 0;
                    while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                        match sock.read(&mut buf[n..]).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => n += k,
                        }
                        if n == buf.len() {
                            return;
                        }
                    }
                    let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let user_agent = head
                        .lines()
                        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("user-agent")))
                        .map(|(_, v)| v.trim().to_owned())
                        .unwrap_or_default();
                    log.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(Request { path: path.clone(), user_agent });
                    let clean = path.split(['?', '#']).next().unwrap_or("/").trim_start_matches('/').to_owned();
                    let (status, ctype, extra, body) = if let Some((_, code, to)) =
                        redirects.iter().find(|(p, _, _)| *p == path)
                    {
                        (*code, "text/plain", format!("Location: {to}\r\n"), Vec::new())
                    } else if clean.contains("..") {
                        (400, "text/plain", String::new(), b"bad path".to_vec())
                    } else {
                        let candidates = if clean.is_empty() {
                            vec!["index.html".to_owned()]
                        } else {
                            vec![clean.clone(), format!("{clean}.html"), format!("{clean}/index.html")]
                        };
                        match candidates.iter().find_map(|c| std::fs::read(dir.join(c)).ok().map(|b| (c.clone(), b))) {
                            Some((file, body)) => {
                                let ctype = if file.ends_with(".txt") {
                                    "text/plain"
                                } else if file.ends_with(".html") {
                                    "text/html; charset=utf-8"
                                } else if file.ends_with(".pdf") {
                                    "application/pdf"
                                } else {
                                    "application/octet-stream"
                                };
                                (200, ctype, String::new(), body)
                            }
                            None => (404, "text/plain", String::new(), b"not found".to_vec()),
                        }
                    };
                    let out = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
                        body.len()
                    );
                    let _ = sock.write_all(out.as_bytes()).await;
                    let _ = sock.write_all(&body).await;
                });
            }
        });
        Self { port, requests, _task: task }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// `host:port`, as LAUNCHDIR_CRAWLER_ALLOWED_HOSTS lists it.
    pub fn host_port(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub fn paths(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.path).collect()
    }
}

/// A loopback server that counts connections and never answers: it must stay at zero.
#[derive(Debug)]
pub struct Canary {
    pub port: u16,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    _task: Background,
}

impl Canary {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound address").port();
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c = connections.clone();
        let task = Background::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(sock);
            }
        });
        Self { port, connections, _task: task }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A local SMTP sink: accepts every message (EHLO, MAIL, RCPT, DATA, QUIT) and keeps its raw text.
#[derive(Debug)]
pub struct SmtpSink {
    pub port: u16,
    messages: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    _task: Background,
}

impl SmtpSink {
    pub async fn start() -> Self {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound address").port();
        let messages = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let store = messages.clone();
        let task = Background::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let store = store.clone();
                tokio::spawn(async move {
                    let (r, mut w) = sock.into_split();
                    let mut lines = BufReader::new(r).lines();
                    if w.write_all(b"220 sink ESMTP\r\n").await.is_err() {
                        return;
                    }
                    let mut data: Option<String> = None;
                    while let Ok(Some(line)) = lines.next_line().await {
                        if let Some(buf) = data.as_mut() {
                            if line == "." {
                                store
                                    .lock()
                                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                                    .push(std::mem::take(buf));
                                data = None;
                                let _ = w.write_all(b"250 queued\r\n").await;
                            } else {
                                buf.push_str(line.strip_prefix('.').unwrap_or(&line));
                                buf.push('\n');
                            }
                            continue;
                        }
                        let verb = line.split_whitespace().next().unwrap_or_default().to_ascii_uppercase();
                        let reply: &[u8] = match verb.as_str() {
                            "EHLO" => b"250-sink\r\n250 8BITMIME\r\n",
                            "DATA" => {
                                data = Some(String::new());
                                b"354 go ahead\r\n"
                            }
                            "QUIT" => {
                                let _ = w.write_all(b"221 bye\r\n").await;
                                return;
                            }
                            _ => b"250 ok\r\n",
                        };
                        if w.write_all(reply).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Self { port, messages, _task: task }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The raw text (headers and body) of each message received.
    pub fn messages(&self) -> Vec<String> {
        self.messages.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// A local DNS server on loopback UDP answering TXT questions from a table the test fills; every
/// other name is NXDOMAIN. Speaks real DNS wire format (hickory-proto), so the resolver under test
/// talks to it exactly as to any server.
#[derive(Debug)]
pub struct DnsServer {
    pub addr: std::net::SocketAddr,
    records: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<Vec<String>>>>>,
    questions: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// Milliseconds each answer waits before it is sent.
    delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    _task: Background,
}

fn dns_key(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl DnsServer {
    pub async fn start() -> Self {
        use hickory_proto::op::{Message, ResponseCode};
        use hickory_proto::rr::rdata::TXT;
        use hickory_proto::rr::{RData, Record, RecordType};
        let sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.expect("bind a loopback UDP port");
        let addr = sock.local_addr().expect("a bound address");
        let records =
            std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashMap::<String, Vec<Vec<String>>>::new()));
        let questions = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let delay_ms = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (table, asked, delay) = (records.clone(), questions.clone(), delay_ms.clone());
        let sock = std::sync::Arc::new(sock);
        let task = Background::spawn(async move {
            let mut buf = vec![0u8; 4096];
            loop {
                let Ok((n, peer)) = sock.recv_from(&mut buf).await else { return };
                let Ok(query) = Message::from_vec(&buf[..n]) else { continue };
                let mut reply = Message::response(query.metadata.id, query.metadata.op_code);
                reply.metadata.authoritative = true;
                reply.metadata.recursion_desired = query.metadata.recursion_desired;
                reply.metadata.recursion_available = true;
                let mut found = true;
                for q in &query.queries {
                    let name = dns_key(&q.name().to_ascii());
                    asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(name.clone());
                    let txts = table
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .get(&name)
                        .cloned()
                        .unwrap_or_default();
                    if txts.is_empty() {
                        found = false;
                    }
                    if q.query_type() == RecordType::TXT {
                        for strings in txts {
                            reply.add_answer(Record::from_rdata(q.name().clone(), 60, RData::TXT(TXT::new(strings))));
                        }
                    }
                }
                reply.add_queries(query.queries.clone());
                if !found {
                    reply.metadata.response_code = ResponseCode::NXDomain;
                }
                if let Ok(bytes) = reply.to_vec() {
                    let wait = delay.load(std::sync::atomic::Ordering::SeqCst);
                    let sock = sock.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                        let _ = sock.send_to(&bytes, peer).await;
                    });
                }
            }
        });
        Self { addr, records, questions, delay_ms, _task: task }
    }

    /// Makes every answer from now on wait `delay` before it is sent: a slow name server.
    pub fn answer_after(&self, delay: std::time::Duration) {
        self.delay_ms.store(delay.as_millis() as u64, std::sync::atomic::Ordering::SeqCst);
    }

    /// Publishes TXT records at `name` (each record one or more strings), replacing what was there.
    pub fn set_txt(&self, name: &str, records: &[&[&str]]) {
        let rows = records.iter().map(|r| r.iter().map(|s| (*s).to_owned()).collect()).collect();
        self.records.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(dns_key(name), rows);
    }

    /// Every name asked, in order.
    pub fn questions(&self) -> Vec<String> {
        self.questions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// A stand-in for Stripe's API on loopback: `POST /v1/checkout/sessions` with the right secret key
/// answers a Checkout Session (`cs_test_N`, `url` on checkout.stripe.test) as Stripe does; a wrong key
/// answers 401 with Stripe's error shape. Every request's form body is kept.
#[derive(Debug)]
pub struct StripeStandIn {
    server: JsonStandIn,
    forms: std::sync::Arc<std::sync::Mutex<Vec<Form>>>,
    /// Sessions ended through `POST /v1/checkout/sessions/{id}/expire`.
    expired: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// Sessions the person paid: Stripe refuses to end them.
    completed: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

/// A decoded `application/x-www-form-urlencoded` body, pairs in order.
pub type Form = Vec<(String, String)>;

fn form_decode(body: &str) -> Form {
    let unescape = |s: &str| {
        let s = s.replace('+', " ");
        let bytes = s.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%'
                && i + 2 < bytes.len()
                && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
            {
                out.push(b);
                i += 3;
                continue;
            }
            out.push(bytes[i]);
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    body.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (unescape(k), unescape(v))
        })
        .collect()
}

/// Reads one HTTP/1.1 request: its head (request line and headers) and its body (by Content-Length).
async fn read_request(sock: &mut tokio::net::TcpStream) -> (String, String) {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 16384];
    loop {
        match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => return (String::new(), String::new()),
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
        }
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let len = head
            .lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-length")))
            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if buf.len() >= end + 4 + len {
            return (head, String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).into_owned());
        }
    }
}

async fn respond_json(sock: &mut tokio::net::TcpStream, status: u16, json: &str) {
    use tokio::io::AsyncWriteExt;
    let out = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    );
    let _ = sock.write_all(out.as_bytes()).await;
}

/// A JSON service on loopback answering every request with `answer(request line, body)`.
#[derive(Debug)]
pub struct JsonStandIn {
    pub port: u16,
    _task: Background,
}

impl JsonStandIn {
    /// Serves on loopback; `answer` gets each request's head (request line and headers) and body.
    pub async fn start(answer: impl Fn(&str, &str) -> (u16, String) + Send + Sync + 'static) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound address").port();
        let answer = std::sync::Arc::new(answer);
        let task = Background::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let answer = answer.clone();
                tokio::spawn(async move {
                    let (head, body) = read_request(&mut sock).await;
                    let (status, json) = answer(&head, &body);
                    respond_json(&mut sock, status, &json).await;
                });
            }
        });
        Self { port, _task: task }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl StripeStandIn {
    pub async fn start(secret_key: &str) -> Self {
        let forms = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let expired = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let completed = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let (store, key) = (forms.clone(), format!("Bearer {secret_key}"));
        let (ended, paid) = (expired.clone(), completed.clone());
        let server = JsonStandIn::start(move |head: &str, body: &str| {
            let authorized = head.lines().any(|l| {
                l.split_once(':').is_some_and(|(k, v)| k.eq_ignore_ascii_case("authorization") && v.trim() == key)
            });
            let expire = head
                .strip_prefix("POST /v1/checkout/sessions/")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|p| p.strip_suffix("/expire"))
                .map(str::to_owned);
            if let Some(id) = expire {
                if !authorized {
                    return (401, r#"{"error":{"message":"Invalid API Key provided"}}"#.to_owned());
                }
                if paid.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&id) {
                    let json = r#"{"error":{"message":"Only Checkout Sessions with a status of open can be expired."}}"#;
                    return (400, json.to_owned());
                }
                ended.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(id.clone());
                return (200, format!(r#"{{"id":"{id}","object":"checkout.session","status":"expired"}}"#));
            }
            if !head.starts_with("POST /v1/checkout/sessions ") {
                let json = r#"{"error":{"type":"invalid_request_error","message":"Unrecognized request URL"}}"#;
                return (404, json.to_owned());
            }
            if !authorized {
                let json = r#"{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}"#;
                return (401, json.to_owned());
            }
            let mut sessions = store.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            sessions.push(form_decode(body));
            let n = sessions.len();
            let json = format!(
                r#"{{"id":"cs_test_{n}","object":"checkout.session","payment_status":"unpaid","url":"https://checkout.stripe.test/c/pay/cs_test_{n}"}}"#
            );
            (200, json)
        })
        .await;
        Self { server, forms, expired, completed }
    }

    /// Sessions ended through the API, in order.
    pub fn expired(&self) -> Vec<String> {
        self.expired.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Marks a session paid: Stripe then refuses to end it.
    pub fn complete(&self, id: &str) {
        self.completed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(id.to_owned());
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The form bodies of the sessions created, in order.
    pub fn sessions(&self) -> Vec<Form> {
        self.forms.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// A server URL (`scheme://[user@]host[:port][/path][?options]`) in parts: the scheme, `user@` (or
/// nothing), `host:port` (with `default_port` when the URL says none) and the rest from the path on.
pub fn url_parts(url: &str, default_port: u16) -> (&str, &str, String, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let (user, host) = authority.rsplit_once('@').map_or(("", authority), |(u, h)| (&authority[..=u.len()], h));
    assert!(!host.is_empty(), "the URL names no host (a socket path?): {url}");
    let host = if host.contains(':') { host.to_owned() } else { format!("{host}:{default_port}") };
    (scheme, user, host, tail)
}

/// `url` with its host and port replaced by `host_port` (a [`TcpProxy`]'s, say).
pub fn url_via(url: &str, host_port: &str) -> String {
    let (scheme, user, _, tail) = url_parts(url, 0);
    format!("{scheme}://{user}{host_port}{tail}")
}

/// What a [`TcpProxy`] does with its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ProxyMode {
    /// Passes everything on both ways.
    Forward = 0,
    /// Keeps its connections and accepts new ones, but passes nothing on until told to forward again,
    /// when it passes on everything held: a paused server, a stalled network.
    Stalled = 1,
    /// Closes its connections and every new one at once: a server restarting.
    Gone = 2,
}

/// A TCP proxy on loopback in front of a server (PostgreSQL, Redis), switched between
/// [`ProxyMode`]s while a test runs, to see what the service does when that server stalls or restarts.
#[derive(Debug)]
pub struct TcpProxy {
    pub port: u16,
    mode: std::sync::Arc<std::sync::atomic::AtomicU8>,
    _task: Background,
}

impl TcpProxy {
    /// Listens on a loopback port and connects each client to `upstream` (`host:port`).
    pub async fn start(upstream: String) -> Self {
        use std::sync::atomic::Ordering;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound address").port();
        let mode = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(ProxyMode::Forward as u8));
        let shared = mode.clone();
        let task = Background::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if shared.load(Ordering::SeqCst) == ProxyMode::Gone as u8 {
                    continue;
                }
                let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else { continue };
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(pump(client_read, server_write, shared.clone()));
                tokio::spawn(pump(server_read, client_write, shared.clone()));
            }
        });
        Self { port, mode, _task: task }
    }

    pub fn set(&self, mode: ProxyMode) {
        self.mode.store(mode as u8, std::sync::atomic::Ordering::SeqCst);
    }

    /// `127.0.0.1:port`.
    pub fn host_port(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// Copies `from` to `to` while forwarding; leaves `from` unread while stalled; stops when gone.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mode: std::sync::Arc<std::sync::atomic::AtomicU8>,
) {
    use std::sync::atomic::Ordering;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match mode.load(Ordering::SeqCst) {
            m if m == ProxyMode::Gone as u8 => return,
            m if m == ProxyMode::Stalled as u8 => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                continue;
            }
            _ => {}
        }
        let n = tokio::select! {
            r = from.read(&mut buf) => match r { Ok(0) | Err(_) => return, Ok(n) => n },
            () = tokio::time::sleep(std::time::Duration::from_millis(20)) => continue,
        };
        // Bytes that reach a pump waiting in its read after a stall began are held with the rest.
        // Passed on at once, a readiness ping sent just after `set(Stalled)` still got its answer
        // (`readyz_answers_503_in_time_when_the_database_stalls`: 200, on a loaded machine).
        while mode.load(Ordering::SeqCst) == ProxyMode::Stalled as u8 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        if mode.load(Ordering::SeqCst) == ProxyMode::Gone as u8 || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
