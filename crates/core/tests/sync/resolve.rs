//! Resolving what needs attention (412 three-way view, retry as new, discard), input
//! checks, token hygiene, 401 handling, and the key-retention check.

use std::time::Duration;

use serde_json::json;
use switchyard_core::{
    CoreError, Event, OpState, OutboxFilter, ResourceKind, SyncOptions, SyncOutcome, SyncState,
    Write,
};

use crate::harness::{ControlPlane, TOKEN, console, console_with_profile};
use crate::proxy::{FaultProxy, Faults};

fn drain() -> SyncOptions {
    SyncOptions {
        until_drained: true,
        timeout_ms: Some(30_000),
        refresh_after: true,
    }
}

async fn patch_directly(cp: &ControlPlane, path: &str, body: serde_json::Value) {
    let status = reqwest::Client::new()
        .patch(format!("{}{path}", cp.url()))
        .bearer_auth(TOKEN)
        .header("idempotency-key", uuid::Uuid::new_v4().to_string())
        .json(&body)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_stale_edit_conflicts_shows_three_views_and_retry_as_new_lands() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let c = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    let mut events = c.subscribe();
    c.enqueue(
        "p",
        Write::Create {
            kind: ResourceKind::Endpoint,
            name: "orders".into(),
            spec: json!({"description": "base", "event_types": ["a"]}),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );

    // The operator edits version 1 locally; meanwhile someone else changes the server.
    let mine = c
        .enqueue(
            "p",
            Write::Update {
                kind: ResourceKind::Endpoint,
                name: "orders".into(),
                patch: json!({"description": "mine"}),
            },
        )
        .await
        .unwrap();
    assert_eq!(mine.if_match, Some(1));
    patch_directly(
        &cp,
        "/v1/endpoints/orders",
        json!({"spec": {"description": "theirs", "event_types": ["b"]}}),
    )
    .await;

    let report = c.sync("p", drain()).await.unwrap();
    assert_eq!(report.outcome, SyncOutcome::NeedsAttention);
    let op = c.op(mine.id).await.unwrap();
    assert_eq!(op.state, OpState::NeedsAttention);
    let err = op.last_error.unwrap();
    assert_eq!(err.status, Some(412));
    assert_eq!(
        err.problem.unwrap().code,
        switchyard_core::Problem::new(412, switchyard_protocol::ErrorCode::VersionMismatch, "")
            .code
    );
    let cached = c
        .get_resource("p", ResourceKind::Endpoint, "orders")
        .await
        .unwrap();
    assert_eq!(cached.sync_state, SyncState::NeedsAttention);

    let view = c.conflict(mine.id).await.unwrap();
    assert_eq!(view.base.as_ref().unwrap()["description"], "base");
    assert_eq!(view.mine.as_ref().unwrap()["description"], "mine");
    assert_eq!(view.mine.as_ref().unwrap()["event_types"], json!(["a"]));
    let theirs = view.theirs.unwrap();
    assert_eq!(
        (theirs.version, theirs.spec["description"].as_str()),
        (2, Some("theirs"))
    );
    assert!(!view.theirs_from_cache);
    assert_eq!(view.conflicting_fields, ["description"]);

    // The server stored the 412 under the old key, so retry becomes a new op rebased on v2.
    let new = c.retry(mine.id).await.unwrap();
    assert_ne!(new.id, mine.id);
    assert_ne!(new.idempotency_key, mine.idempotency_key);
    assert_eq!(new.if_match, Some(2));
    let old = c.op(mine.id).await.unwrap();
    assert_eq!(
        (old.state, old.replaced_by),
        (OpState::Superseded, Some(new.id))
    );
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );
    let server = c
        .get_resource("p", ResourceKind::Endpoint, "orders")
        .await
        .unwrap()
        .server
        .unwrap();
    assert_eq!(
        (server.version, server.spec["description"].as_str()),
        (3, Some("mine"))
    );
    assert_eq!(
        server.spec["event_types"],
        json!(["b"]),
        "a merge patch keeps their other change"
    );

    let audit = c.audit(Default::default()).await.unwrap();
    for action in [
        "write.enqueue",
        "op.needs_attention",
        "op.retry_as_new",
        "op.done",
        "sync.run",
    ] {
        assert!(
            audit.iter().any(|e| e.action == action),
            "audit lacks {action}"
        );
    }
    let mut saw = (false, false);
    while let Ok(e) = events.try_recv() {
        match e {
            Event::OpTransition {
                op_id,
                to: OpState::NeedsAttention,
                ..
            } if op_id == mine.id => saw.0 = true,
            Event::SyncFinished(_) => saw.1 = true,
            _ => {}
        }
    }
    assert_eq!(
        saw,
        (true, true),
        "transition and sync events were published"
    );
}

#[tokio::test]
async fn offline_edits_browse_from_the_cache_and_discard_restores_server_truth() {
    let dir = tempfile::tempdir().unwrap();
    let mut cp = ControlPlane::start(dir.path(), true).await;
    let c = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    c.enqueue(
        "p",
        Write::Create {
            kind: ResourceKind::Target,
            name: "billing".into(),
            spec: json!({"url": "http://127.0.0.1:9/a"}),
        },
    )
    .await
    .unwrap();
    c.sync("p", drain()).await.unwrap();
    cp.stop().await;

    // Offline: browse and edit.
    let err = c.refresh("p").await.unwrap_err();
    assert!(matches!(err, CoreError::Offline { .. }), "{err}");
    let op = c
        .enqueue(
            "p",
            Write::Update {
                kind: ResourceKind::Target,
                name: "billing".into(),
                patch: json!({"url": "http://127.0.0.1:9/b"}),
            },
        )
        .await
        .unwrap();
    let listed = c.list_resources("p", ResourceKind::Target).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].local.as_ref().unwrap().spec["url"],
        "http://127.0.0.1:9/b"
    );
    assert_eq!(
        listed[0].server.as_ref().unwrap().spec["url"],
        "http://127.0.0.1:9/a"
    );
    assert_eq!(listed[0].sync_state, SyncState::Pending);
    // A one-pass sync against a dead server leaves the op pending with a transient error.
    let r = c
        .sync(
            "p",
            SyncOptions {
                until_drained: false,
                timeout_ms: Some(5_000),
                refresh_after: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(r.outcome, SyncOutcome::Incomplete);
    let pending = c.op(op.id).await.unwrap();
    assert_eq!(pending.state, OpState::Pending);
    assert!(pending.last_error.unwrap().transient);

    c.discard(op.id).await.unwrap();
    let after = c
        .get_resource("p", ResourceKind::Target, "billing")
        .await
        .unwrap();
    assert_eq!(after.local.unwrap().spec["url"], "http://127.0.0.1:9/a");
    assert_eq!(after.sync_state, SyncState::Synced);
    assert!(
        c.list_outbox(OutboxFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn bad_input_is_refused_and_nothing_is_queued() {
    let dir = tempfile::tempdir().unwrap();
    let c = console_with_profile(dir.path(), "http://127.0.0.1:9").await;
    let err = c
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Target,
                name: "t".into(),
                spec: json!({"url": "ftp://x"}),
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, CoreError::Invalid { field, .. } if field == "spec.url"),
        "{err}"
    );
    let err = c
        .enqueue(
            "p",
            Write::Update {
                kind: ResourceKind::Endpoint,
                name: "nope".into(),
                patch: json!({"description": "x"}),
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::NotFound { .. }), "{err}");
    let err = c
        .enqueue(
            "nobody",
            Write::Delete {
                kind: ResourceKind::Flow,
                name: "f".into(),
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::NotFound { .. }), "{err}");
    assert!(
        c.list_outbox(OutboxFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        c.list_resources("p", ResourceKind::Target)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn tokens_never_reach_sqlite_and_a_refused_token_keeps_ops_pending() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let data = dir.path().join("console");
    let c = console(&data).await;
    let wrong = "wrong-token-never-logged-4242";
    c.add_profile(switchyard_core::NewProfile {
        name: "p".into(),
        url: cp.url(),
        token: wrong.into(),
    })
    .await
    .unwrap();
    let op = c
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Endpoint,
                name: "e".into(),
                spec: json!({}),
            },
        )
        .await
        .unwrap();
    let err = c.sync("p", drain()).await.unwrap_err();
    assert!(matches!(err, CoreError::Unauthorized { .. }), "{err}");
    assert!(!err.to_string().contains(wrong));
    let op = c.op(op.id).await.unwrap();
    assert_eq!(
        op.state,
        OpState::Pending,
        "a 401 executes nothing; the op waits for a fixed token"
    );

    c.edit_profile(
        "p",
        switchyard_core::ProfileEdit {
            url: None,
            token: Some(TOKEN.into()),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );
    drop(c);
    for file in ["console.db", "console.db-wal", "console.db-shm"] {
        let path = data.join(file);
        if let Ok(bytes) = std::fs::read(&path) {
            for token in [wrong, TOKEN] {
                assert!(
                    !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
                    "{token} found in {file}"
                );
            }
        }
    }
}

#[tokio::test]
async fn an_op_older_than_key_retention_is_checked_against_live_state_not_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let mut cp = ControlPlane::start(dir.path(), true).await;
    cp.retention = Duration::from_millis(500);
    cp.restart().await;
    let proxy = FaultProxy::start(&cp.url(), 3).await;
    let c = console_with_profile(&dir.path().join("console"), &proxy.url()).await;
    let op = c
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Endpoint,
                name: "late".into(),
                spec: json!({}),
            },
        )
        .await
        .unwrap();

    // The server executes the create, but the answer is lost.
    proxy.set_faults(Faults {
        drop_response: 1.0,
        ..Faults::default()
    });
    c.sync(
        "p",
        SyncOptions {
            until_drained: false,
            timeout_ms: Some(5_000),
            refresh_after: false,
        },
    )
    .await
    .unwrap();
    assert_eq!(c.op(op.id).await.unwrap().state, OpState::Pending);
    // (A quick jittered retry within the pass may have sent it again; it was dropped too.)
    let sent = *proxy.forwarded().get(&op.idempotency_key).unwrap();
    assert!(sent >= 1);

    // Past retention the server has forgotten the key; a blind resend would create again
    // (409 name_taken). The core reads live state instead and sees its create landed.
    proxy.set_faults(Faults::default());
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );
    assert_eq!(c.op(op.id).await.unwrap().state, OpState::Done);
    assert_eq!(
        proxy.forwarded().get(&op.idempotency_key),
        Some(&sent),
        "not resent"
    );
}
