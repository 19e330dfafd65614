//! Test harness: in-process and out-of-process control planes, real loopback receivers,
//! an edge process, and small API helpers.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchyard_control_plane::{Server, ServerConfig};
use tokio::io::{AsyncBufReadExt, BufReader};

pub const TOKEN: &str = "acme-token-123";
pub const OTHER_TOKEN: &str = "other-token-456";
pub use switchyard_test_support::plane::FAST;

// Each test binary that includes this file uses some of these.
use switchyard_test_support::plane;
#[allow(unused_imports)]
pub use switchyard_test_support::receiver::{Received, Receiver, Reply, status};

pub fn config(db: &Path, schedule: &str) -> ServerConfig {
    plane::fast(
        plane::config(db, &[("acme", TOKEN), ("other", OTHER_TOKEN)]),
        schedule,
    )
}

pub async fn server(dir: &Path) -> Server {
    Server::start(config(&dir.join("cp.db"), FAST))
        .await
        .unwrap()
}

/// A tiny API client for one control plane.
#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub http: reqwest::Client,
}

impl Api {
    pub fn new(base: impl Into<String>) -> Self {
        Self {
            base: base.into(),
            http: reqwest::Client::builder().no_proxy().build().unwrap(),
        }
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        key: Option<&str>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn get(&self, path: &str) -> Value {
        let (status, body) = self.call("GET", path, None, None).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    pub async fn create(&self, plural: &str, name: &str, spec: Value) -> Value {
        let key = format!("create-{plural}-{name}");
        let (status, body) = self
            .call(
                "POST",
                &format!("/v1/{plural}"),
                Some(json!({"name": name, "spec": spec})),
                Some(&key),
            )
            .await;
        assert_eq!(status, 201, "create {plural}/{name}: {body}");
        body
    }

    /// Endpoint `ep`, target `tg` at `url` (returns its signing secret), flow `fl`.
    pub async fn route(&self, url: &str, mode: Value) -> String {
        self.create("endpoints", "ep", json!({})).await;
        let target = self
            .create("targets", "tg", json!({"url": url, "timeout_ms": 2000}))
            .await;
        let mut flow = json!({"endpoint": "ep", "target": "tg"});
        if let (Some(flow), Some(mode)) = (flow.as_object_mut(), mode.as_object()) {
            flow.extend(mode.clone());
        }
        self.create("flows", "fl", flow).await;
        target["status"]["signing_secret"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub async fn submit(&self, body: Value) -> (u16, Value) {
        self.call("POST", "/v1/events", Some(body), None).await
    }

    pub async fn event_id(&self, n: u64) -> String {
        let (status, body) = self
            .submit(json!({"endpoint": "ep", "event_type": "thing.happened", "payload": {"n": n}}))
            .await;
        assert!(status == 202 || status == 200, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }

    pub async fn delivery_of(&self, event_id: &str) -> Value {
        let event = self.get(&format!("/v1/events/{event_id}")).await;
        event["deliveries"][0].clone()
    }

    /// Waits until the event's first delivery is in `state`.
    pub async fn wait_state(&self, event_id: &str, state: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let d = self.delivery_of(event_id).await;
            if d["state"] == state {
                return d;
            }
            assert!(
                Instant::now() < deadline,
                "delivery never reached {state}: {d:#}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

pub async fn wait_for(what: &str, within: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A child process (control plane or edge), killed with SIGKILL on drop.
pub struct Child {
    pub child: tokio::process::Child,
    pub url: Option<String>,
    /// The last lines the process wrote to stderr, for a failing assertion to show why.
    stderr: Arc<Mutex<std::collections::VecDeque<String>>>,
}

impl Child {
    pub async fn kill9(&mut self) {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
    }

    /// Sends SIGTERM (what `systemctl stop` and Kubernetes send) without waiting.
    pub fn terminate(&self) {
        let pid = self.child.id().expect("a running child").to_string();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM {pid}");
    }

    /// Waits for the process to exit on its own, at most `within`.
    pub async fn exit_status(&mut self, within: Duration) -> std::process::ExitStatus {
        tokio::time::timeout(within, self.child.wait())
            .await
            .expect("the process exits")
            .unwrap()
    }

    /// The last lines of the process's log (stderr), oldest first.
    pub fn log_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap();
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Keeps the last 200 lines of `child`'s stderr (read in the background).
    fn capture_stderr(
        child: &mut tokio::process::Child,
    ) -> Arc<Mutex<std::collections::VecDeque<String>>> {
        let tail = Arc::new(Mutex::new(std::collections::VecDeque::new()));
        let mut lines = BufReader::new(child.stderr.take().expect("stderr piped")).lines();
        let keep = tail.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut kept = keep.lock().unwrap();
                if kept.len() == 200 {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        tail
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

const BIN: &str = env!("CARGO_BIN_EXE_switchyard-control-plane");

/// Starts `switchyard-control-plane serve` on a free port; waits for its URL.
pub async fn spawn_control_plane(db: &Path, extra: &[&str]) -> Child {
    spawn_serve(&format!("sqlite://{}", db.display()), extra, &[]).await
}

/// Starts `switchyard-control-plane serve` over the database `db_url`, with `env` set.
/// Private targets are allowed: the receivers are on loopback.
pub async fn spawn_serve(db_url: &str, extra: &[&str], env: &[(&str, &str)]) -> Child {
    let mut command = tokio::process::Command::new(BIN);
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tenant",
            &format!("acme:{TOKEN}"),
            "--allow-private-targets",
        ])
        .arg("--db")
        .arg(db_url)
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let stderr = Child::capture_stderr(&mut child);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("switchyard control plane listening on ") {
                return url.to_owned();
            }
        }
        panic!("control plane exited before listening");
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Child {
        child,
        url: Some(url),
        stderr,
    }
}

/// Starts `switchyard-control-plane edge` for `control_plane`.
pub fn spawn_edge(control_plane: &str, name: &str) -> Child {
    spawn_edge_with(control_plane, name, &[])
}

/// Starts `switchyard-control-plane edge` with `extra` arguments (private targets allowed:
/// the receivers are on loopback).
pub fn spawn_edge_with(control_plane: &str, name: &str, extra: &[&str]) -> Child {
    let mut child = tokio::process::Command::new(BIN)
        .args([
            "edge",
            "--control-plane",
            control_plane,
            "--name",
            name,
            "--poll",
            "20ms",
            "--allow-private-targets",
        ])
        .args(["--retry-schedule", FAST])
        .args(extra)
        .env("SWITCHYARD_EDGE_TOKEN", TOKEN)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = Child::capture_stderr(&mut child);
    Child {
        child,
        url: None,
        stderr,
    }
}
