//! The About dialog (version, commit, build date, log file, Copy diagnostics without tokens)
//! and signed updates against a loopback feed: a genuine newer build verifies; a tampered
//! artefact and one signed by another key are refused and the running version keeps running.

use std::time::Duration;

use anyhow::{Result, ensure};

use crate::harness::{App, ONE_AT_A_TIME};
use crate::plane::{Plane, TOKEN};
use crate::update_feed::{FeedServer, SigningKey};

async fn open_about(app: &App) -> Result<()> {
    app.click("about-button").await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    Ok(())
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn about_shows_the_build_and_diagnostics_carry_no_token() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir()?;
    let plane = Plane::start(dir.path()).await?;
    let app = App::launch().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    open_about(&app).await?;
    let version = app
        .wait_text("about-version", "the version", |t| !t.is_empty())
        .await?;
    ensure!(
        version == env!("CARGO_PKG_VERSION"),
        "About shows version {version}"
    );
    let commit = app
        .text_of("[data-testid='about-commit']")
        .await
        .unwrap_or_default();
    match switchyard_build_info::commit() {
        Some(c) => ensure!(commit == c, "About shows commit {commit}, built from {c}"),
        None => ensure!(commit.starts_with("unknown"), "About shows commit {commit}"),
    }
    let built = app
        .text_of("[data-testid='about-built']")
        .await
        .unwrap_or_default();
    ensure!(
        built == switchyard_build_info::BUILD_DATE,
        "About shows build date {built}"
    );
    let log = app
        .text_of("[data-testid='about-log-file']")
        .await
        .unwrap_or_default();
    ensure!(
        log.ends_with("/logs/switchyard.log"),
        "About shows the log file: {log}"
    );

    app.click("copy-diagnostics").await?;
    // Copied within the click (WebKitGTK grants the copy command there).
    app.el("diagnostics-copied").await?;
    let text = app
        .wait_text("diagnostics-text", "the diagnostics", |t| {
            t.contains("outbox")
        })
        .await?;
    for needle in [
        format!("version         {}", env!("CARGO_PKG_VERSION")),
        "profiles        2 (1 sandbox".to_owned(),
        "pending".to_owned(),
        "webview".to_owned(),
    ] {
        ensure!(
            text.contains(&needle),
            "diagnostics lack {needle:?}: {text}"
        );
    }
    ensure!(
        !text.contains(TOKEN),
        "diagnostics contain the profile's token: {text}"
    );
    ensure!(
        !text.contains(&plane.url()),
        "diagnostics contain the control plane's URL"
    );
    ensure!(
        !text.contains("acme"),
        "diagnostics contain the profile's name"
    );
    app.shot("about").await?;
    app.quit().await
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn updates_verify_the_signature_and_refuse_what_does_not_match() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let keys = tempfile::tempdir()?;
    let trusted = SigningKey::generate(keys.path(), "trusted.key")?;
    let other = SigningKey::generate(keys.path(), "other.key")?;
    // 3 MiB so the progress is visible; its content does not matter to the signature check.
    let artefact: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let file = keys.path().join("Switchyard_9.9.9_amd64.deb");
    std::fs::write(&file, &artefact)?;
    let genuine = trusted.sign(&file, "9.9.9")?;
    let foreign = other.sign(&file, "9.9.9")?;
    let feed = FeedServer::start().await?;
    let notes = "Faster DLQ paging.\nThe About dialog.";

    let app =
        App::launch_with(&[("SWITCHYARD_TEST_UPDATE_PUBKEY", trusted.public.clone())]).await?;
    // The first launch asks before any update check.
    app.el("update-optin").await?;
    open_about(&app).await?;
    app.click("updates-tab").await?;
    app.type_into("update-feed", &feed.url()).await?;
    app.click("update-feed-save").await?;

    // 1. Tampered: one byte changed after signing.
    let mut tampered = artefact.clone();
    tampered[1000] ^= 0xff;
    feed.serve("9.9.9", notes, tampered, &genuine);
    check_and_download(&app, notes).await?;
    let refused = app
        .wait_text("update-state", "the tampered download refused", |t| {
            t.contains("refused")
        })
        .await?;
    ensure!(refused.contains("did not match its signature"), "{refused}");
    ensure!(
        refused.contains(&format!(
            "Switchyard {} keeps running",
            env!("CARGO_PKG_VERSION")
        )),
        "{refused}"
    );
    app.shot("update-refused").await?;

    // 2. Genuine bytes, signed by a key this build does not trust.
    feed.serve("9.9.9", notes, artefact.clone(), &foreign);
    check_and_download(&app, notes).await?;
    let refused = app
        .wait_text("update-state", "the foreign signature refused", |t| {
            t.contains("refused")
        })
        .await?;
    ensure!(refused.contains("did not match its signature"), "{refused}");

    // The running version is unchanged and answers.
    app.click("about-tab").await?;
    let version = app
        .wait_text("about-version", "the version", |t| !t.is_empty())
        .await?;
    ensure!(version == env!("CARGO_PKG_VERSION"));
    app.click("updates-tab").await?;

    // 3. Genuine and signed by the trusted key: verified, ready to install on restart (this
    // debug binary is no package, so it says it cannot replace itself).
    feed.serve("9.9.9", notes, artefact.clone(), &genuine);
    check_and_download(&app, notes).await?;
    app.wait_text("update-state", "the verified download", |t| {
        t.contains("signature verified")
    })
    .await?;
    app.el("update-not-installable").await?;
    app.shot("update-ready").await?;
    app.quit().await
}

/// Check → "version 9.9.9 available" with the notes → Download.
async fn check_and_download(app: &App, notes: &str) -> Result<()> {
    app.click("update-check").await?;
    let offer = app
        .wait_text("update-state", "the offer", |t| {
            t.contains("Version 9.9.9 available")
        })
        .await?;
    let first_line = notes.lines().next().unwrap_or_default();
    ensure!(
        offer.contains(first_line),
        "the offer shows what changed: {offer}"
    );
    app.click("update-download").await?;
    Ok(())
}
