//! What the sync engine reads and writes in SQLite: the live ops it plans with, the fenced
//! claim, and each attempt's outcome (with the cache change and the audit entry in the same
//! transaction). Every write after a claim is conditional on the claim's lease epoch.

use switchyard_protocol::{Resource, ResourceKind};

use super::attempt::{Claimed, Finished, Run};
use crate::Console;
use crate::audit::Audit;
use crate::error::Result;
use crate::lease::owner_is_dead;
use crate::outbox::{OP_COLUMNS, OpRow};
use crate::retry::{AttemptOutcome, Next, next_after};
use crate::schedule::LiveOp;
use crate::types::*;

/// What the planner needs of a live op, as stored.
#[derive(sqlx::FromRow)]
struct LiveRow {
    id: i64,
    seq: i64,
    kind: ResourceKind,
    name: String,
    after_keys: String,
    state: OpState,
    next_attempt_at: i64,
    lease_until: Option<i64>,
    lease_owner: Option<String>,
    lease_epoch: i64,
}

impl LiveRow {
    fn into_live(self, my_boot: &str) -> LiveOp {
        LiveOp {
            id: self.id,
            seq: self.seq,
            kind: self.kind,
            owner_dead: self
                .lease_owner
                .as_deref()
                .is_some_and(|o| owner_is_dead(o, my_boot)),
            name: self.name,
            after: serde_json::from_str(&self.after_keys).unwrap_or_default(),
            state: self.state,
            next_attempt_at: self.next_attempt_at,
            lease_until: self.lease_until,
            lease_epoch: self.lease_epoch,
        }
    }
}

/// A claimed row: the op, and whether an earlier claim already sent it.
#[derive(sqlx::FromRow)]
struct ClaimedRow {
    #[sqlx(flatten)]
    op: OpRow,
    sent_before: bool,
}

const LIVE_COLUMNS: &str = "id, seq, kind, name, after_keys, state, next_attempt_at, lease_until, lease_owner, lease_epoch";

impl Console {
    /// Re-reads one op after its attempt, keeping the in-memory live list current.
    pub(super) async fn refresh_live(
        &self,
        live: &mut Vec<LiveOp>,
        id: i64,
        my_boot: &str,
    ) -> Result<()> {
        let row: Option<LiveRow> =
            sqlx::query_as(&format!("SELECT {LIVE_COLUMNS} FROM outbox WHERE id = ?"))
                .bind(id)
                .fetch_optional(&self.inner.pool)
                .await?;
        match row {
            Some(r) if r.state.is_live() => {
                if let Some(op) = live.iter_mut().find(|o| o.id == id) {
                    *op = r.into_live(my_boot);
                }
            }
            _ => live.retain(|o| o.id != id),
        }
        Ok(())
    }

    pub(super) async fn load_live(&self, profile: &str, my_boot: &str) -> Result<Vec<LiveOp>> {
        let rows: Vec<LiveRow> = sqlx::query_as(&format!(
            "SELECT {LIVE_COLUMNS} FROM outbox WHERE profile = ? \
             AND state IN ('pending','sending','needs_attention') ORDER BY seq, id"
        ))
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(rows.into_iter().map(|r| r.into_live(my_boot)).collect())
    }

    /// Claims an op for this process: one conditional UPDATE on the epoch we saw, so two
    /// processes can never both win. Fixes `If-Match` before the first send.
    pub(super) async fn claim(&self, id: i64, epoch: i64) -> Result<Option<Claimed>> {
        let now = self.now();
        let lease_until = now + self.inner.opts.lease.as_millis() as i64;
        // One statement, so it is atomic on its own. A chained op (queued behind earlier
        // writes to the same resource) takes as If-Match the version the last of them
        // produced, else the cached server version; it is fixed here, before the first send.
        // `first_sent_at` is set on the first claim: a value equal to `now` means "never
        // sent before", which the retention check treats as fresh.
        let claimed: Option<ClaimedRow> = sqlx::query_as(&format!(
            "UPDATE outbox SET state = 'sending', lease_owner = ?1, lease_until = ?2, lease_epoch = lease_epoch + 1, \
             attempts = attempts + 1, updated_at = ?3, first_sent_at = COALESCE(first_sent_at, ?3), \
             if_match = CASE WHEN if_match_fixed = 1 THEN if_match ELSE COALESCE( \
                 (SELECT p.result_version FROM outbox p WHERE p.profile = outbox.profile AND p.kind = outbox.kind \
                  AND p.name = outbox.name AND p.seq < outbox.seq AND p.state = 'done' ORDER BY p.seq DESC, p.id DESC LIMIT 1), \
                 (SELECT c.server_version FROM cache c WHERE c.profile = outbox.profile AND c.kind = outbox.kind \
                  AND c.name = outbox.name)) END, \
             if_match_fixed = 1 \
             WHERE id = ?4 AND lease_epoch = ?5 AND state IN ('pending', 'sending') \
             RETURNING {OP_COLUMNS}, first_sent_at < ?3 AS sent_before"
        ))
        .bind(&self.inner.owner)
        .bind(lease_until)
        .bind(now)
        .bind(id)
        .bind(epoch)
        .fetch_optional(&self.inner.writer)
        .await?;
        let Some(claimed) = claimed else {
            return Ok(None);
        };
        let epoch = claimed.op.lease_epoch;
        Ok(Some(Claimed {
            op: claimed.op.try_into()?,
            epoch,
            sent_before: claimed.sent_before,
        }))
    }
}

impl Run {
    pub(super) async fn record_transient(
        &self,
        op: &OutboxOp,
        epoch: i64,
        status: Option<u16>,
        message: String,
    ) -> Finished {
        self.record_outcome(
            op,
            epoch,
            AttemptOutcome::Transient {
                retry_after_ms: None,
            },
            OpError {
                status,
                problem: None,
                message,
                transient: true,
            },
        )
        .await
    }

    pub(super) async fn record_done(
        &self,
        op: &OutboxOp,
        epoch: i64,
        resource: Option<Resource>,
        status: u16,
    ) -> Finished {
        match self.try_record_done(op, epoch, resource, status).await {
            Ok(f) => f,
            Err(e) => Finished::Aborted(e.to_string()),
        }
    }

    async fn try_record_done(
        &self,
        op: &OutboxOp,
        epoch: i64,
        resource: Option<Resource>,
        status: u16,
    ) -> Result<Finished> {
        let c = &self.console;
        let now = c.now();
        let mut tx = c.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'done', result_version = ?, last_error = NULL, lease_owner = NULL, lease_until = NULL, \
             updated_at = ? WHERE id = ? AND lease_epoch = ? AND state = 'sending'",
        )
        .bind(resource.as_ref().map(|r| r.version))
        .bind(now)
        .bind(op.id)
        .bind(epoch)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Ok(Finished::LostLease);
        }
        crate::cache::settle(&mut tx, op, resource.as_ref(), now).await?;
        Audit::new(now, "sync", "op.done", "ok")
            .profile(&op.profile)
            .op(op.id)
            .resource(format!("{}/{}", op.kind, op.name))
            .detail(format!("{} → HTTP {status}", op.op.as_str()))
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.budget.on_success(now);
        c.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: op.id,
            from: Some(OpState::Sending),
            to: OpState::Done,
        });
        Ok(Finished::Done)
    }

    pub(super) async fn record_outcome(
        &self,
        op: &OutboxOp,
        epoch: i64,
        outcome: AttemptOutcome,
        error: OpError,
    ) -> Finished {
        match self.try_record_outcome(op, epoch, outcome, error).await {
            Ok(f) => f,
            Err(e) => Finished::Aborted(e.to_string()),
        }
    }

    async fn try_record_outcome(
        &self,
        op: &OutboxOp,
        epoch: i64,
        outcome: AttemptOutcome,
        error: OpError,
    ) -> Result<Finished> {
        let c = &self.console;
        let now = c.now();
        let failures: i64 = sqlx::query_scalar("SELECT failures FROM outbox WHERE id = ?")
            .bind(op.id)
            .fetch_one(&c.inner.pool)
            .await?;
        let next = next_after(
            &outcome,
            failures as u32 + 1,
            &c.inner.opts.retry,
            &self.budget,
            now,
            c.inner.opts.rng.as_ref(),
        );
        let error_json = serde_json::to_string(&error).expect("error serializes");
        let mut tx = c.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let (state, next_at, failures_now, finished) = match next {
            Next::RetryAt { at_ms } => (OpState::Pending, at_ms, failures + 1, Finished::Retry),
            Next::Hold => (OpState::Pending, now, failures, Finished::Unauthorized),
            Next::NeedsAttention { .. } => (
                OpState::NeedsAttention,
                now,
                failures,
                Finished::NeedsAttention,
            ),
            Next::Done => unreachable!("failures are never done"),
        };
        let changed = sqlx::query(
            "UPDATE outbox SET state = ?, next_attempt_at = ?, failures = ?, last_error = ?, lease_owner = NULL, lease_until = NULL, \
             updated_at = ? WHERE id = ? AND lease_epoch = ? AND state = 'sending'",
        )
        .bind(state)
        .bind(next_at)
        .bind(failures_now)
        .bind(&error_json)
        .bind(now)
        .bind(op.id)
        .bind(epoch)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Ok(Finished::LostLease);
        }
        if state == OpState::NeedsAttention {
            Audit::new(now, "sync", "op.needs_attention", "needs_attention")
                .profile(&op.profile)
                .op(op.id)
                .resource(format!("{}/{}", op.kind, op.name))
                .detail(error.message.clone())
                .record(&mut tx)
                .await?;
        }
        tx.commit().await?;
        c.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: op.id,
            from: Some(OpState::Sending),
            to: state,
        });
        Ok(finished)
    }
}
