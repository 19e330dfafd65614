//! Typed rows of the store's schema (the same columns on every backend: TEXT, BIGINT, BYTEA,
//! DOUBLE PRECISION / REAL) and their conversion to the store's and the wire's types.

use serde_json::Value;
use sqlx::FromRow;
use switchyard_protocol::{
    Attempt, AttemptOutcome, Delivery, DeliveryState, DlqEntry, ErrorClass, Event, FlowMode, Hop,
    ResourceKind, TargetSpec,
};

use crate::clock::to_datetime;
use crate::store::{
    Claimed, DlqCount, ExpiredLease, FinishedBy, KeyRecord, KeyState, RelayedAttemptRow,
    ReplayItemRow, ReplayRow, ResourceRow, StoreError, StoredResponse, corrupt,
};

pub(crate) fn mode_str(mode: FlowMode) -> &'static str {
    match mode {
        FlowMode::Sync => "sync",
        FlowMode::AsyncInline => "async_inline",
        FlowMode::AsyncRelay => "async_relay",
    }
}

pub(crate) fn mode_from_str(text: &str) -> Result<FlowMode, StoreError> {
    match text {
        "sync" => Ok(FlowMode::Sync),
        "async_inline" => Ok(FlowMode::AsyncInline),
        "async_relay" => Ok(FlowMode::AsyncRelay),
        other => Err(corrupt(format!("unknown mode {other:?}"))),
    }
}

pub(crate) fn class_from(text: Option<&str>) -> Result<Option<ErrorClass>, StoreError> {
    text.filter(|t| !t.is_empty())
        .map(|t| ErrorClass::parse(t).ok_or_else(|| corrupt(format!("error class {t:?}"))))
        .transpose()
}

pub(crate) fn state_from(text: &str) -> Result<DeliveryState, StoreError> {
    DeliveryState::parse(text).ok_or_else(|| corrupt(format!("delivery state {text:?}")))
}

pub(crate) fn hop_from(text: &str) -> Result<Hop, StoreError> {
    Hop::parse(text).ok_or_else(|| corrupt(format!("hop {text:?}")))
}

pub(crate) fn outcome_from(text: &str) -> Result<AttemptOutcome, StoreError> {
    match text {
        "in_flight" => Ok(AttemptOutcome::InFlight),
        "succeeded" => Ok(AttemptOutcome::Succeeded),
        "failed" => Ok(AttemptOutcome::Failed),
        other => Err(corrupt(format!("attempt outcome {other:?}"))),
    }
}

pub(crate) fn json_from(text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(corrupt)
}

/// Whether a resource's stored status leaves it enabled (an endpoint accepting events, a
/// flow routing them): only an explicit `"enabled": false` turns it off.
pub(crate) fn enabled(status: &str) -> Result<bool, StoreError> {
    Ok(json_from(status)?.get("enabled") != Some(&Value::Bool(false)))
}

pub(crate) fn count(n: i64) -> Result<u32, StoreError> {
    u32::try_from(n).map_err(corrupt)
}

pub(crate) fn status_code(n: Option<i64>) -> Option<u16> {
    n.and_then(|s| u16::try_from(s).ok())
}

pub(crate) const DELIVERY_COLUMNS: &str = "id, event_id, event_type, endpoint, flow, target, mode, edge, state, \
     attempts_made, max_attempts, next_attempt_at, created_at, updated_at, dead_at, error_class, last_status, \
     replay_session, replay_of, replayed_by, exhausted_hop";

#[derive(FromRow)]
pub(crate) struct DeliveryRow {
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
    pub(crate) fn into_wire(self) -> Result<Delivery, StoreError> {
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

pub(crate) const ATTEMPT_COLUMNS: &str = "id, number, hop, hop_number, started_at, duration_ms, outcome, \
     status_code, error_class, error, performed_by";

#[derive(FromRow)]
pub(crate) struct AttemptRow {
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
    pub(crate) fn into_wire(self) -> Result<Attempt, StoreError> {
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

/// What a claim needs to know about a delivery before it takes it.
#[derive(FromRow)]
pub(crate) struct CandidateRow {
    pub(crate) id: String,
    pub(crate) tenant: String,
    pub(crate) target: String,
    pub(crate) edge: Option<String>,
    pub(crate) event_id: String,
    pub(crate) event_type: String,
    pub(crate) max_attempts: i64,
    pub(crate) endpoint: String,
    pub(crate) event_created_at: i64,
    pub(crate) payload: String,
    pub(crate) target_spec: Option<String>,
}

#[derive(FromRow)]
pub(crate) struct ExpiredRow {
    pub(crate) id: String,
    pub(crate) lease_token: i64,
    pub(crate) current_attempt: String,
    pub(crate) lease_owner: Option<String>,
    pub(crate) hop: String,
    pub(crate) hop_number: i64,
    pub(crate) max_attempts: i64,
}

#[derive(FromRow)]
pub(crate) struct EntryRow {
    pub(crate) id: String,
    pub(crate) event_id: String,
    pub(crate) event_type: String,
    pub(crate) endpoint: String,
    pub(crate) flow: String,
    pub(crate) target: String,
    pub(crate) error_class: Option<String>,
    pub(crate) last_status: Option<i64>,
    pub(crate) attempts_made: i64,
    pub(crate) dead_at: i64,
    pub(crate) replay_session: Option<String>,
    pub(crate) exhausted_hop: Option<String>,
}

impl EntryRow {
    pub(crate) fn into_wire(self) -> Result<DlqEntry, StoreError> {
        Ok(DlqEntry {
            // A dead delivery without a recorded class reads as `connect`.
            error_class: class_from(self.error_class.as_deref())?.unwrap_or(ErrorClass::Connect),
            last_status_code: status_code(self.last_status),
            attempts: count(self.attempts_made)?,
            dead_at: to_datetime(self.dead_at),
            exhausted_hop: self.exhausted_hop.as_deref().map(hop_from).transpose()?,
            delivery_id: self.id,
            event_id: self.event_id,
            event_type: self.event_type,
            endpoint: self.endpoint,
            flow: self.flow,
            target: self.target,
            replay_session: self.replay_session,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct CountRow {
    pub(crate) error_class: Option<String>,
    pub(crate) target: Option<String>,
    pub(crate) hour: Option<i64>,
    pub(crate) n: i64,
}

#[derive(FromRow)]
pub(crate) struct RelayedRow {
    pub(crate) delivery_id: String,
    pub(crate) hop: String,
    pub(crate) hop_number: i64,
    pub(crate) max_attempts: i64,
    pub(crate) outcome: String,
    pub(crate) finished_by: Option<String>,
}

#[derive(FromRow)]
pub(crate) struct EventRow {
    pub(crate) id: String,
    pub(crate) endpoint: String,
    pub(crate) event_type: String,
    pub(crate) event_key: Option<String>,
    pub(crate) payload: String,
    pub(crate) created_at: i64,
}

#[derive(FromRow)]
pub(crate) struct KeyRow {
    pub(crate) fingerprint: Vec<u8>,
    pub(crate) state: String,
    pub(crate) attempt: i64,
    pub(crate) locked_until: i64,
    pub(crate) created_at: i64,
    pub(crate) response_status: Option<i64>,
    pub(crate) response_headers: Option<String>,
    pub(crate) response_body: Option<Vec<u8>>,
}

impl KeyRow {
    /// The record, its stored response opened with `sealer` (sealed for `scope`'s row).
    pub(crate) fn into_record(
        self,
        sealer: &crate::sealing::Sealer,
        scope: &super::KeyScope,
    ) -> Result<KeyRecord, StoreError> {
        let state = match self.state.as_str() {
            "in_progress" => KeyState::InProgress,
            "completed" => KeyState::Completed,
            other => return Err(corrupt(format!("unknown key state {other:?}"))),
        };
        let response = match self.response_status {
            None => None,
            Some(status) => Some(StoredResponse {
                status: u16::try_from(status).map_err(corrupt)?,
                headers: serde_json::from_str(self.response_headers.as_deref().unwrap_or("[]"))
                    .map_err(corrupt)?,
                body: match self.response_body {
                    None => Vec::new(),
                    Some(sealed) => sealer
                        .open(
                            &sealed,
                            &crate::sealing::response_aad(&scope.tenant, &scope.key),
                        )
                        .map_err(super::sealed_error)?,
                },
            }),
        };
        Ok(KeyRecord {
            fingerprint: self.fingerprint,
            state,
            attempt: self.attempt,
            locked_until: self.locked_until,
            created_at: self.created_at,
            response,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct SessionRow {
    pub(crate) id: String,
    pub(crate) request: String,
    pub(crate) rate_per_s: Option<f64>,
    pub(crate) created_at: i64,
    pub(crate) cancelled_at: Option<i64>,
}

#[derive(FromRow)]
pub(crate) struct ItemRow {
    pub(crate) original_id: String,
    pub(crate) delivery_id: Option<String>,
    pub(crate) skip_reason: Option<String>,
    pub(crate) state: Option<String>,
}

#[derive(FromRow)]
pub(crate) struct OriginalRow {
    pub(crate) event_id: String,
    pub(crate) event_type: String,
    pub(crate) endpoint: String,
    pub(crate) flow: String,
    pub(crate) target: String,
    pub(crate) mode: String,
    pub(crate) edge: Option<String>,
}

#[derive(FromRow)]
pub(crate) struct ResourceRecord {
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) version: i64,
    pub(crate) spec: String,
    pub(crate) status: String,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
}

impl ResourceRecord {
    pub(crate) fn into_resource(self) -> Result<ResourceRow, StoreError> {
        Ok(ResourceRow {
            kind: ResourceKind::parse(&self.kind)
                .ok_or_else(|| corrupt(format!("unknown kind {:?}", self.kind)))?,
            name: self.name,
            version: self.version,
            spec: json_from(&self.spec)?,
            status: json_from(&self.status)?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

impl CandidateRow {
    /// The target's spec (`None`: deleted since the delivery was created).
    pub(crate) fn target_spec(&self) -> Result<Option<TargetSpec>, StoreError> {
        self.target_spec
            .as_deref()
            .map(|s| serde_json::from_str(s).map_err(corrupt))
            .transpose()
    }

    /// The lease of an attempt claimed at `now`: the target's timeout plus the margin.
    pub(crate) fn lease_until(target: Option<&TargetSpec>, now: i64, lease_margin_ms: i64) -> i64 {
        now + i64::from(target.map_or(1_000, |t| t.timeout_ms)) + lease_margin_ms
    }

    /// The claimed attempt, from what the guarded update returned.
    pub(crate) fn into_claimed(
        self,
        target: Option<TargetSpec>,
        attempt: ClaimedNumbers,
        secrets: Vec<super::SigningKey>,
    ) -> Result<Claimed, StoreError> {
        let body = crate::delivery::webhook_body(
            &self.event_id,
            &self.event_type,
            &self.endpoint,
            self.event_created_at,
            &self.payload,
        );
        Ok(Claimed {
            tenant: self.tenant,
            delivery_id: self.id,
            attempt_id: attempt.attempt_id,
            number: count(attempt.made)?,
            hop: attempt.hop,
            hop_number: count(attempt.hop_made)?,
            max_attempts: count(self.max_attempts)?,
            lease_token: attempt.lease_token,
            lease_until: attempt.lease_until,
            event_id: self.event_id,
            target_name: self.target,
            target,
            secrets,
            body,
            edge: self.edge,
        })
    }
}

/// What a guarded claim assigned.
pub(crate) struct ClaimedNumbers {
    pub(crate) attempt_id: String,
    pub(crate) hop: Hop,
    pub(crate) made: i64,
    pub(crate) hop_made: i64,
    pub(crate) lease_token: i64,
    pub(crate) lease_until: i64,
}

impl ExpiredRow {
    pub(crate) fn into_lease(self) -> Result<ExpiredLease, StoreError> {
        Ok(ExpiredLease {
            delivery_id: self.id,
            attempt_id: self.current_attempt,
            lease_token: self.lease_token,
            owner: self.lease_owner,
            hop: hop_from(&self.hop)?,
            hop_number: count(self.hop_number)?,
            max_attempts: count(self.max_attempts)?,
        })
    }
}

impl RelayedRow {
    pub(crate) fn into_attempt(self) -> Result<RelayedAttemptRow, StoreError> {
        Ok(RelayedAttemptRow {
            delivery_id: self.delivery_id,
            hop: hop_from(&self.hop)?,
            hop_number: count(self.hop_number)?,
            max_attempts: count(self.max_attempts)?,
            outcome: outcome_from(&self.outcome)?,
            finished_by: self
                .finished_by
                .as_deref()
                .map(|f| FinishedBy::parse(f).ok_or_else(|| corrupt(format!("finished_by {f:?}"))))
                .transpose()?,
        })
    }
}

impl CountRow {
    pub(crate) fn into_count(self) -> DlqCount {
        DlqCount {
            error_class: self.error_class,
            target: self.target,
            hour: self.hour,
            count: u64::try_from(self.n).unwrap_or(0),
        }
    }
}

impl EventRow {
    pub(crate) fn into_event(self, deliveries: Vec<Delivery>) -> Result<Event, StoreError> {
        Ok(Event {
            payload: json_from(&self.payload)?,
            created_at: to_datetime(self.created_at),
            id: self.id,
            endpoint: self.endpoint,
            event_type: self.event_type,
            event_key: self.event_key,
            deliveries,
        })
    }
}

impl SessionRow {
    pub(crate) fn into_session(self, items: Vec<ItemRow>) -> Result<ReplayRow, StoreError> {
        Ok(ReplayRow {
            request: serde_json::from_str(&self.request).map_err(corrupt)?,
            id: self.id,
            rate_per_s: self.rate_per_s,
            created_at: self.created_at,
            cancelled_at: self.cancelled_at,
            items: items
                .into_iter()
                .map(|i| {
                    Ok(ReplayItemRow {
                        state: i.state.as_deref().map(state_from).transpose()?,
                        original_id: i.original_id,
                        delivery_id: i.delivery_id,
                        skip_reason: i.skip_reason,
                    })
                })
                .collect::<Result<_, StoreError>>()?,
        })
    }
}
