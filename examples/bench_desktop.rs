//! `make bench-desktop`: launch-to-interactive time (warm) and memory (the app plus its WebKit
//! processes, RSS and PSS) of the release app on its sandbox — first with the demo data alone
//! (the baseline, same run), then with 10,000 more resources loaded.
//!
//! Needs a display (the make target runs it under `xvfb-run`) and the release binary built with
//! `--features custom-protocol`. Targets (docs/desktop.md): warm launch under 0.5 s, PSS under 250 MiB with 10,000 resources.
//! `BENCH_KEEP_DIRS=1` keeps both data dirs (printed) to rerun the app on them by hand.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;
use switchyard_control_plane::demo::DEMO_TOKEN;
use switchyard_control_plane::sandbox::Sandbox;
use switchyard_test_support::driver::stop;

const RESOURCES: usize = 10_000;
const WARM_RUNS: usize = 3;

fn app_binary() -> PathBuf {
    std::env::var_os("SWITCHYARD_APP")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/switchyard-desktop")
        })
}

struct Figures {
    launch_ms: Vec<u64>,
    rss_kib: u64,
    pss_kib: u64,
    processes: usize,
    /// (process name, RSS KiB, PSS KiB) per process.
    breakdown: Vec<(String, u64, u64)>,
}

/// Starts the app on `dir`, waits for "launch: interactive after N ms", lets it settle, and
/// measures memory over the app and every process it started.
fn launch(dir: &Path) -> Result<(u64, Child)> {
    let mut child = Command::new(app_binary())
        .env("SWITCHYARD_DATA_DIR", dir.join("switchyard"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", app_binary().display()))?;
    let stderr = child.stderr.take().context("no stderr")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut phases = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(phase) = line.split("launch: ").nth(1) {
                phases.push(phase.to_owned());
            }
            if let Some(rest) = line.split("launch: interactive after ").nth(1) {
                let ms = rest
                    .trim_end_matches(" ms")
                    .trim()
                    .parse::<u64>()
                    .unwrap_or(0);
                let _ = tx.send((ms, std::mem::take(&mut phases)));
            }
        }
    });
    let ms = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok((ms, phases)) => {
            // Each phase the app and its webview logged on the way (docs/desktop.md).
            println!("    launch {ms} ms: {}", phases.join("; "));
            ms
        }
        Err(_) => {
            stop(&mut child);
            bail!("the app never reported it was interactive");
        }
    };
    Ok((ms, child))
}

fn measure(child: &Child) -> (u64, u64, Vec<(String, u64, u64)>) {
    let mut pids = vec![child.id()];
    let mut i = 0;
    while i < pids.len() {
        pids.extend(children_of(pids[i]));
        i += 1;
    }
    let (mut rss, mut pss, mut breakdown) = (0, 0, Vec::new());
    for pid in &pids {
        let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
        let field = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let (r, p) = (field("Rss:"), field("Pss:"));
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        breakdown.push((name.trim().to_owned(), r, p));
        rss += r;
        pss += p;
    }
    (rss, pss, breakdown)
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for task in tasks.flatten() {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}

/// One cold launch (fills the cache), then `WARM_RUNS` warm ones; memory after the last.
fn run_case(dir: &Path) -> Result<Figures> {
    let (_, mut first) = launch(dir)?;
    // Let the first launch refresh its cache fully before it is closed.
    std::thread::sleep(Duration::from_secs(4));
    stop(&mut first);
    let mut launch_ms = Vec::new();
    let mut memory = (0, 0, Vec::new());
    for run in 0..WARM_RUNS {
        let (ms, mut child) = launch(dir)?;
        launch_ms.push(ms);
        if run + 1 == WARM_RUNS {
            std::thread::sleep(Duration::from_secs(4));
            memory = measure(&child);
        }
        stop(&mut child);
        std::thread::sleep(Duration::from_millis(500));
    }
    launch_ms.sort_unstable();
    Ok(Figures {
        launch_ms,
        rss_kib: memory.0,
        pss_kib: memory.1,
        processes: memory.2.len(),
        breakdown: memory.2,
    })
}

/// Creates `RESOURCES` more endpoints in the sandbox's database, through its API.
async fn load_resources(dir: &Path) -> Result<()> {
    let sandbox = Sandbox::start(&dir.join("switchyard/sandbox")).await?;
    let client = reqwest::Client::new();
    let url = sandbox.url();
    let started = Instant::now();
    create_endpoints(&client, &url, RESOURCES).await?;
    eprintln!(
        "loaded {RESOURCES} endpoints in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    sandbox.server.stop().await?;
    Ok(())
}

async fn create_endpoints(client: &reqwest::Client, url: &str, n: usize) -> Result<()> {
    let mut statuses = Vec::with_capacity(n);
    let mut set = tokio::task::JoinSet::new();
    for i in 0..n {
        let client = client.clone();
        let url = url.to_owned();
        set.spawn(async move {
            client
                .post(format!("{url}/v1/endpoints"))
                .bearer_auth(DEMO_TOKEN)
                .header("idempotency-key", format!("bench-{i}"))
                .json(&json!({"name": format!("bench-endpoint-{i:05}"), "spec": {"description": format!("Bench endpoint {i}"), "event_types": ["bench.created"]}}))
                .send()
                .await
                .map(|r| r.status().as_u16())
        });
        if set.len() >= 32 {
            statuses.push(set.join_next().await.context("join")???);
        }
    }
    while let Some(r) = set.join_next().await {
        statuses.push(r??);
    }
    if let Some(bad) = statuses.iter().find(|s| **s != 201) {
        bail!("creating bench endpoints answered HTTP {bad}");
    }
    Ok(())
}

fn print(label: &str, f: &Figures) {
    let median = f.launch_ms[f.launch_ms.len() / 2];
    println!(
        "{label:<28} warm launch median {median:>5} ms (runs {:?})   RSS {:>6.1} MiB   PSS {:>6.1} MiB   ({} processes)",
        f.launch_ms,
        f.rss_kib as f64 / 1024.0,
        f.pss_kib as f64 / 1024.0,
        f.processes
    );
    for (name, rss, pss) in &f.breakdown {
        println!(
            "    {name:<24} RSS {:>6.1} MiB   PSS {:>6.1} MiB",
            *rss as f64 / 1024.0,
            *pss as f64 / 1024.0
        );
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    if !app_binary().exists() {
        bail!(
            "{} is missing: build it with `cargo build --release --features custom-protocol`",
            app_binary().display()
        );
    }
    let base_dir = tempfile::tempdir()?;
    let big_dir = tempfile::tempdir()?;
    if std::env::var_os("BENCH_KEEP_DIRS").is_some() {
        eprintln!(
            "BENCH_KEEP_DIRS: keeping {} and {}",
            base_dir.path().display(),
            big_dir.path().display()
        );
    }
    let baseline = tokio::task::spawn_blocking({
        let dir = base_dir.path().to_owned();
        move || run_case(&dir)
    })
    .await??;
    load_resources(big_dir.path()).await?;
    let loaded = tokio::task::spawn_blocking({
        let dir = big_dir.path().to_owned();
        move || run_case(&dir)
    })
    .await??;
    println!(
        "Switchyard desktop {} (sandbox, under Xvfb):",
        app_binary().display()
    );
    print("baseline: demo data (13)", &baseline);
    print("with 10,000 more resources", &loaded);
    let median = |f: &Figures| f.launch_ms[f.launch_ms.len() / 2] as f64;
    println!(
        "ratios 10k / baseline: launch {:.2}x, RSS {:.2}x, PSS {:.2}x",
        median(&loaded) / median(&baseline).max(1.0),
        loaded.rss_kib as f64 / baseline.rss_kib.max(1) as f64,
        loaded.pss_kib as f64 / baseline.pss_kib.max(1) as f64
    );
    let ok_launch = median(&loaded) < 500.0;
    let ok_pss = (loaded.pss_kib as f64 / 1024.0) < 250.0;
    println!(
        "targets: warm launch < 500 ms: {}; PSS < 250 MiB: {}",
        if ok_launch { "met" } else { "MISSED" },
        if ok_pss { "met" } else { "MISSED" }
    );
    if std::env::var_os("BENCH_KEEP_DIRS").is_some() {
        let _ = (base_dir.keep(), big_dir.keep());
    }
    Ok(())
}
