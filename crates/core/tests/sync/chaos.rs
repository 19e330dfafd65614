//! The crash-and-fault test: a few hundred mixed edits made while the server is down, then
//! synced through the fault proxy by sync processes killed -9 at random points, with the
//! server restarted once. The server must end up exactly as edited.
//! The negative control runs the same thing without Idempotency-Key and must not.

use std::collections::BTreeMap;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use switchyard_core::{Console, OpState, OutboxFilter, ResourceKind, Write};

use crate::harness::{ControlPlane, console_with_profile, spawn_sync, wait_child};
use crate::proxy::{FaultProxy, Faults};

/// What the server must hold for one resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    spec: Value,
    enabled: Option<bool>,
    version: i64,
}

pub type Model = BTreeMap<(ResourceKind, String), Expected>;

fn canon(kind: ResourceKind, spec: &Value) -> Value {
    kind.validate_spec(spec).unwrap()
}

/// Makes `n` random valid edits through the console, mirroring each in the model.
pub async fn edit(console: &Console, seed: u64, n: usize) -> Model {
    use ResourceKind::*;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut m: Model = BTreeMap::new();
    let mut counter = 0u64;
    let mut made = 0;
    let enqueue = async |w: Write| {
        console.enqueue("p", w).await.unwrap();
    };
    for i in 0..10 {
        let spec = json!({"description": format!("endpoint {i}")});
        enqueue(Write::Create {
            kind: Endpoint,
            name: format!("e{i}"),
            spec: spec.clone(),
        })
        .await;
        m.insert(
            (Endpoint, format!("e{i}")),
            Expected {
                spec: canon(Endpoint, &spec),
                enabled: Some(true),
                version: 1,
            },
        );
        made += 1;
    }
    for i in 0..6 {
        let spec = json!({"url": format!("http://127.0.0.1:9/t{i}")});
        enqueue(Write::Create {
            kind: Target,
            name: format!("t{i}"),
            spec: spec.clone(),
        })
        .await;
        m.insert(
            (Target, format!("t{i}")),
            Expected {
                spec: canon(Target, &spec),
                enabled: None,
                version: 1,
            },
        );
        made += 1;
    }
    let names = |m: &Model, kind: ResourceKind| -> Vec<String> {
        m.keys()
            .filter(|(k, _)| *k == kind)
            .map(|(_, n)| n.clone())
            .collect()
    };
    while made < n {
        counter += 1;
        let endpoints = names(&m, Endpoint);
        let targets = names(&m, Target);
        let flows = names(&m, Flow);
        let pick =
            |rng: &mut rand::rngs::StdRng, v: &[String]| v[rng.random_range(0..v.len())].clone();
        match rng.random_range(0..10) {
            0 | 1 if !endpoints.is_empty() => {
                let name = pick(&mut rng, &endpoints);
                let patch = json!({"description": format!("edit {counter}")});
                enqueue(Write::Update {
                    kind: Endpoint,
                    name: name.clone(),
                    patch: patch.clone(),
                })
                .await;
                let e = m.get_mut(&(Endpoint, name)).unwrap();
                switchyard_protocol::merge_patch::apply(&mut e.spec, &patch);
                e.version += 1;
            }
            2 if !targets.is_empty() => {
                let name = pick(&mut rng, &targets);
                let patch = json!({"timeout_ms": 1000 + counter});
                enqueue(Write::Update {
                    kind: Target,
                    name: name.clone(),
                    patch: patch.clone(),
                })
                .await;
                let e = m.get_mut(&(Target, name)).unwrap();
                switchyard_protocol::merge_patch::apply(&mut e.spec, &patch);
                e.version += 1;
            }
            3 if !endpoints.is_empty() && !targets.is_empty() && flows.len() < 12 => {
                let name = format!("f{counter}");
                let spec = json!({"endpoint": pick(&mut rng, &endpoints), "target": pick(&mut rng, &targets)});
                enqueue(Write::Create {
                    kind: Flow,
                    name: name.clone(),
                    spec: spec.clone(),
                })
                .await;
                m.insert(
                    (Flow, name),
                    Expected {
                        spec: canon(Flow, &spec),
                        enabled: None,
                        version: 1,
                    },
                );
            }
            4 if !flows.is_empty() => {
                let name = pick(&mut rng, &flows);
                let patch = if rng.random_bool(0.5) {
                    json!({"event_types": [format!("ev.{counter}")]})
                } else {
                    json!({"target": pick(&mut rng, &targets)})
                };
                let e = m.get(&(Flow, name.clone())).unwrap();
                let mut spec = e.spec.clone();
                switchyard_protocol::merge_patch::apply(&mut spec, &patch);
                let spec = canon(Flow, &spec);
                if spec == e.spec {
                    continue;
                }
                enqueue(Write::Update {
                    kind: Flow,
                    name: name.clone(),
                    patch,
                })
                .await;
                let e = m.get_mut(&(Flow, name)).unwrap();
                e.spec = spec;
                e.version += 1;
            }
            5 => {
                // Apply: create or replace an endpoint declaratively.
                let name = format!("e{}", rng.random_range(0..14));
                let spec = canon(
                    Endpoint,
                    &json!({"description": format!("applied {counter}")}),
                );
                enqueue(Write::Apply {
                    kind: Endpoint,
                    name: name.clone(),
                    spec: spec.clone(),
                })
                .await;
                match m.get_mut(&(Endpoint, name.clone())) {
                    Some(e) => {
                        e.spec = spec;
                        e.version += 1;
                    }
                    None => {
                        m.insert(
                            (Endpoint, name),
                            Expected {
                                spec,
                                enabled: Some(true),
                                version: 1,
                            },
                        );
                    }
                }
            }
            6 if !endpoints.is_empty() => {
                let name = pick(&mut rng, &endpoints);
                let e = m.get_mut(&(Endpoint, name.clone())).unwrap();
                let enable = e.enabled == Some(false);
                enqueue(if enable {
                    Write::Enable { name }
                } else {
                    Write::Disable { name }
                })
                .await;
                e.enabled = Some(enable);
                e.version += 1;
            }
            7 if !flows.is_empty() => {
                let name = pick(&mut rng, &flows);
                enqueue(Write::Delete {
                    kind: Flow,
                    name: name.clone(),
                })
                .await;
                m.remove(&(Flow, name));
            }
            8 if !endpoints.is_empty() => {
                // Delete an endpoint no flow uses (the server refuses otherwise).
                let name = pick(&mut rng, &endpoints);
                let used = m
                    .iter()
                    .any(|((k, _), e)| *k == Flow && e.spec["endpoint"] == name.as_str());
                if used {
                    continue;
                }
                enqueue(Write::Delete {
                    kind: Endpoint,
                    name: name.clone(),
                })
                .await;
                m.remove(&(Endpoint, name));
            }
            _ => continue,
        }
        made += 1;
    }
    m
}

/// What went wrong, resource by resource.
pub async fn compare(cp: &ControlPlane, model: &Model) -> Vec<String> {
    let mut problems = Vec::new();
    let mut actual: BTreeMap<(ResourceKind, String), switchyard_core::Resource> = cp
        .all()
        .await
        .into_iter()
        .map(|r| ((r.kind, r.name.clone()), r))
        .collect();
    for (key, exp) in model {
        match actual.remove(key) {
            None => problems.push(format!("{:?} missing on the server", key)),
            Some(r) => {
                if r.spec != exp.spec {
                    problems.push(format!("{key:?}: spec {} != expected {}", r.spec, exp.spec));
                }
                if r.version != exp.version {
                    problems.push(format!(
                        "{key:?}: version {} != expected {}",
                        r.version, exp.version
                    ));
                }
                if let Some(en) = exp.enabled
                    && r.status["enabled"].as_bool() != Some(en)
                {
                    problems.push(format!(
                        "{key:?}: enabled {} != expected {en}",
                        r.status["enabled"]
                    ));
                }
            }
        }
    }
    for key in actual.keys() {
        problems.push(format!("{key:?} exists on the server but was deleted"));
    }
    problems
}

struct ChaosResult {
    mismatches: Vec<String>,
    needs_attention: usize,
    /// Pending or sending at the end (only possible behind needs_attention ops).
    unfinished: usize,
    kills: usize,
    /// How often each idempotency key reached the server.
    forwarded: std::collections::HashMap<String, u32>,
}

async fn run_chaos(omit_key: bool, seed: u64) -> ChaosResult {
    let _ = tracing_subscriber::fmt()
        .with_env_filter("switchyard_control_plane=warn")
        .with_test_writer()
        .try_init();
    let dir = tempfile::tempdir().unwrap();
    let mut cp = ControlPlane::start(dir.path(), !omit_key).await;
    let proxy = FaultProxy::start(&cp.url(), seed).await;
    let data = dir.path().join("console");
    let console = console_with_profile(&data, &proxy.url()).await;

    // The server is down while the operator edits.
    cp.stop().await;
    proxy.set_upstream(None);
    let model = edit(&console, seed, 300).await;

    cp.restart().await;
    proxy.set_upstream(Some(cp.url()));
    proxy.set_faults(Faults::chaos());

    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed);
    let mut kills = 0;
    for round in 0..10 {
        let mut child = spawn_sync(&data, omit_key, 60_000);
        tokio::time::sleep(Duration::from_millis(rng.random_range(80..400))).await;
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
        if round == 5 {
            // The server restarts once, mid-sync (on the same database, a new port).
            cp.restart().await;
            proxy.set_upstream(Some(cp.url()));
        }
    }
    // A last sync, not killed, until it drains (or gives up).
    let mut code = None;
    for _ in 0..5 {
        let mut child = spawn_sync(&data, omit_key, 60_000);
        code = wait_child(&mut child, Duration::from_secs(90)).await;
        if matches!(code, Some(0) | Some(3)) {
            break;
        }
    }
    let unfinished_now = console
        .list_outbox(OutboxFilter {
            profile: Some("p".into()),
            states: vec![OpState::Pending, OpState::Sending],
            ..Default::default()
        })
        .await
        .unwrap()
        .len();
    if !matches!(code, Some(0) | Some(3)) || (unfinished_now > 0 && !omit_key) {
        eprintln!("final code {code:?}");
        let live = console
            .list_outbox(OutboxFilter {
                profile: Some("p".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        for o in live.iter().take(30) {
            eprintln!(
                "{} {:?} {}/{} {:?} attempts={} next={:?} err={:?}",
                o.id,
                o.op,
                o.kind,
                o.name,
                o.state,
                o.attempts,
                o.next_attempt_at,
                o.last_error.as_ref().map(|e| &e.message)
            );
        }
    }
    assert!(
        matches!(code, Some(0) | Some(3)),
        "final sync exit code {code:?}"
    );
    let needs_attention = console
        .list_outbox(OutboxFilter {
            profile: Some("p".into()),
            states: vec![OpState::NeedsAttention],
            ..Default::default()
        })
        .await
        .unwrap()
        .len();
    let live = console
        .list_outbox(OutboxFilter {
            profile: Some("p".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let unfinished = live
        .iter()
        .filter(|o| o.state != OpState::NeedsAttention)
        .count();
    let mismatches = compare(&cp, &model).await;
    cp.stop().await;
    ChaosResult {
        mismatches,
        needs_attention,
        unfinished,
        kills,
        forwarded: proxy.forwarded(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_syncs_over_a_faulty_network_apply_every_edit_exactly_once() {
    let r = run_chaos(false, 41).await;
    assert!(
        r.kills >= 3,
        "the test killed too few sync processes ({})",
        r.kills
    );
    assert_eq!(r.unfinished, 0, "nothing may be left pending or sending");
    // The faults really hit: some keys reached the server more than once (a dropped
    // response, a killed sync) and were answered from the idempotency store.
    let resent = r.forwarded.values().filter(|&&n| n > 1).count();
    assert!(
        resent > 0,
        "no key was ever resent; the faults did not bite"
    );
    eprintln!(
        "chaos: {} kills, {} keys, {resent} resent to the server",
        r.kills,
        r.forwarded.len()
    );
    assert_eq!(
        r.needs_attention, 0,
        "ops in needs_attention; mismatches: {:#?}",
        r.mismatches
    );
    assert!(
        r.mismatches.is_empty(),
        "server state differs from the edits: {:#?}",
        r.mismatches
    );
}

/// The negative control: the same run without Idempotency-Key (and a server that does not
/// require it) must end up wrong — proof that the test above can fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_idempotency_keys_the_same_run_goes_wrong() {
    let r = run_chaos(true, 41).await;
    assert!(
        r.needs_attention > 0 || !r.mismatches.is_empty(),
        "stripping the key should cause duplicates or lost edits"
    );
}
