//! Running a console-side fix. Each re-checks its finding first (a finding that has gone
//! changes nothing), and each change of the outbox is one guarded statement committed with
//! its cache change and audit entry, so a fix run twice, or racing a sync, acts once.

use super::FixOutcome;
use super::local::LocalFix;
use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::lease::{boot_id, owner_is_dead};
use crate::local::effect_visible;
use crate::types::*;

impl Console {
    pub(super) async fn run_local_fix(
        &self,
        profile: &str,
        finding_id: &str,
        action: usize,
    ) -> Result<FixOutcome> {
        let found = self.local_finding(profile, finding_id).await?;
        let (Some(fix), Some(listed)) = (
            found.fixes.get(action).copied(),
            found.finding.actions.get(action).cloned(),
        ) else {
            return Err(CoreError::invalid(
                "action",
                format!(
                    "finding {finding_id:?} has {} fix action(s); {} is not one of them",
                    found.fixes.len(),
                    action + 1
                ),
            ));
        };
        let id = found.op.id;
        let (op, message) = match fix {
            LocalFix::Retry => {
                let op = self.retry(id).await?;
                (
                    op,
                    "queued again with the same Idempotency-Key; the next sync sends it".to_owned(),
                )
            }
            LocalFix::RetryAsNew => {
                if found.op.state == OpState::Pending {
                    self.park(&found.op, "set aside to be sent again as a new write")
                        .await?;
                }
                let op = self.retry_as_new(id).await?;
                let message = format!(
                    "queued as a new write (operation {}, key {}); the next sync sends it",
                    op.id, op.idempotency_key
                );
                (op, message)
            }
            LocalFix::Discard => {
                let op = self.discard(id).await?;
                (op, "discarded: it will not be sent".to_owned())
            }
            LocalFix::Adopt => {
                let op = self.adopt(&found.op).await?;
                let message = format!(
                    "live state matches what was sent: marked confirmed (version {}), nothing resent",
                    op.result_version.map_or("-".into(), |v| v.to_string())
                );
                (op, message)
            }
            LocalFix::ReleaseLease => {
                let op = self.release_stale(&found.op).await?;
                (
                    op,
                    "lease released: pending again with the same key; the next sync sends it"
                        .to_owned(),
                )
            }
        };
        Ok(FixOutcome {
            finding_id: finding_id.to_owned(),
            action: listed,
            queued: None,
            op: Some(op),
            message,
        })
    }

    /// Moves a pending op (not being sent) to needs-attention, so it can be replaced by a new
    /// one. `why` is what the outbox shows until it is.
    async fn park(&self, op: &OutboxOp, why: &str) -> Result<()> {
        let error = OpError {
            status: None,
            problem: None,
            message: why.to_owned(),
            transient: false,
        };
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'needs_attention', last_error = ?, updated_at = ? WHERE id = ? AND state = 'pending'",
        )
        .bind(serde_json::to_string(&error).expect("error serializes"))
        .bind(self.now())
        .bind(op.id)
        .execute(&self.inner.writer)
        .await?;
        if changed.rows_affected() != 1 {
            return Err(CoreError::WrongState {
                id: op.id,
                state: "being sent".into(),
                action: "set aside",
            });
        }
        Ok(())
    }

    /// Adopts an op whose outcome is unknown: reads live state and, only when it shows the
    /// op's effect, marks the op done with the live resource as its result, in one
    /// transaction with the cache change and the audit entry. Nothing is sent.
    async fn adopt(&self, op: &OutboxOp) -> Result<OutboxOp> {
        let client = self.client(&op.profile).await?;
        let live = client.get(op.kind, &op.name).await?;
        let base = self.op_base(op.id).await?;
        if effect_visible(op.op, &op.body, op.if_match, base.as_ref(), live.as_ref()) != Some(true)
        {
            return Err(CoreError::Refused {
                code: "live_state_differs",
                message: format!(
                    "{}/{} on the control plane does not show this {}; nothing was changed (resend it as new or discard it)",
                    op.kind,
                    op.name,
                    op.op.as_str()
                ),
            });
        }
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'done', result_version = ?, last_error = NULL, lease_owner = NULL, \
             lease_until = NULL, updated_at = ? WHERE id = ? AND state IN ('pending', 'needs_attention') AND lease_epoch = \
             (SELECT lease_epoch FROM outbox WHERE id = ?)",
        )
        .bind(live.as_ref().map(|r| r.version))
        .bind(now)
        .bind(op.id)
        .bind(op.id)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Err(CoreError::WrongState {
                id: op.id,
                state: "being sent or resolved".into(),
                action: "adopted",
            });
        }
        crate::cache::settle(&mut tx, op, live.as_ref(), now).await?;
        Audit::new(now, &self.inner.opts.actor, "op.adopt", "ok")
            .profile(&op.profile)
            .op(op.id)
            .resource(format!("{}/{}", op.kind, op.name))
            .detail(format!(
                "live state matches the {} (version {}); not resent",
                op.op.as_str(),
                live.as_ref().map_or("-".into(), |r| r.version.to_string())
            ))
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: op.id,
            from: Some(op.state),
            to: OpState::Done,
        });
        self.emit(Event::CacheChanged {
            profile: op.profile.clone(),
        });
        self.emit_counts(&op.profile).await;
        self.op(op.id).await
    }

    /// Hands back the lease of a process that is gone (or whose lease ran out): the op is
    /// pending again with the same key. Fenced on the lease as read, so a live holder that
    /// renewed it meanwhile, or a sync that took it over, keeps it.
    async fn release_stale(&self, op: &OutboxOp) -> Result<OutboxOp> {
        let lease: Option<(Option<String>, Option<i64>, i64)> = sqlx::query_as(
            "SELECT lease_owner, lease_until, lease_epoch FROM outbox WHERE id = ? AND state = 'sending'",
        )
        .bind(op.id)
        .fetch_optional(&self.inner.pool)
        .await?;
        let now = self.now();
        let stale = lease.as_ref().is_some_and(|(owner, until, _)| {
            let owner = owner.as_deref().unwrap_or_default();
            owner != self.inner.owner
                && (owner_is_dead(owner, &boot_id()) || until.is_some_and(|u| u < now))
        });
        let Some((owner, _, epoch)) = lease.filter(|_| stale) else {
            return Err(CoreError::WrongState {
                id: op.id,
                state: "not held by a stale lease".into(),
                action: "released",
            });
        };
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'pending', lease_owner = NULL, lease_until = NULL, lease_epoch = lease_epoch + 1, \
             next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'sending' AND lease_epoch = ? AND lease_owner IS ?",
        )
        .bind(now)
        .bind(now)
        .bind(op.id)
        .bind(epoch)
        .bind(&owner)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Err(CoreError::WrongState {
                id: op.id,
                state: "taken over meanwhile".into(),
                action: "released",
            });
        }
        Audit::new(now, &self.inner.opts.actor, "op.release_lease", "ok")
            .profile(&op.profile)
            .op(op.id)
            .resource(format!("{}/{}", op.kind, op.name))
            .detail(format!(
                "lease of {} released; same idempotency key",
                owner
                    .as_deref()
                    .and_then(|o| o.split(':').nth(1))
                    .map_or("?".into(), |p| format!("process {p}"))
            ))
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: op.id,
            from: Some(OpState::Sending),
            to: OpState::Pending,
        });
        self.emit_counts(&op.profile).await;
        self.op(op.id).await
    }
}
