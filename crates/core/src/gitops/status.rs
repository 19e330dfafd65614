//! Drift: each resource a source manages against what Git last applied to it, and the
//! source's ref against the last applied commit. Reports only; nothing is written back
//! (`apply --self-heal` does that).

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use switchyard_protocol::ResourceKind;

use crate::Console;
use crate::error::{CoreError, Result};
use crate::gitops::diff::{changes, normalize};
use crate::gitops::inventory::InventoryEntry;
use crate::gitops::types::*;
use crate::gitops::{listing, repo};

/// How one managed resource compares with what Git applied. Pure.
pub fn compare(entry: &InventoryEntry, live: Option<&Value>, applying: bool) -> ResourceSync {
    match live {
        _ if applying => ResourceSync::Applying,
        None => ResourceSync::Missing,
        Some(spec) if normalize(entry.kind, spec) == entry.spec => ResourceSync::InSync,
        Some(_) => ResourceSync::Drifted,
    }
}

impl Console {
    /// A source's status against a fresh listing of the control plane: each managed
    /// resource in sync, drifted (which fields, and who changed it when this console's audit
    /// log knows), missing, or still being applied; and whether the ref moved past the last
    /// applied commit.
    pub async fn gitops_status(&self, profile: &str, source: &str) -> Result<GitopsStatus> {
        self.status_against(profile, source, None).await
    }

    /// [`Console::gitops_status`] of the source a repository and folder name, with "behind"
    /// judged against `spec.git_ref`.
    pub async fn gitops_status_of(&self, profile: &str, spec: &SourceSpec) -> Result<GitopsStatus> {
        let spec = spec.clone();
        let resolved = tokio::task::spawn_blocking(move || repo::resolve(&spec))
            .await
            .map_err(|e| CoreError::Io {
                message: format!("reading the repository stopped: {e}"),
                source: None,
            })??;
        self.status_against(profile, &resolved.id, Some(&resolved.spec.git_ref))
            .await
    }

    async fn status_against(
        &self,
        profile: &str,
        source: &str,
        git_ref: Option<&str>,
    ) -> Result<GitopsStatus> {
        self.profile(profile).await?;
        self.gitops_fold(profile).await?;
        let src = self.gitops_source(profile, source).await.map_err(|_| {
            CoreError::not_found(format!(
                "GitOps source {source:?} on profile {profile:?} (plan or apply it first)"
            ))
        })?;
        let mut spec = src.spec.clone();
        if let Some(r) = git_ref {
            spec.git_ref = r.to_owned();
        }
        let head = tokio::task::spawn_blocking(move || repo::head(&spec))
            .await
            .map_err(|e| CoreError::Io {
                message: format!("reading the repository stopped: {e}"),
                source: None,
            })?;
        let client = self.client(profile).await?;
        let live = listing::fetch(&client).await?;
        self.store_listing(profile, &live).await?;
        let live = |kind: ResourceKind, name: &str| {
            live.get(&(kind, name.to_owned())).map(|r| r.spec.clone())
        };
        let managed = self.managed_by(profile, Some(source), live).await?;
        let (head_commit, head_error) = match head {
            Ok((commit, _)) => (Some(commit), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let behind = head_commit
            .as_ref()
            .is_some_and(|h| src.applied_commit.as_ref() != Some(h));
        let progress = match &src.queued_commit {
            Some(c) => Some(self.gitops_progress(profile, source, c).await?),
            None => None,
        };
        let count = |s: ResourceSync| managed.iter().filter(|m| m.state == s).count() as u32;
        Ok(GitopsStatus {
            in_sync: count(ResourceSync::InSync),
            drifted: count(ResourceSync::Drifted),
            missing: count(ResourceSync::Missing),
            applying: count(ResourceSync::Applying),
            resources: managed
                .into_iter()
                .filter(|m| m.state != ResourceSync::InSync)
                .collect(),
            source: src,
            head_commit,
            head_error,
            behind,
            progress,
        })
    }

    /// Every resource GitOps manages on a profile, with drift against the cache (no network:
    /// for badges next to resources; `gitops_status` compares with live state).
    pub async fn gitops_managed(&self, profile: &str) -> Result<Vec<ManagedResource>> {
        self.gitops_fold(profile).await?;
        let mut cached: HashMap<(ResourceKind, String), Value> = HashMap::new();
        for kind in ResourceKind::ALL {
            for r in self.list_resources(profile, kind).await? {
                if let Some(server) = r.server {
                    cached.insert((kind, r.name), server.spec);
                }
            }
        }
        self.managed_by(profile, None, |kind, name| {
            cached.get(&(kind, name.to_owned())).cloned()
        })
        .await
    }

    async fn managed_by(
        &self,
        profile: &str,
        source: Option<&str>,
        live: impl Fn(ResourceKind, &str) -> Option<Value>,
    ) -> Result<Vec<ManagedResource>> {
        let inventory = self.gitops_inventory(profile).await?;
        let applying: HashSet<(String, String)> = sqlx::query_as(
            "SELECT g.kind, g.name FROM gitops_ops g JOIN outbox o ON o.id = g.op_id \
             WHERE g.profile = ? AND o.state IN ('pending', 'sending', 'needs_attention')",
        )
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?
        .into_iter()
        .collect();
        let mut out = Vec::new();
        for e in inventory
            .into_iter()
            .filter(|e| source.is_none_or(|s| s == e.source))
        {
            let spec = live(e.kind, &e.name);
            let busy = applying.contains(&(e.kind.as_str().to_owned(), e.name.clone()));
            let state = compare(&e, spec.as_ref(), busy);
            let (mut changed_by, mut changed_at) = (None, None);
            if matches!(state, ResourceSync::Drifted | ResourceSync::Missing) {
                let resource = format!("{}/{}", e.kind, e.name);
                if let Some((actor, at)) = crate::audit::last_manual_write(
                    &self.inner.pool,
                    profile,
                    &resource,
                    e.updated_at,
                )
                .await?
                {
                    (changed_by, changed_at) = (Some(actor), Some(at));
                }
            }
            let changes = match state {
                ResourceSync::Drifted => {
                    changes(Some(&e.spec), spec.map(|s| normalize(e.kind, &s)).as_ref())
                }
                _ => Vec::new(),
            };
            out.push(ManagedResource {
                kind: e.kind,
                name: e.name,
                source: e.source,
                commit: e.commit,
                path: e.path,
                created: e.created,
                state,
                changes,
                changed_by,
                changed_at,
            });
        }
        Ok(out)
    }
}
