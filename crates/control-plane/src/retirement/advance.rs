//! The units of work of a retirement: creating it (`PUT /v1/retirements/{id}`) and each
//! transition the server makes (`pass`, run by the delivery worker's loop on every replica).
//!
//! Each one is one store transaction: the guarded transition (`RetirementTx::change_retirement`,
//! `UPDATE … WHERE state = <the state it leaves>`) and its effect on the resource (disable,
//! delete, tombstone, purge) commit together or not at all. A loser of the guard (another
//! replica's worker, a cancel) rolls its effect back, so every step happens once whichever
//! process runs it, and a process killed mid-step leaves nothing half done: the next pass
//! (here or on another replica) finds the state as the last commit left it.

use serde_json::Value;
use switchyard_protocol::{ResourceKind, RetirementRequest, RetirementState};

use super::machine::{self, Step};
use crate::delivery::DeliveryContext;
use crate::error::ApiError;
use crate::store::{
    Inserted, NewRetirement, ResourceRow, RetirementChange, RetirementFacts, RetirementRow,
    StoreError, StoreTx,
};

/// The key of a resource's stored status that names the retirement holding it.
pub const MARK: &str = "retirement";
/// Most flows one retirement cascades to.
const MAX_FLOWS: u32 = 1_000;
/// Most retirements one pass looks at (least recently changed first, so a long-blocked one
/// is looked at every pass; beyond this many open at once, the rest wait for a later pass).
const PASS_LIMIT: u32 = 1_000;
/// Most transitions one retirement makes in one pass (the whole walk is five).
const STEPS_PER_PASS: usize = 6;
/// The attempt timeout the drain ETA assumes per attempt left (a target's default).
const ETA_ATTEMPT_TIMEOUT_MS: i64 = 15_000;

/// What `PUT /v1/retirements/{id}` found.
pub enum Started {
    Created(RetirementRow),
    /// The id was taken: this is that retirement (the handler compares fingerprints).
    Exists(RetirementRow),
}

fn eta(ctx: &DeliveryContext, facts: &RetirementFacts) -> Option<i64> {
    let jitter = match crate::delivery::DELIVERY_JITTER {
        crate::delivery::schedule::Jitter::Bounded(f) => f,
        crate::delivery::schedule::Jitter::Full => 0.0,
    };
    machine::drain_eta(
        facts,
        &ctx.config.schedule,
        jitter,
        ETA_ATTEMPT_TIMEOUT_MS,
        ctx.clock.now_ms(),
    )
}

/// Marks a resource as held by retirement `id` (a new version): an endpoint stops accepting
/// events and a flow stops routing them (`enabled: false`); a target only carries the mark,
/// which refuses new flows to it. Returns the endpoint's `enabled` before, or `None` when
/// the resource is gone.
async fn mark(
    tx: &mut dyn StoreTx,
    tenant: &str,
    kind: ResourceKind,
    name: &str,
    id: &str,
    now: i64,
) -> Result<Option<Option<bool>>, ApiError> {
    let Some(row) = tx.get_resource(tenant, kind, name).await? else {
        return Ok(None);
    };
    let before = row.status.get("enabled").and_then(Value::as_bool);
    let mut next = ResourceRow {
        version: row.version + 1,
        updated_at: now,
        ..row.clone()
    };
    if !next.status.is_object() {
        next.status = Value::Object(Default::default());
    }
    next.status[MARK] = Value::String(id.to_owned());
    if kind != ResourceKind::Target {
        next.status["enabled"] = Value::Bool(false);
    }
    write(tx, tenant, &next, row.version).await?;
    Ok(Some(
        (kind == ResourceKind::Endpoint).then_some(before.unwrap_or(true)),
    ))
}

/// Undoes [`mark`] of retirement `id` (nothing when another retirement, or none, holds it):
/// an endpoint gets its `enabled` from before back, a flow routes again.
pub(super) async fn unmark(
    tx: &mut dyn StoreTx,
    tenant: &str,
    kind: ResourceKind,
    name: &str,
    id: &str,
    enabled_before: Option<bool>,
    now: i64,
) -> Result<(), ApiError> {
    let Some(row) = tx.get_resource(tenant, kind, name).await? else {
        return Ok(());
    };
    if row.status.get(MARK).and_then(Value::as_str) != Some(id) {
        return Ok(());
    }
    let mut next = ResourceRow {
        version: row.version + 1,
        updated_at: now,
        ..row.clone()
    };
    if let Value::Object(status) = &mut next.status {
        status.remove(MARK);
        match kind {
            ResourceKind::Endpoint => {
                status.insert(
                    "enabled".into(),
                    Value::Bool(enabled_before.unwrap_or(true)),
                );
            }
            ResourceKind::Flow => {
                status.remove("enabled");
            }
            ResourceKind::Target => {}
        }
    }
    write(tx, tenant, &next, row.version).await
}

async fn write(
    tx: &mut dyn StoreTx,
    tenant: &str,
    next: &ResourceRow,
    expected: i64,
) -> Result<(), ApiError> {
    if tx.update_resource(tenant, next, expected).await? {
        Ok(())
    } else {
        Err(ApiError::Internal(
            "resource changed inside its own write transaction".into(),
        ))
    }
}

/// The effect of entering `draining`: the resource is marked and, with `cascade_flows`, so
/// is every flow that references it. `None`: the facts moved since they were read (the
/// resource is gone, or flows reference it and `cascade_flows` is off): roll back.
async fn enter_draining(
    tx: &mut dyn StoreTx,
    tenant: &str,
    row: &RetirementRow,
    now: i64,
) -> Result<Option<(Vec<String>, Option<bool>)>, ApiError> {
    // The resource's row first: on PostgreSQL its lock orders this against a flow being
    // created to it (which locks the row it references), so the flows read next are all.
    let Some(enabled_before) = mark(tx, tenant, row.kind, &row.name, &row.id, now).await? else {
        return Ok(None);
    };
    let flows = tx
        .flows_referencing(tenant, row.kind, &row.name, MAX_FLOWS)
        .await?;
    if !flows.is_empty() && !row.cascade_flows {
        return Ok(None);
    }
    for flow in &flows {
        mark(tx, tenant, ResourceKind::Flow, flow, &row.id, now).await?;
    }
    Ok(Some((flows, enabled_before)))
}

/// The effect of entering `deleted`: the cascaded flows, then the resource, each kept as a
/// tombstone; a target's signing secrets go with it; with `dlq: purge` its dead deliveries
/// too. `false`: a flow that is not the retirement's references it (roll back and wait).
async fn delete(
    tx: &mut dyn StoreTx,
    tenant: &str,
    row: &RetirementRow,
    now: i64,
) -> Result<bool, ApiError> {
    let flows = tx
        .flows_referencing(tenant, row.kind, &row.name, MAX_FLOWS)
        .await?;
    if let Some(foreign) = flows.iter().find(|f| !row.cascaded_flows.contains(f)) {
        tracing::warn!(retirement = %row.id, flow = %foreign,
            "a flow the retirement did not cascade references the resource; the delete waits");
        return Ok(false);
    }
    for flow in &row.cascaded_flows {
        remove(tx, tenant, ResourceKind::Flow, flow, &row.id, now).await?;
    }
    remove(tx, tenant, row.kind, &row.name, &row.id, now).await?;
    if row.dlq == switchyard_protocol::DlqDisposition::Purge {
        tx.purge_dead(tenant, row.kind, &row.name).await?;
    }
    Ok(true)
}

/// Deletes one resource the retirement holds, keeping its tombstone.
async fn remove(
    tx: &mut dyn StoreTx,
    tenant: &str,
    kind: ResourceKind,
    name: &str,
    id: &str,
    now: i64,
) -> Result<(), ApiError> {
    let Some(resource) = tx.get_resource(tenant, kind, name).await? else {
        return Ok(());
    };
    if resource.status.get(MARK).and_then(Value::as_str) != Some(id) {
        return Ok(());
    }
    tx.insert_tombstone(tenant, &resource, id, now).await?;
    tx.delete_resource(tenant, kind, name).await?;
    if kind == ResourceKind::Target {
        tx.delete_signing_secrets(tenant, name).await?;
        tx.delete_client_certificates(tenant, name).await?;
    }
    Ok(())
}

/// Creates retirement `id` in the state its facts start it in (entering `draining` at
/// once, with its effect, when nothing blocks it), or finds the one the id already names.
pub async fn start(
    ctx: &DeliveryContext,
    tenant: &str,
    id: &str,
    fingerprint: &[u8],
    request: &RetirementRequest,
) -> Result<Started, ApiError> {
    if let Some(row) = ctx.store.retirement(tenant, id).await? {
        return Ok(Started::Exists(row));
    }
    // The facts are read outside the transaction; if they moved before it (a flow came or
    // went), the effect finds out and the attempt is made again with fresh ones.
    for _ in 0..3 {
        let facts = ctx
            .store
            .retirement_facts(tenant, request.kind, &request.name)
            .await?;
        if !facts.exists {
            return Err(ApiError::NotFound {
                kind: request.kind.as_str(),
                name: request.name.clone(),
            });
        }
        let now = ctx.clock.now_ms();
        let state = machine::initial_state(request.cascade_flows, &facts);
        let blockers = machine::blockers(request.cascade_flows, &facts);
        let impact = machine::impact(&facts);
        let new = NewRetirement {
            tenant,
            id,
            fingerprint,
            request,
            state,
            blockers: &blockers,
            impact: &impact,
            now,
        };
        if let Some(started) = try_start(ctx, &facts, &new).await? {
            return Ok(started);
        }
    }
    Err(ApiError::Internal(
        "the resource kept changing while the retirement was created; retry".into(),
    ))
}

/// One attempt at creating a retirement in one transaction. `None`: the facts moved under
/// it (the draining effect found out); nothing was written.
async fn try_start(
    ctx: &DeliveryContext,
    facts: &RetirementFacts,
    new: &NewRetirement<'_>,
) -> Result<Option<Started>, ApiError> {
    let (tenant, id, state) = (new.tenant, new.id, new.state);
    let mut tx = ctx.store.begin().await?;
    match tx.insert_retirement(new).await? {
        Inserted::Created => {}
        Inserted::IdTaken => {
            drop(tx);
            return Ok(Some(Started::Exists(reread(ctx, tenant, id).await?)));
        }
        Inserted::ResourceRetiring => {
            return Err(ApiError::ResourceRetiring {
                kind: new.request.kind.as_str(),
                name: new.request.name.clone(),
            });
        }
    }
    if state == RetirementState::Draining {
        let row = tx
            .retirement_in_tx(tenant, id)
            .await?
            .ok_or_else(vanished)?;
        let Some((cascaded, enabled_before)) =
            enter_draining(&mut *tx, tenant, &row, new.now).await?
        else {
            return Ok(None);
        };
        let change = RetirementChange {
            tenant,
            id,
            from: state,
            to: state,
            blockers: new.blockers,
            impact: new.impact,
            cascaded_flows: &cascaded,
            enabled_before,
            drain_eta: eta(ctx, facts),
            delete_at: None,
            require_drained: false,
            now: new.now,
            #[cfg(feature = "fault-injection")]
            unguarded: false,
        };
        tx.change_retirement(&change).await?;
    }
    crash_point(ctx, state, false);
    tx.commit().await?;
    crash_point(ctx, state, true);
    Ok(Some(Started::Created(reread(ctx, tenant, id).await?)))
}

/// Reads back a retirement this request created or found.
async fn reread(ctx: &DeliveryContext, tenant: &str, id: &str) -> Result<RetirementRow, ApiError> {
    ctx.store.retirement(tenant, id).await?.ok_or_else(vanished)
}

fn vanished() -> ApiError {
    ApiError::Internal("a retirement vanished".into())
}

/// Applies `step` to `row` in one transaction. `false`: the guard (or the effect's re-check)
/// failed, and nothing was written.
async fn apply(
    ctx: &DeliveryContext,
    tenant: &str,
    row: &RetirementRow,
    step: &Step,
) -> Result<bool, ApiError> {
    let now = ctx.clock.now_ms();
    let mut tx = ctx.store.begin().await?;
    let mut cascaded = row.cascaded_flows.clone();
    let mut enabled_before = row.enabled_before;
    let moving = step.to != step.from;
    if moving && step.to == RetirementState::Draining {
        let Some((flows, before)) = enter_draining(&mut *tx, tenant, row, now).await? else {
            return Ok(false);
        };
        cascaded = flows;
        enabled_before = before;
    }
    if moving && step.to == RetirementState::Deleted && !delete(&mut *tx, tenant, row, now).await? {
        return Ok(false);
    }
    let change = RetirementChange {
        tenant,
        id: &row.id,
        from: step.from,
        to: step.to,
        blockers: &step.blockers,
        impact: &step.impact,
        cascaded_flows: &cascaded,
        enabled_before,
        drain_eta: step.drain_eta,
        delete_at: step.delete_at,
        require_drained: step.require_drained,
        now,
        #[cfg(feature = "fault-injection")]
        unguarded: ctx.config.unguarded_retirement,
    };
    if !tx.change_retirement(&change).await? {
        return Ok(false);
    }
    if moving {
        crash_point(ctx, step.to, false);
    }
    tx.commit().await?;
    if moving {
        crash_point(ctx, step.to, true);
        tracing::info!(retirement = %row.id, from = ?step.from, to = ?step.to, "retirement moved");
    }
    Ok(true)
}

/// Takes retirement `id` of `tenant` as far as it can go now, one guarded transition at a
/// time. Returns the transitions (and refreshes) this call committed.
pub async fn advance(ctx: &DeliveryContext, tenant: &str, id: &str) -> Result<usize, ApiError> {
    let mut moved = 0;
    for _ in 0..STEPS_PER_PASS {
        let Some(row) = ctx.store.retirement(tenant, id).await? else {
            break;
        };
        let facts = ctx
            .store
            .retirement_facts(tenant, row.kind, &row.name)
            .await?;
        let Some(step) = machine::next(&row, &facts, eta(ctx, &facts), ctx.clock.now_ms()) else {
            break;
        };
        #[cfg(feature = "fault-injection")]
        if ctx.config.unguarded_retirement {
            // Widen the window between the read and the write, as a busy replica would.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        if !apply(ctx, tenant, &row, &step).await? {
            break;
        }
        moved += 1;
        if step.to == step.from {
            break;
        }
    }
    Ok(moved)
}

/// One pass over the open retirements of every tenant (the delivery worker's loop runs it).
pub async fn pass(ctx: &DeliveryContext) -> Result<usize, StoreError> {
    let mut moved = 0;
    for (tenant, id) in ctx.store.open_retirements(PASS_LIMIT).await? {
        match advance(ctx, &tenant, &id).await {
            Ok(n) => moved += n,
            Err(e) => tracing::warn!(retirement = %id, error = %e,
                "advancing a retirement failed; the next pass retries"),
        }
    }
    Ok(moved)
}

#[cfg(feature = "fault-injection")]
fn crash_point(ctx: &DeliveryContext, state: RetirementState, committed: bool) {
    if let Some(crash) = ctx.config.retirement_crash
        && crash.state == state
        && crash.after_commit == committed
    {
        eprintln!(
            "SWITCHYARD_TEST_CRASH_AT: aborting {} the commit of {state:?}",
            if committed { "after" } else { "before" }
        );
        std::process::abort();
    }
}

#[cfg(not(feature = "fault-injection"))]
fn crash_point(_ctx: &DeliveryContext, _state: RetirementState, _committed: bool) {}
