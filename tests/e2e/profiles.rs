//! Several control planes: after a switch to an unreachable one, no page shows the previous
//! one's data; the outbox shows the writes waiting for every control plane.

use anyhow::{Result, ensure};
use serde_json::json;

use crate::harness::{App, ONE_AT_A_TIME};
use crate::plane::{DlqSeed, Plane};

/// The text of the page (main area and header), to check what is not on it.
async fn page_text(app: &App) -> Result<String> {
    app.eval("return document.body.textContent;").await
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn an_unreachable_profile_shows_none_of_the_previous_ones_data() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let plane = Plane::start_one_attempt(work.path()).await?;
    plane
        .seed_dlq(DlqSeed {
            endpoint: "payments",
            flow: "payments-to-erp",
            target: "legacy-erp",
            event_type: "payment.failed",
            count: 3,
        })
        .await?;
    plane
        .call(
            "PUT",
            "/v1/replays/rpl_acme_first",
            Some(json!({"selection": {"filter": {"target": "legacy-erp"}}})),
        )
        .await?;
    let app = App::launch().await?;
    app.wait_online().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    app.click("nav-dlq").await?;
    app.wait_css_text("[data-testid='dlq-target']", "acme's DLQ", |t| {
        t == "legacy-erp"
    })
    .await?;
    app.click("nav-replays").await?;
    app.wait_text("replay-list", "acme's replay session", |t| {
        t.contains("rpl_acme_first")
    })
    .await?;

    app.add_profile("offline-cp", "http://127.0.0.1:9", false)
        .await?;
    // Replays (the page open at the switch): acme's session is gone, the reason is shown.
    app.wait_text("replays-error", "offline-cp's error", |t| {
        t.contains("offline-cp")
    })
    .await?;
    ensure!(app.count("replay-row").await? == 0, "a session is listed");
    // DLQ: no row, no count of acme's, and replaying says why it waits.
    app.click("nav-dlq").await?;
    app.wait_text("dlq-error", "offline-cp's error", |t| {
        t.contains("offline-cp")
    })
    .await?;
    ensure!(app.count("dlq-row").await? == 0, "DLQ rows are listed");
    ensure!(
        !app.el("replay-filter").await?.is_enabled().await?,
        "replaying is offered"
    );
    app.wait_text("replay-waits", "why replaying waits", |t| {
        t.contains("offline-cp")
    })
    .await?;
    app.shot("offline-profile-dlq").await?;
    // Overview and endpoints: offline-cp's own cache, never filled: no count is shown as 0.
    app.click("nav-overview").await?;
    app.wait_text("stat-endpoints", "unknown endpoints", |t| {
        t.contains("not loaded yet: offline-cp has not answered")
    })
    .await?;
    app.click("nav-endpoint").await?;
    app.wait_text("table-count", "an empty list", |t| t.starts_with("0 total"))
        .await?;
    let text = page_text(&app).await?;
    for acme in ["legacy-erp", "payments-to-erp", "rpl_acme_first"] {
        ensure!(!text.contains(acme), "{acme} is on screen under offline-cp");
    }
    // Back on acme, its own data returns.
    app.switch_profile("acme").await?;
    app.click("nav-dlq").await?;
    app.wait_css_text("[data-testid='dlq-target']", "acme's DLQ again", |t| {
        t == "legacy-erp"
    })
    .await?;
    app.quit().await
}

/// Queues a create of endpoint `name` through the form; returns once it is saved locally.
async fn queue_create(app: &App, name: &str) -> Result<()> {
    app.click("nav-endpoint").await?;
    app.click("new-resource").await?;
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    app.type_into("field-name", name).await?;
    app.click("form-submit").await?;
    app.wait_text("form-op-state", "the create saved locally", |t| {
        t.contains("Saved locally")
    })
    .await?;
    app.click("form-close").await?;
    Ok(())
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn the_outbox_shows_the_writes_waiting_for_every_control_plane() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let mut plane = Plane::start(work.path()).await?;
    let app = App::launch().await?;
    app.wait_online().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    plane.stop().await?;
    queue_create(&app, "acme-waits").await?;
    app.add_profile("offline-cp", "http://127.0.0.1:9", false)
        .await?;
    queue_create(&app, "offline-waits").await?;

    // On offline-cp, the outbox lists both control planes' writes, each with its own.
    app.click("nav-outbox").await?;
    let table = app
        .wait_text("outbox-table", "both profiles' writes", |t| {
            t.contains("acme-waits") && t.contains("offline-waits")
        })
        .await?;
    ensure!(
        table.contains("acme") && table.contains("offline-cp"),
        "{table}"
    );
    app.wait_text("outbox-summary", "the summary across planes", |t| {
        t.contains("1 waiting for offline-cp") && t.contains("1 waiting for acme")
    })
    .await?;
    app.wait_text("status-others", "acme's write in the status bar", |t| {
        t.contains("1 waiting for acme")
    })
    .await?;
    app.shot("outbox-across-profiles").await?;
    // The switcher counts each profile's unsent writes.
    app.click("profile-switcher").await?;
    app.wait_text("pending-acme", "acme's count", |t| t.contains("1 pending"))
        .await?;
    app.wait_text("pending-offline-cp", "offline-cp's count", |t| {
        t.contains("1 pending")
    })
    .await?;
    app.quit().await
}
