//! Two sync processes on one data dir (the CLI and the app at once) never send one
//! operation twice: the SQLite lease lets exactly one of them claim it.

use std::time::Duration;

use crate::chaos::{compare, edit};
use crate::harness::{ControlPlane, console_with_profile, spawn_sync, wait_child};
use crate::proxy::{FaultProxy, Faults};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sync_processes_never_send_an_operation_twice() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let proxy = FaultProxy::start(&cp.url(), 7).await;
    // Only delays: any request that reaches the server twice would be a double send.
    proxy.set_faults(Faults {
        delay: 1.0,
        max_delay_ms: 20,
        ..Faults::default()
    });
    let data = dir.path().join("console");
    let console = console_with_profile(&data, &proxy.url()).await;
    let model = edit(&console, 99, 150).await;

    let mut a = spawn_sync(&data, false, 60_000);
    let mut b = spawn_sync(&data, false, 60_000);
    let (ca, cb) = (
        wait_child(&mut a, Duration::from_secs(90)).await,
        wait_child(&mut b, Duration::from_secs(90)).await,
    );
    assert_eq!((ca, cb), (Some(0), Some(0)), "both syncs end drained");

    let forwarded = proxy.forwarded();
    let twice: Vec<_> = forwarded.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "operations sent more than once: {twice:?}"
    );
    assert_eq!(forwarded.len(), 150, "every edit sent exactly once");
    let mismatches = compare(&cp, &model).await;
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}
