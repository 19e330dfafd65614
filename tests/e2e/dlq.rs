//! The DLQ explorer on the sandbox: the DLQ fills from the demo receiver; a filter narrows
//! it; an entry's event is found by id with its deliveries; a replay by filter runs with
//! visible progress and completes; a second click does not make a second session. Screenshots: the explorer, the timeline, a running replay.

use std::time::{Duration, Instant};

use anyhow::{Result, bail, ensure};

use crate::harness::{App, ONE_AT_A_TIME};

/// Polls `selector`'s text until `check` holds, for up to `limit` (the demo DLQ takes minutes).
async fn wait_long(
    app: &App,
    selector: &str,
    limit: Duration,
    check: impl Fn(&str) -> bool,
) -> Result<String> {
    let started = Instant::now();
    let mut last = String::new();
    while started.elapsed() < limit {
        if let Some(text) = app.text_of(selector).await {
            if check(&text) {
                return Ok(text);
            }
            last = text;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    bail!("{selector}: waited {limit:?}; last text {last:?}")
}

fn number(text: &str) -> u64 {
    text.chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn dlq_fills_filters_and_a_replay_by_filter_completes_once() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let app = App::launch().await?;
    app.wait_text("status-online", "online", |t| t.contains("Online"))
        .await?;
    app.click("nav-dlq").await?;
    // The demo trickle's failing targets reach the DLQ after their 5 attempts (~2 min).
    wait_long(
        &app,
        "[data-testid='dlq-total']",
        Duration::from_secs(300),
        |t| number(t) >= 3,
    )
    .await?;
    // The table refetches on filter changes; reload it by touching the filter.
    app.click("dlq-refresh").await?;
    wait_long(
        &app,
        "[data-testid='dlq-target']",
        Duration::from_secs(20),
        |t| !t.is_empty(),
    )
    .await?;
    let target = {
        let ret = app
            .driver
            .execute(
                "const r = document.querySelector(\"[data-testid='dlq-target']\"); return r ? r.textContent : null;",
                vec![],
            )
            .await?;
        ret.convert::<Option<String>>()?
    };
    app.shot("dlq-explorer").await?;

    // A filter narrows it: every row shown has the target.
    let target = match target {
        Some(t) => t,
        None => bail!("no DLQ row rendered"),
    };
    app.type_into("filter-target", &target).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let targets = app
        .driver
        .execute(
            "return [...document.querySelectorAll(\"[data-testid='dlq-target']\")].map(e => e.textContent);",
            vec![],
        )
        .await?
        .convert::<Vec<String>>()?;
    ensure!(
        !targets.is_empty() && targets.iter().all(|t| *t == target),
        "filtered rows: {targets:?}"
    );

    // The entry detail with its attempt timeline.
    app.click("dlq-open").await?;
    app.wait_text("timeline-verdict", "the verdict", |t| {
        t.contains("DLQ") || t.contains("Replayed")
    })
    .await?;
    // The drawer slides in: the picture once it has settled.
    tokio::time::sleep(Duration::from_millis(700)).await;
    app.shot("dlq-timeline").await?;
    // The detail shows the event id (the webhook-id header): look that event up.
    let event_id = app
        .driver
        .execute(
            "const m = document.body.textContent.match(/webhook-id: (evt_[0-9A-Za-z]+)/); return m ? m[1] : null;",
            vec![],
        )
        .await?
        .convert::<Option<String>>()?;
    app.driver
        .execute(
            "const b = document.querySelector('.mantine-Drawer-close'); if (b) b.click();",
            vec![],
        )
        .await?;
    tokio::time::sleep(Duration::from_millis(800)).await;

    // Event lookup: the event with every delivery it made, the dead one among them.
    let Some(event_id) = event_id else {
        bail!("the entry detail shows no webhook-id");
    };
    app.type_into("event-lookup", &event_id).await?;
    app.click("event-lookup-find").await?;
    app.wait_text("found-event", "the event found by id", |t| {
        t.contains(&event_id)
    })
    .await?;
    let states = app
        .driver
        .execute(
            "return [...document.querySelectorAll(\"[data-testid='found-state']\")].map(e => e.textContent);",
            vec![],
        )
        .await?
        .convert::<Vec<String>>()?;
    ensure!(
        states.iter().any(|s| s == "dead" || s == "replayed"),
        "the looked-up event lists its dead delivery: {states:?}"
    );
    app.driver
        .execute(
            "const b = document.querySelector('.mantine-Modal-close'); if (b) b.click();",
            vec![],
        )
        .await?;
    tokio::time::sleep(Duration::from_millis(800)).await;

    // Replay everything matching the filter; a double click sends one session id.
    app.click("replay-filter").await?;
    app.wait_text("dry-run-count", "a dry-run count", |t| {
        t.contains("would be replayed")
    })
    .await?;
    let start = app.el("replay-start").await?;
    for _ in 0..50 {
        if start.is_enabled().await? {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    app.driver
        .execute(
            "const b = document.querySelector(\"[data-testid='replay-start']\"); b.click(); b.click();",
            vec![],
        )
        .await?;
    app.wait_text("replay-detail", "the running replay", |t| !t.is_empty())
        .await?;
    wait_long(
        &app,
        "[data-testid='replay-progress']",
        Duration::from_secs(20),
        |_| true,
    )
    .await?;
    app.shot("replay-running").await?;
    // It completes (re-deliveries succeed or die again on the demo schedule).
    wait_long(
        &app,
        "[data-testid='replay-status']",
        Duration::from_secs(300),
        |t| t.starts_with("completed"),
    )
    .await?;
    let rows = app
        .driver
        .execute(
            "return document.querySelectorAll(\"[data-testid='replay-row']\").length;",
            vec![],
        )
        .await?
        .convert::<u64>()?;
    ensure!(rows == 1, "one click or two: one session, found {rows}");
    app.quit().await
}
