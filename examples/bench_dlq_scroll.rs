//! `make bench-dlq-scroll`: frame times while scrolling the DLQ explorer of the real release
//! app, measured in the webview, with 100,000 dead deliveries on the server.
//!
//! The sandbox's database gets 100,000 dead deliveries (plus the demo data), then the release
//! app is driven over WebDriver (tauri-driver) under Xvfb: it opens the DLQ, a
//! requestAnimationFrame probe records every frame interval, first while idle (the baseline,
//! same run), then while the table's scroll container is scrolled continuously (a fixed step
//! every frame, fetching further pages of 200 as it goes). Nothing talks to the page while a
//! phase runs. Also printed: time from opening the DLQ to the first row (in the webview) and the
//! memory (RSS/PSS) of the app and its WebKit processes after scrolling.
//!
//! Needs a display (the make target runs it under `xvfb-run`), tauri-driver
//! (scripts/setup.sh), and the release binary built with `--features custom-protocol`.
//! `bench_dlq_scroll [ROWS] [SCROLL_SECONDS] [PX_PER_FRAME]`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use switchyard_control_plane::demo::DEMO_TENANT;
use switchyard_control_plane::sandbox::Sandbox;
use switchyard_test_support::driver::{stop, tauri_driver, wait_listening};
use thirtyfour::prelude::*;

/// Not the e2e tests' 4444/4445, so a test run elsewhere on the machine does not collide.
const DRIVER_PORT: u16 = 4454;
const IDLE_SECONDS: u64 = 5;
/// The app and its WebKit processes together, after scrolling the whole DLQ (docs/dlq.md).
const PSS_TARGET_MIB: u64 = 350;

fn app_binary() -> PathBuf {
    std::env::var_os("SWITCHYARD_APP")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/switchyard-desktop")
        })
}

/// Seeds `rows` dead deliveries (5 targets × 5 error classes, one a second, newest now) into
/// the sandbox database the app will open, after the sandbox created it with its demo data.
async fn seed(data_dir: &Path, rows: u64) -> Result<()> {
    let sandbox_dir = data_dir.join("sandbox");
    let sandbox = Sandbox::start(&sandbox_dir).await?;
    sandbox.server.stop().await?;
    drop(sandbox.demo);
    let url = format!("sqlite://{}", sandbox_dir.join("sandbox-cp.db").display());
    // The fixture rows go straight into the sandbox's database file (bench data, written once).
    let writer = sqlx::SqlitePool::connect(&url).await?;
    let now = chrono::Utc::now().timestamp_millis();
    let started = Instant::now();
    sqlx::query(
        "WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ? - 1) \
         INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, state, \
           attempts_made, max_attempts, created_at, updated_at, dead_at, error_class, last_status) \
         SELECT printf('dlv_bench%012d', i), ?, printf('evt_bench%012d', i), \
           CASE i % 3 WHEN 0 THEN 'order.paid' WHEN 1 THEN 'order.refunded' ELSE 'invoice.sent' END, \
           'bench-ep-' || (i % 4), 'bench-flow-' || (i % 10), 'bench-target-' || (i % 5), 'async_inline', \
           'dead', 5, 5, ? - i * 1000, ? - i * 1000, ? - i * 1000, \
           CASE i % 5 WHEN 0 THEN 'http_5xx' WHEN 1 THEN 'http_4xx' WHEN 2 THEN 'timeout' WHEN 3 THEN 'connect' ELSE 'tls' END, \
           CASE i % 5 WHEN 0 THEN 503 WHEN 1 THEN 404 ELSE NULL END \
         FROM seq",
    )
    .bind(rows as i64)
    .bind(DEMO_TENANT)
    .bind(now)
    .bind(now)
    .bind(now)
    .execute(&writer)
    .await?;
    sqlx::query("ANALYZE").execute(&writer).await?;
    writer.close().await;
    eprintln!(
        "seeded {rows} dead deliveries in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs `script` until it returns a truthy value, for up to `limit`.
async fn wait_js(driver: &WebDriver, what: &str, script: &str, limit: Duration) -> Result<Value> {
    let started = Instant::now();
    loop {
        let value = driver.execute(script, vec![]).await?.json().clone();
        if !value.is_null() && value != json!(false) {
            return Ok(value);
        }
        if started.elapsed() > limit {
            bail!("waited {limit:?} for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The probe: every animation frame's interval (ms) goes into the current phase's list. While
/// `scrolling`, each frame also moves the DLQ table down by `step` px (a steady wheel scroll).
const PROBE: &str = r#"
const step = arguments[0];
const el = document.querySelector("[data-testid='dlq-scroll']");
window.__bench = { phase: null, frames: {}, js: {}, step, el, last: null, t0: null };
// The app's own work per scroll event: the virtualizer re-renders the rows synchronously in
// its scroll listener (registered before this probe's, so it runs between these two).
document.addEventListener("scroll", (e) => {
  if (e.target === window.__bench.el) window.__bench.t0 = performance.now();
}, true);
el.addEventListener("scroll", () => {
  const b = window.__bench;
  if (b.phase && b.t0 !== null) (b.js[b.phase] ||= []).push(performance.now() - b.t0);
  b.t0 = null;
});
function tick(t) {
  const b = window.__bench;
  if (b.phase) {
    if (b.last !== null) (b.frames[b.phase] ||= []).push(t - b.last);
    b.last = t;
    if (b.phase.startsWith("scroll")) b.el.scrollTop += b.step;
  }
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
return !!el;
"#;

/// The control: a static copy of the rendered rows (no React, no virtualizer, no fetching),
/// repeated into a tall plain scroll box laid over the table, scrolled the same way. What it
/// costs is what this webview needs to scroll and paint such rows at all.
const STATIC_COPY: &str = r#"
const b = window.__bench;
const r = b.el.getBoundingClientRect();
const box = document.createElement("div");
box.style.cssText = `position:fixed;left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px;overflow:auto;z-index:10000;background:var(--mantine-color-body)`;
const rows = [...b.el.querySelectorAll("[data-testid='dlq-row']")].map((e) => e.outerHTML).join("");
box.innerHTML = rows.repeat(80);
for (const row of box.children) { row.style.position = "relative"; row.style.transform = "none"; }
document.body.appendChild(box);
b.table = b.el;
b.el = box;
return box.children.length;
"#;

struct Stats {
    frames: usize,
    p50: f64,
    p99: f64,
    max: f64,
    over_50: usize,
    seconds: f64,
}

fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    Stats {
        frames: v.len(),
        p50: at(0.5),
        p99: at(0.99),
        max: *v.last().unwrap_or(&0.0),
        over_50: v.iter().filter(|f| **f > 50.0).count(),
        seconds: v.iter().sum::<f64>() / 1000.0,
    }
}

fn print(label: &str, s: &Stats) {
    println!(
        "{label:<34} {:>5} frames in {:>5.1} s ({:>4.1} fps)  p50 {:>6.1} ms  p99 {:>6.1} ms  max {:>6.1} ms  frames > 50 ms: {}",
        s.frames,
        s.seconds,
        s.frames as f64 / s.seconds.max(0.001),
        s.p50,
        s.p99,
        s.max,
        s.over_50
    );
}

/// Runs one phase for `seconds` without touching the page, then returns its frame intervals.
async fn phase(driver: &WebDriver, name: &str, seconds: u64) -> Result<Vec<f64>> {
    driver
        .execute(
            "window.__bench.last = null; window.__bench.phase = arguments[0]; return true;",
            vec![json!(name)],
        )
        .await?;
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let frames = driver
        .execute(
            "const b = window.__bench; b.phase = null; return b.frames[arguments[0]] || [];",
            vec![json!(name)],
        )
        .await?
        .convert::<Vec<f64>>()?;
    if frames.is_empty() {
        bail!("no animation frames recorded while {name}");
    }
    Ok(frames)
}

/// The app's process (found by its executable) and every process below it.
fn app_processes() -> Vec<u32> {
    let binary = std::fs::canonicalize(app_binary()).unwrap_or_else(|_| app_binary());
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).ok().as_ref() == Some(&binary))
        .collect();
    let mut i = 0;
    while i < pids.len() {
        let pid = pids[i];
        for task in std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            pids.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
        i += 1;
    }
    pids
}

/// RSS and PSS (KiB) summed over `pids`.
fn memory(pids: &[u32]) -> (u64, u64) {
    let (mut rss, mut pss) = (0, 0);
    for pid in pids {
        let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
        for line in text.lines() {
            let kib = || {
                line.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            if line.starts_with("Rss:") {
                rss += kib();
            } else if line.starts_with("Pss:") {
                pss += kib();
            }
        }
    }
    (rss, pss)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The DLQ as opened: how long the first row took (in the webview), and the server's total.
struct Opened {
    first_row_ms: f64,
    total: Value,
}

/// Waits for the app to be online, opens the DLQ and times it to the first row, in the
/// webview, then waits for the DLQ total.
async fn open_dlq(driver: &WebDriver) -> Result<Opened> {
    wait_js(
        driver,
        "the app to be online",
        "const s = document.querySelector(\"[data-testid='status-online']\"); return s && s.textContent.includes('Online');",
        Duration::from_secs(60),
    )
    .await?;
    let first_row_ms = driver
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
            const t0 = performance.now();
            document.querySelector("[data-testid='nav-dlq']").click();
            (function wait() {
              if (document.querySelector("[data-testid='dlq-row']")) done(performance.now() - t0);
              else setTimeout(wait, 5);
            })();"#,
            vec![],
        )
        .await?
        .convert::<f64>()?;
    let total = wait_js(
        driver,
        "the DLQ total",
        "const t = document.querySelector(\"[data-testid='dlq-total']\"); const n = t && parseInt(t.textContent, 10); return n > 0 ? n : null;",
        Duration::from_secs(30),
    )
    .await?;
    Ok(Opened {
        first_row_ms,
        total,
    })
}

/// Installs PROBE, moving the table `step` px a frame while scrolling.
async fn install_probe(driver: &WebDriver, step: u32) -> Result<()> {
    let ok = driver
        .execute(PROBE, vec![json!(step)])
        .await?
        .convert::<bool>()?;
    if !ok {
        bail!("the DLQ table's scroll container is not on the page");
    }
    Ok(())
}

/// The DLQ's "loaded" line (rows fetched so far).
async fn loaded(driver: &WebDriver) -> Result<String> {
    let loaded = "return document.querySelector(\"[data-testid='dlq-loaded']\").textContent;";
    Ok(driver.execute(loaded, vec![]).await?.convert::<String>()?)
}

/// The scrolling phase's frames and the peak PSS sampled while it ran.
struct Scrolled {
    frames: Stats,
    pss_peak: u64,
}

/// Scrolls for `seconds` while a thread samples the processes' PSS every 0.5 s (outside the
/// webview, so the page is not touched).
async fn scroll(driver: &WebDriver, seconds: u64) -> Result<Scrolled> {
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(memory(&app_processes()).1);
                std::thread::sleep(Duration::from_millis(500));
            }
            peak
        })
    };
    let scrolling = phase(driver, "scrolling", seconds).await;
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let pss_peak = sampler.join().unwrap_or(0);
    Ok(Scrolled {
        frames: stats(scrolling?),
        pss_peak,
    })
}

/// The page and the processes right after scrolling, before the control replaces the table.
struct AfterScroll {
    loaded: String,
    /// The app's JS time per scroll event (ms).
    js: Vec<f64>,
    rows_dom: u64,
    scroll_top: u64,
    pids: Vec<u32>,
    rss: u64,
    pss: u64,
}

async fn after_scroll(driver: &WebDriver) -> Result<AfterScroll> {
    let loaded = loaded(driver).await?;
    let js = driver
        .execute("return window.__bench.js.scrolling || [];", vec![])
        .await?
        .convert::<Vec<f64>>()?;
    let rows_dom = driver
        .execute(
            "return document.querySelectorAll(\"[data-testid='dlq-row']\").length;",
            vec![],
        )
        .await?
        .convert::<u64>()?;
    let scroll_top = driver
        .execute("return Math.round(window.__bench.el.scrollTop);", vec![])
        .await?
        .convert::<u64>()?;
    let pids = app_processes();
    let (rss, pss) = memory(&pids);
    Ok(AfterScroll {
        loaded,
        js,
        rows_dom,
        scroll_top,
        pids,
        rss,
        pss,
    })
}

/// Everything measured, for the report.
struct Measured {
    opened: Opened,
    before: String,
    pss_before: u64,
    idle: Stats,
    step: u32,
    scrolled: Scrolled,
    after: AfterScroll,
    /// Rows in STATIC_COPY's box.
    copied: u64,
    control: Stats,
}

async fn measure(driver: &WebDriver, scroll_seconds: u64, step: u32) -> Result<()> {
    let opened = open_dlq(driver).await?;
    install_probe(driver, step).await?;
    let before = loaded(driver).await?;
    let pss_before = memory(&app_processes()).1;
    println!(
        "load average (1, 5, 15 min) at the start: {} ({} cores)",
        load(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let idle = stats(phase(driver, "idle", IDLE_SECONDS).await?);
    let scrolled = scroll(driver, scroll_seconds).await?;
    let after = after_scroll(driver).await?;
    let copied = driver
        .execute(STATIC_COPY, vec![])
        .await?
        .convert::<u64>()?;
    let control = stats(phase(driver, "scroll-static", scroll_seconds.min(10)).await?);
    report(&Measured {
        opened,
        before,
        pss_before,
        idle,
        step,
        scrolled,
        after,
        copied,
        control,
    });
    Ok(())
}

fn report(m: &Measured) {
    println!(
        "Switchyard desktop {} (release, sandbox, under Xvfb):",
        app_binary().display()
    );
    println!("DLQ total on the server (badge):   {}", m.opened.total);
    println!(
        "open DLQ → first row rendered:      {:.0} ms (in the webview)",
        m.opened.first_row_ms
    );
    println!("before scrolling: {}", m.before);
    print("baseline: idle (not scrolling)", &m.idle);
    print(
        &format!("scrolling {} px/frame", m.step),
        &m.scrolled.frames,
    );
    print(
        &format!("control: static copy ({} rows)", m.copied),
        &m.control,
    );
    let after = &m.after;
    if !after.js.is_empty() {
        let j = stats(after.js.clone());
        println!(
            "app JS per scroll event (virtualizer + React render): {} events  p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms",
            j.frames, j.p50, j.p99, j.max
        );
    }
    println!(
        "after scrolling:  {}; {} rows in the DOM; scrolled {} px",
        after.loaded, after.rows_dom, after.scroll_top
    );
    report_memory(m);
    println!("load average (1, 5, 15 min) at the end: {}", load());
    report_targets(m);
}

fn report_memory(m: &Measured) {
    let after = &m.after;
    println!(
        "memory before scrolling: PSS {:.1} MiB; after: RSS {:.1} MiB, PSS {:.1} MiB ({} processes: app + WebKit)",
        m.pss_before as f64 / 1024.0,
        after.rss as f64 / 1024.0,
        after.pss as f64 / 1024.0,
        after.pids.len()
    );
    println!(
        "memory while scrolling: peak PSS {:.1} MiB (sampled every 0.5 s)",
        m.scrolled.pss_peak as f64 / 1024.0
    );
    for pid in &after.pids {
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        println!(
            "  {:<24} PSS {:.1} MiB",
            name.trim(),
            memory(&[*pid]).1 as f64 / 1024.0
        );
    }
}

fn report_targets(m: &Measured) {
    let under = |pss: u64| pss < PSS_TARGET_MIB * 1024;
    println!(
        "target: PSS under {PSS_TARGET_MIB} MiB after scrolling: {} (peak while scrolling: {})",
        if under(m.after.pss) { "met" } else { "MISSED" },
        if under(m.scrolled.pss_peak) {
            "under"
        } else {
            "over"
        }
    );
    println!(
        "target: no frame longer than 50 ms while scrolling: {}",
        if m.scrolled.frames.over_50 == 0 {
            "met"
        } else {
            "MISSED"
        }
    );
}

#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000);
    let scroll_seconds: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(20);
    let step: u32 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(100);
    if !app_binary().exists() {
        bail!(
            "{} is missing: build it with `cargo build --release --features custom-protocol`",
            app_binary().display()
        );
    }
    let dirs = tempfile::tempdir()?;
    for sub in ["data", "config", "cache", "switchyard"] {
        std::fs::create_dir_all(dirs.path().join(sub))?;
    }
    seed(&dirs.path().join("switchyard"), rows).await?;
    let mut driver_process = Command::new(tauri_driver())
        .args([
            "--port",
            &DRIVER_PORT.to_string(),
            "--native-port",
            &(DRIVER_PORT + 1).to_string(),
        ])
        .env("XDG_DATA_HOME", dirs.path().join("data"))
        .env("XDG_CONFIG_HOME", dirs.path().join("config"))
        .env("XDG_CACHE_HOME", dirs.path().join("cache"))
        .env("SWITCHYARD_DATA_DIR", dirs.path().join("switchyard"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting tauri-driver (scripts/setup.sh installs it)")?;
    let result = async {
        ensure!(
            wait_listening(DRIVER_PORT).await,
            "tauri-driver did not listen on port {DRIVER_PORT}"
        );
        // See the `rustls` dev-dependency in Cargo.toml.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut caps = serde_json::Map::new();
        caps.insert(
            "tauri:options".into(),
            json!({ "application": app_binary() }),
        );
        let driver = WebDriver::new(format!("http://127.0.0.1:{DRIVER_PORT}"), caps).await?;
        let measured = measure(&driver, scroll_seconds, step).await;
        let _ = driver.quit().await;
        measured
    }
    .await;
    stop(&mut driver_process);
    result
}
