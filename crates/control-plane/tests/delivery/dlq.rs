//! The DLQ API: filters, newest-first cursor pagination, stats.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn dlq_pages_newest_first_filters_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(500));
    api.route(&receiver.url, json!({})).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    api.create(
        "targets",
        "gone",
        json!({"url": format!("http://{closed}/x")}),
    )
    .await;
    api.create(
        "flows",
        "to-gone",
        json!({"endpoint": "ep", "target": "gone", "event_types": ["only.gone"]}),
    )
    .await;
    let mut events = Vec::new();
    for n in 0..7 {
        events.push(api.event_id(n).await);
    }
    let (_, gone) = api
        .submit(json!({"endpoint": "ep", "event_type": "only.gone", "payload": {}}))
        .await;
    for e in &events {
        api.wait_state(e, "dead", Duration::from_secs(20)).await;
    }
    let gone_event = gone["id"].as_str().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while api.get(&format!("/v1/events/{gone_event}")).await["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["state"] != "dead")
    {
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    // Pages of 3 over the 8 http_5xx deliveries of target tg (flow fl takes every type): 3 + 3 + 2.
    let mut seen = Vec::new();
    let mut url = "/v1/dlq?target=tg&limit=3".to_owned();
    let mut pages = 0;
    loop {
        let page = api.get(&url).await;
        pages += 1;
        for item in page["items"].as_array().unwrap() {
            assert_eq!(item["target"], "tg");
            assert_eq!(item["error_class"], "http_5xx");
            assert_eq!(item["last_status_code"], 500);
            seen.push((
                item["dead_at"].as_str().unwrap().to_owned(),
                item["delivery_id"].as_str().unwrap().to_owned(),
            ));
        }
        match page["next_cursor"].as_str() {
            Some(c) => url = format!("/v1/dlq?target=tg&limit=3&cursor={c}"),
            None => break,
        }
    }
    assert_eq!((pages, seen.len()), (3, 8));
    assert_eq!(
        seen.iter().map(|s| &s.1).collect::<HashSet<_>>().len(),
        8,
        "no duplicates across pages"
    );
    // By instant, not by text: a time on a whole second is written without ".000"
    // ("…:14Z"), which sorts after "…:14.126Z" as a string.
    let at = |s: &(String, String)| {
        let t = chrono::DateTime::parse_from_rfc3339(&s.0).unwrap();
        (t, s.1.clone())
    };
    let mut sorted = seen.clone();
    sorted.sort_by_key(|s| std::cmp::Reverse(at(s)));
    assert_eq!(seen, sorted, "newest first");

    let connect = api.get("/v1/dlq?error_class=connect").await;
    assert_eq!(connect["items"].as_array().unwrap().len(), 1);
    assert_eq!(connect["items"][0]["target"], "gone");
    assert_eq!(
        api.get("/v1/dlq?flow=to-gone").await["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        api.get("/v1/dlq?until=2000-01-01T00:00:00Z").await["items"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        api.get("/v1/dlq?since=2000-01-01T00:00:00Z").await["items"]
            .as_array()
            .unwrap()
            .len(),
        9
    );
    for bad in [
        "/v1/dlq?error_class=boom",
        "/v1/dlq?since=yesterday",
        "/v1/dlq?limit=0",
        "/v1/dlq?cursor=zzz",
        "/v1/dlq?bogus=1",
        "/v1/dlq/stats?group_by=day",
        "/v1/dlq/stats?group_by=error_class,hour",
        "/v1/dlq/stats?error_class=boom",
        "/v1/dlq/stats?since=yesterday",
        "/v1/dlq/stats?limit=5",
    ] {
        let (status, body) = api.call("GET", bad, None, None).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("validation_failed")),
            "{bad}: {body}"
        );
    }

    let by_target = api.get("/v1/dlq/stats?group_by=target").await;
    assert_eq!(by_target["total"], 9);
    assert_eq!(
        by_target["groups"],
        json!([{"key": "tg", "count": 8}, {"key": "gone", "count": 1}])
    );
    let by_class = api.get("/v1/dlq/stats?group_by=error_class").await;
    assert_eq!(
        by_class["groups"],
        json!([{"key": "http_5xx", "count": 8}, {"key": "connect", "count": 1}])
    );
    let by_hour = api.get("/v1/dlq/stats?group_by=hour").await;
    let hours: u64 = by_hour["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["count"].as_u64().unwrap())
        .sum();
    assert_eq!(hours, 9);
    assert!(
        by_hour["groups"][0]["key"]
            .as_str()
            .unwrap()
            .ends_with(":00:00Z")
    );

    // Error class × target in one call; each count equals what listing with that pair returns.
    let by_cause = api.get("/v1/dlq/stats?group_by=error_class,target").await;
    assert_eq!(by_cause["group_by"], "error_class,target");
    assert_eq!(by_cause["total"], 9);
    assert_eq!(by_cause["groups"], json!([]));
    assert_eq!(
        by_cause["rows"],
        json!([
            {"error_class": "http_5xx", "target": "tg", "count": 8},
            {"error_class": "connect", "target": "gone", "count": 1}
        ])
    );
    for row in by_cause["rows"].as_array().unwrap() {
        let listed = api
            .get(&format!(
                "/v1/dlq?error_class={}&target={}&limit=500",
                row["error_class"].as_str().unwrap(),
                row["target"].as_str().unwrap()
            ))
            .await;
        assert_eq!(
            listed["items"].as_array().unwrap().len() as u64,
            row["count"].as_u64().unwrap()
        );
    }
    // The other order means the same; the filters of GET /v1/dlq apply, on the counters
    // (target, error class) and on the deliveries (endpoint, flow, time) alike.
    let same = api.get("/v1/dlq/stats?group_by=target,error_class").await;
    assert_eq!(same["rows"], by_cause["rows"]);
    for (query, rows) in [
        (
            "target=tg",
            json!([{"error_class": "http_5xx", "target": "tg", "count": 8}]),
        ),
        (
            "error_class=connect",
            json!([{"error_class": "connect", "target": "gone", "count": 1}]),
        ),
        (
            "flow=to-gone",
            json!([{"error_class": "connect", "target": "gone", "count": 1}]),
        ),
        (
            "endpoint=ep&since=2000-01-01T00:00:00Z",
            by_cause["rows"].clone(),
        ),
        ("until=2000-01-01T00:00:00Z", json!(null)),
    ] {
        let stats = api
            .get(&format!(
                "/v1/dlq/stats?group_by=error_class,target&{query}"
            ))
            .await;
        assert_eq!(stats["rows"], rows, "{query}: {stats}");
        let listed = api.get(&format!("/v1/dlq?{query}&limit=500")).await;
        assert_eq!(
            stats["total"].as_u64().unwrap(),
            listed["items"].as_array().unwrap().len() as u64,
            "{query}: total equals the listing"
        );
    }
    // The one-dimensional forms take the filter too.
    let filtered = api.get("/v1/dlq/stats?group_by=target&flow=to-gone").await;
    assert_eq!(filtered["total"], 1);
    assert_eq!(filtered["groups"], json!([{"key": "gone", "count": 1}]));
    let hours = api
        .get("/v1/dlq/stats?group_by=hour&since=2000-01-01T00:00:00Z&target=tg")
        .await;
    assert_eq!(hours["total"], 8);
    server.stop().await.unwrap();
}
