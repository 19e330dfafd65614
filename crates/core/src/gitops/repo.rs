//! Reads a source's manifest files from a **commit** (never the work tree), so the commit id
//! is the identity of what is applied. Blocking (gix is synchronous): call it from
//! `spawn_blocking`.

use std::path::{Path, PathBuf};

use crate::error::{CoreError, Result};
use crate::gitops::types::SourceSpec;

/// A manifest file larger than this is refused (a manifest is a few hundred bytes).
const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;

/// The manifest files of one commit.
#[derive(Debug)]
pub struct CommitFiles {
    pub commit: String,
    pub title: String,
    /// `(path from the repository root, content)`, by path.
    pub files: Vec<(String, Vec<u8>)>,
}

/// A source spec with its repository resolved to an absolute path and its folder normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub spec: SourceSpec,
    /// `<absolute repository path>:<folder>`.
    pub id: String,
}

/// Checks and normalises a source: the repository path made absolute (its work tree when
/// the `.git` folder was given), the ref defaulted to `HEAD`, the folder cleaned.
pub fn resolve(spec: &SourceSpec) -> Result<Resolved> {
    let repo = open(Path::new(&spec.repo))?;
    let root: PathBuf = repo.workdir().unwrap_or(repo.git_dir()).to_path_buf();
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let path = clean_folder(&spec.path)?;
    let git_ref = match spec.git_ref.trim() {
        "" => "HEAD".to_owned(),
        r => r.to_owned(),
    };
    let repo_text = root.display().to_string();
    let id = format!("{repo_text}:{}", if path.is_empty() { "." } else { &path });
    Ok(Resolved {
        spec: SourceSpec {
            repo: repo_text,
            git_ref,
            path,
        },
        id,
    })
}

fn open(path: &Path) -> Result<gix::Repository> {
    if !path.exists() {
        return Err(CoreError::invalid(
            "repo",
            format!("{} does not exist", path.display()),
        ));
    }
    gix::open(path).map_err(|e| {
        CoreError::invalid(
            "repo",
            format!("{} is not a Git repository: {e}", path.display()),
        )
    })
}

/// `deploy/prod/` → `deploy/prod`; `.` and `` → ``; no absolute paths, no `..`.
pub fn clean_folder(path: &str) -> Result<String> {
    let trimmed = path.trim().trim_matches('/');
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(CoreError::invalid(
                    "path",
                    format!("{path:?} must stay inside the repository (no '..')"),
                ));
            }
            p => parts.push(p),
        }
    }
    if path.trim().starts_with('/') && !parts.is_empty() {
        return Err(CoreError::invalid(
            "path",
            format!("{path:?} must be relative to the repository root"),
        ));
    }
    Ok(parts.join("/"))
}

/// What `git_ref` points at now: the full commit id and its title.
pub fn head(spec: &SourceSpec) -> Result<(String, String)> {
    let repo = open(Path::new(&spec.repo))?;
    let commit = find_commit(&repo, &spec.git_ref)?;
    Ok((commit.id().to_string(), title(&commit)))
}

fn find_commit<'r>(repo: &'r gix::Repository, git_ref: &str) -> Result<gix::Commit<'r>> {
    let id = repo.rev_parse_single(git_ref).map_err(|e| {
        CoreError::invalid(
            "ref",
            format!("{git_ref:?} does not name a commit in this repository: {e}"),
        )
    })?;
    id.object()
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| CoreError::invalid("ref", format!("{git_ref:?} is not a commit: {e}")))
}

fn title(commit: &gix::Commit<'_>) -> String {
    commit
        .message_raw_sloppy()
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

fn git_error(e: impl std::fmt::Display) -> CoreError {
    CoreError::Io {
        message: format!("reading the Git repository: {e}"),
        source: None,
    }
}

/// Whether a file is a manifest: `*.yaml`, `*.yml` or `*.json`.
pub fn is_manifest(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".yaml", ".yml", ".json"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// Reads every manifest file under the source's folder in the commit `git_ref` names.
pub fn read(spec: &SourceSpec) -> Result<CommitFiles> {
    let repo = open(Path::new(&spec.repo))?;
    let commit = find_commit(&repo, &spec.git_ref)?;
    let commit_id = commit.id().to_string();
    let root = commit.tree().map_err(git_error)?;
    let tree = if spec.path.is_empty() {
        root
    } else {
        let entry = root
            .lookup_entry_by_path(&spec.path)
            .map_err(git_error)?
            .ok_or_else(|| {
                CoreError::invalid(
                    "path",
                    format!(
                        "{:?} does not exist in commit {}",
                        spec.path,
                        &commit_id[..12]
                    ),
                )
            })?;
        if !entry.mode().is_tree() {
            return Err(CoreError::invalid(
                "path",
                format!("{:?} is a file, not a folder", spec.path),
            ));
        }
        entry
            .object()
            .map_err(git_error)?
            .peel_to_tree()
            .map_err(git_error)?
    };
    let entries = tree.traverse().breadthfirst.files().map_err(git_error)?;
    let mut files = Vec::new();
    for entry in entries {
        let rel = entry.filepath.to_string();
        if !entry.mode.is_blob() || !is_manifest(&rel) {
            continue;
        }
        let path = if spec.path.is_empty() {
            rel
        } else {
            format!("{}/{rel}", spec.path)
        };
        let blob = repo.find_blob(entry.oid).map_err(git_error)?;
        if blob.data.len() > MAX_FILE_BYTES {
            return Err(CoreError::invalid(
                "manifest",
                format!("{path}: larger than {} MiB", MAX_FILE_BYTES >> 20),
            ));
        }
        files.push((path, blob.data.clone()));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(CommitFiles {
        commit: commit_id,
        title: title(&commit),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_cleaned_and_kept_inside_the_repository() {
        assert_eq!(clean_folder("").unwrap(), "");
        assert_eq!(clean_folder(".").unwrap(), "");
        assert_eq!(clean_folder("./deploy/prod/").unwrap(), "deploy/prod");
        assert_eq!(clean_folder("deploy//prod").unwrap(), "deploy/prod");
        assert!(clean_folder("../elsewhere").is_err());
        assert!(clean_folder("deploy/../../x").is_err());
        assert!(clean_folder("/etc").is_err());
    }

    #[test]
    fn only_yaml_and_json_files_are_manifests() {
        for yes in ["a.yaml", "d/b.yml", "c.JSON"] {
            assert!(is_manifest(yes), "{yes}");
        }
        for no in ["README.md", "a.yaml.bak", "Makefile", "x.toml"] {
            assert!(!is_manifest(no), "{no}");
        }
    }
}
