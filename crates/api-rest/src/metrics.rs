//! `/metrics` for the operator (Prometheus scrapes it): on the service's port to loopback and
//! `LAUNCHDIR_METRICS_ALLOW` only, or on `LAUNCHDIR_METRICS_BIND`, an address of its own. Anyone else
//! gets the 404 of an unknown route: the endpoint is not advertised to the internet.

use crate::error::ApiError;
use crate::server::State;
use actix_web::{HttpRequest, HttpResponse, HttpServer, web};
use api_http::metrics::{CONTENT_TYPE, Metrics, Snapshot};

/// Who may read `/metrics` on the service's port.
#[derive(Debug)]
pub struct Access {
    pub allow: Vec<ipnet::IpNet>,
    /// False when the metrics have an address of their own.
    pub on_service_port: bool,
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/metrics")
            .route(web::get().to(on_service_port))
            .default_service(web::to(crate::server::method_not_allowed)),
    );
}

async fn on_service_port(
    req: HttpRequest,
    state: web::Data<State>,
    metrics: web::Data<Metrics>,
    access: web::Data<Access>,
) -> Result<HttpResponse, ApiError> {
    if !access.on_service_port || !api_http::metrics::allowed(&req, &access.allow) {
        return Err(ApiError::not_found("route"));
    }
    Ok(scrape(&state, &metrics).await)
}

/// The figures read now, rendered.
async fn scrape(state: &State, metrics: &Metrics) -> HttpResponse {
    let (cache_hits, cache_misses) = state.ctx.reads.hits_and_misses();
    let backlog = operations::admin::backlog(&state.app).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "metrics: the job queue and outbox could not be read");
        Default::default()
    });
    let pool = state.app.sea_orm().pool_stats();
    let slots = state.app.sea_orm().search_slot_stats();
    let snapshot = Snapshot {
        cache_hits,
        cache_misses,
        jobs: backlog.jobs,
        oldest_job_age_secs: backlog.oldest_job_secs,
        emails_unsent: backlog.emails_unsent,
        oldest_email_age_secs: backlog.oldest_email_secs,
        db_open: pool.open,
        db_idle: pool.idle,
        db_max: pool.max,
        search_slots: slots.slots,
        search_slots_in_use: slots.in_use,
        searches_waiting: slots.waiting,
        searches_busy: slots.busy_total,
        log_lines_dropped: bootstrap::telemetry::dropped_lines(),
    };
    HttpResponse::Ok().content_type(CONTENT_TYPE).body(metrics.render(&snapshot))
}

async fn on_own_address(state: web::Data<State>, metrics: web::Data<Metrics>) -> HttpResponse {
    scrape(&state, &metrics).await
}

/// The most connections the metrics server holds at once.
pub const METRICS_CONNECTIONS: usize = 64;

/// The metrics server of `LAUNCHDIR_METRICS_BIND`: `/metrics` only, to whoever reaches the address.
pub fn serve(
    addr: std::net::SocketAddr,
    state: web::Data<State>,
    metrics: web::Data<Metrics>,
) -> anyhow::Result<actix_web::dev::Server> {
    use anyhow::Context;
    let server = HttpServer::new(move || {
        actix_web::App::new()
            .app_data(state.clone())
            .app_data(metrics.clone())
            .route("/metrics", web::get().to(on_own_address))
    })
    .workers(1)
    // A scraper holds one; the cap keeps a flood of this port from taking the files the service needs.
    .max_connections(METRICS_CONNECTIONS)
    .disable_signals()
    .bind(addr)
    .with_context(|| format!("binding LAUNCHDIR_METRICS_BIND {addr}"))?
    .run();
    Ok(server)
}
