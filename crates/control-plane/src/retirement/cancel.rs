//! `POST /v1/retirements/{id}/cancel`: a keyed operation, run in the idempotency pipeline's
//! unit of work. The guarded transition to `cancelled` and the undoing of what the
//! retirement did (the resource and its cascaded flows enabled again, exactly as before)
//! commit together with the stored response. Nothing is deleted by a cancel; a retirement
//! that has deleted its resource answers 409 `retirement_not_cancellable`.

use async_trait::async_trait;
use switchyard_protocol::{ResourceKind, RetirementState};

use super::advance::unmark;
use super::{render, stored};
use crate::error::ApiError;
use crate::idempotency::{OpContext, Operation};
use crate::store::{RetirementChange, StoreTx, StoredResponse};

/// How often a cancel re-reads a retirement an advancer moved under it.
const ATTEMPTS: usize = 5;

pub struct Cancel {
    pub id: String,
}

#[async_trait]
impl Operation for Cancel {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        for _ in 0..ATTEMPTS {
            let row = tx
                .retirement_in_tx(ctx.tenant, &self.id)
                .await?
                .ok_or_else(|| ApiError::NotFound {
                    kind: "retirement",
                    name: self.id.clone(),
                })?;
            match row.state {
                RetirementState::Deleted => {
                    return Err(ApiError::RetirementNotCancellable {
                        id: self.id.clone(),
                    });
                }
                RetirementState::Cancelled => return Ok(stored(200, &render(row))),
                _ => {}
            }
            let change = RetirementChange {
                tenant: ctx.tenant,
                id: &self.id,
                from: row.state,
                to: RetirementState::Cancelled,
                blockers: &[],
                impact: &row.impact,
                cascaded_flows: &row.cascaded_flows,
                enabled_before: row.enabled_before,
                drain_eta: None,
                delete_at: None,
                require_drained: false,
                now: ctx.now,
                #[cfg(feature = "fault-injection")]
                unguarded: false,
            };
            if !tx.change_retirement(&change).await? {
                // An advancer moved it first (PostgreSQL): read it again.
                continue;
            }
            // Only what this retirement marked is touched (`unmark` checks the mark).
            unmark(
                tx,
                ctx.tenant,
                row.kind,
                &row.name,
                &self.id,
                row.enabled_before,
                ctx.now,
            )
            .await?;
            for flow in &row.cascaded_flows {
                unmark(
                    tx,
                    ctx.tenant,
                    ResourceKind::Flow,
                    flow,
                    &self.id,
                    None,
                    ctx.now,
                )
                .await?;
            }
            let row = tx
                .retirement_in_tx(ctx.tenant, &self.id)
                .await?
                .ok_or_else(|| ApiError::Internal("a retirement vanished".into()))?;
            return Ok(stored(200, &render(row)));
        }
        Err(ApiError::Internal(
            "the retirement kept moving under the cancel; retry with the same key".into(),
        ))
    }
}
