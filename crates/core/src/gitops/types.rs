//! What GitOps exchanges with its callers (the CLI, the desktop app's UI): sources, plans,
//! apply progress and drift. Serializable; TypeScript declarations derived behind `ts`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchyard_protocol::ResourceKind;

/// Where manifests come from: a local Git repository, a ref and a folder in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SourceSpec {
    /// A path to a local Git repository (its work tree or its `.git` folder). A remote is
    /// fetched by the user's own git (`git fetch`); name its remote-tracking ref in `git_ref`.
    pub repo: String,
    /// A branch, tag, `origin/main`, a commit id… (default `HEAD`).
    pub git_ref: String,
    /// The folder of the manifests inside the repository (`""` = the whole repository).
    pub path: String,
}

/// A source as the console records it, per profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GitopsSource {
    pub profile: String,
    /// The source's identity: the repository's absolute path and the folder
    /// (`/srv/config:deploy/prod`). Part of every write's idempotency key.
    pub id: String,
    pub spec: SourceSpec,
    /// The last commit whose apply was queued.
    pub queued_commit: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub queued_at: Option<i64>,
    /// The last commit whose every write the control plane confirmed.
    pub applied_commit: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub applied_at: Option<i64>,
    /// Resources this source manages on the profile's control plane.
    pub managed: u32,
}

/// A manifest read from a commit: one YAML or JSON document `{kind, name, spec}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub kind: ResourceKind,
    pub name: String,
    /// The spec in canonical form (validated, server defaults filled in).
    pub spec: Value,
    /// The file, relative to the repository root.
    pub path: String,
    /// The document's number in its file, from 1.
    pub document: usize,
}

/// What a plan does to one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum PlanAction {
    /// Absent on the control plane: created (`POST`, fails if someone created it meanwhile).
    Create,
    /// Differs from the commit: replaced by the commit's spec (`PUT` with `If-Match`).
    Update,
    /// Created by this source, absent from the commit, `--prune` given: deleted (`If-Match`).
    Delete,
    /// Equal to the commit (server defaults taken into account).
    Unchanged,
    /// Changed outside Git since the last apply, and the commit did not change it: left as it
    /// is and reported (`--self-heal` turns it into an update, or a create if deleted).
    Drifted,
    /// Created by this source and absent from the commit, but `--prune` was not given: kept.
    Orphaned,
    /// Managed by this source but not created by it, and now absent from the commit: it stops
    /// being managed and is never deleted.
    Release,
}

impl PlanAction {
    /// Whether the action queues a write.
    pub fn writes(self) -> bool {
        matches!(self, Self::Create | Self::Update | Self::Delete)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::Unchanged => "unchanged",
            Self::Drifted => "drifted",
            Self::Orphaned => "orphaned",
            Self::Release => "release",
        }
    }
}

/// One changed field of a spec, named as a path (`spec.headers.X-Team`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FieldChange {
    pub field: String,
    /// `null`: absent before.
    pub before: Option<Value>,
    /// `null`: absent after.
    pub after: Option<Value>,
}

/// One resource in a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlanItem {
    #[cfg_attr(feature = "ts", ts(type = "\"endpoint\" | \"target\" | \"flow\""))]
    pub kind: ResourceKind,
    pub name: String,
    pub action: PlanAction,
    /// The manifest's file: in this commit, or (for a resource the commit no longer
    /// declares) in the commit that last applied it.
    pub path: Option<String>,
    /// The version the plan was made against (sent as `If-Match`); absent when the
    /// resource does not exist on the control plane.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub base_version: Option<i64>,
    /// Field changes from live state to the commit (update, drift: what differs).
    pub changes: Vec<FieldChange>,
    /// The commit's spec (canonical), for every resource the commit declares.
    pub desired: Option<Value>,
    /// The control plane's spec (normalised), except for unchanged resources and creates.
    pub live: Option<Value>,
    /// The order of writes: 1 targets and endpoints, 2 flows, 3 flow deletes, 4 endpoint
    /// and target deletes. 0 for actions that write nothing.
    pub wave: u8,
    /// The write's idempotency key, derived from its content (see docs/gitops.md).
    pub key: Option<String>,
}

/// How many resources a plan touches, per action.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlanSummary {
    pub create: u32,
    pub update: u32,
    pub delete: u32,
    pub unchanged: u32,
    pub drifted: u32,
    pub orphaned: u32,
    pub release: u32,
}

impl PlanSummary {
    /// Writes the plan would queue.
    pub fn writes(&self) -> u32 {
        self.create + self.update + self.delete
    }

    /// The plan changes something: a write, or a resource leaving management.
    pub fn has_changes(&self) -> bool {
        self.writes() + self.release > 0
    }
}

/// How to plan.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlanOptions {
    /// Delete what this source created and the commit no longer declares.
    pub prune: bool,
    /// Allow a prune that deletes every resource the source manages (a wrong `--path`, an
    /// emptied folder). Refused without it.
    pub allow_delete_all: bool,
    /// Revert drift: resources changed outside Git are set back to the commit.
    pub self_heal: bool,
}

/// A plan: what applying one commit of a source would do, against live state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GitopsPlan {
    pub profile: String,
    /// The source's identity (see [`GitopsSource::id`]).
    pub source: String,
    pub spec: SourceSpec,
    /// The full commit id the manifests were read from.
    pub commit: String,
    /// The commit message's first line.
    pub commit_title: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub planned_at: i64,
    pub prune: bool,
    pub self_heal: bool,
    pub manifests: u32,
    pub summary: PlanSummary,
    /// Every resource the commit declares or the source manages, in wave order then by
    /// kind and name.
    pub items: Vec<PlanItem>,
}

/// The progress of one wave of an apply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WaveProgress {
    pub wave: u8,
    pub total: u32,
    /// Confirmed by the control plane.
    pub done: u32,
    /// Saved locally or being sent.
    pub pending: u32,
    /// Refused (a conflict, a missing reference…): a person decides in the outbox.
    pub needs_attention: u32,
    /// Discarded by a person.
    pub discarded: u32,
}

/// Where the last queued apply of a source stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApplyProgress {
    pub profile: String,
    pub source: String,
    pub commit: String,
    pub waves: Vec<WaveProgress>,
    /// Every write of the apply is confirmed.
    pub complete: bool,
}

/// What [`crate::Console::gitops_apply`] queued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApplyReport {
    pub profile: String,
    pub source: String,
    pub commit: String,
    /// Writes queued now.
    pub queued: u32,
    /// Writes an earlier run of the same apply had already queued (same keys: resumed).
    pub resumed: u32,
    /// Outbox operation ids, in wave order.
    #[cfg_attr(feature = "ts", ts(type = "Array<number>"))]
    pub op_ids: Vec<i64>,
    pub progress: ApplyProgress,
}

/// Where a managed resource stands against the last applied commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ResourceSync {
    InSync,
    /// Its spec differs from what Git applied.
    Drifted,
    /// Deleted on the control plane outside Git.
    Missing,
    /// A write of the last apply is not confirmed yet.
    Applying,
}

/// A resource a source manages, with its drift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ManagedResource {
    #[cfg_attr(feature = "ts", ts(type = "\"endpoint\" | \"target\" | \"flow\""))]
    pub kind: ResourceKind,
    pub name: String,
    pub source: String,
    /// The commit that last wrote or confirmed it.
    pub commit: String,
    /// Its manifest's file in that commit.
    pub path: String,
    /// GitOps created it (so `--prune` may delete it); otherwise it was adopted.
    pub created: bool,
    pub state: ResourceSync,
    /// Fields that differ from what Git applied.
    pub changes: Vec<FieldChange>,
    /// Who changed it, when the local audit log knows (`cli`, `desktop`, `mcp (…)`).
    pub changed_by: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub changed_at: Option<i64>,
}

/// A source's status: in sync, drifted, applying, or behind its ref.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GitopsStatus {
    pub source: GitopsSource,
    /// What the ref resolves to now (absent when the repository cannot be read).
    pub head_commit: Option<String>,
    /// Why the repository could not be read.
    pub head_error: Option<String>,
    /// The ref points at a commit other than the last applied one.
    pub behind: bool,
    pub in_sync: u32,
    pub drifted: u32,
    pub missing: u32,
    pub applying: u32,
    /// Managed resources that are not in sync (drifted, missing, applying).
    pub resources: Vec<ManagedResource>,
    pub progress: Option<ApplyProgress>,
}

impl GitopsStatus {
    /// Nothing to do: in sync with the ref's commit.
    pub fn clean(&self) -> bool {
        !self.behind
            && self.drifted + self.missing + self.applying == 0
            && self.source.applied_commit.is_some()
    }
}
