//! Client certificates (mTLS) of a target: `PUT /v1/targets/{name}/client-certificates/{id}`,
//! `GET …/client-certificates` and `POST …/client-certificates/{id}/activate`.
//!
//! A target whose receiver requires a client certificate presents its **active** one on every
//! delivery and test. A new certificate is uploaded **staged** (presented only by a target test
//! that names it), then activated; the one it replaces becomes **retired** and can be activated
//! again (roll back) until it expires. The private key is write-only: no response carries it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How many days before `not_after` a console warns, from the furthest to the nearest.
pub const CERTIFICATE_WARN_DAYS: [i64; 3] = [30, 7, 1];

/// Whether `id` is a client-certificate id: 1-128 characters of letters, digits and `. _ : -`
/// (chosen by the client; the upload is idempotent by it), the form of a replay session id
/// ([`CERTIFICATE_ID_PATTERN`]).
pub fn is_certificate_id(id: &str) -> bool {
    crate::replay::is_session_id(id)
}

/// [`is_certificate_id`] as a pattern (the OpenAPI document's).
pub const CERTIFICATE_ID_PATTERN: &str = crate::replay::SESSION_ID_PATTERN;

/// The body of `PUT /v1/targets/{name}/client-certificates/{id}`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UploadCertificateRequest {
    /// The certificate chain, PEM: the leaf (the client's certificate) first, then each
    /// certificate that issued the one before it.
    pub certificate_pem: String,
    /// The leaf's private key, PEM (PKCS#8, PKCS#1 RSA or SEC1 EC). Stored sealed; never
    /// returned.
    pub private_key_pem: String,
}

// The key never reaches a log line through `{:?}`.
impl std::fmt::Debug for UploadCertificateRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UploadCertificateRequest")
            .field(
                "certificate_pem",
                &format!("{} bytes", self.certificate_pem.len()),
            )
            .field("private_key_pem", &"<redacted>")
            .finish()
    }
}

/// Where a certificate is in its rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum CertificateState {
    /// Uploaded, not presented by deliveries (a target test may name it).
    Staged,
    /// Presented by every delivery and test of the target.
    Active,
    /// Was active; can be activated again (roll back) until it expires.
    Retired,
}

impl CertificateState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Staged => "staged",
            Self::Active => "active",
            Self::Retired => "retired",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "staged" => Some(Self::Staged),
            "active" => Some(Self::Active),
            "retired" => Some(Self::Retired),
            _ => None,
        }
    }
}

/// A client certificate as the API shows it: never the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClientCertificateInfo {
    pub id: String,
    /// SHA-256 of the leaf certificate's DER, lowercase hex.
    pub fingerprint_sha256: String,
    /// The leaf's subject (RFC 4514 form, e.g. `CN=billing-client`).
    pub subject: String,
    /// The leaf's expiry: after it the certificate can no longer be activated or tested.
    pub not_after: DateTime<Utc>,
    pub state: CertificateState,
    pub created_at: DateTime<Utc>,
}

/// `GET /v1/targets/{name}/client-certificates`: oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClientCertificateList {
    pub items: Vec<ClientCertificateInfo>,
}

/// 200 from `POST …/client-certificates/{id}/activate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivateCertificateResponse {
    /// The certificate now active.
    pub certificate: ClientCertificateInfo,
    /// The one it replaced (now `retired`), if there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
    pub items: Vec<ClientCertificateInfo>,
}

/// `status.client_certificate` of a target: the active certificate and how soon it expires,
/// so a console can warn 30, 7 and 1 days ahead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CertificateExpiry {
    pub id: String,
    pub fingerprint_sha256: String,
    pub not_after: DateTime<Utc>,
    /// Whole days left until `not_after` (0 on its last day, negative once expired).
    pub expires_in_days: i64,
    /// The nearest of 30, 7 and 1 days that `not_after` is within; absent when further off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn_days: Option<i64>,
}

impl CertificateExpiry {
    /// The expiry of `info` seen at `now`.
    pub fn of(info: &ClientCertificateInfo, now: DateTime<Utc>) -> Self {
        let left = info.not_after - now;
        let expires_in_days = left.num_days();
        let warn_days = CERTIFICATE_WARN_DAYS
            .iter()
            .rev()
            .copied()
            .find(|d| left <= chrono::Duration::days(*d));
        Self {
            id: info.id.clone(),
            fingerprint_sha256: info.fingerprint_sha256.clone(),
            not_after: info.not_after,
            expires_in_days,
            warn_days,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_and_keys_never_debug_printed() {
        assert!(is_certificate_id("cert-2026.12:a_1"));
        assert!(!is_certificate_id(""));
        assert!(!is_certificate_id("a/b"));
        assert!(!is_certificate_id(&"a".repeat(129)));
        let request = UploadCertificateRequest {
            certificate_pem: "-----BEGIN CERTIFICATE-----".into(),
            private_key_pem: "-----BEGIN PRIVATE KEY-----secret".into(),
        };
        assert!(!format!("{request:?}").contains("secret"));
    }

    #[test]
    fn the_warning_is_the_nearest_threshold_reached() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let info = |days: i64| ClientCertificateInfo {
            id: "c".into(),
            fingerprint_sha256: "f".into(),
            subject: "CN=x".into(),
            not_after: now + chrono::Duration::days(days),
            state: CertificateState::Active,
            created_at: now,
        };
        assert_eq!(CertificateExpiry::of(&info(60), now).warn_days, None);
        assert_eq!(CertificateExpiry::of(&info(30), now).warn_days, Some(30));
        assert_eq!(CertificateExpiry::of(&info(8), now).warn_days, Some(30));
        assert_eq!(CertificateExpiry::of(&info(7), now).warn_days, Some(7));
        assert_eq!(CertificateExpiry::of(&info(1), now).warn_days, Some(1));
        assert_eq!(CertificateExpiry::of(&info(-1), now).expires_in_days, -1);
    }
}
