//! A person's decisions on an op that needs attention: retry it (same key), retry it as a
//! new op (a new key, rebased on the server's current version), discard it, or look at the
//! three-way conflict view first.

use serde_json::Value;

use super::Replaces;
use crate::Console;
use crate::audit::Audit;
use crate::cache::recompute_local;
use crate::error::{CoreError, Result};
use crate::local::apply_op;
use crate::types::*;

impl Console {
    /// Sends a needs-attention op again. When its last failure was never stored by the
    /// server (gave up on transient failures, 400, 401, 429) the same key is reused;
    /// otherwise the server would replay the stored failure, so this retries it as a new
    /// operation (see [`Console::retry_as_new`]).
    pub async fn retry(&self, id: i64) -> Result<OutboxOp> {
        let op = self.op(id).await?;
        if op.state != OpState::NeedsAttention {
            return Err(CoreError::WrongState {
                id,
                state: op.state.as_str().into(),
                action: "retried",
            });
        }
        let stored_by_server = op.last_error.as_ref().is_some_and(|e| {
            !e.transient
                && e.status
                    .is_some_and(|s| !matches!(s, 400 | 401 | 413 | 415 | 429))
        });
        if stored_by_server {
            return self.retry_as_new(id).await;
        }
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'pending', failures = 0, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'needs_attention'",
        )
        .bind(now)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Err(CoreError::WrongState {
                id,
                state: "changed concurrently".into(),
                action: "retried",
            });
        }
        Audit::new(now, &self.inner.opts.actor, "op.retry", "ok")
            .profile(&op.profile)
            .op(id)
            .resource(format!("{}/{}", op.kind, op.name))
            .detail("same idempotency key")
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: id,
            from: Some(OpState::NeedsAttention),
            to: OpState::Pending,
        });
        self.emit_counts(&op.profile).await;
        self.op(id).await
    }

    /// Replaces a needs-attention op with a new one: a new idempotency key, rebased on the
    /// server's current version (fetched live; needs the server), same place in the order.
    pub async fn retry_as_new(&self, id: i64) -> Result<OutboxOp> {
        let op = self.op(id).await?;
        if op.state != OpState::NeedsAttention {
            return Err(CoreError::WrongState {
                id,
                state: op.state.as_str().into(),
                action: "retried as new",
            });
        }
        let client = self.client(&op.profile).await?;
        let current = client.get(op.kind, &op.name).await?;
        let write = write_of(&op);
        // Rebase the cache on server truth first, so the new op's base is what the server has.
        self.store_server_state(&op.profile, op.kind, &op.name, current.as_ref())
            .await?;
        let seq: i64 = sqlx::query_scalar("SELECT seq FROM outbox WHERE id = ?")
            .bind(id)
            .fetch_one(&self.inner.pool)
            .await?;
        // The new op keeps the origin (an agent's or GitOps' write stays theirs) with a new key.
        let opts = EnqueueOptions {
            origin: op.origin.clone(),
            ..Default::default()
        };
        let replaces = Replaces {
            seq,
            old_id: id,
            if_match: current.as_ref().map(|c| c.version),
        };
        let result = self
            .enqueue_inner(&op.profile, write, Some(replaces), &opts)
            .await
            .map(|done| done.op);
        if result.is_err() {
            let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
            recompute_local(&mut tx, &op.profile, op.kind, &op.name).await?;
            tx.commit().await?;
        }
        let new = result?;
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: id,
            from: Some(OpState::NeedsAttention),
            to: OpState::Superseded,
        });
        Ok(new)
    }

    /// Drops a pending or needs-attention op; the cache returns to server truth plus the
    /// remaining queued writes.
    pub async fn discard(&self, id: i64) -> Result<OutboxOp> {
        let op = self.op(id).await?;
        if !matches!(op.state, OpState::Pending | OpState::NeedsAttention) {
            return Err(CoreError::WrongState {
                id,
                state: op.state.as_str().into(),
                action: "discarded",
            });
        }
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        // A pending op is only discarded if no sync claimed it meanwhile.
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'discarded', updated_at = ? WHERE id = ? AND state IN ('pending', 'needs_attention') AND lease_epoch = ?",
        )
        .bind(now)
        .bind(id)
        .bind(self.lease_epoch(id).await?)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Err(CoreError::WrongState {
                id,
                state: "being sent".into(),
                action: "discarded",
            });
        }
        recompute_local(&mut tx, &op.profile, op.kind, &op.name).await?;
        Audit::new(now, &self.inner.opts.actor, "op.discard", "ok")
            .profile(&op.profile)
            .op(id)
            .resource(format!("{}/{}", op.kind, op.name))
            .detail(op.op.as_str())
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: id,
            from: Some(op.state),
            to: OpState::Discarded,
        });
        self.emit(Event::CacheChanged {
            profile: op.profile.clone(),
        });
        self.emit_counts(&op.profile).await;
        self.op(id).await
    }

    async fn lease_epoch(&self, id: i64) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT lease_epoch FROM outbox WHERE id = ?")
                .bind(id)
                .fetch_one(&self.inner.pool)
                .await?,
        )
    }

    /// The three-way view of an op (meant for 412 `version_mismatch`): the spec the operator
    /// started from, what they want, and what the server has now (live; from the cache when
    /// the server cannot be reached).
    pub async fn conflict(&self, id: i64) -> Result<ConflictView> {
        let op = self.op(id).await?;
        let base = self.op_base(id).await?;
        let mine = apply_op(op.kind, &op.name, base.as_ref(), op.op, &op.body)
            .ok()
            .flatten()
            .map(|v| v.spec);
        let (theirs, from_cache) = match self.client(&op.profile).await {
            Ok(client) => match client.get(op.kind, &op.name).await {
                Ok(r) => (r, false),
                Err(_) => (
                    self.get_resource(&op.profile, op.kind, &op.name)
                        .await
                        .ok()
                        .and_then(|c| c.server),
                    true,
                ),
            },
            Err(_) => (
                self.get_resource(&op.profile, op.kind, &op.name)
                    .await
                    .ok()
                    .and_then(|c| c.server),
                true,
            ),
        };
        let base_spec = base.map(|b| b.spec);
        let conflicting_fields = conflicting_fields(
            base_spec.as_ref(),
            mine.as_ref(),
            theirs.as_ref().map(|t| &t.spec),
        );
        Ok(ConflictView {
            op_id: id,
            kind: op.kind,
            name: op.name,
            base: base_spec,
            base_version: op.base_version.or(op.if_match),
            mine,
            theirs,
            theirs_from_cache: from_cache,
            conflicting_fields,
        })
    }
}

/// Top-level fields both sides changed from base, to different values.
fn conflicting_fields(
    base: Option<&Value>,
    mine: Option<&Value>,
    theirs: Option<&Value>,
) -> Vec<String> {
    let field = |v: Option<&Value>, k: &str| v.and_then(|v| v.get(k)).cloned();
    let mut keys: Vec<String> = [base, mine, theirs]
        .iter()
        .flat_map(|v| {
            v.and_then(|v| v.as_object())
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| {
            let (b, m, t) = (field(base, k), field(mine, k), field(theirs, k));
            m != b && t != b && m != t
        })
        .collect()
}

/// The write an op was queued from (to queue it again as a new op).
fn write_of(op: &OutboxOp) -> Write {
    match op.op {
        OpKind::Create => Write::Create {
            kind: op.kind,
            name: op.name.clone(),
            spec: op.body["spec"].clone(),
        },
        OpKind::Update => Write::Update {
            kind: op.kind,
            name: op.name.clone(),
            patch: op.body["spec"].clone(),
        },
        OpKind::Apply => Write::Apply {
            kind: op.kind,
            name: op.name.clone(),
            spec: op.body["spec"].clone(),
        },
        OpKind::Delete => Write::Delete {
            kind: op.kind,
            name: op.name.clone(),
        },
        OpKind::Enable => Write::Enable {
            name: op.name.clone(),
        },
        OpKind::Disable => Write::Disable {
            name: op.name.clone(),
        },
    }
}
