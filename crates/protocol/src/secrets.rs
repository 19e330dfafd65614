//! Signing-secret rotation of a target: `GET /v1/targets/{name}/secrets`,
//! `POST …/secrets/rotate` and `POST …/secrets/{id}/expire`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::resource::{FieldError, SigningSecretInfo};

/// The most unexpired signing secrets a target holds at once.
pub const MAX_SIGNING_SECRETS: usize = 10;
/// How long the older secrets stay valid after a rotation when the request names no overlap.
pub const DEFAULT_OVERLAP_SECONDS: i64 = 86_400;
/// The longest overlap a rotation may ask for (7 days).
pub const MAX_OVERLAP_SECONDS: i64 = 604_800;

/// `GET /v1/targets/{name}/secrets`: ids and expiry, oldest first; never the values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SigningSecretList {
    pub items: Vec<SigningSecretInfo>,
}

/// The body of `POST /v1/targets/{name}/secrets/rotate`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RotateSecretRequest {
    /// How long every older unexpired secret stays valid beside the new one: 0 to 604800
    /// (7 days), default 86400. Not with `force`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap_seconds: Option<i64>,
    /// Rotate even while an overlap is open, and expire every older secret now (a leaked
    /// secret): receivers that only know an older one fail at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

impl RotateSecretRequest {
    /// The overlap in seconds this request asks for, or the field that is wrong.
    pub fn overlap(&self) -> Result<i64, FieldError> {
        match (self.overlap_seconds, self.force.unwrap_or(false)) {
            (Some(_), true) => Err(FieldError::new(
                "overlap_seconds",
                "cannot be combined with force: a forced rotation expires the older secrets now",
            )),
            (None, true) => Ok(0),
            (Some(s), false) if !(0..=MAX_OVERLAP_SECONDS).contains(&s) => Err(FieldError::new(
                "overlap_seconds",
                format!("must be between 0 and {MAX_OVERLAP_SECONDS} (7 days)"),
            )),
            (Some(s), false) => Ok(s),
            (None, false) => Ok(DEFAULT_OVERLAP_SECONDS),
        }
    }
}

/// The new secret, with its value: shown in this response (and its keyed replays) only.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewSigningSecret {
    pub id: String,
    /// `whsec_<base64 of 32 bytes>` (Standard Webhooks).
    pub value: String,
    pub created_at: DateTime<Utc>,
}

/// Without the value: a `{:?}` in a log line or a failing assertion must not print it.
impl std::fmt::Debug for NewSigningSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewSigningSecret")
            .field("id", &self.id)
            .field("value", &"<redacted>")
            .field("created_at", &self.created_at)
            .finish()
    }
}

/// An older secret and when it stops signing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExpiringSecret {
    pub id: String,
    pub expires_at: DateTime<Utc>,
}

/// 201 from `POST /v1/targets/{name}/secrets/rotate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RotateSecretResponse {
    pub secret: NewSigningSecret,
    /// Every older secret that was still valid, with the expiry the rotation gave it.
    pub previous: Vec<ExpiringSecret>,
}

/// 200 from `POST /v1/targets/{name}/secrets/{id}/expire`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExpireSecretResponse {
    /// The secret that was expired (`expires_at` is now).
    pub secret: SigningSecretInfo,
    /// The target's secrets afterwards, as `GET …/secrets` lists them.
    pub items: Vec<SigningSecretInfo>,
}

/// `status.rotation` of a target while a rotation's overlap is open (absent otherwise).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RotationStatus {
    pub open: bool,
    /// When the last older secret expires and the overlap ends.
    pub ends_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(overlap_seconds: Option<i64>, force: Option<bool>) -> RotateSecretRequest {
        RotateSecretRequest {
            overlap_seconds,
            force,
        }
    }

    #[test]
    fn a_new_secret_prints_without_its_value() {
        let secret = NewSigningSecret {
            id: "sec_1".into(),
            value: "whsec_abc".into(),
            created_at: DateTime::<Utc>::UNIX_EPOCH,
        };
        let printed = format!("{secret:?}");
        assert!(
            !printed.contains("whsec_abc") && printed.contains("sec_1"),
            "{printed}"
        );
    }

    #[test]
    fn the_overlap_defaults_to_a_day_and_is_at_most_a_week() {
        assert_eq!(request(None, None).overlap().unwrap(), 86_400);
        assert_eq!(request(Some(0), None).overlap().unwrap(), 0);
        assert_eq!(
            request(Some(604_800), Some(false)).overlap().unwrap(),
            604_800
        );
        for bad in [-1, 604_801] {
            assert_eq!(
                request(Some(bad), None).overlap().unwrap_err().field,
                "overlap_seconds"
            );
        }
        assert_eq!(request(None, Some(true)).overlap().unwrap(), 0);
        assert_eq!(
            request(Some(60), Some(true)).overlap().unwrap_err().field,
            "overlap_seconds"
        );
    }
}
