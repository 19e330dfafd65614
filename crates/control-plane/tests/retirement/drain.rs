//! The drain: the endpoint refuses events while its retirement runs, every pending delivery
//! reaches its outcome (on its normal retry schedule) before the delete, and the DLQ is kept
//! or purged as asked.

use std::collections::HashSet;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::support::{Api, Receiver, status};

const WAIT: Duration = Duration::from_secs(20);

fn at(v: &Value) -> DateTime<Utc> {
    v.as_str().unwrap().parse().unwrap()
}

fn entered(retirement: &Value, state: &str) -> DateTime<Utc> {
    at(&retirement["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["state"] == state)
        .unwrap_or_else(|| panic!("never {state}: {retirement:#}"))["at"])
}

#[tokio::test]
async fn pending_deliveries_reach_their_outcome_before_the_delete() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, api) = server(dir.path()).await;
    // Fails the first six requests, then accepts: every event needs retries.
    let receiver = Receiver::start(|i| status(if i < 6 { 503 } else { 200 }));
    api.route(&receiver.url, json!({})).await;
    let mut events = Vec::new();
    for n in 0..4 {
        let (code, e) = api.submit(event(n)).await;
        assert_eq!(code, 202, "{e}");
        events.push(e["id"].as_str().unwrap().to_owned());
    }
    let (code, r) = retire(
        &api,
        "r-ep",
        json!({"kind": "endpoint", "name": "ep", "cascade_flows": true, "grace_seconds": 1}),
    )
    .await;
    assert_eq!(code, 201, "{r}");
    assert_eq!(r["state"], "draining");
    assert_eq!(names(&r["cascaded_flows"]), ["fl"]);
    let pending = r["impact"]["pending_deliveries"].as_u64().unwrap();
    assert!(pending > 0, "the retries are still pending: {r:#}");
    let eta = at(&r["drain_eta"]);
    assert!(eta > at(&r["created_at"]), "the ETA is ahead: {r:#}");

    // While it drains, the endpoint refuses new events.
    let (code, refused) = api.submit(event(99)).await;
    assert_eq!(code, 409, "{refused}");
    assert_eq!(refused["code"], "endpoint_disabled");

    let done = wait_retirement(&api, "r-ep", "deleted", WAIT).await;
    assert_eq!(
        states(&done),
        ["draining", "disabled", "scheduled", "deleted"]
    );
    let disabled = entered(&done, "disabled");
    let deleted = entered(&done, "deleted");
    assert!(
        deleted >= entered(&done, "scheduled") + chrono::Duration::seconds(1),
        "the grace ran"
    );
    for id in &events {
        let e = api.get(&format!("/v1/events/{id}")).await;
        let d = &e["deliveries"][0];
        assert_eq!(d["state"], "succeeded", "{d:#}");
        assert!(
            at(&d["updated_at"]) <= disabled,
            "finished before the drain ended: {d:#}"
        );
        assert!(d["attempts"].as_array().unwrap().len() >= 2, "{d:#}");
    }
    let seen: HashSet<String> = receiver
        .received()
        .iter()
        .map(|r| r.header("webhook-id").to_owned())
        .collect();
    assert_eq!(
        seen,
        events.iter().cloned().collect(),
        "none lost, none invented"
    );
    assert_eq!(status_of(&api, "/v1/endpoints/ep").await, 404);
    assert_eq!(status_of(&api, "/v1/flows/fl").await, 404);
    assert_eq!(
        status_of(&api, "/v1/targets/tg").await,
        200,
        "only what was retired goes"
    );
}

async fn dead_deliveries(api: &Api, n: u64) {
    for _ in 0..200 {
        let stats = api.get("/v1/dlq/stats?group_by=target").await;
        if stats["total"].as_u64() == Some(n) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the deliveries never died");
}

#[tokio::test]
async fn the_dlq_is_kept_or_purged_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, api) = server(dir.path()).await;
    let receiver = Receiver::start(|_| status(500));
    api.create("endpoints", "ep", json!({})).await;
    for target in ["tg-keep", "tg-purge"] {
        api.create(
            "targets",
            target,
            json!({"url": receiver.url, "timeout_ms": 1000}),
        )
        .await;
        api.create(
            "flows",
            &format!("fl-{target}"),
            json!({"endpoint": "ep", "target": target}),
        )
        .await;
    }
    for n in 0..2 {
        assert_eq!(api.submit(event(n)).await.0, 202);
    }
    dead_deliveries(&api, 4).await;
    for (id, target, dlq) in [
        ("r-keep", "tg-keep", "keep"),
        ("r-purge", "tg-purge", "purge"),
    ] {
        let (code, r) = retire(
            &api,
            id,
            json!({"kind": "target", "name": target, "cascade_flows": true, "dlq": dlq}),
        )
        .await;
        assert_eq!(code, 201, "{r}");
        assert_eq!(r["impact"]["dlq_depth"], 2);
    }
    wait_retirement(&api, "r-keep", "deleted", WAIT).await;
    wait_retirement(&api, "r-purge", "deleted", WAIT).await;
    let kept = api.get("/v1/dlq?target=tg-keep").await;
    assert_eq!(
        kept["items"].as_array().unwrap().len(),
        2,
        "kept: still browsable"
    );
    let purged = api.get("/v1/dlq?target=tg-purge").await;
    assert!(purged["items"].as_array().unwrap().is_empty(), "{purged:#}");
    let stats = api.get("/v1/dlq/stats?group_by=target").await;
    assert_eq!(
        stats["total"], 2,
        "the counters follow the purge: {stats:#}"
    );
}
