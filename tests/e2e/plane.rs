//! A control plane the tests can stop and start again on the same port and database, and a
//! second client of it ("someone else").

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::{Value, json};
use switchyard_control_plane::Server;
use switchyard_test_support::plane;

pub const TOKEN: &str = "e2e-token-acme";

pub struct Plane {
    db: PathBuf,
    one_attempt: bool,
    /// Extra roots trusted for HTTPS targets (a TLS receiver's CA).
    roots: Vec<String>,
    pub port: u16,
    server: Option<Server>,
}

/// Names of the dead deliveries `Plane::seed_dlq` makes.
pub struct DlqSeed<'a> {
    pub endpoint: &'a str,
    pub flow: &'a str,
    pub target: &'a str,
    pub event_type: &'a str,
    pub count: usize,
}

async fn start_on(db: &Path, port: u16, one_attempt: bool, roots: &[String]) -> Result<Server> {
    let mut config = plane::config(db, &[("acme", TOKEN)]);
    config.listen = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    if one_attempt {
        config.delivery.schedule = vec![Duration::ZERO];
    }
    config.delivery.target_roots_pem = roots.to_vec();
    Server::start(config).await
}

impl Plane {
    pub async fn start(dir: &std::path::Path) -> Result<Self> {
        Self::start_with(dir, false).await
    }

    /// A plane whose deliveries get a single attempt: one that fails is dead at once, so a
    /// test has a DLQ in a second instead of the demo schedule's minutes.
    pub async fn start_one_attempt(dir: &std::path::Path) -> Result<Self> {
        Self::start_with(dir, true).await
    }

    /// A plane that trusts `roots` for HTTPS targets besides the system's (a TLS receiver).
    pub async fn start_trusting(dir: &std::path::Path, roots: Vec<String>) -> Result<Self> {
        let db = dir.join("cp.db");
        let server = start_on(&db, 0, false, &roots).await?;
        Ok(Self {
            db,
            one_attempt: false,
            roots,
            port: server.addr.port(),
            server: Some(server),
        })
    }

    async fn start_with(dir: &std::path::Path, one_attempt: bool) -> Result<Self> {
        let db = dir.join("cp.db");
        let server = start_on(&db, 0, one_attempt, &[]).await?;
        Ok(Self {
            db,
            one_attempt,
            roots: Vec::new(),
            port: server.addr.port(),
            server: Some(server),
        })
    }

    /// `seed.count` dead deliveries through a flow to a target on a closed port (creating the
    /// endpoint, target and flow when missing); returns once the DLQ holds them all.
    pub async fn seed_dlq(&self, seed: DlqSeed<'_>) -> Result<()> {
        let closed = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
        let target = json!({"name": seed.target, "spec": {"url": format!("http://{closed}/hook"), "timeout_ms": 1000}});
        let flow =
            json!({"name": seed.flow, "spec": {"endpoint": seed.endpoint, "target": seed.target}});
        for (path, body) in [
            (
                "/v1/endpoints",
                json!({"name": seed.endpoint, "spec": {"description": "e2e"}}),
            ),
            ("/v1/targets", target),
            ("/v1/flows", flow),
        ] {
            // Already there from an earlier seed: fine.
            let _ = self.call("POST", path, Some(body)).await;
        }
        let before = self.dlq_total().await?;
        for n in 0..seed.count {
            let event = json!({"endpoint": seed.endpoint, "event_type": seed.event_type, "payload": {"n": n}});
            self.call("POST", "/v1/events", Some(event)).await?;
        }
        let started = std::time::Instant::now();
        while self.dlq_total().await? < before + seed.count as u64 {
            if started.elapsed() > Duration::from_secs(30) {
                bail!("the seeded deliveries did not reach the DLQ within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    pub async fn dlq_total(&self) -> Result<u64> {
        let stats = self
            .call("GET", "/v1/dlq/stats?group_by=target", None)
            .await?;
        Ok(stats["total"].as_u64().unwrap_or(0))
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops answering: connections to the port are refused.
    pub async fn stop(&mut self) -> Result<()> {
        if let Some(server) = self.server.take() {
            server.stop().await?;
        }
        Ok(())
    }

    /// Back on the same port with the same data.
    pub async fn restart(&mut self) -> Result<()> {
        self.stop().await?;
        self.server = Some(start_on(&self.db, self.port, self.one_attempt, &self.roots).await?);
        Ok(())
    }

    /// Another client changes the data while this plane's port stays closed: a second server
    /// on the same database and another port, for the duration of `f`.
    pub async fn other_client_patch(&self, kind: &str, name: &str, patch: Value) -> Result<Value> {
        let other = start_on(&self.db, 0, false, &self.roots).await?;
        let result = request(
            &other.url(),
            "PATCH",
            &format!("/v1/{kind}/{name}"),
            Some(json!({ "spec": patch })),
        )
        .await;
        other.stop().await?;
        result
    }

    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value> {
        request(&self.url(), method, path, body).await
    }
}

async fn request(base: &str, method: &str, path: &str, body: Option<Value>) -> Result<Value> {
    let client = reqwest::Client::new();
    let mut req = client
        .request(method.parse()?, format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .header("idempotency-key", uuid_like());
    if let Some(body) = body {
        req = req.json(&body);
    }
    let response = req.send().await?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        bail!("{method} {path}: HTTP {status}: {text}");
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("e2e-{nanos}-{}", N.fetch_add(1, Ordering::Relaxed))
}
