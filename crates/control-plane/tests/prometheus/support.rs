//! The harness: a scripted receiver, a server config with a one-attempt schedule, API calls
//! as tenant alpha, scrapes and the values of their series.

use std::time::{Duration, Instant};

use prometheus_parse::{Scrape, Value as Sample};
use serde_json::{Value, json};
use switchyard_control_plane::delivery::DeliveryConfig;
use switchyard_control_plane::delivery::schedule::parse_schedule;
use switchyard_control_plane::telemetry::MetricsConfig;
use switchyard_control_plane::{Server, ServerConfig};

pub const ALPHA: &str = "tenant-alpha";
pub const ALPHA_TOKEN: &str = "alpha-token-123";
pub const BETA: &str = "tenant-beta";
pub const BETA_TOKEN: &str = "beta-token-456";
pub const SCRAPE_TOKEN: &str = "scrape-token-789";

use switchyard_test_support::plane;
pub use switchyard_test_support::receiver::Receiver;
use switchyard_test_support::receiver::{Reply, status};

/// A webhook receiver: `/ok` answers 200, `/fail` 500, `/slow` 200 after 600 ms.
pub fn receiver() -> Receiver {
    Receiver::routed(|path, _| match path {
        "/fail" => status(500),
        // Holds the call a while: a keyed target test of it is in progress meanwhile.
        "/slow" => Reply {
            status: 200,
            delay: Duration::from_millis(600),
        },
        _ => status(200),
    })
}

/// How many requests `/ok` and `/fail` got.
pub fn hits(receiver: &Receiver) -> usize {
    receiver
        .received()
        .iter()
        .filter(|r| r.path != "/slow")
        .count()
}

pub fn config(dir: &std::path::Path, metrics: MetricsConfig) -> ServerConfig {
    let tenants = [(ALPHA, ALPHA_TOKEN), (BETA, BETA_TOKEN)];
    let mut config = plane::config(&dir.join("cp.db"), &tenants);
    // One attempt: a failure goes to the DLQ at once.
    config.delivery = DeliveryConfig {
        schedule: parse_schedule("0s").unwrap(),
        poll_max: Duration::from_millis(50),
        ..config.delivery
    };
    config.metrics = metrics;
    config
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// One API call as tenant alpha.
pub async fn call(
    server: &Server,
    method: &str,
    path: &str,
    body: Option<Value>,
    key: Option<&str>,
) -> (u16, Value) {
    let mut request = client()
        .request(method.parse().unwrap(), format!("{}{path}", server.url()))
        .bearer_auth(ALPHA_TOKEN);
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

pub async fn create(server: &Server, plural: &str, name: &str, spec: Value) {
    let key = format!("create-{plural}-{name}");
    let body = json!({"name": name, "spec": spec});
    let (status, answer) = call(
        server,
        "POST",
        &format!("/v1/{plural}"),
        Some(body),
        Some(&key),
    )
    .await;
    assert_eq!(status, 201, "create {plural}/{name}: {answer}");
}

/// Endpoint `ep-good` routes to `/ok`, `ep-bad` to `/fail`.
pub async fn routes(server: &Server, receiver: &Receiver) {
    for (kind, path) in [("good", "/ok"), ("bad", "/fail")] {
        create(server, "endpoints", &format!("ep-{kind}"), json!({})).await;
        let url = format!("{}{path}", receiver.base);
        create(
            server,
            "targets",
            &format!("tg-{kind}"),
            json!({"url": url, "timeout_ms": 2000}),
        )
        .await;
        let flow = json!({"endpoint": format!("ep-{kind}"), "target": format!("tg-{kind}")});
        create(server, "flows", &format!("fl-{kind}"), flow).await;
    }
}

pub async fn submit(server: &Server, endpoint: &str, event_key: Option<&str>) -> (u16, Value) {
    let mut body =
        json!({"endpoint": endpoint, "event_type": "order.created", "payload": {"n": 1}});
    if let Some(key) = event_key {
        body["event_key"] = json!(key);
    }
    call(server, "POST", "/v1/events", Some(body), None).await
}

/// A scrape: status, content type and body.
pub async fn get_metrics(url: &str, token: Option<&str>) -> (u16, String, String) {
    let mut request = client().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map_or(String::new(), |v| v.to_str().unwrap().to_owned());
    (status, content_type, response.text().await.unwrap())
}

/// A successful scrape, parsed.
pub async fn scrape(url: &str, token: Option<&str>) -> (String, Scrape) {
    let (status, content_type, text) = get_metrics(url, token).await;
    assert_eq!(status, 200, "{text}");
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let parsed = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    (text, parsed)
}

/// The value of the one series of `name` whose labels include `labels`.
pub fn value(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    let found: Vec<_> = scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(v)))
        .collect();
    assert_eq!(found.len(), 1, "one series {name}{labels:?}: {found:?}");
    match found[0].value {
        Sample::Counter(v) | Sample::Gauge(v) | Sample::Untyped(v) => v,
        ref other => panic!("{name} is not a single value: {other:?}"),
    }
}

/// The value of the one series of `name` with `labels`, read from the text itself: for
/// route templates such as `/v1/events/{id}`, whose braces `prometheus-parse` 0.2 cannot
/// read inside a label value (it skips those lines; Prometheus reads them).
pub fn raw_value(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    let found: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .collect();
    assert_eq!(found.len(), 1, "one series {name}{labels:?}: {found:?}");
    found[0].rsplit(' ').next().unwrap().parse().unwrap()
}

/// Scrapes until `done` holds (deliveries are asynchronous), then returns that scrape.
pub async fn scrape_until(
    url: &str,
    token: Option<&str>,
    what: &str,
    done: impl Fn(&Scrape) -> bool,
) -> (String, Scrape) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (text, parsed) = scrape(url, token).await;
        if done(&parsed) {
            return (text, parsed);
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub const ATTEMPTS: &str = "switchyard_delivery_attempts_total";
pub const HOP: (&str, &str) = ("hop", "control_plane_webhook");

pub fn attempts(scrape: &Scrape, outcome: &str) -> f64 {
    value(scrape, ATTEMPTS, &[("outcome", outcome), HOP])
}

pub fn idempotency(scrape: &Scrape, outcome: &str) -> f64 {
    value(
        scrape,
        "switchyard_idempotency_requests_total",
        &[("outcome", outcome)],
    )
}

pub fn finished(scrape: &Scrape, outcome: &str) -> f64 {
    value(
        scrape,
        "switchyard_deliveries_finished_total",
        &[("outcome", outcome)],
    )
}

pub fn http(scrape: &Scrape, route: &str, method: &str, status: &str) -> f64 {
    value(
        scrape,
        "switchyard_http_requests_total",
        &[("route", route), ("method", method), ("status", status)],
    )
}

pub fn token_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("metrics-token");
    std::fs::write(&path, format!("{SCRAPE_TOKEN}\n")).unwrap();
    path
}
