//! Crashes of the real binary (SIGKILL, or abort at a crash point) lose nothing and
//! duplicate nothing: a retry with the same key completes exactly once.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::support::{Observed, Recorder, TOKEN, client};

struct Process {
    child: Child,
    base: String,
}

/// Starts `switchyard-control-plane serve` on a free port over `db`; `crash_at` arms a
/// crash point.
fn spawn(db: &Path, crash_at: Option<&str>) -> Process {
    let mut command = Command::new(env!("CARGO_BIN_EXE_switchyard-control-plane"));
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--idempotency-lease",
            "1s",
            // The test target is on loopback.
            "--allow-private-targets",
        ])
        .arg("--db")
        .arg(format!("sqlite://{}", db.display()))
        .env("SWITCHYARD_TENANTS", format!("acme:{TOKEN}"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(point) = crash_at {
        command.env("SWITCHYARD_TEST_CRASH_AT", point);
    }
    let mut child = command.spawn().expect("start the control plane binary");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(
        base.starts_with("http://127.0.0.1:"),
        "unexpected banner {line:?}"
    );
    Process { child, base }
}

async fn create(base: &str, key: &str) -> Result<Observed, reqwest::Error> {
    let response = client()
        .post(format!("{base}/v1/targets"))
        .bearer_auth(TOKEN)
        .header("idempotency-key", key)
        .json(&json!({"name": "billing", "spec": {"url": "http://127.0.0.1:9/hook"}}))
        .send()
        .await?;
    Ok(Observed::of(response).await)
}

async fn count_targets(base: &str) -> usize {
    let page = client()
        .get(format!("{base}/v1/targets"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    Observed::of(page).await.json()["items"]
        .as_array()
        .unwrap()
        .len()
}

/// Retries like a well-behaved client until the key completes.
async fn retry_until_done(base: &str, key: &str) -> Observed {
    for _ in 0..100 {
        let r = create(base, key).await.unwrap();
        if r.status != 409 || r.code() != "idempotency_key_in_progress" {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("key {key} never completed");
}

#[tokio::test]
async fn a_response_replays_byte_for_byte_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let mut p = spawn(&db, None);
    let first = create(&p.base, "k").await.unwrap();
    assert_eq!(first.status, 201);
    p.child.kill().unwrap(); // SIGKILL: no shutdown, no flush
    p.child.wait().unwrap();

    let mut p = spawn(&db, None);
    let again = create(&p.base, "k").await.unwrap();
    assert_eq!((again.replayed, again.without_replay_flag()), (true, first));
    assert_eq!(count_targets(&p.base).await, 1);
    p.child.kill().unwrap();
    p.child.wait().unwrap();
}

/// The process dies at `point` inside a resource write; the client never hears back. The
/// claim, the write and the stored response were one transaction, so nothing of it survived:
/// after a restart the retry (with the same key) executes, and the effect happens once.
async fn crash_then_retry(point: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let mut p = spawn(&db, Some(point));
    assert!(
        create(&p.base, "k").await.is_err(),
        "the server died mid-request"
    );
    let status = p.child.wait().unwrap();
    assert!(!status.success(), "aborted at {point}");

    let mut p = spawn(&db, None);
    let done = retry_until_done(&p.base, "k").await;
    assert_eq!(
        (done.status, done.json()["version"].as_i64()),
        (201, Some(1)),
        "{point}"
    );
    assert_eq!(
        count_targets(&p.base).await,
        1,
        "exactly one effect after a crash {point}"
    );
    let replay = create(&p.base, "k").await.unwrap();
    assert_eq!(
        (replay.replayed, replay.without_replay_flag()),
        (true, done)
    );
    p.child.kill().unwrap();
    p.child.wait().unwrap();
}

// A resource write runs its effect, then records its key with the response, then commits;
// the two crash points fall between those steps (src/hooks.rs).
#[tokio::test]
async fn a_crash_between_effect_and_stored_response_completes_exactly_once_on_retry() {
    crash_then_retry("after_effect").await;
}

#[tokio::test]
async fn a_crash_after_the_key_is_recorded_before_the_commit_completes_exactly_once_on_retry() {
    crash_then_retry("after_claim").await;
}

async fn test_target(base: &str, key: &str) -> Result<Observed, reqwest::Error> {
    let response = client()
        .post(format!("{base}/v1/targets/billing/test"))
        .bearer_auth(TOKEN)
        .header("idempotency-key", key)
        .json(&json!({}))
        .send()
        .await?;
    Ok(Observed::of(response).await)
}

/// The process dies at `point` during an external effect (a target test). The claim had
/// committed, so after a restart the retry gets 409 until the 1 s lease expires, then takes
/// the key over and calls again — with the same `webhook-id` — and one result is stored.
async fn crash_during_a_call_then_retry(point: &str, calls_before_crash: usize) {
    let recorder = Recorder::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let mut p = spawn(&db, None);
    let created = client()
        .post(format!("{}/v1/targets", p.base))
        .bearer_auth(TOKEN)
        .header("idempotency-key", "make-billing")
        .json(&json!({"name": "billing", "spec": {"url": recorder.url}}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    p.child.kill().unwrap();
    p.child.wait().unwrap();

    let mut p = spawn(&db, Some(point));
    assert!(
        test_target(&p.base, "t").await.is_err(),
        "the server died mid-request"
    );
    assert!(!p.child.wait().unwrap().success(), "aborted at {point}");
    assert_eq!(recorder.ids().len(), calls_before_crash, "{point}");

    let mut p = spawn(&db, None);
    let mut done = None;
    for _ in 0..100 {
        let r = test_target(&p.base, "t").await.unwrap();
        if r.status != 409 {
            done = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let done = done.expect("the key completes after its lease expires");
    assert_eq!(
        (done.status, done.json()["ok"].as_bool()),
        (200, Some(true)),
        "{point}"
    );
    let ids = recorder.ids();
    assert_eq!(
        ids.len(),
        calls_before_crash + 1,
        "{point}: one more call after the takeover"
    );
    assert!(
        ids.iter().all(|id| id == &ids[0]),
        "every call carries one webhook-id: {ids:?}"
    );
    let replay = test_target(&p.base, "t").await.unwrap();
    assert_eq!(
        (replay.replayed, replay.without_replay_flag()),
        (true, done)
    );
    assert_eq!(
        recorder.ids().len(),
        calls_before_crash + 1,
        "a replay calls nobody"
    );
    p.child.kill().unwrap();
    p.child.wait().unwrap();
}

#[tokio::test]
async fn a_crash_before_a_call_out_is_taken_over_and_called_once() {
    crash_during_a_call_then_retry("after_claim", 0).await;
}

#[tokio::test]
async fn a_crash_after_a_call_out_repeats_it_with_the_same_webhook_id() {
    crash_during_a_call_then_retry("after_effect", 1).await;
}
