//! GitOps: reconcile a control plane to a commit of a Git repository, the way Argo CD and Flux
//! reconcile a cluster — a plan to read before anything changes, writes that land exactly
//! once, and a prune that never deletes what it did not create (docs/gitops.md).
//!
//! - `repo`: read a commit's manifest files (gix; never the work tree);
//! - `manifest`: parse and validate `{kind, name, spec}` documents;
//! - `listing`: the complete live listing a plan is made against;
//! - `plan` / `diff` / `keys`: decide per resource, diff fields, derive each write's key;
//! - `inventory`: sources, what each manages, and the writes applies queued;
//! - `api`: [`crate::Console::gitops_plan`], [`crate::Console::gitops_apply`];
//! - `status`: drift ([`crate::Console::gitops_status`], [`crate::Console::gitops_managed`]).

mod api;
mod diff;
mod inventory;
pub mod keys;
mod listing;
pub mod manifest;
mod plan;
pub mod repo;
mod status;
mod types;

pub use types::*;
