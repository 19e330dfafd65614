//! Removing a profile never deletes queued work silently: for every table that goes with the
//! profile, one queued item of that kind makes the removal refuse (naming the kind and the
//! count, the row still there), and removing with the discard flag deletes it and reports it.
//! Nothing here reaches a control plane: the profile points at a closed port, so every item
//! stays queued.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use switchyard_core::protocol_replay::ReplaySelection;
use switchyard_core::protocol_retirement::RetirementRequest;
use switchyard_core::protocol_secrets::RotateSecretRequest;
use switchyard_core::secret_ops::SecretWrite;
use switchyard_core::{
    Console, ConsoleOptions, CoreError, DiscardQueued, ErrorBody, NewProfile, QueuedKind,
    QueuedWork, ReplayStart, ResourceKind, TargetTestRequest, Write,
};

const PROFILE: &str = "off";

async fn offline_console(dir: &Path) -> Console {
    let console = Console::open(ConsoleOptions::new(dir, "test"))
        .await
        .unwrap();
    console
        .add_profile(NewProfile {
            name: PROFILE.into(),
            // Nothing listens on the discard port: every send fails at once and stays queued.
            url: "http://127.0.0.1:9".into(),
            token: "a-token-for-a-closed-port-0123".into(),
        })
        .await
        .unwrap();
    console
}

/// The rows of `table` that belong to the profile, read from `console.db` itself.
async fn rows(dir: &Path, table: &str) -> i64 {
    let url = format!("sqlite://{}?mode=ro", dir.join("console.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE profile = ?");
    let n: i64 = sqlx::query_scalar(&sql)
        .bind(PROFILE)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

fn target(name: &str) -> Write {
    Write::Create {
        kind: ResourceKind::Target,
        name: name.into(),
        spec: json!({"url": format!("https://{name}.example.com/hook")}),
    }
}

fn replay() -> ReplayStart {
    ReplayStart {
        session_id: None,
        selection: ReplaySelection::DeliveryIds(vec!["dlv_1".into()]),
        rate_per_s: None,
    }
}

/// Removal refuses, naming `words`; the row of `table` is still there; removal with the
/// discard flag deletes it and returns it as lost.
async fn refuses_then_discards(
    console: &Console,
    dir: &Path,
    table: &str,
    kind: QueuedKind,
    words: &str,
) -> QueuedWork {
    let before = rows(dir, table).await;
    assert!(before > 0, "the test queued a row in {table}");
    let err = console
        .remove_profile(PROFILE, DiscardQueued::No)
        .await
        .expect_err("removal refuses while work is queued");
    let CoreError::QueuedWork { profile, queued } = &err else {
        panic!("expected QueuedWork, got {err:?}");
    };
    assert_eq!(profile, PROFILE);
    assert_eq!(queued.count(kind), 1, "{queued:?}");
    assert_eq!(err.code(), "queued_work");
    let message = err.to_string();
    assert!(message.contains(words), "{message}");
    assert!(message.contains("nothing was removed"), "{message}");
    let body = serde_json::to_value(ErrorBody::from(&err)).unwrap();
    assert_eq!(body["code"], "queued_work");
    assert_eq!(body["queued"]["total"], queued.total);
    assert_eq!(rows(dir, table).await, before, "nothing was deleted");
    assert!(console.profile(PROFILE).await.is_ok(), "the profile stays");
    assert_eq!(&console.queued_work(PROFILE).await.unwrap(), queued);

    let lost = console
        .remove_profile(PROFILE, DiscardQueued::All)
        .await
        .unwrap();
    assert_eq!(&lost, queued, "the removal names what was lost");
    assert_eq!(rows(dir, table).await, 0, "the queued {table} row is gone");
    assert!(
        console.profile(PROFILE).await.is_err(),
        "the profile is gone"
    );
    lost
}

#[tokio::test]
async fn a_queued_write_is_not_removed_silently() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    console.enqueue(PROFILE, target("billing")).await.unwrap();
    console.enqueue(PROFILE, target("crm")).await.unwrap();
    let err = console
        .remove_profile(PROFILE, DiscardQueued::No)
        .await
        .unwrap_err();
    assert!(err.to_string().contains(": 2 writes;"), "{err}");
    // Discarding one leaves one: only what is still queued counts.
    let first = console.list_outbox(Default::default()).await.unwrap();
    let billing = first.iter().find(|op| op.name == "billing").unwrap();
    console.discard(billing.id).await.unwrap();
    refuses_then_discards(
        &console,
        dir.path(),
        "outbox",
        QueuedKind::Write,
        "1 write;",
    )
    .await;
}

#[tokio::test]
async fn a_queued_replay_is_not_removed_silently() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    console
        .enqueue_replay_start(PROFILE, replay())
        .await
        .unwrap();
    refuses_then_discards(
        &console,
        dir.path(),
        "replay_outbox",
        QueuedKind::Replay,
        "1 replay",
    )
    .await;
}

#[tokio::test]
async fn a_rotation_in_progress_is_not_removed_silently() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    console
        .start_rotation(PROFILE, "billing", None, false)
        .await
        .unwrap();
    // Its stage request is a `secret_ops` row: counted as the rotation, not a second time.
    assert_eq!(rows(dir.path(), "secret_ops").await, 1);
    let lost = refuses_then_discards(
        &console,
        dir.path(),
        "rotations",
        QueuedKind::Rotation,
        ": 1 rotation in progress;",
    )
    .await;
    assert_eq!(lost.total, 1, "{lost:?}");
    assert_eq!(rows(dir.path(), "secret_ops").await, 0);
}

#[tokio::test]
async fn a_queued_secret_rotation_is_not_removed_silently() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    let rotate = SecretWrite::Rotate(RotateSecretRequest {
        overlap_seconds: Some(3600),
        force: None,
    });
    console
        .enqueue_secret_op(PROFILE, "billing", rotate, None)
        .await
        .unwrap();
    refuses_then_discards(
        &console,
        dir.path(),
        "secret_ops",
        QueuedKind::SecretChange,
        "1 signing-secret change",
    )
    .await;
}

#[tokio::test]
async fn a_queued_certificate_activation_is_not_removed_silently() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    console
        .enqueue_cert_activation(PROFILE, "billing", "billing-2027", None)
        .await
        .unwrap();
    refuses_then_discards(
        &console,
        dir.path(),
        "cert_ops",
        QueuedKind::CertificateActivation,
        "1 certificate activation",
    )
    .await;
}

#[tokio::test]
async fn a_queued_test_webhook_is_not_removed_silently() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    // A test webhook needs a target the console knows: queue its create, queue the test,
    // then discard the create, so the test webhook is all that is left.
    let create = console.enqueue(PROFILE, target("billing")).await.unwrap();
    console
        .enqueue_target_test(PROFILE, "billing", TargetTestRequest::default(), None)
        .await
        .unwrap();
    console.discard(create.id).await.unwrap();
    refuses_then_discards(
        &console,
        dir.path(),
        "target_tests",
        QueuedKind::TestWebhook,
        ": 1 test webhook;",
    )
    .await;
}

#[tokio::test]
async fn a_queued_retirement_is_not_removed_silently() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    let request = RetirementRequest {
        kind: ResourceKind::Target,
        name: "billing".into(),
        grace_seconds: 0,
        cascade_flows: false,
        dlq: Default::default(),
        dry_run: false,
    };
    // Sent at once: the control plane is unreachable, so it stays saved locally.
    let _ = console
        .retire(PROFILE, request, None, Duration::from_millis(200))
        .await;
    refuses_then_discards(
        &console,
        dir.path(),
        "recovery_ops",
        QueuedKind::Recovery,
        "1 fix or retirement",
    )
    .await;
}

#[tokio::test]
async fn every_kind_is_named_and_what_was_shown_bounds_what_is_discarded() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    console.enqueue(PROFILE, target("billing")).await.unwrap();
    console.enqueue(PROFILE, target("crm")).await.unwrap();
    console
        .start_rotation(PROFILE, "billing", None, false)
        .await
        .unwrap();
    console
        .enqueue_replay_start(PROFILE, replay())
        .await
        .unwrap();
    let shown = console.queued_work(PROFILE).await.unwrap();
    assert_eq!(
        shown.to_string(),
        "2 writes, 1 rotation in progress, 1 replay"
    );

    // Something queued after the person saw the list: removing "what was shown" refuses.
    console.enqueue(PROFILE, target("erp")).await.unwrap();
    let err = console
        .remove_profile(PROFILE, DiscardQueued::Shown(shown.clone()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("3 writes"), "{err}");
    assert_eq!(rows(dir.path(), "outbox").await, 3);

    let seen = console.queued_work(PROFILE).await.unwrap();
    let lost = console
        .remove_profile(PROFILE, DiscardQueued::Shown(seen.clone()))
        .await
        .unwrap();
    assert_eq!(lost, seen);
    for table in [
        "outbox",
        "rotations",
        "secret_ops",
        "replay_outbox",
        "cache",
    ] {
        assert_eq!(rows(dir.path(), table).await, 0, "{table}");
    }
}

#[tokio::test]
async fn finished_work_does_not_hold_a_removal() {
    let dir = tempfile::tempdir().unwrap();
    let console = offline_console(dir.path()).await;
    let op = console.enqueue(PROFILE, target("billing")).await.unwrap();
    console.discard(op.id).await.unwrap();
    assert!(console.queued_work(PROFILE).await.unwrap().is_empty());
    let lost = console
        .remove_profile(PROFILE, DiscardQueued::No)
        .await
        .unwrap();
    assert!(lost.is_empty());
    assert!(console.profile(PROFILE).await.is_err());
}
