//! One test's world: a control plane, the fault proxy in front of it, a console whose profile
//! `p` goes through the proxy, and a Git repository.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use switchyard_core::gitops::{ApplyReport, GitopsPlan, PlanOptions, SourceSpec};
use switchyard_core::{
    Console, CoreError, OpState, OutboxFilter, Resource, ResourceKind, SyncOptions, SyncReport,
};

use crate::git::Repo;
use crate::harness::{ControlPlane, TOKEN, console_with_profile};
use crate::proxy::FaultProxy;

pub struct World {
    /// Holds every file of the test; removed when the world is dropped.
    pub _dir: tempfile::TempDir,
    pub cp: ControlPlane,
    pub proxy: FaultProxy,
    pub data: PathBuf,
    pub console: Console,
    pub repo: Repo,
}

/// What the server holds: (kind, name) → (version, spec).
pub type ServerState = BTreeMap<(ResourceKind, String), (i64, Value)>;

impl World {
    pub async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cp = ControlPlane::start(dir.path(), true).await;
        let proxy = FaultProxy::start(&cp.url(), 7).await;
        let data = dir.path().join("console");
        let console = console_with_profile(&data, &proxy.url()).await;
        let repo = Repo::init(&dir.path().join("config"));
        Self {
            _dir: dir,
            cp,
            proxy,
            data,
            console,
            repo,
        }
    }

    pub fn source(&self) -> SourceSpec {
        SourceSpec {
            repo: self.repo.dir.display().to_string(),
            git_ref: "HEAD".into(),
            path: "deploy".into(),
        }
    }

    pub async fn plan(&self, opts: PlanOptions) -> Result<GitopsPlan, CoreError> {
        self.console.gitops_plan("p", &self.source(), opts).await
    }

    pub async fn sync(&self) -> SyncReport {
        self.console
            .sync(
                "p",
                SyncOptions {
                    until_drained: true,
                    timeout_ms: Some(60_000),
                    refresh_after: true,
                },
            )
            .await
            .unwrap()
    }

    /// Plan, apply and sync until drained.
    pub async fn apply(&self, opts: PlanOptions) -> (GitopsPlan, ApplyReport) {
        let plan = self.plan(opts).await.unwrap();
        let report = self.console.gitops_apply(&plan).await.unwrap();
        self.sync().await;
        (plan, report)
    }

    /// Mutating requests that reached the server through the proxy.
    pub fn writes(&self) -> u32 {
        self.proxy.forwarded().values().sum()
    }

    /// Every outbox row, whatever its state.
    pub async fn outbox_rows(&self) -> Vec<switchyard_core::OutboxOp> {
        use OpState::*;
        self.console
            .list_outbox(OutboxFilter {
                profile: Some("p".into()),
                states: vec![
                    Pending,
                    Sending,
                    Done,
                    NeedsAttention,
                    Discarded,
                    Superseded,
                ],
                ..Default::default()
            })
            .await
            .unwrap()
    }

    /// Everything the server holds, read page by page straight from it (not the proxy).
    pub async fn server(&self) -> ServerState {
        let client = reqwest::Client::new();
        let mut out = ServerState::new();
        for kind in ResourceKind::ALL {
            let mut cursor: Option<String> = None;
            loop {
                let mut url = format!("{}/v1/{}?limit=500", self.cp.url(), kind.plural());
                if let Some(c) = &cursor {
                    url.push_str(&format!("&cursor={c}"));
                }
                let page: Value = client
                    .get(url)
                    .bearer_auth(TOKEN)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let items: Vec<Resource> = serde_json::from_value(page["items"].clone()).unwrap();
                out.extend(
                    items
                        .into_iter()
                        .map(|r| ((r.kind, r.name), (r.version, r.spec))),
                );
                match page["next_cursor"].as_str() {
                    Some(c) => cursor = Some(c.to_owned()),
                    None => break,
                }
            }
        }
        out
    }

    /// A change made by hand straight on the server (not through this console).
    pub async fn by_hand(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> u16 {
        let mut req = reqwest::Client::new()
            .request(method, format!("{}{path}", self.cp.url()))
            .bearer_auth(TOKEN)
            .header("idempotency-key", uuid::Uuid::new_v4().to_string());
        if let Some(b) = body {
            req = req.json(&b);
        }
        req.send().await.unwrap().status().as_u16()
    }
}
