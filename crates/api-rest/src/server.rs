//! Building and running the HTTP server: state, routes, extractor limits, JSON errors for unknown
//! routes (404) and wrong methods (405), and graceful shutdown on SIGTERM/SIGINT (actix finishes
//! requests in flight for up to 30 s).

use crate::error::ApiError;
use crate::{middleware as mw, probes};
use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App as ActixApp, HttpResponse, HttpServer, web};
use anyhow::Context;
use bootstrap::App;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared by every request handler.
#[derive(Debug)]
pub struct State {
    pub app: App,
    pub public_url: String,
    /// What every operation runs with (the app, the public URL, the read cache).
    pub ctx: operations::Ctx,
    /// Set once migrations and seeding finished.
    pub started: AtomicBool,
}

impl State {
    /// `path` (starting with `/`) on the public URL: every link and redirect a page hands out.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.public_url)
    }
}

/// A server bound to its port, with start-up (migrate, seed, demo data) still to run.
pub struct Application {
    port: u16,
    server: Server,
    /// The metrics server, when `/metrics` has an address of its own.
    metrics_server: Option<Server>,
    state: Arc<State>,
    demo_data: bool,
}

async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::not_found("route"))
}

/// The 405 every resource answers for a method it does not serve.
pub(crate) async fn method_not_allowed() -> Result<HttpResponse, ApiError> {
    Err(ApiError::method_not_allowed())
}

/// The 405 of a resource that accepts only `methods`, with the `Allow` header RFC 9110 asks for
/// (HEAD beside GET: [`mw::head_as_get`]).
pub(crate) fn allow_only(methods: &[&str]) -> actix_web::Route {
    let mut allowed = methods.to_vec();
    if allowed.contains(&"GET") {
        allowed.push("HEAD");
    }
    let allow = allowed.join(", ");
    web::to(move || {
        let allow = allow.clone();
        async move {
            let mut r = actix_web::ResponseError::error_response(&ApiError::method_not_allowed());
            if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&allow) {
                r.headers_mut().insert(actix_web::http::header::ALLOW, v);
            }
            r
        }
    })
}

/// The routes, shared by the binary and the tests.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/healthz").route(web::get().to(probes::healthz)).default_service(web::to(method_not_allowed)),
    )
    .service(
        web::resource("/readyz").route(web::get().to(probes::readyz)).default_service(web::to(method_not_allowed)),
    );
}

/// Extractor configuration: body limits and JSON errors for malformed input.
pub fn extractors(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::PayloadConfig::new(mw::BODY_LIMIT))
        // A page's form may carry a whole story (nine sections of up to 8000 characters). One that
        // cannot be read is answered in the error shape, as everything else (the extractor's own
        // answer is plain text).
        .app_data(web::FormConfig::default().limit(mw::BODY_LIMIT).error_handler(|err, _| {
            use actix_web::error::UrlencodedError as U;
            let api = match &err {
                U::Overflow { .. } | U::Payload(actix_web::error::PayloadError::Overflow) => {
                    ApiError::payload_too_large(mw::BODY_LIMIT)
                }
                U::ContentType => ApiError::new(
                    actix_web::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "send the form as application/x-www-form-urlencoded",
                ),
                // serde's own words ("duplicate field `grant_type`"), without actix's "Parse error: ".
                U::Parse(e) => {
                    let message = e.to_string();
                    ApiError::from(domain::ValidationError::new(serde_field(&message, "form"), message))
                }
                other => {
                    let message = other.to_string();
                    ApiError::from(domain::ValidationError::new(serde_field(&message, "form"), message))
                }
            };
            api.into()
        }))
        .app_data(web::JsonConfig::default().limit(mw::BODY_LIMIT).error_handler(|err, _| {
            use actix_web::error::JsonPayloadError as J;
            let api = match &err {
                J::Overflow { .. } | J::OverflowKnownLength { .. } => ApiError::payload_too_large(mw::BODY_LIMIT),
                J::ContentType => ApiError::new(
                    actix_web::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "send the body as application/json",
                ),
                other => ApiError::from(domain::ValidationError::new("body", other.to_string())),
            };
            api.into()
        }))
        .app_data(web::QueryConfig::default().error_handler(|err, _| {
            let message = err.to_string();
            ApiError::from(domain::ValidationError::new(serde_field(&message, "query"), message)).into()
        }))
        .app_data(web::PathConfig::default().error_handler(|_, _| ApiError::not_found("resource").into()));
}

/// The field a query's or form's error is about: serde names it between backquotes ("duplicate field
/// `shape`", "missing field `email`"); where it does not, `whole` (the query string or the form).
fn serde_field(message: &str, whole: &'static str) -> String {
    message
        .split_once('`')
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(name, _)| name)
        .filter(|name| !name.is_empty() && name.len() <= 64)
        .unwrap_or(whole)
        .to_owned()
}

impl std::fmt::Debug for Application {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Application")
            .field("port", &self.port)
            .field("demo_data", &self.demo_data)
            .finish_non_exhaustive()
    }
}

impl Application {
    /// Connects to the database and binds `listener`; nothing is migrated yet.
    pub async fn build(args: &bootstrap::ServeArgs, listener: TcpListener) -> anyhow::Result<Self> {
        let port = listener.local_addr()?.port();
        let bound = listener.local_addr()?.to_string();
        let public_url = args.public_url(&bound);
        bootstrap::check_serving(&args.outbound, &public_url)?;
        let app = App::open(bootstrap::Setup::serving(args, &public_url)).await?;
        // The root secret is loaded (or generated) before serving: a missing or unreadable one stops
        // the start with the setting named, not the first sign-in.
        app.keys().await.map_err(anyhow::Error::msg)?;
        let reads = operations::ReadCache::new(std::time::Duration::from_secs(args.read_cache_secs));
        let ctx = operations::Ctx {
            app: app.ports(),
            public_url: public_url.clone(),
            reads,
            caller: operations::Caller::Anonymous,
            rate_limit_per_minute: args.rate_limit,
            idempotency_key: None,
            audience: operations::oauth::Audience::Api,
        };
        let limits = web::Data::new(mw::Limits::new(
            app.rate_limiter(args).await?,
            domain::ratelimit::Quota::per_minute(args.rate_limit),
            args.trusted_proxies.clone(),
            Some(mw::CredentialBuckets::new(ctx.clone())),
            std::time::Duration::from_secs(args.body_timeout_secs),
        ));
        let state = Arc::new(State { app, public_url, ctx, started: AtomicBool::new(false) });
        let data = web::Data::from(state.clone());
        let metrics = web::Data::new(api_http::metrics::Metrics::new(&operations::registry()));
        let access = web::Data::new(crate::metrics::Access {
            allow: args.metrics_allow.clone(),
            on_service_port: args.metrics_bind.is_none(),
        });
        let metrics_server = match args.metrics_bind {
            Some(addr) => Some(crate::metrics::serve(addr, data.clone(), metrics.clone())?),
            None => None,
        };
        // Built once, outside the per-worker factory, and cloned into each worker; REST and MCP share
        // one read cache.
        let mcp = (!args.no_mcp)
            .then(|| api_mcp::Endpoint::new(state.ctx.clone(), api_mcp::allowed_hosts(&state.public_url, &bound)));
        let (workers, connections) = bootstrap::limits::http_workers(args.http_workers);
        tracing::info!(workers, connections_per_worker = connections, "http workers");
        // Before the workers start: they, and the threads they start, take this thread's policy.
        bootstrap::limits::set_cpu_policy_and_log(args.cpu_policy);
        let server = HttpServer::new(move || {
            let mcp = mcp.clone();
            ActixApp::new()
                .app_data(data.clone())
                .app_data(limits.clone())
                .app_data(metrics.clone())
                .app_data(access.clone())
                .wrap(from_fn(mw::head_as_get))
                .wrap(from_fn(crate::compress::gzip_public))
                .wrap(from_fn(probes::until_ready))
                .wrap(from_fn(crate::headers::security_headers))
                .wrap(from_fn(mw::limit_body))
                .wrap(from_fn(mw::rate_limit))
                .wrap(from_fn(crate::headers::api_cors))
                .wrap(from_fn(api_http::metrics::record))
                .wrap(from_fn(mw::log_requests))
                .configure(extractors)
                .configure(routes)
                .configure(crate::metrics::routes)
                .configure(crate::rest::routes)
                .configure(crate::badges::routes)
                .configure(crate::web::routes)
                .configure(crate::site::routes)
                .configure(crate::seo::routes)
                .configure(crate::feeds::routes)
                .configure(crate::maker::routes)
                .configure(crate::console::routes)
                .configure(move |cfg| {
                    if let Some(m) = mcp {
                        cfg.service(m.scope("/mcp"));
                    }
                })
                .default_service(web::to(not_found))
        })
        // Connections never take the open files the store, the crawler and the mailer need.
        .workers(workers)
        .max_connections(connections)
        .shutdown_timeout(30)
        // `run_until_stopped` acts on SIGTERM and SIGINT itself (`api_http::shutdown`).
        .disable_signals()
        .listen(listener)
        .context("listening")?
        .run();
        Ok(Self { port, server, metrics_server, state, demo_data: args.demo_data })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server from elsewhere (tests stop theirs when done).
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Runs start-up in the background while serving (probes answer at once; `/readyz` says 503 until
    /// start-up is done), then serves until SIGTERM/SIGINT. A failed start-up stops the server and is
    /// returned as the error.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let handle = self.server.handle();
        let state = self.state.clone();
        let demo = self.demo_data;
        let startup = tokio::spawn(async move {
            let started = std::time::Instant::now();
            let r = state.app.start(demo).await;
            match &r {
                Ok(()) => {
                    // Loading data is a public change: nothing read before it (on any instance) survives.
                    operations::public_data_changed(&state.app, &state.ctx.reads).await;
                    state.started.store(true, Ordering::Release);
                    tracing::info!(ms = started.elapsed().as_millis() as u64, "ready");
                }
                Err(e) => {
                    tracing::error!(error = format!("{e:#}"), "start-up failed; stopping");
                    handle.stop(false).await;
                }
            }
            r
        });
        // The job worker and the change follower start once migrations ran; it stops with the server (a job cut off mid-way is
        // taken over when its lease runs out).
        let worker_app = self.state.app.clone();
        let started_flag = self.state.clone();
        let worker = tokio::spawn(async move {
            while !started_flag.started.load(Ordering::Acquire) {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            // Other instances' changes reach this read cache through the shared counter (migrated now).
            let _following = started_flag.ctx.reads.follow_changes(worker_app.ports(), operations::cache::POLL);
            operations::worker::run_forever(worker_app.ports(), std::time::Duration::from_secs(1)).await;
        });
        let metrics = self.metrics_server.map(|m| {
            let handle = m.handle();
            (tokio::spawn(m), handle)
        });
        // At SIGTERM or SIGINT the worker (and the calendar and change follower it holds) stops
        // before the server (see `api_http::shutdown`).
        let served = api_http::shutdown::serve_until_stopped(self.server, worker).await.context("server");
        if let Some((task, handle)) = metrics {
            handle.stop(true).await;
            let _ = task.await;
        }
        served?;
        if !startup.is_finished() {
            startup.abort();
            return Ok(());
        }
        startup.await.context("start-up task")?
    }
}
