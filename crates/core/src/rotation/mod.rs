//! Guided signing-secret rotations (`switchyard rotation …`, the desktop's rotation wizard):
//! stage → verify → promote, or roll back, as a procedure stored in `rotations`
//! (migrations/0013_rotations.sql) so that quitting or killing the console mid-step resumes
//! exactly where it was.
//!
//! Exactly once: each step's request is a row of the existing keyed outboxes (`secret_ops`
//! for stage / promote / roll back, `target_tests` for verify), queued in the same transaction
//! as the step change, under an Idempotency-Key derived from the rotation id and the step
//! ([`step_key`]). A resumed step finds its row and resends the same key, so the control plane
//! answers from what it stored: one new secret, one test webhook, one expiry. Every step change
//! is one guarded `UPDATE … WHERE id = ? AND step = ?`: of two processes (CLI and app)
//! advancing a rotation, one wins and the other is told.
//!
//! Client certificates take the same steps ([`Console::start_certificate_rotation`],
//! `certificate.rs`): the stage is the upload, sent directly because it carries the key;
//! verify, promote and roll back dispatch on [`Rotation::credential`].
//!
//! The new secret's value is never stored: it reaches the caller in memory
//! ([`RotationProgress::value`]) from the stage's answer, and until the person acknowledged
//! having stored it, a resume asks the server for its stored answer again (same key).

mod certificate;
mod steps;
mod types;

use std::time::Duration;

use sqlx::{Sqlite, SqliteConnection};
use switchyard_protocol::secrets::RotateSecretRequest;

use types::{COLUMNS, RotationRow};
pub use types::{
    Credential, Rotation, RotationActions, RotationProgress, RotationStep, SecretValue,
    VerifyResult,
};

use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::secret_ops::SecretWrite;
use crate::types::OpError;

/// The Idempotency-Key of a rotation's step: `<rotation id>:<step>` (`stage`, `rollback`),
/// with the step's own part where a step sends several requests (`verify:<attempt>`,
/// `promote:<secret id>`). Derived, never minted, so every process resuming the step sends
/// the key the first send used.
pub fn step_key(rotation: &str, step: &str) -> String {
    format!("{rotation}:{step}")
}

/// One change of a rotation's step, with what it records. Applied by [`Change::apply`] as a
/// single guarded statement.
#[derive(Default)]
pub(crate) struct Change {
    to: Option<RotationStep>,
    stopped_step: Option<RotationStep>,
    new_secret_id: Option<String>,
    old_secrets: Option<String>,
    verify_test: Option<i64>,
    verify_attempts: Option<u32>,
    verify_result: Option<String>,
    acknowledge: bool,
    problem: Option<String>,
}

impl Change {
    pub(crate) fn to(step: RotationStep) -> Self {
        Self {
            to: Some(step),
            ..Self::default()
        }
    }

    /// To `needs_attention`, remembering the step it stopped at and why.
    pub(crate) fn attention(at: RotationStep, problem: Option<&OpError>) -> Self {
        Self {
            stopped_step: Some(at),
            problem: problem.map(|p| serde_json::to_string(p).expect("error serializes")),
            ..Self::to(RotationStep::NeedsAttention)
        }
    }

    /// `UPDATE rotations … WHERE id = ? AND step = ?`: false when the rotation is no longer at
    /// `from` (another process advanced it; its change stands).
    pub(crate) async fn apply(
        self,
        conn: &mut SqliteConnection,
        id: &str,
        from: RotationStep,
        now: i64,
    ) -> Result<bool> {
        let to = self.to.expect("a change names its step");
        let finished = to.is_finished().then_some(now);
        let done = sqlx::query(
            "UPDATE rotations SET step = ?, stopped_step = COALESCE(?, stopped_step), \
             new_secret_id = COALESCE(?, new_secret_id), old_secrets = COALESCE(?, old_secrets), \
             verify_test = COALESCE(?, verify_test), verify_attempts = COALESCE(?, verify_attempts), \
             verify_result = COALESCE(?, verify_result), \
             acknowledged_at = CASE WHEN ? THEN COALESCE(acknowledged_at, ?) ELSE acknowledged_at END, \
             problem = COALESCE(?, problem), finished_at = COALESCE(?, finished_at), updated_at = ? \
             WHERE id = ? AND step = ?",
        )
        .bind(to)
        .bind(self.stopped_step)
        .bind(self.new_secret_id)
        .bind(self.old_secrets)
        .bind(self.verify_test)
        .bind(self.verify_attempts.map(i64::from))
        .bind(self.verify_result)
        .bind(self.acknowledge)
        .bind(now)
        .bind(self.problem)
        .bind(finished)
        .bind(now)
        .bind(id)
        .bind(from)
        .execute(&mut *conn)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}

/// The refusal of a step the rotation is not at.
pub(crate) fn wrong_step(r: &Rotation, action: &str, hint: &str) -> CoreError {
    CoreError::Refused {
        code: "rotation_step",
        message: format!(
            "rotation {} of {} is {}: cannot {action}{hint}",
            r.id,
            r.target,
            r.step.as_str()
        ),
    }
}

impl Console {
    /// Starts a rotation of `target`'s signing secret: saved locally with its stage request
    /// queued under `<id>:stage` (works offline); send it with [`Console::resume_rotation`].
    /// `overlap`: how long the older secrets keep signing beside the new one (default: the
    /// server's day; at most 7 days; whole seconds). `force`: rotate although an overlap is
    /// open, and expire the older secrets now (a leaked secret; not with `overlap`).
    ///
    /// UI: the wizard's first step ("Stage a new secret"); the returned rotation is at
    /// `staging`. Refused ([`CoreError::Refused`] `rotation_open`) while the target has an open
    /// rotation: the UI offers to resume that one instead. Bad input is
    /// [`CoreError::Invalid`] naming the field; nothing is saved then.
    pub async fn start_rotation(
        &self,
        profile: &str,
        target: &str,
        overlap: Option<Duration>,
        force: bool,
    ) -> Result<Rotation> {
        self.profile(profile).await?;
        switchyard_protocol::validate_name(target)
            .map_err(|e| CoreError::invalid("target", format!("{target:?}: {e}")))?;
        if overlap.is_some_and(|d| d.subsec_nanos() != 0) {
            return Err(CoreError::invalid("overlap", "must be whole seconds"));
        }
        let request = RotateSecretRequest {
            overlap_seconds: overlap.map(|d| d.as_secs().min(i64::MAX as u64) as i64),
            force: force.then_some(true),
        };
        request.overlap().map_err(|e| {
            CoreError::invalid("overlap", e.message.replace("overlap_seconds", "overlap"))
        })?;
        let id = format!("rot_{}", uuid::Uuid::new_v4().simple());
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(open) = open_rotation(&mut tx, profile, target).await? {
            return Err(already_open(&open));
        }
        let write = SecretWrite::Rotate(request.clone());
        let op = self
            .insert_secret_op(&mut tx, profile, target, &write, &step_key(&id, "stage"))
            .await?;
        sqlx::query(
            "INSERT INTO rotations (id, profile, target, credential, step, overlap_seconds, force, stage_op, \
             created_at, updated_at) VALUES (?, ?, ?, 'secret', 'staging', ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(profile)
        .bind(target)
        .bind(request.overlap_seconds)
        .bind(force)
        .bind(op.id)
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        Audit::new(now, &self.inner.opts.actor, "rotation.start", "queued")
            .profile(profile)
            .resource(format!("target/{target}"))
            .detail(id.clone())
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.stored_rotation(&id).await
    }

    /// One rotation. An open rotation whose overlap the server shows ended (every older
    /// secret expired) is `done` from here on: waiting for the overlap is a valid end; one
    /// whose new secret the server shows expired (rolled back elsewhere) is `rolled_back`.
    /// The server is asked only for a staged or verified rotation, and not reaching it leaves
    /// the stored step.
    ///
    /// UI: the wizard re-opened on a rotation (the drawer, the palette), and its polling
    /// while it waits for the overlap to end.
    pub async fn rotation(&self, id: &str) -> Result<Rotation> {
        let r = self.stored_rotation(id).await?;
        self.settle_from_server(r).await
    }

    /// The profile's rotations, newest first, as stored (no request to the server; open
    /// [`Console::rotation`] for the live view of one).
    ///
    /// UI: the list of rotations (and the "rotation open" badge of a target).
    pub async fn rotations(&self, profile: &str) -> Result<Vec<Rotation>> {
        let rows: Vec<RotationRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM rotations WHERE profile = ? ORDER BY created_at DESC, id DESC"
        ))
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        let now = self.now();
        rows.into_iter().map(|r| r.rotation(now)).collect()
    }

    /// Records that the person stored the new secret's value: from now on it is never shown
    /// again (a resume no longer asks the server for it). Idempotent.
    ///
    /// UI: the "I have stored the secret" confirmation under the value, before "Verify".
    pub async fn acknowledge_secret(&self, id: &str) -> Result<Rotation> {
        let r = self.stored_rotation(id).await?;
        if r.new_secret_id.is_none() {
            return Err(CoreError::Refused {
                code: "nothing_to_acknowledge",
                message: format!(
                    "rotation {id} has no new secret yet (it is {}): stage it first",
                    r.step.as_str()
                ),
            });
        }
        sqlx::query(
            "UPDATE rotations SET acknowledged_at = ?, updated_at = ? WHERE id = ? AND acknowledged_at IS NULL",
        )
        .bind(self.now())
        .bind(self.now())
        .bind(id)
        .execute(&self.inner.writer)
        .await?;
        self.stored_rotation(id).await
    }

    pub(crate) async fn stored_rotation(&self, id: &str) -> Result<Rotation> {
        let row: RotationRow =
            sqlx::query_as(&format!("SELECT {COLUMNS} FROM rotations WHERE id = ?"))
                .bind(id)
                .fetch_optional(&self.inner.pool)
                .await?
                .ok_or_else(|| CoreError::not_found(format!("rotation {id:?}")))?;
        row.rotation(self.now())
    }
}

/// The target's open rotation, read inside the caller's transaction.
async fn open_rotation(
    tx: &mut sqlx::Transaction<'_, Sqlite>,
    profile: &str,
    target: &str,
) -> Result<Option<(String, RotationStep)>> {
    Ok(sqlx::query_as(
        "SELECT id, step FROM rotations WHERE profile = ? AND target = ? AND step IN \
         ('staging', 'staged', 'verifying', 'verified', 'promoting', 'rolling_back')",
    )
    .bind(profile)
    .bind(target)
    .fetch_optional(&mut **tx)
    .await?)
}

fn already_open((id, step): &(String, RotationStep)) -> CoreError {
    CoreError::Refused {
        code: "rotation_open",
        message: format!(
            "the target already has an open rotation, {id} ({}): resume it with `switchyard rotation resume {id}` \
             or roll it back with `switchyard rotation rollback {id}`; nothing was queued",
            step.as_str()
        ),
    }
}
