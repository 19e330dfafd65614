//! 1,000 manifests, 3 changed in a new commit: 3 writes, nothing else sent.

use switchyard_core::ResourceKind;
use switchyard_core::gitops::{PlanAction, PlanOptions};

use crate::git::{docs, endpoint};
use crate::world::World;

const N: usize = 1000;

fn write_endpoints(w: &World, changed: &[usize]) {
    // Ten files of 100 documents each.
    for f in 0..10 {
        let documents: Vec<String> = (f * 100..(f + 1) * 100)
            .map(|i| {
                let description = if changed.contains(&i) {
                    format!("endpoint {i}, changed")
                } else {
                    format!("endpoint {i}")
                };
                endpoint(&format!("e{i:04}"), &description)
            })
            .collect();
        w.repo
            .write(&format!("deploy/endpoints-{f}.yaml"), &docs(&documents));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_manifests_with_three_changed_make_three_writes() {
    let w = World::new().await;
    write_endpoints(&w, &[]);
    w.repo.commit("a thousand endpoints");
    let (plan, report) = w.apply(PlanOptions::default()).await;
    assert_eq!((plan.manifests, report.queued), (N as u32, N as u32));
    assert_eq!(w.server().await.len(), N);
    let writes = w.writes();
    let rows = w.outbox_rows().await.len();

    write_endpoints(&w, &[7, 500, 999]);
    w.repo.commit("three changed");
    let plan = w.plan(PlanOptions::default()).await.unwrap();
    assert_eq!(plan.summary.update, 3);
    assert_eq!(plan.summary.unchanged, N as u32 - 3);
    let changed: Vec<&str> = plan
        .items
        .iter()
        .filter(|i| i.action == PlanAction::Update)
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(changed, ["e0007", "e0500", "e0999"]);
    let report = w.console.gitops_apply(&plan).await.unwrap();
    assert_eq!(report.queued, 3);
    w.sync().await;
    assert_eq!(w.outbox_rows().await.len(), rows + 3);
    assert_eq!(w.writes(), writes + 3);
    let server = w.server().await;
    assert_eq!(server[&(ResourceKind::Endpoint, "e0500".to_owned())].0, 2);
    assert_eq!(server[&(ResourceKind::Endpoint, "e0501".to_owned())].0, 1);
}
