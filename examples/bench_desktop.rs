//! `make bench-desktop`: launch-to-interactive time (warm) and memory (the app plus its WebKit
//! processes, RSS and PSS) of the release app on its sandbox, with the demo data alone and with
//! 10,000 more resources loaded, against the platform's floor measured in the same run: a
//! Tauri 2 app with an empty page (examples/floor_app), built the same way. The three are
//! launched in turn, round by round, so a busy moment of the machine falls on all of them.
//!
//! Needs a display (the make target runs it under `xvfb-run`) and the release binaries built
//! with `--features custom-protocol`. Targets (docs/console-performance.md): warm launch at
//! most the floor + 100 ms and PSS at most the floor + 30 MiB with 10,000 resources, medians
//! of `WARM_RUNS`.
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
const WARM_RUNS: usize = 5;

fn app_binary() -> PathBuf {
    std::env::var_os("SWITCHYARD_APP")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/switchyard-desktop")
        })
}

/// The empty Tauri app (examples/floor_app), beside this example's own binary.
fn floor_binary() -> PathBuf {
    std::env::var_os("SWITCHYARD_FLOOR_APP")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/examples/floor_app")
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
fn launch(binary: &Path, dir: &Path) -> Result<(u64, Child)> {
    let mut child = Command::new(binary)
        .env("SWITCHYARD_DATA_DIR", dir.join("switchyard"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
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

fn measure(child: &Child) -> Memory {
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

/// Memory after one launch: RSS and PSS summed (KiB), and (process, RSS, PSS) per process.
type Memory = (u64, u64, Vec<(String, u64, u64)>);

/// One of the measured apps: a binary on its own data dir, and its figures so far.
struct Case {
    label: &'static str,
    binary: PathBuf,
    dir: PathBuf,
    launch_ms: Vec<u64>,
    /// (RSS, PSS, breakdown) after each warm launch.
    memory: Vec<Memory>,
}

impl Case {
    fn new(label: &'static str, binary: PathBuf, dir: &Path) -> Self {
        let dir = dir.to_owned();
        Self {
            label,
            binary,
            dir,
            launch_ms: Vec::new(),
            memory: Vec::new(),
        }
    }

    /// The cold launch: fills the cache (fully, before it is closed), not measured.
    fn cold(&self) -> Result<()> {
        let (_, mut first) = launch(&self.binary, &self.dir)?;
        std::thread::sleep(Duration::from_secs(4));
        stop(&mut first);
        Ok(())
    }

    /// One warm launch, and the memory once it settled.
    fn warm(&mut self) -> Result<()> {
        let (ms, mut child) = launch(&self.binary, &self.dir)?;
        self.launch_ms.push(ms);
        std::thread::sleep(Duration::from_secs(4));
        self.memory.push(measure(&child));
        stop(&mut child);
        std::thread::sleep(Duration::from_millis(500));
        Ok(())
    }

    /// Medians: the launch, and the run whose PSS is the median (its RSS and breakdown too).
    fn figures(&self) -> Figures {
        let mut launch_ms = self.launch_ms.clone();
        launch_ms.sort_unstable();
        let mut by_pss: Vec<_> = self.memory.iter().collect();
        by_pss.sort_by_key(|m| m.1);
        let (rss, pss, breakdown) = by_pss[by_pss.len() / 2].clone();
        Figures {
            launch_ms,
            rss_kib: rss,
            pss_kib: pss,
            processes: breakdown.len(),
            breakdown,
        }
    }
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
    println!(
        "{label:<28} warm launch median {:>5} ms (runs {:?})   RSS {:>6.1} MiB   PSS {:>6.1} MiB   ({} processes)",
        median(f),
        f.launch_ms,
        mib(f.rss_kib),
        mib(f.pss_kib),
        f.processes
    );
    for (name, rss, pss) in &f.breakdown {
        println!(
            "    {name:<24} RSS {:>6.1} MiB   PSS {:>6.1} MiB",
            mib(*rss),
            mib(*pss)
        );
    }
}

fn median(f: &Figures) -> u64 {
    f.launch_ms[f.launch_ms.len() / 2]
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The console's cost over the floor, and whether the targets hold.
fn compare(floor: &Figures, baseline: &Figures, loaded: &Figures) {
    let over = |f: &Figures| {
        (
            median(f) as i64 - median(floor) as i64,
            mib(f.pss_kib) - mib(floor.pss_kib),
        )
    };
    for (label, f) in [("demo data", baseline), ("10,000 resources", loaded)] {
        let (ms, pss) = over(f);
        println!(
            "over the floor, {label:<17} launch {ms:+} ms ({:.2}x), PSS {pss:+.1} MiB ({:.2}x)",
            median(f) as f64 / median(floor).max(1) as f64,
            f.pss_kib as f64 / floor.pss_kib.max(1) as f64
        );
    }
    let (ms, pss) = over(loaded);
    println!(
        "targets with 10,000 resources: launch <= floor + 100 ms: {}; PSS <= floor + 30 MiB: {}",
        if ms <= 100 { "met" } else { "MISSED" },
        if pss <= 30.0 { "met" } else { "MISSED" }
    );
}

/// Floor, demo data and 10,000 resources, launched in turn `WARM_RUNS` times.
fn run_rounds(cases: &mut [Case]) -> Result<()> {
    for case in cases.iter() {
        case.cold()?;
    }
    for _ in 0..WARM_RUNS {
        for case in cases.iter_mut() {
            case.warm()?;
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    for binary in [app_binary(), floor_binary()] {
        if !binary.exists() {
            bail!(
                "{} is missing: `make bench-desktop` builds it (release, --features custom-protocol)",
                binary.display()
            );
        }
    }
    let dirs = [
        tempfile::tempdir()?,
        tempfile::tempdir()?,
        tempfile::tempdir()?,
    ];
    if std::env::var_os("BENCH_KEEP_DIRS").is_some() {
        for d in &dirs {
            eprintln!("BENCH_KEEP_DIRS: keeping {}", d.path().display());
        }
    }
    load_resources(dirs[2].path()).await?;
    let mut cases = [
        Case::new("floor: empty Tauri app", floor_binary(), dirs[0].path()),
        Case::new("baseline: demo data (13)", app_binary(), dirs[1].path()),
        Case::new("with 10,000 more resources", app_binary(), dirs[2].path()),
    ];
    let mut cases =
        tokio::task::spawn_blocking(move || run_rounds(&mut cases).map(|()| cases)).await??;
    println!(
        "Switchyard desktop {} against {} (under Xvfb, medians of {WARM_RUNS} warm launches):",
        app_binary().display(),
        floor_binary().display()
    );
    let figures: Vec<Figures> = cases.iter_mut().map(|c| c.figures()).collect();
    for (case, f) in cases.iter().zip(&figures) {
        print(case.label, f);
    }
    compare(&figures[0], &figures[1], &figures[2]);
    if std::env::var_os("BENCH_KEEP_DIRS").is_some() {
        for d in dirs {
            let _ = d.keep();
        }
    }
    Ok(())
}
