//! Shared setup: a real control plane on 127.0.0.1:0 (restartable on the same database),
//! a console on a temp data dir, and a sync child process that can be killed -9.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use switchyard_control_plane::Server;
use switchyard_core::{Console, ConsoleOptions, NewProfile, Resource, ResourceKind};
use switchyard_test_support::plane;

pub const TOKEN: &str = "acme-secret-token-0123456789";

pub struct ControlPlane {
    pub db: PathBuf,
    pub server: Option<Server>,
    pub require_key: bool,
    pub retention: Duration,
    /// Pauses keyed requests at their crash points (a slow server).
    pub hooks: Option<std::sync::Arc<dyn switchyard_control_plane::hooks::Hooks>>,
    /// Extra roots the server trusts for HTTPS targets (a TLS receiver's CA).
    pub target_roots_pem: Vec<String>,
}

impl ControlPlane {
    pub async fn start(dir: &Path, require_key: bool) -> Self {
        let mut cp = Self {
            db: dir.join("cp.db"),
            server: None,
            require_key,
            retention: Duration::from_secs(86_400),
            hooks: None,
            target_roots_pem: Vec::new(),
        };
        cp.restart().await;
        cp
    }

    pub async fn restart(&mut self) {
        if let Some(s) = self.server.take() {
            s.stop().await.unwrap();
        }
        let mut config = plane::config(&self.db, &[("acme", TOKEN)]);
        config.idempotency.require_key = self.require_key;
        config.idempotency.retention = self.retention;
        config.sweep_every = Duration::from_millis(200);
        config.delivery.target_roots_pem = self.target_roots_pem.clone();
        if let Some(hooks) = &self.hooks {
            config.hooks = hooks.clone();
        }
        self.server = Some(Server::start(config).await.unwrap());
    }

    pub fn url(&self) -> String {
        self.server.as_ref().unwrap().url()
    }

    pub async fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            s.stop().await.unwrap();
        }
    }

    /// Every resource the server has, read directly (not through the proxy).
    pub async fn all(&self) -> Vec<Resource> {
        let client = reqwest::Client::new();
        let mut out = Vec::new();
        for kind in ResourceKind::ALL {
            let page: Value = client
                .get(format!("{}/v1/{}?limit=500", self.url(), kind.plural()))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert!(page["next_cursor"].is_null(), "test data fits one page");
            out.extend(serde_json::from_value::<Vec<Resource>>(page["items"].clone()).unwrap());
        }
        out
    }
}

pub async fn console(dir: &Path) -> Console {
    Console::open(ConsoleOptions::new(dir, "test"))
        .await
        .unwrap()
}

pub async fn console_with_profile(dir: &Path, url: &str) -> Console {
    let c = console(dir).await;
    c.add_profile(NewProfile {
        name: "p".into(),
        url: url.into(),
        token: TOKEN.into(),
    })
    .await
    .unwrap();
    c
}

/// Starts a sync process (this test binary, running only `child::sync_child_process`).
pub fn spawn_sync(data_dir: &Path, omit_key: bool, timeout_ms: u64) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child::sync_child_process",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(crate::child::CHILD_DIR_ENV, data_dir)
    .env(crate::child::CHILD_TIMEOUT_ENV, timeout_ms.to_string())
    .stdout(Stdio::null());
    if std::env::var("SWITCHYARD_DEBUG_SYNC").is_err() {
        cmd.stderr(Stdio::null());
    }
    if omit_key {
        cmd.env(switchyard_core::client::OMIT_KEY_ENV, "1");
    } else {
        cmd.env_remove(switchyard_core::client::OMIT_KEY_ENV);
    }
    cmd.spawn().unwrap()
}

/// Waits for a child's exit code, polling (so the async runtime keeps serving).
pub async fn wait_child(child: &mut Child, limit: Duration) -> Option<i32> {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
