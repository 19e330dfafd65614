//! The control plane ↔ edge plane protocol (`/v1/edges/{name}/…`).
//!
//! An edge plane leases due `async_relay` attempts for its name; each lease carries the
//! exact request to send (body and headers, already signed by the control plane, so signing
//! secrets never leave it). The edge sends it and reports the outcome, keyed by the attempt
//! id and fenced by the lease token; a report that repeats is acknowledged again without
//! effect. An attempt whose lease expires unreported counts as a failed attempt (`timeout`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::events::ErrorClass;

/// `POST /v1/edges/{name}/lease`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EdgeLeaseRequest {
    /// At most this many attempts (1-100).
    pub max: u32,
}

/// A leased attempt: send `body` with `headers` to `url` within `timeout_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RelayedAttempt {
    pub delivery_id: String,
    pub attempt_id: String,
    /// The attempt's number within the edge plane → webhook hop (1 to the delivery's
    /// budget), as sent in `switchyard-attempt`.
    pub attempt_number: u32,
    /// Fencing token: report it back; a stale token's report is refused.
    pub lease_token: i64,
    pub lease_until: DateTime<Utc>,
    pub url: String,
    pub timeout_ms: u32,
    /// Every header to send, including the signed `webhook-*` ones.
    pub headers: Vec<(String, String)>,
    /// The exact request body.
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EdgeLease {
    pub attempts: Vec<RelayedAttempt>,
}

/// `POST /v1/edges/{name}/attempts/{attempt_id}`: what the edge observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EdgeAttemptReport {
    pub lease_token: i64,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    /// Absent when the attempt succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The acknowledgement of a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EdgeAttemptAck {
    /// `true`: the outcome is recorded (now or by an earlier identical report).
    pub recorded: bool,
    /// `true` when an earlier report had already recorded it.
    pub duplicate: bool,
    /// Set when refused: `lease_lost` (the lease expired and the attempt was counted failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
