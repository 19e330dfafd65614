//! Real Git repositories made in the test with the `git` binary: write files, commit, and get
//! the commit id back.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Repo {
    pub dir: PathBuf,
}

impl Repo {
    pub fn init(dir: &Path) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let repo = Self {
            dir: dir.to_owned(),
        };
        repo.git(&["init", "--quiet", "--initial-branch=main"]);
        repo
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args([
                "-c",
                "user.name=Test",
                "-c",
                "user.email=test@example.invalid",
            ])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub fn write(&self, path: &str, content: &str) {
        let full = self.dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.dir.join(path)).unwrap();
    }

    /// Commits everything in the work tree; returns the commit id.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "--quiet", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }
}

/// A YAML manifest document.
pub fn endpoint(name: &str, description: &str) -> String {
    format!("kind: endpoint\nname: {name}\nspec:\n  description: {description:?}\n")
}

pub fn target(name: &str, url: &str) -> String {
    format!("kind: target\nname: {name}\nspec:\n  url: {url}\n")
}

pub fn flow(name: &str, endpoint: &str, target: &str) -> String {
    format!("kind: flow\nname: {name}\nspec:\n  endpoint: {endpoint}\n  target: {target}\n")
}

/// Several documents in one YAML file.
pub fn docs(documents: &[String]) -> String {
    documents.join("---\n")
}
