//! What GitOps must never do: delete without --prune, delete what it did not create, delete
//! on a failed listing, or overwrite a change made between the plan and the apply.

use serde_json::json;
use switchyard_core::gitops::{PlanAction, PlanOptions};
use switchyard_core::{OpState, ResourceKind, Write};

use crate::git::{docs, endpoint, flow, target};
use crate::world::World;

fn prune() -> PlanOptions {
    PlanOptions {
        prune: true,
        ..Default::default()
    }
}

fn has(server: &crate::world::ServerState, kind: ResourceKind, name: &str) -> bool {
    server.contains_key(&(kind, name.to_owned()))
}

#[tokio::test]
async fn a_deleted_manifest_is_deleted_only_with_prune_and_never_what_git_did_not_create() {
    let w = World::new().await;
    // Made by hand before GitOps: `adopted` will be declared in Git, `by-hand` never.
    w.console
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Endpoint,
                name: "adopted".into(),
                spec: json!({"description": "made by hand"}),
            },
        )
        .await
        .unwrap();
    w.console
        .enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Endpoint,
                name: "by-hand".into(),
                spec: json!({}),
            },
        )
        .await
        .unwrap();
    w.sync().await;
    w.repo.write(
        "deploy/all.yaml",
        &docs(&[
            endpoint("orders", "Orders"),
            endpoint("adopted", "now in git"),
            target("billing", "https://billing.example/hook"),
            flow("orders-to-billing", "orders", "billing"),
        ]),
    );
    w.repo.commit("first");
    let (plan, _) = w.apply(PlanOptions::default()).await;
    let adopted = plan.items.iter().find(|i| i.name == "adopted").unwrap();
    assert_eq!(adopted.action, PlanAction::Update);

    // Every manifest but `orders` removed from Git.
    w.repo
        .write("deploy/all.yaml", &endpoint("orders", "Orders"));
    w.repo.commit("remove");
    let writes = w.writes();
    let (plan, report) = w.apply(PlanOptions::default()).await;
    assert_eq!(
        (
            plan.summary.orphaned,
            plan.summary.release,
            plan.summary.delete
        ),
        (2, 1, 0)
    );
    assert_eq!(report.queued, 0);
    assert_eq!(w.writes(), writes);
    let server = w.server().await;
    assert_eq!(server.len(), 5, "nothing deleted without --prune");

    let (plan, report) = w.apply(prune()).await;
    assert_eq!(plan.summary.delete, 2);
    assert_eq!(report.queued, 2);
    // The flow goes first, then the target it used.
    let deletes: Vec<(&str, u8)> = plan
        .items
        .iter()
        .filter(|i| i.action == PlanAction::Delete)
        .map(|i| (i.name.as_str(), i.wave))
        .collect();
    assert_eq!(deletes, [("orders-to-billing", 3), ("billing", 4)]);
    let server = w.server().await;
    assert!(!has(&server, ResourceKind::Flow, "orders-to-billing"));
    assert!(!has(&server, ResourceKind::Target, "billing"));
    assert!(has(&server, ResourceKind::Endpoint, "orders"));
    assert!(
        has(&server, ResourceKind::Endpoint, "by-hand"),
        "made by hand: never pruned"
    );
    assert!(
        has(&server, ResourceKind::Endpoint, "adopted"),
        "adopted: released, never pruned"
    );

    // Everything gone from Git: a prune of all the source manages needs its own flag.
    w.repo.remove("deploy/all.yaml");
    w.repo.write("deploy/.keep.json", "[]");
    w.repo.commit("empty");
    let err = w.plan(prune()).await.unwrap_err();
    assert_eq!(err.code(), "prune_all_refused");
    let all = PlanOptions {
        allow_delete_all: true,
        ..prune()
    };
    let (plan, _) = w.apply(all).await;
    assert_eq!(plan.summary.delete, 1);
    let server = w.server().await;
    assert_eq!(
        server.keys().map(|(_, n)| n.as_str()).collect::<Vec<_>>(),
        ["adopted", "by-hand"]
    );
}

#[tokio::test]
async fn a_failing_listing_plans_nothing_and_deletes_nothing() {
    let w = World::new().await;
    w.repo.write(
        "deploy/all.yaml",
        &docs(&[
            endpoint("orders", "Orders"),
            target("billing", "https://billing.example/hook"),
            flow("orders-to-billing", "orders", "billing"),
        ]),
    );
    w.repo.commit("first");
    w.apply(PlanOptions::default()).await;
    w.repo.remove("deploy/all.yaml");
    w.repo
        .write("deploy/one.yaml", &endpoint("orders", "Orders"));
    w.repo.commit("prune the flow and the target");
    let before = w.server().await;
    let writes = w.writes();

    // The endpoints and targets list fine; the flows listing fails.
    w.proxy.fail_reads(Some("/v1/flows"));
    let err = w.plan(prune()).await.unwrap_err();
    assert_eq!(err.code(), "listing_incomplete", "{err}");
    assert!(err.to_string().contains("flows"), "{err}");
    w.proxy.fail_reads(None);
    // A listing that dies before the server answers (server down) too.
    w.proxy.set_upstream(None);
    let err = w.plan(prune()).await.unwrap_err();
    assert_eq!(err.code(), "listing_incomplete", "{err}");
    w.proxy.set_upstream(Some(w.cp.url()));

    assert!(
        w.outbox_rows()
            .await
            .iter()
            .all(|o| o.op != switchyard_core::OpKind::Delete)
    );
    assert_eq!(w.writes(), writes);
    assert_eq!(w.server().await, before);
    // With the listing back, the same prune plans both deletes.
    assert_eq!(w.plan(prune()).await.unwrap().summary.delete, 2);
}

#[tokio::test]
async fn a_resource_changed_between_plan_and_apply_is_a_clean_conflict() {
    let w = World::new().await;
    w.repo.write(
        "deploy/all.yaml",
        &docs(&[
            endpoint("orders", "Orders"),
            target("billing", "https://billing.example/hook"),
        ]),
    );
    w.repo.commit("first");
    w.apply(PlanOptions::default()).await;
    w.repo.write(
        "deploy/all.yaml",
        &docs(&[
            endpoint("orders", "Orders v2"),
            target("billing", "https://billing-v2.example/hook"),
        ]),
    );
    w.repo.commit("second");
    let plan = w.plan(PlanOptions::default()).await.unwrap();
    assert_eq!(plan.summary.update, 2);

    // Someone changes the target on the server after the plan was read.
    let status = w
        .by_hand(
            reqwest::Method::PATCH,
            "/v1/targets/billing",
            Some(json!({"spec": {"timeout_ms": 3000}})),
        )
        .await;
    assert_eq!(status, 200);
    let report = w.console.gitops_apply(&plan).await.unwrap();
    w.sync().await;
    let rows = w.outbox_rows().await;
    let billing = rows
        .iter()
        .find(|o| o.name == "billing" && o.op == switchyard_core::OpKind::Apply)
        .unwrap();
    assert_eq!(billing.state, OpState::NeedsAttention);
    let error = billing.last_error.as_ref().unwrap();
    assert_eq!(error.status, Some(412));
    // The hand change is kept, not overwritten; the other write landed.
    let server = w.server().await;
    let (version, spec) = &server[&(ResourceKind::Target, "billing".to_owned())];
    assert_eq!((*version, spec["timeout_ms"].as_i64()), (2, Some(3000)));
    assert_eq!(spec["url"], "https://billing.example/hook");
    assert_eq!(
        server[&(ResourceKind::Endpoint, "orders".to_owned())].1["description"],
        "Orders v2"
    );
    let progress = w
        .console
        .gitops_progress("p", &plan.source, &plan.commit)
        .await
        .unwrap();
    assert_eq!(progress.waves[0].needs_attention, 1);
    assert!(!progress.complete && report.progress.waves[0].total == 2);

    // A newer commit cannot be applied over the unsettled write…
    w.repo.write("deploy/more.yaml", &endpoint("more", "More"));
    w.repo.commit("third");
    let next = w.plan(PlanOptions::default()).await.unwrap();
    let err = w.console.gitops_apply(&next).await.unwrap_err();
    assert_eq!(err.code(), "apply_in_progress");
    // …until a person settles it; a fresh plan then shows the target's real difference.
    w.console.discard(billing.id).await.unwrap();
    let next = w.plan(PlanOptions::default()).await.unwrap();
    let item = next.items.iter().find(|i| i.name == "billing").unwrap();
    assert_eq!(
        (item.action, item.base_version),
        (PlanAction::Update, Some(2))
    );
    let fields: Vec<&str> = item.changes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, ["spec.timeout_ms", "spec.url"]);
}
