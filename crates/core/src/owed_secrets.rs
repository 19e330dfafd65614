//! The first signing secrets the console still owes a person: durable, without the values.
//!
//! A created target's answer carries its first secret once (`shown_once.rs` keeps it in
//! memory until a screen or terminal takes it). Memory alone loses it when the process stops
//! between the confirmation and the showing (a stop signal, kill -9, more values waiting than
//! memory keeps). So the transaction that marks such a creation done also writes a row in
//! `owed_secrets` naming the target and the outbox op (never the value), and the row goes
//! when the value was shown ([`Console::secrets_shown`]). What is still owed is fetched again
//! by [`Console::reveal_owed_secrets`]: the same request with the same Idempotency-Key, which
//! the control plane answers with the response it stored, secret included, while it keeps the
//! key. Older than that, a resend could create the target anew (if it was deleted since), so
//! it is not sent: the person is told the value is lost and a forced rotation replaces it.

use serde::Serialize;
use sqlx::{QueryBuilder, Sqlite, Transaction};
use switchyard_protocol::ResourceKind;

use crate::Console;
use crate::audit::Audit;
use crate::client::SendResult;
use crate::error::Result;
use crate::outbox::{OP_COLUMNS, OpRow};
use crate::shown_once::{ShownSecret, secret_in};
use crate::types::OutboxOp;

/// How long before the server forgets a key the console stops resending it (at most; a
/// quarter of a shorter retention): a resend that lands just after the key expired would act
/// anew.
const RETENTION_MARGIN_MS: i64 = 10 * 60 * 1000;

/// A target whose first secret could not be shown.
#[derive(Debug, Clone, Serialize)]
pub struct OwedSecret {
    pub target: String,
    /// Why, in a sentence (never a value).
    pub reason: String,
}

/// What [`Console::reveal_owed_secrets`] found.
#[derive(Debug, Default, Serialize)]
pub struct RevealReport {
    /// Fetched again: show each, then call [`Console::secrets_shown`].
    pub shown: Vec<ShownSecret>,
    /// Gone for good (the server no longer keeps the answer, or refused the resend): the
    /// console forgot them after this report; a forced rotation gives each a new secret.
    pub lost: Vec<OwedSecret>,
    /// Not fetched now (the control plane did not answer): still owed, for a later run.
    pub waiting: Vec<OwedSecret>,
}

/// Records, in the caller's transaction, that these confirmed creations owe a showing.
pub(crate) async fn owe(
    tx: &mut Transaction<'_, Sqlite>,
    created: &[&OutboxOp],
    now: i64,
) -> Result<()> {
    if created.is_empty() {
        return Ok(());
    }
    let mut sql = QueryBuilder::<Sqlite>::new(
        "INSERT OR IGNORE INTO owed_secrets (op_id, profile, target, confirmed_at) ",
    );
    sql.push_values(created, |mut row, op| {
        row.push_bind(op.id)
            .push_bind(&op.profile)
            .push_bind(&op.name)
            .push_bind(now);
    });
    sql.build().execute(&mut **tx).await?;
    Ok(())
}

impl Console {
    /// The creations of `profile` whose first secret nobody has seen yet, oldest first.
    pub async fn owed_secret_ops(&self, profile: &str) -> Result<Vec<OutboxOp>> {
        let cols = OP_COLUMNS
            .split(", ")
            .map(|c| format!("o.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let rows: Vec<OpRow> = sqlx::query_as(&format!(
            "SELECT {cols} FROM owed_secrets s JOIN outbox o ON o.id = s.op_id \
             WHERE s.profile = ? ORDER BY s.op_id"
        ))
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        crate::outbox::ops_from_rows(rows)
    }

    /// A person saw these values (a terminal printed them, a dialog showed them): nothing is
    /// owed for their targets any more.
    pub async fn secrets_shown(&self, shown: &[ShownSecret]) -> Result<()> {
        if shown.is_empty() {
            return Ok(());
        }
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        for s in shown {
            sqlx::query("DELETE FROM owed_secrets WHERE profile = ? AND target = ?")
                .bind(&s.profile)
                .bind(&s.target)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Fetches again every first secret `profile` still owes, by resending each creation
    /// with its key. Those that cannot come back are forgotten (and audited) and reported as
    /// lost; the caller shows the rest and then calls [`Console::secrets_shown`].
    pub async fn reveal_owed_secrets(&self, profile: &str) -> Result<RevealReport> {
        let owed = self.owed_secret_ops(profile).await?;
        let mut report = RevealReport::default();
        if owed.is_empty() {
            return Ok(report);
        }
        let client = self.client(profile).await?;
        let retention_ms = match client.info().await {
            Ok(info) => (info.idempotency_retention_seconds as i64).saturating_mul(1000),
            Err(e) => {
                let reason = format!("the control plane did not answer ({e})");
                report.waiting = owed.iter().map(|op| owed_one(op, &reason)).collect();
                return Ok(report);
            }
        };
        let resend_within = retention_ms - RETENTION_MARGIN_MS.min(retention_ms / 4);
        let mut lost_ops = Vec::new();
        for op in &owed {
            let first_sent = op.first_sent_at.unwrap_or(op.created_at);
            if self.now() - first_sent > resend_within {
                let reason = format!(
                    "sent more than {} s ago, near or past the {} s the control plane keeps its answer",
                    resend_within / 1000,
                    retention_ms / 1000
                );
                report.lost.push(owed_one(op, &reason));
                lost_ops.push(op);
                continue;
            }
            let sent = client.send_op(op).await;
            match sent {
                SendResult::Transport(msg) => report.waiting.push(owed_one(op, &msg)),
                SendResult::Answered(a) => {
                    match a.body.as_ref().filter(|_| (200..300).contains(&a.status)) {
                        Some(body) => match secret_in(body) {
                            Some((value, secret_id)) => report.shown.push(ShownSecret {
                                profile: op.profile.clone(),
                                target: op.name.clone(),
                                secret_id,
                                value,
                            }),
                            None => {
                                report
                                    .lost
                                    .push(owed_one(op, "the control plane's answer has no secret"));
                                lost_ops.push(op);
                            }
                        },
                        None if a.status >= 500 => report
                            .waiting
                            .push(owed_one(op, &format!("HTTP {}", a.status))),
                        None => {
                            let reason = format!("the resend was refused (HTTP {})", a.status);
                            report.lost.push(owed_one(op, &reason));
                            lost_ops.push(op);
                        }
                    }
                }
            }
        }
        self.forget_lost(&lost_ops, &report.lost).await?;
        Ok(report)
    }

    /// Forgets owed secrets that cannot come back, with an audit entry each.
    async fn forget_lost(&self, ops: &[&OutboxOp], lost: &[OwedSecret]) -> Result<()> {
        if ops.is_empty() {
            return Ok(());
        }
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        for (op, why) in ops.iter().zip(lost) {
            sqlx::query("DELETE FROM owed_secrets WHERE op_id = ?")
                .bind(op.id)
                .execute(&mut *tx)
                .await?;
            Audit::new(now, "sync", "secret.lost", "needs_attention")
                .profile(&op.profile)
                .op(op.id)
                .resource(format!("{}/{}", ResourceKind::Target, op.name))
                .detail(why.reason.clone())
                .record(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

fn owed_one(op: &OutboxOp, reason: &str) -> OwedSecret {
    OwedSecret {
        target: op.name.clone(),
        reason: reason.to_owned(),
    }
}
