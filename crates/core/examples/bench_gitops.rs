//! `cargo run --release -p switchyard-core --example bench_gitops` (`make bench-gitops`)
//!
//! The time to plan a commit of 1,000 and of 10,000 manifests (3 of them changed since the
//! last apply) against a control plane holding those resources, on loopback. Printed from one
//! run, with its parts (reading the commit, parsing and validating, the whole plan) and the
//! baseline of the same run: a raw paginated listing of the same resources with reqwest
//! (the network and JSON floor no plan can go under). Rounds interleave plan and baseline.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_core::gitops::{PlanOptions, SourceSpec, manifest, repo};
use switchyard_core::{Console, ConsoleOptions, NewProfile, SyncOptions};

const TOKEN: &str = "bench-token-0123456789";
const ROUNDS: usize = 3;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `n` endpoints and targets in files of 100 documents; `changed` get another description.
fn write_manifests(dir: &Path, n: usize, changed: &[usize]) {
    let deploy = dir.join("deploy");
    std::fs::create_dir_all(&deploy).unwrap();
    for f in 0..n.div_ceil(100) {
        let mut text = String::new();
        for i in f * 100..((f + 1) * 100).min(n) {
            let what = if changed.contains(&i) {
                "changed"
            } else {
                "as planned"
            };
            if i % 2 == 0 {
                text.push_str(&format!(
                    "kind: endpoint\nname: e{i:05}\nspec:\n  description: \"endpoint {i}, {what}\"\n  event_types: [order.created, order.paid]\n---\n"
                ));
            } else {
                text.push_str(&format!(
                    "kind: target\nname: t{i:05}\nspec:\n  url: https://t{i}.example/hook?{what}\n  headers:\n    X-Team: team-{}\n---\n",
                    i % 7
                ));
            }
        }
        std::fs::write(deploy.join(format!("part-{f:03}.yaml")), text).unwrap();
    }
}

async fn raw_listing(base: &str) -> usize {
    let client = reqwest::Client::new();
    let mut n = 0;
    for kind in ["endpoints", "targets", "flows"] {
        let mut cursor: Option<String> = None;
        loop {
            let mut url = format!("{base}/v1/{kind}?limit=500");
            if let Some(c) = &cursor {
                url.push_str(&format!("&cursor={c}"));
            }
            let page: Value = client
                .get(url)
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            n += page["items"].as_array().map_or(0, Vec::len);
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
    }
    n
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn bench(n: usize) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut tenants = Tenants::default();
    tenants.add("bench", TOKEN);
    let config = ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        format!("sqlite://{}", dir.path().join("cp.db").display()),
        tenants,
    )
    .local_only();
    let server = Server::start(config).await?;
    let console = Console::open(ConsoleOptions::new(dir.path().join("console"), "bench")).await?;
    console
        .add_profile(NewProfile {
            name: "p".into(),
            url: server.url(),
            token: TOKEN.into(),
        })
        .await?;
    let repo_dir = dir.path().join("config");
    std::fs::create_dir_all(&repo_dir)?;
    git(&repo_dir, &["init", "-q", "-b", "main"]);
    write_manifests(&repo_dir, n, &[]);
    git(&repo_dir, &["add", "-A"]);
    git(&repo_dir, &["commit", "-q", "-m", "all"]);
    let source = SourceSpec {
        repo: repo_dir.display().to_string(),
        git_ref: "HEAD".into(),
        path: "deploy".into(),
    };
    let started = Instant::now();
    let plan = console
        .gitops_plan("p", &source, PlanOptions::default())
        .await?;
    console.gitops_apply(&plan).await?;
    let sync = SyncOptions {
        until_drained: true,
        timeout_ms: Some(600_000),
        refresh_after: true,
    };
    console.sync("p", sync).await?;
    let first_apply = started.elapsed().as_secs_f64();

    write_manifests(&repo_dir, n, &[1, n / 2, n - 1]);
    git(&repo_dir, &["commit", "-q", "-am", "three changed"]);
    let (mut plan_s, mut raw_s, mut read_s, mut parse_s) = (vec![], vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        assert_eq!(raw_listing(&server.url()).await, n);
        raw_s.push(t.elapsed().as_secs_f64());
        let resolved = repo::resolve(&source)?;
        let t = Instant::now();
        let files = repo::read(&resolved.spec)?;
        read_s.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        assert_eq!(manifest::parse_all(&files.files)?.len(), n);
        parse_s.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let plan = console
            .gitops_plan("p", &source, PlanOptions::default())
            .await?;
        plan_s.push(t.elapsed().as_secs_f64());
        assert_eq!(plan.summary.update, 3, "3 of {n} changed");
        assert_eq!(plan.summary.unchanged as usize, n - 3);
    }
    let (plan, raw) = (median(plan_s), median(raw_s));
    println!(
        "{n:>6} manifests, 3 changed: plan {:>7.1} ms (read commit {:>6.1} ms, parse+validate {:>6.1} ms) \
         | baseline raw listing {:>7.1} ms | plan/listing {:.2} | first apply of {n}: {:.1} s",
        plan * 1e3,
        median(read_s) * 1e3,
        median(parse_s) * 1e3,
        raw * 1e3,
        plan / raw,
        first_apply
    );
    server.stop().await?;
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    println!("GitOps plan time (median of {ROUNDS} rounds), loopback control plane on SQLite");
    for n in [1_000, 10_000] {
        bench(n).await?;
    }
    Ok(())
}
