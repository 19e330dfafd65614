//! The stop signals a long-running command honours.

/// Resolves on SIGINT (Ctrl-C) or SIGTERM (what `systemctl stop`, `kill` and most
/// supervisors send). Each call waits for a signal that arrives after it started listening.
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
