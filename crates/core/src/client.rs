//! The HTTP client for one profile's control plane. Built with retries OFF: the sync
//! engine is the single layer that retries (`reqwest::retry::never()`; hyper may still
//! re-send a request that was never written because a pooled connection had closed,
//! which cannot execute twice).

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::Value;
use switchyard_protocol::headers::{IDEMPOTENCY_KEY, format_idempotency_key};
use switchyard_protocol::{Page, Problem, Resource, ResourceKind, ServerInfo};

use crate::error::{CoreError, Result};
use crate::types::OpKind;

/// Test-only switch: when set to `1`, mutating requests omit `Idempotency-Key`. Exists so
/// the crash/fault test can prove that the key is what prevents double effects (the
/// negative control). Only a build with the `fault-injection` feature (the tests') reads
/// it; a release build has no such switch.
#[cfg(feature = "fault-injection")]
pub const OMIT_KEY_ENV: &str = "SWITCHYARD_TEST_OMIT_IDEMPOTENCY_KEY";

#[derive(Clone)]
pub struct ApiClient {
    http: reqwest::Client,
    base: String,
    token: String,
    profile: String,
    #[cfg(feature = "fault-injection")]
    omit_key: bool,
}

/// A raw answer to a mutating request.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Option<Value>,
}

/// How a mutating request ended at the transport level.
#[derive(Debug)]
pub enum SendResult {
    Answered(Answer),
    /// No complete answer: connect refused, timeout, reset, truncated body.
    Transport(String),
}

impl ApiClient {
    pub fn new(profile: &str, base: &str, token: &str, timeout: Duration) -> Result<Self> {
        let http = reqwest::Client::builder()
            .retry(reqwest::retry::never())
            .connect_timeout(Duration::from_secs(5))
            .timeout(timeout)
            .pool_max_idle_per_host(64)
            // Under the control plane's 10 s idle close (`--header-read-timeout`), so a write
            // is not sent on a connection the server is closing.
            .pool_idle_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| CoreError::io("cannot build the HTTP client", e))?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
            profile: profile.to_owned(),
            #[cfg(feature = "fault-injection")]
            omit_key: std::env::var(OMIT_KEY_ENV).as_deref() == Ok("1"),
        })
    }

    fn offline(&self, e: impl std::fmt::Display) -> CoreError {
        CoreError::Offline {
            profile: self.profile.clone(),
            message: e.to_string(),
        }
    }

    /// `GET /healthz`: returns the round-trip time.
    pub async fn health(&self) -> Result<Duration> {
        let started = Instant::now();
        let resp = self
            .http
            .get(format!("{}/healthz", self.base))
            .send()
            .await
            .map_err(|e| self.offline(describe(&e)))?;
        let rtt = started.elapsed();
        if resp.status() != StatusCode::OK {
            return Err(self.offline(format!("health check answered HTTP {}", resp.status())));
        }
        Ok(rtt)
    }

    pub(crate) async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<Option<T>> {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| self.offline(describe(&e)))?;
        match resp.status() {
            StatusCode::NOT_FOUND => Ok(None),
            StatusCode::UNAUTHORIZED => Err(CoreError::Unauthorized {
                profile: self.profile.clone(),
            }),
            s if s.is_success() => resp
                .json()
                .await
                .map(Some)
                .map_err(|e| self.offline(format!("reading {path}: {}", describe(&e)))),
            s => {
                let text = resp.text().await.unwrap_or_default();
                let problem = serde_json::from_str::<Problem>(&text).ok();
                Err(CoreError::server(
                    s.as_u16(),
                    problem,
                    format!("GET {path}"),
                ))
            }
        }
    }

    pub async fn info(&self) -> Result<ServerInfo> {
        self.get_json("/v1/info")
            .await?
            .ok_or_else(|| CoreError::not_found("/v1/info"))
    }

    /// Who this profile's token is (`GET /v1/whoami`): its tenant and role. `None` from a
    /// control plane that predates roles (every token there may do everything).
    pub async fn whoami(&self) -> Result<Option<switchyard_protocol::Caller>> {
        self.get_json("/v1/whoami").await
    }

    pub async fn get(&self, kind: ResourceKind, name: &str) -> Result<Option<Resource>> {
        self.get_json(&format!("/v1/{}/{name}", kind.plural()))
            .await
    }

    pub async fn list_all(&self, kind: ResourceKind) -> Result<Vec<Resource>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list_page(kind, cursor.as_deref()).await?;
            out.extend(page.items);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(out),
            }
        }
    }

    /// One page (up to 500) of a kind's resources, by name, after `cursor`.
    pub async fn list_page(
        &self,
        kind: ResourceKind,
        cursor: Option<&str>,
    ) -> Result<Page<Resource>> {
        let mut path = format!("/v1/{}?limit=500", kind.plural());
        if let Some(c) = cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        self.get_json(&path)
            .await?
            .ok_or_else(|| CoreError::not_found(path.clone()))
    }

    /// Sends one request with a JSON body (or none) to `path`, once. Never retries. Used by
    /// replay sessions (`PUT /v1/replays/{id}`, `POST /v1/replays/{id}/cancel`).
    pub(crate) async fn send_to(
        &self,
        method: Method,
        path: &str,
        body: &Value,
        key: Option<&str>,
    ) -> SendResult {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(key) = key {
            req = req.header(IDEMPOTENCY_KEY, format_idempotency_key(key));
        }
        if !body.is_null() {
            req = req.json(body);
        }
        answer(req.send().await).await
    }

    /// Sends a queued operation's request, once, with its key and If-Match.
    pub(crate) async fn send_op(&self, op: &crate::types::OutboxOp) -> SendResult {
        self.send(
            op.op,
            op.kind,
            &op.name,
            &op.body,
            op.if_match,
            &op.idempotency_key,
        )
        .await
    }

    /// Sends one mutating request, once. Never retries.
    pub async fn send(
        &self,
        op: OpKind,
        kind: ResourceKind,
        name: &str,
        body: &Value,
        if_match: Option<i64>,
        key: &str,
    ) -> SendResult {
        let collection = format!("{}/v1/{}", self.base, kind.plural());
        let (method, url) = match op {
            OpKind::Create => (Method::POST, collection),
            OpKind::Update => (Method::PATCH, format!("{collection}/{name}")),
            OpKind::Apply => (Method::PUT, format!("{collection}/{name}")),
            OpKind::Delete => (Method::DELETE, format!("{collection}/{name}")),
            OpKind::Enable => (Method::POST, format!("{collection}/{name}/enable")),
            OpKind::Disable => (Method::POST, format!("{collection}/{name}/disable")),
        };
        let mut req = self.http.request(method, url).bearer_auth(&self.token);
        #[cfg(feature = "fault-injection")]
        let send_key = !self.omit_key;
        #[cfg(not(feature = "fault-injection"))]
        let send_key = true;
        if send_key {
            req = req.header(IDEMPOTENCY_KEY, format_idempotency_key(key));
        }
        if let Some(v) = if_match {
            req = req.header(reqwest::header::IF_MATCH, format!("\"{v}\""));
        }
        if !body.is_null() {
            req = req.json(body);
        }
        answer(req.send().await).await
    }
}

/// Reads an answer completely; a 2xx whose body cannot be read counts as lost in transit.
async fn answer(sent: reqwest::Result<reqwest::Response>) -> SendResult {
    {
        let resp = match sent {
            Ok(r) => r,
            Err(e) => return SendResult::Transport(describe(&e)),
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = match resp.bytes().await {
            Ok(b) => b,
            Err(e) => return SendResult::Transport(format!("response lost: {}", describe(&e))),
        };
        let body = if bytes.is_empty() {
            None
        } else {
            match serde_json::from_slice(&bytes) {
                Ok(v) => Some(v),
                // A 2xx with an unreadable body: the answer was damaged in transit.
                Err(e) if (200..300).contains(&status) => {
                    return SendResult::Transport(format!("response body unreadable: {e}"));
                }
                Err(_) => None,
            }
        };
        SendResult::Answered(Answer {
            status,
            retry_after,
            body,
        })
    }
}

/// Describes a transport error without its URL (which is harmless, but long) and never
/// with headers (which hold the token).
fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_connect() {
        "connection failed"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "response body failed"
    } else if e.is_request() {
        "request failed"
    } else {
        "transport error"
    };
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}: {detail}")
    }
}
