//! Request limits (docs/control-plane.md, "Limits"): body and header caps, the header-read
//! (slowloris) and whole-request timeouts, per-tenant rate limits, page-size and replay
//! selection caps. Each test drives a limit over (the documented status, code, header) and
//! under (a normal answer); removing the limit's control makes the "over" half fail.

mod keep_alive;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchyard_control_plane::delivery::schedule::parse_schedule;
use switchyard_control_plane::limits::{Limits, Rate};
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_test_support::plane;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "acme-token-0001";
const OTHER_TOKEN: &str = "globex-token-0002";

struct Plane {
    server: Server,
    _dir: TempDir,
    http: reqwest::Client,
}

/// A server whose limits are `Limits::default()` adjusted by `adjust`.
async fn start(adjust: impl FnOnce(&mut Limits, &mut ServerConfig)) -> Plane {
    let dir = tempfile::tempdir().unwrap();
    let tenants = [("acme", TOKEN), ("globex", OTHER_TOKEN)];
    let mut config = plane::config(&dir.path().join("cp.db"), &tenants);
    let mut limits = Limits::default();
    adjust(&mut limits, &mut config);
    config.limits = limits;
    Plane {
        server: Server::start(config).await.unwrap(),
        _dir: dir,
        http: reqwest::Client::builder().no_proxy().build().unwrap(),
    }
}

struct Answer {
    status: u16,
    content_type: String,
    retry_after: Option<String>,
    replayed: bool,
    body: Value,
}

impl Plane {
    async fn call(
        &self,
        token: &str,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
        extra_header: Option<(&str, String)>,
    ) -> Answer {
        let mut request = self
            .http
            .request(
                method.parse().unwrap(),
                format!("{}{path}", self.server.url()),
            )
            .bearer_auth(token);
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        if let Some((name, value)) = extra_header {
            request = request.header(name, value);
        }
        let response = request.send().await.unwrap();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        let content_type = header("content-type").unwrap_or_default();
        let retry_after = header("retry-after");
        let replayed = header("idempotent-replayed").as_deref() == Some("true");
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        Answer {
            status,
            content_type,
            retry_after,
            replayed,
            body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        }
    }

    async fn create(&self, token: &str, name: &str, key: &str) -> Answer {
        let body = json!({"name": name, "spec": {}});
        self.call(token, "POST", "/v1/endpoints", Some(key), Some(body), None)
            .await
    }

    async fn get(&self, path: &str) -> Answer {
        self.call(TOKEN, "GET", path, None, None, None).await
    }

    /// Sends `head` on a fresh connection and reads what comes back until the server closes
    /// it (or `within` passes).
    async fn raw(&self, head: &[u8], within: Duration) -> String {
        let mut stream = TcpStream::connect(self.server.addr).await.unwrap();
        stream.write_all(head).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(within, stream.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }
}

fn assert_problem(answer: &Answer, status: u16, code: &str) {
    assert_eq!(
        (answer.status, answer.body["code"].as_str()),
        (status, Some(code)),
        "{}",
        answer.body
    );
    assert_eq!(answer.content_type, "application/problem+json");
}

#[tokio::test]
async fn the_body_cap_is_the_flag_and_answers_413() {
    let plane = start(|limits, _| limits.max_body_bytes = 1050).await;
    // About 36 bytes plus the description; 1024 is the longest description allowed, so the
    // body over the cap would otherwise be created.
    let body = |n: usize| json!({"name": "big", "spec": {"description": "x".repeat(n)}});
    let over = plane
        .call(
            TOKEN,
            "POST",
            "/v1/endpoints",
            Some("b1"),
            Some(body(1024)),
            None,
        )
        .await;
    assert_problem(&over, 413, "payload_too_large");
    assert!(over.body["detail"].as_str().unwrap().contains("1050"));
    let under = plane
        .call(
            TOKEN,
            "POST",
            "/v1/endpoints",
            Some("b1"),
            Some(body(900)),
            None,
        )
        .await;
    assert_eq!(under.status, 201, "{}", under.body);
}

#[tokio::test]
async fn the_header_cap_answers_431_and_hyper_refuses_far_longer_heads() {
    let plane = start(|limits, _| limits.max_header_bytes = 4096).await;
    let pad = |n: usize| Some(("x-pad", "p".repeat(n)));
    let over = plane
        .call(TOKEN, "GET", "/v1/endpoints", None, None, pad(5000))
        .await;
    assert_problem(&over, 431, "headers_too_large");
    let under = plane
        .call(TOKEN, "GET", "/v1/endpoints", None, None, pad(3000))
        .await;
    assert_eq!(under.status, 200);
    // Past twice the cap the connection refuses the head before buffering it, so the router
    // never sees it; hyper's bare 431 is still answered as problem+json (src/head_errors.rs).
    let head = format!(
        "GET /healthz HTTP/1.1\r\nhost: x\r\nx-pad: {}\r\n\r\n",
        "p".repeat(40_000)
    );
    let answer = plane.raw(head.as_bytes(), Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(
        answer.contains("content-type: application/problem+json"),
        "{answer}"
    );
    assert!(
        answer.contains("\"code\":\"headers_too_large\""),
        "{answer}"
    );
    assert!(answer.contains("exceed 4096 bytes"), "{answer}");

    // Too many header fields, however short (about 1.5 KB here): the 431 says so, and does
    // not blame a byte cap the head is far under (issue 45 M1).
    let many = |n: usize| {
        let mut head = String::from("GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n");
        for i in 0..n {
            head.push_str(&format!("x-h{i}: v\r\n"));
        }
        head + "\r\n"
    };
    let answer = plane
        .raw(many(120).as_bytes(), Duration::from_secs(5))
        .await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(
        answer.contains("content-type: application/problem+json")
            && answer.contains("\"code\":\"headers_too_large\""),
        "{answer}"
    );
    assert!(
        answer.contains("more than 100 header fields") && !answer.contains("bytes"),
        "{answer}"
    );
    // The control: 98 fields (100 with host and connection) are read.
    let answer = plane.raw(many(98).as_bytes(), Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn a_slow_or_idle_connection_is_closed_after_the_header_read_timeout() {
    let plane = start(|limits, _| limits.header_read_timeout = Duration::from_millis(500)).await;
    // Slowloris: a request line, then one header line every 150 ms, never the blank line.
    let mut stream = TcpStream::connect(plane.server.addr).await.unwrap();
    let started = Instant::now();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let closed_after = loop {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the server kept a connection that never finished its headers"
        );
        if stream.write_all(b"x-slow: 1\r\n").await.is_err() {
            break started.elapsed();
        }
        let read = tokio::time::timeout(Duration::from_millis(150), stream.read(&mut buf)).await;
        if let Ok(Ok(0) | Err(_)) = read {
            break started.elapsed();
        }
    };
    assert!(
        closed_after >= Duration::from_millis(400) && closed_after < Duration::from_secs(3),
        "closed after {closed_after:?}"
    );
    // An idle connection that sends nothing is closed the same way.
    let started = Instant::now();
    let answer = plane.raw(b"", Duration::from_secs(5)).await;
    assert!(started.elapsed() < Duration::from_secs(3), "{answer}");
    // A prompt request is served.
    let answer = plane
        .raw(
            b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
            Duration::from_secs(5),
        )
        .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn a_request_over_the_request_timeout_answers_503() {
    let plane = start(|limits, _| limits.request_timeout = Duration::from_millis(300)).await;
    // A body promised but trickled: the handler is still reading it at the deadline.
    let mut stream = TcpStream::connect(plane.server.addr).await.unwrap();
    let head = format!(
        "POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {TOKEN}\r\n\
         content-type: application/json\r\ncontent-length: 100\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut out)).await;
    let answer = String::from_utf8_lossy(&out);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("\"code\":\"unavailable\""), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );
    let under = plane.get("/v1/endpoints").await;
    assert_eq!(under.status, 200);
}

#[tokio::test]
async fn writes_over_the_tenant_rate_answer_429_and_are_not_stored_under_the_key() {
    let plane = start(|limits, _| {
        limits.writes = Rate {
            per_s: 1.0,
            burst: 2,
        };
    })
    .await;
    assert_eq!(plane.create(TOKEN, "e1", "k1").await.status, 201);
    assert_eq!(plane.create(TOKEN, "e2", "k2").await.status, 201);
    let over = plane.create(TOKEN, "e3", "k3").await;
    assert_problem(&over, 429, "rate_limited");
    assert_eq!(over.retry_after.as_deref(), Some("1"));
    // Reads are not limited; another tenant has its own bucket.
    assert_eq!(plane.get("/v1/endpoints").await.status, 200);
    assert_eq!(plane.create(OTHER_TOKEN, "e3", "k3").await.status, 201);
    // Once a token is back, the same key executes: the 429 claimed and stored nothing.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let retry = plane.create(TOKEN, "e3", "k3").await;
    assert_eq!(
        (retry.status, retry.replayed),
        (201, false),
        "{}",
        retry.body
    );
}

#[tokio::test]
async fn events_over_the_tenant_rate_answer_429_with_retry_after() {
    let plane = start(|limits, _| {
        limits.writes = Rate::OFF;
        limits.events = Rate {
            per_s: 0.5,
            burst: 1,
        };
    })
    .await;
    assert_eq!(plane.create(TOKEN, "ep", "k1").await.status, 201);
    let event = json!({"endpoint": "ep", "event_type": "thing.happened", "payload": {}});
    let submit = || plane.call(TOKEN, "POST", "/v1/events", None, Some(event.clone()), None);
    let first = submit().await;
    assert!(matches!(first.status, 200 | 202), "{}", first.body);
    let over = submit().await;
    assert_problem(&over, 429, "rate_limited");
    assert_eq!(over.retry_after.as_deref(), Some("2"));
    // Writes are their own class (off here).
    assert_eq!(plane.create(TOKEN, "ep2", "k2").await.status, 201);
}

#[tokio::test]
async fn page_sizes_and_replay_selections_are_capped() {
    let plane = start(|limits, config| {
        limits.max_replay_selection = 2;
        config.delivery.schedule = parse_schedule("0s").unwrap();
        config.delivery.poll_max = Duration::from_millis(50);
    })
    .await;
    for (path, max) in [
        ("/v1/endpoints?limit=", 500),
        ("/v1/dlq?limit=", 500),
        ("/v1/replays?limit=", 200),
        ("/v1/events?event_key=k&limit=", 100),
    ] {
        let over = plane.get(&format!("{path}{}", max + 1)).await;
        assert_problem(&over, 400, "validation_failed");
        assert_eq!(over.body["field"], "limit", "{path}");
        assert_eq!(plane.get(&format!("{path}{max}")).await.status, 200);
    }
    let ids: Vec<String> = (0..1001).map(|n| format!("d{n}")).collect();
    let over = plane
        .call(
            TOKEN,
            "PUT",
            "/v1/replays/many",
            None,
            Some(json!({"selection": {"delivery_ids": ids}})),
            None,
        )
        .await;
    assert_problem(&over, 400, "validation_failed");
    assert_eq!(over.body["field"], "selection.delivery_ids");

    // Three dead deliveries (a closed port, one attempt); a filter session takes two.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", closed.local_addr().unwrap());
    drop(closed);
    let plane = &plane;
    let create = |plural: &'static str, name: &'static str, spec: Value| {
        let body = json!({"name": name, "spec": spec});
        let path = format!("/v1/{plural}");
        let key = format!("{plural}-{name}");
        async move {
            let answer = plane
                .call(TOKEN, "POST", &path, Some(&key), Some(body), None)
                .await;
            assert_eq!(answer.status, 201, "{}", answer.body);
        }
    };
    create("endpoints", "ep", json!({})).await;
    create("targets", "tg", json!({"url": url, "timeout_ms": 1000})).await;
    create("flows", "fl", json!({"endpoint": "ep", "target": "tg"})).await;
    for n in 0..3 {
        let event = json!({"endpoint": "ep", "event_type": "thing.happened", "payload": {"n": n}});
        let answer = plane
            .call(TOKEN, "POST", "/v1/events", None, Some(event), None)
            .await;
        assert!(matches!(answer.status, 200 | 202), "{}", answer.body);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while plane.get("/v1/dlq").await.body["items"]
        .as_array()
        .unwrap()
        .len()
        < 3
    {
        assert!(Instant::now() < deadline, "the deliveries never died");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let filter = |dry_run: bool| json!({"selection": {"filter": {}}, "dry_run": dry_run});
    let dry = plane
        .call(
            TOKEN,
            "PUT",
            "/v1/replays/dry",
            None,
            Some(filter(true)),
            None,
        )
        .await;
    assert_eq!((dry.status, dry.body["count"].as_u64()), (200, Some(2)));
    let session = plane
        .call(
            TOKEN,
            "PUT",
            "/v1/replays/r1",
            None,
            Some(filter(false)),
            None,
        )
        .await;
    assert_eq!(session.status, 201, "{}", session.body);
    assert_eq!(session.body["counts"]["total"], 2, "{}", session.body);
}
