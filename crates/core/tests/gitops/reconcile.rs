//! Applying commits: the control plane ends up equal to the manifests; the same commit again
//! writes nothing; one changed manifest is one write; a revert is a new, correct apply;
//! drift is reported (and only healed when asked); a bad manifest queues nothing.

use serde_json::json;
use switchyard_core::gitops::{PlanAction, PlanOptions, ResourceSync};
use switchyard_core::{CoreError, Origin, ResourceKind, Write};

use crate::git::{docs, endpoint, flow, target};
use crate::world::World;

fn canonical(kind: ResourceKind, spec: serde_json::Value) -> serde_json::Value {
    kind.validate_spec(&spec).unwrap()
}

/// Three files: endpoints (two documents), a target in JSON, flows.
fn first_commit(w: &World) -> String {
    w.repo.write(
        "deploy/endpoints.yaml",
        &docs(&[endpoint("orders", "Orders"), endpoint("refunds", "Refunds")]),
    );
    w.repo.write(
        "deploy/targets.json",
        r#"{"kind": "target", "name": "billing", "spec": {"url": "https://billing.example/hook", "headers": {"X-Team": "billing"}}}"#,
    );
    w.repo.write(
        "deploy/flows.yml",
        &docs(&[
            flow("orders-to-billing", "orders", "billing"),
            flow("refunds-to-billing", "refunds", "billing"),
        ]),
    );
    // Outside the folder, and not a manifest: both ignored.
    w.repo
        .write("other/endpoint.yaml", &endpoint("elsewhere", "x"));
    w.repo.write("deploy/README.md", "not a manifest");
    w.repo.commit("first")
}

#[tokio::test]
async fn apply_makes_the_control_plane_equal_to_the_commit_and_again_writes_nothing() {
    let w = World::new().await;
    let commit = first_commit(&w);
    let (plan, report) = w.apply(PlanOptions::default()).await;
    assert_eq!(plan.commit, commit);
    assert_eq!(plan.commit_title, "first");
    assert_eq!((plan.summary.create, plan.manifests), (5, 5));
    assert_eq!(report.queued, 5);
    // Targets and endpoints in wave 1, flows in wave 2; all confirmed after the sync.
    let totals: Vec<u32> = report.progress.waves.iter().map(|w| w.total).collect();
    assert_eq!(totals, [3, 2, 0, 0]);
    let progress = w
        .console
        .gitops_progress("p", &plan.source, &commit)
        .await
        .unwrap();
    assert!(progress.complete, "{progress:?}");

    let server = w.server().await;
    let expected = [
        (
            ResourceKind::Endpoint,
            "orders",
            json!({"description": "Orders"}),
        ),
        (
            ResourceKind::Endpoint,
            "refunds",
            json!({"description": "Refunds"}),
        ),
        (
            ResourceKind::Target,
            "billing",
            json!({"url": "https://billing.example/hook", "headers": {"X-Team": "billing"}}),
        ),
        (
            ResourceKind::Flow,
            "orders-to-billing",
            json!({"endpoint": "orders", "target": "billing"}),
        ),
        (
            ResourceKind::Flow,
            "refunds-to-billing",
            json!({"endpoint": "refunds", "target": "billing"}),
        ),
    ];
    assert_eq!(server.len(), expected.len(), "{server:?}");
    for (kind, name, spec) in expected {
        let (version, live) = &server[&(kind, name.to_owned())];
        assert_eq!(
            (*version, live),
            (1, &canonical(kind, spec)),
            "{kind}/{name}"
        );
    }
    // Each write carries its provenance.
    let rows = w.outbox_rows().await;
    assert_eq!(rows.len(), 5);
    let flow_op = rows.iter().find(|o| o.name == "orders-to-billing").unwrap();
    assert_eq!(
        flow_op.origin,
        Origin::Gitops {
            source: plan.source.clone(),
            commit: commit.clone(),
            path: "deploy/flows.yml".into()
        }
    );
    let status = w.console.gitops_status("p", &plan.source).await.unwrap();
    assert_eq!(
        status.source.applied_commit.as_deref(),
        Some(commit.as_str())
    );
    assert_eq!((status.in_sync, status.source.managed), (5, 5));
    assert!(status.clean(), "{status:?}");

    // The same commit again: nothing to do, no outbox row, no request to the server.
    let writes = w.writes();
    let again = w.plan(PlanOptions::default()).await.unwrap();
    assert!(!again.summary.has_changes());
    assert_eq!(again.summary.unchanged, 5);
    let report = w.console.gitops_apply(&again).await.unwrap();
    assert_eq!((report.queued, report.resumed), (0, 0));
    w.sync().await;
    assert_eq!(w.outbox_rows().await.len(), 5);
    assert_eq!(w.writes(), writes);
    assert_eq!(w.server().await, server);
}

#[tokio::test]
async fn one_changed_manifest_is_one_update_and_a_revert_is_a_new_apply() {
    let w = World::new().await;
    first_commit(&w);
    w.apply(PlanOptions::default()).await;
    let writes = w.writes();

    w.repo.write(
        "deploy/targets.json",
        r#"{"kind": "target", "name": "billing", "spec": {"url": "https://billing-v2.example/hook", "headers": {"X-Team": "billing"}}}"#,
    );
    let second = w.repo.commit("move billing");
    let plan = w.plan(PlanOptions::default()).await.unwrap();
    assert_eq!(plan.commit, second);
    assert_eq!((plan.summary.update, plan.summary.writes()), (1, 1));
    let item = &plan.items[0];
    assert_eq!(
        (item.action, item.name.as_str()),
        (PlanAction::Update, "billing")
    );
    assert_eq!(item.base_version, Some(1));
    let fields: Vec<&str> = item.changes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, ["spec.url"]);
    w.console.gitops_apply(&plan).await.unwrap();
    w.sync().await;
    assert_eq!(w.writes(), writes + 1);
    let server = w.server().await;
    let billing = &server[&(ResourceKind::Target, "billing".to_owned())];
    assert_eq!(billing.0, 2);
    assert_eq!(billing.1["url"], "https://billing-v2.example/hook");

    // Back to the first content in a third commit: a new write (a new key), not a replay of
    // the first apply's stored answer.
    w.repo.git(&["revert", "--no-edit", "HEAD"]);
    let plan = w.plan(PlanOptions::default()).await.unwrap();
    assert_eq!(plan.summary.update, 1);
    let report = w.console.gitops_apply(&plan).await.unwrap();
    assert_eq!(report.queued, 1);
    w.sync().await;
    let billing = &w.server().await[&(ResourceKind::Target, "billing".to_owned())];
    assert_eq!(billing.0, 3);
    assert_eq!(billing.1["url"], "https://billing.example/hook");
    assert_eq!(w.writes(), writes + 2);
}

#[tokio::test]
async fn drift_is_reported_with_who_made_it_and_healed_only_when_asked() {
    let w = World::new().await;
    first_commit(&w);
    let (plan, _) = w.apply(PlanOptions::default()).await;

    // An operator edits a Git-managed endpoint from this console.
    w.console
        .enqueue(
            "p",
            Write::Update {
                kind: ResourceKind::Endpoint,
                name: "orders".into(),
                patch: json!({"description": "edited by hand"}),
            },
        )
        .await
        .unwrap();
    w.sync().await;
    // And someone deletes another one straight on the server.
    let gone = w
        .by_hand(
            reqwest::Method::DELETE,
            "/v1/flows/refunds-to-billing",
            None,
        )
        .await;
    assert_eq!(gone, 204);

    let status = w.console.gitops_status("p", &plan.source).await.unwrap();
    assert_eq!((status.drifted, status.missing, status.in_sync), (1, 1, 3));
    assert!(!status.behind, "the ref did not move");
    let orders = status
        .resources
        .iter()
        .find(|r| r.name == "orders")
        .unwrap();
    assert_eq!(orders.state, ResourceSync::Drifted);
    assert_eq!(orders.changes[0].field, "spec.description");
    assert_eq!(orders.changes[0].after, Some(json!("edited by hand")));
    assert_eq!(orders.changed_by.as_deref(), Some("test"));
    let missing = status
        .resources
        .iter()
        .find(|r| r.name == "refunds-to-billing")
        .unwrap();
    assert_eq!(
        (missing.state, missing.changed_by.as_deref()),
        (ResourceSync::Missing, None)
    );
    // The badges read the cache: the same drift.
    let managed = w.console.gitops_managed("p").await.unwrap();
    assert_eq!(
        managed
            .iter()
            .filter(|m| m.state != ResourceSync::InSync)
            .count(),
        2
    );

    // A plain apply leaves drift alone (and says so); --self-heal reverts it.
    let writes = w.writes();
    let (plan, report) = w.apply(PlanOptions::default()).await;
    assert_eq!((plan.summary.drifted, report.queued), (2, 0));
    assert_eq!(w.writes(), writes);
    let heal = PlanOptions {
        self_heal: true,
        ..Default::default()
    };
    let (plan, report) = w.apply(heal).await;
    assert_eq!(
        (plan.summary.update, plan.summary.create, report.queued),
        (1, 1, 2)
    );
    let server = w.server().await;
    assert_eq!(
        server[&(ResourceKind::Endpoint, "orders".to_owned())].1["description"],
        "Orders"
    );
    assert!(server.contains_key(&(ResourceKind::Flow, "refunds-to-billing".to_owned())));
    let status = w.console.gitops_status("p", &plan.source).await.unwrap();
    assert!(status.clean(), "{status:?}");

    // A new commit on the ref: behind until applied.
    w.repo.write("deploy/more.yaml", &endpoint("more", "More"));
    w.repo.commit("more");
    let status = w.console.gitops_status("p", &plan.source).await.unwrap();
    assert!(status.behind);
}

#[tokio::test]
async fn a_bad_manifest_fails_the_plan_naming_file_document_and_field_and_queues_nothing() {
    let w = World::new().await;
    w.repo.write(
        "deploy/a.yaml",
        &docs(&[
            endpoint("orders", "Orders"),
            target("billing", "ftp://billing.example"),
        ]),
    );
    w.repo.write("deploy/b.yaml", &endpoint("orders", "again"));
    w.repo.commit("bad");
    let err = w.plan(PlanOptions::default()).await.unwrap_err();
    let CoreError::InvalidManifests { problems, total } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*total, 2);
    assert_eq!(
        (
            problems[0].path.as_str(),
            problems[0].document,
            problems[0].field.as_str()
        ),
        ("deploy/a.yaml", 2, "spec.url")
    );
    assert_eq!(
        (problems[1].path.as_str(), problems[1].field.as_str()),
        ("deploy/b.yaml", "name")
    );
    assert_eq!(err.code(), "invalid_manifest");
    assert!(
        err.to_string()
            .contains("deploy/a.yaml, document 2: spec.url"),
        "{err}"
    );
    assert!(w.outbox_rows().await.is_empty());

    // The work tree is not what is read: an uncommitted fix changes nothing.
    w.repo
        .write("deploy/b.yaml", &endpoint("payments", "fixed"));
    assert!(w.plan(PlanOptions::default()).await.is_err());
    let bad_ref = w
        .console
        .gitops_plan(
            "p",
            &switchyard_core::gitops::SourceSpec {
                git_ref: "no-such-branch".into(),
                ..w.source()
            },
            PlanOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&bad_ref, CoreError::Invalid { field, .. } if field == "ref"),
        "{bad_ref:?}"
    );
}

#[tokio::test]
async fn an_older_commit_applied_again_after_a_prune_re_creates_what_it_declares() {
    let w = World::new().await;
    w.repo.write(
        "deploy/all.yaml",
        &docs(&[endpoint("orders", "Orders"), endpoint("refunds", "Refunds")]),
    );
    let first = w.repo.commit("first");
    w.apply(PlanOptions::default()).await;
    w.repo
        .write("deploy/all.yaml", &endpoint("orders", "Orders"));
    w.repo.commit("drop refunds");
    let prune = PlanOptions {
        prune: true,
        ..Default::default()
    };
    w.apply(prune).await;
    assert_eq!(w.server().await.len(), 1);

    // Roll back by pointing the ref at the first commit: the same create as its first apply,
    // but that one settled long ago, so this is a new write under a new key.
    let source = switchyard_core::gitops::SourceSpec {
        git_ref: first.clone(),
        ..w.source()
    };
    let plan = w
        .console
        .gitops_plan("p", &source, PlanOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (plan.commit.as_str(), plan.summary.create),
        (first.as_str(), 1)
    );
    let key = plan.items[0].key.clone().unwrap();
    assert!(key.ends_with(".1"), "{key}");
    let report = w.console.gitops_apply(&plan).await.unwrap();
    assert_eq!(report.queued, 1);
    w.sync().await;
    let server = w.server().await;
    assert_eq!(server[&(ResourceKind::Endpoint, "refunds".to_owned())].0, 1);
    assert_eq!(server.len(), 2);
}
