//! A real scrape after traffic passes `promtool check metrics` (Prometheus's own linter, from
//! the Debian package `prometheus`, installed by scripts/setup.sh), and carries the build and
//! the standard `process_*` metrics. The same text with a metric renamed against the naming
//! rules fails the same check: the lint is live.

use std::io::Write;
use std::process::{Command, Stdio};

use switchyard_control_plane::Server;
use switchyard_control_plane::telemetry::MetricsConfig;

use crate::support::*;

/// `promtool check metrics` on `text`: its exit code and what it said.
fn promtool(text: &str) -> (Option<i32>, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("promtool not found ({e}): run scripts/setup.sh (Debian package prometheus)")
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

#[tokio::test]
async fn a_scrape_after_traffic_passes_promtool_and_reports_build_and_process() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(config(dir.path(), MetricsConfig::default()))
        .await
        .unwrap();
    let receiver = receiver();
    routes(&server, &receiver).await;
    for endpoint in ["ep-good", "ep-bad"] {
        assert_eq!(submit(&server, endpoint, None).await.0, 202);
    }
    let (text, parsed) = scrape_until(&server.metrics_url(), None, "two deliveries", |s| {
        [("outcome", "succeeded"), ("outcome", "dead")]
            .iter()
            .all(|l| value(s, "switchyard_deliveries_finished_total", &[*l]) >= 1.0)
    })
    .await;

    let (code, said) = promtool(&text);
    assert_eq!((code, said.trim()), (Some(0), ""), "{text}");

    let build = [
        ("version", switchyard_build_info::VERSION),
        ("build_date", switchyard_build_info::BUILD_DATE),
    ];
    assert_eq!(value(&parsed, "switchyard_build_info", &build), 1.0);
    assert!(value(&parsed, "process_resident_memory_bytes", &[]) > 1e6);
    assert!(value(&parsed, "process_open_fds", &[]) >= 3.0);
    assert!(value(&parsed, "process_max_fds", &[]) >= value(&parsed, "process_open_fds", &[]));
    assert!(value(&parsed, "process_cpu_seconds_total", &[]) > 0.0);
    assert!(value(&parsed, "process_threads", &[]) >= 1.0);
    let started = value(&parsed, "process_start_time_seconds", &[]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(started <= now && started > now - 3600.0, "{started}");

    // The name this counter had before: promtool refuses it, so the check above can fail.
    let renamed = text.replace(
        "switchyard_metrics_store_read_failures_total",
        "switchyard_metrics_gauge_failures_total",
    );
    let (code, said) = promtool(&renamed);
    assert_ne!(code, Some(0), "{said}");
    assert!(
        said.contains(
            "switchyard_metrics_gauge_failures_total metric name should not include type 'gauge'"
        ),
        "{said}"
    );
}
