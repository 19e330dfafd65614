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
    assert!(matches!(fresh.server, ServerCheck::Reported { .. }));

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

#[tokio::test]
async fn a_server_fix_run_offline_is_saved_locally_then_sent_once_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let proxy = FaultProxy::start(&cp.url(), 12).await;
    let c = console_with_profile(&dir.path().join("console"), &proxy.url()).await;
    // Tamper a DLQ counter: the server reports dlq_counter_drift with a recount fix.
    let db = sqlx::SqlitePool::connect(&format!("sqlite://{}", cp.db.display()))
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO dlq_counts (tenant, target, error_class, hour, count) VALUES ('acme', 'ghost', 'http_5xx', 1, 5)",
    )
    .execute(&db)
    .await
    .unwrap();
    let report = c.findings("p").await.unwrap();
    assert!(
        matches!(report.server, ServerCheck::Reported { .. }),
        "{:?}",
        report.server
    );
    let drift = report
        .findings
        .iter()
        .find(|f| f.finding.class == FindingClass::DlqCounterDrift)
        .unwrap_or_else(|| panic!("{:?}", classes(&report)))
        .finding
        .clone();
    assert_eq!(drift.actions[0].path, "/v1/dlq/recount");

    // The control plane goes away; the fix is run from the last check and saved locally.
    proxy.set_upstream(None);
    let offline = c.findings("p").await.unwrap();
    assert!(offline.incomplete());
    assert!(offline.findings.iter().any(|f| f.finding.id == drift.id));
    let outcome = c
        .run_fix(
            "p",
            &drift.id,
            0,
            Some("draft-recount-1".into()),
            Duration::from_secs(2),
        )
        .await
        .unwrap();
    let queued = outcome.queued.unwrap();
    assert_eq!(queued.state, switchyard_core::ActionState::Pending);
    assert_eq!(queued.attempts, 0);
    assert_eq!(queued.idempotency_key, "draft-recount-1");
    assert!(
        c.recovery_ops("p", 10)
            .await
            .unwrap()
            .iter()
            .any(|o| o.id == queued.id)
    );
    assert!(!proxy.forwarded().contains_key("draft-recount-1"));

    // Back: the sync sends it once, with its key; the counters are right again.
    proxy.set_upstream(Some(cp.url()));
    let touched = c.sync_recovery("p", Duration::from_secs(10)).await.unwrap();
    assert_eq!(touched.len(), 1);
    let done = c.recovery_op(queued.id).await.unwrap();
    assert_eq!(
        done.state,
        switchyard_core::ActionState::Done,
        "{:?}",
        done.last_error
    );
    assert_eq!(done.result.as_ref().unwrap()["corrected"], 1);
    // The same click again (same draft key) queues and sends nothing new.
    let again = c
        .run_fix(
            "p",
            &drift.id,
            0,
            Some("draft-recount-1".into()),
            Duration::from_secs(2),
        )
        .await
        .unwrap();
    assert_eq!(again.queued.unwrap().id, queued.id);
    assert_eq!(proxy.forwarded()["draft-recount-1"], 1);
    let after = c.findings("p").await.unwrap();
    assert!(
        after
            .findings
            .iter()
            .all(|f| f.finding.class != FindingClass::DlqCounterDrift),
        "{:?}",
        classes(&after)
    );
    let audit = c.audit(Default::default()).await.unwrap();
    let fixes: Vec<_> = audit
        .iter()
        .filter(|e| e.action == "recovery.fix")
        .collect();
    assert!(fixes.iter().any(|e| e.outcome == "queued"));
    assert!(fixes.iter().any(|e| e.outcome == "done"));
}

#[tokio::test]
async fn an_edit_the_server_moved_under_is_drift_and_rebasing_it_lands_on_their_version() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let c = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    c.enqueue(
        "p",
        Write::Create {
            kind: ResourceKind::Endpoint,
            name: "orders".into(),
            spec: json!({"description": "base"}),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );
    let mine = c
        .enqueue(
            "p",
            Write::Update {
                kind: ResourceKind::Endpoint,
                name: "orders".into(),
                patch: json!({"description": "mine"}),
            },
        )
        .await
        .unwrap();
    assert_eq!(mine.if_match, Some(1));
    let status = reqwest::Client::new()
        .patch(format!("{}/v1/endpoints/orders", cp.url()))
        .bearer_auth(TOKEN)
        .header("idempotency-key", uuid::Uuid::new_v4().to_string())
        .json(&json!({"spec": {"event_types": ["order.created"]}}))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);

    let report = c.findings("p").await.unwrap();
    let id = format!("drift:operation:{}", mine.id);
    let found = report
        .findings
        .iter()
        .find(|f| f.finding.id == id)
        .unwrap_or_else(|| panic!("{:?}", classes(&report)));
    assert_eq!(
        (
            found.finding.evidence.expected,
            found.finding.evidence.actual
        ),
        (Some(1), Some(2))
    );
    assert!(found.finding.actions[0].label.contains("version 2"));
    let rebased = c
        .run_fix("p", &id, 0, None, Duration::from_secs(5))
        .await
        .unwrap()
        .op
        .unwrap();
    assert_ne!(rebased.id, mine.id);
    assert_eq!(rebased.if_match, Some(2));
    assert_eq!(c.op(mine.id).await.unwrap().state, OpState::Superseded);
    assert_eq!(
        c.sync("p", drain()).await.unwrap().outcome,
        SyncOutcome::Drained
    );
    let live = cp
        .all()
        .await
        .into_iter()
        .find(|r| r.name == "orders")
        .unwrap();
    assert_eq!(live.version, 3);
    assert_eq!(live.spec["description"], "mine");
    assert_eq!(live.spec["event_types"], json!(["order.created"]));
}

#[tokio::test]
async fn a_control_plane_without_diagnostics_is_reported_as_unchecked_never_as_clean() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let proxy = FaultProxy::start(&cp.url(), 13).await;
    let c = console_with_profile(&dir.path().join("console"), &proxy.url()).await;
    let db = sqlx::SqlitePool::connect(&format!("sqlite://{}", cp.db.display()))
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO dlq_counts (tenant, target, error_class, hour, count) VALUES ('acme', 'ghost', 'http_5xx', 1, 5)",
    )
    .execute(&db)
    .await
    .unwrap();
    let id = "dlq_counter_drift:tenant:acme";
    assert!(
        c.findings("p")
            .await
            .unwrap()
            .findings
            .iter()
            .any(|f| f.finding.id == id)
    );

    proxy.hide_route(Some("/v1/diagnostics"));
    let report = c.findings("p").await.unwrap();
    assert_eq!(report.server, ServerCheck::Unsupported);
    // The last check no longer describes this server: nothing of it is shown or fixable.
    assert!(report.findings.is_empty(), "{:?}", classes(&report));
    let refused = c
        .run_fix("p", id, 0, None, Duration::from_secs(1))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "diagnostics_unsupported");
    assert!(
        c.recovery_ops("p", 10).await.unwrap().is_empty(),
        "nothing queued"
    );
    // Console-side checks still run against such a server: a flow naming an endpoint and a
    // target the cache knows but the server no longer has (deleted there since).
    for (kind, spec) in [
        (ResourceKind::Endpoint, json!({})),
        (
            ResourceKind::Target,
            json!({"url": "https://example.com/hook"}),
        ),
    ] {
        let name = "gone".to_owned();
        c.enqueue("p", Write::Create { kind, name, spec })
            .await
            .unwrap();
    }
    c.sync("p", SyncOptions::default()).await.unwrap();
    for plural in ["endpoints", "targets"] {
        let deleted = reqwest::Client::new()
            .delete(format!("{}/v1/{plural}/gone", cp.url()))
            .bearer_auth(TOKEN)
            .header("idempotency-key", format!("deleted-elsewhere-{plural}"))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), 204, "{plural}");
    }
    let flow = c
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Flow,
                name: "to-nowhere".into(),
                spec: json!({"endpoint": "gone", "target": "gone", "mode": "async_inline"}),
            },
        )
        .await
        .unwrap();
    let report = c.findings("p").await.unwrap();
    assert_eq!(
        classes(&report),
        vec![(FindingClass::OrphanReference, flow.id.to_string())]
    );
}
