//! `launchdir-mcp`: the MCP server alone. `serve` answers Streamable HTTP at /mcp; `stdio` (local clients
//! signed in with an API key) is not available yet and refuses with exit status 2.

use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer};
use anyhow::Context;
use clap::{Parser, Subcommand};

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
    /// Serve MCP over stdio, authenticated by LAUNCHDIR_API_KEY (not available yet).
    Stdio,
}

async fn serve(args: bootstrap::ServeArgs) -> anyhow::Result<()> {
    let mut app =
        bootstrap::App::connect_with(&args.db.database_url, std::time::Duration::from_secs(args.read_cache_secs))
            .await?;
    app.start(args.demo_data).await?;
    let listener =
        std::net::TcpListener::bind(&args.bind).with_context(|| format!("cannot listen on {}", args.bind))?;
    let bound = listener.local_addr()?.to_string();
    let public_url = args.public_url(&bound);
    app.configure_outbound(&args.outbound, &public_url)?;
    // Drafts submitted through these tools are read and drafted by this process's worker too.
    let worker = tokio::spawn(operations::worker::run_forever(app.clone(), std::time::Duration::from_secs(1)));
    let reads = operations::ReadCache::new(std::time::Duration::from_secs(args.read_cache_secs));
    reads.follow_changes(app.clone(), operations::cache::POLL);
    let ctx = operations::Ctx {
        app,
        public_url: public_url.clone(),
        reads,
        caller: operations::Caller::Anonymous,
        rate_limit_per_minute: args.rate_limit,
        idempotency_key: None,
    };
    let mcp = api_mcp::http_service(ctx, api_mcp::allowed_hosts(&public_url, &bound));
    tracing::info!(bind = %bound, "serving MCP at /mcp");
    let limits = actix_web::web::Data::new(api_http::middleware::Limits {
        limiter: bootstrap::App::rate_limiter(&args).await?,
        quota: domain::ratelimit::Quota::per_minute(args.rate_limit),
    });
    // The same rate limit, body limit and request log as launchdir-api.
    HttpServer::new(move || {
        App::new()
            .app_data(limits.clone())
            .wrap(from_fn(api_http::middleware::limit_body))
            .wrap(from_fn(api_http::middleware::rate_limit))
            .wrap(from_fn(api_http::middleware::log_requests))
            .service(mcp.clone().scope_with_path("/mcp"))
    })
    .listen(listener)?
    .run()
    .await?;
    worker.abort();
    Ok(())
}

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    bootstrap::telemetry::init();
    match Cli::parse().command {
        Command::Serve(args) => match serve(args).await {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                std::process::ExitCode::FAILURE
            }
        },
        Command::Stdio => {
            eprintln!("launchdir-mcp stdio: not available yet (it needs API keys); use `launchdir-mcp serve`");
            std::process::ExitCode::from(2)
        }
    }
}
