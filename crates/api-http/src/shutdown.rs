//! Stopping a server in order: at SIGTERM or SIGINT the background work (job worker, calendar, the read
//! cache's change follower) stops first, then the HTTP server stops gracefully (requests in flight
//! finish). In the other order the background tasks met the HTTP workers' runtimes shutting down under
//! pooled connections those runtimes had opened, and logged database errors at most shutdowns.

use actix_web::dev::Server;
use tokio::task::JoinHandle;

/// Serves until `server` stops by itself or a stop signal arrives, and stops `background` either way:
/// on a signal before the server, otherwise after it. The server must be built with
/// `disable_signals()`, so that actix does not act on the signal first.
pub async fn serve_until_stopped(server: Server, background: JoinHandle<()>) -> std::io::Result<()> {
    let handle = server.handle();
    let mut background = Some(background);
    let mut server = std::pin::pin!(server);
    let served = tokio::select! {
        r = &mut server => r,
        () = stop_signal() => {
            tracing::info!("stopping: background work first, then the server (requests in flight finish)");
            stop_task(background.take()).await;
            // The server future carries out the stop: both are polled together.
            tokio::join!(handle.stop(true), server).1
        }
    };
    stop_task(background.take()).await;
    served
}

/// Aborts a background task and waits until it is gone.
pub async fn stop_task(task: Option<JoinHandle<()>>) {
    if let Some(t) = task {
        t.abort();
        let _ = t.await;
    }
}

/// Resolves at SIGTERM (how a process manager or container runtime stops a service) or SIGINT (^C).
async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "SIGTERM cannot be caught; only SIGINT stops the server gracefully");
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
