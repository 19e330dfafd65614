//! RFC 9457 problem details with a stable machine `code`.

use serde::{Deserialize, Serialize};

/// Stable machine-readable error codes. Clients branch on these, never on `title` or `detail`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    ValidationFailed,
    IdempotencyKeyMissing,
    IdempotencyKeyInvalid,
    IdempotencyKeyReused,
    IdempotencyKeyInProgress,
    Unauthorized,
    /// The token authenticated, but its role may not make this call (`detail` names the
    /// role it needs); nothing changed.
    ForbiddenRole,
    NotFound,
    NameTaken,
    InUse,
    ReferenceMissing,
    VersionMismatch,
    EndpointDisabled,
    /// A replay session id was reused with a different request body.
    ReplaySessionReused,
    /// A retirement id was reused with a different request body.
    RetirementReused,
    /// The retirement has already deleted its resource: nothing is left to cancel.
    RetirementNotCancellable,
    /// The resource is being retired: it takes no new references (a flow naming it) and no
    /// second retirement; cancel the retirement first.
    ResourceRetiring,
    PayloadTooLarge,
    UnsupportedMediaType,
    /// A target URL names an address deliveries may not reach (loopback, private,
    /// link-local, …, or `localhost`); `field` is `spec.url`.
    TargetAddressForbidden,
    MethodNotAllowed,
    /// The tenant is over its per-replica rate limit; the response carries `Retry-After`.
    RateLimited,
    /// The request line and headers exceed the server's cap (HTTP 431).
    HeadersTooLarge,
    Internal,
    Unavailable,
    /// A signing-secret rotation of the target is still in its overlap: promote (expire the
    /// older secret) or pass `force: true`.
    RotationInProgress,
    /// The target already holds the most signing secrets it may (10 unexpired).
    SecretLimitReached,
    /// Expiring this secret would leave the target without a valid signing secret.
    LastSecret,
    /// The signing secret has already expired.
    SecretExpired,
    /// A requeue named a delivery that is not stuck: not in flight, its lease has not
    /// expired, or it is on another attempt than the one named.
    DeliveryNotStuck,
    /// The client certificate has expired: it can no longer be activated or tested.
    CertificateExpired,
    /// A client-certificate id was reused with a different certificate or key.
    CertificateReused,
    /// A code this client does not know (a newer server).
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ValidationFailed => "validation_failed",
            Self::IdempotencyKeyMissing => "idempotency_key_missing",
            Self::IdempotencyKeyInvalid => "idempotency_key_invalid",
            Self::IdempotencyKeyReused => "idempotency_key_reused",
            Self::IdempotencyKeyInProgress => "idempotency_key_in_progress",
            Self::Unauthorized => "unauthorized",
            Self::ForbiddenRole => "forbidden_role",
            Self::NotFound => "not_found",
            Self::NameTaken => "name_taken",
            Self::InUse => "in_use",
            Self::ReferenceMissing => "reference_missing",
            Self::VersionMismatch => "version_mismatch",
            Self::EndpointDisabled => "endpoint_disabled",
            Self::ReplaySessionReused => "replay_session_reused",
            Self::RetirementReused => "retirement_reused",
            Self::RetirementNotCancellable => "retirement_not_cancellable",
            Self::ResourceRetiring => "resource_retiring",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::TargetAddressForbidden => "target_address_forbidden",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::RateLimited => "rate_limited",
            Self::HeadersTooLarge => "headers_too_large",
            Self::Internal => "internal",
            Self::Unavailable => "unavailable",
            Self::RotationInProgress => "rotation_in_progress",
            Self::SecretLimitReached => "secret_limit_reached",
            Self::LastSecret => "last_secret",
            Self::SecretExpired => "secret_expired",
            Self::DeliveryNotStuck => "delivery_not_stuck",
            Self::CertificateExpired => "certificate_expired",
            Self::CertificateReused => "certificate_reused",
            Self::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An `application/problem+json` body (RFC 9457).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Problem {
    /// A URI naming the problem type: `urn:switchyard:problem:<code>`.
    #[serde(rename = "type")]
    pub type_uri: String,
    pub title: String,
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub code: ErrorCode,
    /// For `validation_failed`, `target_address_forbidden` and `reference_missing`: the
    /// offending field, as a JSON path (`spec.url`, `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// For `in_use`: the resources that still reference the one being deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_by: Option<Vec<String>>,
    /// For `version_mismatch`: the version the server has now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_version: Option<i64>,
}

impl Problem {
    pub fn new(status: u16, code: ErrorCode, title: impl Into<String>) -> Self {
        Self {
            type_uri: format!("urn:switchyard:problem:{}", code.as_str()),
            title: title.into(),
            status,
            detail: None,
            code,
            field: None,
            used_by: None,
            current_version: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, HTTP {})", self.title, self.code, self.status)?;
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialize_as_their_names_and_unknown_codes_parse() {
        let json = serde_json::to_string(&ErrorCode::IdempotencyKeyReused).unwrap();
        assert_eq!(json, "\"idempotency_key_reused\"");
        assert_eq!(
            ErrorCode::IdempotencyKeyReused.as_str(),
            "idempotency_key_reused"
        );
        let parsed: ErrorCode = serde_json::from_str("\"something_new\"").unwrap();
        assert_eq!(parsed, ErrorCode::Unknown);
    }
}
