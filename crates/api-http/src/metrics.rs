//! The operator's metrics, in the Prometheus (OpenMetrics) text format: requests by operation and
//! status with their latency, the read cache's hits and misses, the job queue, the outbox and the
//! database pool. Requests are counted by the `record` middleware as they finish; the rest is read
//! when `/metrics` is scraped (a [`Snapshot`] the server fills). Who may read them is `allowed`'s
//! rule: loopback and the configured networks only, judged by who a request was forwarded for.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{Error, web};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    operation: String,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabel {
    operation: String,
}

/// What the server reads when it is scraped.
#[derive(Debug, Clone, Copy, Default)]
pub struct Snapshot {
    /// The read cache's hits and misses since start.
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub jobs: domain::ports::JobBacklog,
    /// How long the oldest due job has waited, in seconds (0 when none waits).
    pub oldest_job_age_secs: f64,
    pub emails_unsent: u64,
    pub oldest_email_age_secs: f64,
    /// Database connections open, idle and at most.
    pub db_open: u32,
    pub db_idle: u32,
    pub db_max: u32,
    /// The search slots: how many, in use and waited for now, and searches answered busy since start.
    pub search_slots: u32,
    pub search_slots_in_use: u32,
    pub searches_waiting: u32,
    pub searches_busy: u64,
    /// Log lines dropped since start because standard error was read more slowly than they came.
    pub log_lines_dropped: u64,
}

/// The registry of one server and the operation each route serves.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<OperationLabel, Histogram>,
    cache_hits: Counter,
    cache_misses: Counter,
    log_lines_dropped: Counter,
    searches_busy: Counter,
    /// What the busy searches' count last showed.
    busy_seen: AtomicU64,
    /// What the cache counters last showed, so a scrape adds only what happened since.
    cache_seen: (AtomicU64, AtomicU64),
    /// What the dropped-lines count last showed.
    log_seen: AtomicU64,
    jobs_queued: Gauge,
    jobs_due: Gauge,
    jobs_running: Gauge,
    oldest_job: Gauge<f64, AtomicU64>,
    emails_unsent: Gauge,
    oldest_email: Gauge<f64, AtomicU64>,
    db_open: Gauge,
    db_idle: Gauge,
    db_max: Gauge,
    search_slots: Gauge,
    search_slots_in_use: Gauge,
    searches_waiting: Gauge,
    /// (method, route pattern) → operationId, for the operations of the registry.
    operations: HashMap<(String, String), &'static str>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("operations", &self.operations.len()).finish_non_exhaustive()
    }
}

/// `metric`, registered in `r` under `name` (each metric is built and registered in one place).
fn registered<M>(r: &mut Registry, name: &str, help: &str, metric: M) -> M
where
    M: prometheus_client::registry::Metric + Clone,
{
    r.register(name, help, metric.clone());
    metric
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 8 s, doubling.
    Histogram::new(exponential_buckets(0.001, 2.0, 14))
}

impl Metrics {
    /// The metrics of a server whose API operations are `registry`, mounted under `/api/v1`.
    pub fn new(registry: &[operations::Descriptor]) -> Self {
        let operations = registry
            .iter()
            .map(|d| ((d.method.as_str().to_ascii_uppercase(), format!("/api/v1{}", d.path)), d.id))
            .collect();
        let mut r = Registry::with_prefix("launchdir");
        let latency = Family::<OperationLabel, Histogram>::new_with_constructor(latency_histogram as fn() -> Histogram);
        Self {
            requests: registered(
                &mut r,
                "http_requests",
                "Requests answered, by operation (or route), method and status",
                Family::default(),
            ),
            latency: registered(
                &mut r,
                "http_request_duration_seconds",
                "Time to answer a request, by operation (or route)",
                latency,
            ),
            cache_hits: registered(
                &mut r,
                "read_cache_hits",
                "Public reads answered from this instance's cache",
                Counter::default(),
            ),
            cache_misses: registered(
                &mut r,
                "read_cache_misses",
                "Public reads that had to be computed",
                Counter::default(),
            ),
            cache_seen: (AtomicU64::new(0), AtomicU64::new(0)),
            log_lines_dropped: registered(
                &mut r,
                "log_lines_dropped",
                "Log lines dropped because standard error was read more slowly than they were written",
                Counter::default(),
            ),
            log_seen: AtomicU64::new(0),
            jobs_queued: registered(&mut r, "jobs_queued", "Background jobs waiting (due or not)", Gauge::default()),
            jobs_due: registered(&mut r, "jobs_due", "Background jobs waiting whose time has come", Gauge::default()),
            jobs_running: registered(&mut r, "jobs_running", "Background jobs a worker holds", Gauge::default()),
            oldest_job: registered(
                &mut r,
                "jobs_oldest_due_age_seconds",
                "How long the oldest due job has waited",
                Gauge::default(),
            ),
            emails_unsent: registered(&mut r, "emails_unsent", "Emails in the outbox not sent yet", Gauge::default()),
            oldest_email: registered(
                &mut r,
                "emails_oldest_unsent_age_seconds",
                "How long the oldest unsent email has waited",
                Gauge::default(),
            ),
            db_open: registered(
                &mut r,
                "db_pool_connections_open",
                "Database connections open (idle or in use)",
                Gauge::default(),
            ),
            db_idle: registered(
                &mut r,
                "db_pool_connections_idle",
                "Database connections open and idle",
                Gauge::default(),
            ),
            db_max: registered(
                &mut r,
                "db_pool_connections_max",
                "The most database connections the pool opens",
                Gauge::default(),
            ),
            search_slots: registered(
                &mut r,
                "db_search_slots",
                "The most searches this instance lets into the database at once",
                Gauge::default(),
            ),
            search_slots_in_use: registered(
                &mut r,
                "db_search_slots_in_use",
                "Searches of this instance in the database now",
                Gauge::default(),
            ),
            searches_waiting: registered(
                &mut r,
                "db_searches_waiting",
                "Searches waiting for a slot now",
                Gauge::default(),
            ),
            searches_busy: registered(
                &mut r,
                "db_searches_busy",
                "Searches answered busy (503) because no slot came free in time",
                Counter::default(),
            ),
            busy_seen: AtomicU64::new(0),
            operations,
            registry: r,
        }
    }

    /// Counts one answered request.
    fn observe(&self, method: &str, pattern: Option<&str>, status: u16, seconds: f64) {
        let method = match method {
            "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" => method,
            _ => "OTHER",
        };
        // Routes, not paths: a label per operation or route pattern, never per slug or id.
        let operation = match pattern {
            Some(p) => self
                .operations
                .get(&(method.to_owned(), p.to_owned()))
                .map_or_else(|| p.to_owned(), |o| (*o).to_owned()),
            None => "unmatched".to_owned(),
        };
        self.requests
            .get_or_create(&RequestLabels { operation: operation.clone(), method: method.to_owned(), status })
            .inc();
        self.latency.get_or_create(&OperationLabel { operation }).observe(seconds);
    }

    /// The text a scrape answers, with the figures read now.
    pub fn render(&self, s: &Snapshot) -> String {
        let advance = |counter: &Counter, seen: &AtomicU64, now: u64| {
            let before = seen.swap(now, Ordering::Relaxed);
            counter.inc_by(now.saturating_sub(before));
        };
        advance(&self.cache_hits, &self.cache_seen.0, s.cache_hits);
        advance(&self.cache_misses, &self.cache_seen.1, s.cache_misses);
        advance(&self.log_lines_dropped, &self.log_seen, s.log_lines_dropped);
        advance(&self.searches_busy, &self.busy_seen, s.searches_busy);
        let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.jobs_queued.set(as_i64(s.jobs.queued));
        self.jobs_due.set(as_i64(s.jobs.due));
        self.jobs_running.set(as_i64(s.jobs.running));
        self.oldest_job.set(s.oldest_job_age_secs);
        self.emails_unsent.set(as_i64(s.emails_unsent));
        self.oldest_email.set(s.oldest_email_age_secs);
        self.db_open.set(i64::from(s.db_open));
        self.db_idle.set(i64::from(s.db_idle));
        self.db_max.set(i64::from(s.db_max));
        self.search_slots.set(i64::from(s.search_slots));
        self.search_slots_in_use.set(i64::from(s.search_slots_in_use));
        self.searches_waiting.set(i64::from(s.searches_waiting));
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "metrics could not be encoded");
        }
        out
    }
}

/// Counts every request by its route once it is answered (registered outermost but one, so what the
/// client got is what is counted). Without `Metrics` in the app data it only passes requests on.
pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let Some(metrics) = req.app_data::<web::Data<Metrics>>().cloned() else {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    };
    let started = Instant::now();
    let method = req.method().as_str().to_owned();
    let res = next.call(req).await;
    let seconds = started.elapsed().as_secs_f64();
    match &res {
        Ok(r) => metrics.observe(&method, r.request().match_pattern().as_deref(), r.status().as_u16(), seconds),
        Err(e) => metrics.observe(&method, None, e.as_response_error().status_code().as_u16(), seconds),
    }
    res.map(ServiceResponse::map_into_boxed_body)
}

/// Who may read `/metrics` on the service's own port: loopback and the networks in `allow`. A request
/// that came through a proxy is judged by whom it was forwarded for (trusted proxies only, as the rate
/// limit does); one carrying forwarding headers from a proxy that is not trusted is refused, since it
/// cannot say whom it is for — a reverse proxy on the same host must not make the metrics public.
pub fn allowed(req: &actix_web::HttpRequest, allow: &[ipnet::IpNet]) -> bool {
    let Some(peer) = req.peer_addr().map(|a| a.ip()) else { return false };
    let forwarded = req.headers().contains_key("x-forwarded-for") || req.headers().contains_key("forwarded");
    let client = crate::middleware::client_address(req).unwrap_or(peer);
    if forwarded && client == peer {
        return false;
    }
    client.is_loopback() || client.to_canonical().is_loopback() || allow.iter().any(|n| n.contains(&client))
}
