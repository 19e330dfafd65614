//! GitOps on the sandbox: add a source (a real repository made here), see the plan as a diff,
//! apply it with the summary in the confirmation, watch the waves, see the source in sync and
//! the Git badge on a managed resource; a later commit with a broken document names each of
//! its problems and moves the header to the new head. Screenshots: the plan, the confirmation,
//! the applied source, the refused plan, the badge.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Result, ensure};

use crate::harness::{App, ONE_AT_A_TIME};

const MANIFESTS: &str = "kind: endpoint
name: shipments
spec:
  description: Shipments from the warehouse system
  event_types: [shipment.sent, shipment.delivered]
---
kind: target
name: carrier
spec:
  url: https://carrier.example.com/hooks/switchyard
  timeout_ms: 5000
  headers:
    X-Team: logistics
---
kind: flow
name: shipments-to-carrier
spec:
  endpoint: shipments
  target: carrier
  event_types: [shipment.sent]
";

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Ops",
            "-c",
            "user.email=ops@example.invalid",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()?;
    ensure!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn a_source_is_planned_applied_and_in_sync() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let repo = tempfile::tempdir()?;
    std::fs::create_dir_all(repo.path().join("deploy"))?;
    std::fs::write(repo.path().join("deploy/logistics.yaml"), MANIFESTS)?;
    git(repo.path(), &["init", "-q", "-b", "main"])?;
    git(repo.path(), &["add", "-A"])?;
    git(
        repo.path(),
        &["commit", "-q", "-m", "Route shipments to the carrier"],
    )?;

    let app = App::launch().await?;
    app.wait_text("status-online", "online", |t| t.contains("Online"))
        .await?;
    app.click("nav-gitops").await?;
    app.type_into("source-repo", &repo.path().display().to_string())
        .await?;
    app.type_into("source-path", "deploy").await?;
    app.click("source-add").await?;
    app.wait_text("source-title", "the new source", |t| t.ends_with(":deploy"))
        .await?;
    app.wait_text("source-status", "never applied", |t| t.contains("none yet"))
        .await?;

    app.click("plan-button").await?;
    app.wait_text("plan-summary", "three creates", |t| t.contains("3 create"))
        .await?;
    app.wait_text("plan-item-target-carrier", "the target's spec", |t| {
        t.contains("carrier.example.com")
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("gitops-plan").await?;

    app.click("apply-button").await?;
    let confirm = app
        .wait_text("apply-confirm", "the plan's summary", |t| {
            t.contains("create 3 resource(s)")
        })
        .await?;
    ensure!(
        confirm.contains("Route shipments to the carrier"),
        "{confirm}"
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    app.shot("gitops-apply-confirm").await?;
    app.click("apply-confirm-button").await?;
    app.wait_text("apply-progress", "every wave confirmed", |t| {
        t.starts_with("Applied") && t.contains("2/2 confirmed") && t.contains("1/1 confirmed")
    })
    .await?;
    // The carrier target was created by this apply: its signing secret is shown once.
    app.wait_text("secret-value", "the new target's secret, shown once", |t| {
        t.starts_with("whsec_")
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("secret-once").await?;
    app.click("secret-stored").await?;
    app.click("source-check").await?;
    app.wait_text("source-status", "in sync", |t| {
        t.contains("In sync") && t.contains("3 in sync")
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("gitops-applied").await?;

    // A plan of the same commit now has nothing to do.
    app.click("plan-button").await?;
    app.wait_text("plan-empty", "nothing to do", |t| {
        t.contains("Nothing to do")
    })
    .await?;

    // The page does not scroll sideways (the grid's gutter used to make it a few pixels
    // wider than the window).
    let sideways: f64 = app
        .eval("const p = document.querySelector(\"[data-testid='gitops-page']\"); return p.scrollWidth - p.clientWidth;")
        .await?;
    ensure!(
        sideways <= 0.0,
        "the GitOps page scrolls sideways by {sideways} px"
    );

    // A new commit with a document that breaks two rules: the plan names both, and the
    // source's header shows the head the plan read, not the commit it showed before.
    std::fs::write(
        repo.path().join("deploy/broken.yaml"),
        "kind: target\nname: broken\nspec:\n  url: ftp://carrier.example.com\n  timeout_ms: 0\n",
    )?;
    git(repo.path(), &["add", "-A"])?;
    git(repo.path(), &["commit", "-q", "-m", "Add a broken target"])?;
    let head = Command::new("git")
        .arg("-C")
        .arg(repo.path())
        .args(["rev-parse", "HEAD"])
        .output()?;
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    app.click("plan-button").await?;
    let problems = app
        .wait_text("error-lines", "every problem of the document", |t| {
            t.contains("spec.url") && t.contains("spec.timeout_ms")
        })
        .await?;
    ensure!(
        problems.contains("deploy/broken.yaml, document 1"),
        "{problems}"
    );
    app.wait_text("source-status", "the new head in the header", |t| {
        t.contains(&head[..12]) && t.contains("Behind the ref")
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.shot("gitops-problems").await?;

    // The managed resources carry the Git badge.
    app.click("nav-endpoint").await?;
    app.wait_css_text(
        "[data-testid='row-shipments'] [data-testid='git-badge']",
        "the Git badge",
        |t| t.contains("Git"),
    )
    .await?;
    app.shot("gitops-badge").await?;
    app.quit().await
}
