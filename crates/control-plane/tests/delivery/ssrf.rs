//! SSRF-safe delivery: a server that forbids private targets refuses a target URL naming a
//! loopback, link-local or other forbidden address (400 `target_address_forbidden`), and an
//! attempt whose address turns out to be one (a stored IP literal, a name resolving there)
//! fails with `forbidden_address`, sends nothing and is not retried. Each test's control is
//! the same request on a server (or edge) that allows private targets.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde_json::{Value, json};
use switchyard_control_plane::edge::agent::{EdgeConfig, run_until};
use switchyard_control_plane::{Server, ServerConfig};

use crate::support::{Api, FAST, Receiver, TOKEN, config, status};

/// The name the test resolver maps to 127.0.0.1; nothing else resolves it.
pub(crate) const LOOPBACK_NAME: &str = "hooks.internal.test";

/// A resolver that knows a fixed set of names.
struct FixedResolver(HashMap<String, Vec<IpAddr>>);

impl Resolve for FixedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let found = self.0.get(name.as_str()).cloned();
        Box::pin(async move {
            let ips = found.ok_or("the test resolver does not know this name")?;
            let addrs = ips.into_iter().map(|ip| SocketAddr::new(ip, 0));
            Ok(Box::new(addrs) as Addrs)
        })
    }
}

/// The suite's server config, with the policy set and [`LOOPBACK_NAME`] resolving to
/// loopback.
pub(crate) fn with_policy(db: &Path, allow_private: bool) -> ServerConfig {
    let mut config = config(db, FAST);
    config.delivery.allow_private_targets = allow_private;
    config.delivery.resolver = Some(Arc::new(FixedResolver(HashMap::from([(
        LOOPBACK_NAME.to_owned(),
        vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
    )]))));
    config
}

async fn start(db: &Path, allow_private: bool) -> Server {
    Server::start(with_policy(db, allow_private)).await.unwrap()
}

/// The receiver's URL with its host replaced by `host` (same port and path).
pub(crate) fn via(receiver: &Receiver, host: &str) -> String {
    receiver.url.replacen("127.0.0.1", host, 1)
}

const FORBIDDEN_URLS: [&str; 4] = [
    "http://127.0.0.1:9/hook",
    "http://[::ffff:127.0.0.1]:9/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://localhost:9/hook",
];

pub(crate) fn assert_refused(status: u16, body: &Value, url: &str) {
    assert_eq!(status, 400, "{url}: {body}");
    assert_eq!(body["code"], "target_address_forbidden", "{url}: {body}");
    assert_eq!(body["field"], "spec.url", "{url}: {body}");
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("--allow-private-targets")),
        "{body}"
    );
}

#[tokio::test]
async fn create_update_and_apply_refuse_a_forbidden_address_naming_spec_url() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir.path().join("cp.db"), false).await;
    let api = Api::new(server.url());
    for (i, url) in FORBIDDEN_URLS.iter().enumerate() {
        let (status, body) = api
            .call(
                "POST",
                "/v1/targets",
                Some(json!({"name": format!("t{i}"), "spec": {"url": url}})),
                Some(&format!("create-{i}")),
            )
            .await;
        assert_refused(status, &body, url);
        let (status, body) = api
            .call(
                "PUT",
                &format!("/v1/targets/t{i}"),
                Some(json!({"spec": {"url": url}})),
                Some(&format!("apply-{i}")),
            )
            .await;
        assert_refused(status, &body, url);
    }
    // A refusal is not stored under its key: the corrected request with the same key runs.
    let (status, body) = api
        .call(
            "POST",
            "/v1/targets",
            Some(json!({"name": "t0", "spec": {"url": "https://hooks.example.com/t0"}})),
            Some("create-0"),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    // An update may not point a target there either; the target keeps its URL.
    api.create(
        "targets",
        "ok",
        json!({"url": "https://hooks.example.com/x"}),
    )
    .await;
    let (status, body) = api
        .call(
            "PATCH",
            "/v1/targets/ok",
            Some(json!({"spec": {"url": "http://[::ffff:127.0.0.1]:9/hook"}})),
            Some("patch-1"),
        )
        .await;
    assert_refused(status, &body, "patch");
    let target = api.get("/v1/targets/ok").await;
    assert_eq!(target["spec"]["url"], "https://hooks.example.com/x");
    assert_eq!(
        api.get("/v1/targets").await["items"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "t0 and ok; none of the refused ones"
    );
    // A name is judged when an attempt connects, not at create.
    api.create(
        "targets",
        "named",
        json!({"url": format!("http://{LOOPBACK_NAME}/hook")}),
    )
    .await;
    server.stop().await.unwrap();

    // The control: a server that allows private targets stores every one of them.
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir.path().join("cp.db"), true).await;
    let api = Api::new(server.url());
    for (i, url) in FORBIDDEN_URLS.iter().enumerate() {
        api.create("targets", &format!("t{i}"), json!({"url": url}))
            .await;
    }
    server.stop().await.unwrap();
}

/// Waits for `event`'s deliveries to settle in `state` and returns them.
pub(crate) async fn settled(api: &Api, event: &str, n: usize, state: &str) -> Vec<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let deliveries = api.get(&format!("/v1/events/{event}")).await["deliveries"]
            .as_array()
            .unwrap()
            .clone();
        if deliveries.len() == n && deliveries.iter().all(|d| d["state"] == state) {
            return deliveries;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "deliveries never all {state}: {deliveries:#?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Dead after exactly one attempt, classed `forbidden_address`, still so after the retry
/// schedule (50 ms, 100 ms, …) would have run.
pub(crate) async fn assert_refused_once(api: &Api, event: &str, n: usize) -> Vec<Value> {
    settled(api, event, n, "dead").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let deliveries = settled(api, event, n, "dead").await;
    for d in &deliveries {
        assert_eq!(d["error_class"], "forbidden_address", "{d:#}");
        assert_eq!(d["attempts_made"], 1, "{d:#}");
        let attempts = d["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 1, "{d:#}");
        assert_eq!(attempts[0]["error_class"], "forbidden_address", "{d:#}");
        assert!(
            attempts[0]["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("refused to connect")),
            "{d:#}"
        );
    }
    deliveries
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_at_send_once_and_nothing_reaches_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir.path().join("cp.db"), false).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    api.route(
        &via(&receiver, LOOPBACK_NAME),
        json!({"mode": "async_inline"}),
    )
    .await;
    let event = api.event_id(1).await;
    let deliveries = assert_refused_once(&api, &event, 1).await;
    let error = deliveries[0]["attempts"][0]["error"].as_str().unwrap();
    // The name, never the address it resolves to (a tenant must not map the network's
    // internal names); the server's log has the address.
    assert!(error.contains(LOOPBACK_NAME), "{error}");
    assert!(
        !error.contains("127.0.0.1") && !error.contains("loopback"),
        "{error}"
    );
    // It is in the DLQ under its class.
    let dlq = api.get("/v1/dlq?error_class=forbidden_address").await;
    assert_eq!(dlq["items"].as_array().unwrap().len(), 1, "{dlq:#}");
    // A target test is refused the same way.
    let (status, test) = api
        .call(
            "POST",
            "/v1/targets/tg/test",
            Some(json!({})),
            Some("test-1"),
        )
        .await;
    assert_eq!(status, 200, "{test}");
    assert_eq!(test["ok"], false, "{test}");
    assert_eq!(test["error_class"], "forbidden_address", "{test}");
    assert!(!test.to_string().contains("127.0.0.1"), "{test}");
    assert_eq!(receiver.count(), 0, "nothing reached the loopback receiver");
    server.stop().await.unwrap();

    // The control: the same name, with private targets allowed, is delivered.
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir.path().join("cp.db"), true).await;
    let api = Api::new(server.url());
    api.route(
        &via(&receiver, LOOPBACK_NAME),
        json!({"mode": "async_inline"}),
    )
    .await;
    let event = api.event_id(1).await;
    settled(&api, &event, 1, "succeeded").await;
    let (_, test) = api
        .call(
            "POST",
            "/v1/targets/tg/test",
            Some(json!({})),
            Some("test-1"),
        )
        .await;
    assert_eq!(test["ok"], true, "{test}");
    assert_eq!(receiver.count(), 2);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn stored_ip_literal_targets_are_refused_at_send_once_private_targets_are_forbidden() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let receiver = Receiver::start(|_| status(200));
    // Stored while the server allowed private targets: 127.0.0.1 and its IPv4-mapped form.
    let server = start(&db, true).await;
    let api = Api::new(server.url());
    api.route(&receiver.url, json!({"mode": "async_inline"}))
        .await;
    let mapped = via(&receiver, "[::ffff:127.0.0.1]");
    api.create(
        "targets",
        "mapped",
        json!({"url": mapped, "timeout_ms": 2000}),
    )
    .await;
    api.create(
        "flows",
        "fl-mapped",
        json!({"endpoint": "ep", "target": "mapped", "mode": "async_inline"}),
    )
    .await;
    // The control: allowed, both forms reach the loopback receiver.
    let event = api.event_id(1).await;
    settled(&api, &event, 2, "succeeded").await;
    assert_eq!(receiver.count(), 2);
    server.stop().await.unwrap();

    // The same database, served with private targets forbidden.
    let server = start(&db, false).await;
    let api = Api::new(server.url());
    let event = api.event_id(2).await;
    assert_refused_once(&api, &event, 2).await;
    assert_eq!(receiver.count(), 2, "nothing more reached the receiver");
    server.stop().await.unwrap();
}

/// Runs an in-process edge plane named `edge-1` until the returned sender is dropped.
fn edge(base: &str, allow_private: bool) -> tokio::sync::oneshot::Sender<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = EdgeConfig {
        control_plane: base.to_owned(),
        token: TOKEN.to_owned(),
        name: "edge-1".into(),
        concurrency: 4,
        idle_poll: Duration::from_millis(20),
        report_schedule: switchyard_control_plane::delivery::schedule::parse_schedule(FAST)
            .unwrap(),
        allow_private_targets: allow_private,
        forbid_cidrs: Vec::new(),
    };
    tokio::spawn(async move {
        let stop = async {
            let _ = stopped.await;
        };
        run_until(config, stop, Duration::from_secs(1))
            .await
            .unwrap();
    });
    stop
}

#[tokio::test]
async fn an_edge_plane_refuses_a_forbidden_address_unless_it_allows_private_targets() {
    let dir = tempfile::tempdir().unwrap();
    // The control plane allows the target; the edge, which sends it, does not.
    let server = start(&dir.path().join("cp.db"), true).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    api.route(
        &receiver.url,
        json!({"mode": "async_relay", "edge": "edge-1"}),
    )
    .await;
    let forbidding = edge(&server.url(), false);
    let event = api.event_id(1).await;
    let deliveries = assert_refused_once(&api, &event, 1).await;
    assert_eq!(deliveries[0]["attempts"][0]["performed_by"], "edge:edge-1");
    assert_eq!(deliveries[0]["attempts"][0]["hop"], "edge_webhook");
    assert_eq!(receiver.count(), 0);
    drop(forbidding);

    // The control: an edge that allows private targets delivers it.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _allowing = edge(&server.url(), true);
    let event = api.event_id(2).await;
    settled(&api, &event, 1, "succeeded").await;
    assert_eq!(receiver.count(), 1);
    server.stop().await.unwrap();
}

/// `serve` without `--allow-private-targets`: the binary's default.
async fn spawn_default_serve(db: &Path) -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchyard-control-plane"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .arg("--tenant")
        .arg(format!("acme:{TOKEN}"))
        .arg("--db")
        .arg(format!("sqlite://{}", db.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
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
    (child, url)
}

#[tokio::test]
async fn the_serve_binary_forbids_private_targets_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, url) = spawn_default_serve(&dir.path().join("default.db")).await;
    let (status, body) = Api::new(url)
        .call(
            "POST",
            "/v1/targets",
            Some(json!({"name": "tg", "spec": {"url": "http://127.0.0.1:9/hook"}})),
            Some("create-tg"),
        )
        .await;
    assert_refused(status, &body, "default serve");

    // The control: with --allow-private-targets (what the suite's helper passes).
    let allowing = crate::support::spawn_control_plane(&dir.path().join("allow.db"), &[]).await;
    Api::new(allowing.url.clone().unwrap())
        .create("targets", "tg", json!({"url": "http://127.0.0.1:9/hook"}))
        .await;
}
