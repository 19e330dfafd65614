//! `POST /v1/targets/{name}/test`: send one signed test webhook to a target.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::ErrorClass;

/// The body of a target test. Every field is optional; an empty body sends
/// `{"type": "switchyard.test", "data": {}}` signed with every unexpired secret.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TargetTestRequest {
    /// The `type` of the test webhook (default `switchyard.test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    /// Sent as `data` of the webhook body (default `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// Sign with this secret only (`sec_…`, see `GET /v1/targets/{name}/secrets`): the verify
    /// step of a rotation, proving the receiver accepts the new secret. An unknown id answers
    /// 404, an expired one 409 `secret_expired`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_id: Option<String>,
    /// Present this client certificate (any state, usually a `staged` one) in the TLS
    /// handshake instead of the active one: the verify step of a certificate rotation. An
    /// unknown id answers 404, an expired one 409 `certificate_expired`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_certificate_id: Option<String>,
}

/// What the test webhook observed. A receiver that failed is still a completed test
/// (`ok: false`): the answer is stored under the Idempotency-Key and replayed like any other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetTestResult {
    pub target: String,
    /// The `webhook-id` the receiver saw. It is derived from the Idempotency-Key, so if the
    /// server crashed mid-test and a retry sends again, the receiver sees the same id twice
    /// and can drop the copy.
    pub webhook_id: String,
    /// A 2xx within the target's timeout.
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration_ms: u64,
    pub tested_at: DateTime<Utc>,
    /// A client certificate (the one `client_certificate_id` named, or the active one) was
    /// offered in a TLS handshake that completed: the URL is https and the receiver answered.
    /// `false` over http, where no handshake takes place, so a client certificate is never
    /// presented and a 2xx proves nothing about it; `false` too when the target has none.
    #[serde(default)]
    pub client_certificate_presented: bool,
}
