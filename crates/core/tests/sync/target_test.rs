//! Test webhooks through the console core against the real control plane: a response lost
//! after the server called the receiver is resent with the same key and the receiver sees one
//! webhook; a failing receiver is a confirmed test that says so; a test waits for its target's
//! queued writes; keys name one test.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;
use switchyard_core::protocol_events::ErrorClass;
use switchyard_core::{ActionState, Console, CoreError, ResourceKind, TargetTestRequest, Write};
use switchyard_test_support::receiver::Receiver;

use crate::harness::{ControlPlane, console_with_profile};
use crate::proxy::{FaultProxy, Faults};

/// Creates target `name` → `url` through the console and waits until it is confirmed.
pub(crate) async fn create_target(console: &Console, name: &str, url: &str) {
    console
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Target,
                name: name.into(),
                spec: json!({"url": url, "timeout_ms": 2000}),
            },
        )
        .await
        .unwrap();
    assert_eq!(drain(console).await, 1);
}

/// Sends every queued resource write; returns how many were confirmed.
async fn drain(console: &Console) -> u64 {
    let opts = switchyard_core::SyncOptions {
        until_drained: true,
        timeout_ms: Some(20_000),
        refresh_after: false,
    };
    console.sync("p", opts).await.unwrap().done
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_whose_answer_is_lost_is_resent_with_its_key_and_reaches_the_receiver_once() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let proxy = FaultProxy::start(&cp.url(), 7).await;
    let console = console_with_profile(&dir.path().join("console"), &proxy.url()).await;
    let rx = Receiver::answering(200);
    create_target(&console, "billing", &rx.url).await;

    let op = console
        .enqueue_target_test("p", "billing", TargetTestRequest::default(), None)
        .await
        .unwrap();
    assert_eq!((op.state, op.attempts), (ActionState::Pending, 0));

    // The server calls the receiver, then the answer is lost on the way back.
    proxy.set_faults(Faults {
        drop_response: 1.0,
        ..Faults::default()
    });
    console
        .sync_target_tests("p", Duration::from_millis(1))
        .await
        .unwrap();
    let op = console.target_test(op.id).await.unwrap();
    assert_eq!(op.state, ActionState::Pending, "{op:?}");
    assert_eq!(op.attempts, 1);
    assert!(
        op.last_error.as_ref().is_some_and(|e| e.transient),
        "{op:?}"
    );
    assert_eq!(rx.ids().values().sum::<u32>(), 1, "the server sent it once");

    // Resent with the same key: the server answers from its stored result.
    proxy.set_faults(Faults::default());
    console
        .sync_target_tests("p", Duration::from_secs(30))
        .await
        .unwrap();
    let op = console.target_test(op.id).await.unwrap();
    assert_eq!(op.state, ActionState::Done, "{op:?}");
    let result = op.result.clone().expect("the receiver's answer");
    assert!(result.ok);
    assert_eq!(result.status_code, Some(200));
    assert_eq!(proxy.forwarded()[&op.idempotency_key], 2, "sent twice");
    assert_eq!(
        rx.ids(),
        HashMap::from([(result.webhook_id.clone(), 1)]),
        "one webhook, with the id the result names"
    );

    // Settled: another sync sends nothing.
    console
        .sync_target_tests("p", Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(proxy.forwarded()[&op.idempotency_key], 2);
    let audit = console
        .audit(switchyard_core::AuditQuery {
            profile: Some("p".into()),
            action_prefix: Some("target.".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let done = audit
        .iter()
        .find(|e| e.action == "target.test" && e.outcome == "done")
        .expect("the outcome in the audit log");
    assert!(
        done.detail.as_deref().unwrap_or("").contains("HTTP 200"),
        "{done:?}"
    );
}

/// A test of type `order.created` with a payload, as a client sends it.
fn order_created() -> TargetTestRequest {
    serde_json::from_value(json!({"event_type": "order.created", "payload": {"order": 42}}))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_fails_makes_a_confirmed_test_that_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let console = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    let rx = Receiver::answering(503);
    create_target(&console, "erp", &rx.url).await;

    let request = order_created();
    let op = console
        .enqueue_target_test("p", "erp", request, Some("draft-1".into()))
        .await
        .unwrap();
    let touched = console
        .sync_target_tests("p", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(touched.len(), 1);
    let op = console.target_test(op.id).await.unwrap();
    assert_eq!(op.state, ActionState::Done, "the control plane answered");
    let result = op.result.unwrap();
    assert!(!result.ok);
    assert_eq!(result.status_code, Some(503));
    assert_eq!(result.error_class, Some(ErrorClass::Http5xx));
    assert_eq!(rx.ids().values().sum::<u32>(), 1, "a test is not retried");

    // The same draft key again: the test already there, nothing new queued or sent.
    let again = console
        .enqueue_target_test("p", "erp", order_created(), Some("draft-1".into()))
        .await
        .unwrap();
    assert_eq!((again.id, again.state), (op.id, ActionState::Done));
    // The same key for another request is refused.
    let err = console
        .enqueue_target_test(
            "p",
            "erp",
            TargetTestRequest::default(),
            Some("draft-1".into()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::KeyReused { .. }), "{err:?}");
    assert_eq!(
        console
            .target_tests("p", Some("erp"), 10)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_waits_for_its_targets_queued_writes_and_refuses_unknown_targets() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let console = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    let rx = Receiver::answering(200);

    let err = console
        .enqueue_target_test("p", "nope", TargetTestRequest::default(), None)
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::NotFound { .. }), "{err:?}");
    let err = console
        .enqueue_target_test(
            "p",
            "nope",
            TargetTestRequest {
                event_type: Some("not valid".into()),
                ..TargetTestRequest::default()
            },
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, CoreError::Invalid { field, .. } if field == "event type"),
        "{err:?}"
    );
    assert!(
        console
            .target_tests("p", None, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // Created offline-first: the create is queued, the test behind it.
    console
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Target,
                name: "crm".into(),
                spec: json!({"url": rx.url, "timeout_ms": 2000}),
            },
        )
        .await
        .unwrap();
    let op = console
        .enqueue_target_test("p", "crm", TargetTestRequest::default(), None)
        .await
        .unwrap();
    let touched = console
        .sync_target_tests("p", Duration::from_secs(2))
        .await
        .unwrap();
    assert!(touched.is_empty(), "the create goes first");
    assert_eq!(console.target_test(op.id).await.unwrap().attempts, 0);

    assert_eq!(drain(&console).await, 1, "the create");
    console
        .sync_target_tests("p", Duration::from_secs(30))
        .await
        .unwrap();
    let op = console.target_test(op.id).await.unwrap();
    assert_eq!(op.state, ActionState::Done, "{op:?}");
    assert!(op.result.unwrap().ok);
    assert_eq!(rx.ids().values().sum::<u32>(), 1);
}
