//! The rotation wizard against a receiver that verifies Standard Webhooks signatures with the
//! secrets its owner gave it: a new secret is staged and shown once, the overview flags the
//! open overlap, the wizard is closed and resumed from the target's drawer, the verify fails
//! while the receiver only knows the old secret and passes once it has the new one, and the
//! promote leaves the new secret signing alone. The value is then nowhere in the app's files.
//! Screenshots: each step.
//!
//! The certificate path, against a TLS receiver that requires client certificates from the CAs
//! it trusts: the new certificate is uploaded (chain and key typed into the wizard), its
//! handshake fails while the receiver trusts only the old CA and passes once it trusts the new
//! one, it is activated, and the key is then in no file of the app. Screenshots
//! `rotation-cert-*`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::json;
use switchyard_control_plane::delivery::signing::verify;
use switchyard_test_support::receiver::status;

use crate::harness::{App, ONE_AT_A_TIME};
use crate::plane::Plane;

/// A receiver on loopback accepting a webhook (204) when a signature verifies with a secret it
/// holds, 401 otherwise.
struct Receiver {
    inner: switchyard_test_support::receiver::Receiver,
    secrets: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    fn start() -> Self {
        let secrets: Arc<Mutex<Vec<String>>> = Arc::default();
        let held = secrets.clone();
        let inner = switchyard_test_support::receiver::Receiver::judging(move |r, _| {
            let ts = r.header("webhook-timestamp").parse::<i64>().unwrap_or(0);
            let signed = |s: &String| {
                let (id, signature) = (r.header("webhook-id"), r.header("webhook-signature"));
                verify(s, id, ts, r.body.as_bytes(), signature)
            };
            status(if held.lock().unwrap().iter().any(signed) {
                204
            } else {
                401
            })
        });
        Self { inner, secrets }
    }

    fn url(&self) -> &str {
        &self.inner.url
    }

    fn hold(&self, secret: &str) {
        self.secrets.lock().unwrap().push(secret.to_owned());
    }
}

/// Every file under `dir` that contains `needle` (the SQLite files with their WAL, the logs).
fn files_containing(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn a_signing_secret_is_staged_verified_and_promoted_through_the_wizard() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let plane = Plane::start(work.path()).await?;
    let receiver = Receiver::start();
    let created = plane
        .call(
            "POST",
            "/v1/targets",
            Some(json!({"name": "billing", "spec": {"url": receiver.url(), "timeout_ms": 2000}})),
        )
        .await?;
    let old = created["status"]["signing_secret"]
        .as_str()
        .context("the new target's secret")?;
    receiver.hold(old);

    let app = App::launch().await?;
    app.wait_online().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    app.click("nav-target").await?;
    app.click("row-billing").await?;
    app.click("rotate").await?;
    app.el("rotation-choose-secret").await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-choose").await?;
    app.click("rotation-next").await?;
    app.click("rotation-stage").await?;
    let value = app
        .wait_text("rotation-secret-value", "the new secret shown once", |t| {
            t.starts_with("whsec_")
        })
        .await?;
    ensure!(value != old, "a new secret");
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-stage").await?;
    app.click("rotation-stored").await?;
    app.el("rotation-verify").await?;

    // Closed mid-procedure: the target list and the overview flag the open overlap; the
    // drawer resumes it.
    app.click("rotation-close").await?;
    app.close_drawer().await.ok();
    app.wait_text("credential-warning-billing", "the list's badge", |t| {
        t.contains("Overlap open")
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-target-list").await?;
    app.click("nav-overview").await?;
    app.wait_text("overview-credentials", "the overlap on the overview", |t| {
        t.contains("billing")
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-overview").await?;
    app.click("overview-credential-billing").await?;
    // The drawer says a rotation is open, and resumes it.
    app.wait_text("drawer-rotation", "the open rotation in the drawer", |t| {
        t.contains("Staged (overlap open)") && t.contains("test it next")
    })
    .await?;
    app.click("drawer-rotation-resume").await?;

    // The receiver knows only the old secret: the test signed with the new one alone fails.
    app.click("rotation-verify").await?;
    let failed = app
        .wait_text("rotation-verify-result", "the failed verify", |t| {
            t.contains("did not accept")
        })
        .await?;
    ensure!(failed.contains("401"), "{failed}");
    ensure!(
        app.count("rotation-promote").await? == 0,
        "no promote after a failed verify"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-verify-failed").await?;

    // Its owner adds the new secret beside the old one; the verify passes.
    receiver.hold(&value);
    app.click("rotation-verify").await?;
    app.wait_text("rotation-verify-result", "the passed verify", |t| {
        t.contains("accepted the new secret")
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-verify").await?;
    app.click("rotation-promote").await?;
    app.wait_text("rotation-final-step", "the rotation done", |t| t == "Done")
        .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-done").await?;

    // The control plane made one new secret, and only it signs.
    let listed = plane
        .call("GET", "/v1/targets/billing/secrets", None)
        .await?;
    let items = listed["items"].as_array().cloned().unwrap_or_default();
    ensure!(items.len() == 2, "one rotation, one new secret: {listed}");
    let now = chrono::Utc::now();
    let valid: Vec<_> = items
        .iter()
        .filter(|s| {
            s["expires_at"]
                .as_str()
                .is_none_or(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok_and(|t| t > now))
        })
        .collect();
    ensure!(valid.len() == 1, "only the new secret is valid: {listed}");
    ensure!(valid[0]["id"] == items[1]["id"], "{listed}");

    // The value was shown, never kept: no file of the app holds it.
    let on_disk = files_containing(app.dirs(), value.as_bytes());
    ensure!(on_disk.is_empty(), "the new secret is on disk: {on_disk:?}");
    app.quit().await
}

/// Clicks a button of the wizard's footer after scrolling it into view (the modal scrolls
/// once the PEMs are in; WebKitWebDriver does not scroll a modal's overflow to reach it).
async fn click_in_view(app: &App, testid: &str) -> Result<()> {
    app.el(testid).await?;
    let script = format!(
        "document.querySelector(\"[data-testid='{testid}']\").scrollIntoView({{block: 'center'}}); return true;"
    );
    let _: bool = app.eval(&script).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    app.click(testid).await
}

/// Every button of the wizard's footer lies inside the modal, and neither the modal nor its
/// body scrolls sideways: a long label ("Test the handshake again") beside "Close (resume
/// later)" used to push Close out of the modal behind a horizontal scrollbar (issue 47, N12).
async fn buttons_inside_the_wizard(app: &App) -> Result<()> {
    let script = r#"
        const content = document.querySelector('.mantine-Modal-content');
        const body = document.querySelector('.mantine-Modal-body');
        const box = content.getBoundingClientRect();
        const outside = [...document.querySelectorAll("[data-testid='rotation-buttons'] button")]
            .filter((b) => {
                const r = b.getBoundingClientRect();
                return r.left < box.left - 0.5 || r.right > box.right + 0.5;
            })
            .map((b) => b.textContent);
        return {
            outside,
            buttons: document.querySelectorAll("[data-testid='rotation-buttons'] button").length,
            sideways: Math.max(body.scrollWidth - body.clientWidth, content.scrollWidth - content.clientWidth),
        };
    "#;
    let seen: serde_json::Value = app.eval(script).await?;
    ensure!(
        seen["buttons"].as_u64() >= Some(3),
        "the footer's buttons: {seen}"
    );
    ensure!(
        seen["outside"].as_array().is_some_and(Vec::is_empty),
        "buttons outside the wizard: {seen}"
    );
    ensure!(
        seen["sideways"].as_f64().is_some_and(|w| w <= 0.0),
        "the wizard scrolls sideways: {seen}"
    );
    Ok(())
}

/// Types a PEM into a textarea line by line (WebKitWebDriver drops a `\n` inside the keys).
async fn type_pem(app: &App, testid: &str, pem: &str) -> Result<()> {
    app.click(testid).await?;
    let el = app.el(testid).await?;
    for line in pem.lines() {
        el.send_keys(line).await?;
        el.send_keys(thirtyfour::Key::Enter).await?;
    }
    Ok(())
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn a_client_certificate_is_uploaded_tested_and_activated_through_the_wizard() -> Result<()> {
    use crate::tls::{Ca, TlsReceiver};

    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let (old_ca, new_ca) = (Ca::new("old CA"), Ca::new("new CA"));
    let receiver = TlsReceiver::start(&[&old_ca]).await;
    let plane = Plane::start_trusting(work.path(), vec![receiver.server_ca_pem.clone()]).await?;
    plane
        .call(
            "POST",
            "/v1/targets",
            Some(json!({"name": "billing", "spec": {"url": receiver.url, "timeout_ms": 2000}})),
        )
        .await?;
    let old = old_ca.client("billing-client", 20);
    let new = new_ca.client("billing-client-2027", 400);
    plane
        .call(
            "PUT",
            "/v1/targets/billing/client-certificates/cert-old",
            Some(old.upload()),
        )
        .await?;
    plane
        .call(
            "POST",
            "/v1/targets/billing/client-certificates/cert-old/activate",
            None,
        )
        .await?;

    let app = App::launch().await?;
    app.wait_online().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    app.click("nav-target").await?;
    app.click("row-billing").await?;
    app.click("rotate").await?;
    app.click("rotation-choose-certificate").await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-cert-choose").await?;
    app.click("rotation-next").await?;
    app.type_into("rotation-cert-id", "cert-2027").await?;
    type_pem(&app, "rotation-cert-pem", &new.chain_pem).await?;
    type_pem(&app, "rotation-cert-key", &new.key_pem).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-cert-upload").await?;
    click_in_view(&app, "rotation-stage").await?;
    let fingerprint = app
        .wait_text("rotation-cert-fingerprint", "the staged certificate", |t| {
            !t.is_empty()
        })
        .await?;
    ensure!(fingerprint == new.fingerprint(), "{fingerprint}");

    // The receiver trusts only the old CA: the handshake with the new certificate fails.
    click_in_view(&app, "rotation-verify").await?;
    let failed = app
        .wait_text("rotation-verify-result", "the failed handshake", |t| {
            t.contains("failed")
        })
        .await?;
    ensure!(failed.contains("UnknownCA"), "{failed}");
    ensure!(
        app.count("rotation-promote").await? == 0,
        "no Activate after a failed test"
    );
    buttons_inside_the_wizard(&app).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-cert-verify-failed").await?;

    // Its owner trusts the new CA too; the test passes; activate.
    receiver.trust(&[&old_ca, &new_ca]);
    click_in_view(&app, "rotation-verify").await?;
    app.wait_text("rotation-verify-result", "the passed handshake", |t| {
        t.contains("accepted the handshake")
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-cert-verify").await?;
    click_in_view(&app, "rotation-promote").await?;
    app.wait_text("rotation-final-step", "the rotation done", |t| t == "Done")
        .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.shot("rotation-cert-done").await?;

    let listed = plane
        .call("GET", "/v1/targets/billing/client-certificates", None)
        .await?;
    let state = |id: &str| {
        listed["items"]
            .as_array()
            .and_then(|items| items.iter().find(|c| c["id"] == id))
            .map(|c| c["state"].clone())
    };
    ensure!(state("cert-2027") == Some(json!("active")), "{listed}");
    ensure!(state("cert-old") == Some(json!("retired")), "{listed}");

    // The key was sent once, never kept: no file of the app holds it.
    let on_disk = files_containing(app.dirs(), new.key_body().as_bytes());
    ensure!(
        on_disk.is_empty(),
        "the private key is on disk: {on_disk:?}"
    );
    app.quit().await
}
