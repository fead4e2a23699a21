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

/// How Linux schedules the service's threads (`--cpu-policy`, [`set_cpu_policy`]).
///
/// A request thread mostly waits: for a request, then for the database's answer. Under the kernel's
/// default policy each wake-up takes a core at once from whatever runs there, which on cores shared
/// with PostgreSQL is often the backend about to answer the next read: per uncached board page on
/// two shared cores, 3–4 context switches. As `SCHED_BATCH` a woken thread waits for the running
/// one's turn to end (the kernel's "no wake-up preemption"), finds several answers and requests
/// ready at once, and the backends run their statements back to back: 1.2–1.4 switches a page, and
/// 10–72 % more boards and category lists a second (docs/BENCHMARKS.md, sixty-eighth sitting). The
/// nice value, and with it the threads' share of the cores, is not changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CpuPolicy {
    /// `SCHED_BATCH`: woken threads do not preempt the running one.
    Batch,
    /// `SCHED_OTHER`, the kernel's default.
    Normal,
}

/// Puts the calling thread under `policy`, keeping its nice value. Threads it starts afterwards
/// inherit the policy (POSIX threads are created with the creator's scheduling), so called before the
/// HTTP workers start it covers them, their runtimes' tasks and the threads they start. `Ok(false)`
/// where the platform has no such policy (anything but Linux): nothing is changed.
#[cfg(target_os = "linux")]
pub fn set_cpu_policy(policy: CpuPolicy) -> Result<bool, String> {
    use thread_priority::{
        NormalThreadSchedulePolicy, ThreadPriority, ThreadPriorityValue, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    let policy = ThreadSchedulePolicy::Normal(match policy {
        CpuPolicy::Batch => NormalThreadSchedulePolicy::Batch,
        CpuPolicy::Normal => NormalThreadSchedulePolicy::Other,
    });
    // The crate sets the nice value along with the policy, from a priority of 0 to 99: the one that
    // maps to the thread's own nice value leaves it as the operator started the process (raising it
    // back to 0 from `nice -n 10` would need a privilege, lowering it would change their choice).
    let nice = own_nice()?;
    let priority = (0..=*ThreadPriorityValue::MAX)
        .filter_map(|p| ThreadPriorityValue::try_from(p).ok())
        .map(ThreadPriority::Crossplatform)
        .find(|p| p.to_posix(policy).ok() == Some(nice))
        .ok_or_else(|| format!("no priority keeps the nice value {nice}"))?;
    set_thread_priority_and_policy(thread_native_id(), priority, policy).map_err(|e| format!("{e:?}"))?;
    Ok(true)
}

/// See the Linux version: nothing to set here.
#[cfg(not(target_os = "linux"))]
pub fn set_cpu_policy(_policy: CpuPolicy) -> Result<bool, String> {
    Ok(false)
}

/// Field `n` (counted from 1, as `proc(5)` numbers them) of a `/proc/<pid>/task/<tid>/stat` text:
/// 19 is the nice value, 41 the scheduling policy.
pub fn stat_field(stat: &str, n: usize) -> Option<&str> {
    // The name (2nd field) is in parentheses and may hold spaces: count from after its last one.
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(n.checked_sub(3)?)
}

/// The calling thread's nice value (`/proc/thread-self/stat`).
#[cfg(target_os = "linux")]
fn own_nice() -> Result<i32, String> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").map_err(|e| format!("/proc/thread-self/stat: {e}"))?;
    stat_field(&stat, 19)
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| "no nice value in /proc/thread-self/stat".to_owned())
}

/// [`set_cpu_policy`], with what it did written to the log: a warning where it failed (the service
/// runs on under the policy it had), one line at `info` otherwise.
pub fn set_cpu_policy_and_log(policy: CpuPolicy) {
    match set_cpu_policy(policy) {
        Ok(true) => tracing::info!(?policy, "cpu scheduling policy"),
        Ok(false) => tracing::info!(?policy, "cpu scheduling policy: not available here, left as it is"),
        Err(error) => tracing::warn!(?policy, %error, "the cpu scheduling policy could not be set; left as it is"),
    }
}

/// The most connections one HTTP worker holds at once whatever the limit allows (actix-web's own
/// default).
pub const MOST_CONNECTIONS_PER_WORKER: usize = 25_000;

/// How many connections each of `workers` HTTP workers may hold at once, so that connections can
/// never take every open file: a quarter of the limit (at least 64, at most 1 024) is kept for the
/// database's connections and files, the crawler's and the mailer's sockets and the log. A worker at
/// its share stops accepting; new connections wait in the listen queue until one closes, instead of
/// being accepted until `accept` fails with "Too many open files" — by when the store could not open
/// a file either.
pub fn connections_per_worker(open_files: u64, workers: usize) -> usize {
    let reserve = (open_files / 4).clamp(64, 1_024);
    let for_connections = open_files.saturating_sub(reserve);
    let each = for_connections / workers.max(1) as u64;
    (each.min(MOST_CONNECTIONS_PER_WORKER as u64) as usize).max(1)
}

/// The most HTTP workers a process starts, asked for or not (actix-web's own cap on its default).
pub const MOST_HTTP_WORKERS: u16 = 512;

/// The HTTP workers to start — `requested` (`--http-workers`), else actix-web's default: the
/// available parallelism, at most [`MOST_HTTP_WORKERS`] — and the connections each may hold under the
/// current open-file limit ([`connections_per_worker`]).
pub fn http_workers(requested: Option<u16>) -> (usize, usize) {
    let workers = requested
        .map_or_else(|| std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get), usize::from);
    let workers = workers.clamp(1, usize::from(MOST_HTTP_WORKERS));
    let open_files = rlimit::Resource::NOFILE.get().map_or(1_024, |(soft, _)| soft);
    (workers, connections_per_worker(open_files, workers))
}

/// How many connections the kernel keeps waiting for the server to accept them (the kernel caps it at
/// `net.core.somaxconn`, 4 096 on Linux since 5.4). Rust's `TcpListener::bind` asks for 128: a burst
/// of 130 connections faster than the workers accept them — a page with its assets, a load balancer
/// opening its pool, a flood — and the rest had their handshakes dropped, waiting for the client's
/// retry a second later (three seconds for the next). actix-web asks for 1 024 when it binds itself.
pub const LISTEN_BACKLOG: i32 = 1_024;

/// Binds `addr` (`host:port`, every address it resolves to tried in turn) and listens with a queue of
/// [`LISTEN_BACKLOG`], with `SO_REUSEADDR` on Unix as `TcpListener::bind` sets it, so a restart
/// binds the port while the old process's connections wait out `TIME_WAIT`.
pub fn listen(addr: &str) -> std::io::Result<std::net::TcpListener> {
    use std::net::ToSocketAddrs;
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        match listen_on(a) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last
        .unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "the address resolves to no address")))
}

fn listen_on(addr: std::net::SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

#[cfg(test)]
mod cap {
    use super::*;

    /// The scheduling policy (`/proc/thread-self/stat`'s 41st field: 0 `SCHED_OTHER`, 3 `SCHED_BATCH`)
    /// and nice value of the calling thread.
    #[cfg(target_os = "linux")]
    fn own_policy_and_nice() -> (u32, i32) {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        (stat_field(&stat, 41).unwrap().parse().unwrap(), stat_field(&stat, 19).unwrap().parse().unwrap())
    }

    /// Batch, on the calling thread and every thread it starts afterwards, its nice value kept; and
    /// back to normal. On threads of its own, so the test runner's keep their policy.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_cpu_policy_is_the_threads_and_their_childrens_and_keeps_the_nice_value() {
        std::thread::spawn(|| {
            let (policy, nice) = own_policy_and_nice();
            assert_eq!(policy, 0, "a test thread starts as SCHED_OTHER");
            assert_eq!(set_cpu_policy(CpuPolicy::Batch), Ok(true));
            assert_eq!(own_policy_and_nice(), (3, nice), "SCHED_BATCH, the nice value as it was");
            let child = std::thread::spawn(own_policy_and_nice).join().unwrap();
            assert_eq!(child, (3, nice), "a thread started afterwards inherits it");
            assert_eq!(set_cpu_policy(CpuPolicy::Normal), Ok(true));
            assert_eq!(own_policy_and_nice(), (0, nice));
            assert_eq!(std::thread::spawn(own_policy_and_nice).join().unwrap(), (0, nice));
        })
        .join()
        .unwrap();
    }

    /// An operator's `nice` stays: from a nice value raised by 5 (which an unprivileged thread could not
    /// lower again), the policy is set and the value is still the raised one (were it reset to 0, or to
    /// any fixed value, the call would fail or undo the operator's choice).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_cpu_policy_keeps_a_raised_nice_value() {
        std::thread::spawn(|| {
            let (_, before) = own_policy_and_nice();
            let raised = (before + 5).min(19);
            let status = std::process::Command::new("renice")
                .args(["-n", &raised.to_string(), "-p", &own_tid().to_string()])
                .output()
                .expect("renice runs");
            assert!(status.status.success(), "{status:?}");
            assert_eq!(own_policy_and_nice(), (0, raised));
            assert_eq!(set_cpu_policy(CpuPolicy::Batch), Ok(true));
            assert_eq!(own_policy_and_nice(), (3, raised));
        })
        .join()
        .unwrap();
    }

    /// The calling thread's id (`/proc/thread-self` names it).
    #[cfg(target_os = "linux")]
    fn own_tid() -> u32 {
        let link = std::fs::read_link("/proc/thread-self").unwrap();
        link.file_name().unwrap().to_str().unwrap().parse().unwrap()
    }

    #[test]
    fn connections_never_take_the_files_the_store_needs() {
        // (open files, workers) -> connections per worker
        let cases = [
            (256, 2, 96),    // 64 kept
            (300, 2, 112),   // 75 kept
            (1_024, 2, 384), // 256 kept
            (1_024, 1, 768),
            (20_000, 2, 9_488),   // 1 024 kept
            (524_288, 2, 25_000), // actix-web's own cap
            (1_048_576, 64, 16_368),
            (64, 2, 1), // nothing left over: one each, never zero
            (0, 0, 1),
        ];
        for (files, workers, each) in cases {
            assert_eq!(connections_per_worker(files, workers), each, "{files} files, {workers} workers");
        }
        // Whatever the limit, the workers' connections leave at least 64 files (or all there are).
        for files in [100u64, 257, 1_000, 4_096, 65_536] {
            for workers in 1..=8 {
                let held = connections_per_worker(files, workers) as u64 * workers as u64;
                assert!(held + 64 <= files, "{files} files, {workers} workers: {held} connections");
            }
        }
    }

    #[test]
    fn the_workers_asked_for_are_started_and_the_cores_otherwise() {
        let cores = std::thread::available_parallelism()
            .map_or(2, std::num::NonZeroUsize::get)
            .min(usize::from(MOST_HTTP_WORKERS));
        assert_eq!(http_workers(None).0, cores);
        for asked in [1, 3, MOST_HTTP_WORKERS] {
            let (workers, each) = http_workers(Some(asked));
            assert_eq!(workers, usize::from(asked));
            assert!(each >= 1, "{asked} workers: {each} connections each");
        }
        // Past the flag's own bounds (a caller that did not parse it): never none, never past the cap.
        assert_eq!(http_workers(Some(0)).0, 1);
        assert_eq!(http_workers(Some(u16::MAX)).0, usize::from(MOST_HTTP_WORKERS));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Held by the tests that change this process's open-file limit or need many files: under
    /// `cargo test` (the README's command) the tests of a binary share one process and run at once,
    /// and a burst of connections made while the other test had lowered the limit to 256 failed with
    /// "Too many open files" (seen in CI).
    static OPEN_FILES: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The soft limit ends at the hard one, from a soft limit below it.
    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one_and_never_lowered() {
        let _files = OPEN_FILES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
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

    /// A burst of connections nobody has accepted yet waits in the listen queue: every one completes
    /// its handshake at once. (Before, with `TcpListener::bind`'s queue of 128, the 130th waited for
    /// the client's retry a second later, and timed out here.)
    #[cfg(target_os = "linux")]
    #[test]
    fn a_burst_of_connections_waits_in_the_queue_instead_of_being_dropped() {
        let _files = OPEN_FILES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(LISTEN_BACKLOG as usize);
        let queue = somaxconn.min(LISTEN_BACKLOG as usize);
        assert!(queue > 200, "net.core.somaxconn is {somaxconn}: this test needs more than 200");
        let raised = raise_open_files().unwrap();
        assert!(
            raised.now as usize > queue + 64,
            "this test needs {} open files, the limit is {}",
            queue + 64,
            raised.now
        );
        let listener = listen("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut held = Vec::new();
        for i in 0..queue {
            let c = std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2))
                .unwrap_or_else(|e| panic!("connection {i} of {queue}, none accepted yet: {e}"));
            held.push(c);
        }
        assert_eq!(held.len(), queue);
        // The queue is the listener's: it is accepted from as any other.
        listener.set_nonblocking(true).unwrap();
        assert!(listener.accept().is_ok(), "a queued connection is accepted");
    }

    #[test]
    fn an_address_that_cannot_be_bound_is_an_error_not_a_panic() {
        let taken = listen("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        assert_eq!(listen(&format!("127.0.0.1:{port}")).unwrap_err().kind(), std::io::ErrorKind::AddrInUse);
        assert!(listen("no-port-given").is_err());
    }
}
