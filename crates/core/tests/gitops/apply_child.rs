//! The apply process the crash test spawns and kills -9: this test binary re-run with only
//! this test selected, the data dir and repository in the environment. It plans, applies and
//! syncs until drained, as `switchyard gitops apply --wait` does. Without the environment it
//! does nothing (so a normal `cargo test` run passes it trivially).

use std::path::Path;
use std::process::{Child, Command, Stdio};

use switchyard_core::gitops::{PlanOptions, SourceSpec};
use switchyard_core::{Console, ConsoleOptions, SyncOptions};

const DIR_ENV: &str = "SWITCHYARD_TEST_GITOPS_CHILD_DIR";
const REPO_ENV: &str = "SWITCHYARD_TEST_GITOPS_CHILD_REPO";

#[test]
fn gitops_apply_child_process() {
    let (Ok(dir), Ok(repo)) = (std::env::var(DIR_ENV), std::env::var(REPO_ENV)) else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let code = rt.block_on(async {
        let console = Console::open(ConsoleOptions::new(&dir, "test-child"))
            .await
            .unwrap();
        let source = SourceSpec {
            repo,
            git_ref: "HEAD".into(),
            path: "deploy".into(),
        };
        let plan = console
            .gitops_plan("p", &source, PlanOptions::default())
            .await
            .unwrap();
        console.gitops_apply(&plan).await.unwrap();
        let sync = SyncOptions {
            until_drained: true,
            timeout_ms: Some(60_000),
            refresh_after: false,
        };
        console.sync("p", sync).await.map(|_| 0).unwrap_or(1)
    });
    std::process::exit(code);
}

pub fn spawn(data_dir: &Path, repo: &Path) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "apply_child::gitops_apply_child_process",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(DIR_ENV, data_dir)
    .env(REPO_ENV, repo)
    .stdout(Stdio::null());
    if std::env::var("SWITCHYARD_DEBUG_SYNC").is_err() {
        cmd.stderr(Stdio::null());
    }
    cmd.spawn().unwrap()
}
