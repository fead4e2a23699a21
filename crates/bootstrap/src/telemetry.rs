//! Structured logs through tracing: `RUST_LOG` filters (default `info`), one line per event — plain
//! `key=value` text, or one JSON object per line with `LAUNCHDIR_LOG_FORMAT=json` (for log collectors).

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

impl LogFormat {
    /// `LAUNCHDIR_LOG_FORMAT`: `json`, or `text` (the default); anything else is refused with the
    /// values it may take.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("LAUNCHDIR_LOG_FORMAT").ok().as_deref().map(str::trim) {
            None | Some("" | "text") => Ok(Self::Text),
            Some("json") => Ok(Self::Json),
            Some(other) => Err(format!("LAUNCHDIR_LOG_FORMAT must be text or json, not {other:?}")),
        }
    }
}

/// Installs the global subscriber once; later calls are ignored (tests start many apps). An unknown
/// `LAUNCHDIR_LOG_FORMAT` is an error for the binary to report before anything else.
pub fn init() -> Result<(), String> {
    let format = LogFormat::from_env()?;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_writer(std::io::stderr);
    let _ = match format {
        // Colours only for a person at a terminal; log collectors get plain key=value lines.
        LogFormat::Text => builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
    Ok(())
}
