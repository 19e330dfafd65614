//! IPC types of the DLQ explorer and replay sessions, and their conversions from the core's
//! (wire) types. Times are Unix milliseconds (UTC).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use switchyard_core::protocol_dlq::DlqGroupBy;
use switchyard_core::protocol_dlq::{DlqEntry, DlqFilter, DlqStats};
use switchyard_core::protocol_events::{
    Attempt, AttemptOutcome, Delivery, DeliveryState, ErrorClass, Event, EventList, Hop,
};
use switchyard_core::protocol_replay::{
    ReplayItem, ReplayItemStatus, ReplaySelection, ReplaySession, ReplayStatus,
};
use switchyard_core::{ReplayAction, ReplayOp, ReplayOpState};
use switchyard_protocol::FlowMode;
use ts_rs::TS;

use super::convert::ms;
use super::types::{IpcError, IpcErrorCode};

/// Which dead deliveries (every field narrows; absent = all).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct DlqFilterInput {
    pub endpoint: Option<String>,
    pub target: Option<String>,
    pub flow: Option<String>,
    pub error_class: Option<ErrorClass>,
    /// Dead at or after (ms).
    pub since: Option<i64>,
    /// Dead before (ms).
    pub until: Option<i64>,
}

impl DlqFilterInput {
    pub fn to_core(&self) -> DlqFilter {
        let at = |ms: Option<i64>| ms.and_then(DateTime::<Utc>::from_timestamp_millis);
        DlqFilter {
            endpoint: self.endpoint.clone().filter(|s| !s.is_empty()),
            target: self.target.clone().filter(|s| !s.is_empty()),
            flow: self.flow.clone().filter(|s| !s.is_empty()),
            error_class: self.error_class,
            since: at(self.since),
            until: at(self.until),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct DlqEntryView {
    pub delivery_id: String,
    pub event_id: String,
    pub event_type: String,
    pub endpoint: String,
    pub flow: String,
    pub target: String,
    pub error_class: ErrorClass,
    pub last_status_code: Option<u16>,
    pub attempts: u32,
    pub dead_at: i64,
    /// The hop whose attempt budget ran out (absent from servers before per-hop budgets).
    #[ts(optional = nullable)]
    pub exhausted_hop: Option<Hop>,
    /// Set when this delivery was itself a replay that died again.
    pub replay_session: Option<String>,
}

impl From<DlqEntry> for DlqEntryView {
    fn from(e: DlqEntry) -> Self {
        Self {
            dead_at: ms(&e.dead_at),
            delivery_id: e.delivery_id,
            event_id: e.event_id,
            event_type: e.event_type,
            endpoint: e.endpoint,
            flow: e.flow,
            target: e.target,
            error_class: e.error_class,
            last_status_code: e.last_status_code,
            attempts: e.attempts,
            exhausted_hop: e.exhausted_hop,
            replay_session: e.replay_session,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct DlqPageView {
    pub items: Vec<DlqEntryView>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct DlqGroupView {
    /// Target name, error class, or the hour's start (RFC 3339).
    pub key: String,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct DlqStatsView {
    pub total: u64,
    pub groups: Vec<DlqGroupView>,
}

impl From<DlqStats> for DlqStatsView {
    fn from(s: DlqStats) -> Self {
        Self {
            total: s.total,
            groups: s
                .groups
                .into_iter()
                .map(|g| DlqGroupView {
                    key: g.key,
                    count: g.count,
                })
                .collect(),
        }
    }
}

/// `dlq_stats` answers groups of one dimension; asked for the error class × target matrix it
/// would have only its total to show, so it says where the matrix is instead.
pub fn one_dimension(group_by: DlqGroupBy) -> Result<(), IpcError> {
    match group_by {
        DlqGroupBy::ErrorClassTarget => Err(IpcError::new(
            IpcErrorCode::InvalidInput,
            "group_by: error_class,target is the by-cause matrix: ask dlq_causes for it",
        )),
        _ => Ok(()),
    }
}

/// One cell of the "by cause" view: error class × target.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct DlqCauseView {
    pub error_class: String,
    pub target: String,
    pub count: u64,
}

impl From<switchyard_core::DlqCause> for DlqCauseView {
    fn from(c: switchyard_core::DlqCause) -> Self {
        Self {
            error_class: c.error_class,
            target: c.target,
            count: c.count,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct AttemptView {
    pub id: String,
    /// 1-based, over the delivery's hops.
    pub number: u32,
    pub hop: Hop,
    /// 1-based within its hop.
    pub hop_attempt: u32,
    pub started_at: i64,
    pub duration_ms: Option<u64>,
    pub outcome: AttemptOutcome,
    pub status_code: Option<u16>,
    pub error_class: Option<ErrorClass>,
    pub error: Option<String>,
    pub performed_by: String,
}

impl From<Attempt> for AttemptView {
    fn from(a: Attempt) -> Self {
        Self {
            outcome: a.outcome,
            started_at: ms(&a.started_at),
            id: a.id,
            number: a.number,
            hop: a.hop,
            hop_attempt: a.hop_attempt,
            duration_ms: a.duration_ms,
            status_code: a.status_code,
            error_class: a.error_class,
            error: a.error,
            performed_by: a.performed_by,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct DeliveryView {
    pub id: String,
    pub event_id: String,
    pub event_type: String,
    pub endpoint: String,
    pub flow: String,
    pub target: String,
    pub mode: FlowMode,
    pub state: DeliveryState,
    pub attempts_made: u32,
    pub max_attempts: u32,
    pub next_attempt_at: Option<i64>,
    pub created_at: i64,
    pub dead_at: Option<i64>,
    /// The hop whose attempt budget ran out (dead deliveries).
    pub exhausted_hop: Option<Hop>,
    pub error_class: Option<ErrorClass>,
    pub last_status_code: Option<u16>,
    pub replay_session: Option<String>,
    pub replay_of: Option<String>,
    pub replayed_by: Option<String>,
    pub attempts: Vec<AttemptView>,
}

impl From<Delivery> for DeliveryView {
    fn from(d: Delivery) -> Self {
        Self {
            mode: d.mode,
            state: d.state,
            next_attempt_at: d.next_attempt_at.as_ref().map(ms),
            created_at: ms(&d.created_at),
            dead_at: d.dead_at.as_ref().map(ms),
            exhausted_hop: d.exhausted_hop,
            id: d.id,
            event_id: d.event_id,
            event_type: d.event_type,
            endpoint: d.endpoint,
            flow: d.flow,
            target: d.target,
            attempts_made: d.attempts_made,
            max_attempts: d.max_attempts,
            error_class: d.error_class,
            last_status_code: d.last_status_code,
            replay_session: d.replay_session,
            replay_of: d.replay_of,
            replayed_by: d.replayed_by,
            attempts: d.attempts.into_iter().map(Into::into).collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct EventView {
    pub id: String,
    pub endpoint: String,
    pub event_type: String,
    pub event_key: Option<String>,
    pub payload: Value,
    pub created_at: i64,
    pub deliveries: Vec<DeliveryView>,
}

impl From<Event> for EventView {
    fn from(e: Event) -> Self {
        Self {
            created_at: ms(&e.created_at),
            id: e.id,
            endpoint: e.endpoint,
            event_type: e.event_type,
            event_key: e.event_key,
            payload: e.payload,
            deliveries: e.deliveries.into_iter().map(Into::into).collect(),
        }
    }
}

/// The events found by an event key (newest first), each with its deliveries.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct EventListView {
    pub items: Vec<EventView>,
    /// More events have this key than were returned (narrow by endpoint).
    pub more: bool,
}

impl From<EventList> for EventListView {
    fn from(l: EventList) -> Self {
        Self {
            items: l.items.into_iter().map(Into::into).collect(),
            more: l.more,
        }
    }
}

/// What a replay takes: these deliveries, or everything in the DLQ matching the filter.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum ReplaySelectionInput {
    Ids { delivery_ids: Vec<String> },
    Filter { filter: DlqFilterInput },
}

impl ReplaySelectionInput {
    pub fn to_core(&self) -> ReplaySelection {
        match self {
            Self::Ids { delivery_ids } => ReplaySelection::DeliveryIds(delivery_ids.clone()),
            Self::Filter { filter } => ReplaySelection::Filter(filter.to_core()),
        }
    }
}

/// Starting a replay. `session_id` comes from `new_replay_id` when the dialog opens, so a
/// second click sends the same id and lands on the same session.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ReplayStartInput {
    pub session_id: String,
    pub selection: ReplaySelectionInput,
    pub rate_per_s: Option<f64>,
}

/// Where a replay write stands: saved locally → sent → confirmed, or needs attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReplayWriteState {
    SavedLocally,
    Sent,
    Confirmed,
    NeedsAttention,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ReplayWriteView {
    pub id: i64,
    pub action: ReplayAction,
    pub session_id: String,
    pub state: ReplayWriteState,
    pub attempts: u32,
    pub error: Option<String>,
    pub created_at: i64,
    /// Who queued it: a person at the console, or an agent over MCP.
    pub origin: switchyard_core::Origin,
}

impl ReplayWriteState {
    /// A row of the core's replay outbox, in the badge's words: pending and never handed to
    /// the server is "saved locally"; pending after (or while) a send is "sent".
    pub fn of(state: ReplayOpState, attempts: u32) -> Self {
        match state {
            ReplayOpState::Done => Self::Confirmed,
            ReplayOpState::NeedsAttention => Self::NeedsAttention,
            ReplayOpState::Pending if attempts > 0 => Self::Sent,
            ReplayOpState::Pending => Self::SavedLocally,
        }
    }
}

impl From<ReplayOp> for ReplayWriteView {
    fn from(op: ReplayOp) -> Self {
        let state = ReplayWriteState::of(op.state, op.attempts);
        Self {
            id: op.id,
            action: op.action,
            session_id: op.session_id,
            state,
            attempts: op.attempts,
            error: op.last_error.map(|e| e.message),
            created_at: op.created_at,
            origin: op.origin,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct ReplayCountsView {
    pub total: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub pending: u64,
    pub cancelled: u64,
    pub skipped: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ReplayItemView {
    pub original_delivery_id: String,
    pub delivery_id: Option<String>,
    pub status: ReplayItemStatus,
    pub reason: Option<String>,
    /// Where the re-delivery stands (pending and failed items, the first ones only).
    pub redelivery: Option<RedeliveryView>,
}

/// A re-delivery's progress through its own retry schedule, and its last answer.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RedeliveryView {
    pub target: String,
    pub attempts_made: u32,
    pub max_attempts: u32,
    pub next_attempt_at: Option<i64>,
    pub error_class: Option<ErrorClass>,
    pub last_status_code: Option<u16>,
}

impl From<&Delivery> for RedeliveryView {
    fn from(d: &Delivery) -> Self {
        Self {
            target: d.target.clone(),
            attempts_made: d.attempts_made,
            max_attempts: d.max_attempts,
            next_attempt_at: d.next_attempt_at.as_ref().map(ms),
            error_class: d.error_class,
            last_status_code: d.last_status_code,
        }
    }
}

impl From<ReplayItem> for ReplayItemView {
    fn from(i: ReplayItem) -> Self {
        Self {
            status: i.status,
            original_delivery_id: i.original_delivery_id,
            delivery_id: i.delivery_id,
            reason: i.reason,
            redelivery: None,
        }
    }
}

impl ReplaySessionView {
    /// The session with the re-deliveries that were read attached to their items.
    pub fn with_redeliveries(session: ReplaySession, redeliveries: &[Delivery]) -> Self {
        let mut view = Self::from(session);
        for item in &mut view.items {
            item.redelivery = item
                .delivery_id
                .as_deref()
                .and_then(|id| redeliveries.iter().find(|d| d.id == id))
                .map(Into::into);
        }
        view
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ReplaySessionView {
    pub id: String,
    pub status: ReplayStatus,
    /// The selection in words (`3 deliveries`, `target=crm error_class=http_5xx`).
    pub selection: String,
    pub rate_per_s: Option<f64>,
    pub created_at: i64,
    pub cancelled_at: Option<i64>,
    pub counts: ReplayCountsView,
    pub items: Vec<ReplayItemView>,
}

impl From<ReplaySession> for ReplaySessionView {
    fn from(s: ReplaySession) -> Self {
        let selection = match &s.selection {
            ReplaySelection::DeliveryIds(ids) => format!("{} selected deliveries", ids.len()),
            ReplaySelection::Filter(f) => {
                let v = serde_json::to_value(f).unwrap_or_default();
                let parts: Vec<String> = v
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                            .collect()
                    })
                    .unwrap_or_default();
                if parts.is_empty() {
                    "the whole DLQ".into()
                } else {
                    parts.join(" ")
                }
            }
        };
        let c = s.counts;
        Self {
            status: s.status,
            selection,
            rate_per_s: s.rate_per_s,
            created_at: ms(&s.created_at),
            cancelled_at: s.cancelled_at.as_ref().map(ms),
            counts: ReplayCountsView {
                total: c.total,
                succeeded: c.succeeded,
                failed: c.failed,
                pending: c.pending,
                cancelled: c.cancelled,
                skipped: c.skipped,
            },
            items: s
                .items
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            id: s.id,
        }
    }
}

/// The server's schedule entries (`0s`, `10s`, `1m`, `1h`, `50ms`) in ms; an entry that is not
/// a duration is left out.
pub fn schedule_ms(entries: &[String]) -> Vec<u64> {
    entries
        .iter()
        .filter_map(|e| switchyard_core::parse_duration(e).ok())
        .map(|d| d.as_millis() as u64)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn schedule_entries_parse() {
        let s = ["0s", "10s", "1m", "10m", "1h", "50ms"].map(String::from);
        assert_eq!(
            super::schedule_ms(&s),
            vec![0, 10_000, 60_000, 600_000, 3_600_000, 50]
        );
    }

    #[test]
    fn stats_refuse_the_matrix_and_name_where_it_is() {
        use super::DlqGroupBy::*;
        for one in [Target, ErrorClass, Hour] {
            assert!(super::one_dimension(one).is_ok());
        }
        let refused = super::one_dimension(ErrorClassTarget).unwrap_err();
        assert_eq!(refused.code, super::IpcErrorCode::InvalidInput);
        assert!(
            refused.message.contains("dlq_causes"),
            "{}",
            refused.message
        );
    }
}
