//! Events, deliveries and attempts (contract section 1, "Events, deliveries, DLQ, replay").

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::resource::FlowMode;

/// The longest event type.
pub const EVENT_TYPE_MAX_LEN: usize = 128;
/// What [`is_event_type`] accepts, as the OpenAPI document states it.
pub const EVENT_TYPE_PATTERN: &str = "^[A-Za-z0-9._:-]{1,128}$";
/// What [`is_event_key`] accepts, as the OpenAPI document states it.
pub const EVENT_KEY_PATTERN: &str = "^[ -~]{1,255}$";

/// An event type: 1-128 characters of letters, digits and `. _ : -` (the one rule the server
/// applies to submitted events and test webhooks, and a client checks before queuing).
pub fn is_event_type(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= EVENT_TYPE_MAX_LEN
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
}

/// An event key: 1-255 printable ASCII characters.
pub fn is_event_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= 255 && key.bytes().all(|b| (0x20..=0x7e).contains(&b))
}

/// `POST /v1/events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SubmitEventRequest {
    /// The endpoint the event comes in on.
    pub endpoint: String,
    /// 1-128 characters of letters, digits and `. _ : -`; must be accepted by the endpoint.
    pub event_type: String,
    /// Any JSON value; delivered as `data` of the webhook body.
    pub payload: Value,
    /// Dedup key: a second event with the same (endpoint, event_key) inside the retention
    /// window is not accepted again; the original is returned with `duplicate: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_key: Option<String>,
}

/// An accepted event with its deliveries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Event {
    /// `evt_…`; also the `webhook-id` of every delivery of this event.
    pub id: String,
    pub endpoint: String,
    pub event_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_key: Option<String>,
    pub payload: Value,
    pub created_at: DateTime<Utc>,
    /// One per matching enabled flow (and one per replay of a dead one).
    #[serde(default)]
    pub deliveries: Vec<Delivery>,
}

/// `GET /v1/events?event_key=K[&endpoint=E]`: the events with that key, newest first, each
/// with its deliveries and their attempts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventList {
    pub items: Vec<Event>,
    /// `true` when more events have this key than `limit` allowed (narrow by `endpoint`).
    pub more: bool,
}

/// The answer to `POST /v1/events`: 202 accepted (async flows); for a matching `sync` flow,
/// 200 when its first attempt succeeded and 202 when it failed (retries continue in the
/// background); 200 with `duplicate: true` for a duplicate `event_key`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SubmitEventResponse {
    #[serde(flatten)]
    pub event: Event,
    /// `true` when this is the original event of an earlier submission with the same key.
    pub duplicate: bool,
    /// The first attempt of the `sync` flow's delivery, when one matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_attempt: Option<Attempt>,
}

/// Where a delivery is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Waiting for its next attempt (`next_attempt_at`).
    Pending,
    /// An attempt is running (claimed under a lease).
    InFlight,
    /// A 2xx arrived within the target's timeout.
    Succeeded,
    /// Every attempt failed: the delivery is in the DLQ.
    Dead,
    /// Was dead and has been re-delivered by a replay session (left the DLQ; see
    /// `replayed_by`).
    Replayed,
    /// A replay delivery whose session was cancelled before it was attempted.
    Cancelled,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InFlight => "in_flight",
            Self::Succeeded => "succeeded",
            Self::Dead => "dead",
            Self::Replayed => "replayed",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::InFlight,
            Self::Succeeded,
            Self::Dead,
            Self::Replayed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// Why an attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ErrorClass {
    /// The receiver answered with a non-2xx status below 500 (4xx, or an unfollowed 3xx).
    #[serde(rename = "http_4xx")]
    Http4xx,
    /// The receiver answered 5xx.
    #[serde(rename = "http_5xx")]
    Http5xx,
    /// No complete answer within the target's timeout (also: the worker or edge holding the
    /// attempt's lease vanished).
    #[serde(rename = "timeout")]
    Timeout,
    /// The connection could not be opened (refused, DNS, unreachable).
    #[serde(rename = "connect")]
    Connect,
    /// The TLS handshake failed (certificate, protocol).
    #[serde(rename = "tls")]
    Tls,
    /// Nothing was sent: the target's address (its IP literal, or every address its name
    /// resolved to) is loopback, private, link-local or another range deliveries may not
    /// reach (`serve --allow-private-targets` lifts it). Not retried.
    #[serde(rename = "forbidden_address")]
    ForbiddenAddress,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 6] = [
        Self::Http4xx,
        Self::Http5xx,
        Self::Timeout,
        Self::Connect,
        Self::Tls,
        Self::ForbiddenAddress,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http4xx => "http_4xx",
            Self::Http5xx => "http_5xx",
            Self::Timeout => "timeout",
            Self::Connect => "connect",
            Self::Tls => "tls",
            Self::ForbiddenAddress => "forbidden_address",
        }
    }

    /// Whether a failure of this class is retried on the schedule; `false` for one that no
    /// retry can cure (the delivery is dead at once).
    pub fn is_retried(self) -> bool {
        !matches!(self, Self::ForbiddenAddress)
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stretch of the path an attempt covered. Each hop has its own attempt budget and
/// retry schedule; a hop never re-drives what the next hop accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Hop {
    /// The control plane sent the webhook itself (`sync` and `async_inline` flows).
    #[default]
    ControlPlaneWebhook,
    /// The control plane offered the attempt to the flow's edge plane (`async_relay`); it
    /// fails when no edge plane takes it within the pickup timeout.
    ControlPlaneEdge,
    /// The edge plane sent the webhook (`async_relay`).
    EdgeWebhook,
}

impl Hop {
    pub const ALL: [Hop; 3] = [
        Self::ControlPlaneWebhook,
        Self::ControlPlaneEdge,
        Self::EdgeWebhook,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ControlPlaneWebhook => "control_plane_webhook",
            Self::ControlPlaneEdge => "control_plane_edge",
            Self::EdgeWebhook => "edge_webhook",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|h| h.as_str() == text)
    }
}

/// The result of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    InFlight,
    Succeeded,
    Failed,
}

/// One attempt of a delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attempt {
    /// `att_…`; sent as `switchyard-attempt-id`.
    pub id: String,
    /// 1-based, across the delivery's hops.
    pub number: u32,
    /// The hop this attempt covered (servers before per-hop budgets omit it).
    #[serde(default)]
    pub hop: Hop,
    /// 1-based within its hop (of `max_attempts`); sent to the receiver as
    /// `switchyard-attempt`. 0 from servers before per-hop budgets.
    #[serde(default)]
    pub hop_attempt: u32,
    pub started_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    pub outcome: AttemptOutcome,
    /// The receiver's HTTP status, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    /// A short human-readable reason (never contains secrets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `control-plane` or `edge:<name>`.
    pub performed_by: String,
}

/// One delivery of an event to one target through one flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Delivery {
    /// `dlv_…`.
    pub id: String,
    pub event_id: String,
    pub event_type: String,
    pub endpoint: String,
    pub flow: String,
    pub target: String,
    pub mode: FlowMode,
    /// The edge plane delivering an `async_relay` delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge: Option<String>,
    pub state: DeliveryState,
    /// Attempts started so far, over all hops.
    pub attempts_made: u32,
    /// The attempt budget of each hop (5 under the default policy): an `async_relay`
    /// delivery may use it once from the control plane to the edge plane and once from the
    /// edge plane to the webhook.
    pub max_attempts: u32,
    /// When the next attempt is planned (`pending` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When it entered the DLQ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_at: Option<DateTime<Utc>>,
    /// The hop whose attempt budget ran out (set when it entered the DLQ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exhausted_hop: Option<Hop>,
    /// The error class of the last failed attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status_code: Option<u16>,
    /// The replay session that created this delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_session: Option<String>,
    /// The dead delivery this one replays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
    /// The delivery that replayed this one (state `replayed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed_by: Option<String>,
    /// Full attempt history, oldest first.
    #[serde(default)]
    pub attempts: Vec<Attempt>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_classes_round_trip_and_only_a_forbidden_address_is_not_retried() {
        for class in ErrorClass::ALL {
            let json = serde_json::to_string(&class).unwrap();
            assert_eq!(json, format!("\"{}\"", class.as_str()));
            assert_eq!(ErrorClass::parse(class.as_str()), Some(class));
            assert_eq!(class.is_retried(), class != ErrorClass::ForbiddenAddress);
        }
        assert_eq!(
            ErrorClass::parse("forbidden_address"),
            Some(ErrorClass::ForbiddenAddress)
        );
    }
}
