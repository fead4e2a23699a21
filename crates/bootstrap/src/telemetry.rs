//! Structured logs through tracing: `RUST_LOG` filters (default `info`), one line per event — plain
//! `key=value` text, or one JSON object per line with `LAUNCHDIR_LOG_FORMAT=json` (for log collectors).
//!
//! Lines are written to standard error by a thread of their own, from a buffer of at most
//! `LAUNCHDIR_LOG_BUFFER_LINES` lines (default [`DEFAULT_BUFFER_LINES`]). A request never waits for its
//! log line: when whoever reads standard error falls behind (a stalled collector, a paused terminal)
//! and the buffer is full, new lines are dropped and counted ([`dropped_lines`], in `/metrics`).

use std::sync::OnceLock;
use tracing_appender::non_blocking::{ErrorCounter, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;

/// Lines held for the log thread before new ones are dropped: a few seconds of a busy server's
/// request log, and at most some megabytes.
pub const DEFAULT_BUFFER_LINES: usize = 65_536;
/// The most `LAUNCHDIR_LOG_BUFFER_LINES` may ask for.
pub const MAX_BUFFER_LINES: usize = 1 << 20;

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

/// `LAUNCHDIR_LOG_BUFFER_LINES`: a whole number from 1 to [`MAX_BUFFER_LINES`]; unset or empty: the
/// default.
pub fn buffer_lines_from_env() -> Result<usize, String> {
    buffer_lines(std::env::var("LAUNCHDIR_LOG_BUFFER_LINES").ok().as_deref())
}

/// [`buffer_lines_from_env`] of a value.
fn buffer_lines(value: Option<&str>) -> Result<usize, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(DEFAULT_BUFFER_LINES),
        Some(v) => v.parse::<usize>().ok().filter(|n| (1..=MAX_BUFFER_LINES).contains(n)).ok_or_else(|| {
            format!("LAUNCHDIR_LOG_BUFFER_LINES must be a whole number from 1 to {MAX_BUFFER_LINES}, not {v:?}")
        }),
    }
}

/// Held by `main` until the process ends: dropping it writes out the lines still buffered (waiting at
/// most about a second for a reader that has stalled).
#[must_use = "the log's last lines are written when the guard is dropped"]
pub struct LogGuard(#[allow(dead_code)] Option<WorkerGuard>);

impl std::fmt::Debug for LogGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogGuard").field("writes", &self.0.is_some()).finish()
    }
}

static DROPPED: OnceLock<ErrorCounter> = OnceLock::new();

/// Log lines dropped since start because the buffer was full (0 before [`init`]).
pub fn dropped_lines() -> u64 {
    DROPPED.get().map_or(0, |c| c.dropped_lines() as u64)
}

/// Installs the global subscriber once; later calls change nothing and hold no guard (tests start
/// many apps). An unknown `LAUNCHDIR_LOG_FORMAT` or a bad `LAUNCHDIR_LOG_BUFFER_LINES` is an error
/// for the binary to report before anything else.
pub fn init() -> Result<LogGuard, String> {
    let format = LogFormat::from_env()?;
    let lines = buffer_lines_from_env()?;
    if DROPPED.get().is_some() {
        return Ok(LogGuard(None));
    }
    // Buffered: under load the log thread writes many lines a system call; it flushes whenever its
    // queue is empty, so a quiet server's lines are not held back.
    let stderr = std::io::BufWriter::with_capacity(64 * 1024, std::io::stderr());
    let (writer, guard) =
        NonBlockingBuilder::default().lossy(true).buffered_lines_limit(lines).thread_name("log-writer").finish(stderr);
    let counter = writer.error_counter();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_writer(writer);
    let installed = match format {
        // Colours only for a person at a terminal; log collectors get plain key=value lines.
        LogFormat::Text => builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
    if installed.is_err() {
        // Another subscriber was installed first (a test's own): this writer has nothing to write.
        return Ok(LogGuard(None));
    }
    let _ = DROPPED.set(counter);
    Ok(LogGuard(Some(guard)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_setting_is_read_at_its_edges() {
        assert_eq!(buffer_lines(None), Ok(DEFAULT_BUFFER_LINES));
        assert_eq!(buffer_lines(Some(" ")), Ok(DEFAULT_BUFFER_LINES));
        assert_eq!(buffer_lines(Some("1")), Ok(1));
        assert_eq!(buffer_lines(Some("1048576")), Ok(MAX_BUFFER_LINES));
        for bad in ["0", "1048577", "-5", "lots"] {
            let got = buffer_lines(Some(bad));
            assert!(
                got.as_ref().is_err_and(|e| e.contains("LAUNCHDIR_LOG_BUFFER_LINES") && e.contains(bad)),
                "{got:?}"
            );
        }
    }
}
