//! `GET /v1/metrics/deliveries` against a control plane delivering to scripted receivers:
//! one target answers 200 after 300 ms, the other always 500, so every figure is known in
//! advance — exact counts, rates, the failure run, latency inside its histogram bucket, DLQ
//! depth — and another tenant sees none of it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

const EVENTS: u64 = 5;
/// Attempts per delivery in the `FAST` schedule.
const ATTEMPTS: u64 = 5;

async fn health(api: &Api, query: &str) -> Value {
    api.get(&format!("/v1/metrics/deliveries?{query}")).await
}

/// Polls until `check` holds for the 15-minute report grouped by target.
async fn wait_report(api: &Api, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let report = health(api, "window=15m&group_by=target").await;
        if check(&report) {
            return report;
        }
        assert!(
            Instant::now() < deadline,
            "report never settled: {report:#}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn group<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no group {name}: {report:#}"))
}

#[tokio::test]
async fn delivery_health_counts_what_the_receivers_answered() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let ok = Receiver::start(|_| Reply {
        status: 200,
        delay: Duration::from_millis(300),
    });
    let failing = Receiver::start(|_| status(500));
    api.route(&ok.url, json!({})).await;
    api.create(
        "targets",
        "bad",
        json!({"url": failing.url, "timeout_ms": 2000}),
    )
    .await;
    api.create(
        "flows",
        "fl-bad",
        json!({"endpoint": "ep", "target": "bad"}),
    )
    .await;
    for n in 0..EVENTS {
        api.event_id(n).await;
    }
    let report = wait_report(&api, |r| {
        r["totals"]["dead"] == EVENTS
            && r["totals"]["deliveries_pending"] == 0
            && r["totals"]["deliveries_in_flight"] == 0
            && r["totals"]["attempts"] == EVENTS + EVENTS * ATTEMPTS
    })
    .await;

    let totals = &report["totals"];
    assert_eq!(totals["events_accepted"], EVENTS);
    assert_eq!(totals["successes"], EVENTS);
    assert_eq!(totals["failures"], EVENTS * ATTEMPTS);
    assert_eq!(
        totals["failures_by_class"],
        json!({"http_5xx": EVENTS * ATTEMPTS})
    );
    let charted: u64 = totals["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["attempts"].as_u64().unwrap())
        .sum();
    assert_eq!(
        charted,
        EVENTS + EVENTS * ATTEMPTS,
        "the buckets add up to the window"
    );
    assert_eq!(
        report["buckets"],
        Value::Null,
        "buckets live in the figures"
    );
    assert_eq!(totals["buckets"].as_array().unwrap().len(), 15);
    assert_eq!(report["bucket_seconds"], 60);

    let good = group(&report, "tg");
    assert_eq!(
        (good["attempts"].as_u64(), good["success_rate"].as_f64()),
        (Some(EVENTS), Some(1.0))
    );
    assert_eq!(good["consecutive_failures"], 0);
    assert!(good["last_success_at"].is_string());
    assert_eq!(good["failing_since"], Value::Null);
    // 300 ms answers: the histogram's 250-500 ms bucket holds them all.
    for q in ["p50", "p95", "p99"] {
        let ms = good["latency_ms"][q].as_f64().unwrap();
        assert!((250.0..=500.0).contains(&ms), "{q} = {ms}");
    }

    let bad = group(&report, "bad");
    assert_eq!(bad["attempts"], EVENTS * ATTEMPTS);
    assert_eq!(bad["success_rate"], 0.0);
    assert_eq!(bad["consecutive_failures"], EVENTS * ATTEMPTS);
    assert_eq!(bad["last_error_class"], "http_5xx");
    assert!(
        bad["last_error"].as_str().unwrap().contains("500"),
        "{bad:#}"
    );
    assert!(bad["failing_since"].is_string());
    assert_eq!(bad["last_success_at"], Value::Null);

    // The same attempts grouped by flow and by endpoint.
    let flows = health(&api, "window=1h&group_by=flow").await;
    assert_eq!(group(&flows, "fl")["attempts"], EVENTS);
    assert_eq!(group(&flows, "fl-bad")["attempts"], EVENTS * ATTEMPTS);
    assert_eq!(flows["totals"]["buckets"].as_array().unwrap().len(), 30);
    let endpoints = health(&api, "window=7d&group_by=endpoint").await;
    assert_eq!(
        group(&endpoints, "ep")["attempts"],
        EVENTS + EVENTS * ATTEMPTS
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn delivery_health_is_per_tenant_and_names_a_bad_query() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let ok = Receiver::start(|_| status(200));
    api.route(&ok.url, json!({})).await;
    let event = api.event_id(0).await;
    api.wait_state(&event, "succeeded", Duration::from_secs(10))
        .await;

    let other = reqwest::Client::builder().no_proxy().build().unwrap();
    let theirs: Value = other
        .get(format!("{}/v1/metrics/deliveries?window=24h", server.url()))
        .bearer_auth(OTHER_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["totals"]["attempts"], 0, "{theirs:#}");
    assert_eq!(theirs["totals"]["events_accepted"], 0);
    assert_eq!(
        theirs["totals"]["success_rate"],
        Value::Null,
        "no attempts: no rate, not 0"
    );
    assert_eq!(theirs["groups"], json!([]));
    let ours = health(&api, "").await;
    assert_eq!(
        (ours["window"].as_str(), ours["group_by"].as_str()),
        (Some("1h"), Some("target"))
    );
    assert_eq!(ours["totals"]["attempts"], 1);

    for (query, field) in [
        ("window=2h", "window"),
        ("group_by=hour", "group_by"),
        ("windw=1h", "query"),
    ] {
        let (status, problem) = api
            .call(
                "GET",
                &format!("/v1/metrics/deliveries?{query}"),
                None,
                None,
            )
            .await;
        assert_eq!(status, 400, "{query}: {problem}");
        assert_eq!(problem["code"], "validation_failed", "{problem}");
        assert_eq!(problem["field"], field, "{problem}");
    }
    let unauthenticated = other
        .get(format!("{}/v1/metrics/deliveries", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);
    server.stop().await.unwrap();
}
