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
    // Overview and endpoints: offline-cp's own (empty) cache.
    app.click("nav-overview").await?;
    app.wait_text("stat-endpoints", "no endpoints", |t| t.contains('0'))
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
