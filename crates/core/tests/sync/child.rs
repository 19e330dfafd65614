//! The sync process the crash tests spawn and kill -9: this test binary re-run with only
//! this test selected and the data dir in the environment. Without the environment it
//! does nothing (so a normal `cargo test` run passes it trivially).

use switchyard_core::{Console, ConsoleOptions, SyncOptions, SyncOutcome};

pub const CHILD_DIR_ENV: &str = "SWITCHYARD_TEST_SYNC_CHILD_DIR";
pub const CHILD_TIMEOUT_ENV: &str = "SWITCHYARD_TEST_SYNC_CHILD_TIMEOUT_MS";

#[test]
fn sync_child_process() {
    let Ok(dir) = std::env::var(CHILD_DIR_ENV) else {
        return;
    };
    let timeout: u64 = std::env::var(CHILD_TIMEOUT_ENV)
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(60_000);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let code = rt.block_on(async {
        let console = Console::open(ConsoleOptions::new(&dir, "test-child"))
            .await
            .unwrap();
        // SIGTERM asks the run to stop gracefully, as `switchyard sync` does.
        let stopping = console.clone();
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
        tokio::spawn(async move {
            term.recv().await;
            stopping.stop_syncs();
        });
        match console
            .sync(
                "p",
                SyncOptions {
                    until_drained: true,
                    timeout_ms: Some(timeout),
                    refresh_after: false,
                },
            )
            .await
        {
            Ok(r) => match r.outcome {
                SyncOutcome::Drained => 0,
                SyncOutcome::NeedsAttention => 3,
                SyncOutcome::Incomplete => 4,
            },
            Err(_) => 1,
        }
    });
    std::process::exit(code);
}
