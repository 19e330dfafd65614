//! `GET /metrics` as a Prometheus scraper sees it: a control plane in-process (and the real
//! binary for the flags), a loopback receiver that answers 200 on `/ok` and 500 on `/fail`,
//! a one-attempt retry schedule so failures die at once, and the exposition text read with
//! a real parser (`prometheus-parse`).

#[path = "../common/postgres.rs"]
mod postgres;

use std::net::{Ipv4Addr, SocketAddr};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use prometheus_parse::{Scrape, Value as Sample};
use serde_json::{Value, json};
use switchyard_control_plane::delivery::DeliveryConfig;
use switchyard_control_plane::delivery::schedule::parse_schedule;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::telemetry::{MetricsConfig, MetricsToken};
use switchyard_control_plane::{Server, ServerConfig};
use tokio::io::{AsyncBufReadExt, BufReader};

const ALPHA: &str = "tenant-alpha";
const ALPHA_TOKEN: &str = "alpha-token-123";
const BETA: &str = "tenant-beta";
const BETA_TOKEN: &str = "beta-token-456";
const SCRAPE_TOKEN: &str = "scrape-token-789";

/// A webhook receiver: `/ok` answers 200, `/fail` 500; counts what it got.
struct Receiver {
    base: String,
    hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start() -> Self {
        let hits = Arc::new(AtomicUsize::new(0));
        let (ok_hits, fail_hits) = (hits.clone(), hits.clone());
        let app = Router::new()
            .route(
                "/ok",
                post(move || async move {
                    ok_hits.fetch_add(1, Ordering::SeqCst);
                    StatusCode::OK
                }),
            )
            .route(
                "/fail",
                post(move || async move {
                    fail_hits.fetch_add(1, Ordering::SeqCst);
                    StatusCode::INTERNAL_SERVER_ERROR
                }),
            );
        let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { base, hits, task }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn config(dir: &std::path::Path, metrics: MetricsConfig) -> ServerConfig {
    let mut tenants = Tenants::default();
    tenants.add(ALPHA, ALPHA_TOKEN);
    tenants.add(BETA, BETA_TOKEN);
    let mut config = ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        format!("sqlite://{}", dir.join("cp.db").display()),
        tenants,
    );
    // One attempt: a failure goes to the DLQ at once.
    config.retry_schedule = vec!["0s".into()];
    config.delivery = DeliveryConfig {
        schedule: parse_schedule("0s").unwrap(),
        poll_max: Duration::from_millis(50),
        ..DeliveryConfig::default()
    };
    config.metrics = metrics;
    config
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// One API call as tenant alpha.
async fn call(
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

async fn create(server: &Server, plural: &str, name: &str, spec: Value) {
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
async fn routes(server: &Server, receiver: &Receiver) {
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

async fn submit(server: &Server, endpoint: &str, event_key: Option<&str>) -> (u16, Value) {
    let mut body =
        json!({"endpoint": endpoint, "event_type": "order.created", "payload": {"n": 1}});
    if let Some(key) = event_key {
        body["event_key"] = json!(key);
    }
    call(server, "POST", "/v1/events", Some(body), None).await
}

/// A scrape: status, content type and body.
async fn get_metrics(url: &str, token: Option<&str>) -> (u16, String, String) {
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
async fn scrape(url: &str, token: Option<&str>) -> (String, Scrape) {
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
fn value(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
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
fn raw_value(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
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
async fn scrape_until(
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

const ATTEMPTS: &str = "switchyard_delivery_attempts_total";
const HOP: (&str, &str) = ("hop", "control_plane_webhook");

fn attempts(scrape: &Scrape, outcome: &str) -> f64 {
    value(scrape, ATTEMPTS, &[("outcome", outcome), HOP])
}

fn idempotency(scrape: &Scrape, outcome: &str) -> f64 {
    value(
        scrape,
        "switchyard_idempotency_requests_total",
        &[("outcome", outcome)],
    )
}

fn finished(scrape: &Scrape, outcome: &str) -> f64 {
    value(
        scrape,
        "switchyard_deliveries_finished_total",
        &[("outcome", outcome)],
    )
}

fn http(scrape: &Scrape, route: &str, method: &str, status: &str) -> f64 {
    value(
        scrape,
        "switchyard_http_requests_total",
        &[("route", route), ("method", method), ("status", status)],
    )
}

#[tokio::test]
async fn a_scrape_counts_requests_keys_events_attempts_and_reads_the_gauges() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(config(dir.path(), MetricsConfig::default()))
        .await
        .unwrap();
    let receiver = Receiver::start().await;
    let url = server.metrics_url();
    assert_eq!(
        url,
        format!("{}/metrics", server.url()),
        "on the API's listener by default"
    );

    let (_, before) = scrape(&url, None).await;
    assert_eq!(value(&before, "switchyard_events_accepted_total", &[]), 0.0);
    assert_eq!(attempts(&before, "failed"), 0.0);

    routes(&server, &receiver).await; // six keyed creates, executed
    // The same keyed request again: replayed; the key with another body: reused (422).
    let body = json!({"name": "ep-good", "spec": {}});
    let (status, _) = call(
        &server,
        "POST",
        "/v1/endpoints",
        Some(body),
        Some("create-endpoints-ep-good"),
    )
    .await;
    assert_eq!(status, 201);
    let other = json!({"name": "ep-other", "spec": {}});
    let (status, _) = call(
        &server,
        "POST",
        "/v1/endpoints",
        Some(other),
        Some("create-endpoints-ep-good"),
    )
    .await;
    assert_eq!(status, 422);

    // Five events (the copy of a keyed one is a duplicate, not accepted again): three to
    // the receiver's 200, two to its 500.
    let (status, first) = submit(&server, "ep-good", Some("order-1")).await;
    assert_eq!(status, 202, "{first}");
    let (status, duplicate) = submit(&server, "ep-good", Some("order-1")).await;
    assert_eq!((status, &duplicate["duplicate"]), (200, &json!(true)));
    for endpoint in ["ep-good", "ep-good", "ep-bad", "ep-bad"] {
        assert_eq!(submit(&server, endpoint, None).await.0, 202);
    }
    let event_id = first["id"].as_str().unwrap().to_owned();
    assert_eq!(
        call(
            &server,
            "GET",
            &format!("/v1/events/{event_id}"),
            None,
            None
        )
        .await
        .0,
        200
    );
    assert_eq!(
        call(&server, "GET", "/no/such/route-xyz123", None, None)
            .await
            .0,
        404
    );
    assert_eq!(
        call(&server, "DELETE", "/v1/events", None, None).await.0,
        405
    );

    let (text, s) = scrape_until(&url, None, "five recorded attempts", |s| {
        attempts(s, "succeeded") + attempts(s, "failed") >= 5.0
    })
    .await;
    assert_eq!(receiver.hits.load(Ordering::SeqCst), 5);
    assert_eq!(value(&s, "switchyard_events_accepted_total", &[]), 5.0);
    assert_eq!(attempts(&s, "succeeded"), 3.0);
    assert_eq!(attempts(&s, "failed"), 2.0);
    for hop in ["control_plane_edge", "edge_webhook"] {
        assert_eq!(
            value(&s, ATTEMPTS, &[("outcome", "failed"), ("hop", hop)]),
            0.0
        );
    }
    assert_eq!(finished(&s, "succeeded"), 3.0);
    assert_eq!(finished(&s, "dead"), 2.0);
    assert_eq!(finished(&s, "cancelled"), 0.0);
    let duration = "switchyard_delivery_attempt_duration_seconds";
    assert_eq!(value(&s, &format!("{duration}_count"), &[HOP]), 5.0);
    let buckets = s
        .samples
        .iter()
        .find(|x| x.metric == duration && x.labels.get("hop") == Some(HOP.1))
        .map(|x| x.value.clone());
    match buckets {
        Some(Sample::Histogram(buckets)) => {
            let inf = buckets.iter().find(|b| b.less_than.is_infinite());
            assert_eq!(
                inf.map(|b| b.count),
                Some(5.0),
                "+Inf holds every attempt: {buckets:?}"
            );
        }
        other => panic!("no attempt histogram: {other:?}"),
    }
    assert_eq!(
        value(&s, "switchyard_worker_lease_takeovers_total", &[]),
        0.0
    );
    assert_eq!(idempotency(&s, "executed"), 6.0);
    assert_eq!(idempotency(&s, "replayed"), 1.0);
    assert_eq!(idempotency(&s, "reused"), 1.0);
    assert_eq!(idempotency(&s, "in_progress"), 0.0);
    assert_eq!(value(&s, "switchyard_dlq_depth", &[]), 2.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 0.0);
    assert_eq!(value(&s, "switchyard_deliveries_in_flight", &[]), 0.0);
    assert_eq!(value(&s, "switchyard_replays_running", &[]), 0.0);

    // Requests by route template, never the raw path.
    assert_eq!(http(&s, "/v1/events", "POST", "202"), 5.0);
    assert_eq!(http(&s, "/v1/events", "POST", "200"), 1.0);
    assert_eq!(http(&s, "/v1/endpoints", "POST", "201"), 3.0);
    assert_eq!(http(&s, "/v1/endpoints", "POST", "422"), 1.0);
    let by_id = [
        ("route", "/v1/events/{id}"),
        ("method", "GET"),
        ("status", "200"),
    ];
    assert_eq!(
        raw_value(&text, "switchyard_http_requests_total", &by_id),
        1.0
    );
    assert_eq!(http(&s, "unmatched", "GET", "404"), 1.0);
    assert_eq!(http(&s, "/v1/events", "DELETE", "405"), 1.0);
    assert_eq!(
        value(
            &s,
            "switchyard_http_request_duration_seconds_count",
            &[("route", "/v1/events"), ("method", "POST")]
        ),
        6.0
    );
    for raw in ["xyz123", event_id.as_str(), "ep-good", "order-1"] {
        assert!(!text.contains(raw), "{raw:?} is in /metrics:\n{text}");
    }
    for tenant in [ALPHA, BETA] {
        assert!(
            !text.contains(tenant),
            "tenant {tenant} named without the flag:\n{text}"
        );
    }

    // A replay: the first re-delivery goes at once (and dies again), the second waits
    // 1000 s; cancelling withdraws it.
    let body = json!({"selection": {"filter": {}}, "rate_per_s": 0.001});
    let (status, started) = call(&server, "PUT", "/v1/replays/night-1", Some(body), None).await;
    assert_eq!(status, 201, "{started}");
    let (_, s) = scrape_until(&url, None, "the first re-delivery", |s| {
        attempts(s, "failed") >= 3.0
    })
    .await;
    assert_eq!(value(&s, "switchyard_replays_running", &[]), 1.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 1.0);
    assert_eq!(
        value(&s, "switchyard_dlq_depth", &[]),
        1.0,
        "originals left the DLQ"
    );
    assert_eq!(finished(&s, "dead"), 3.0);
    let (status, cancelled) = call(
        &server,
        "POST",
        "/v1/replays/night-1/cancel",
        None,
        Some("cancel-1"),
    )
    .await;
    assert_eq!(
        (status, &cancelled["counts"]["cancelled"]),
        (200, &json!(1))
    );
    let (status, _) = call(
        &server,
        "POST",
        "/v1/replays/night-1/cancel",
        None,
        Some("cancel-1"),
    )
    .await;
    assert_eq!(status, 200);
    let (_, s) = scrape(&url, None).await;
    assert_eq!(
        finished(&s, "cancelled"),
        1.0,
        "the replayed cancel withdrew nothing more"
    );
    assert_eq!(value(&s, "switchyard_replays_running", &[]), 0.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 0.0);
    assert_eq!(
        value(&s, "switchyard_dlq_depth", &[]),
        2.0,
        "the withdrawn one's original is back"
    );
    assert_eq!(idempotency(&s, "executed"), 7.0);
    assert_eq!(idempotency(&s, "replayed"), 2.0);
    assert!(
        http(&s, "/metrics", "GET", "200") >= 3.0,
        "scrapes count under their route"
    );
    server.stop().await.unwrap();
}

fn token_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("metrics-token");
    std::fs::write(&path, format!("{SCRAPE_TOKEN}\n")).unwrap();
    path
}

#[tokio::test]
async fn tenant_labels_need_the_token_and_name_every_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let unauthenticated = MetricsConfig {
        tenant_labels: true,
        ..MetricsConfig::default()
    };
    let refused = Server::start(config(dir.path(), unauthenticated)).await;
    assert!(
        refused.is_err(),
        "tenant labels without a token must not start"
    );

    let metrics = MetricsConfig {
        tenant_labels: true,
        token: Some(MetricsToken::from_file(&token_file(dir.path())).unwrap()),
        listen: None,
    };
    let server = Server::start(config(dir.path(), metrics)).await.unwrap();
    let receiver = Receiver::start().await;
    let url = server.metrics_url();
    for token in [None, Some("wrong-token-000"), Some(ALPHA_TOKEN)] {
        let (status, content_type, body) = get_metrics(&url, token).await;
        assert_eq!(status, 401, "token {token:?}: {body}");
        assert_eq!(content_type, "application/problem+json");
        let problem: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(problem["code"], "unauthorized");
        assert!(!body.contains(ALPHA), "{body}");
    }

    routes(&server, &receiver).await;
    assert_eq!(submit(&server, "ep-bad", None).await.0, 202);
    assert_eq!(submit(&server, "ep-good", None).await.0, 202);
    let (text, s) = scrape_until(&url, Some(SCRAPE_TOKEN), "two attempts", |s| {
        attempts(s, "succeeded") + attempts(s, "failed") >= 2.0
    })
    .await;
    let alpha = ("tenant", ALPHA);
    let beta = ("tenant", BETA);
    assert_eq!(value(&s, "switchyard_events_accepted_total", &[alpha]), 2.0);
    assert_eq!(value(&s, "switchyard_events_accepted_total", &[beta]), 0.0);
    assert_eq!(
        value(
            &s,
            "switchyard_deliveries_finished_total",
            &[("outcome", "dead"), alpha]
        ),
        1.0
    );
    assert_eq!(
        value(
            &s,
            "switchyard_deliveries_finished_total",
            &[("outcome", "succeeded"), alpha]
        ),
        1.0
    );
    assert_eq!(value(&s, "switchyard_dlq_depth", &[alpha]), 1.0);
    assert_eq!(
        value(&s, "switchyard_dlq_depth", &[beta]),
        0.0,
        "a quiet tenant reads 0"
    );
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[beta]), 0.0);
    assert!(text.contains(&format!("tenant=\"{BETA}\"")));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_metrics_listener_of_its_own_takes_metrics_off_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = MetricsConfig {
        listen: Some(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))),
        ..MetricsConfig::default()
    };
    let server = Server::start(config(dir.path(), metrics)).await.unwrap();
    let metrics_addr = server.metrics_addr.expect("a metrics listener");
    assert_ne!(metrics_addr, server.addr);
    let (status, _, _) = get_metrics(&format!("{}/metrics", server.url()), None).await;
    assert_eq!(status, 404, "not on the API's listener");
    let (status, _, _) = get_metrics(
        &format!("http://{metrics_addr}/v1/endpoints"),
        Some(ALPHA_TOKEN),
    )
    .await;
    assert_eq!(status, 404, "the API is not on the metrics listener");
    assert_eq!(
        call(&server, "GET", "/v1/endpoints", None, None).await.0,
        200
    );
    let (_, s) = scrape(&server.metrics_url(), None).await;
    assert_eq!(http(&s, "/v1/endpoints", "GET", "200"), 1.0);
    assert_eq!(
        http(&s, "unmatched", "GET", "404"),
        2.0,
        "both listeners' 404s"
    );
    let (_, doc) = call(&server, "GET", "/openapi.json", None, None).await;
    let documented = &doc["paths"]["/metrics"]["get"]["responses"];
    assert!(
        documented["200"]["content"]["text/plain; version=0.0.4"].is_object(),
        "{documented}"
    );
    server.stop().await.unwrap();
}

/// The real binary: `--metrics-tenant-labels` alone is refused by the flag parser; with
/// `--metrics-listen` and `--metrics-token-file` the metrics are on their own address,
/// behind the token, and the token is in no log line (even at debug).
#[tokio::test]
async fn the_binary_serves_metrics_on_its_own_address_behind_the_token() {
    let bin = env!("CARGO_BIN_EXE_switchyard-control-plane");
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("cp.db").display());
    let tenant = format!("{ALPHA}:{ALPHA_TOKEN}");
    let refused = tokio::process::Command::new(bin)
        .args([
            "serve",
            "--db",
            &db,
            "--tenant",
            &tenant,
            "--metrics-tenant-labels",
        ])
        .output()
        .await
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--metrics-token-file"), "{stderr}");

    let token_path = token_file(dir.path());
    let mut child = tokio::process::Command::new(bin)
        .args([
            "serve",
            "--db",
            &db,
            "--tenant",
            &tenant,
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-tenant-labels"])
        .arg("--metrics-token-file")
        .arg(&token_path)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut api, mut metrics) = (None, None);
    while api.is_none() || metrics.is_none() {
        let line = tokio::time::timeout(Duration::from_secs(20), stdout.next_line())
            .await
            .expect("the server prints its addresses")
            .unwrap()
            .expect("the server is running");
        if let Some(url) = line.strip_prefix("switchyard control plane listening on ") {
            api = Some(url.to_owned());
        } else if let Some(url) = line.strip_prefix("metrics on ") {
            metrics = Some(url.to_owned());
        }
    }
    let (api, metrics) = (api.unwrap(), metrics.unwrap());
    assert!(!metrics.starts_with(&api), "{metrics} is apart from {api}");
    assert_eq!(
        get_metrics(&format!("{api}/metrics"), Some(SCRAPE_TOKEN))
            .await
            .0,
        404
    );
    assert_eq!(get_metrics(&metrics, None).await.0, 401);
    let (text, s) = scrape(&metrics, Some(SCRAPE_TOKEN)).await;
    assert_eq!(
        value(&s, "switchyard_dlq_depth", &[("tenant", ALPHA)]),
        0.0,
        "{text}"
    );
    child.start_kill().unwrap();
    let output = child.wait_with_output().await.unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        log.contains("/metrics"),
        "the debug log shows the scrapes:\n{log}"
    );
    assert!(
        !log.contains(SCRAPE_TOKEN),
        "the token is in the log:\n{log}"
    );
}

/// The gauges' SQL on PostgreSQL (the conformance suite's server, a database of its own):
/// totals without tenant labels, per tenant with them, and the reaper's tenant lookup is
/// the same query path as `delivery_tenant`.
#[tokio::test]
async fn the_gauges_read_the_same_on_postgres() {
    let db = postgres::TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("main-key");
    switchyard_control_plane::sealing::Sealer::ephemeral()
        .write_file(&key_file)
        .unwrap();
    let receiver = Receiver::start().await;
    let on_postgres = |metrics: MetricsConfig| {
        let mut config = config(dir.path(), metrics);
        config.db_url = db.url.clone();
        config.main_key_file = Some(key_file.clone());
        config
    };
    let server = Server::start(on_postgres(MetricsConfig::default()))
        .await
        .unwrap();
    routes(&server, &receiver).await;
    for endpoint in ["ep-good", "ep-bad", "ep-bad"] {
        assert_eq!(submit(&server, endpoint, None).await.0, 202);
    }
    let url = server.metrics_url();
    let (_, s) = scrape_until(&url, None, "three attempts", |s| {
        attempts(s, "succeeded") + attempts(s, "failed") >= 3.0
    })
    .await;
    assert_eq!(value(&s, "switchyard_dlq_depth", &[]), 2.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 0.0);
    assert_eq!(value(&s, "switchyard_deliveries_in_flight", &[]), 0.0);
    let body = json!({"selection": {"filter": {}}, "rate_per_s": 0.001});
    let (status, started) = call(&server, "PUT", "/v1/replays/pg-1", Some(body), None).await;
    assert_eq!(status, 201, "{started}");
    let (_, s) = scrape_until(&url, None, "the first re-delivery", |s| {
        attempts(s, "failed") >= 3.0
    })
    .await;
    assert_eq!(value(&s, "switchyard_replays_running", &[]), 1.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 1.0);
    assert_eq!(
        value(&s, "switchyard_metrics_gauge_failures_total", &[]),
        0.0
    );
    server.stop().await.unwrap();

    let labelled = MetricsConfig {
        tenant_labels: true,
        token: Some(MetricsToken::new(SCRAPE_TOKEN)),
        listen: None,
    };
    let server = Server::start(on_postgres(labelled)).await.unwrap();
    let (_, s) = scrape(&server.metrics_url(), Some(SCRAPE_TOKEN)).await;
    let alpha = ("tenant", ALPHA);
    assert_eq!(value(&s, "switchyard_dlq_depth", &[alpha]), 1.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[alpha]), 1.0);
    assert_eq!(value(&s, "switchyard_replays_running", &[alpha]), 1.0);
    assert_eq!(value(&s, "switchyard_dlq_depth", &[("tenant", BETA)]), 0.0);
    assert_eq!(
        value(&s, "switchyard_metrics_gauge_failures_total", &[]),
        0.0
    );
    server.stop().await.unwrap();
}
