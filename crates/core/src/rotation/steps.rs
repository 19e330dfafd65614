//! The steps of a rotation: each queues its keyed request together with its step change (one
//! transaction), sends it through its outbox, and records the answer with one guarded update.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use switchyard_protocol::secrets::ExpiringSecret;
use switchyard_protocol::{TargetTestRequest, TargetTestResult};

use super::certificate::is_certificate;
use super::types::{Rotation, RotationProgress, RotationStep, SecretValue, VerifyResult};
use super::{Change, step_key, wrong_step};
use crate::Console;
use crate::action::ActionState;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::secret_ops::{SecretOp, SecretWrite};
use crate::types::OpError;

use RotationStep::*;

impl Console {
    /// Sends what the rotation has queued — the stage, a verify test, the promote's or the
    /// roll back's expiries — with the step's derived keys, for at most `deadline`, and
    /// records the answers. Offline, everything stays queued and the rotation where it was.
    /// `value`: the new secret's value when this process received it and the person has not
    /// acknowledged storing it — from the stage's answer, or, for a rotation staged earlier
    /// (the app was quit or killed before the value was stored), from the server's stored
    /// answer to the same stage key. Never after [`Console::acknowledge_secret`].
    ///
    /// UI: called right after [`Console::start_rotation`] (the stage step's spinner), and when
    /// the wizard is re-opened on an unfinished rotation; show `value` once with a copy button
    /// and the receiver-side instructions (accept both secrets during the overlap).
    pub async fn resume_rotation(&self, id: &str, deadline: Duration) -> Result<RotationProgress> {
        let r = self.stored_rotation(id).await?;
        let mut value = match r.step {
            Staging => self.send_stage(&r, deadline).await?,
            Verifying => {
                self.send_verify(&r, deadline).await?;
                None
            }
            Promoting => {
                self.send_promote(&r, deadline).await?;
                None
            }
            RollingBack => {
                self.send_rollback(&r, deadline).await?;
                None
            }
            _ => None,
        };
        let rotation = self.rotation(id).await?;
        if rotation.acknowledged || rotation.step != Staged {
            value = None;
        } else if value.is_none() {
            value = match rotation.stage_op {
                Some(op) => self.rotation_value_again(op).await?.map(SecretValue::new),
                None => None,
            };
        }
        Ok(RotationProgress { rotation, value })
    }

    /// Verifies a staged rotation: a test webhook signed with the new secret only (key
    /// `<id>:verify:<attempt>`, a new attempt per verify), sent for at most `deadline`.
    /// Receiver accepted it → `verified`; refused (or the server refused the test) → back to
    /// `staged` with the result, so promoting needs `skip_verify`. Verifying records the
    /// acknowledgement of the value (the receiver holds it by now). A rotation already
    /// `verifying` resends its queued test.
    ///
    /// UI: the "Verify" step; show `verify_result` (ok, status, latency, error) and offer
    /// "Promote" only when `actions.promote`.
    pub async fn verify_rotation(&self, id: &str, deadline: Duration) -> Result<Rotation> {
        let r = self.stored_rotation(id).await?;
        match r.step {
            Staged => {
                let attempt = r.verify_attempts + 1;
                let key = step_key(id, &format!("verify:{attempt}"));
                let request = if is_certificate(&r) {
                    TargetTestRequest {
                        client_certificate_id: r.new_certificate_id.clone(),
                        ..TargetTestRequest::default()
                    }
                } else {
                    TargetTestRequest {
                        secret_id: r.new_secret_id.clone(),
                        ..TargetTestRequest::default()
                    }
                };
                let now = self.now();
                let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
                let test = self
                    .insert_target_test(&mut tx, &r.profile, &r.target, &request, &key)
                    .await?;
                let change = Change {
                    verify_test: Some(test.id),
                    verify_attempts: Some(attempt),
                    acknowledge: true,
                    ..Change::to(Verifying)
                };
                if !change.apply(&mut tx, id, Staged, now).await? {
                    drop(tx);
                    return Err(self.moved(id).await);
                }
                tx.commit().await?;
            }
            Verifying => {}
            _ => {
                return Err(wrong_step(
                    &r,
                    "verify it",
                    " (only a staged rotation is verified)",
                ));
            }
        }
        let r = self.stored_rotation(id).await?;
        self.send_verify(&r, deadline).await?;
        self.rotation(id).await
    }

    /// Promotes: expires every older secret now (keys `<id>:promote:<secret id>`), ending
    /// the overlap; sent for at most `deadline`. Refused (`not_verified`) unless the rotation
    /// is verified, or `skip_verify` is set on a staged one. An older secret that has already
    /// expired counts as promoted. A rotation already `promoting` resends its expiries.
    ///
    /// A certificate rotation activates the new certificate instead (key `<id>:promote`,
    /// `cert_ops`); the same refusal without a successful verify.
    ///
    /// UI: "Promote now" (and, behind a confirmation, "Promote without verifying").
    pub async fn promote_rotation(
        &self,
        id: &str,
        skip_verify: bool,
        deadline: Duration,
    ) -> Result<Rotation> {
        let r = self.stored_rotation(id).await?;
        match r.step {
            Verified => {}
            Staged if skip_verify => {}
            Staged => {
                let last = match &r.verify_result {
                    Some(v) if !v.ok => format!(
                        " (the last verify failed: {})",
                        v.error.as_deref().unwrap_or("the receiver refused it")
                    ),
                    _ => String::new(),
                };
                return Err(CoreError::Refused {
                    code: "not_verified",
                    message: format!(
                        "rotation {id} is not verified{last}: verify it with `switchyard rotation verify {id}`, \
                         or promote anyway with --skip-verify; nothing was sent"
                    ),
                });
            }
            Promoting => {}
            _ => return Err(wrong_step(&r, "promote it", "")),
        }
        if r.step != Promoting {
            let now = self.now();
            let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
            if is_certificate(&r) {
                self.queue_certificate_promote(&mut tx, &r).await?;
            }
            for old in r.old_secrets.iter().filter(|_| !is_certificate(&r)) {
                let write = SecretWrite::Expire {
                    secret_id: old.id.clone(),
                };
                let key = step_key(id, &format!("promote:{}", old.id));
                self.insert_secret_op(&mut tx, &r.profile, &r.target, &write, &key)
                    .await?;
            }
            let change = Change {
                acknowledge: true,
                ..Change::to(Promoting)
            };
            if !change.apply(&mut tx, id, r.step, now).await? {
                drop(tx);
                return Err(self.moved(id).await);
            }
            tx.commit().await?;
        }
        let r = self.stored_rotation(id).await?;
        self.send_promote(&r, deadline).await?;
        self.rotation(id).await
    }

    /// Rolls back: expires the new secret (key `<id>:rollback`) while the old one is still
    /// valid, so the old one keeps signing without expiry; sent for at most `deadline`.
    /// Refused (`old_secret_expired`) once the old secret expired — promoted, or its overlap
    /// ended: rolling back then would leave no valid secret. A rotation already
    /// `rolling_back` resends its expiry.
    ///
    /// A certificate rotation: see `certificate.rs` (before promote it just ends; after it the
    /// old certificate is activated again under `<id>:rollback` while it has not expired).
    ///
    /// UI: "Roll back", shown while `actions.roll_back`.
    pub async fn rollback_rotation(&self, id: &str, deadline: Duration) -> Result<Rotation> {
        let r = self.stored_rotation(id).await?;
        if is_certificate(&r) {
            return self.rollback_certificate_rotation(r, deadline).await;
        }
        match r.step {
            Staged | Verified => {
                if !self.old_still_valid(&r).await? {
                    return Err(old_expired(&r));
                }
                let Some(new_id) = r.new_secret_id.clone() else {
                    return Err(CoreError::storage(format!("rotation {id}: no new secret")));
                };
                let now = self.now();
                let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
                let write = SecretWrite::Expire { secret_id: new_id };
                let key = step_key(id, "rollback");
                self.insert_secret_op(&mut tx, &r.profile, &r.target, &write, &key)
                    .await?;
                if !Change::to(RollingBack)
                    .apply(&mut tx, id, r.step, now)
                    .await?
                {
                    drop(tx);
                    return Err(self.moved(id).await);
                }
                tx.commit().await?;
            }
            RollingBack => {}
            Done => return Err(old_expired(&r)),
            _ => return Err(wrong_step(&r, "roll it back", "")),
        }
        let r = self.stored_rotation(id).await?;
        self.send_rollback(&r, deadline).await?;
        self.rotation(id).await
    }

    /// A staged or verified rotation, as the server now shows it: done once every older
    /// secret expired (the overlap ended, or someone promoted elsewhere), rolled back once the
    /// new one expired while an older one still signs. Unreachable: as stored.
    pub(super) async fn settle_from_server(&self, r: Rotation) -> Result<Rotation> {
        let Some(new_id) = r.new_secret_id.clone() else {
            return Ok(r);
        };
        if !matches!(r.step, Staged | Verified) {
            return Ok(r);
        }
        let Ok(list) = self.signing_secrets(&r.profile, &r.target).await else {
            return Ok(r);
        };
        let now = self.now();
        let expired = |id: &str| {
            list.iter()
                .find(|s| s.id == id)
                .is_none_or(|s| s.expires_at.is_some_and(|at| at.timestamp_millis() <= now))
        };
        let old_valid = r.old_secrets.iter().any(|o| !expired(&o.id));
        let change = if expired(&new_id) && old_valid {
            Change::to(RolledBack)
        } else if !expired(&new_id) && !old_valid && !r.force {
            // A forced stage expired the older secrets at once: that rotation still goes
            // through verify and promote rather than ending unverified here.
            Change::to(Done)
        } else {
            return Ok(r);
        };
        self.transition(&r, r.step, change, "rotation.settle")
            .await?;
        self.stored_rotation(&r.id).await
    }

    async fn send_stage(&self, r: &Rotation, deadline: Duration) -> Result<Option<SecretValue>> {
        let op = r
            .stage_op
            .ok_or_else(|| CoreError::storage(format!("rotation {}: no stage op", r.id)))?;
        let sent = self.send_secret_op(op, deadline).await?;
        let change = match sent.op.state {
            ActionState::Pending => return Ok(None),
            ActionState::NeedsAttention => Change::attention(Staging, sent.op.last_error.as_ref()),
            ActionState::Done => staged(&sent.op),
        };
        self.transition(r, Staging, change, "rotation.stage")
            .await?;
        Ok(sent.value.map(SecretValue::new))
    }

    async fn send_verify(&self, r: &Rotation, deadline: Duration) -> Result<()> {
        let id = r
            .verify_test
            .ok_or_else(|| CoreError::storage(format!("rotation {}: no verify test", r.id)))?;
        let test = self.send_target_test_until(id, deadline).await?;
        let result = match (test.state, &test.result, &test.last_error) {
            (ActionState::Pending, ..) => return Ok(()),
            (ActionState::Done, Some(t), _) => verify_of(t, is_certificate(r), r.verify_attempts),
            (_, _, error) => VerifyResult {
                ok: false,
                status: error.as_ref().and_then(|e| e.status),
                latency_ms: None,
                error: Some(
                    error
                        .as_ref()
                        .map(|e| e.message.clone())
                        .unwrap_or_else(|| "the control plane's answer was unreadable".into()),
                ),
                webhook_id: None,
                tested_at: None,
                attempt: r.verify_attempts,
                certificate_presented: is_certificate(r).then_some(false),
            },
        };
        let change = Change {
            verify_result: Some(serde_json::to_string(&result).expect("result serializes")),
            ..Change::to(if result.ok { Verified } else { Staged })
        };
        self.transition(r, Verifying, change, "rotation.verify")
            .await?;
        Ok(())
    }

    async fn send_promote(&self, r: &Rotation, deadline: Duration) -> Result<()> {
        if is_certificate(r) {
            return self
                .send_certificate_activation(r, "promote", deadline)
                .await;
        }
        let started = Instant::now();
        let mut refused: Option<OpError> = None;
        let mut ended = r.old_secrets.clone();
        let now = DateTime::from_timestamp_millis(self.now()).unwrap_or_else(Utc::now);
        for old in &mut ended {
            let op = self.step_op(r, &format!("promote:{}", old.id)).await?;
            let left = deadline.saturating_sub(started.elapsed());
            let op = self.send_secret_op(op.id, left).await?.op;
            match op.state {
                ActionState::Pending => return Ok(()),
                ActionState::Done => old.expires_at = expired_at(&op, now),
                ActionState::NeedsAttention if already_expired(&op) => {
                    old.expires_at = old.expires_at.min(now)
                }
                ActionState::NeedsAttention => refused = refused.or(op.last_error),
            }
        }
        let change = match refused {
            Some(e) => Change::attention(Promoting, Some(&e)),
            // The old secrets now end when the server says they ended, not when the overlap
            // would have: what `rotation status` and a refused rollback show.
            None => Change {
                old_secrets: Some(serde_json::to_string(&ended).expect("secrets serialize")),
                ..Change::to(Done)
            },
        };
        self.transition(r, Promoting, change, "rotation.promote")
            .await?;
        Ok(())
    }

    async fn send_rollback(&self, r: &Rotation, deadline: Duration) -> Result<()> {
        if is_certificate(r) {
            return self
                .send_certificate_activation(r, "rollback", deadline)
                .await;
        }
        let op = self.step_op(r, "rollback").await?;
        let op = self.send_secret_op(op.id, deadline).await?.op;
        let change = match op.state {
            ActionState::Pending => return Ok(()),
            ActionState::Done => Change::to(RolledBack),
            ActionState::NeedsAttention => Change::attention(RollingBack, op.last_error.as_ref()),
        };
        self.transition(r, RollingBack, change, "rotation.rollback")
            .await?;
        Ok(())
    }

    /// The secret op a step queued under its derived key.
    async fn step_op(&self, r: &Rotation, step: &str) -> Result<SecretOp> {
        let key = step_key(&r.id, step);
        self.secret_op_by_key(&key).await?.ok_or_else(|| {
            CoreError::storage(format!("rotation {}: nothing queued as {key}", r.id))
        })
    }

    /// Whether an older secret still signs: as the server lists them, or by the expiry the
    /// stage recorded when the server cannot be reached.
    async fn old_still_valid(&self, r: &Rotation) -> Result<bool> {
        let now = self.now();
        match self.signing_secrets(&r.profile, &r.target).await {
            Ok(list) => Ok(r.old_secrets.iter().any(|o| {
                list.iter().any(|s| {
                    s.id == o.id && s.expires_at.is_none_or(|at| at.timestamp_millis() > now)
                })
            })),
            Err(CoreError::Offline { .. }) => Ok(r.old_still_valid(now)),
            Err(e) => Err(e),
        }
    }

    /// Applies `change` from `from` with its audit entry, in one transaction; false when
    /// another process moved the rotation first (its record stands).
    pub(super) async fn transition(
        &self,
        r: &Rotation,
        from: RotationStep,
        change: Change,
        action: &str,
    ) -> Result<bool> {
        let to = change.to.expect("a change names its step");
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let applied = change.apply(&mut tx, &r.id, from, now).await?;
        if applied {
            Audit::new(now, &self.inner.opts.actor, action, to.as_str())
                .profile(&r.profile)
                .resource(format!("target/{}", r.target))
                .detail(r.id.clone())
                .record(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(applied)
    }

    /// The refusal when another process advanced the rotation between our read and our
    /// guarded update.
    pub(super) async fn moved(&self, id: &str) -> CoreError {
        let now = match self.stored_rotation(id).await {
            Ok(r) => r.step.as_str(),
            Err(e) => return e,
        };
        CoreError::Refused {
            code: "rotation_moved",
            message: format!(
                "rotation {id} was advanced by another process meanwhile (it is now {now}); nothing was queued"
            ),
        }
    }
}

/// `staged`, with the new secret's id and the older secrets' expiry from the stage's answer
/// (kept without the value by `secret_ops`).
fn staged(op: &SecretOp) -> Change {
    let answer = op.result.clone().unwrap_or_default();
    let Some(new_id) = answer["secret"]["id"].as_str() else {
        let problem = OpError {
            status: None,
            problem: None,
            message: "the control plane confirmed the stage without naming the new secret; \
                      check `switchyard targets secrets`"
                .into(),
            transient: false,
        };
        return Change::attention(Staging, Some(&problem));
    };
    let previous: Vec<ExpiringSecret> =
        serde_json::from_value(answer["previous"].clone()).unwrap_or_default();
    Change {
        new_secret_id: Some(new_id.to_owned()),
        old_secrets: Some(serde_json::to_string(&previous).expect("secrets serialize")),
        ..Change::to(Staged)
    }
}

/// When an expiry's answer says the secret ended (`secret.expires_at`); `now` if it does not.
fn expired_at(op: &SecretOp, now: DateTime<Utc>) -> DateTime<Utc> {
    op.result
        .as_ref()
        .and_then(|a| a.pointer("/secret/expires_at"))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or(now)
}

/// An expiry the server refused because the secret had already expired: for a promote, the
/// goal is reached.
fn already_expired(op: &SecretOp) -> bool {
    op.last_error
        .as_ref()
        .and_then(|e| e.problem.as_ref())
        .is_some_and(|p| p.code.as_str() == "secret_expired")
}

fn old_expired(r: &Rotation) -> CoreError {
    let until = r
        .old_secrets
        .iter()
        .map(|s| s.expires_at)
        .max()
        .map(|at: DateTime<Utc>| format!(" (at {})", at.to_rfc3339()))
        .unwrap_or_default();
    CoreError::Refused {
        code: "old_secret_expired",
        message: format!(
            "rotation {} cannot be rolled back: the old secret of {} expired{until}, so expiring the new one \
             would leave no valid secret; the new secret stays (start a new rotation to replace it)",
            r.id, r.target
        ),
    }
}

/// What a completed verify test proves. A certificate rotation is verified only when the
/// handshake presented the new certificate: over http the receiver answers without any TLS,
/// so its 2xx says nothing about the certificate.
fn verify_of(t: &TargetTestResult, certificate: bool, attempt: u32) -> VerifyResult {
    let unproven = certificate && t.ok && !t.client_certificate_presented;
    VerifyResult {
        ok: t.ok && !unproven,
        status: t.status_code,
        latency_ms: Some(t.duration_ms),
        error: if unproven {
            Some(NOT_PRESENTED.to_owned())
        } else {
            t.error.clone()
        },
        webhook_id: Some(t.webhook_id.clone()),
        tested_at: Some(t.tested_at),
        attempt,
        certificate_presented: certificate.then_some(t.client_certificate_presented),
    }
}

/// Why a 2xx did not verify a client certificate.
pub const NOT_PRESENTED: &str = "no client certificate was presented: the target's URL is not \
     https, and a client certificate is never presented over http (only in a TLS handshake); \
     change the target's URL to https and test again";
