//! `launchdir-mcp`: the MCP server alone (`serve` over Streamable HTTP, `stdio` for local clients).
//! Not available yet: both commands refuse with a clear message and exit status 2.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "launchdir-mcp", version, about = "The launchdir MCP server (not available yet).")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over Streamable HTTP at /mcp.
    Serve(bootstrap::ServeArgs),
    /// Serve MCP over stdio, authenticated by LAUNCHDIR_API_KEY.
    Stdio,
}

fn main() -> std::process::ExitCode {
    let _cli = Cli::parse();
    eprintln!("{}", api_mcp::NOT_YET);
    std::process::ExitCode::from(2)
}
