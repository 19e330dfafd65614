//! Typed rows of the retirement tables (the same columns on every backend) and their
//! conversion to the store's types.

use sqlx::FromRow;
use switchyard_protocol::{DlqDisposition, ResourceKind, RetirementState};

use crate::store::rows::json_from;
use crate::store::{RetirementRow, StoreError, Tombstone, corrupt};

pub(crate) const RETIREMENT_COLUMNS: &str = "id, fingerprint, kind, name, state, grace_seconds, cascade_flows, dlq, \
     blockers, impact, cascaded_flows, enabled_before, drain_eta, delete_at, created_at, updated_at";

#[derive(FromRow)]
pub(crate) struct RetirementRecord {
    id: String,
    fingerprint: Vec<u8>,
    kind: String,
    name: String,
    state: String,
    grace_seconds: i64,
    cascade_flows: i64,
    dlq: String,
    blockers: String,
    impact: String,
    cascaded_flows: String,
    enabled_before: Option<i64>,
    drain_eta: Option<i64>,
    delete_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

#[derive(FromRow)]
pub(crate) struct HistoryRecord {
    state: String,
    at: i64,
}

#[derive(FromRow)]
pub(crate) struct TombstoneRecord {
    kind: String,
    name: String,
    version: i64,
    deleted_at: i64,
    retirement_id: String,
}

pub(crate) fn kind_from(text: &str) -> Result<ResourceKind, StoreError> {
    ResourceKind::parse(text).ok_or_else(|| corrupt(format!("resource kind {text:?}")))
}

pub(crate) fn retirement_state_from(text: &str) -> Result<RetirementState, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| corrupt(format!("retirement state {text:?}")))
}

pub(crate) fn retirement_state_str(state: RetirementState) -> &'static str {
    match state {
        RetirementState::Blocked => "blocked",
        RetirementState::Draining => "draining",
        RetirementState::Disabled => "disabled",
        RetirementState::Scheduled => "scheduled",
        RetirementState::Deleted => "deleted",
        RetirementState::Cancelled => "cancelled",
    }
}

pub(crate) fn dlq_str(dlq: DlqDisposition) -> &'static str {
    match dlq {
        DlqDisposition::Keep => "keep",
        DlqDisposition::Purge => "purge",
    }
}

fn dlq_from(text: &str) -> Result<DlqDisposition, StoreError> {
    match text {
        "keep" => Ok(DlqDisposition::Keep),
        "purge" => Ok(DlqDisposition::Purge),
        other => Err(corrupt(format!("dlq disposition {other:?}"))),
    }
}

pub(crate) fn to_json(value: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(corrupt)
}

impl RetirementRecord {
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn into_row(self, history: Vec<HistoryRecord>) -> Result<RetirementRow, StoreError> {
        Ok(RetirementRow {
            kind: kind_from(&self.kind)?,
            state: retirement_state_from(&self.state)?,
            grace_seconds: u64::try_from(self.grace_seconds).map_err(corrupt)?,
            cascade_flows: self.cascade_flows != 0,
            dlq: dlq_from(&self.dlq)?,
            blockers: serde_json::from_value(json_from(&self.blockers)?).map_err(corrupt)?,
            impact: serde_json::from_value(json_from(&self.impact)?).map_err(corrupt)?,
            cascaded_flows: serde_json::from_value(json_from(&self.cascaded_flows)?)
                .map_err(corrupt)?,
            enabled_before: self.enabled_before.map(|v| v != 0),
            history: history
                .into_iter()
                .map(|h| Ok((retirement_state_from(&h.state)?, h.at)))
                .collect::<Result<_, StoreError>>()?,
            id: self.id,
            fingerprint: self.fingerprint,
            name: self.name,
            drain_eta: self.drain_eta,
            delete_at: self.delete_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

impl TombstoneRecord {
    pub(crate) fn into_tombstone(self) -> Result<Tombstone, StoreError> {
        Ok(Tombstone {
            kind: kind_from(&self.kind)?,
            name: self.name,
            version: self.version,
            deleted_at: self.deleted_at,
            retirement_id: self.retirement_id,
        })
    }
}
