//! `switchyard status [--window 1h] [--by target|endpoint|flow]`: the delivery health of the
//! profile's control plane at a glance — totals, then what is failing (worst first), then
//! the rest. `--json` prints the server's report as it came.

use clap::Args;
use switchyard_core::Console;
use switchyard_core::protocol_metrics::{
    DeliveryMetrics, MetricsGroup, MetricsGroupBy, MetricsWindow,
};

use crate::{Exit, emit, table};

#[derive(Args)]
pub struct StatusArgs {
    /// How far back: 15m, 1h, 24h or 7d.
    #[arg(long, default_value = "1h", value_parser = parse_window)]
    pub window: MetricsWindow,
    /// Group by target, endpoint or flow.
    #[arg(long = "by", default_value = "target", value_parser = parse_group_by)]
    pub group_by: MetricsGroupBy,
}

fn parse_window(text: &str) -> Result<MetricsWindow, String> {
    MetricsWindow::parse(text).ok_or_else(|| format!("{text:?} is not one of 15m, 1h, 24h, 7d"))
}

fn parse_group_by(text: &str) -> Result<MetricsGroupBy, String> {
    MetricsGroupBy::parse(text)
        .ok_or_else(|| format!("{text:?} is not one of target, endpoint, flow"))
}

pub async fn status(
    console: &Console,
    profile: &str,
    json: bool,
    args: StatusArgs,
) -> anyhow::Result<Exit> {
    let report = console
        .delivery_metrics(profile, args.window, args.group_by)
        .await?;
    emit(json, &report, |r| print(profile, r));
    Ok(Exit::Ok)
}

fn percent(rate: Option<f64>) -> String {
    rate.map(|r| format!("{:.1}%", r * 100.0))
        .unwrap_or_else(|| "-".into())
}

fn time(t: Option<&chrono::DateTime<chrono::Utc>>) -> String {
    t.map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| "-".into())
}

/// How a group stands: its last attempt failed (`failing`), some attempts in the window
/// failed but the last one succeeded (`degraded`), or nothing failed (`ok`).
pub fn state(g: &MetricsGroup) -> &'static str {
    if g.consecutive_failures.unwrap_or(0) > 0 || g.failing_since.is_some() {
        "failing"
    } else if g.figures.failures > 0 {
        "degraded"
    } else {
        "ok"
    }
}

fn severity(g: &MetricsGroup) -> u8 {
    match state(g) {
        "failing" => 2,
        "degraded" => 1,
        _ => 0,
    }
}

/// Failing groups first, then degraded ones, each worst first (lowest success rate, then
/// the longest run of failures, then the name); then the healthy ones by name.
pub fn ranked(groups: &[MetricsGroup]) -> Vec<&MetricsGroup> {
    let mut out: Vec<&MetricsGroup> = groups.iter().collect();
    out.sort_by(|a, b| {
        severity(b)
            .cmp(&severity(a))
            .then_with(|| {
                let rate = |g: &MetricsGroup| g.figures.success_rate.unwrap_or(0.0);
                rate(a).total_cmp(&rate(b))
            })
            .then_with(|| b.consecutive_failures.cmp(&a.consecutive_failures))
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

fn print(profile: &str, r: &DeliveryMetrics) {
    print_totals(profile, r);
    outln!();
    if r.groups.is_empty() {
        outln!(
            "no {} had an attempt in the last {}",
            r.group_by.as_str(),
            r.window.as_str()
        );
        return;
    }
    let count = |what: &str| r.groups.iter().filter(|g| state(g) == what).count();
    let (failing, degraded) = (count("failing"), count("degraded"));
    if failing + degraded == 0 {
        outln!("every {} delivered without a failure", r.group_by.as_str());
    } else {
        outln!("{failing} failing, {degraded} degraded (worst first):");
    }
    let rows: Vec<Vec<String>> = ranked(&r.groups).into_iter().map(group_row).collect();
    table::print(
        &[
            &r.group_by.as_str().to_uppercase(),
            "STATE",
            "SUCCESS",
            "ATTEMPTS",
            "FAILED IN A ROW",
            "FAILING SINCE",
            "P95",
            "LAST ERROR",
        ],
        &rows,
    );
}

/// The header: the window, then the profile-wide figures.
fn print_totals(profile: &str, r: &DeliveryMetrics) {
    let t = &r.totals;
    outln!(
        "{profile}: delivery health over the last {} (until {} UTC)",
        r.window.as_str(),
        r.until.format("%Y-%m-%d %H:%M:%S")
    );
    let latency = t
        .figures
        .latency_ms
        .map(|l| format!("p50 {:.0} ms, p95 {:.0} ms", l.p50, l.p95))
        .unwrap_or_else(|| "latency -".into());
    outln!(
        "  events accepted {} · attempts {} · success {} · {latency}",
        t.events_accepted,
        t.figures.attempts,
        percent(t.figures.success_rate)
    );
    outln!(
        "  pending {} (oldest {}) · in flight {} · DLQ {} · replays running {}",
        t.deliveries_pending,
        time(t.oldest_pending_at.as_ref()),
        t.deliveries_in_flight,
        t.dead,
        t.replays_running
    );
}

/// One group's table row; a group in state `ok` shows no last error.
fn group_row(g: &MetricsGroup) -> Vec<String> {
    let last_error = match (&g.last_error_class, &g.last_error) {
        _ if state(g) == "ok" => "-".into(),
        (Some(c), Some(e)) => format!("{c}: {e}"),
        (Some(c), None) => c.to_string(),
        (None, Some(e)) => e.clone(),
        (None, None) => "-".into(),
    };
    vec![
        g.name.clone(),
        state(g).into(),
        percent(g.figures.success_rate),
        g.figures.attempts.to_string(),
        g.consecutive_failures
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".into()),
        time(g.failing_since.as_ref()),
        g.figures
            .latency_ms
            .map(|l| format!("{:.0} ms", l.p95))
            .unwrap_or_else(|| "-".into()),
        last_error,
    ]
}
