//! Writes queued under a caller-chosen key (MCP request keys, GitOps content keys): the same
//! write with the same key is queued once — concurrently, from two consoles on one data dir,
//! and after it was confirmed — and a different write under that key is refused.

use serde_json::json;
use switchyard_core::protocol_replay::ReplaySelection;
use switchyard_core::{
    AuditQuery, CoreError, EnqueueOptions, OpState, Origin, OutboxFilter, ReplayStart,
    ResourceKind, SyncOptions, Write,
};

use crate::harness::{ControlPlane, console, console_with_profile};

fn create(name: &str, description: &str) -> Write {
    Write::Create {
        kind: ResourceKind::Endpoint,
        name: name.into(),
        spec: json!({"description": description}),
    }
}

fn keyed(key: &str) -> EnqueueOptions {
    EnqueueOptions {
        idempotency_key: Some(key.into()),
        origin: Origin::Mcp {
            client: "test-agent 1.0".into(),
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn the_same_keyed_write_is_queued_once_even_concurrently_and_after_it_landed() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let data = dir.path().join("console");
    let a = console_with_profile(&data, &cp.url()).await;
    let b = console(&data).await;

    // 50 identical calls at once, half through a second console on the same data dir.
    let calls = (0..50).map(|i| {
        let c = if i % 2 == 0 { a.clone() } else { b.clone() };
        tokio::spawn(async move {
            c.enqueue_with("p", create("orders", "orders"), keyed("req-1"))
                .await
        })
    });
    let results: Vec<_> = futures::future::join_all(calls)
        .await
        .into_iter()
        .map(|r| r.unwrap().unwrap())
        .collect();
    let first = results
        .iter()
        .find(|r| !r.replayed)
        .expect("one call queued it");
    assert_eq!(results.iter().filter(|r| !r.replayed).count(), 1);
    assert!(results.iter().all(|r| r.op.id == first.op.id));
    assert_eq!(first.op.idempotency_key, "req-1");
    assert_eq!(
        first.op.origin,
        Origin::Mcp {
            client: "test-agent 1.0".into()
        }
    );

    let all_states = OutboxFilter {
        profile: Some("p".into()),
        states: vec![OpState::Pending, OpState::Done],
        ..Default::default()
    };
    assert_eq!(a.list_outbox(all_states.clone()).await.unwrap().len(), 1);

    a.sync(
        "p",
        SyncOptions {
            until_drained: true,
            timeout_ms: Some(30_000),
            refresh_after: true,
        },
    )
    .await
    .unwrap();
    // After it landed (the endpoint now exists), the same call is still the same write.
    let again = b
        .enqueue_with("p", create("orders", "orders"), keyed("req-1"))
        .await
        .unwrap();
    assert!(again.replayed);
    assert_eq!(again.op.id, first.op.id);
    assert_eq!(again.op.state, OpState::Done);
    assert_eq!(a.list_outbox(all_states).await.unwrap().len(), 1);
    assert_eq!(cp.all().await.len(), 1);

    // The audit log says who queued it.
    let audit = a
        .audit(AuditQuery {
            action_prefix: Some("write.enqueue".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].actor, "mcp (test-agent 1.0)");
}

#[tokio::test]
async fn a_different_write_under_a_used_key_is_refused_and_queues_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let c = console_with_profile(dir.path(), "http://127.0.0.1:9").await;
    c.enqueue_with("p", create("orders", "orders"), keyed("req-1"))
        .await
        .unwrap();
    for other in [
        create("orders", "something else"),
        create("billing", "orders"),
        Write::Disable {
            name: "orders".into(),
        },
    ] {
        let err = c
            .enqueue_with("p", other, keyed("req-1"))
            .await
            .unwrap_err();
        assert!(matches!(err, CoreError::KeyReused { .. }), "{err:?}");
        assert_eq!(err.code(), "key_reused");
    }
    let live = c.list_outbox(OutboxFilter::default()).await.unwrap();
    assert_eq!(live.len(), 1);
    // The cache shows only the one queued write.
    assert!(
        c.get_resource("p", ResourceKind::Endpoint, "billing")
            .await
            .is_err()
    );

    for bad in ["", "tab\there", &"k".repeat(256), "café"] {
        let err = c
            .enqueue_with("p", create("x", "x"), keyed(bad))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, CoreError::Invalid { field, .. } if field == "idempotency_key"),
            "{bad:?}: {err:?}"
        );
    }
    assert_eq!(
        c.list_outbox(OutboxFilter::default()).await.unwrap().len(),
        1
    );
}

#[tokio::test]
async fn an_explicit_if_match_is_sent_and_a_stale_one_needs_attention() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let c = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    let drained = SyncOptions {
        until_drained: true,
        timeout_ms: Some(30_000),
        refresh_after: true,
    };
    c.enqueue("p", create("orders", "v1")).await.unwrap();
    c.sync("p", drained.clone()).await.unwrap();
    // Planned against version 1, but the resource moved on to version 2 before the apply.
    c.enqueue(
        "p",
        Write::Update {
            kind: ResourceKind::Endpoint,
            name: "orders".into(),
            patch: json!({"description": "v2"}),
        },
    )
    .await
    .unwrap();
    c.sync("p", drained.clone()).await.unwrap();
    let planned = c
        .enqueue_with(
            "p",
            Write::Apply {
                kind: ResourceKind::Endpoint,
                name: "orders".into(),
                spec: json!({"description": "from git"}),
            },
            EnqueueOptions {
                idempotency_key: Some("gitops-key".into()),
                if_match: Some(1),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(planned.op.if_match, Some(1));
    c.sync("p", drained).await.unwrap();
    let op = c.op(planned.op.id).await.unwrap();
    assert_eq!(op.state, OpState::NeedsAttention);
    assert_eq!(op.last_error.and_then(|e| e.status), Some(412));
}

fn fingerprinted(key: &str, fingerprint: &str) -> EnqueueOptions {
    EnqueueOptions {
        fingerprint: Some(fingerprint.into()),
        ..keyed(key)
    }
}

fn replay_start(session_id: &str, ids: &[&str]) -> ReplayStart {
    ReplayStart {
        session_id: Some(session_id.into()),
        selection: ReplaySelection::DeliveryIds(ids.iter().map(|i| i.to_string()).collect()),
        rate_per_s: None,
    }
}

#[tokio::test]
async fn a_key_names_one_write_across_fingerprints_and_both_outboxes() {
    let dir = tempfile::tempdir().unwrap();
    let c = console_with_profile(dir.path(), "http://127.0.0.1:9").await;
    let agent = Origin::Mcp {
        client: "test-agent 1.0".into(),
    };
    let first = c
        .enqueue_with("p", create("orders", "o"), fingerprinted("k-1", "fp-a"))
        .await
        .unwrap();
    let again = c
        .enqueue_with("p", create("orders", "o"), fingerprinted("k-1", "fp-a"))
        .await
        .unwrap();
    assert!(again.replayed && again.op.id == first.op.id);
    // The same write asked for by another request (another fingerprint): refused.
    let err = c
        .enqueue_with("p", create("orders", "o"), fingerprinted("k-1", "fp-b"))
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::KeyReused { .. }), "{err:?}");

    // A replay start under a key a resource write holds, and the other way round.
    let err = c
        .enqueue_replay_start_with(
            "p",
            replay_start("k-1", &["dlv_1"]),
            agent.clone(),
            Some("fp-r".into()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::KeyReused { .. }), "{err:?}");
    let started = c
        .enqueue_replay_start_with(
            "p",
            replay_start("k-2", &["dlv_1"]),
            agent.clone(),
            Some("fp-r".into()),
        )
        .await
        .unwrap();
    assert!(!started.replayed);
    assert_eq!(started.op.origin, agent);
    let err = c
        .enqueue_with("p", create("billing", "b"), fingerprinted("k-2", "fp-c"))
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::KeyReused { .. }), "{err:?}");

    // The same start again is the queued one; another selection or fingerprint is refused.
    let same = c
        .enqueue_replay_start_with(
            "p",
            replay_start("k-2", &["dlv_1"]),
            agent.clone(),
            Some("fp-r".into()),
        )
        .await
        .unwrap();
    assert!(same.replayed && same.op.id == started.op.id);
    for (ids, fp) in [(&["dlv_2"][..], "fp-r"), (&["dlv_1"][..], "fp-other")] {
        let err = c
            .enqueue_replay_start_with(
                "p",
                replay_start("k-2", ids),
                agent.clone(),
                Some(fp.into()),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, CoreError::KeyReused { .. }), "{err:?}");
    }
    assert_eq!(c.replay_ops("p").await.unwrap().len(), 1);
    assert_eq!(
        c.list_outbox(OutboxFilter::default()).await.unwrap().len(),
        1
    );
    let audit = c
        .audit(AuditQuery {
            action_prefix: Some("replay.start".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].actor, "mcp (test-agent 1.0)");
}

#[tokio::test]
async fn a_profile_read_only_for_agents_refuses_their_writes_only() {
    let dir = tempfile::tempdir().unwrap();
    let c = console_with_profile(dir.path(), "http://127.0.0.1:9").await;
    let queued = c
        .enqueue_with("p", create("before", "b"), keyed("k-before"))
        .await
        .unwrap();
    let marked = c.set_agents_read_only("p", true).await.unwrap();
    assert!(marked.agents_read_only);
    assert!(c.profile("p").await.unwrap().agents_read_only);

    let err = c
        .enqueue_with("p", create("orders", "o"), keyed("k-1"))
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::AgentsReadOnly { .. }), "{err:?}");
    assert_eq!(err.code(), "profile_read_only");
    let err = c
        .enqueue_replay_start_with(
            "p",
            replay_start("k-2", &["dlv_1"]),
            Origin::Mcp {
                client: "a 1".into(),
            },
            Some("fp".into()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::AgentsReadOnly { .. }), "{err:?}");
    // What an agent queued before the mark is still the same op when it asks again.
    let again = c
        .enqueue_with("p", create("before", "b"), keyed("k-before"))
        .await
        .unwrap();
    assert!(again.replayed && again.op.id == queued.op.id);
    // A person's writes are not affected.
    c.enqueue("p", create("by-hand", "h")).await.unwrap();
    assert_eq!(
        c.list_outbox(OutboxFilter::default()).await.unwrap().len(),
        2
    );
    assert!(c.replay_ops("p").await.unwrap().is_empty());

    c.set_agents_read_only("p", false).await.unwrap();
    c.enqueue_with("p", create("orders", "o"), keyed("k-1"))
        .await
        .unwrap();
}
