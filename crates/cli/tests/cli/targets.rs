//! `switchyard targets test NAME`: a receiver that refuses connections is a finished test that
//! says so (exit 5); a receiver that accepts it exits 0, and the same `--key` again shows the
//! same test without sending a second webhook; an unknown target is an error (exit 1).

use switchyard_test_support::receiver::Receiver;

use crate::dlq::dying_plane_with_events;
use crate::{json as parse, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_test_reports_what_the_receiver_answered_and_sends_a_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, data) = dying_plane_with_events(dir.path(), 0).await;
    assert!(run(&data, &["refresh"], None).status.success());

    // crm's receiver refuses connections: the test finished, the receiver did not accept it.
    let out = run(&data, &["targets", "test", "crm"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(5), "{text}");
    assert!(text.contains("receiver did not accept it"), "{text}");
    assert!(text.contains("(connect)"), "{text}");

    let out = run(&data, &["targets", "test", "nope"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"nope\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(
        &data,
        &["targets", "test", "crm", "--payload", "{oops"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--payload is not valid JSON"));

    let receiver = Receiver::answering(204);
    let url = receiver.url.clone();
    let spec = format!(r#"{{"url":"{url}"}}"#);
    let out = run(
        &data,
        &["targets", "create", "ok", "--spec", &spec, "--wait"],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let args = [
        "--json",
        "targets",
        "test",
        "ok",
        "--key",
        "cli-test-1",
        "--event-type",
        "order.paid",
        "--payload",
        r#"{"order":7}"#,
    ];
    let out = run(&data, &args, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let first = parse(&out);
    assert_eq!(first["state"], "done");
    assert_eq!(first["result"]["status_code"], 204);
    assert_eq!(first["request"]["payload"]["order"], 7);
    assert_eq!(receiver.count(), 1);

    // The same key again: the same test, nothing sent.
    let again = parse(&run(&data, &args, None));
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["result"]["webhook_id"], first["result"]["webhook_id"]);
    assert_eq!(receiver.count(), 1);

    let out = run(&data, &["targets", "test", "ok"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("receiver accepted it: HTTP 204"), "{text}");
    assert_eq!(receiver.count(), 2, "a new key is a new test");

    // Signing with a secret the target does not have: the control plane refuses the test
    // (needs attention, exit 3) and nothing reaches the receiver.
    let out = run(
        &data,
        &["targets", "test", "ok", "--secret", "sec_nope"],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("NEEDS ATTENTION") && text.contains("404"),
        "{text}"
    );
    assert_eq!(receiver.count(), 2);
}
