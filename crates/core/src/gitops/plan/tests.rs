use serde_json::{Value, json};
use switchyard_protocol::{Resource, ResourceKind};

use super::*;
use crate::gitops::inventory::InventoryEntry;

const SOURCE: &str = "/srv/config:deploy";

fn manifest(kind: ResourceKind, name: &str, spec: Value) -> Manifest {
    Manifest {
        kind,
        name: name.into(),
        spec: kind.validate_spec(&spec).unwrap(),
        path: format!("deploy/{name}.yaml"),
        document: 1,
    }
}

fn live(
    kind: ResourceKind,
    name: &str,
    version: i64,
    spec: Value,
) -> ((ResourceKind, String), Resource) {
    let now = chrono::Utc::now();
    (
        (kind, name.to_owned()),
        Resource {
            kind,
            name: name.into(),
            version,
            created_at: now,
            updated_at: now,
            spec,
            status: json!({}),
        },
    )
}

fn member(
    kind: ResourceKind,
    name: &str,
    created: bool,
    spec: Value,
    source: &str,
) -> InventoryEntry {
    InventoryEntry {
        kind,
        name: name.into(),
        source: source.into(),
        created,
        spec: kind.validate_spec(&spec).unwrap(),
        commit: "c0".into(),
        path: format!("deploy/{name}.yaml"),
        version: Some(1),
        updated_at: 0,
    }
}

fn run(
    manifests: &[Manifest],
    live: &Live,
    inventory: &[InventoryEntry],
    opts: PlanOptions,
) -> Result<(Vec<PlanItem>, PlanSummary), CoreError> {
    plan(&PlanInput {
        profile: "prod",
        source: SOURCE,
        commit: "c1",
        manifests,
        live,
        inventory,
        opts: &opts,
    })
}

fn action_of(items: &[PlanItem], name: &str) -> PlanAction {
    items.iter().find(|i| i.name == name).unwrap().action
}

use ResourceKind::{Endpoint, Flow, Target};

#[test]
fn creates_updates_and_unchanged_with_server_defaults_normalised() {
    let manifests = [
        manifest(Endpoint, "orders", json!({"description": "Orders"})),
        manifest(
            Target,
            "billing",
            json!({"url": "https://billing.example/hook"}),
        ),
        manifest(
            Flow,
            "o2b",
            json!({"endpoint": "orders", "target": "billing"}),
        ),
        manifest(Endpoint, "new", json!({})),
    ];
    // Live specs as an older server stored them, without defaults: no phantom diff.
    let live: Live = [
        live(Endpoint, "orders", 3, json!({"description": "Orders"})),
        live(
            Target,
            "billing",
            5,
            json!({"url": "https://old.example/hook"}),
        ),
        live(
            Flow,
            "o2b",
            1,
            json!({"endpoint": "orders", "target": "billing"}),
        ),
    ]
    .into_iter()
    .collect();
    let (items, summary) = run(&manifests, &live, &[], PlanOptions::default()).unwrap();
    assert_eq!(
        (summary.create, summary.update, summary.unchanged),
        (1, 1, 2)
    );
    let billing = items.iter().find(|i| i.name == "billing").unwrap();
    assert_eq!(billing.action, PlanAction::Update);
    assert_eq!(billing.base_version, Some(5));
    let fields: Vec<&str> = billing.changes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, ["spec.url"]);
    assert!(billing.key.is_some());
    // Writes first in wave order, then the rest.
    let order: Vec<(&str, PlanAction, u8)> = items
        .iter()
        .map(|i| (i.name.as_str(), i.action, i.wave))
        .collect();
    assert_eq!(
        order,
        [
            ("new", PlanAction::Create, 1),
            ("billing", PlanAction::Update, 1),
            ("orders", PlanAction::Unchanged, 0),
            ("o2b", PlanAction::Unchanged, 0),
        ]
    );
    assert!(items[2].key.is_none());
}

#[test]
fn the_same_inputs_derive_the_same_keys_and_a_new_base_version_new_ones() {
    let manifests = [manifest(Endpoint, "orders", json!({"description": "v2"}))];
    let at_3: Live = [live(Endpoint, "orders", 3, json!({"description": "v1"}))]
        .into_iter()
        .collect();
    let at_4: Live = [live(Endpoint, "orders", 4, json!({"description": "v1"}))]
        .into_iter()
        .collect();
    let key = |l: &Live| {
        run(&manifests, l, &[], PlanOptions::default()).unwrap().0[0]
            .key
            .clone()
    };
    assert_eq!(key(&at_3), key(&at_3));
    assert_ne!(key(&at_3), key(&at_4));
}

#[test]
fn drift_is_reported_not_reverted_unless_self_heal() {
    let spec = json!({"description": "from git"});
    let manifests = [
        manifest(Endpoint, "orders", spec.clone()),
        manifest(Endpoint, "gone", spec.clone()),
    ];
    let live: Live = [live(
        Endpoint,
        "orders",
        2,
        json!({"description": "by hand"}),
    )]
    .into_iter()
    .collect();
    let inventory = [
        member(Endpoint, "orders", true, spec.clone(), SOURCE),
        member(Endpoint, "gone", true, spec.clone(), SOURCE),
    ];
    let (items, s) = run(&manifests, &live, &inventory, PlanOptions::default()).unwrap();
    assert_eq!((s.drifted, s.writes()), (2, 0));
    let orders = items.iter().find(|i| i.name == "orders").unwrap();
    assert_eq!(orders.changes[0].field, "spec.description");
    let heal = PlanOptions {
        self_heal: true,
        ..Default::default()
    };
    let (items, s) = run(&manifests, &live, &inventory, heal).unwrap();
    assert_eq!((s.update, s.create), (1, 1));
    assert_eq!(action_of(&items, "gone"), PlanAction::Create);
    // A commit that changes a drifted resource updates it: Git's change wins.
    let changed = [manifest(
        Endpoint,
        "orders",
        json!({"description": "new in git"}),
    )];
    let (items, _) = run(&changed, &live, &inventory[..1], PlanOptions::default()).unwrap();
    assert_eq!(action_of(&items, "orders"), PlanAction::Update);
}

#[test]
fn prune_deletes_only_what_this_source_created() {
    let manifests = [manifest(Endpoint, "kept", json!({}))];
    let live: Live = [
        live(Endpoint, "kept", 1, json!({})),
        live(Endpoint, "made-by-git", 1, json!({})),
        live(Endpoint, "adopted", 4, json!({})),
        live(Endpoint, "by-hand", 1, json!({})),
        live(Endpoint, "other-source", 1, json!({})),
        live(
            Flow,
            "made-by-git-flow",
            2,
            json!({"endpoint": "kept", "target": "t"}),
        ),
    ]
    .into_iter()
    .collect();
    let inventory = [
        member(Endpoint, "kept", true, json!({}), SOURCE),
        member(Endpoint, "made-by-git", true, json!({}), SOURCE),
        member(Endpoint, "adopted", false, json!({}), SOURCE),
        member(Endpoint, "other-source", true, json!({}), "/srv/else:."),
        member(
            Flow,
            "made-by-git-flow",
            true,
            json!({"endpoint": "kept", "target": "t"}),
            SOURCE,
        ),
        // Gone from both the commit and the control plane: no item.
        member(Endpoint, "vanished", true, json!({}), SOURCE),
    ];
    let (items, s) = run(&manifests, &live, &inventory, PlanOptions::default()).unwrap();
    assert_eq!((s.delete, s.orphaned, s.release), (0, 2, 1));
    let prune = PlanOptions {
        prune: true,
        ..Default::default()
    };
    let (items_pruned, s) = run(&manifests, &live, &inventory, prune).unwrap();
    assert_eq!((s.delete, s.release, s.unchanged), (2, 1, 1));
    assert_eq!(action_of(&items_pruned, "adopted"), PlanAction::Release);
    assert!(
        items_pruned
            .iter()
            .all(|i| i.name != "by-hand" && i.name != "other-source" && i.name != "vanished")
    );
    // Flows are deleted before endpoints and targets.
    let deletes: Vec<(&str, u8)> = items_pruned
        .iter()
        .filter(|i| i.action == PlanAction::Delete)
        .map(|i| (i.name.as_str(), i.wave))
        .collect();
    assert_eq!(deletes, [("made-by-git-flow", 3), ("made-by-git", 4)]);
    let del = items_pruned
        .iter()
        .find(|i| i.name == "made-by-git")
        .unwrap();
    assert_eq!(del.base_version, Some(1));
    assert_eq!(del.path.as_deref(), Some("deploy/made-by-git.yaml"));
    assert!(items.iter().all(|i| i.key.is_none()));
}

#[test]
fn a_prune_of_everything_the_source_manages_needs_an_explicit_flag() {
    let live: Live = [
        live(Endpoint, "a", 1, json!({})),
        live(Endpoint, "b", 1, json!({})),
    ]
    .into_iter()
    .collect();
    let inventory = [
        member(Endpoint, "a", true, json!({}), SOURCE),
        member(Endpoint, "b", true, json!({}), SOURCE),
    ];
    let prune = PlanOptions {
        prune: true,
        ..Default::default()
    };
    let err = run(&[], &live, &inventory, prune.clone()).unwrap_err();
    assert_eq!(err.code(), "prune_all_refused");
    let all = PlanOptions {
        allow_delete_all: true,
        ..prune
    };
    assert_eq!(run(&[], &live, &inventory, all).unwrap().1.delete, 2);
    // Without --prune nothing is deleted, so nothing needs the flag.
    assert_eq!(
        run(&[], &live, &inventory, PlanOptions::default())
            .unwrap()
            .1
            .orphaned,
        2
    );
}

#[test]
fn a_resource_another_source_manages_is_refused() {
    let manifests = [manifest(Endpoint, "shared", json!({}))];
    let inventory = [member(Endpoint, "shared", true, json!({}), "/srv/else:.")];
    let err = run(&manifests, &Live::new(), &inventory, PlanOptions::default()).unwrap_err();
    assert_eq!(err.code(), "managed_elsewhere");
    assert!(err.to_string().contains("/srv/else:."), "{err}");
}

#[test]
fn a_flow_must_reference_something_declared_or_live() {
    let manifests = [
        manifest(Endpoint, "orders", json!({})),
        manifest(
            Flow,
            "f",
            json!({"endpoint": "orders", "target": "nowhere"}),
        ),
    ];
    let err = run(&manifests, &Live::new(), &[], PlanOptions::default()).unwrap_err();
    match err {
        CoreError::InvalidManifests { problems, .. } => {
            assert_eq!(problems.len(), 1);
            assert_eq!(problems[0].field, "spec.target");
            assert_eq!(problems[0].path, "deploy/f.yaml");
        }
        other => panic!("{other:?}"),
    }
    let live: Live = [live(
        Target,
        "nowhere",
        1,
        json!({"url": "https://x.example"}),
    )]
    .into_iter()
    .collect();
    assert!(run(&manifests, &live, &[], PlanOptions::default()).is_ok());
}
