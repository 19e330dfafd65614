//! The rotation wizard's IPC types: a rotation as the core stores it (never a secret's value),
//! and the value of a freshly staged secret, which crosses into the webview once to be shown
//! with a copy button and is kept there only while the wizard is open. A certificate
//! rotation's key crosses the other way once, in [`CertificateRotationInput`], and is dropped
//! by the core right after the upload.

use serde::{Deserialize, Serialize};
use switchyard_core::rotation::{
    Credential, Rotation, RotationActions, RotationProgress, RotationStep, VerifyResult,
};
use switchyard_protocol::{CertificateState, ClientCertificateInfo};
use ts_rs::TS;

use super::convert::write_error;
use super::types::WriteError;

/// An older secret and when it stops signing (RFC 3339).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct OldSecretView {
    pub id: String,
    pub expires_at: String,
}

/// A client certificate as the control plane listed it (never its key).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct CertificateView {
    pub id: String,
    /// SHA-256 of the leaf's DER, lowercase hex.
    pub fingerprint_sha256: String,
    /// RFC 4514, e.g. `CN=billing-client`.
    pub subject: String,
    /// RFC 3339.
    pub not_after: String,
    /// As the rotation recorded it.
    pub state: CertificateState,
}

/// The last verify: what the receiver answered to the test signed with the new secret only.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct VerifyView {
    pub ok: bool,
    pub status: Option<u16>,
    #[ts(type = "number | null")]
    pub latency_ms: Option<u64>,
    pub error: Option<String>,
    pub webhook_id: Option<String>,
    /// RFC 3339.
    pub tested_at: Option<String>,
    pub attempt: u32,
    /// A certificate rotation: whether the test's TLS handshake presented the new
    /// certificate (`false` over http: no handshake, nothing verified). `null` for a secret.
    pub certificate_presented: Option<bool>,
}

/// One rotation (crates/core/src/rotation/types.rs `Rotation`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RotationView {
    pub id: String,
    pub profile: String,
    pub target: String,
    pub credential: Credential,
    pub step: RotationStep,
    pub stopped_step: Option<RotationStep>,
    /// The overlap asked for; `null`: the server's default (a day).
    #[ts(type = "number | null")]
    pub overlap_seconds: Option<i64>,
    pub force: bool,
    /// The keys of the step in flight (what a resume sends again).
    pub pending_keys: Vec<String>,
    pub new_secret_id: Option<String>,
    pub old_secrets: Vec<OldSecretView>,
    /// Certificate rotations: the uploaded certificate and the one active before it (which a
    /// roll back after promote activates again).
    pub new_certificate_id: Option<String>,
    pub old_certificate_id: Option<String>,
    pub new_certificate: Option<CertificateView>,
    pub old_certificate: Option<CertificateView>,
    pub verify_attempts: u32,
    pub verify_result: Option<VerifyView>,
    /// The person said the value is stored: it is never shown again.
    pub acknowledged: bool,
    /// `needs_attention`: the control plane's problem (`code`, `field`) or what went wrong.
    pub problem: Option<WriteError>,
    pub actions: RotationActions,
    /// Milliseconds since the epoch.
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub updated_at: i64,
    #[ts(type = "number | null")]
    pub finished_at: Option<i64>,
}

/// What a step left: the rotation and, once, the new secret's value.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RotationProgressView {
    pub rotation: RotationView,
    /// The new value while the person has not said it is stored; `null` afterwards.
    pub value: Option<String>,
}

/// The wizard's stage step.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RotationStartInput {
    pub target: String,
    /// How long the older secrets keep signing beside the new one; `null`: the server's day.
    pub overlap_seconds: Option<u32>,
    /// Rotate although an overlap is open and expire the older secrets now (a leaked secret).
    pub force: bool,
}

/// The certificate path's stage step: the new certificate's id, its chain and its key, read in
/// the webview. The key is sent to the control plane and never stored by the console; `Debug`
/// never shows it.
#[derive(Clone, Serialize, Deserialize, TS)]
pub struct CertificateRotationInput {
    pub target: String,
    pub certificate_id: String,
    /// PEM, the leaf first.
    pub certificate_pem: String,
    /// PEM (PKCS#8, PKCS#1 RSA or SEC1 EC).
    pub private_key_pem: String,
}

impl std::fmt::Debug for CertificateRotationInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateRotationInput")
            .field("target", &self.target)
            .field("certificate_id", &self.certificate_id)
            .field("private_key_pem", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl From<ClientCertificateInfo> for CertificateView {
    fn from(c: ClientCertificateInfo) -> Self {
        Self {
            id: c.id,
            fingerprint_sha256: c.fingerprint_sha256,
            subject: c.subject,
            not_after: c.not_after.to_rfc3339(),
            state: c.state,
        }
    }
}

impl From<VerifyResult> for VerifyView {
    fn from(v: VerifyResult) -> Self {
        Self {
            ok: v.ok,
            status: v.status,
            latency_ms: v.latency_ms,
            error: v.error,
            webhook_id: v.webhook_id,
            tested_at: v.tested_at.map(|t| t.to_rfc3339()),
            attempt: v.attempt,
            certificate_presented: v.certificate_presented,
        }
    }
}

impl From<Rotation> for RotationView {
    fn from(r: Rotation) -> Self {
        Self {
            id: r.id,
            profile: r.profile,
            target: r.target,
            credential: r.credential,
            step: r.step,
            stopped_step: r.stopped_step,
            overlap_seconds: r.overlap_seconds,
            force: r.force,
            pending_keys: r.pending_keys,
            new_secret_id: r.new_secret_id,
            old_secrets: r
                .old_secrets
                .into_iter()
                .map(|s| OldSecretView {
                    id: s.id,
                    expires_at: s.expires_at.to_rfc3339(),
                })
                .collect(),
            new_certificate_id: r.new_certificate_id,
            old_certificate_id: r.old_certificate_id,
            new_certificate: r.new_certificate.map(Into::into),
            old_certificate: r.old_certificate.map(Into::into),
            verify_attempts: r.verify_attempts,
            verify_result: r.verify_result.map(Into::into),
            acknowledged: r.acknowledged,
            problem: r.problem.as_ref().map(write_error),
            actions: r.actions,
            created_at: r.created_at,
            updated_at: r.updated_at,
            finished_at: r.finished_at,
        }
    }
}

impl From<RotationProgress> for RotationProgressView {
    fn from(p: RotationProgress) -> Self {
        Self {
            rotation: p.rotation.into(),
            value: p.value.map(|v| v.expose().to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_input_never_shows_its_key_in_debug_output() {
        let input = CertificateRotationInput {
            target: "billing".into(),
            certificate_id: "cert-2026-12-04".into(),
            certificate_pem: "-----BEGIN CERTIFICATE-----".into(),
            private_key_pem: "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMG".into(),
        };
        let shown = format!("{input:?}");
        assert!(!shown.contains("MIGHAgEAMBMG"), "{shown}");
        assert!(shown.contains("cert-2026-12-04"), "{shown}");
    }
}
