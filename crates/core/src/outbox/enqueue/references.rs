//! A flow write names an endpoint and a target. Each must be known to the console — on the
//! control plane as last read, or created by a write still queued — or the write is refused
//! before it is queued: a flow naming a resource that exists nowhere could never land.

use sqlx::Sqlite;
use switchyard_protocol::ResourceKind;

use super::{Current, Draft};
use crate::error::{CoreError, Result};
use crate::types::*;

/// The endpoint and target a flow's spec names (`None`: not named, the server's validation
/// says so).
fn named(view: Option<&LocalView>) -> [(ResourceKind, Option<&str>); 2] {
    let spec = view.map(|v| &v.spec);
    [
        (
            ResourceKind::Endpoint,
            spec.and_then(|s| s["endpoint"].as_str()),
        ),
        (
            ResourceKind::Target,
            spec.and_then(|s| s["target"].as_str()),
        ),
    ]
}

/// Refuses a flow create, update or apply naming an endpoint or target that neither the
/// cache nor the queue holds. A reference the flow already had is not checked again (the
/// control plane accepted it).
pub(super) async fn check_references<'e, E>(
    executor: E,
    profile: &str,
    draft: &Draft,
    current: &Current,
) -> Result<()>
where
    E: sqlx::Executor<'e, Database = Sqlite>,
{
    let op = &draft.op;
    if op.kind != ResourceKind::Flow
        || !matches!(op.op, OpKind::Create | OpKind::Update | OpKind::Apply)
    {
        return Ok(());
    }
    let before = named(current.local.as_ref());
    let wanted: Vec<(ResourceKind, &str)> = named(draft.result.as_ref())
        .into_iter()
        .zip(before)
        .filter_map(|((kind, name), (_, old))| name.filter(|n| old != Some(*n)).map(|n| (kind, n)))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let mut sql = sqlx::QueryBuilder::<Sqlite>::new(
        "SELECT kind, name FROM cache WHERE local_json IS NOT NULL AND profile = ",
    );
    sql.push_bind(profile).push(" AND (");
    for (i, (kind, name)) in wanted.iter().enumerate() {
        if i > 0 {
            sql.push(" OR ");
        }
        sql.push("(kind = ")
            .push_bind(*kind)
            .push(" AND name = ")
            .push_bind(*name)
            .push(")");
    }
    sql.push(")");
    let known: Vec<(ResourceKind, String)> = sql.build_query_as().fetch_all(executor).await?;
    match wanted
        .iter()
        .find(|(kind, name)| !known.iter().any(|(k, n)| k == kind && n == name))
    {
        None => Ok(()),
        Some((kind, name)) => Err(missing(profile, *kind, name)),
    }
}

fn missing(profile: &str, kind: ResourceKind, name: &str) -> CoreError {
    let shown: String = name.chars().take(80).collect();
    let cut = if shown.len() < name.len() { "…" } else { "" };
    CoreError::invalid(
        format!("spec.{}", kind.as_str()),
        format!(
            "{kind} {shown:?}{cut} does not exist in profile {profile:?}: neither the control plane \
             (as last read) nor a queued write has it; create it first, or refresh if it was \
             created elsewhere",
            kind = kind.as_str()
        ),
    )
}
