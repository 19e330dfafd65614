//! Typed rows of the SQLite schema and their conversion to wire types.

use serde_json::Value;
use sqlx::FromRow;
use switchyard_protocol::{
    Attempt, AttemptOutcome, Delivery, DeliveryState, ErrorClass, FlowMode, Hop,
};

use crate::clock::to_datetime;
use crate::store::{StoreError, corrupt};

pub fn mode_str(mode: FlowMode) -> &'static str {
    match mode {
        FlowMode::Sync => "sync",
        FlowMode::AsyncInline => "async_inline",
        FlowMode::AsyncRelay => "async_relay",
    }
}

pub fn mode_from_str(text: &str) -> Result<FlowMode, StoreError> {
    match text {
        "sync" => Ok(FlowMode::Sync),
        "async_inline" => Ok(FlowMode::AsyncInline),
        "async_relay" => Ok(FlowMode::AsyncRelay),
        other => Err(corrupt(format!("unknown mode {other:?}"))),
    }
}

pub fn class_from(text: Option<&str>) -> Result<Option<ErrorClass>, StoreError> {
    text.filter(|t| !t.is_empty())
        .map(|t| ErrorClass::parse(t).ok_or_else(|| corrupt(format!("error class {t:?}"))))
        .transpose()
}

pub fn state_from(text: &str) -> Result<DeliveryState, StoreError> {
    DeliveryState::parse(text).ok_or_else(|| corrupt(format!("delivery state {text:?}")))
}

pub fn hop_from(text: &str) -> Result<Hop, StoreError> {
    Hop::parse(text).ok_or_else(|| corrupt(format!("hop {text:?}")))
}

pub fn outcome_from(text: &str) -> Result<AttemptOutcome, StoreError> {
    match text {
        "in_flight" => Ok(AttemptOutcome::InFlight),
        "succeeded" => Ok(AttemptOutcome::Succeeded),
        "failed" => Ok(AttemptOutcome::Failed),
        other => Err(corrupt(format!("attempt outcome {other:?}"))),
    }
}

pub fn json_from(text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(corrupt)
}

pub fn count(n: i64) -> Result<u32, StoreError> {
    u32::try_from(n).map_err(corrupt)
}

pub fn status_code(n: Option<i64>) -> Option<u16> {
    n.and_then(|s| u16::try_from(s).ok())
}

pub const DELIVERY_COLUMNS: &str = "id, event_id, event_type, endpoint, flow, target, mode, edge, state, \
     attempts_made, max_attempts, next_attempt_at, created_at, updated_at, dead_at, error_class, last_status, \
     replay_session, replay_of, replayed_by, exhausted_hop";

#[derive(FromRow)]
pub struct DeliveryRow {
    id: String,
    event_id: String,
    event_type: String,
    endpoint: String,
    flow: String,
    target: String,
    mode: String,
    edge: Option<String>,
    state: String,
    attempts_made: i64,
    max_attempts: i64,
    next_attempt_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
    dead_at: Option<i64>,
    error_class: Option<String>,
    last_status: Option<i64>,
    replay_session: Option<String>,
    replay_of: Option<String>,
    replayed_by: Option<String>,
    exhausted_hop: Option<String>,
}

impl DeliveryRow {
    /// The delivery, without its attempts.
    pub fn into_wire(self) -> Result<Delivery, StoreError> {
        Ok(Delivery {
            mode: mode_from_str(&self.mode)?,
            state: state_from(&self.state)?,
            attempts_made: count(self.attempts_made)?,
            max_attempts: count(self.max_attempts)?,
            next_attempt_at: self.next_attempt_at.map(to_datetime),
            created_at: to_datetime(self.created_at),
            updated_at: to_datetime(self.updated_at),
            dead_at: self.dead_at.map(to_datetime),
            exhausted_hop: self.exhausted_hop.as_deref().map(hop_from).transpose()?,
            error_class: class_from(self.error_class.as_deref())?,
            last_status_code: status_code(self.last_status),
            id: self.id,
            event_id: self.event_id,
            event_type: self.event_type,
            endpoint: self.endpoint,
            flow: self.flow,
            target: self.target,
            edge: self.edge,
            replay_session: self.replay_session,
            replay_of: self.replay_of,
            replayed_by: self.replayed_by,
            attempts: Vec::new(),
        })
    }
}

pub const ATTEMPT_COLUMNS: &str = "id, number, hop, hop_number, started_at, duration_ms, outcome, \
     status_code, error_class, error, performed_by";

#[derive(FromRow)]
pub struct AttemptRow {
    id: String,
    number: i64,
    hop: String,
    hop_number: i64,
    started_at: i64,
    duration_ms: Option<i64>,
    outcome: String,
    status_code: Option<i64>,
    error_class: Option<String>,
    error: Option<String>,
    performed_by: String,
}

impl AttemptRow {
    pub fn into_wire(self) -> Result<Attempt, StoreError> {
        Ok(Attempt {
            number: count(self.number)?,
            hop: hop_from(&self.hop)?,
            hop_attempt: count(self.hop_number)?,
            started_at: to_datetime(self.started_at),
            duration_ms: self.duration_ms.and_then(|d| u64::try_from(d).ok()),
            outcome: outcome_from(&self.outcome)?,
            status_code: status_code(self.status_code),
            error_class: class_from(self.error_class.as_deref())?,
            id: self.id,
            error: self.error,
            performed_by: self.performed_by,
        })
    }
}
