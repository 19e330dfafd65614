//! Plain writes queued at once from two consoles on one data dir (the CLI and the app) to
//! one resource: each is applied on top of the others in the local view (none is lost), and
//! the first carries If-Match while the rest chain behind it. A plain write reads the cache
//! row outside a transaction and commits its INSERT guarded by that row, so this is what
//! catches a guard that lets a stale read through.

use serde_json::json;
use switchyard_core::{OpState, OutboxFilter, ResourceKind, Write};

use crate::harness::{console, console_with_profile};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_plain_writes_to_one_resource_all_land_in_the_local_view() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("console");
    let a = console_with_profile(&data, "http://127.0.0.1:9").await;
    let b = console(&data).await;
    a.enqueue(
        "p",
        Write::Create {
            kind: ResourceKind::Target,
            name: "hook".into(),
            spec: json!({"url": "http://127.0.0.1:9/hook"}),
        },
    )
    .await
    .unwrap();

    // A target takes at most 32 headers.
    const WRITES: usize = 30;
    let calls = (0..WRITES).map(|i| {
        let c = if i % 2 == 0 { a.clone() } else { b.clone() };
        tokio::spawn(async move {
            c.enqueue(
                "p",
                Write::Update {
                    kind: ResourceKind::Target,
                    name: "hook".into(),
                    patch: json!({"headers": {format!("x-h{i}"): "v"}}),
                },
            )
            .await
        })
    });
    for r in futures::future::join_all(calls).await {
        r.unwrap().unwrap();
    }

    // Every header made it into the local view: no write was applied to a stale view.
    let view = a
        .get_resource("p", ResourceKind::Target, "hook")
        .await
        .unwrap();
    let headers = view.local.unwrap().spec["headers"].clone();
    let missing: Vec<usize> = (0..WRITES)
        .filter(|i| headers.get(format!("x-h{i}")).is_none())
        .collect();
    assert!(missing.is_empty(), "lost writes {missing:?}: {headers}");

    let ops = a
        .list_outbox(OutboxFilter {
            profile: Some("p".into()),
            states: vec![OpState::Pending],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(ops.len(), WRITES + 1);
    assert_eq!(view.pending_ops.len(), WRITES + 1);
}
