//! `switchyard status`: the delivery health of a control plane whose two targets refuse every
//! connection — both listed as failing, worst first, with the run of failures and the error,
//! the DLQ depth in the totals; `--json` is the server's report; a bad window is a usage error.

use std::time::Duration;

use crate::dlq::dying_plane_with_events;
use crate::{json as parse, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_lists_failing_targets_first_with_their_run_and_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, data) = dying_plane_with_events(dir.path(), 3).await;

    // Every delivery dies: 3 events × 2 targets × 5 attempts.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let report = loop {
        let out = run(&data, &["--json", "status", "--window", "15m"], None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = parse(&out);
        if report["totals"]["dead"] == 6 && report["totals"]["deliveries_pending"] == 0 {
            break report;
        }
        assert!(std::time::Instant::now() < deadline, "{report:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(report["window"], "15m");
    assert_eq!(report["totals"]["attempts"], 30);
    assert_eq!(report["totals"]["success_rate"], 0.0);
    for g in report["groups"].as_array().unwrap() {
        assert_eq!(g["consecutive_failures"], 15, "{g:#}");
        assert_eq!(g["last_error_class"], "connect");
    }

    let out = run(&data, &["status", "--window", "15m"], None);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("DLQ 6"), "{text}");
    assert!(
        text.contains("2 failing, 0 degraded (worst first)"),
        "{text}"
    );
    let crm = text
        .lines()
        .find(|l| l.starts_with("crm "))
        .unwrap_or_else(|| panic!("no crm row: {text}"));
    for part in ["failing", "0.0%", "15", "connect"] {
        assert!(crm.contains(part), "{part} in {crm:?}");
    }

    let out = run(&data, &["status", "--by", "flow"], None);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("to-crm"));

    let out = run(&data, &["status", "--window", "2h"], None);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("15m, 1h, 24h, 7d"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
