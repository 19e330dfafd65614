use serde::{Deserialize, Serialize};

/// `GET /v1/info`: what a client needs to know to talk to this server safely.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerInfo {
    /// Server version (semver).
    pub version: String,
    /// The git commit the server was built from; absent when its source had no git metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// When the server binary was built (RFC 3339 UTC); absent from servers older than this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_date: Option<String>,
    /// How long a completed Idempotency-Key is remembered. A retry older than this may
    /// execute again, so clients check live state before resending older operations.
    pub idempotency_retention_seconds: u64,
    /// The delivery retry schedule: the delay before each attempt, e.g. `["0s","10s","1m","10m","1h"]`.
    pub retry_schedule: Vec<String>,
    /// Features this server supports, e.g. `idempotency-key`, `merge-patch`, `if-match`.
    pub features: Vec<String>,
    /// Where target URLs may point: `public_only` (loopback, private, link-local and the
    /// other reserved ranges are refused with `target_address_forbidden`) or `any`
    /// (`--allow-private-targets`). Absent from servers older than this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_addresses: Option<crate::addresses::TargetAddresses>,
    /// Address ranges the operator forbids whatever `target_addresses` says
    /// (`--forbid-cidr`), e.g. `["10.20.0.0/16"]`.
    #[serde(default)]
    pub forbidden_target_cidrs: Vec<String>,
}
