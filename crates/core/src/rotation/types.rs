//! What a rotation is, as the core hands it to the CLI and the desktop UI, and its stored row.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchyard_protocol::ClientCertificateInfo;
use switchyard_protocol::secrets::ExpiringSecret;

use crate::error::{CoreError, Result};
use crate::types::OpError;

/// Where a rotation is. `staging → staged → verifying → verified → promoting → done`; from
/// `staged` or `verified` also `rolling_back → rolled_back`; `needs_attention` when the
/// server refused a step (the rotation's `problem` says why, `stopped_step` where).
/// A failed verify goes back to `staged` with its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "TEXT", rename_all = "snake_case")]
pub enum RotationStep {
    /// Saved locally; the stage request is queued (or in flight).
    Staging,
    /// The new secret exists beside the old ones (the overlap is open).
    Staged,
    /// The verify test webhook, signed with the new secret only, is queued or in flight.
    Verifying,
    /// The receiver accepted the new secret alone.
    Verified,
    /// The expiries of the older secrets are queued or in flight.
    Promoting,
    /// Only the new secret signs (promoted, or the overlap ended).
    Done,
    /// The expiry of the new secret is queued or in flight.
    RollingBack,
    /// The new secret is expired; the old one signs without expiry, as before.
    RolledBack,
    NeedsAttention,
}

impl RotationStep {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Staging => "staging",
            Self::Staged => "staged",
            Self::Verifying => "verifying",
            Self::Verified => "verified",
            Self::Promoting => "promoting",
            Self::Done => "done",
            Self::RollingBack => "rolling_back",
            Self::RolledBack => "rolled_back",
            Self::NeedsAttention => "needs_attention",
        }
    }

    /// A step the procedure ends at (another rotation of the target may start).
    pub fn is_finished(self) -> bool {
        matches!(self, Self::Done | Self::RolledBack | Self::NeedsAttention)
    }
}

/// What is rotated: a signing secret, or a client certificate (mTLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "TEXT", rename_all = "snake_case")]
pub enum Credential {
    Secret,
    Certificate,
}

/// The last verify: what the receiver answered to the test signed with the new secret only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyResult {
    /// The receiver answered 2xx: promoting is safe.
    pub ok: bool,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    pub latency_ms: Option<u64>,
    /// Why it failed: the receiver's error, or the server's refusal of the test.
    pub error: Option<String>,
    pub webhook_id: Option<String>,
    pub tested_at: Option<DateTime<Utc>>,
    /// Which verify attempt this was (from 1).
    pub attempt: u32,
    /// A certificate rotation: whether the test's TLS handshake presented the new
    /// certificate (the server says so). Over http none is presented, so a 2xx does not
    /// verify it. `None` for a secret rotation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_presented: Option<bool>,
}

/// What the UI may offer now (derived from the step, the verify result and the clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RotationActions {
    /// A step is queued or in flight, or the value can be shown again:
    /// [`crate::Console::resume_rotation`].
    pub resume: bool,
    pub verify: bool,
    /// Verified: promote.
    pub promote: bool,
    /// Staged but not (successfully) verified: promote only with `skip_verify`.
    pub promote_skipping_verify: bool,
    /// Secret: the old secret is still valid (by its stored expiry). Certificate: before
    /// promote (nothing to undo but ending the rotation), or after it while the previously
    /// active certificate has not expired (it is activated again).
    pub roll_back: bool,
}

/// A rotation as the CLI and the UI see it. Never holds a secret's value.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rotation {
    /// `rot_…`.
    pub id: String,
    pub profile: String,
    pub target: String,
    pub credential: Credential,
    pub step: RotationStep,
    /// With `needs_attention`: the step it stopped at.
    pub stopped_step: Option<RotationStep>,
    /// The overlap asked for, in seconds (`None`: the server's default, a day).
    pub overlap_seconds: Option<i64>,
    pub force: bool,
    /// The stage request's key (`<id>:stage`).
    pub stage_key: String,
    /// The `secret_ops` row of the stage, and the `target_tests` row of the last verify.
    pub stage_op: Option<i64>,
    pub verify_test: Option<i64>,
    /// The keys of the step in flight, when one is (what a resume sends again).
    pub pending_keys: Vec<String>,
    pub new_secret_id: Option<String>,
    /// The older secrets and the expiry the stage gave them.
    pub old_secrets: Vec<ExpiringSecret>,
    pub verify_attempts: u32,
    pub verify_result: Option<VerifyResult>,
    /// Certificate rotations: the uploaded certificate (as the server listed it when staged:
    /// fingerprint, subject, not_after; never its key), and the one active before, which a
    /// roll back activates again.
    pub new_certificate_id: Option<String>,
    pub old_certificate_id: Option<String>,
    pub new_certificate: Option<ClientCertificateInfo>,
    pub old_certificate: Option<ClientCertificateInfo>,
    /// The person said the value is stored: it is never shown again.
    pub acknowledged: bool,
    pub acknowledged_at: Option<i64>,
    /// `needs_attention`: the server's problem (`code`, `field`) or what went wrong.
    pub problem: Option<OpError>,
    pub actions: RotationActions,
    pub created_at: i64,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
}

impl Rotation {
    /// Whether an older secret still signs, by the expiry the stage recorded.
    pub fn old_still_valid(&self, now_ms: i64) -> bool {
        self.old_secrets
            .iter()
            .any(|s| s.expires_at.timestamp_millis() > now_ms)
    }

    /// Whether the certificate active before the rotation can be activated again: there was
    /// one, and it has not expired (by the `not_after` the server listed).
    pub fn old_certificate_valid(&self, now_ms: i64) -> bool {
        self.old_certificate
            .as_ref()
            .is_some_and(|c| c.not_after.timestamp_millis() > now_ms)
    }
}

/// The new secret's value, held in memory only to be shown once. Its `Debug` is redacted so
/// it never reaches a log; it serializes as the plain string (the CLI's `--json`, the IPC
/// answer to the UI) for that single display.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SecretValue(String);

impl SecretValue {
    pub(crate) fn new(value: String) -> Self {
        Self(value)
    }

    /// The value itself, to show to the person.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretValue(<redacted>)")
    }
}

/// What a step left: the rotation, and the new value when this process received it and the
/// person has not acknowledged storing it.
#[derive(Debug, Clone, Serialize)]
pub struct RotationProgress {
    pub rotation: Rotation,
    pub value: Option<SecretValue>,
}

#[derive(sqlx::FromRow)]
pub(crate) struct RotationRow {
    id: String,
    profile: String,
    target: String,
    credential: Credential,
    step: RotationStep,
    stopped_step: Option<RotationStep>,
    overlap_seconds: Option<i64>,
    force: bool,
    stage_op: Option<i64>,
    verify_test: Option<i64>,
    verify_attempts: i64,
    new_secret_id: Option<String>,
    old_secrets: Option<String>,
    verify_result: Option<String>,
    acknowledged_at: Option<i64>,
    problem: Option<String>,
    new_certificate_id: Option<String>,
    old_certificate_id: Option<String>,
    new_certificate: Option<String>,
    old_certificate: Option<String>,
    created_at: i64,
    updated_at: i64,
    finished_at: Option<i64>,
}

pub(crate) const COLUMNS: &str = "id, profile, target, credential, step, stopped_step, overlap_seconds, force, \
    stage_op, verify_test, verify_attempts, new_secret_id, old_secrets, verify_result, acknowledged_at, problem, \
    new_certificate_id, old_certificate_id, new_certificate, old_certificate, created_at, updated_at, finished_at";

impl RotationRow {
    pub(crate) fn rotation(self, now_ms: i64) -> Result<Rotation> {
        fn parse<T: serde::de::DeserializeOwned>(
            id: &str,
            what: &str,
            text: Option<&str>,
        ) -> Result<Option<T>> {
            text.map(serde_json::from_str)
                .transpose()
                .map_err(|_| CoreError::storage(format!("rotation {id}: unreadable {what}")))
        }
        let old_secrets: Vec<ExpiringSecret> =
            parse(&self.id, "old secrets", self.old_secrets.as_deref())?.unwrap_or_default();
        let verify_result: Option<VerifyResult> =
            parse(&self.id, "verify result", self.verify_result.as_deref())?;
        let problem = parse(&self.id, "problem", self.problem.as_deref())?;
        let new_certificate: Option<ClientCertificateInfo> =
            parse(&self.id, "new certificate", self.new_certificate.as_deref())?;
        let old_certificate: Option<ClientCertificateInfo> =
            parse(&self.id, "old certificate", self.old_certificate.as_deref())?;
        let attempts = self.verify_attempts as u32;
        let certificate = self.credential == Credential::Certificate;
        let steps: Vec<String> = match self.step {
            RotationStep::Staging => vec!["stage".to_owned()],
            RotationStep::Verifying => vec![format!("verify:{attempts}")],
            RotationStep::Promoting if certificate => vec!["promote".to_owned()],
            RotationStep::Promoting => old_secrets
                .iter()
                .map(|s| format!("promote:{}", s.id))
                .collect(),
            RotationStep::RollingBack => vec!["rollback".to_owned()],
            _ => Vec::new(),
        };
        let pending_keys = steps
            .iter()
            .map(|step| super::step_key(&self.id, step))
            .collect();
        let mut r = Rotation {
            stage_key: super::step_key(&self.id, "stage"),
            id: self.id,
            profile: self.profile,
            target: self.target,
            credential: self.credential,
            step: self.step,
            stopped_step: self.stopped_step,
            overlap_seconds: self.overlap_seconds,
            force: self.force,
            pending_keys,
            stage_op: self.stage_op,
            verify_test: self.verify_test,
            new_secret_id: self.new_secret_id,
            old_secrets,
            verify_attempts: attempts,
            verify_result,
            new_certificate_id: self.new_certificate_id,
            old_certificate_id: self.old_certificate_id,
            new_certificate,
            old_certificate,
            acknowledged: self.acknowledged_at.is_some(),
            acknowledged_at: self.acknowledged_at,
            problem,
            actions: RotationActions::default(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            finished_at: self.finished_at,
        };
        r.actions = actions(&r, now_ms);
        Ok(r)
    }
}

fn actions(r: &Rotation, now_ms: i64) -> RotationActions {
    use RotationStep::*;
    let in_flight = matches!(r.step, Staging | Verifying | Promoting | RollingBack);
    if r.credential == Credential::Certificate {
        return RotationActions {
            resume: in_flight,
            verify: r.step == Staged,
            promote: r.step == Verified,
            promote_skipping_verify: r.step == Staged,
            roll_back: matches!(r.step, Staged | Verified)
                || (r.step == Done && r.old_certificate_valid(now_ms)),
        };
    }
    RotationActions {
        resume: in_flight || (r.step == Staged && !r.acknowledged),
        verify: r.step == Staged,
        promote: r.step == Verified,
        promote_skipping_verify: r.step == Staged,
        roll_back: matches!(r.step, Staged | Verified) && r.old_still_valid(now_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_never_shows_in_debug_output() {
        let v = SecretValue::new("whsec_c2VjcmV0".into());
        assert_eq!(format!("{v:?}"), "SecretValue(<redacted>)");
        let progress = format!(
            "{:?}",
            Some(RotationProgressProbe {
                value: Some(v.clone())
            })
        );
        assert!(!progress.contains("whsec_"), "{progress}");
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"whsec_c2VjcmV0\"");
    }

    fn certificate_row(step: RotationStep, old_not_after: &str) -> RotationRow {
        let cert = |id: &str, not_after: &str, state: &str| {
            format!(
                r#"{{"id":"{id}","fingerprint_sha256":"ab","subject":"CN=c","not_after":"{not_after}","state":"{state}","created_at":"2026-01-01T00:00:00Z"}}"#
            )
        };
        RotationRow {
            id: "rot_1".into(),
            profile: "p".into(),
            target: "billing".into(),
            credential: Credential::Certificate,
            step,
            stopped_step: None,
            overlap_seconds: None,
            force: false,
            stage_op: None,
            verify_test: None,
            verify_attempts: 1,
            new_secret_id: None,
            old_secrets: None,
            verify_result: None,
            acknowledged_at: None,
            problem: None,
            new_certificate_id: Some("new".into()),
            old_certificate_id: Some("old".into()),
            new_certificate: Some(cert("new", "2028-01-01T00:00:00Z", "staged")),
            old_certificate: Some(cert("old", old_not_after, "active")),
            created_at: 0,
            updated_at: 0,
            finished_at: None,
        }
    }

    #[test]
    fn a_certificate_rotation_rolls_back_after_promote_only_while_the_old_one_is_valid() {
        let now = chrono::DateTime::parse_from_rfc3339("2027-01-01T00:00:00Z")
            .unwrap()
            .timestamp_millis();
        let valid = "2027-06-01T00:00:00Z";
        let expired = "2026-12-01T00:00:00Z";
        let r = certificate_row(RotationStep::Staged, expired)
            .rotation(now)
            .unwrap();
        assert!(
            r.actions.roll_back,
            "before promote: nothing to undo, always"
        );
        assert!(!r.actions.resume, "nothing to show again: no value");
        let r = certificate_row(RotationStep::Done, valid)
            .rotation(now)
            .unwrap();
        assert!(r.actions.roll_back);
        let r = certificate_row(RotationStep::Done, expired)
            .rotation(now)
            .unwrap();
        assert!(!r.actions.roll_back, "the old certificate expired");
        let r = certificate_row(RotationStep::Promoting, valid)
            .rotation(now)
            .unwrap();
        assert_eq!(r.pending_keys, ["rot_1:promote"]);
        assert_eq!(r.new_certificate.unwrap().subject, "CN=c");
    }

    #[derive(Debug)]
    #[allow(dead_code)]
    struct RotationProgressProbe {
        value: Option<SecretValue>,
    }
}
