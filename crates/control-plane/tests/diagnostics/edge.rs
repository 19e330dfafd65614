//! `edge_unreachable`: the edge plane is killed, relay deliveries wait for it; the finding
//! names the edge and offers no API fix (a person restarts the edge); once it leases again
//! every waiting delivery goes out once.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;
use switchyard_control_plane::Server;
use switchyard_protocol::{FindingClass, Severity};

use crate::fix::{finding, wait_finding};
use crate::support::*;

#[tokio::test]
async fn relay_deliveries_stranded_by_a_killed_edge_are_found_and_go_out_once_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&dir.path().join("cp.db"), FAST);
    // Hand-offs the edge does not take are counted failed only after a minute: the
    // deliveries wait for the edge instead of dying while it is down.
    config.delivery.edge_pickup_timeout = Duration::from_secs(60);
    config.diagnostics.edge_silence = Duration::from_secs(1);
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    api.route(
        &receiver.url,
        json!({"mode": "async_relay", "edge": "edge-1"}),
    )
    .await;
    let mut edge = spawn_edge(&server.url(), "edge-1");
    let first = api.event_id(0).await;
    api.wait_state(&first, "succeeded", Duration::from_secs(10))
        .await;
    let id = "edge_unreachable:edge:edge-1";
    assert!(
        finding(&api, id).await.is_none(),
        "a leasing edge is not a finding"
    );

    edge.kill9().await;
    let mut stranded = Vec::new();
    for n in 1..=3 {
        stranded.push(api.event_id(n).await);
    }
    let f = wait_finding(&api, id, Duration::from_secs(10), |f| {
        f.evidence.count == Some(3)
    })
    .await;
    assert_eq!(f.class, FindingClass::EdgeUnreachable);
    assert_eq!(f.severity, Severity::Critical);
    assert!(
        f.actions.is_empty(),
        "no API call fixes a dead edge process"
    );
    assert!(
        f.detail.contains("has not called lease since"),
        "{}",
        f.detail
    );
    let mut waiting = Vec::new();
    for e in &stranded {
        waiting.push(api.delivery_of(e).await["id"].as_str().unwrap().to_owned());
    }
    let mut sampled = f.evidence.delivery_ids.clone();
    sampled.sort();
    waiting.sort();
    assert_eq!(
        sampled, waiting,
        "the evidence names the waiting deliveries"
    );

    // The fix is a person's: the edge process is started again.
    let _edge = spawn_edge(&server.url(), "edge-1");
    for e in &stranded {
        api.wait_state(e, "succeeded", Duration::from_secs(15))
            .await;
    }
    assert!(
        finding(&api, id).await.is_none(),
        "gone once the edge leases"
    );
    let mut copies: HashMap<String, usize> = HashMap::new();
    for r in receiver.received() {
        *copies.entry(r.header("webhook-id").to_owned()).or_default() += 1;
    }
    assert_eq!(copies.len(), 4, "every event arrived: {copies:?}");
    assert!(copies.values().all(|n| *n == 1), "none twice: {copies:?}");
    server.stop().await.unwrap();
}
