//! `switchyard rotation …` against a real control plane, with the CLI process killed -9 in the
//! middle of a step (the server holds the step's request at a crash point until the CLI is
//! dead): mid-stage, mid-verify and mid-promote, `rotation resume ID` finishes the procedure,
//! the server holds exactly one new secret, the receiver saw one verify webhook, and the value
//! is in no file of the data dir.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use switchyard_control_plane::Server;
use switchyard_control_plane::hooks::{HookPoint, Hooks};
use switchyard_test_support::plane;
use switchyard_test_support::receiver::Receiver;

use crate::{TOKEN, json as parse, run};

/// Holds the first keyed request whose key contains the armed pattern at its
/// [`HookPoint::AfterEffect`] (the server has acted; its answer is not stored or sent yet)
/// until released.
#[derive(Default)]
struct Pause {
    armed: Mutex<Option<String>>,
    reached: AtomicBool,
    released: AtomicBool,
}

impl Pause {
    fn arm(&self, pattern: &str) {
        self.reached.store(false, Ordering::SeqCst);
        self.released.store(false, Ordering::SeqCst);
        *self.armed.lock().unwrap() = Some(pattern.to_owned());
    }

    async fn wait_reached(&self) {
        let started = Instant::now();
        while !self.reached.load(Ordering::SeqCst) {
            assert!(started.elapsed() < Duration::from_secs(60), "never reached");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
    }
}

// `Hooks` is an `async_trait`; written out by hand so this crate needs no macro for it.
impl Hooks for Pause {
    fn at<'a, 'b, 'f>(
        &'a self,
        point: HookPoint,
        key: &'b str,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'f>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        Box::pin(async move {
            let hit = point == HookPoint::AfterEffect && {
                let mut armed = self.armed.lock().unwrap();
                let hit = armed.as_deref().is_some_and(|p| key.contains(p));
                if hit {
                    *armed = None;
                }
                hit
            };
            if !hit {
                return;
            }
            self.reached.store(true, Ordering::SeqCst);
            while !self.released.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    }
}

async fn plane(dir: &Path, pause: Arc<Pause>) -> Server {
    let mut config = plane::config(&dir.join("cp.db"), &[("acme", TOKEN)]);
    config.hooks = pause;
    // A request whose client vanished is taken over quickly by its resend.
    config.idempotency.lease = Duration::from_secs(1);
    Server::start(config).await.unwrap()
}

/// Runs `switchyard --json ARGS` until the server holds its request, then kills it -9 and lets
/// the server go on.
async fn kill_mid_step(data: &Path, args: &[&str], pause: &Pause, pattern: &str) {
    pause.arm(pattern);
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(data)
        .arg("--json")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    pause.wait_reached().await;
    child.kill().unwrap(); // SIGKILL
    let out = child.wait_with_output().unwrap();
    assert!(out.status.code().is_none(), "killed by a signal");
    assert!(out.stdout.is_empty(), "it printed nothing before dying");
    pause.release();
}

fn code(out: &std::process::Output) -> Option<i32> {
    out.status.code()
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The target's secrets on the server: (all, still valid).
fn secrets(data: &Path, target: &str) -> (Vec<Value>, Vec<String>) {
    let list = parse(&run(data, &["--json", "targets", "secrets", target], None));
    let now = chrono::Utc::now();
    let valid = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["expires_at"]
                .as_str()
                .is_none_or(|at| chrono::DateTime::parse_from_rfc3339(at).unwrap() > now)
        })
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    (list.as_array().unwrap().clone(), valid)
}

fn assert_not_on_disk(data: &Path, value: &str) {
    for entry in std::fs::read_dir(data).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        assert!(
            !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
            "the value is in {}",
            entry.path().display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_killed_mid_step_is_resumed_without_a_second_secret() {
    let dir = tempfile::tempdir().unwrap();
    let pause = Arc::new(Pause::default());
    let server = plane(dir.path(), pause.clone()).await;
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
    let receiver = Receiver::answering(204);
    let url = receiver.url.clone();
    for t in ["one", "two", "three"] {
        let spec = format!(r#"{{"url":"{url}"}}"#);
        let out = run(
            &data,
            &["targets", "create", t, "--spec", &spec, "--wait"],
            None,
        );
        assert!(out.status.success(), "{}", text(&out));
    }
    let old_one = secrets(&data, "one").1;

    // Bad input: exit 1, nothing saved.
    let out = run(
        &data,
        &["rotation", "start", "one", "--overlap", "8d"],
        None,
    );
    assert_eq!(code(&out), Some(1), "{}", text(&out));
    assert!(text(&out).contains("overlap"), "{}", text(&out));
    assert_eq!(
        parse(&run(&data, &["--json", "rotation", "list"], None)),
        Value::Array(vec![])
    );

    // 1. Killed while the server stages the new secret: nothing printed, the rotation waits at
    //    `staging`; `resume` sends the stage again with its key, shows the value, verifies.
    kill_mid_step(
        &data,
        &["rotation", "start", "one", "--overlap", "1h"],
        &pause,
        ":stage",
    )
    .await;
    let list = parse(&run(&data, &["--json", "rotation", "list"], None));
    assert_eq!(list[0]["step"], "staging", "{list:#}");
    let id = list[0]["id"].as_str().unwrap().to_owned();
    // Another rotation of the same target is refused while this one is open.
    let out = run(&data, &["--json", "rotation", "start", "one"], None);
    assert_eq!(code(&out), Some(1));
    assert_eq!(parse(&out)["error"]["code"], "rotation_open");

    let out = run(&data, &["--json", "rotation", "resume", &id], None);
    assert_eq!(code(&out), Some(0), "{}", text(&out));
    let resumed = parse(&out);
    assert_eq!(resumed["rotation"]["step"], "verified", "{resumed:#}");
    let value = resumed["value"]
        .as_str()
        .expect("the value, shown again")
        .to_owned();
    assert!(value.starts_with("whsec_"));
    let new_one = resumed["rotation"]["new_secret_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (all, valid) = secrets(&data, "one");
    assert_eq!(all.len(), 2, "exactly one new secret: {all:?}");
    assert_eq!(valid, [old_one[0].clone(), new_one.clone()]);
    // Verified records the value as stored: it is not shown again.
    let out = run(&data, &["--json", "rotation", "resume", &id], None);
    assert!(parse(&out)["value"].is_null());
    let out = run(&data, &["rotation", "promote", &id], None);
    assert_eq!(code(&out), Some(0), "{}", text(&out));
    assert!(text(&out).contains(": done"), "{}", text(&out));
    assert_eq!(secrets(&data, "one").1, [new_one]);
    assert_not_on_disk(&data, &value);

    // 2. Started and staged in one go; killed while the verify webhook is out, then while
    //    the promote's expiry is: each time `resume` finishes the step with its key.
    let out = run(
        &data,
        &["--json", "rotation", "start", "two", "--overlap", "1h"],
        None,
    );
    assert_eq!(code(&out), Some(0), "{}", text(&out));
    let started = parse(&out);
    let id = started["rotation"]["id"].as_str().unwrap().to_owned();
    let value = started["value"].as_str().unwrap().to_owned();
    let new_two = started["rotation"]["new_secret_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let before: Vec<String> = receiver.ids().keys().cloned().collect();

    kill_mid_step(&data, &["rotation", "verify", &id], &pause, ":verify:1").await;
    let status = parse(&run(&data, &["--json", "rotation", "status", &id], None));
    assert_eq!(status["rotation"]["step"], "verifying", "{status:#}");
    let out = run(&data, &["rotation", "resume", &id], None);
    assert_eq!(code(&out), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("accepted the new secret"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains(&format!("rotation promote {id}")),
        "says what is next"
    );
    let seen_now = receiver.ids();
    let verify_ids: Vec<&String> = seen_now.keys().filter(|k| !before.contains(k)).collect();
    assert_eq!(verify_ids.len(), 1, "one verify webhook id: {seen_now:?}");

    kill_mid_step(&data, &["rotation", "promote", &id], &pause, ":promote:").await;
    let status = parse(&run(&data, &["--json", "rotation", "status", &id], None));
    assert_eq!(status["rotation"]["step"], "promoting", "{status:#}");
    let out = run(&data, &["--json", "rotation", "resume", &id], None);
    assert_eq!(code(&out), Some(0), "{}", text(&out));
    assert_eq!(parse(&out)["rotation"]["step"], "done");
    let (all, valid) = secrets(&data, "two");
    assert_eq!(all.len(), 2, "exactly one new secret: {all:?}");
    assert_eq!(valid, [new_two]);
    assert_not_on_disk(&data, &value);

    // After the promote, the old secret's end is the one the server reports (now), not the
    // end the overlap had.
    let listed = parse(&run(&data, &["--json", "targets", "secrets", "two"], None));
    let shown = parse(&run(&data, &["--json", "rotation", "status", &id], None));
    let olds = shown["rotation"]["old_secrets"].as_array().unwrap().clone();
    assert!(!olds.is_empty(), "{shown:#}");
    for old in &olds {
        let on_server = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == old["id"])
            .unwrap();
        let at = |v: &serde_json::Value| {
            chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap()
        };
        assert_eq!(
            at(&old["expires_at"]),
            at(&on_server["expires_at"]),
            "{shown:#}"
        );
        assert!(at(&old["expires_at"]) <= chrono::Utc::now(), "{shown:#}");
    }
    let human = run(&data, &["rotation", "status", &id], None);
    assert!(!text(&human).contains("signs until"), "{}", text(&human));

    // Rolling back a promoted rotation is refused, saying why (and when, in the past).
    let out = run(&data, &["rotation", "rollback", &id], None);
    assert_eq!(code(&out), Some(1));
    assert!(text(&out).contains("expired"), "{}", text(&out));

    // The human form: the value once, what the receiver must do, the next command; roll back.
    let out = run(&data, &["rotation", "start", "three"], None);
    assert_eq!(code(&out), Some(0), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    let value = shown
        .split_whitespace()
        .find(|w| w.starts_with("whsec_"))
        .unwrap_or_else(|| panic!("no value in {shown}"))
        .to_owned();
    assert!(shown.contains("BESIDE the old secret"), "{shown}");
    let id = shown
        .split_whitespace()
        .nth(1)
        .filter(|w| w.starts_with("rot_"))
        .unwrap_or_else(|| panic!("no id in {shown}"))
        .to_owned();
    assert!(
        shown.contains(&format!(
            "next: once the receiver has the value, `switchyard rotation verify {id}`"
        )),
        "{shown}"
    );
    let listed =
        String::from_utf8_lossy(&run(&data, &["rotation", "list"], None).stdout).into_owned();
    assert!(
        listed.contains(&id) && listed.contains("staged"),
        "{listed}"
    );
    let out = run(&data, &["rotation", "promote", &id], None);
    assert_eq!(code(&out), Some(1), "not verified: {}", text(&out));
    assert!(text(&out).contains("--skip-verify"), "{}", text(&out));
    let out = run(&data, &["rotation", "rollback", &id], None);
    assert_eq!(code(&out), Some(0), "{}", text(&out));
    assert!(text(&out).contains("rolled back"), "{}", text(&out));
    assert_eq!(secrets(&data, "three").1.len(), 1);
    assert_not_on_disk(&data, &value);
    server.stop().await.unwrap();
}
