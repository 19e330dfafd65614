//! Console-side findings against a real control plane: a create whose answer was lost,
//! older than the server's key retention, found as `unknown_outcome` and adopted (no second
//! create); a flow naming a target deleted on the server, found as `orphan_reference` and
//! discarded; the lease of a sync process killed -9, found as `stale_lease` and released.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use switchyard_core::clock::ManualClock;
use switchyard_core::protocol_diagnostics::FindingClass;
use switchyard_core::{
    Console, ConsoleOptions, DoctorReport, NewProfile, OpState, ProfileEdit, ResourceKind,
    ServerCheck, SyncOptions, SyncOutcome, Write,
};
use tokio::net::TcpListener;

use crate::harness::{ControlPlane, TOKEN, console_with_profile, spawn_sync, wait_child};
use crate::proxy::{FaultProxy, Faults};

const WAIT: Duration = Duration::from_secs(10);

fn drain() -> SyncOptions {
    SyncOptions {
        until_drained: true,
        timeout_ms: Some(30_000),
        refresh_after: true,
    }
}

fn classes(report: &DoctorReport) -> Vec<(FindingClass, String)> {
    report
        .findings
        .iter()
        .map(|f| (f.finding.class, f.finding.subject.id.clone()))
        .collect()
}

async fn delete_directly(cp: &ControlPlane, path: &str) {
    let status = reqwest::Client::new()
        .delete(format!("{}{path}", cp.url()))
        .bearer_auth(TOKEN)
        .header("idempotency-key", uuid::Uuid::new_v4().to_string())
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 204);
}

#[tokio::test]
async fn a_lost_create_older_than_key_retention_is_an_unknown_outcome_and_adopting_it_sends_nothing()
 {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let proxy = FaultProxy::start(&cp.url(), 11).await;
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let mut opts = ConsoleOptions::new(dir.path().join("console"), "test");
    opts.clock = clock.clone();
    let c = Console::open(opts).await.unwrap();
    c.add_profile(NewProfile {
        name: "p".into(),
        url: proxy.url(),
        token: TOKEN.into(),
    })
    .await
    .unwrap();
    let op = c
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Endpoint,
                name: "orders".into(),
                spec: json!({"description": "lost answer"}),
            },
        )
        .await
        .unwrap();
    // The server creates it; the answer never comes back.
    proxy.set_faults(Faults {
        drop_response: 1.0,
        ..Faults::default()
    });
    let once = SyncOptions {
        until_drained: false,
        timeout_ms: Some(5_000),
        refresh_after: false,
    };
    c.sync("p", once).await.unwrap();
    proxy.set_faults(Faults::default());
    assert_eq!(c.op(op.id).await.unwrap().state, OpState::Pending);
    let sent = proxy.forwarded()[&op.idempotency_key];
    assert_eq!(sent, 1);

    // Inside the retention window it is an ordinary pending write, not a finding.
    let fresh = c.findings("p").await.unwrap();
    assert!(classes(&fresh).is_empty(), "{:?}", classes(&fresh));
    assert_eq!(fresh.server, ServerCheck::Unsupported);

    // Two days later (the server keeps keys for one) the outcome is unknown.
    clock.advance(2 * 86_400_000);
    let report = c.findings("p").await.unwrap();
    let id = format!("unknown_outcome:operation:{}", op.id);
    let found = report
        .findings
        .iter()
        .find(|f| f.finding.id == id)
        .unwrap_or_else(|| panic!("{:?}", classes(&report)));
    assert!(report.needs_person());
    assert_eq!(found.finding.actions[0].method, "GET");
    assert_eq!(found.finding.actions[0].path, "/v1/endpoints/orders");
    assert!(
        found.finding.detail.contains("matches"),
        "{}",
        found.finding.detail
    );

    let outcome = c
        .run_fix("p", &id, 0, None, Duration::from_secs(5))
        .await
        .unwrap();
    let adopted = outcome.op.unwrap();
    assert_eq!(adopted.state, OpState::Done);
    assert_eq!(adopted.result_version, Some(1));
    // Adopted from live state: not sent again, one endpoint on the server.
    assert_eq!(proxy.forwarded()[&op.idempotency_key], sent);
    let all = cp.all().await;
    assert_eq!(all.len(), 1);
    assert_eq!((all[0].name.as_str(), all[0].version), ("orders", 1));
    let cached = c
        .get_resource("p", ResourceKind::Endpoint, "orders")
        .await
        .unwrap();
    assert_eq!(cached.server.unwrap().version, 1);
    assert!(classes(&c.findings("p").await.unwrap()).is_empty());
    // Running it again finds nothing to fix and changes nothing.
    assert!(
        c.run_fix("p", &id, 0, None, Duration::from_secs(5))
            .await
            .is_err()
    );
    let audit = c.audit(Default::default()).await.unwrap();
    assert!(audit.iter().any(|e| e.action == "op.adopt"));
}

#[tokio::test]
async fn a_flow_naming_a_target_deleted_on_the_server_is_an_orphan_and_discarding_it_sends_nothing()
{
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let c = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    for (kind, name, spec) in [
        (ResourceKind::Endpoint, "orders", json!({})),
        (
            ResourceKind::Target,
            "billing",
            json!({"url": "https://billing.example.com/hook"}),
        ),
    ] {
        c.enqueue(
            "p",
            Write::Create {
                kind,
                name: name.into(),
                spec,
            },
        )
        .await
        .unwrap();
    }
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );
    // Someone deletes the target on the server; this console still believes in it.
    delete_directly(&cp, "/v1/targets/billing").await;
    let flow = c
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Flow,
                name: "orders-to-billing".into(),
                spec: json!({"endpoint": "orders", "target": "billing", "mode": "async_inline"}),
            },
        )
        .await
        .unwrap();

    let report = c.findings("p").await.unwrap();
    let id = format!("orphan_reference:operation:{}", flow.id);
    let found = report
        .findings
        .iter()
        .find(|f| f.finding.id == id)
        .unwrap_or_else(|| panic!("{:?}", classes(&report)));
    assert!(
        found.finding.detail.contains("target/billing"),
        "{}",
        found.finding.detail
    );
    assert!(found.finding.actions[0].destructive);
    assert!(report.needs_person());

    // A queued create of the target would make it no orphan: a target only queued counts.
    let outcome = c
        .run_fix("p", &id, 0, None, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(outcome.op.unwrap().state, OpState::Discarded);
    assert!(classes(&c.findings("p").await.unwrap()).is_empty());
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );
    let all = cp.all().await;
    assert!(all.iter().all(|r| r.kind != ResourceKind::Flow), "{all:?}");
    // An out-of-range action is refused and changes nothing.
    assert!(
        c.run_fix("p", &id, 5, None, Duration::from_secs(1))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_lease_of_a_killed_sync_is_a_stale_lease_and_releasing_it_sends_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    // A server that accepts connections and never answers: the child's send hangs there.
    let hole = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hole_url = format!("http://{}", hole.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = hole.accept().await {
            open.push(stream);
        }
    });
    let data = dir.path().join("console");
    let c = console_with_profile(&data, &hole_url).await;
    let op = c
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Endpoint,
                name: "leased".into(),
                spec: json!({}),
            },
        )
        .await
        .unwrap();
    let mut child = spawn_sync(&data, false, 60_000);
    let started = std::time::Instant::now();
    while c.op(op.id).await.unwrap().state != OpState::Sending {
        assert!(started.elapsed() < WAIT, "the child never claimed the op");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL, mid-send
    assert_eq!(wait_child(&mut child, WAIT).await, None);
    held.abort();

    c.edit_profile(
        "p",
        ProfileEdit {
            url: Some(cp.url()),
            token: None,
        },
    )
    .await
    .unwrap();
    let report = c.findings("p").await.unwrap();
    let id = format!("stale_lease:operation:{}", op.id);
    let found = report
        .findings
        .iter()
        .find(|f| f.finding.id == id)
        .unwrap_or_else(|| panic!("{:?}", classes(&report)));
    assert_eq!(found.finding.actions[0].method, "LOCAL");
    let outcome = c
        .run_fix("p", &id, 0, None, Duration::from_secs(5))
        .await
        .unwrap();
    let released = outcome.op.unwrap();
    assert_eq!(released.state, OpState::Pending);
    assert_eq!(released.idempotency_key, op.idempotency_key);
    assert!(classes(&c.findings("p").await.unwrap()).is_empty());
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );
    assert_eq!(c.op(op.id).await.unwrap().state, OpState::Done);
    let all = cp.all().await;
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].version, 1);
}
