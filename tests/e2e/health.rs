//! The health dashboard on the sandbox: the Overview is a delivery health dashboard. The demo's failing
//! target (`legacy-erp`, whose receiver answers 500) appears among the failing targets with
//! no success, and its DLQ link opens the DLQ filtered to it. Screenshots: the dashboard,
//! light and dark, and the target drawer's Health tab.

use std::time::Duration;

use anyhow::{Result, ensure};

use crate::harness::{App, ONE_AT_A_TIME};

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn the_failing_demo_target_is_ranked_on_the_overview_and_opens_its_dlq() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let app = App::launch().await?;
    app.wait_online().await?;
    app.click("nav-overview").await?;
    // The demo trickle sends to legacy-erp within seconds; the dashboard refreshes every 15 s.
    app.wait_text(
        "failing-row-legacy-erp",
        "legacy-erp among the failing targets",
        |t| t.contains("legacy-erp"),
    )
    .await?;
    let rate = app
        .wait_text("rate-legacy-erp", "its success rate", |t| t.contains('%'))
        .await?;
    ensure!(rate.starts_with("0"), "legacy-erp never succeeds: {rate:?}");
    let freshness = app
        .wait_text("health-freshness", "the freshness line", |t| {
            t.contains("updated")
        })
        .await?;
    ensure!(
        !freshness.contains("Last fetched"),
        "fresh, not stale: {freshness:?}"
    );
    // Healthy targets are not among the failing ones.
    ensure!(
        app.text_of("[data-testid='failing-row-billing']")
            .await
            .is_none(),
        "billing always succeeds and is not listed"
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    app.shot("overview-health").await?;
    // The failing targets sit below the chart: scroll them into view for their picture.
    app.eval::<Option<bool>>(
        "document.querySelector(\"[data-testid='failing-targets']\").scrollIntoView(); return null;",
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    app.shot("overview-failing-targets").await?;
    app.click("theme-toggle").await?;
    // Away from the toggle, so its tooltip is not in the picture.
    app.click("delivery-health").await?;
    tokio::time::sleep(Duration::from_millis(800)).await;
    app.shot("overview-health-dark").await?;
    app.click("theme-toggle").await?;

    // The target's drawer, from the same row: its Health tab has the same run of failures.
    app.click("failing-target-legacy-erp").await?;
    app.click("tab-health").await?;
    app.wait_text(
        "drawer-health-streak",
        "the drawer's run of failures",
        |t| t.chars().any(|c| c.is_ascii_digit() && c != '0'),
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    app.shot("drawer-health").await?;

    // Send test webhook, through the outbox: legacy-erp's receiver answers 500, and the
    // drawer says so once the control plane has called it.
    app.click("test-webhook-send").await?;
    app.wait_text("test-webhook-state", "the test's state", |t| {
        t.contains("Confirmed")
    })
    .await?;
    app.wait_text("test-webhook-verdict", "what the receiver answered", |t| {
        t.contains("Receiver did not accept it: HTTP 500")
    })
    .await?;
    app.eval::<Option<bool>>(
        "document.querySelector(\"[data-testid='test-webhook']\").scrollIntoView(); return null;",
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("drawer-test-webhook").await?;
    app.close_drawer().await?;

    app.click("nav-overview").await?;
    app.click("failing-dlq-legacy-erp").await?;
    let mut filter = String::new();
    for _ in 0..100 {
        filter = app
            .eval(
                "const el = document.querySelector(\"[data-testid='filter-target']\"); \
                 return el ? el.value : '';",
            )
            .await?;
        if filter == "legacy-erp" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ensure!(
        filter == "legacy-erp",
        "the DLQ opens filtered to the target: {filter:?}"
    );
    let hash: String = app.eval("return window.location.hash;").await?;
    ensure!(hash.contains("target=legacy-erp"), "{hash}");
    app.quit().await
}
