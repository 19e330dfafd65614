//! Client-certificate rotations through the console core against the real control plane and
//! a TLS receiver on loopback that requires client certificates from the CAs it trusts
//! (switchyard-test-support's `tls`): offline or refused uploads save nothing; a
//! receiver that only trusts the old CA fails the verify and promote is refused; a promote
//! whose answer is lost is resent after a crash with the same key and activates once; roll
//! back activates the old certificate again; no key is in any file of the data dir.

use std::path::Path;
use std::time::Duration;

use switchyard_core::rotation::step_key;
use switchyard_core::{Console, CoreError, RotationStep};
use switchyard_protocol::{CertificateState, UploadCertificateRequest};

use crate::harness::{ControlPlane, console as open_console, console_with_profile};
use crate::proxy::{FaultProxy, Faults};
use crate::target_test::create_target;
use crate::tls::{Ca, Issued, TlsReceiver};

const LONG: Duration = Duration::from_secs(30);

fn request(cert: &Issued) -> UploadCertificateRequest {
    UploadCertificateRequest {
        certificate_pem: cert.chain_pem.clone(),
        private_key_pem: cert.key_pem.clone(),
    }
}

/// The target's certificates and their states, sorted by id.
async fn states(console: &Console, target: &str) -> Vec<(String, CertificateState)> {
    let mut list: Vec<_> = console
        .client_certificates("p", target)
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.id, c.state))
        .collect();
    list.sort_by(|a, b| a.0.cmp(&b.0));
    list
}

fn refused(e: CoreError) -> &'static str {
    match e {
        CoreError::Refused { code, .. } => code,
        other => panic!("not a refusal: {other:?}"),
    }
}

/// Fails if a line of a key's PEM is in any file of the data dir (the database, its WAL).
fn assert_no_key_on_disk(data: &Path, keys: &[&Issued]) {
    for entry in std::fs::read_dir(data).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        for key in keys {
            let line = key.key_body();
            assert!(
                !bytes.windows(line.len()).any(|w| w == line.as_bytes()),
                "a private key is in {}",
                entry.path().display()
            );
        }
    }
}

/// The stored answer of the activation queued under `key` (`cert_ops.result`).
async fn activation_answer(data: &Path, key: &str) -> serde_json::Value {
    let url = format!("sqlite://{}?mode=ro", data.join("console.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let text: Option<String> =
        sqlx::query_scalar("SELECT result FROM cert_ops WHERE idempotency_key = ?")
            .bind(key)
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    serde_json::from_str(&text.expect("an answer")).unwrap()
}

/// A control plane trusting the receiver's server CA, behind a fault proxy; a console with
/// profile `p`; target `billing` → the receiver with certificate `old` active.
async fn setup(
    dir: &Path,
    receiver: &TlsReceiver,
    old: &Issued,
) -> (ControlPlane, FaultProxy, Console) {
    let mut cp = ControlPlane::start(dir, true).await;
    cp.target_roots_pem = vec![receiver.server_ca_pem.clone()];
    cp.restart().await;
    let proxy = FaultProxy::start(&cp.url(), 5).await;
    let console = console_with_profile(&dir.join("console"), &proxy.url()).await;
    create_target(&console, "billing", &receiver.url).await;
    console
        .upload_client_certificate("p", "billing", "old", &request(old), LONG)
        .await
        .unwrap();
    let op = console
        .enqueue_cert_activation("p", "billing", "old", None)
        .await
        .unwrap();
    let op = console.send_cert_op(op.id, LONG).await.unwrap();
    assert_eq!(op.state.as_str(), "done", "{op:?}");
    (cp, proxy, console)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_verify_promote_resumes_with_its_key_and_rolls_back_to_the_old_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (old_ca, new_ca) = (Ca::new("old CA"), Ca::new("new CA"));
    let receiver = TlsReceiver::start(&[&old_ca, &new_ca]).await;
    let old = old_ca.client("billing-client", 20);
    let new = new_ca.client("billing-client-2027", 400);
    let data = dir.path().join("console");
    let (_cp, proxy, console) = setup(dir.path(), &receiver, &old).await;

    // Offline: refused, nothing uploaded and nothing saved (the key cannot be queued).
    proxy.set_upstream(None);
    let offline = console
        .start_certificate_rotation("p", "billing", "new", request(&new), Duration::ZERO)
        .await
        .unwrap_err();
    let CoreError::Offline { message, .. } = &offline else {
        panic!("not offline: {offline:?}");
    };
    assert!(message.contains("no rotation was saved"), "{message}");
    proxy.set_upstream(Some(_cp.url()));
    assert!(console.rotations("p").await.unwrap().is_empty());
    assert_eq!(states(&console, "billing").await.len(), 1);

    // A key that is not the leaf's: the server's refusal names the field; nothing saved.
    let wrong = UploadCertificateRequest {
        certificate_pem: new.chain_pem.clone(),
        private_key_pem: old.key_pem.clone(),
    };
    let e = console
        .start_certificate_rotation("p", "billing", "new", wrong, LONG)
        .await
        .unwrap_err();
    let CoreError::Server { problem, .. } = &e else {
        panic!("not the server's refusal: {e:?}");
    };
    let field = problem.as_ref().and_then(|p| p.field.clone());
    assert_eq!(field.as_deref(), Some("private_key_pem"), "{e:?}");
    assert!(!e.to_string().contains(&old.key_body()), "{e}");
    assert!(console.rotations("p").await.unwrap().is_empty());

    // Staged: the certificate as the server lists it, and the one active before.
    let r = console
        .start_certificate_rotation("p", "billing", "new", request(&new), LONG)
        .await
        .unwrap();
    assert_eq!(r.step, RotationStep::Staged);
    let staged = r.new_certificate.clone().unwrap();
    assert_eq!(staged.fingerprint_sha256, new.fingerprint());
    assert_eq!(staged.subject, "CN=billing-client-2027");
    assert_eq!(staged.state, CertificateState::Staged);
    assert_eq!(r.old_certificate_id.as_deref(), Some("old"));
    assert!(r.actions.verify && r.actions.roll_back && !r.actions.promote);
    let second = console
        .start_certificate_rotation("p", "billing", "other", request(&new), LONG)
        .await;
    assert_eq!(refused(second.unwrap_err()), "rotation_open");

    // A receiver that only trusts the old CA: the verify fails, promote is refused.
    receiver.trust(&[&old_ca]);
    let failed = console.verify_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(failed.step, RotationStep::Staged);
    let result = failed.verify_result.clone().unwrap();
    assert!(!result.ok, "{result:?}");
    let error = result.error.clone().unwrap_or_default();
    assert!(error.contains("UnknownCA"), "{error}");
    assert_eq!(
        proxy.forwarded()[&step_key(&r.id, "verify:1")],
        1,
        "the verify is keyed"
    );
    let promote = console.promote_rotation(&r.id, false, LONG).await;
    assert_eq!(refused(promote.unwrap_err()), "not_verified");
    assert!(!proxy.forwarded().contains_key(&step_key(&r.id, "promote")));
    assert_eq!(
        states(&console, "billing").await,
        [
            ("new".into(), CertificateState::Staged),
            ("old".into(), CertificateState::Active)
        ]
    );

    // The receiver trusts the new CA: verified, by a handshake with the new certificate.
    receiver.trust(&[&old_ca, &new_ca]);
    let verified = console.verify_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(verified.step, RotationStep::Verified, "{verified:?}");
    assert_eq!(verified.verify_result.as_ref().unwrap().attempt, 2);
    assert_eq!(receiver.answered().last(), Some(&new.fingerprint()));

    // Promote: the server activates, its answer is lost; the console "crashes".
    proxy.set_faults(Faults {
        drop_response: 1.0,
        ..Faults::default()
    });
    let lost = console
        .promote_rotation(&r.id, false, Duration::from_millis(1))
        .await
        .unwrap();
    assert_eq!(lost.step, RotationStep::Promoting);
    let key = step_key(&r.id, "promote");
    assert_eq!(lost.pending_keys, std::slice::from_ref(&key));
    assert_eq!(proxy.forwarded()[&key], 1);
    drop(console);

    // Resumed by another process: the same key, the server's stored answer (one activation:
    // a second one would have replaced nothing).
    proxy.set_faults(Faults::default());
    let console = open_console(&data).await;
    let done = console.resume_rotation(&r.id, LONG).await.unwrap().rotation;
    assert_eq!(done.step, RotationStep::Done, "{done:?}");
    assert_eq!(proxy.forwarded()[&key], 2, "resent with its key");
    let answer = activation_answer(&data, &key).await;
    assert_eq!(answer["previous"], "old", "{answer}");
    assert_eq!(
        states(&console, "billing").await,
        [
            ("new".into(), CertificateState::Active),
            ("old".into(), CertificateState::Retired)
        ]
    );
    assert!(done.actions.roll_back, "the old certificate is still valid");

    // Roll back after promote: the old certificate is active again.
    let back = console.rollback_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(back.step, RotationStep::RolledBack, "{back:?}");
    assert_eq!(proxy.forwarded()[&step_key(&r.id, "rollback")], 1);
    assert_eq!(
        states(&console, "billing").await,
        [
            ("new".into(), CertificateState::Retired),
            ("old".into(), CertificateState::Active)
        ]
    );
    let again = console.rollback_rotation(&r.id, LONG).await;
    assert_eq!(refused(again.unwrap_err()), "rotation_step");

    drop(console);
    assert_no_key_on_disk(&data, &[&old, &new]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolled_back_before_promote_the_old_certificate_stays_active_and_skip_verify_promotes() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("CA");
    let receiver = TlsReceiver::start(&[&ca]).await;
    let old = ca.client("old", 20);
    let data = dir.path().join("console");
    let (_cp, proxy, console) = setup(dir.path(), &receiver, &old).await;

    // The active certificate's own id is refused.
    let same = console
        .start_certificate_rotation("p", "billing", "old", request(&old), LONG)
        .await;
    assert_eq!(refused(same.unwrap_err()), "certificate_active");

    let new = ca.client("new", 30);
    let r = console
        .start_certificate_rotation("p", "billing", "new", request(&new), LONG)
        .await
        .unwrap();
    let back = console.rollback_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(back.step, RotationStep::RolledBack);
    assert!(!back.actions.roll_back);
    assert!(
        !proxy.forwarded().contains_key(&step_key(&r.id, "rollback")),
        "nothing to undo on the server"
    );
    assert_eq!(
        states(&console, "billing").await,
        [
            ("new".into(), CertificateState::Staged),
            ("old".into(), CertificateState::Active)
        ]
    );

    // A new rotation re-uploads the same certificate (idempotent by its id) and promotes it
    // without a verify only when told to.
    let r = console
        .start_certificate_rotation("p", "billing", "new", request(&new), LONG)
        .await
        .unwrap();
    assert_eq!(
        refused(
            console
                .promote_rotation(&r.id, false, LONG)
                .await
                .unwrap_err()
        ),
        "not_verified"
    );
    let done = console.promote_rotation(&r.id, true, LONG).await.unwrap();
    assert_eq!(done.step, RotationStep::Done);
    assert_eq!(
        states(&console, "billing").await,
        [
            ("new".into(), CertificateState::Active),
            ("old".into(), CertificateState::Retired)
        ]
    );
    drop(console);
    assert_no_key_on_disk(&data, &[&old, &new]);
}

/// Over http no TLS handshake takes place, so the receiver's 200 does not verify the new
/// certificate: the rotation stays staged, the result says none was presented, and promote
/// is refused as unverified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verify_over_http_presents_no_certificate_and_verifies_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let receiver = switchyard_test_support::receiver::Receiver::answering(200);
    let console = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    create_target(&console, "billing", &receiver.url).await;
    let cert = Ca::new("test CA").client("billing-client", 60);
    let r = console
        .start_certificate_rotation("p", "billing", "new", request(&cert), LONG)
        .await
        .unwrap();
    assert_eq!(r.step, RotationStep::Staged);
    let tested = console.verify_rotation(&r.id, LONG).await.unwrap();
    assert_eq!(receiver.count(), 1, "the test webhook went out");
    assert_eq!(
        tested.step,
        RotationStep::Staged,
        "not verified: {tested:?}"
    );
    let result = tested.verify_result.clone().unwrap();
    assert!(!result.ok, "{result:?}");
    assert_eq!(result.status, Some(200));
    assert_eq!(result.certificate_presented, Some(false));
    let error = result.error.unwrap_or_default();
    assert!(error.contains("never presented over http"), "{error}");
    let promote = console.promote_rotation(&r.id, false, LONG).await;
    assert_eq!(refused(promote.unwrap_err()), "not_verified");
}
