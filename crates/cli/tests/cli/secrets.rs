//! `switchyard targets secrets | rotate-secret | expire-secret` against a real control plane:
//! a rotation staged once (its value printed once and in no file of the data dir), verified
//! with `targets test --secret`, refused while its overlap is open, resumed by its key without a
//! second secret, then promoted by expiring the old secret. A target's first secret is shown
//! once when its creation is sent.

use switchyard_test_support::receiver::Receiver;

use crate::dlq::dying_plane_with_events;
use crate::{json as parse, run};

/// No file of the data dir (console.db, its WAL, the token file) holds `value`.
pub(crate) fn assert_not_in_data_dir(data: &std::path::Path, value: &str) {
    for entry in std::fs::read_dir(data).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        assert!(
            !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
            "the value is in {}",
            entry.path().display()
        );
    }
}

/// The `webhook-signature` header of each webhook the receiver got.
fn signatures_sent(receiver: &Receiver) -> Vec<String> {
    receiver
        .received()
        .iter()
        .map(|r| r.header("webhook-signature").to_owned())
        .collect()
}

/// How many `v1,` signatures a `webhook-signature` header carries.
fn signatures(header: &str) -> usize {
    header.split(' ').filter(|s| s.starts_with("v1,")).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_is_staged_once_verified_and_promoted() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, data) = dying_plane_with_events(dir.path(), 0).await;
    let receiver = Receiver::answering(204);
    let url = receiver.url.clone();
    let spec = format!(r#"{{"url":"{url}"}}"#);
    let out = run(
        &data,
        &["targets", "create", "ok", "--spec", &spec, "--wait"],
        None,
    );
    assert!(out.status.success());
    // The creation's secret is shown once, on stderr, and kept in no file of the data dir.
    let told = String::from_utf8_lossy(&out.stderr).into_owned();
    let created = told
        .split_whitespace()
        .find(|w| w.starts_with("whsec_"))
        .unwrap_or_else(|| panic!("no secret shown: {told}"))
        .to_owned();
    assert!(
        told.contains("target ok was created with signing secret sec_"),
        "{told}"
    );
    assert_not_in_data_dir(&data, &created);
    let again = run(&data, &["sync"], None);
    assert!(!String::from_utf8_lossy(&again.stderr).contains("whsec_"));

    let list = parse(&run(&data, &["--json", "targets", "secrets", "ok"], None));
    let old = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert!(told.contains(&old), "{told}");

    // Stage: the value is printed once; the data dir keeps no copy of it.
    let rotate = [
        "--json",
        "targets",
        "rotate-secret",
        "ok",
        "--overlap",
        "1h",
        "--key",
        "rot-1",
    ];
    let out = run(&data, &rotate, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let staged = parse(&out);
    let value = staged["value"].as_str().unwrap().to_owned();
    let new = staged["op"]["result"]["secret"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(value.starts_with("whsec_"), "{staged:#}");
    assert_eq!(staged["op"]["result"]["previous"][0]["id"], old);
    assert_not_in_data_dir(&data, &value);
    // The same key again: the same rotation, no second secret, the value not shown again.
    let again = parse(&run(&data, &rotate, None));
    assert_eq!(again["op"]["id"], staged["op"]["id"]);
    assert!(again["value"].is_null());
    let list = parse(&run(&data, &["--json", "targets", "secrets", "ok"], None));
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert!(
        list[0]["expires_at"].is_string(),
        "the old one expires: {list:#}"
    );

    // Verify: signed with the new secret only; an ordinary test carries both.
    let out = run(&data, &["targets", "test", "ok", "--secret", &new], None);
    assert_eq!(out.status.code(), Some(0));
    let out = run(&data, &["targets", "test", "ok"], None);
    assert_eq!(out.status.code(), Some(0));
    let headers = signatures_sent(&receiver);
    assert_eq!(
        headers.iter().map(|h| signatures(h)).collect::<Vec<_>>(),
        [1, 2]
    );

    // A second rotation while the overlap is open needs a person (or --force).
    let out = run(&data, &["targets", "rotate-secret", "ok"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("rotation_in_progress") || text.contains("overlap"),
        "{text}"
    );

    // Promote: the old secret ends now; tests carry one signature.
    let out = run(&data, &["targets", "expire-secret", "ok", &old], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        run(&data, &["targets", "test", "ok"], None)
            .status
            .success()
    );
    assert_eq!(signatures(signatures_sent(&receiver).last().unwrap()), 1);
    let out = run(&data, &["targets", "secrets", "ok"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("{old} ")) && text.contains("expired"),
        "{text}"
    );
    assert_eq!(receiver.count(), 3);

    // A control plane that does not answer: the rotation stays queued, exit 4 with its key.
    let add = [
        "profile",
        "add",
        "down",
        "--url",
        "http://127.0.0.1:9",
        "--token-stdin",
    ];
    assert!(
        run(&data, &add, Some("down-token-0123456789"))
            .status
            .success()
    );
    let out = run(
        &data,
        &[
            "--profile",
            "down",
            "targets",
            "rotate-secret",
            "ok",
            "--key",
            "rot-down",
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(
        text.contains("saved locally") && text.contains("--key rot-down"),
        "{text}"
    );
}
