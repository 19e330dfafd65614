//! Records the git commit and the build date for `src/lib.rs`.
//!
//! - Commit: `SWITCHYARD_GIT_COMMIT` when set (a packager building from a source archive knows
//!   it), else `git rev-parse HEAD` of the checkout this crate sits in, else none: a clone
//!   without git metadata still builds, and reports no commit rather than a made-up one.
//! - Build date: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now.
//! - Version: `SWITCHYARD_VERSION` when set (`scripts/package.sh` sets it from
//!   `PACKAGE_VERSION`, so a package built as another version reports that version, as its
//!   `.deb` and its updater do), else the workspace version. Build time only: a built binary
//!   reads no variable to change the version it reports.
//!
//! The script reruns when HEAD moves (a commit, a checkout) or those variables change, not on
//! every source edit; the commit is HEAD's, so uncommitted edits are not reflected in it.

#[path = "src/date.rs"]
mod date;

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SWITCHYARD_GIT_COMMIT");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-env-changed=SWITCHYARD_VERSION");

    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let commit = match std::env::var("SWITCHYARD_GIT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => Some(c.trim().to_owned()),
        _ => git_head(Path::new(&manifest_dir)),
    };
    if let Some(c) = &commit {
        if !(7..=64).contains(&c.len()) || !c.chars().all(|ch| ch.is_ascii_hexdigit()) {
            panic!("SWITCHYARD_GIT_COMMIT must be a hex commit id, got {c:?}");
        }
    }

    let epoch = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(s) => s
            .trim()
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("SOURCE_DATE_EPOCH must be Unix seconds, got {s:?}")),
        Err(_) => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    let date = date::rfc3339_utc(epoch);

    let version = match std::env::var("SWITCHYARD_VERSION") {
        Ok(v) if !v.trim().is_empty() => {
            let v = v.trim().to_owned();
            if !is_semver(&v) {
                panic!("SWITCHYARD_VERSION must be a version like 1.2.3, got {v:?}");
            }
            v
        }
        _ => std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION"),
    };
    let long = match &commit {
        Some(c) => format!("{version} (commit {}, built {date})", &c[..c.len().min(12)]),
        None => format!("{version} (commit unknown, built {date})"),
    };
    println!(
        "cargo:rustc-env=SWITCHYARD_BUILD_COMMIT={}",
        commit.unwrap_or_default()
    );
    println!("cargo:rustc-env=SWITCHYARD_BUILD_DATE={date}");
    println!("cargo:rustc-env=SWITCHYARD_BUILD_VERSION={version}");
    println!("cargo:rustc-env=SWITCHYARD_LONG_VERSION={long}");
}

/// `MAJOR.MINOR.PATCH`, optionally `-pre` and `+build` of `[0-9A-Za-z.-]`.
fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or_default();
    let rest = &v[core.len()..];
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

/// HEAD of the git checkout around `dir`, and the files whose change means HEAD moved.
fn git_head(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    let head = git(&["rev-parse", "--verify", "--quiet", "HEAD"])?;
    // HEAD itself (a checkout), the branch it points at (a commit) and packed-refs (a gc).
    let mut watch = vec![git(&[
        "rev-parse",
        "--path-format=absolute",
        "--git-path",
        "HEAD",
    ])];
    if let Some(branch) = git(&["symbolic-ref", "--quiet", "HEAD"]) {
        watch.push(git(&[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            &branch,
        ]));
    }
    watch.push(git(&[
        "rev-parse",
        "--path-format=absolute",
        "--git-path",
        "packed-refs",
    ]));
    for path in watch.into_iter().flatten() {
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    Some(head)
}
