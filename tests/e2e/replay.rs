//! The DLQ on a control plane whose deliveries die at once (one attempt to a closed port): a
//! trial replay finished with "Replay the rest", and no overlapping rows at 1024×700 with long
//! names.

use std::time::Duration;

use anyhow::{Result, ensure};
use serde::Deserialize;

use crate::harness::{App, ONE_AT_A_TIME};
use crate::plane::{DlqSeed, Plane};

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn a_trial_replay_then_replay_the_rest() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let plane = Plane::start_one_attempt(work.path()).await?;
    plane
        .seed_dlq(DlqSeed {
            endpoint: "payments",
            flow: "payments-to-erp",
            target: "legacy-erp",
            event_type: "payment.failed",
            count: 6,
        })
        .await?;
    let app = App::launch().await?;
    app.wait_online().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    app.click("nav-dlq").await?;
    app.wait_text("dlq-loaded", "six rows", |t| t.starts_with("6 shown"))
        .await?;
    app.click("replay-filter").await?;
    app.wait_text("dry-run-count", "the count", |t| t.contains("6"))
        .await?;
    app.click("replay-trial").await?;
    app.type_into("replay-trial-size", "2").await?;
    app.click("replay-start-trial").await?;
    // The dialog stays and follows the trial (its re-deliveries fail at once here).
    app.wait_text("trial-status", "the trial to finish", |t| {
        t.starts_with("completed")
    })
    .await?;
    app.wait_text("replay-rest", "the rest counted", |t| {
        t.contains("Replay the rest (4)")
    })
    .await?;
    app.shot("replay-trial-rest").await?;
    // The trial's re-deliveries failed: the rest starts only once that is confirmed, by name.
    app.click("replay-rest").await?;
    app.wait_text(
        "replay-rest-confirm",
        "the confirmation naming the count",
        |t| t.contains("4 deliveries go to") && t.contains("still fails"),
    )
    .await?;
    app.click("replay-rest-confirm-button").await?;
    // The rest runs as its own session: the 4 not in the trial, not the trial's re-deliveries.
    app.wait_text("replay-detail", "the rest's session", |t| {
        !t.contains("-trial")
    })
    .await?;
    app.wait_text("count-total", "4 items", |t| t == "4")
        .await?;
    app.wait_text("replay-status", "the rest to finish", |t| {
        t.starts_with("completed")
    })
    .await?;
    ensure!(
        app.count("replay-row").await? == 2,
        "a trial and a rest session"
    );

    // At 1024 px a status badge wraps between its words, never inside one ("RUNNI" / "NG"),
    // and the table does not run past the page.
    app.driver.set_window_rect(0, 0, 1024, 700).await?;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let broken: Vec<String> = app
        .eval(
            "return [...document.querySelectorAll(\"[data-testid='replay-row-status'] .mantine-Badge-label, [data-testid='replay-status'] .mantine-Badge-label\")]\
               .filter(l => {\
                 const st = getComputedStyle(l);\
                 const lh = parseFloat(st.lineHeight) || parseFloat(st.fontSize) * 1.2;\
                 const lines = Math.round(l.getBoundingClientRect().height / lh);\
                 return lines > l.textContent.trim().split(/\\s+/).length;\
               }).map(l => l.textContent);",
        )
        .await?;
    ensure!(
        broken.is_empty(),
        "badges broken inside a word at 1024 px: {broken:?}"
    );
    let sideways: f64 = app
        .eval(
            "const t = document.querySelector(\"[data-testid='replay-row']\").closest('table');\
             return t.getBoundingClientRect().right - t.parentElement.getBoundingClientRect().right;",
        )
        .await?;
    ensure!(
        sideways <= 0.5,
        "the sessions table runs {sideways} px past the page at 1024 px"
    );
    app.shot("replays-1024").await?;
    app.quit().await
}

#[derive(Deserialize)]
struct Row {
    top: f64,
    bottom: f64,
    /// The lowest top and highest bottom of the row's cells.
    cells_top: f64,
    cells_bottom: f64,
    /// Cells whose text is wider than the cell without being cut (it would spill over).
    spilled: u32,
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn dlq_rows_do_not_overlap_at_1024_with_long_names() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let plane = Plane::start_one_attempt(work.path()).await?;
    plane
        .seed_dlq(DlqSeed {
            endpoint: "inventory-events-from-the-eu-central-warehouse-cluster-seven",
            flow: "inventory-to-warehouse-via-the-long-running-relay-path-nine",
            target: "warehouse-receiver-with-an-unusually-long-descriptive-name",
            event_type: "inventory.stock.level.changed.for.a.very.long.sku.name",
            count: 8,
        })
        .await?;
    let app = App::launch().await?;
    app.driver.set_window_rect(0, 0, 1024, 700).await?;
    app.wait_online().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    app.click("nav-dlq").await?;
    app.wait_text("dlq-loaded", "eight rows", |t| t.starts_with("8 shown"))
        .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rows: Vec<Row> = app
        .eval(
            "return [...document.querySelectorAll(\"[data-testid='dlq-row']\")].map(r => {\
               const b = r.getBoundingClientRect();\
               const cells = [...r.children].map(c => c.getBoundingClientRect());\
               const spilled = [...r.children].filter(c => c.scrollWidth > c.clientWidth + 1\
                 && getComputedStyle(c).textOverflow !== 'ellipsis').length;\
               return { top: b.top, bottom: b.bottom,\
                 cells_top: Math.min(...cells.map(c => c.top)),\
                 cells_bottom: Math.max(...cells.map(c => c.bottom)), spilled };\
             });",
        )
        .await?;
    ensure!(rows.len() == 8, "{} rows rendered", rows.len());
    for (i, r) in rows.iter().enumerate() {
        ensure!(
            r.cells_top >= r.top - 0.5 && r.cells_bottom <= r.bottom + 0.5,
            "row {i}: cells {}..{} outside the row {}..{}",
            r.cells_top,
            r.cells_bottom,
            r.top,
            r.bottom
        );
        ensure!(r.spilled == 0, "row {i}: {} cells spill over", r.spilled);
        if let Some(next) = rows.get(i + 1) {
            ensure!(r.bottom <= next.top + 0.5, "rows {i} and {} overlap", i + 1);
        }
    }
    // At 1024×700 the filters take one row: every one of the 8 rows is in view without
    // scrolling (three rows of filters left about four).
    let hidden: u64 = app
        .eval(
            "const rows = document.querySelector(\"[data-testid='dlq-row']\");\
             let view = rows.parentElement;\
             while (view && !['auto', 'scroll'].includes(getComputedStyle(view).overflowY)) view = view.parentElement;\
             const bottom = Math.min(window.innerHeight,\
               document.querySelector(\"[data-testid='status-bar']\").getBoundingClientRect().top,\
               view ? view.getBoundingClientRect().bottom : window.innerHeight);\
             return [...document.querySelectorAll(\"[data-testid='dlq-row']\")]\
               .filter(r => r.getBoundingClientRect().bottom > bottom + 0.5).length;",
        )
        .await?;
    ensure!(
        hidden == 0,
        "{hidden} of the 8 rows are below the window at 1024×700"
    );
    app.shot("dlq-1024").await?;

    // A new dead delivery: "1 new — show them" appears, and neither the tabs nor the rows move
    // under the pointer.
    let tops = "return [document.querySelector(\"[role='tablist']\").getBoundingClientRect().top,\
                 document.querySelector(\"[data-testid='dlq-row']\").getBoundingClientRect().top];";
    let before: Vec<f64> = app.eval(tops).await?;
    plane
        .seed_dlq(DlqSeed {
            endpoint: "inventory-events-from-the-eu-central-warehouse-cluster-seven",
            flow: "inventory-to-warehouse-via-the-long-running-relay-path-nine",
            target: "warehouse-receiver-with-an-unusually-long-descriptive-name",
            event_type: "inventory.stock.level.changed.for.a.very.long.sku.name",
            count: 1,
        })
        .await?;
    app.wait_text("dlq-new", "the new dead delivery", |t| {
        t.starts_with("1 new")
    })
    .await?;
    let after: Vec<f64> = app.eval(tops).await?;
    ensure!(
        before == after,
        "the tabs and the first row moved when '1 new' appeared: {before:?} -> {after:?}"
    );
    app.quit().await
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn narrow_window_dark_theme_charts_and_badges_fit() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let plane = Plane::start_one_attempt(work.path()).await?;
    plane
        .seed_dlq(DlqSeed {
            endpoint: "payments",
            flow: "payments-to-erp",
            target: "legacy-erp",
            event_type: "payment.failed",
            count: 5,
        })
        .await?;
    let app = App::launch().await?;
    app.driver.set_window_rect(0, 0, 1024, 700).await?;
    app.wait_online().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    // The overview's DLQ tile is the server's count, the same as the DLQ page's badge.
    app.click("nav-overview").await?;
    // (The figure alone: the tile's trend line holds other numbers.)
    app.wait_text("stat-dlq-value", "the DLQ size", |t| t.trim() == "5")
        .await?;
    app.click("nav-endpoint").await?;
    // Disable asks first; then the row carries the widest write badge there is.
    app.click("row-payments").await?;
    app.click("toggle-enabled").await?;
    app.click("confirm-disable").await?;
    app.wait_text("drawer-enabled", "the endpoint disabled", |t| {
        t.contains("disabled")
    })
    .await?;
    app.close_drawer().await?;
    app.wait_css_text(
        "[data-testid='row-payments'] [data-testid='pending-badge']",
        "the confirmed disable",
        |t| t.starts_with("Confirmed"),
    )
    .await?;
    // No badge in the table is cut (the Write column used to end in "ENAB…").
    let cut: u64 = app
        .eval(
            "return [...document.querySelectorAll(\"[data-testid='resource-rows'] .mantine-Badge-label\")]\
               .filter(l => l.scrollWidth > l.clientWidth + 1).length;",
        )
        .await?;
    ensure!(cut == 0, "{cut} badges are cut at 1024 px");
    app.shot("endpoints-1024").await?;
    app.click("nav-dlq").await?;
    app.click("tab-charts").await?;
    app.wait_text("dlq-charts", "the charts", |t| t.contains("Total: 5"))
        .await?;
    let bars = app.count("chart-hourly").await?;
    ensure!(bars == 1, "the hourly chart is missing");
    app.click("theme-toggle").await?;
    tokio::time::sleep(Duration::from_millis(600)).await;
    app.shot("dlq-charts-dark-1024").await?;
    app.quit().await
}
