//! A created target's first signing secret is never lost silently: a `sync` or a `gitops
//! apply --wait` stopped with SIGINT or killed -9 after some creations were confirmed, then a
//! later `sync` — every target's secret has been shown (with the id the control plane lists),
//! and none was written to the data dir. Past the control plane's key retention,
//! `targets secrets --reveal-pending` names the targets that lost it and the rotation that
//! replaces it.

use std::collections::HashMap;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use switchyard_control_plane::Server;
use switchyard_control_plane::hooks::{HookPoint, Hooks};
use switchyard_test_support::plane;

use crate::gitops::{commit, git};
use crate::secrets::assert_not_in_data_dir;
use crate::{TOKEN, run};

const TARGETS: usize = 120;

/// A slow control plane: each executed write takes 15 ms more (its writes queue on SQLite's
/// single writer), so a sync of `TARGETS` creations is still running when it is stopped.
#[derive(Default)]
struct Slow {
    effects: AtomicUsize,
}

#[async_trait]
impl Hooks for Slow {
    async fn at(&self, point: HookPoint, _key: &str) {
        if point == HookPoint::AfterEffect {
            self.effects.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
    }
}

struct World {
    _dir: tempfile::TempDir,
    server: Server,
    slow: Arc<Slow>,
    data: std::path::PathBuf,
    repo: std::path::PathBuf,
}

/// A slow control plane keeping keys `retention`, a profile, and a repository whose commit
/// declares `TARGETS` targets.
async fn world(retention: Duration) -> World {
    let dir = tempfile::tempdir().unwrap();
    let mut config = plane::config(&dir.path().join("cp.db"), &[("acme", TOKEN)]);
    let slow = Arc::new(Slow::default());
    config.hooks = slow.clone();
    config.idempotency.retention = retention;
    let server = Server::start(config).await.unwrap();
    let data = dir.path().join("console");
    let add = [
        "profile",
        "add",
        "prod",
        "--url",
        &server.url(),
        "--token-stdin",
    ];
    assert!(run(&data, &add, Some(TOKEN)).status.success());
    let repo = dir.path().join("config");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let manifests: Vec<String> = (0..TARGETS)
        .map(|i| format!("kind: target\nname: ty-{i}\nspec:\n  url: https://y{i}.example.com/h\n"))
        .collect();
    commit(&repo, "targets.yaml", &manifests.join("---\n"));
    World {
        _dir: dir,
        server,
        slow,
        data,
        repo,
    }
}

impl World {
    fn apply_args(&self, wait: bool) -> Vec<String> {
        let mut args: Vec<String> = ["gitops", "apply", "--repo"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(self.repo.display().to_string());
        args.extend(["--ref", "main", "--path", "deploy"].map(String::from));
        if wait {
            args.extend(["--wait", "--timeout", "2m"].map(String::from));
        }
        args
    }

    /// `gitops apply` without `--wait`: the creations are queued.
    fn queue_apply(&self) -> Output {
        let args = self.apply_args(false);
        run(
            &self.data,
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            None,
        )
    }

    /// Runs `args` and stops it with `signal` once two thirds of the creations were executed
    /// (more than the 64 values one process keeps in memory).
    fn interrupted(&self, args: &[String], signal: &str) -> Output {
        let before = self.slow.effects.load(Ordering::SeqCst);
        let child = Command::new(env!("CARGO_BIN_EXE_switchyard"))
            .arg("--data-dir")
            .arg(&self.data)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while self.slow.effects.load(Ordering::SeqCst) < before + TARGETS * 2 / 3 {
            assert!(started.elapsed() < Duration::from_secs(60), "the sync runs");
            std::thread::sleep(Duration::from_millis(2));
        }
        let confirmed = self.slow.effects.load(Ordering::SeqCst) - before;
        assert!(confirmed < TARGETS, "stopped mid-sync ({confirmed} done)");
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        child.wait_with_output().unwrap()
    }

    /// Each target's signing-secret ids, as the control plane lists them.
    async fn server_secret_ids(&self) -> HashMap<String, Vec<String>> {
        let client = reqwest::Client::new();
        let mut ids = HashMap::new();
        for i in 0..TARGETS {
            let name = format!("ty-{i}");
            let list: Value = client
                .get(format!("{}/v1/targets/{name}/secrets", self.server.url()))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let list = list.get("items").unwrap_or(&list).as_array().cloned();
            let list = list.unwrap_or_else(|| panic!("secrets of {name}"));
            let of: Vec<String> = list
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_owned())
                .collect();
            ids.insert(name, of);
        }
        ids
    }
}

/// `target NAME was created with signing secret SEC; …` and the value on the next line.
fn shown(stderr: &[u8], into: &mut HashMap<String, (String, String)>) {
    let text = String::from_utf8_lossy(stderr);
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix("target ") else {
            continue;
        };
        let Some((name, rest)) = rest.split_once(" was created with signing secret ") else {
            continue;
        };
        let id = rest.split(';').next().unwrap().to_owned();
        let value = lines.next().unwrap().trim().to_owned();
        assert!(value.starts_with("whsec_"), "{value}");
        if let Some((_, before)) = into.get(name) {
            assert_eq!(before, &value, "{name} shown twice with two values");
        }
        into.insert(name.to_owned(), (id, value));
    }
}

/// Every target's first secret was shown, with the id the control plane has, and no file of
/// the data dir holds a value.
async fn assert_all_shown(w: &World, seen: &HashMap<String, (String, String)>) {
    let ids = w.server_secret_ids().await;
    for (name, of) in &ids {
        let (id, value) = seen
            .get(name)
            .unwrap_or_else(|| panic!("the first secret of {name} was never shown"));
        assert_eq!(of, &vec![id.clone()], "{name}");
        assert_not_in_data_dir(&w.data, value);
    }
    let out = run(&w.data, &["targets", "secrets", "--reveal-pending"], None);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("no first signing secret is waiting"),
        "{text}"
    );
}

async fn sync_stopped_then_resumed(signal: &str) {
    let w = world(Duration::from_secs(86_400)).await;
    let queued = w.queue_apply();
    assert!(queued.status.success(), "{queued:?}");
    let sync = ["sync", "--until-drained", "--timeout", "2m"].map(String::from);
    let stopped = w.interrupted(&sync, signal);
    let mut seen = HashMap::new();
    shown(&stopped.stderr, &mut seen);
    if signal == "-INT" {
        // The graceful stop shows every secret its confirmations carried, not only the last 64
        // this process kept in memory.
        assert_eq!(stopped.status.code(), Some(4), "{stopped:?}");
        assert!(seen.len() > 64, "{} shown", seen.len());
    }
    let later = run(&w.data, &["sync", "--until-drained"], None);
    assert_eq!(later.status.code(), Some(0), "{later:?}");
    shown(&later.stderr, &mut seen);
    assert_all_shown(&w, &seen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_stopped_with_sigint_loses_no_first_secret() {
    sync_stopped_then_resumed("-INT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_killed_loses_no_first_secret() {
    sync_stopped_then_resumed("-KILL").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_stopped_or_killed_loses_no_first_secret() {
    for signal in ["-INT", "-KILL"] {
        let w = world(Duration::from_secs(86_400)).await;
        let stopped = w.interrupted(&w.apply_args(true), signal);
        let mut seen = HashMap::new();
        shown(&stopped.stderr, &mut seen);
        let later = run(&w.data, &["sync", "--until-drained"], None);
        assert_eq!(later.status.code(), Some(0), "{signal}: {later:?}");
        shown(&later.stderr, &mut seen);
        assert_all_shown(&w, &seen).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_key_retention_the_lost_targets_are_named_with_the_rotation() {
    let w = world(Duration::from_secs(2)).await;
    assert!(w.queue_apply().status.success());
    let sync = ["sync", "--until-drained", "--timeout", "2m"].map(String::from);
    let killed = w.interrupted(&sync, "-KILL");
    assert!(!String::from_utf8_lossy(&killed.stderr).contains("whsec_"));
    std::thread::sleep(Duration::from_secs(3));

    let out = run(&w.data, &["targets", "secrets", "--reveal-pending"], None);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let told = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!told.contains("whsec_"), "{told}");
    let lost: Vec<&str> = told
        .lines()
        .filter(|l| l.contains("can no longer be fetched"))
        .collect();
    assert!(!lost.is_empty(), "{told}");
    let first = lost[0]
        .split(':')
        .next()
        .unwrap()
        .trim_start_matches("target ");
    assert!(
        lost[0].contains(&format!("switchyard targets rotate-secret {first} --force")),
        "{told}"
    );
    // Told once, then forgotten (with an audit entry each).
    let again = run(
        &w.data,
        &["--json", "targets", "secrets", "--reveal-pending"],
        None,
    );
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert_eq!(crate::json(&again)["lost"], serde_json::json!([]));
    let audit = run(
        &w.data,
        &[
            "--json",
            "audit",
            "--action",
            "secret.lost",
            "--limit",
            "500",
        ],
        None,
    );
    let entries = crate::json(&audit);
    assert_eq!(entries.as_array().unwrap().len(), lost.len(), "{entries}");
    assert!(
        entries.to_string().contains(&format!("target/{first}")),
        "{entries}"
    );
}
