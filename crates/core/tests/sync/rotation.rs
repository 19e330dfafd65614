//! Guided rotations through the console core against the real control plane: a stage whose
//! answer is lost is resent with its derived key and makes one secret (its value shown again
//! until acknowledged, and in no file of the data dir); a failed verify blocks promote; roll
//! back restores the old secret and is refused once it expired; of two consoles advancing one
//! rotation one wins; a rotation started offline is staged once the server is back; a secret
//! write queued longer ago than the server keeps keys needs a person instead of a resend.

use std::path::Path;
use std::time::Duration;

use switchyard_core::rotation::step_key;
use switchyard_core::{ActionState, Console, CoreError, RotationStep};

use crate::harness::{ControlPlane, console as open_console, console_with_profile};
use crate::proxy::{FaultProxy, Faults};
use crate::target_test::create_target;
use switchyard_test_support::receiver::Receiver;

const HOUR: Option<Duration> = Some(Duration::from_secs(3600));
const LONG: Duration = Duration::from_secs(30);

/// How many secrets the server holds for `target`, and how many of them are still valid.
async fn secrets(console: &Console, target: &str) -> (usize, usize) {
    let list = console.signing_secrets("p", target).await.unwrap();
    let now = chrono::Utc::now();
    let valid = list
        .iter()
        .filter(|s| s.expires_at.is_none_or(|at| at > now))
        .count();
    (list.len(), valid)
}

/// Fails if `value` is in any file of the data dir (the database, its WAL, the token file).
fn assert_not_on_disk(data: &Path, value: &str) {
    for entry in std::fs::read_dir(data).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        assert!(
            !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
            "the secret's value is in {}",
            entry.path().display()
        );
    }
}

fn refused(e: CoreError) -> &'static str {
    match e {
        CoreError::Refused { code, .. } => code,
        other => panic!("not a refusal: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stage_whose_answer_is_lost_is_resent_with_its_key_and_makes_one_secret() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let proxy = FaultProxy::start(&cp.url(), 11).await;
    let data = dir.path().join("console");
    let console = console_with_profile(&data, &proxy.url()).await;
    let rx = Receiver::answering(204);
    create_target(&console, "billing", &rx.url).await;
    assert_eq!(secrets(&console, "billing").await, (1, 1));

    let r = console
        .start_rotation("p", "billing", HOUR, false)
        .await
        .unwrap();
    assert_eq!(r.step, RotationStep::Staging);
    assert_eq!(r.stage_key, step_key(&r.id, "stage"));
    assert_eq!(r.pending_keys, std::slice::from_ref(&r.stage_key));

    // The server rotates; its answer is lost on the way back.
    proxy.set_faults(Faults {
        drop_response: 1.0,
        ..Faults::default()
    });
    let lost = console
        .resume_rotation(&r.id, Duration::from_millis(1))
        .await
        .unwrap();
    assert_eq!(lost.rotation.step, RotationStep::Staging);
    assert!(lost.value.is_none());
    assert_eq!(proxy.forwarded()[&r.stage_key], 1);
    assert_eq!(secrets(&console, "billing").await, (2, 2), "rotated once");

    // Resumed: the same key, the server's stored answer, the value shown.
    proxy.set_faults(Faults::default());
    let staged = console.resume_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(staged.rotation.step, RotationStep::Staged, "{staged:?}");
    let value = staged
        .value
        .clone()
        .expect("the value from the stored answer");
    assert!(value.expose().starts_with("whsec_"));
    assert!(
        !format!("{staged:?}").contains(value.expose()),
        "Debug redacts"
    );
    assert_eq!(proxy.forwarded()[&r.stage_key], 2);
    assert_eq!(
        secrets(&console, "billing").await,
        (2, 2),
        "still one new secret"
    );
    let new_id = staged.rotation.new_secret_id.clone().unwrap();
    assert_eq!(staged.rotation.old_secrets.len(), 1);

    // Not acknowledged: a resume (another process, say) shows the same value again.
    let other = open_console(&data).await;
    let again = other.resume_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(again.value.as_ref(), Some(&value));
    assert_eq!(secrets(&console, "billing").await, (2, 2));

    // Acknowledged: never again.
    let acked = console.acknowledge_secret(&r.id).await.unwrap();
    assert!(acked.acknowledged);
    let after = console.resume_rotation(&r.id, LONG).await.unwrap();
    assert!(after.value.is_none());
    let forwarded = proxy.forwarded()[&r.stage_key];
    assert_eq!(forwarded, 3, "an acknowledged value is not asked for");

    // Verify and promote: one new secret signs.
    let verified = console.verify_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(verified.step, RotationStep::Verified, "{verified:?}");
    let result = verified.verify_result.clone().unwrap();
    assert!(result.ok && result.status == Some(204), "{result:?}");
    assert_eq!(rx.ids().values().sum::<u32>(), 1);
    let done = console.promote_rotation(&r.id, false, LONG).await.unwrap();
    assert_eq!(done.step, RotationStep::Done, "{done:?}");
    let list = console.signing_secrets("p", "billing").await.unwrap();
    let valid: Vec<_> = list
        .iter()
        .filter(|s| s.expires_at.is_none_or(|at| at > chrono::Utc::now()))
        .map(|s| s.id.clone())
        .collect();
    assert_eq!(valid, [new_id]);
    assert_not_on_disk(&data, value.expose());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_verify_blocks_promote_and_roll_back_restores_the_old_secret() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let data = dir.path().join("console");
    let console = console_with_profile(&data, &cp.url()).await;
    let refusing = Receiver::answering(401);
    create_target(&console, "crm", &refusing.url).await;
    let old = console.signing_secrets("p", "crm").await.unwrap()[0]
        .id
        .clone();

    let r = console
        .start_rotation("p", "crm", HOUR, false)
        .await
        .unwrap();
    // One open rotation per target.
    let second = console.start_rotation("p", "crm", None, false).await;
    assert_eq!(refused(second.unwrap_err()), "rotation_open");
    let staged = console.resume_rotation(&r.id, LONG).await.unwrap();
    assert!(staged.value.is_some());

    // The receiver refuses the new secret: back at staged with the result; promote refused.
    let failed = console.verify_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(failed.step, RotationStep::Staged);
    let result = failed.verify_result.clone().unwrap();
    assert!(!result.ok);
    assert_eq!((result.status, result.attempt), (Some(401), 1));
    assert!(failed.acknowledged, "verifying acknowledges the value");
    assert!(!failed.actions.promote && failed.actions.roll_back);
    let promote = console.promote_rotation(&r.id, false, LONG).await;
    assert_eq!(refused(promote.unwrap_err()), "not_verified");
    assert_eq!(
        secrets(&console, "crm").await,
        (2, 2),
        "nothing was expired"
    );

    // Roll back: the new secret ends, the old one signs without expiry.
    let back = console.rollback_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(back.step, RotationStep::RolledBack, "{back:?}");
    let list = console.signing_secrets("p", "crm").await.unwrap();
    let old_now = list.iter().find(|s| s.id == old).unwrap();
    assert!(old_now.expires_at.is_none(), "{list:?}");
    assert_eq!(secrets(&console, "crm").await.1, 1);

    // A promoted rotation cannot be rolled back: its old secret expired.
    let r2 = console
        .start_rotation("p", "crm", HOUR, false)
        .await
        .unwrap();
    console.resume_rotation(&r2.id, LONG).await.unwrap();
    let done = console.promote_rotation(&r2.id, true, LONG).await.unwrap();
    assert_eq!(done.step, RotationStep::Done, "{done:?}");
    let rollback = console.rollback_rotation(&r2.id, LONG).await;
    assert_eq!(refused(rollback.unwrap_err()), "old_secret_expired");
    assert_eq!(secrets(&console, "crm").await.1, 1);

    // Bad input: a clear error naming the field, nothing saved.
    let bad = console
        .start_rotation("p", "crm", Some(Duration::from_secs(8 * 86_400)), false)
        .await;
    assert!(matches!(bad, Err(CoreError::Invalid { ref field, .. }) if field == "overlap"));
    let bad = console.start_rotation("p", "crm", HOUR, true).await;
    assert!(matches!(bad, Err(CoreError::Invalid { ref field, .. }) if field == "overlap"));
    assert_eq!(console.rotations("p").await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_consoles_promoting_and_rolling_back_one_rotation_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let data = dir.path().join("console");
    let a = console_with_profile(&data, &cp.url()).await;
    let b = open_console(&data).await;
    let rx = Receiver::answering(200);
    create_target(&a, "erp", &rx.url).await;

    for round in 0..4 {
        let r = a.start_rotation("p", "erp", HOUR, false).await.unwrap();
        a.resume_rotation(&r.id, LONG).await.unwrap();
        // Both verify at once: one attempt, one test webhook.
        let (va, vb) = tokio::join!(
            a.verify_rotation(&r.id, LONG),
            b.verify_rotation(&r.id, LONG)
        );
        for v in [&va, &vb] {
            match v {
                Ok(r) => assert_eq!(r.step, RotationStep::Verified, "{r:?}"),
                Err(e) => assert_eq!(e.code(), "rotation_moved", "{e}"),
            }
        }
        let r = a.rotation(&r.id).await.unwrap();
        assert_eq!((r.step, r.verify_attempts), (RotationStep::Verified, 1));
        assert_eq!(rx.ids().values().sum::<u32>(), round + 1);

        // One promotes while the other rolls back: exactly one of them happens.
        let (p, rb) = if round % 2 == 0 {
            tokio::join!(
                a.promote_rotation(&r.id, false, LONG),
                b.rollback_rotation(&r.id, LONG)
            )
        } else {
            let (rb, p) = tokio::join!(
                b.rollback_rotation(&r.id, LONG),
                a.promote_rotation(&r.id, false, LONG)
            );
            (p, rb)
        };
        assert!(p.is_ok() != rb.is_ok(), "round {round}: {p:?} / {rb:?}");
        let loser = p.as_ref().err().or(rb.as_ref().err()).unwrap();
        assert!(
            matches!(
                loser.code(),
                "rotation_moved" | "rotation_step" | "old_secret_expired"
            ),
            "{loser}"
        );
        let end = a.rotation(&r.id).await.unwrap();
        let (total, valid) = secrets(&a, "erp").await;
        assert_eq!(valid, 1, "round {round}: {end:?} ({total} secrets)");
        let expected = if p.is_ok() {
            RotationStep::Done
        } else {
            RotationStep::RolledBack
        };
        assert_eq!(end.step, expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_started_offline_is_staged_once_the_server_answers() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let proxy = FaultProxy::start(&cp.url(), 3).await;
    let data = dir.path().join("console");
    let console = console_with_profile(&data, &proxy.url()).await;
    let rx = Receiver::answering(200);
    create_target(&console, "ledger", &rx.url).await;

    proxy.set_upstream(None);
    let r = console
        .start_rotation("p", "ledger", None, false)
        .await
        .unwrap();
    let offline = console.resume_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(offline.rotation.step, RotationStep::Staging);
    assert!(offline.value.is_none());
    assert_eq!(console.rotations("p").await.unwrap()[0].id, r.id);

    proxy.set_upstream(Some(cp.url()));
    let staged = console.resume_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(staged.rotation.step, RotationStep::Staged, "{staged:?}");
    assert!(staged.value.is_some());
    assert_eq!(proxy.forwarded()[&r.stage_key], 1);
    assert_eq!(secrets(&console, "ledger").await, (2, 2));
    // The default overlap: the old secret signs for a day.
    let until = staged.rotation.old_secrets[0].expires_at - chrono::Utc::now();
    assert!(until > chrono::Duration::hours(23), "{until}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overlap_that_ends_on_its_own_is_done_and_an_expiry_by_hand_is_a_roll_back() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let data = dir.path().join("console");
    let console = console_with_profile(&data, &cp.url()).await;
    let rx = Receiver::answering(200);
    create_target(&console, "mail", &rx.url).await;

    // A one-second overlap, left to end: the server shows the old secret expired → done.
    let r = console
        .start_rotation("p", "mail", Some(Duration::from_secs(1)), false)
        .await
        .unwrap();
    let staged = console.resume_rotation(&r.id, LONG).await.unwrap().rotation;
    assert_eq!(staged.step, RotationStep::Staged);
    assert!(staged.actions.roll_back && staged.actions.verify);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let ended = console.rotation(&r.id).await.unwrap();
    assert_eq!(ended.step, RotationStep::Done, "{ended:?}");
    assert!(ended.finished_at.is_some());
    assert!(!ended.actions.roll_back);

    // The new secret expired by hand (`targets expire-secret`) while the old one signs: the
    // rotation shows it was rolled back.
    let r = console
        .start_rotation("p", "mail", HOUR, false)
        .await
        .unwrap();
    let staged = console.resume_rotation(&r.id, LONG).await.unwrap().rotation;
    let new_id = staged.new_secret_id.clone().unwrap();
    let write = switchyard_core::secret_ops::SecretWrite::Expire { secret_id: new_id };
    let op = console
        .enqueue_secret_op("p", "mail", write, None)
        .await
        .unwrap();
    console.send_secret_op(op.id, LONG).await.unwrap();
    let back = console.rotation(&r.id).await.unwrap();
    assert_eq!(back.step, RotationStep::RolledBack, "{back:?}");
    assert_eq!(secrets(&console, "mail").await.1, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_write_queued_longer_ago_than_key_retention_is_not_resent_blindly() {
    let dir = tempfile::tempdir().unwrap();
    let mut cp = ControlPlane::start(dir.path(), true).await;
    cp.retention = Duration::from_secs(1);
    cp.restart().await;
    let proxy = FaultProxy::start(&cp.url(), 3).await;
    let data = dir.path().join("console");
    let console = console_with_profile(&data, &proxy.url()).await;
    let rx = Receiver::answering(200);
    create_target(&console, "audit", &rx.url).await;

    proxy.set_upstream(None);
    let write = switchyard_core::secret_ops::SecretWrite::Rotate(Default::default());
    let op = console
        .enqueue_secret_op("p", "audit", write, None)
        .await
        .unwrap();
    let offline = console.send_secret_op(op.id, LONG).await.unwrap();
    assert_eq!(offline.op.state, ActionState::Pending, "kept while offline");

    // Back after the server's retention: it may have forgotten the key, so a resend could
    // rotate a second time; the console hands the write to a person instead.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    proxy.set_upstream(Some(cp.url()));
    let later = console.send_secret_op(op.id, LONG).await.unwrap();
    assert_eq!(later.op.state, ActionState::NeedsAttention, "{later:?}");
    let error = later.op.last_error.unwrap();
    assert!(
        error.message.contains("keeps idempotency keys"),
        "{}",
        error.message
    );
    assert!(later.value.is_none());
    assert_eq!(proxy.sent().get(&op.idempotency_key), None, "never sent");
    assert_eq!(secrets(&console, "audit").await, (1, 1), "no second secret");
}
