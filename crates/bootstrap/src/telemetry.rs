//! Structured logs through tracing: `RUST_LOG` filters (default `info`), one line per event.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber once; later calls are ignored (tests start many apps).
pub fn init() {
    // Colours only for a person at a terminal; log collectors get plain key=value lines.
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}
