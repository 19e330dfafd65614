//! kill -9 mid-apply, then re-run: the re-run derives the same keys, so every write lands
//! exactly once (each resource at version 1, one outbox row each). The negative control shows
//! what the content-derived keys prevent.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use switchyard_core::gitops::PlanOptions;
use switchyard_core::{OpState, ResourceKind};

use crate::git::{docs, endpoint, flow, target};
use crate::harness::wait_child;
use crate::proxy::Faults;
use crate::world::World;

const N: usize = 20;

fn commit_many(w: &World) {
    let endpoints: Vec<String> = (0..N)
        .map(|i| endpoint(&format!("e{i}"), &format!("endpoint {i}")))
        .collect();
    let targets: Vec<String> = (0..N)
        .map(|i| target(&format!("t{i}"), &format!("https://t{i}.example/hook")))
        .collect();
    let flows: Vec<String> = (0..N)
        .map(|i| {
            flow(
                &format!("f{i}"),
                &format!("e{i}"),
                &format!("t{}", (i + 1) % N),
            )
        })
        .collect();
    w.repo.write("deploy/endpoints.yaml", &docs(&endpoints));
    w.repo.write("deploy/targets.yaml", &docs(&targets));
    w.repo.write("deploy/flows.yaml", &docs(&flows));
    w.repo.commit("many");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_killed_mid_flight_and_re_run_lands_every_write_exactly_once() {
    let w = World::new().await;
    commit_many(&w);
    // Slow, lossy writes: responses dropped after the server executed them, delays.
    w.proxy.set_faults(Faults {
        drop_response: 0.15,
        delay: 1.0,
        max_delay_ms: 250,
        ..Default::default()
    });
    // Kill each apply once the server holds this many resources: early (while it queues
    // and sends the first writes), in the middle of each wave, near the end.
    let mut kills = 0;
    for at in [1, 15, 35, 50] {
        let mut child = crate::apply_child::spawn(&w.data, &w.repo.dir);
        let started = Instant::now();
        loop {
            if w.cp.all().await.len() >= at || started.elapsed() > Duration::from_secs(30) {
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(
        kills >= 2,
        "the apply was killed mid-flight ({kills} kills)"
    );
    // The last run completes.
    w.proxy.set_faults(Faults::default());
    let mut child = crate::apply_child::spawn(&w.data, &w.repo.dir);
    assert_eq!(
        wait_child(&mut child, Duration::from_secs(120)).await,
        Some(0)
    );

    let server = w.server().await;
    assert_eq!(server.len(), 3 * N);
    for ((kind, name), (version, spec)) in &server {
        assert_eq!(*version, 1, "{kind}/{name} was written more than once");
        if *kind == ResourceKind::Flow {
            let i: usize = name[1..].parse().unwrap();
            assert_eq!(spec["target"], format!("t{}", (i + 1) % N));
        }
    }
    // One outbox row per resource: no write was queued twice.
    let rows = w.outbox_rows().await;
    assert_eq!(rows.len(), 3 * N);
    assert!(rows.iter().all(|o| o.state == OpState::Done));
    let keys: HashSet<&str> = rows.iter().map(|o| o.idempotency_key.as_str()).collect();
    assert_eq!(keys.len(), 3 * N);
    // Whatever was resent reached the server under the same key (a replay, not a write).
    let forwarded: HashMap<String, u32> = w.proxy.forwarded();
    assert!(
        forwarded.keys().all(|k| keys.contains(k.as_str())),
        "{forwarded:?}"
    );
    // And applying again now writes nothing.
    let plan = w.plan(PlanOptions::default()).await.unwrap();
    assert!(!plan.summary.has_changes());
}

#[tokio::test]
async fn negative_control_without_content_keys_a_rerun_queues_every_write_again() {
    let w = World::new().await;
    commit_many(&w);
    w.apply(PlanOptions::default()).await;
    let endpoints: Vec<String> = (0..N)
        .map(|i| endpoint(&format!("e{i}"), "changed"))
        .collect();
    w.repo.write("deploy/endpoints.yaml", &docs(&endpoints));
    w.repo.commit("change every endpoint");
    let plan = w.plan(PlanOptions::default()).await.unwrap();
    assert_eq!(plan.summary.update, N as u32);
    let before = w.outbox_rows().await.len();
    // The server is down: the apply's writes stay queued (as after a crash).
    w.proxy.set_upstream(None);
    w.console.gitops_apply(&plan).await.unwrap();
    // With the content keys, a re-run is the same writes.
    let again = w.console.gitops_apply(&plan).await.unwrap();
    assert_eq!((again.queued, again.resumed), (0, N as u32));
    assert_eq!(w.outbox_rows().await.len(), before + N);
    // Without them (fresh keys, as a naive apply would mint), every write is queued twice.
    let mut keyless = plan.clone();
    for item in &mut keyless.items {
        item.key = None;
    }
    let naive = w.console.gitops_apply(&keyless).await.unwrap();
    assert_eq!(naive.queued, N as u32);
    assert_eq!(w.outbox_rows().await.len(), before + 2 * N);
}
