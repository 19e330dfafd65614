//! The Recovery centre on a control plane with a real problem: an endpoint disabled while its
//! deliveries are still open is found, its guided fix (enable) runs through the outbox and is
//! confirmed, and the finding is no longer reported (its card stays, marked so, with the
//! outcome); then a target is retired from its drawer (impact, the
//! flows retired first, typed confirmation) and its progress followed to deleted, after which
//! the control plane no longer knows it. Screenshots: the finding, the fixed page, the
//! retirement's impact and its completed progress.

use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::json;

use crate::harness::{App, ONE_AT_A_TIME};
use crate::plane::Plane;

const FINDING: &str = "disabled_endpoint_backlog:endpoint:orders";

/// An endpoint whose three deliveries wait for their retry (a closed port, the default
/// schedule), then disabled; and a target only a flow that matches nothing routes to.
async fn seed(plane: &Plane) -> Result<()> {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let url = format!("http://{closed}/hook");
    for (path, body) in [
        (
            "/v1/endpoints",
            json!({"name": "orders", "spec": {"description": "Orders from the shop"}}),
        ),
        (
            "/v1/targets",
            json!({"name": "erp", "spec": {"url": url, "timeout_ms": 1000}}),
        ),
        (
            "/v1/targets",
            json!({"name": "archive", "spec": {"url": url, "timeout_ms": 1000}}),
        ),
        (
            "/v1/flows",
            json!({"name": "orders-to-erp", "spec": {"endpoint": "orders", "target": "erp"}}),
        ),
        (
            "/v1/flows",
            json!({"name": "orders-to-archive", "spec": {"endpoint": "orders", "target": "archive", "event_types": ["order.archived"]}}),
        ),
    ] {
        plane.call("POST", path, Some(body)).await?;
    }
    for n in 0..3 {
        let event =
            json!({"endpoint": "orders", "event_type": "order.created", "payload": {"n": n}});
        plane.call("POST", "/v1/events", Some(event)).await?;
    }
    plane
        .call("POST", "/v1/endpoints/orders/disable", None)
        .await?;
    Ok(())
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn a_finding_is_fixed_and_a_target_is_retired_with_its_flow() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let plane = Plane::start(work.path()).await?;
    seed(&plane).await?;

    let app = App::launch().await?;
    app.wait_online().await?;
    app.add_profile("acme", &plane.url(), true).await?;
    app.wait_text("nav-recovery-count", "the Recovery badge", |t| {
        t.parse::<u32>().is_ok_and(|n| n >= 1)
    })
    .await?;
    app.click("nav-recovery").await?;
    let card = app
        .wait_text(&format!("finding-{FINDING}"), "the backlog finding", |t| {
            t.contains("orders")
        })
        .await?;
    ensure!(card.contains("control plane"), "{card}");
    let request = app
        .wait_text(
            &format!("fix-{FINDING}-0-request"),
            "the fix's request",
            |_| true,
        )
        .await?;
    ensure!(
        request.contains("POST /v1/endpoints/orders/enable"),
        "{request}"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("recovery-finding").await?;

    app.click(&format!("fix-{FINDING}-0")).await?;
    // The fix is a keyed write of the outbox: it is confirmed, and the next check has no
    // finding left for the endpoint. The card stays, marked no longer reported, with the
    // fix's outcome (it may move there before the outcome is read: the badge is in both).
    app.wait_text(
        &format!("fix-{FINDING}-0-state"),
        "the fix confirmed",
        |t| t.contains("Confirmed"),
    )
    .await?;
    let endpoint = plane.call("GET", "/v1/endpoints/orders", None).await?;
    ensure!(endpoint["status"]["enabled"] == true, "{endpoint}");
    app.click("recovery-refresh").await?;
    let started = std::time::Instant::now();
    while app.count(&format!("finding-{FINDING}")).await? > 0 {
        ensure!(
            started.elapsed() < Duration::from_secs(30),
            "the finding is still shown after its fix"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let resolved = app
        .wait_text(&format!("resolved-{FINDING}"), "the fixed card", |t| {
            t.contains("No longer reported")
        })
        .await?;
    ensure!(resolved.contains("Confirmed"), "{resolved}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("recovery-fixed").await?;

    // Retire the archive target from its drawer; a flow routes to it, so it is retired first.
    app.click("nav-target").await?;
    app.click("row-archive").await?;
    app.click("retire").await?;
    let impact = app
        .wait_text("retire-impact", "the dry run's impact", |t| {
            t.contains("orders-to-archive")
        })
        .await?;
    ensure!(impact.contains("0 pending deliveries"), "{impact}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("retire-impact").await?;
    app.click("retire-next").await?;
    app.click("retire-cascade").await?;
    app.click("retire-next").await?;
    app.type_into("retire-typed", "archive").await?;
    app.click("retire-start").await?;
    app.wait_css_text(
        "[data-testid^='retirement-state-']",
        "the retirement deleted",
        |t| t == "Deleted",
    )
    .await?;
    let next = app
        .wait_css_text("[data-testid^='retirement-next-']", "what happened", |t| {
            !t.is_empty()
        })
        .await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("retirement-progress").await?;

    // The control plane agrees: both are gone, the other target and flow are not.
    for path in ["/v1/targets/archive", "/v1/flows/orders-to-archive"] {
        let err = plane.call("GET", path, None).await.err();
        ensure!(
            err.as_ref().is_some_and(|e| e.to_string().contains("404")),
            "{path} after the retirement: {err:?} ({next})"
        );
    }
    plane.call("GET", "/v1/flows/orders-to-erp", None).await?;
    let retirements = plane.call("GET", "/v1/retirements", None).await?;
    let items = retirements["items"].as_array().cloned().unwrap_or_default();
    ensure!(items.len() == 1, "one retirement: {retirements}");
    ensure!(items[0]["state"] == "deleted", "{retirements}");

    // The Recovery page lists it too.
    app.click("retire-close").await?;
    app.close_drawer().await.ok();
    app.click("nav-recovery").await?;
    app.wait_css_text(
        "[data-testid^='retirement-state-']",
        "the retirement on the Recovery page",
        |t| t == "Deleted",
    )
    .await?;
    app.quit().await
}
