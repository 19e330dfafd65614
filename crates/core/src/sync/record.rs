//! What the sync engine reads and writes in SQLite: the live ops it plans with, the fenced
//! claims, and the attempts' outcomes. Outcomes and the next claims are written together in
//! one transaction per turn of the run (group commit), with set-based statements: one UPDATE
//! for every confirmed op, one multi-row upsert for their cache rows, one multi-row INSERT
//! for their audit entries, one UPDATE claiming the next ops. Every write after a claim is
//! conditional on the claim's lease epoch, so a stale holder's write changes nothing.

use sqlx::{QueryBuilder, Sqlite, Transaction};
use switchyard_protocol::{Resource, ResourceKind};

use super::attempt::{Attempted, Claimed, Outcome, Run};
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

/// A claimed row: the op, whether an earlier claim already sent it, its failures so far.
#[derive(sqlx::FromRow)]
struct ClaimedRow {
    #[sqlx(flatten)]
    op: OpRow,
    sent_before: bool,
    failures: i64,
}

/// How recording an attempt left its op.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Finished {
    Done,
    /// Back to pending, due at `at` (same key).
    Retry {
        at: i64,
    },
    NeedsAttention,
    /// 401: the op is back to pending untouched (due now); the run stops.
    Unauthorized {
        at: i64,
    },
    /// Another process took the lease over; our result was dropped (it resends the same key).
    LostLease,
}

/// One recorded attempt: the op, its claim's epoch, and how it ended.
pub(super) struct Recorded {
    pub id: i64,
    pub epoch: i64,
    pub finished: Finished,
}

const LIVE_COLUMNS: &str = "id, seq, kind, name, after_keys, state, next_attempt_at, lease_until, lease_owner, lease_epoch";

impl Console {
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

    /// Claims ops for this process: one conditional UPDATE, each op on the epoch we saw, so
    /// two processes can never both win one. Fixes `If-Match` before the first send.
    /// Returns the ops won (others were taken or changed meanwhile).
    pub(super) async fn claim(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        wanted: &[(i64, i64)],
    ) -> Result<Vec<Claimed>> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let now = self.now();
        let lease_until = now + self.inner.opts.lease.as_millis() as i64;
        // A chained op (queued behind earlier writes to the same resource) takes as If-Match
        // the version the last of them produced, else the cached server version; it is fixed
        // here, before the first send. `first_sent_at` is set on the first claim: a value
        // equal to `now` means "never sent before", which the retention check treats as fresh.
        let mut sql =
            QueryBuilder::<Sqlite>::new("UPDATE outbox SET state = 'sending', lease_owner = ");
        sql.push_bind(&self.inner.owner)
            .push(", lease_until = ")
            .push_bind(lease_until)
            .push(", lease_epoch = lease_epoch + 1, attempts = attempts + 1, updated_at = ")
            .push_bind(now)
            .push(", first_sent_at = COALESCE(first_sent_at, ")
            .push_bind(now)
            .push(
                "), if_match = CASE WHEN if_match_fixed = 1 THEN if_match ELSE COALESCE( \
                 (SELECT p.result_version FROM outbox p WHERE p.profile = outbox.profile AND p.kind = outbox.kind \
                  AND p.name = outbox.name AND p.seq < outbox.seq AND p.state = 'done' ORDER BY p.seq DESC, p.id DESC LIMIT 1), \
                 (SELECT c.server_version FROM cache c WHERE c.profile = outbox.profile AND c.kind = outbox.kind \
                  AND c.name = outbox.name)) END, if_match_fixed = 1 WHERE state IN ('pending', 'sending') AND id IN (",
            );
        let mut ids = sql.separated(", ");
        for (id, _) in wanted {
            ids.push_bind(*id);
        }
        sql.push(") AND lease_epoch = CASE id");
        for (id, epoch) in wanted {
            sql.push(" WHEN ")
                .push_bind(*id)
                .push(" THEN ")
                .push_bind(*epoch);
        }
        sql.push(format!(
            " END RETURNING {OP_COLUMNS}, failures, first_sent_at < "
        ))
        .push_bind(now)
        .push(" AS sent_before");
        let rows: Vec<ClaimedRow> = sql.build_query_as().fetch_all(&mut **tx).await?;
        rows.into_iter()
            .map(|row| {
                Ok(Claimed {
                    epoch: row.op.lease_epoch,
                    sent_before: row.sent_before,
                    failures: row.failures,
                    op: row.op.try_into()?,
                })
            })
            .collect()
    }

    /// Gives back claims this process will not send (the run stopped first): the ops are
    /// pending again, as if never claimed by this run.
    pub(super) async fn release(&self, claims: &[Claimed]) -> Result<()> {
        if claims.is_empty() {
            return Ok(());
        }
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        for c in claims {
            sqlx::query(
                "UPDATE outbox SET state = 'pending', lease_owner = NULL, lease_until = NULL, attempts = attempts - 1, \
                 first_sent_at = CASE WHEN ? THEN first_sent_at END WHERE id = ? AND lease_epoch = ? AND state = 'sending'",
            )
            .bind(c.sent_before)
            .bind(c.op.id)
            .bind(c.epoch)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

impl Run {
    /// Records finished attempts in the caller's transaction. Events and the retry budget's
    /// successes follow once the caller has committed (see [`Run::announce`]).
    pub(super) async fn record(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        batch: &[Attempted],
    ) -> Result<Vec<Recorded>> {
        let now = self.console.now();
        let mut recorded = Vec::with_capacity(batch.len());
        let done: Vec<&Attempted> = batch
            .iter()
            .filter(|a| matches!(a.outcome, Outcome::Done { .. }))
            .collect();
        let confirmed = mark_done(tx, &done, now).await?;
        let settled: Vec<&Attempted> = done
            .into_iter()
            .filter(|a| confirmed.contains(&a.claimed.op.id))
            .collect();
        settle_all(tx, &settled, now).await?;
        audit_done(tx, &settled, now).await?;
        let owing: Vec<&OutboxOp> = settled
            .iter()
            .filter(|a| {
                matches!(
                    a.outcome,
                    Outcome::Done {
                        secret: Some(_),
                        ..
                    }
                )
            })
            .map(|a| &a.claimed.op)
            .collect();
        crate::owed_secrets::owe(tx, &owing, now).await?;
        for a in batch {
            let claimed = &a.claimed;
            let finished = match &a.outcome {
                Outcome::Done { .. } if confirmed.contains(&claimed.op.id) => Finished::Done,
                Outcome::Done { .. } => Finished::LostLease,
                Outcome::Failed { outcome, error } => {
                    self.record_failure(tx, claimed, outcome, error, now)
                        .await?
                }
            };
            recorded.push(Recorded {
                id: claimed.op.id,
                epoch: claimed.epoch,
                finished,
            });
        }
        Ok(recorded)
    }

    /// After the commit: the retry budget regains tokens for successes, subscribers see each
    /// op's transition, and a created target's first secret waits in memory for a person
    /// (its durable "owed" note committed with the confirmation).
    pub(super) fn announce(&self, batch: &[Attempted], recorded: &[Recorded]) {
        let now = self.console.now();
        for (a, r) in batch.iter().zip(recorded) {
            let to = match r.finished {
                Finished::Done => {
                    self.budget.on_success(now);
                    if let Outcome::Done {
                        secret: Some(s), ..
                    } = &a.outcome
                    {
                        self.console.hold_shown_secret(s.clone());
                    }
                    OpState::Done
                }
                Finished::Retry { .. } | Finished::Unauthorized { .. } => OpState::Pending,
                Finished::NeedsAttention => OpState::NeedsAttention,
                Finished::LostLease => continue,
            };
            self.console.emit(Event::OpTransition {
                profile: a.claimed.op.profile.clone(),
                op_id: r.id,
                from: Some(OpState::Sending),
                to,
            });
        }
    }

    async fn record_failure(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        claimed: &Claimed,
        outcome: &AttemptOutcome,
        error: &OpError,
        now: i64,
    ) -> Result<Finished> {
        let c = &self.console;
        let failures = claimed.failures;
        let next = next_after(
            outcome,
            failures as u32 + 1,
            &c.inner.opts.retry,
            &self.budget,
            now,
            c.inner.opts.rng.as_ref(),
        );
        let (state, next_at, failures_now, finished) = match next {
            Next::RetryAt { at_ms } => (
                OpState::Pending,
                at_ms,
                failures + 1,
                Finished::Retry { at: at_ms },
            ),
            Next::Hold => (
                OpState::Pending,
                now,
                failures,
                Finished::Unauthorized { at: now },
            ),
            Next::NeedsAttention { .. } => (
                OpState::NeedsAttention,
                now,
                failures,
                Finished::NeedsAttention,
            ),
            Next::Done => unreachable!("failures are never done"),
        };
        let op = &claimed.op;
        let changed = sqlx::query(
            "UPDATE outbox SET state = ?, next_attempt_at = ?, failures = ?, last_error = ?, lease_owner = NULL, lease_until = NULL, \
             updated_at = ? WHERE id = ? AND lease_epoch = ? AND state = 'sending'",
        )
        .bind(state)
        .bind(next_at)
        .bind(failures_now)
        .bind(serde_json::to_string(error).expect("error serializes"))
        .bind(now)
        .bind(op.id)
        .bind(claimed.epoch)
        .execute(&mut **tx)
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
                .record(tx)
                .await?;
        }
        Ok(finished)
    }
}

fn resource_of(a: &Attempted) -> Option<&Resource> {
    match &a.outcome {
        Outcome::Done { resource, .. } => resource.as_ref(),
        Outcome::Failed { .. } => None,
    }
}

/// Marks confirmed ops done, each only while our claim still holds it. Returns the ids
/// marked (the others lost their lease).
async fn mark_done(
    tx: &mut Transaction<'_, Sqlite>,
    done: &[&Attempted],
    now: i64,
) -> Result<Vec<i64>> {
    if done.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql =
        QueryBuilder::<Sqlite>::new("UPDATE outbox SET state = 'done', result_version = CASE id");
    for a in done {
        sql.push(" WHEN ")
            .push_bind(a.claimed.op.id)
            .push(" THEN ")
            .push_bind(resource_of(a).map(|r| r.version));
    }
    sql.push(" END, last_error = NULL, lease_owner = NULL, lease_until = NULL, updated_at = ")
        .push_bind(now)
        .push(" WHERE state = 'sending' AND id IN (");
    let mut ids = sql.separated(", ");
    for a in done {
        ids.push_bind(a.claimed.op.id);
    }
    sql.push(") AND lease_epoch = CASE id");
    for a in done {
        sql.push(" WHEN ")
            .push_bind(a.claimed.op.id)
            .push(" THEN ")
            .push_bind(a.claimed.epoch);
    }
    sql.push(" END RETURNING id");
    Ok(sql.build_query_scalar().fetch_all(&mut **tx).await?)
}

/// The cache change of confirmed ops. The common case — the server answered with the
/// resource, nothing else is queued for it, and no refresh brought a newer version — is one
/// multi-row upsert for the whole batch, whose conditions are checked by the statement
/// itself; the rows it did not take (and deletes) go through [`crate::cache::settle`].
async fn settle_all(tx: &mut Transaction<'_, Sqlite>, done: &[&Attempted], now: i64) -> Result<()> {
    let answered: Vec<(&OutboxOp, &Resource)> = done
        .iter()
        .filter_map(|a| resource_of(a).map(|r| (&a.claimed.op, r)))
        .collect();
    let mut taken: Vec<(ResourceKind, String)> = Vec::new();
    if !answered.is_empty() {
        let mut sql = QueryBuilder::<Sqlite>::new(
            "INSERT INTO cache (profile, kind, name, server_json, server_version, refreshed_at, local_json, local_deleted) ",
        );
        sql.push_values(&answered, |mut row, (op, r)| {
            row.push_bind(&op.profile)
                .push_bind(op.kind)
                .push_bind(&op.name)
                .push_bind(serde_json::to_string(r).expect("resource serializes"))
                .push_bind(r.version)
                .push_bind(now)
                .push_bind(
                    serde_json::to_string(&crate::local::view_of(r)).expect("view serializes"),
                )
                .push_bind(0);
        });
        // A new row needs no check: every live op keeps a cache row, so none is queued.
        sql.push(
            " ON CONFLICT (profile, kind, name) DO UPDATE SET server_json = excluded.server_json, \
             server_version = excluded.server_version, refreshed_at = excluded.refreshed_at, \
             local_json = excluded.local_json, local_deleted = 0 \
             WHERE (cache.server_version IS NULL OR excluded.server_version >= cache.server_version) \
             AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.profile = cache.profile AND o.kind = cache.kind \
             AND o.name = cache.name AND o.state IN ('pending', 'sending', 'needs_attention')) \
             RETURNING kind, name",
        );
        taken = sql.build_query_as().fetch_all(&mut **tx).await?;
    }
    for a in done {
        let op = &a.claimed.op;
        let took =
            resource_of(a).is_some() && taken.iter().any(|(k, n)| *k == op.kind && *n == op.name);
        if !took {
            crate::cache::settle(tx, op, resource_of(a), now).await?;
        }
    }
    Ok(())
}

/// One audit entry per confirmed op, in one INSERT.
async fn audit_done(tx: &mut Transaction<'_, Sqlite>, done: &[&Attempted], now: i64) -> Result<()> {
    if done.is_empty() {
        return Ok(());
    }
    let mut sql = QueryBuilder::<Sqlite>::new(
        "INSERT INTO audit (at, actor, profile, action, op_id, resource, outcome, detail) ",
    );
    sql.push_values(done, |mut row, a| {
        let op = &a.claimed.op;
        let status = match a.outcome {
            Outcome::Done { status, .. } => status,
            Outcome::Failed { .. } => 0,
        };
        row.push_bind(now)
            .push_bind("sync")
            .push_bind(&op.profile)
            .push_bind("op.done")
            .push_bind(op.id)
            .push_bind(format!("{}/{}", op.kind, op.name))
            .push_bind("ok")
            .push_bind(format!("{} → HTTP {status}", op.op.as_str()));
    });
    sql.build().execute(&mut **tx).await?;
    Ok(())
}
