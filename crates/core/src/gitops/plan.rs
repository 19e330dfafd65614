//! Planning: the commit's manifests against a complete live listing and the inventory.
//! Decides per resource create / update / delete / unchanged / drifted / orphaned / release,
//! the wave of each write and its content-derived key. Pure.

use std::collections::{HashMap, HashSet};

use switchyard_protocol::{Resource, ResourceKind};

use crate::error::{CoreError, ManifestProblem};
use crate::gitops::diff::{changes, normalize};
use crate::gitops::inventory::InventoryEntry;
use crate::gitops::keys::{KeyParts, derive};
use crate::gitops::types::*;

/// A live listing, by kind and name. It must be complete: see `listing::fetch`.
pub type Live = HashMap<(ResourceKind, String), Resource>;

pub struct PlanInput<'a> {
    pub profile: &'a str,
    pub source: &'a str,
    pub commit: &'a str,
    pub manifests: &'a [Manifest],
    pub live: &'a Live,
    /// The profile's whole inventory (every source), to refuse a resource another source
    /// manages.
    pub inventory: &'a [InventoryEntry],
    pub opts: &'a PlanOptions,
}

/// The wave a write goes in: 1 targets and endpoints, 2 flows, 3 flow deletes, 4 endpoint
/// and target deletes (deletes in reverse order of creation). 0: no write.
pub fn wave(kind: ResourceKind, action: PlanAction) -> u8 {
    match (action, kind) {
        (PlanAction::Create | PlanAction::Update, ResourceKind::Flow) => 2,
        (PlanAction::Create | PlanAction::Update, _) => 1,
        (PlanAction::Delete, ResourceKind::Flow) => 3,
        (PlanAction::Delete, _) => 4,
        _ => 0,
    }
}

pub fn plan(input: &PlanInput<'_>) -> Result<(Vec<PlanItem>, PlanSummary), CoreError> {
    let owners = Owners::of(input);
    let declared: HashSet<(ResourceKind, &str)> = input
        .manifests
        .iter()
        .map(|m| (m.kind, m.name.as_str()))
        .collect();
    let mut items = declared_items(input, &owners)?;
    check_references(input, &declared)?;
    undeclared_items(input, &owners, &declared, &mut items)?;
    items.sort_by_key(order);
    let summary = summarize(&items);
    Ok((items, summary))
}

/// The inventory split by source: this source's entries, and the other sources'.
struct Owners<'a> {
    mine: HashMap<(ResourceKind, &'a str), &'a InventoryEntry>,
    others: HashMap<(ResourceKind, &'a str), &'a InventoryEntry>,
}

impl<'a> Owners<'a> {
    fn of(input: &PlanInput<'a>) -> Self {
        let mut mine: HashMap<(ResourceKind, &str), &InventoryEntry> = HashMap::new();
        for e in input.inventory {
            if e.source == input.source {
                mine.insert((e.kind, e.name.as_str()), e);
            }
        }
        let others = input
            .inventory
            .iter()
            .filter(|e| e.source != input.source)
            .map(|e| ((e.kind, e.name.as_str()), e))
            .collect();
        Self { mine, others }
    }
}

/// An item per manifest; refused (`managed_elsewhere`) when another source manages any of
/// them, naming every such manifest.
fn declared_items(input: &PlanInput<'_>, owners: &Owners<'_>) -> Result<Vec<PlanItem>, CoreError> {
    let mut items = Vec::with_capacity(input.manifests.len());
    let mut elsewhere = Vec::new();
    for m in input.manifests {
        if let Some(other) = owners.others.get(&(m.kind, m.name.as_str())) {
            elsewhere.push(format!(
                "{} {:?} ({}) is managed by source {}",
                m.kind, m.name, m.path, other.source
            ));
            continue;
        }
        let live = input.live.get(&(m.kind, m.name.clone()));
        let inv = owners.mine.get(&(m.kind, m.name.as_str()));
        items.push(declared_item(input, m, live, inv.copied()));
    }
    if !elsewhere.is_empty() {
        return Err(CoreError::Refused {
            code: "managed_elsewhere",
            message: format!(
                "another GitOps source manages what this commit declares; nothing was planned:\n  {}",
                elsewhere.join("\n  ")
            ),
        });
    }
    Ok(items)
}

/// An item per resource this source manages that the commit no longer declares and the
/// control plane still has: delete (the source created it, `prune`), orphaned (created,
/// no `prune`) or release (not created by it). Refused (`prune_all_refused`) when that
/// deletes every resource the source manages, unless `allow_delete_all`.
fn undeclared_items(
    input: &PlanInput<'_>,
    owners: &Owners<'_>,
    declared: &HashSet<(ResourceKind, &str)>,
    items: &mut Vec<PlanItem>,
) -> Result<(), CoreError> {
    let mut managed_left = 0;
    let mut deletes = 0;
    for e in owners.mine.values() {
        if declared.contains(&(e.kind, e.name.as_str())) {
            managed_left += 1;
            continue;
        }
        let Some(live) = input.live.get(&(e.kind, e.name.clone())) else {
            continue; // gone from both: the apply forgets it
        };
        let action = match (e.created, input.opts.prune) {
            (true, true) => PlanAction::Delete,
            (true, false) => PlanAction::Orphaned,
            (false, _) => PlanAction::Release,
        };
        match action {
            PlanAction::Delete => deletes += 1,
            _ => managed_left += 1,
        }
        items.push(item(
            input,
            e.kind,
            &e.name,
            action,
            Some(&e.path),
            Some(live),
            None,
        ));
    }
    if deletes > 0 && managed_left == 0 && !input.opts.allow_delete_all {
        return Err(CoreError::Refused {
            code: "prune_all_refused",
            message: format!(
                "this plan would delete every resource the source manages ({deletes}); if that is \
                 meant (and the folder is right), plan again with --allow-delete-all"
            ),
        });
    }
    Ok(())
}

/// How many items of each action.
fn summarize(items: &[PlanItem]) -> PlanSummary {
    let mut summary = PlanSummary::default();
    for i in items {
        let n = match i.action {
            PlanAction::Create => &mut summary.create,
            PlanAction::Update => &mut summary.update,
            PlanAction::Delete => &mut summary.delete,
            PlanAction::Unchanged => &mut summary.unchanged,
            PlanAction::Drifted => &mut summary.drifted,
            PlanAction::Orphaned => &mut summary.orphaned,
            PlanAction::Release => &mut summary.release,
        };
        *n += 1;
    }
    summary
}

/// A resource the commit declares.
fn declared_item(
    input: &PlanInput<'_>,
    m: &Manifest,
    live: Option<&Resource>,
    inv: Option<&InventoryEntry>,
) -> PlanItem {
    // Git did not change it since the last apply: a difference was made outside Git.
    let git_unchanged = inv.is_some_and(|e| e.spec == m.spec);
    let heal = input.opts.self_heal;
    let action = match live {
        None if git_unchanged && !heal => PlanAction::Drifted,
        None => PlanAction::Create,
        Some(l) if normalize(m.kind, &l.spec) == m.spec => PlanAction::Unchanged,
        Some(_) if git_unchanged && !heal => PlanAction::Drifted,
        Some(_) => PlanAction::Update,
    };
    item(
        input,
        m.kind,
        &m.name,
        action,
        Some(&m.path),
        live,
        Some(&m.spec),
    )
}

fn item(
    input: &PlanInput<'_>,
    kind: ResourceKind,
    name: &str,
    action: PlanAction,
    path: Option<&str>,
    live: Option<&Resource>,
    desired: Option<&serde_json::Value>,
) -> PlanItem {
    let live_spec = live.map(|l| normalize(kind, &l.spec));
    let base_version = live.map(|l| l.version);
    let shown = !matches!(action, PlanAction::Unchanged);
    let key = action.writes().then(|| {
        derive(&KeyParts {
            profile: input.profile,
            source: input.source,
            commit: input.commit,
            kind,
            name,
            operation: action.as_str(),
            base_version,
            spec: desired.filter(|_| action != PlanAction::Delete),
        })
    });
    let changes = match action {
        PlanAction::Create | PlanAction::Update | PlanAction::Drifted => {
            changes(live_spec.as_ref(), desired)
        }
        PlanAction::Delete => changes(live_spec.as_ref(), None),
        _ => Vec::new(),
    };
    PlanItem {
        kind,
        name: name.to_owned(),
        action,
        path: path.map(str::to_owned),
        base_version,
        changes,
        desired: desired.filter(|_| action != PlanAction::Delete).cloned(),
        live: live_spec.filter(|_| shown && action != PlanAction::Create),
        wave: wave(kind, action),
        key,
    }
}

/// Writes first, in wave order; then what writes nothing; by kind and name within.
fn order(i: &PlanItem) -> (u8, u8, ResourceKind, String) {
    let rank = match i.action {
        PlanAction::Create | PlanAction::Update | PlanAction::Delete => 0,
        PlanAction::Drifted => 1,
        PlanAction::Orphaned => 2,
        PlanAction::Release => 3,
        PlanAction::Unchanged => 4,
    };
    let wave = if i.wave == 0 { u8::MAX } else { i.wave };
    (wave, rank, i.kind, i.name.clone())
}

/// A flow must name an endpoint and a target that the commit declares or the control plane
/// has (and that this plan does not delete); the server would refuse it otherwise.
/// A flow naming what exists nowhere. The plan's caller has already reported these with
/// every other problem of the commit (`manifest::Parsed::finish`); checked again here so
/// that no plan is ever made from a dangling reference.
fn check_references(
    input: &PlanInput<'_>,
    declared: &HashSet<(ResourceKind, &str)>,
) -> Result<(), CoreError> {
    let mut problems = Vec::new();
    for m in input
        .manifests
        .iter()
        .filter(|m| m.kind == ResourceKind::Flow)
    {
        for (field, kind) in [
            ("endpoint", ResourceKind::Endpoint),
            ("target", ResourceKind::Target),
        ] {
            let name = m.spec[field].as_str().unwrap_or_default();
            let present = declared.contains(&(kind, name))
                || input.live.contains_key(&(kind, name.to_owned()));
            if !present {
                problems.push(ManifestProblem {
                    path: m.path.clone(),
                    document: m.document,
                    field: format!("spec.{field}"),
                    message: format!(
                        "{kind} {name:?} is neither declared in this commit nor on the control plane"
                    ),
                });
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        let total = problems.len();
        problems.truncate(crate::gitops::manifest::MAX_PROBLEMS);
        Err(CoreError::InvalidManifests { problems, total })
    }
}

#[cfg(test)]
mod tests;
