//! DLQ reads and replay writes through the console core, against a real control plane
//! whose deliveries die fast (a 5-attempt millisecond schedule, a receiver that refuses).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard_control_plane::delivery::DeliveryConfig;
use switchyard_control_plane::delivery::schedule::parse_schedule;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_core::protocol_dlq::{DlqFilter, DlqGroupBy};
use switchyard_core::protocol_replay::{ReplaySelection, ReplayStatus};
use switchyard_core::{Console, CoreError, DlqQuery, ReplayOpState, ReplayStart};

use crate::harness::{TOKEN, console_with_profile};

const FAST: &str = "0s,20ms,20ms,20ms,20ms";

async fn server(dir: &Path) -> Server {
    let mut tenants = Tenants::default();
    tenants.add("acme", TOKEN);
    let mut config = ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        format!("sqlite://{}", dir.join("cp.db").display()),
        tenants,
    )
    .local_only();
    config.delivery = DeliveryConfig {
        schedule: parse_schedule(FAST).unwrap(),
        lease_margin: Duration::from_millis(300),
        poll_max: Duration::from_millis(50),
        ..config.delivery
    };
    Server::start(config).await.unwrap()
}

async fn call(base: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .request(method.parse().unwrap(), format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .header("idempotency-key", uuid::Uuid::new_v4().to_string());
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Endpoint `ep` → two targets (`crm`, `erp`) on a closed loopback port; `n` events, all of
/// whose deliveries die (`connect`). Returns the console with profile `p`.
async fn dead_letters(dir: &Path, base: &str, n: usize) -> Console {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{closed}/hook");
    assert_eq!(
        call(
            base,
            "POST",
            "/v1/endpoints",
            Some(json!({"name": "ep", "spec": {}}))
        )
        .await
        .0,
        201
    );
    for t in ["crm", "erp"] {
        let (s, b) = call(
            base,
            "POST",
            "/v1/targets",
            Some(json!({"name": t, "spec": {"url": url, "timeout_ms": 500}})),
        )
        .await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = call(
            base,
            "POST",
            "/v1/flows",
            Some(json!({"name": format!("to-{t}"), "spec": {"endpoint": "ep", "target": t}})),
        )
        .await;
        assert_eq!(s, 201, "{b}");
    }
    for i in 0..n {
        let (s, b) = call(base, "POST", "/v1/events", Some(json!({"endpoint": "ep", "event_type": "order.paid", "payload": {"n": i}, "event_key": format!("k-{i}")}))).await;
        assert!(s == 202 || s == 200, "{b}");
    }
    let console = console_with_profile(dir, base).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let stats = console
            .dlq_stats("p", DlqGroupBy::Target, &DlqFilter::default())
            .await
            .unwrap();
        if stats.total == 2 * n as u64 {
            return console;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "DLQ never filled: {stats:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn crm() -> ReplaySelection {
    ReplaySelection::Filter(DlqFilter {
        target: Some("crm".into()),
        ..Default::default()
    })
}

#[tokio::test]
async fn dlq_pages_filters_stats_and_event_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let console = dead_letters(dir.path(), &server.url(), 5).await;

    // Cursor pagination walks every entry once.
    let mut seen = Vec::new();
    let mut query = DlqQuery {
        limit: Some(3),
        ..Default::default()
    };
    loop {
        let page = console.dlq_page("p", &query).await.unwrap();
        seen.extend(page.items.iter().map(|e| e.delivery_id.clone()));
        match page.next_cursor {
            Some(c) => query.cursor = Some(c),
            None => break,
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 10);

    // A filter narrows it.
    let crm_only = DlqQuery {
        filter: DlqFilter {
            target: Some("crm".into()),
            ..Default::default()
        },
        limit: Some(100),
        cursor: None,
    };
    let page = console.dlq_page("p", &crm_only).await.unwrap();
    assert_eq!(page.items.len(), 5);
    assert!(page.items.iter().all(|e| e.target == "crm"));

    let by_class = console
        .dlq_stats("p", DlqGroupBy::ErrorClass, &DlqFilter::default())
        .await
        .unwrap();
    assert_eq!(by_class.groups.len(), 1);
    assert_eq!(by_class.groups[0].key, "connect");
    assert_eq!(by_class.groups[0].count, 10);

    // Event lookup shows all its deliveries, each with its five attempts.
    let event = console.event("p", &page.items[0].event_id).await.unwrap();
    assert_eq!(event.deliveries.len(), 2);
    assert!(event.deliveries.iter().all(|d| d.attempts.len() == 5));
    let delivery = console
        .delivery("p", &page.items[0].delivery_id)
        .await
        .unwrap();
    assert_eq!(delivery.target, "crm");

    // Bad input is named, and nothing is sent.
    let err = console.event("p", "../etc").await.unwrap_err();
    assert!(matches!(err, CoreError::Invalid { .. }), "{err}");
    let err = console
        .dlq_page(
            "p",
            &DlqQuery {
                limit: Some(900),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("limit"), "{err}");
    assert!(matches!(
        console.event("p", "evt_nope").await.unwrap_err(),
        CoreError::NotFound { .. }
    ));
}

#[tokio::test]
async fn a_retried_or_duplicated_replay_start_creates_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let console = dead_letters(dir.path(), &server.url(), 4).await;

    // Dry run: counts, creates nothing.
    assert_eq!(console.replay_dry_run("p", crm()).await.unwrap(), 4);
    assert!(console.replay_sessions("p").await.unwrap().is_empty());

    // Saved locally first (works offline): the session id is minted here, once.
    let start = ReplayStart {
        session_id: None,
        selection: crm(),
        rate_per_s: None,
    };
    let op = console.enqueue_replay_start("p", start).await.unwrap();
    assert_eq!(op.state, ReplayOpState::Pending);
    assert_eq!(op.attempts, 0);
    // A double click: the dialog passes the same draft id again → the same row.
    let again = ReplayStart {
        session_id: Some(op.session_id.clone()),
        selection: crm(),
        rate_per_s: None,
    };
    let twin = console.enqueue_replay_start("p", again).await.unwrap();
    assert_eq!(twin.id, op.id);
    // The same id for another selection is refused, naming the field.
    let other = ReplayStart {
        session_id: Some(op.session_id.clone()),
        selection: ReplaySelection::Filter(DlqFilter::default()),
        rate_per_s: None,
    };
    let err = console.enqueue_replay_start("p", other).await.unwrap_err();
    assert!(
        matches!(err, CoreError::Invalid { ref field, .. } if field == "session id"),
        "{err}"
    );

    // Two processes' worth of senders at once (two consoles on one data dir).
    let second = crate::harness::console(dir.path()).await;
    let (a, b) = tokio::join!(
        console.sync_replays("p", Duration::from_secs(10)),
        second.sync_replays("p", Duration::from_secs(10)),
    );
    a.unwrap();
    b.unwrap();
    let done = console.replay_op(op.id).await.unwrap();
    assert_eq!(done.state, ReplayOpState::Done, "{done:?}");

    // A crash after the server executed but before the answer was recorded: the row is
    // pending again, and the resend (same session id) lands on the same session.
    let db = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.path().join("console.db").display()
    ))
    .await
    .unwrap();
    sqlx::query("UPDATE replay_outbox SET state = 'pending', result = NULL WHERE id = ?")
        .bind(op.id)
        .execute(&db)
        .await
        .unwrap();
    console
        .sync_replays("p", Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(
        console.replay_op(op.id).await.unwrap().state,
        ReplayOpState::Done
    );

    let sessions = console.replay_sessions("p").await.unwrap();
    assert_eq!(
        sessions.len(),
        1,
        "one session, whatever the resends: {sessions:?}"
    );
    assert_eq!(sessions[0].id, op.session_id);
    let session = console.replay_session("p", &op.session_id).await.unwrap();
    assert_eq!(session.counts.total, 4);
    assert_eq!(session.items.as_ref().unwrap().len(), 4);

    // Cancel goes through the outbox too: at most one cancel row per session.
    let c1 = console
        .enqueue_replay_cancel("p", &op.session_id)
        .await
        .unwrap();
    let c2 = console
        .enqueue_replay_cancel("p", &op.session_id)
        .await
        .unwrap();
    assert_eq!(c1.id, c2.id);
    assert_eq!(c1.idempotency_key, c2.idempotency_key);
    console
        .sync_replays("p", Duration::from_secs(10))
        .await
        .unwrap();
    let c = console.replay_op(c1.id).await.unwrap();
    assert_eq!(c.state, ReplayOpState::Done, "{c:?}");
    let session = console.replay_session("p", &op.session_id).await.unwrap();
    assert!(
        matches!(
            session.status,
            ReplayStatus::Cancelled | ReplayStatus::Completed
        ),
        "{:?}",
        session.status
    );
}

#[tokio::test]
async fn a_refused_replay_needs_attention_with_the_servers_reason() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let console = console_with_profile(dir.path(), &server.url()).await;
    // Cancel of a session the server never had: permanent, kept with the problem body.
    let op = console
        .enqueue_replay_cancel("p", "no-such-session")
        .await
        .unwrap();
    console
        .sync_replays("p", Duration::from_secs(5))
        .await
        .unwrap();
    let op = console.replay_op(op.id).await.unwrap();
    assert_eq!(op.state, ReplayOpState::NeedsAttention);
    let err = op.last_error.unwrap();
    assert_eq!(err.status, Some(404));
    assert!(!err.transient);
}

#[tokio::test]
async fn a_replay_write_announces_each_step_saved_sent_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let console = dead_letters(dir.path(), &server.url(), 2).await;
    let mut events = console.subscribe();
    let op = console
        .enqueue_replay_start(
            "p",
            ReplayStart {
                session_id: Some("rpl_announced".into()),
                selection: crm(),
                rate_per_s: None,
            },
        )
        .await
        .unwrap();
    console
        .sync_replays("p", Duration::from_secs(10))
        .await
        .unwrap();
    let mut steps = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let switchyard_core::Event::ReplayWrite {
            op_id,
            session_id,
            state,
            attempts,
            ..
        } = event
        {
            assert_eq!((op_id, session_id.as_str()), (op.id, "rpl_announced"));
            steps.push((state, attempts));
        }
    }
    assert_eq!(
        steps,
        [
            (ReplayOpState::Pending, 0),
            (ReplayOpState::Pending, 1),
            (ReplayOpState::Done, 1)
        ],
        "saved locally, then sent (before the answer), then confirmed"
    );
    // The row says the same: sent once, confirmed.
    let row = console.replay_op(op.id).await.unwrap();
    assert_eq!((row.state, row.attempts), (ReplayOpState::Done, 1));
}
