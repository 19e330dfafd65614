//! A control plane the tests can stop and start again on the same port and database, and a
//! second client of it ("someone else").

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::{Value, json};
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};

pub const TOKEN: &str = "e2e-token-acme";

pub struct Plane {
    db: PathBuf,
    pub port: u16,
    server: Option<Server>,
}

async fn start_on(db: &Path, port: u16) -> Result<Server> {
    let mut tenants = Tenants::default();
    tenants.add("acme", TOKEN);
    let config = ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        format!("sqlite://{}", db.display()),
        tenants,
    );
    Server::start(config).await
}

impl Plane {
    pub async fn start(dir: &std::path::Path) -> Result<Self> {
        let db = dir.join("cp.db");
        let server = start_on(&db, 0).await?;
        Ok(Self {
            db,
            port: server.addr.port(),
            server: Some(server),
        })
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
        self.server = Some(start_on(&self.db, self.port).await?);
        Ok(())
    }

    /// Another client changes the data while this plane's port stays closed: a second server
    /// on the same database and another port, for the duration of `f`.
    pub async fn other_client_patch(&self, kind: &str, name: &str, patch: Value) -> Result<Value> {
        let other = start_on(&self.db, 0).await?;
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
