//! An in-repo fault proxy between the console and the control plane: drops requests,
//! drops responses after the server executed them, resets connections, delays, and answers
//! 503 with `Retry-After`, and fails reads of chosen paths. It logs every mutating request it
//! forwarded, by idempotency key.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rand::{Rng, SeedableRng};
use tokio::net::TcpListener;

/// Probabilities of each fault, per request (checked in this order).
#[derive(Debug, Clone, Copy, Default)]
pub struct Faults {
    /// Close the connection (RST) without forwarding.
    pub drop_request: f64,
    /// Answer 503 with `Retry-After: 1` without forwarding.
    pub unavailable: f64,
    /// Forward, let the server execute, then reset instead of answering.
    pub drop_response: f64,
    /// Sleep up to `max_delay_ms` before forwarding.
    pub delay: f64,
    pub max_delay_ms: u64,
}

impl Faults {
    pub fn chaos() -> Self {
        Self {
            drop_request: 0.08,
            unavailable: 0.05,
            drop_response: 0.10,
            delay: 0.2,
            max_delay_ms: 150,
        }
    }
}

struct State {
    upstream: Mutex<Option<String>>,
    faults: Mutex<Faults>,
    /// Reads (GET) whose path and query contain this answer 503 without being forwarded.
    fail_reads: Mutex<Option<String>>,
    /// Reads whose path starts with this answer 404, as a control plane without the route.
    absent: Mutex<Option<String>>,
    rng: Mutex<rand::rngs::StdRng>,
    /// Mutating requests that reached the server, per idempotency key (or "" when absent).
    forwarded: Mutex<HashMap<String, u32>>,
    /// Mutating requests passed on to the server, per idempotency key, counted as they leave
    /// (a request whose client vanished while the server worked on it counts too).
    sent: Mutex<HashMap<String, u32>>,
    client: reqwest::Client,
}

pub struct FaultProxy {
    pub addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    pub async fn start(upstream: &str, seed: u64) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            upstream: Mutex::new(Some(upstream.to_owned())),
            faults: Mutex::new(Faults::default()),
            fail_reads: Mutex::new(None),
            absent: Mutex::new(None),
            rng: Mutex::new(rand::rngs::StdRng::seed_from_u64(seed)),
            forwarded: Mutex::new(HashMap::new()),
            sent: Mutex::new(HashMap::new()),
            client: reqwest::Client::builder()
                .retry(reqwest::retry::never())
                .build()
                .unwrap(),
        });
        let st = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                #[allow(deprecated)]
                let _ = stream.set_linger(Some(Duration::ZERO)); // closes are resets
                let st = st.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| handle(st.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Self { addr, state, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set_faults(&self, faults: Faults) {
        *self.state.faults.lock().unwrap() = faults;
    }

    /// Reads whose path and query contain `pattern` fail with 503 (`None`: none fail).
    /// Used by the GitOps suite (tests/gitops), which shares this proxy.
    #[allow(dead_code)]
    pub fn fail_reads(&self, pattern: Option<&str>) {
        *self.state.fail_reads.lock().unwrap() = pattern.map(str::to_owned);
    }

    /// Reads of paths starting with `route` answer 404 `not_found`, as an older control plane
    /// without that route would (`None`: every route is there).
    #[allow(dead_code)]
    pub fn hide_route(&self, route: Option<&str>) {
        *self.state.absent.lock().unwrap() = route.map(str::to_owned);
    }

    /// `None`: the server is down (the proxy answers by resetting the connection).
    pub fn set_upstream(&self, upstream: Option<String>) {
        *self.state.upstream.lock().unwrap() = upstream;
    }

    /// How many times each idempotency key reached the server.
    pub fn forwarded(&self) -> HashMap<String, u32> {
        self.state.forwarded.lock().unwrap().clone()
    }

    /// How many times each idempotency key was passed on to the server, answered or not.
    pub fn sent(&self) -> HashMap<String, u32> {
        self.state.sent.lock().unwrap().clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Debug)]
struct Dropped;
impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("fault injected")
    }
}
impl std::error::Error for Dropped {}

async fn handle(st: Arc<State>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Dropped> {
    let (faults, roll, delay) = {
        let f = *st.faults.lock().unwrap();
        let mut rng = st.rng.lock().unwrap();
        (
            f,
            rng.random::<f64>(),
            rng.random_range(0..=f.max_delay_ms.max(1)),
        )
    };
    let (parts, body) = req.into_parts();
    let body = body.collect().await.map_err(|_| Dropped)?.to_bytes();
    let mutating = parts.method != hyper::Method::GET;
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let failing_read = st
        .fail_reads
        .lock()
        .unwrap()
        .as_deref()
        .is_some_and(|pattern| path_and_query.contains(pattern));
    let absent = st
        .absent
        .lock()
        .unwrap()
        .as_deref()
        .is_some_and(|route| parts.uri.path().starts_with(route));
    if !mutating && absent {
        return Ok(Response::builder()
            .status(404)
            .header("content-type", "application/problem+json")
            .body(Full::new(Bytes::from_static(
                br#"{"type":"urn:switchyard:problem:not_found","title":"Not Found","status":404,"code":"not_found"}"#,
            )))
            .unwrap());
    }
    if !mutating && failing_read {
        return Ok(Response::builder()
            .status(503)
            .header("content-type", "application/problem+json")
            .body(Full::new(Bytes::from_static(
                br#"{"type":"urn:switchyard:problem:unavailable","title":"Unavailable","status":503,"code":"unavailable"}"#,
            )))
            .unwrap());
    }
    let mut p = roll;
    if mutating {
        if p < faults.drop_request {
            return Err(Dropped);
        }
        p -= faults.drop_request;
        if p < faults.unavailable {
            return Ok(Response::builder()
                .status(503)
                .header("retry-after", "1")
                .header("content-type", "application/problem+json")
                .body(Full::new(Bytes::from_static(
                    br#"{"type":"urn:switchyard:problem:unavailable","title":"Unavailable","status":503,"code":"unavailable"}"#,
                )))
                .unwrap());
        }
        p -= faults.unavailable;
    }
    let drop_response = mutating && p < faults.drop_response;
    if mutating && rand::rng().random::<f64>() < faults.delay {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let Some(upstream) = st.upstream.lock().unwrap().clone() else {
        return Err(Dropped);
    };
    let uri = format!(
        "{upstream}{}",
        parts
            .uri
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
    );
    let mut out = st.client.request(parts.method.clone(), uri).body(body);
    for (name, value) in &parts.headers {
        if name != hyper::header::HOST && name != hyper::header::CONNECTION {
            out = out.header(name, value);
        }
    }
    let key = parts
        .headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim_matches('"')
        .to_owned();
    if mutating {
        *st.sent.lock().unwrap().entry(key.clone()).or_default() += 1;
    }
    let resp = out.send().await.map_err(|_| Dropped)?;
    if mutating {
        *st.forwarded.lock().unwrap().entry(key).or_default() += 1;
    }
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.map_err(|_| Dropped)?;
    if drop_response {
        return Err(Dropped);
    }
    let mut builder = Response::builder().status(status.as_u16());
    for (name, value) in &headers {
        if name != hyper::header::TRANSFER_ENCODING
            && name != hyper::header::CONNECTION
            && name != hyper::header::CONTENT_LENGTH
        {
            builder = builder.header(name, value);
        }
    }
    Ok(builder.body(Full::new(bytes)).unwrap())
}
