//! Client-certificate rotations (`credential = 'certificate'`, docs/rotation.md "Client
//! certificates (mTLS)"): upload the new certificate staged → verify with a target test that
//! presents it → promote by activating it → or roll back by activating the old one again.
//!
//! The stage differs from a secret's: the upload carries the private key, which must never be
//! written to `console.db`, so it cannot be queued. It is sent directly (idempotent by the
//! certificate id: a resend after a lost answer stores one certificate) and the rotation is
//! saved only once the server answered; offline, nothing is saved and the person starts again.
//! Verify, promote and roll back are keyed rows of the outboxes (`target_tests`
//! `<id>:verify:<n>`, `cert_ops` `<id>:promote` and `<id>:rollback`) like the secret path's,
//! so a crash between steps resumes with the same key and the server activates once.

use std::time::Duration;

use switchyard_protocol::{CertificateState, ClientCertificateInfo, UploadCertificateRequest};

use super::types::{Credential, Rotation, RotationStep};
use super::{Change, already_open, open_rotation, step_key, wrong_step};
use crate::Console;
use crate::action::ActionState;
use crate::audit::Audit;
use crate::error::{CoreError, Result};

use RotationStep::*;

impl Console {
    /// Starts a rotation of `target`'s client certificate: uploads `request` (the chain and its
    /// key) as certificate `certificate_id`, staged, sent now for at most `deadline`, then
    /// saves the rotation at `staged` with the certificate the server listed (fingerprint,
    /// subject, not_after) and the one active before it. `request` is consumed: the key lives
    /// in memory for the upload only.
    ///
    /// UI: the certificate path's "Stage" step. Refused (`rotation_open`) while the target has
    /// an open rotation, and (`certificate_active`) for the id of the active certificate.
    /// Offline: [`CoreError::Offline`], nothing uploaded (or not confirmed) and nothing saved —
    /// the key cannot wait in a queue. A certificate the server refuses is
    /// [`CoreError::Server`] with its problem (`field`: `certificate_pem`,
    /// `private_key_pem`, `id`); nothing is saved then either.
    pub async fn start_certificate_rotation(
        &self,
        profile: &str,
        target: &str,
        certificate_id: &str,
        request: UploadCertificateRequest,
        deadline: Duration,
    ) -> Result<Rotation> {
        self.profile(profile).await?;
        check_upload(target, certificate_id, &request)?;
        {
            let mut tx = self.inner.writer.begin().await?;
            if let Some(open) = open_rotation(&mut tx, profile, target).await? {
                return Err(already_open(&open));
            }
        }
        let old = self
            .certificate_to_replace(profile, target, certificate_id)
            .await?;
        let uploaded = self
            .upload_client_certificate(profile, target, certificate_id, &request, deadline)
            .await
            .map_err(not_uploaded)?;
        drop(request);
        let id = self
            .save_certificate_rotation(profile, target, uploaded.certificate, old)
            .await?;
        self.stored_rotation(&id).await
    }

    /// The certificate active on `target` before the rotation (what a rollback activates
    /// again), read live; refused (`certificate_active`) when that is `certificate_id` itself.
    async fn certificate_to_replace(
        &self,
        profile: &str,
        target: &str,
        certificate_id: &str,
    ) -> Result<Option<ClientCertificateInfo>> {
        let listed = self
            .client_certificates(profile, target)
            .await
            .map_err(not_uploaded)?;
        if listed
            .iter()
            .any(|c| c.id == certificate_id && c.state == CertificateState::Active)
        {
            return Err(CoreError::Refused {
                code: "certificate_active",
                message: format!(
                    "certificate {certificate_id:?} is already the active one of {target}: choose a new id"
                ),
            });
        }
        Ok(listed
            .into_iter()
            .find(|c| c.state == CertificateState::Active))
    }

    /// Saves the rotation at `staged` with its audit entry, in one transaction that first
    /// checks no other rotation of the target opened during the upload. Returns its id.
    async fn save_certificate_rotation(
        &self,
        profile: &str,
        target: &str,
        new: ClientCertificateInfo,
        old: Option<ClientCertificateInfo>,
    ) -> Result<String> {
        let id = format!("rot_{}", uuid::Uuid::new_v4().simple());
        let now = self.now();
        let json =
            |c: &ClientCertificateInfo| serde_json::to_string(c).expect("certificates serialize");
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(open) = open_rotation(&mut tx, profile, target).await? {
            return Err(already_open(&open));
        }
        sqlx::query(
            "INSERT INTO rotations (id, profile, target, credential, step, new_certificate_id, new_certificate, \
             old_certificate_id, old_certificate, created_at, updated_at) \
             VALUES (?, ?, ?, 'certificate', 'staged', ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(profile)
        .bind(target)
        .bind(&new.id)
        .bind(json(&new))
        .bind(old.as_ref().map(|c| c.id.clone()))
        .bind(old.as_ref().map(json))
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        Audit::new(now, &self.inner.opts.actor, "rotation.start", "staged")
            .profile(profile)
            .resource(format!("target/{target}"))
            .detail(format!(
                "{id}: certificate {} (sha256 {})",
                new.id, new.fingerprint_sha256
            ))
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// A certificate rotation's promote, queued with its step change: the activation of the
    /// new certificate under `<id>:promote`.
    pub(super) async fn queue_certificate_promote(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
        r: &Rotation,
    ) -> Result<()> {
        let new_id = r
            .new_certificate_id
            .as_deref()
            .ok_or_else(|| CoreError::storage(format!("rotation {}: no new certificate", r.id)))?;
        self.insert_cert_op(
            tx,
            &r.profile,
            &r.target,
            new_id,
            &step_key(&r.id, "promote"),
        )
        .await?;
        Ok(())
    }

    /// Sends the activation a certificate rotation queued as `step` (`promote`, `rollback`)
    /// with its key, and records the answer: `done` / `rolled_back`, or `needs_attention`
    /// with the server's problem (e.g. `certificate_expired`).
    pub(super) async fn send_certificate_activation(
        &self,
        r: &Rotation,
        step: &str,
        deadline: Duration,
    ) -> Result<()> {
        let key = step_key(&r.id, step);
        let op = self.cert_op_by_key(&key).await?.ok_or_else(|| {
            CoreError::storage(format!("rotation {}: nothing queued as {key}", r.id))
        })?;
        let op = self.send_cert_op(op.id, deadline).await?;
        let (from, to, action) = match step {
            "promote" => (Promoting, Done, "rotation.promote"),
            _ => (RollingBack, RolledBack, "rotation.rollback"),
        };
        let change = match op.state {
            ActionState::Pending => return Ok(()),
            ActionState::Done => Change::to(to),
            ActionState::NeedsAttention => Change::attention(from, op.last_error.as_ref()),
        };
        self.transition(r, from, change, action).await?;
        Ok(())
    }

    /// Rolls a certificate rotation back. Before promote the new certificate was never
    /// presented by deliveries: the rotation just ends `rolled_back` (the upload stays
    /// `staged` on the server, unused). After promote (`done`), the previously active
    /// certificate is activated again under `<id>:rollback`, refused
    /// (`old_certificate_expired`) once it expired or when there was none, and
    /// (`certificate_changed`) when the server shows another certificate active than the
    /// rotation's (activated elsewhere since: re-activating the old one would undo that).
    pub(super) async fn rollback_certificate_rotation(
        &self,
        r: Rotation,
        deadline: Duration,
    ) -> Result<Rotation> {
        let id = r.id.clone();
        match r.step {
            Staged | Verified => {
                if !self
                    .transition(&r, r.step, Change::to(RolledBack), "rotation.rollback")
                    .await?
                {
                    return Err(self.moved(&id).await);
                }
                return self.stored_rotation(&id).await;
            }
            Done => {
                let old = self.certificate_to_restore(&r)?;
                self.check_active_unchanged(&r).await?;
                self.queue_certificate_rollback(&r, &old.id).await?;
            }
            RollingBack => {}
            _ => return Err(wrong_step(&r, "roll it back", "")),
        }
        let r = self.stored_rotation(&id).await?;
        self.send_certificate_activation(&r, "rollback", deadline)
            .await?;
        self.stored_rotation(&id).await
    }

    /// The certificate a rollback after promote activates again: the one active before the
    /// rotation, refused (`old_certificate_expired`) when there was none or it expired.
    fn certificate_to_restore(&self, r: &Rotation) -> Result<ClientCertificateInfo> {
        let id = &r.id;
        let Some(old) = r.old_certificate.clone() else {
            return Err(CoreError::Refused {
                code: "old_certificate_expired",
                message: format!(
                    "rotation {id} cannot be rolled back: {} had no active certificate before it",
                    r.target
                ),
            });
        };
        if !r.old_certificate_valid(self.now()) {
            return Err(CoreError::Refused {
                code: "old_certificate_expired",
                message: format!(
                    "rotation {id} cannot be rolled back: the old certificate {} of {} expired at {}; \
                     upload and activate a valid one",
                    old.id,
                    r.target,
                    old.not_after.to_rfc3339()
                ),
            });
        }
        Ok(old)
    }

    /// Refuses (`certificate_changed`) a rollback when the server shows another certificate
    /// active than the rotation's new one. Offline, the rollback is queued all the same.
    async fn check_active_unchanged(&self, r: &Rotation) -> Result<()> {
        match self.client_certificates(&r.profile, &r.target).await {
            Ok(list) => {
                let active = list.iter().find(|c| c.state == CertificateState::Active);
                if active.map(|c| c.id.as_str()) != r.new_certificate_id.as_deref() {
                    return Err(CoreError::Refused {
                        code: "certificate_changed",
                        message: format!(
                            "rotation {} cannot be rolled back: the active certificate of {} is now {}, \
                             not this rotation's; nothing was queued",
                            r.id,
                            r.target,
                            active.map(|c| c.id.as_str()).unwrap_or("none")
                        ),
                    });
                }
            }
            // Offline: queued, sent by a resume (the activation is keyed).
            Err(CoreError::Offline { .. }) => {}
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// Queues the activation of `old_id` under `<id>:rollback` with the step change to
    /// `rolling_back`, in one transaction (so a resume finds the activation to send).
    async fn queue_certificate_rollback(&self, r: &Rotation, old_id: &str) -> Result<()> {
        let id = &r.id;
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(open) = open_rotation(&mut tx, &r.profile, &r.target).await? {
            return Err(already_open(&open));
        }
        self.insert_cert_op(
            &mut tx,
            &r.profile,
            &r.target,
            old_id,
            &step_key(id, "rollback"),
        )
        .await?;
        if !Change::to(RollingBack)
            .apply(&mut tx, id, Done, now)
            .await?
        {
            drop(tx);
            return Err(self.moved(id).await);
        }
        tx.commit().await?;
        Ok(())
    }
}

/// The stage's arguments: the target's name, the certificate id, a chain and a key.
fn check_upload(
    target: &str,
    certificate_id: &str,
    request: &UploadCertificateRequest,
) -> Result<()> {
    switchyard_protocol::validate_name(target)
        .map_err(|e| CoreError::invalid("target", format!("{target:?}: {e}")))?;
    if !switchyard_protocol::client_certs::is_certificate_id(certificate_id) {
        return Err(CoreError::invalid(
            "certificate_id",
            format!("{certificate_id:?}: 1-128 characters of letters, digits and `. _ : -`"),
        ));
    }
    if request.certificate_pem.trim().is_empty() {
        return Err(CoreError::invalid("certificate_pem", "is empty"));
    }
    if request.private_key_pem.trim().is_empty() {
        return Err(CoreError::invalid("private_key_pem", "is empty"));
    }
    Ok(())
}

/// An offline failure of the stage, told as what it means here: nothing was saved, and the
/// key cannot wait in a queue.
fn not_uploaded(e: CoreError) -> CoreError {
    match e {
        CoreError::Offline { profile, message } => CoreError::Offline {
            profile,
            message: format!(
                "{message}; the certificate was not uploaded (or not confirmed) and no rotation was saved: \
                 the private key is never queued, so start the rotation again once the control plane \
                 is reachable (the upload is idempotent by its id)"
            ),
        },
        other => other,
    }
}

/// Whether a rotation is of a client certificate.
pub(super) fn is_certificate(r: &Rotation) -> bool {
    r.credential == Credential::Certificate
}
