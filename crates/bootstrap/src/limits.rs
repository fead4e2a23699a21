//! Limits the process sets for itself at start.
//!
//! Every connection a server holds is an open file. Service managers start a process with a low
//! *soft* limit on open files (systemd: 1 024, launchd: 256) under a much higher *hard* one
//! (systemd: 524 288), for the sake of old programs that use `select()`. This one does not (tokio
//! waits on epoll or kqueue), so it raises its soft limit to the hard one, as Go's runtime does for
//! every Go program. Under the soft limit, about a thousand idle connections — one script's worth —
//! would fill the table: the server could accept no one else (nor open a database connection) until
//! they time out.

/// The open-file limit before and after [`raise_open_files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    pub before: u64,
    pub now: u64,
}

/// Under this many open files, the start warns: the server could hold only about that many
/// connections at once, and a script could hold them all.
pub const FEW_OPEN_FILES: u64 = 4_096;

/// Raises the soft open-file limit to the hard one, never lowering it.
pub fn raise_open_files() -> std::io::Result<OpenFiles> {
    let (before, _) = rlimit::Resource::NOFILE.get()?;
    let now = rlimit::increase_nofile_limit(u64::MAX)?;
    Ok(OpenFiles { before, now: now.max(before) })
}

/// [`raise_open_files`], with what it did written to the log: a warning where it failed or the
/// limit stays under [`FEW_OPEN_FILES`] (with what to change), one line at `info` otherwise.
pub fn raise_open_files_and_log() {
    match raise_open_files() {
        Ok(OpenFiles { before, now }) if now < FEW_OPEN_FILES => tracing::warn!(
            before,
            now,
            "the open-file limit is low: about this many connections at once, which one script could hold; \
             raise the hard limit (systemd: LimitNOFILE=65536, Docker: --ulimit nofile=65536)"
        ),
        Ok(OpenFiles { before, now }) => tracing::info!(before, now, "open-file limit"),
        Err(e) => tracing::warn!(error = %e, "the open-file limit could not be read or raised"),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The soft limit ends at the hard one, from a soft limit below it. (Each test is a process of
    /// its own under nextest, so lowering this one's limit touches no other test.)
    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one_and_never_lowered() {
        let (_, hard) = rlimit::Resource::NOFILE.get().unwrap();
        let low = 256.min(hard);
        rlimit::Resource::NOFILE.set(low, hard).unwrap();
        let raised = raise_open_files().unwrap();
        assert_eq!(raised.before, low);
        let (soft, hard_after) = rlimit::Resource::NOFILE.get().unwrap();
        assert_eq!(hard_after, hard, "the hard limit is left as it was");
        assert_eq!(raised.now, soft);
        // On Linux the soft limit reaches the hard one; macOS caps it at kern.maxfilesperproc.
        if cfg!(target_os = "linux") {
            assert_eq!(soft, hard);
        }
        assert!(soft >= low);
        // Run again, it keeps what it has.
        assert_eq!(raise_open_files().unwrap(), OpenFiles { before: soft, now: soft });
    }
}
