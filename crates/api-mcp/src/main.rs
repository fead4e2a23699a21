//! `launchdir-mcp`: the MCP server alone. `serve` answers Streamable HTTP at /mcp (and the protected
//! resource metadata that sends clients to the authorization server at the same public URL, served by
//! `launchdir-api`); `stdio` serves one local client over stdin/stdout, signed in with the API key in
//! `LAUNCHDIR_API_KEY`.

use actix_web::middleware::from_fn;
use actix_web::{App, HttpResponse, HttpServer, web};
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use operations::oauth::Audience;

/// mimalloc instead of the system allocator: fewer cycles per request (measured, docs/BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(name = "launchdir-mcp", version, about = "The launchdir MCP server.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over Streamable HTTP at /mcp (migrates and seeds the database first, like launchdir-api).
    Serve(bootstrap::ServeArgs),
    /// Serve one local MCP client over stdin/stdout, as the owner of LAUNCHDIR_API_KEY.
    Stdio(StdioArgs),
}

#[derive(Debug, Args)]
struct StdioArgs {
    #[command(flatten)]
    db: bootstrap::DatabaseArgs,
    /// The API key the tools run as (its scopes apply). Unset: only the public tools work.
    #[arg(long, env = "LAUNCHDIR_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Base of the links tools hand out (checkout pages, badges): where launchdir-api is reachable.
    #[arg(long, env = "LAUNCHDIR_PUBLIC_URL", default_value = "http://127.0.0.1:8080")]
    public_url: String,
    #[command(flatten)]
    outbound: bootstrap::OutboundArgs,
}

async fn serve(args: bootstrap::ServeArgs) -> anyhow::Result<()> {
    let listener = bootstrap::limits::listen(&args.bind).with_context(|| format!("cannot listen on {}", args.bind))?;
    let bound = listener.local_addr()?.to_string();
    let public_url = args.public_url(&bound);
    bootstrap::check_serving(&args.outbound, &public_url)?;
    let app = bootstrap::App::open(bootstrap::Setup::serving(&args, &public_url)).await?;
    app.start(args.demo_data).await?;
    app.keys().await.map_err(anyhow::Error::msg)?;
    let reads = operations::ReadCache::new(std::time::Duration::from_secs(args.read_cache_secs));
    let following = reads.follow_changes(app.ports(), operations::cache::POLL);
    // Drafts submitted through these tools are read and drafted by this process's worker too. It holds
    // the change follower: both stop before the server (`api_http::shutdown`).
    let worker_app = app.ports();
    let worker = tokio::spawn(async move {
        let _following = following;
        operations::worker::run_forever(worker_app, std::time::Duration::from_secs(1)).await;
    });
    let ctx = operations::Ctx {
        app: app.ports(),
        public_url: public_url.clone(),
        reads,
        caller: operations::Caller::Anonymous,
        rate_limit_per_minute: args.rate_limit,
        idempotency_key: None,
        audience: Audience::Mcp,
    };
    let limits = actix_web::web::Data::new(api_http::middleware::Limits::new(
        app.rate_limiter(&args).await?,
        domain::ratelimit::Quota::per_minute(args.rate_limit),
        args.trusted_proxies.clone(),
        Some(api_http::middleware::CredentialBuckets::new(ctx.clone())),
        std::time::Duration::from_secs(args.body_timeout_secs),
    ));
    let mcp = api_mcp::Endpoint::new(ctx, api_mcp::allowed_hosts(&public_url, &bound));
    let metadata = operations::oauth::protected_resource_metadata(&public_url, Audience::Mcp);
    tracing::info!(bind = %bound, "serving MCP at /mcp");
    // The same rate limit, body limit, request log and connection cap as launchdir-api.
    let (workers, connections) = bootstrap::limits::http_workers(args.http_workers);
    tracing::info!(workers, connections_per_worker = connections, "http workers");
    // Before the workers start: they, and the threads they start, take this thread's policy.
    bootstrap::limits::set_cpu_policy_and_log(args.cpu_policy);
    let server = HttpServer::new(move || {
        let metadata = metadata.clone();
        App::new()
            .app_data(limits.clone())
            .app_data(web::PayloadConfig::new(api_http::middleware::BODY_LIMIT))
            .wrap(from_fn(api_http::middleware::head_as_get))
            .wrap(from_fn(api_http::middleware::limit_body))
            .wrap(from_fn(api_http::middleware::rate_limit))
            .wrap(from_fn(api_http::middleware::log_requests))
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                web::get().to(move || {
                    let m = metadata.clone();
                    async move { HttpResponse::Ok().insert_header(("Access-Control-Allow-Origin", "*")).json(m) }
                }),
            )
            .service(mcp.clone().scope("/mcp"))
    })
    .workers(workers)
    .max_connections(connections)
    .disable_signals()
    .listen(listener)?
    .run();
    api_http::shutdown::serve_until_stopped(server, worker).await?;
    Ok(())
}

async fn stdio(args: StdioArgs) -> anyhow::Result<()> {
    let app = bootstrap::App::open(bootstrap::Setup {
        outbound: args.outbound.clone(),
        public_url: args.public_url.clone(),
        ..bootstrap::Setup::for_database(&args.db)
    })
    .await?;
    app.start(false).await?;
    let caller = match args.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        Some(key) => {
            let p = operations::accounts::authenticate_bearer(&app, key)
                .await
                .map_err(|e| anyhow::anyhow!("LAUNCHDIR_API_KEY: {e}"))?;
            tracing::info!(user = p.user_id.get(), scopes = ?p.scopes, "stdio client signed in with an API key");
            operations::Caller::Principal(p)
        }
        None => {
            tracing::warn!("LAUNCHDIR_API_KEY is not set: only the public tools will work");
            operations::Caller::Anonymous
        }
    };
    // Drafts submitted over stdio get read and drafted even when no launchdir-api runs beside it.
    let worker = tokio::spawn(operations::worker::run_forever(app.ports(), std::time::Duration::from_secs(1)));
    let ctx = operations::Ctx {
        app: app.ports(),
        public_url: args.public_url.trim_end_matches('/').to_owned(),
        reads: operations::ReadCache::disabled(),
        caller,
        rate_limit_per_minute: 600,
        idempotency_key: None,
        audience: Audience::Mcp,
    };
    let served = api_mcp::LaunchdirMcp::new(ctx).serve_stdio().await;
    api_http::shutdown::stop_task(Some(worker)).await;
    served
}

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    let log = match bootstrap::telemetry::init() {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    bootstrap::limits::raise_open_files_and_log();
    let result = match Cli::parse().command {
        Command::Serve(args) => serve(args).await,
        Command::Stdio(args) => stdio(args).await,
    };
    // The log's last lines are written before the process's own last word.
    drop(log);
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
