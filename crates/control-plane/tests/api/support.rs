//! Test harness: a real server on a loopback port with its own database.

use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;
use switchyard_control_plane::clock::ManualClock;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use tempfile::TempDir;

pub const TOKEN: &str = "acme-token-0001";
pub const OTHER_TOKEN: &str = "globex-token-0002";

pub struct TestServer {
    pub server: Option<Server>,
    pub dir: TempDir,
    pub client: reqwest::Client,
    pub base: String,
}

pub fn tenants() -> Tenants {
    let mut tenants = Tenants::default();
    tenants.add("acme", TOKEN);
    tenants.add("globex", OTHER_TOKEN);
    tenants
}

pub fn db_url(dir: &TempDir) -> String {
    format!("sqlite://{}", dir.path().join("cp.db").display())
}

pub fn config(dir: &TempDir) -> ServerConfig {
    ServerConfig::new("127.0.0.1:0".parse().unwrap(), db_url(dir), tenants()).local_only()
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()
        .unwrap()
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(adjust: impl FnOnce(&mut ServerConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::start_in(dir, adjust).await
    }

    pub async fn start_in(dir: TempDir, adjust: impl FnOnce(&mut ServerConfig)) -> Self {
        let mut config = config(&dir);
        adjust(&mut config);
        let server = Server::start(config).await.unwrap();
        let base = server.url();
        Self {
            server: Some(server),
            dir,
            client: client(),
            base,
        }
    }

    /// Restarts the server on the same database (a graceful restart).
    pub async fn restart(mut self, adjust: impl FnOnce(&mut ServerConfig)) -> Self {
        self.server.take().unwrap().stop().await.unwrap();
        Self::start_in(self.dir, adjust).await
    }

    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
    }

    pub fn keyed(&self, method: Method, path: &str, key: &str) -> RequestBuilder {
        self.req(method, path).header("idempotency-key", key)
    }

    pub async fn create(&self, plural: &str, key: &str, body: Value) -> Response {
        self.keyed(Method::POST, &format!("/v1/{plural}"), key)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn get(&self, path: &str) -> Response {
        self.req(Method::GET, path).send().await.unwrap()
    }
}

/// A response reduced to what a client can observe and compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    pub etag: Option<String>,
    pub replayed: bool,
    pub body: Vec<u8>,
}

impl Observed {
    pub async fn of(response: Response) -> Self {
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        let content_type = header("content-type");
        let location = header("location");
        let etag = header("etag");
        let replayed = header("idempotent-replayed").as_deref() == Some("true");
        let status = response.status().as_u16();
        let body = response.bytes().await.unwrap().to_vec();
        Self {
            status,
            content_type,
            location,
            etag,
            replayed,
            body,
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    pub fn code(&self) -> String {
        self.json()["code"].as_str().unwrap_or_default().to_owned()
    }

    /// Everything but the replay marker: what "byte for byte" compares.
    pub fn without_replay_flag(&self) -> Self {
        Self {
            replayed: false,
            ..self.clone()
        }
    }
}

pub fn endpoint(name: &str) -> Value {
    serde_json::json!({"name": name, "spec": {"description": format!("{name} events")}})
}

pub fn manual_clock() -> ManualClock {
    ManualClock::new(1_800_000_000_000)
}

pub fn use_clock(config: &mut ServerConfig, clock: &ManualClock) {
    config.clock = Arc::new(clock.clone());
}

/// Polls `check` every 10 ms until it is true or `limit` passes.
pub async fn eventually(limit: Duration, mut check: impl AsyncFnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// A hook that parks the first request with one key at one point until released.
pub struct Gate {
    pub point: switchyard_control_plane::hooks::HookPoint,
    pub key: String,
    armed: std::sync::atomic::AtomicBool,
    pub arrived: tokio::sync::Notify,
    pub release: tokio::sync::Notify,
}

impl Gate {
    pub fn new(point: switchyard_control_plane::hooks::HookPoint, key: &str) -> Arc<Self> {
        Arc::new(Self {
            point,
            key: key.to_owned(),
            armed: std::sync::atomic::AtomicBool::new(true),
            arrived: tokio::sync::Notify::new(),
            release: tokio::sync::Notify::new(),
        })
    }
}

#[async_trait::async_trait]
impl switchyard_control_plane::hooks::Hooks for Gate {
    async fn at(&self, point: switchyard_control_plane::hooks::HookPoint, key: &str) {
        if point == self.point
            && key == self.key
            && self.armed.swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            let released = self.release.notified();
            self.arrived.notify_one();
            released.await;
        }
    }
}

/// A webhook request as the receiver got it.
struct Received {
    id: String,
    timestamp: String,
    signature: String,
    body: Vec<u8>,
}

/// A webhook receiver on loopback: records each request and answers with the given statuses
/// in order (200 once they run out). With `hold_first`, the first request is parked (after
/// `first_arrived` fires) until `release_first` is notified.
pub struct Recorder {
    pub url: String,
    received: Arc<std::sync::Mutex<Vec<Received>>>,
    pub first_arrived: Arc<tokio::sync::Notify>,
    pub release_first: Arc<tokio::sync::Notify>,
    _task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    pub async fn start(statuses: &[u16]) -> Self {
        Self::start_holding(statuses, false).await
    }

    pub async fn start_holding(statuses: &[u16], hold_first: bool) -> Self {
        let received = Arc::new(std::sync::Mutex::new(Vec::new()));
        let statuses = Arc::new(std::sync::Mutex::new(statuses.to_vec()));
        let (arrived, release) = (
            Arc::new(tokio::sync::Notify::new()),
            Arc::new(tokio::sync::Notify::new()),
        );
        let (log, left, a, r) = (
            received.clone(),
            statuses.clone(),
            arrived.clone(),
            release.clone(),
        );
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                    let (log, left, arrived, release) =
                        (log.clone(), left.clone(), a.clone(), r.clone());
                    async move {
                        let header = |name: &str| {
                            headers
                                .get(name)
                                .map(|v| v.to_str().unwrap().to_owned())
                                .unwrap_or_default()
                        };
                        let (nth, status) = {
                            let mut log = log.lock().unwrap();
                            log.push(Received {
                                id: header("webhook-id"),
                                timestamp: header("webhook-timestamp"),
                                signature: header("webhook-signature"),
                                body: body.to_vec(),
                            });
                            let mut left = left.lock().unwrap();
                            let status = if left.is_empty() { 200 } else { left.remove(0) };
                            (log.len(), status)
                        };
                        if hold_first && nth == 1 {
                            let released = release.notified();
                            arrived.notify_one();
                            released.await;
                        }
                        axum::http::StatusCode::from_u16(status).unwrap()
                    }
                },
            ),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url,
            received,
            first_arrived: arrived,
            release_first: release,
            _task: task,
        }
    }

    /// The `webhook-id` of every request received, in order.
    pub fn ids(&self) -> Vec<String> {
        let received = self.received.lock().unwrap();
        received.iter().map(|r| r.id.clone()).collect()
    }

    /// Whether request `n` carries a valid Standard Webhooks signature made with `secret`.
    pub fn signed_with(&self, n: usize, secret: &str) -> bool {
        let received = self.received.lock().unwrap();
        let r = &received[n];
        let Ok(timestamp) = r.timestamp.parse::<i64>() else {
            return false;
        };
        switchyard_control_plane::delivery::signing::verify(
            secret,
            &r.id,
            timestamp,
            &r.body,
            &r.signature,
        )
    }
}

pub fn target(name: &str, url: &str) -> Value {
    serde_json::json!({"name": name, "spec": {"url": url, "timeout_ms": 2000}})
}

impl TestServer {
    /// `POST /v1/targets/{name}/test` with `key`.
    pub async fn test_target(&self, name: &str, key: &str) -> Observed {
        let response = self
            .keyed(Method::POST, &format!("/v1/targets/{name}/test"), key)
            .json(&serde_json::json!({}))
            .send()
            .await
            .unwrap();
        Observed::of(response).await
    }
}
