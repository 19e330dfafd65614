//! A source tree without git metadata (a release archive, a shallow export) still builds and
//! reports no commit rather than a made-up one; a packager can name the commit and pin the
//! date. Builds a copy of this crate outside any git checkout with its own target dir.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, ensure};

/// Copies this crate into `dir/build-info` under a one-member workspace that carries the
/// real workspace's `[workspace.package]` (so the version is the real one) and lints.
fn export(dir: &Path) -> Result<()> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root_manifest = std::fs::read_to_string(here.join("../../Cargo.toml"))?;
    let inherited: Vec<&str> = root_manifest
        .split("\n[")
        .filter(|t| t.starts_with("workspace.package]") || t.starts_with("workspace.lints."))
        .collect();
    ensure!(
        inherited
            .iter()
            .any(|t| t.starts_with("workspace.package]")),
        "the root Cargo.toml has a [workspace.package] table"
    );
    let mut manifest = String::from("[workspace]\nmembers = [\"build-info\"]\nresolver = \"2\"\n");
    for table in inherited {
        manifest.push_str(&format!("\n[{table}\n"));
    }
    std::fs::write(dir.join("Cargo.toml"), manifest)?;
    let crate_dir = dir.join("build-info");
    for sub in ["src", "examples"] {
        std::fs::create_dir_all(crate_dir.join(sub))?;
        for entry in std::fs::read_dir(here.join(sub))? {
            let entry = entry?;
            std::fs::copy(entry.path(), crate_dir.join(sub).join(entry.file_name()))?;
        }
    }
    // Without the dev-dependency the copy needs nothing from a registry.
    let manifest = std::fs::read_to_string(here.join("Cargo.toml"))?
        .replace("anyhow = { workspace = true }", "")
        .replace("tempfile = { workspace = true }", "");
    std::fs::write(crate_dir.join("Cargo.toml"), manifest)?;
    std::fs::copy(here.join("build.rs"), crate_dir.join("build.rs"))?;
    Ok(())
}

/// Builds and runs the example in the exported tree; returns its `key=value` lines.
fn report(dir: &Path, env: &[(&str, &str)]) -> Result<Vec<(String, String)>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["run", "--offline", "--quiet", "--example", "build_info"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        // Never let git find a repository above the temporary folder.
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .env_remove("GIT_DIR")
        .env_remove("SWITCHYARD_GIT_COMMIT")
        .env_remove("SOURCE_DATE_EPOCH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output()?;
    ensure!(
        out.status.success(),
        "building the exported tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect())
}

fn get<'a>(lines: &'a [(String, String)], key: &str) -> &'a str {
    lines
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {lines:?}"))
}

#[test]
fn a_tree_without_git_metadata_builds_and_reports_no_commit() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    export(tmp.path())?;
    let plain = report(tmp.path(), &[])?;
    assert_eq!(get(&plain, "version"), switchyard_build_info::VERSION);
    assert_eq!(get(&plain, "commit"), "(none)");
    assert!(get(&plain, "long").contains("commit unknown"));

    // A packager names the commit and pins the date (reproducible builds).
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let pinned = report(
        tmp.path(),
        &[
            ("SWITCHYARD_GIT_COMMIT", commit),
            ("SOURCE_DATE_EPOCH", "1798761600"),
        ],
    )?;
    assert_eq!(get(&pinned, "commit"), commit);
    assert_eq!(get(&pinned, "build_date"), "2027-01-01T00:00:00Z");
    assert_eq!(
        get(&pinned, "long"),
        format!(
            "{} (commit 0123456789ab, built 2027-01-01T00:00:00Z)",
            switchyard_build_info::VERSION
        )
    );
    Ok(())
}

#[test]
fn a_git_checkout_reports_its_head() -> Result<()> {
    let here = env!("CARGO_MANIFEST_DIR");
    let Ok(out) = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(here)
        .output()
    else {
        return Ok(()); // no git on this machine: the other test covers the build
    };
    if !out.status.success() || std::env::var_os("SWITCHYARD_GIT_COMMIT").is_some() {
        return Ok(()); // built from an archive, or the commit was given explicitly
    }
    let head = String::from_utf8(out.stdout)?.trim().to_owned();
    assert_eq!(switchyard_build_info::commit(), Some(head.as_str()));
    Ok(())
}
