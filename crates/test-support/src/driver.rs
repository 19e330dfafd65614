//! Starting and stopping `tauri-driver`, the WebDriver server the desktop's scenarios
//! (`tests/e2e/`) and the DLQ scroll benchmark (`examples/bench_dlq_scroll.rs`) drive the app
//! through, and stopping the app itself (`examples/bench_desktop.rs`).

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// `~/.cargo/bin/tauri-driver` where `scripts/setup.sh` installs it, else from `PATH`.
pub fn tauri_driver() -> PathBuf {
    let installed = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
        .join(".cargo/bin/tauri-driver");
    if installed.exists() {
        installed
    } else {
        PathBuf::from("tauri-driver")
    }
}

/// Stops tauri-driver or the app: tauri-driver cleans up WebKitWebDriver (and the app) only
/// on SIGTERM or SIGINT, and the app quits cleanly on SIGTERM, so each gets SIGTERM and five
/// seconds before it is killed.
pub fn stop(child: &mut Child) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Whether something listens on loopback `port` within ten seconds.
pub async fn wait_listening(port: u16) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Waits (up to ten seconds) until nothing listens on loopback `port` any more.
pub async fn wait_port_free(port: u16) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
