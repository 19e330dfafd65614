//! SIGTERM to a sync process mid-run: it starts nothing new, waits for the writes already
//! sent and records them, and hands the rest back, so after a restart every write has
//! reached the server exactly once — not just once in effect (the Idempotency-Key already
//! guarantees that), but once on the wire. The negative control kills -9 instead: the
//! writes in flight are sent again.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use switchyard_control_plane::hooks::{HookPoint, Hooks};
use switchyard_core::{Console, OpState, OutboxFilter, ResourceKind, SyncOptions, Write};

use crate::harness::{ControlPlane, console_with_profile, spawn_sync, wait_child};
use crate::proxy::{FaultProxy, Faults};

const WRITES: usize = 300;

/// A slow server: every keyed write takes 100 ms once it has started executing.
struct Slow;

#[async_trait]
impl Hooks for Slow {
    async fn at(&self, point: HookPoint, _key: &str) {
        if point == HookPoint::AfterEffect {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Queues `WRITES` creates, starts a sync process through a counting proxy to a slow
/// server, stops it with `signal` once 40 writes reached the server, then syncs the rest
/// in-process. Returns the proxy and the server.
async fn stopped_mid_sync(dir: &std::path::Path, signal: &str) -> (FaultProxy, ControlPlane) {
    let mut cp = ControlPlane::start(dir, true).await;
    cp.hooks = Some(Arc::new(Slow));
    cp.restart().await;
    let proxy = FaultProxy::start(&cp.url(), 7).await;
    proxy.set_faults(Faults::default());
    let console = console_with_profile(dir, &proxy.url()).await;
    for i in 0..WRITES {
        console
            .enqueue(
                "p",
                Write::Create {
                    kind: ResourceKind::Endpoint,
                    name: format!("e{i}"),
                    spec: json!({"description": format!("endpoint {i}")}),
                },
            )
            .await
            .unwrap();
    }
    let mut child = spawn_sync(dir, false, 120_000);
    let started = std::time::Instant::now();
    while proxy.sent().len() < 40 {
        assert!(started.elapsed() < Duration::from_secs(60), "sync started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(proxy.sent().len() < WRITES, "stopped mid-sync");
    let killed = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let code = wait_child(&mut child, Duration::from_secs(30)).await;
    if signal == "-TERM" {
        assert_eq!(code, Some(4), "a stopped sync exits incomplete, work left");
        assert_no_op_left_sending(&console).await;
    }
    let report = console
        .sync(
            "p",
            SyncOptions {
                until_drained: true,
                timeout_ms: Some(60_000),
                refresh_after: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(report.counts.pending + report.counts.sending, 0, "drained");
    (proxy, cp)
}

/// What was sent is recorded and what was not is pending again: no lease is left behind.
async fn assert_no_op_left_sending(console: &Console) {
    let sending = console
        .list_outbox(OutboxFilter {
            profile: Some("p".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_iter()
        .filter(|op| op.state == OpState::Sending)
        .count();
    assert_eq!(sending, 0, "a graceful stop leaves no operation leased");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_sync_sends_no_write_twice_and_loses_none() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy, cp) = stopped_mid_sync(dir.path(), "-TERM").await;
    let sent = proxy.sent();
    assert_eq!(sent.len(), WRITES, "every write reached the server");
    let twice: Vec<_> = sent.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "sent twice: {twice:?}");
    let all = cp.all().await;
    assert_eq!(all.len(), WRITES);
    assert!(all.iter().all(|r| r.version == 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negative_control_kill_9_mid_sync_sends_the_writes_in_flight_again() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy, cp) = stopped_mid_sync(dir.path(), "-KILL").await;
    let sent = proxy.sent();
    assert_eq!(sent.len(), WRITES);
    assert!(
        sent.values().any(|n| *n > 1),
        "without a graceful stop the writes in flight are sent again"
    );
    // The keys still make each one land once.
    let all = cp.all().await;
    assert_eq!(all.len(), WRITES);
    assert!(all.iter().all(|r| r.version == 1));
}
