//! Finished deliveries imported at once, with their events and attempts: the sandbox's day of
//! history (`demo_history`), so a first launch shows a living dashboard and DLQ. Every row
//! goes in as the live pipeline would have left it, and every attempt leaves `in_flight` in
//! the order it finished, so the triggers that keep the DLQ counters, the rollups and the
//! health rows (`migrations/*`) count it exactly as a live one.

use async_trait::async_trait;
use serde_json::Value;

use super::StoreError;

/// One past event and what became of its deliveries.
#[derive(Debug, Clone, PartialEq)]
pub struct PastEvent {
    pub id: String,
    pub endpoint: String,
    pub event_type: String,
    pub payload: Value,
    pub created_at: i64,
    pub deliveries: Vec<PastDelivery>,
}

/// A finished delivery: succeeded on its last attempt, or dead after every attempt failed.
#[derive(Debug, Clone, PartialEq)]
pub struct PastDelivery {
    pub id: String,
    pub flow: String,
    pub target: String,
    pub max_attempts: i64,
    pub attempts: Vec<PastAttempt>,
}

impl PastDelivery {
    /// Succeeded when its last attempt did; dead otherwise.
    pub fn succeeded(&self) -> bool {
        self.attempts.last().is_some_and(|a| a.succeeded)
    }

    /// When its last attempt finished.
    pub fn finished_at(&self) -> i64 {
        self.attempts.last().map_or(0, PastAttempt::finished_at)
    }
}

/// One attempt to the webhook (the control plane's own hop).
#[derive(Debug, Clone, PartialEq)]
pub struct PastAttempt {
    pub id: String,
    /// 1-based.
    pub number: i64,
    pub started_at: i64,
    pub duration_ms: i64,
    pub succeeded: bool,
    pub status_code: Option<i64>,
    /// `http_5xx`, `timeout`, … (failed attempts).
    pub error_class: Option<&'static str>,
    pub error: Option<String>,
}

impl PastAttempt {
    pub fn finished_at(&self) -> i64 {
        self.started_at + self.duration_ms
    }
}

/// Who the imported attempts name as their sender.
pub const HISTORY_WORKER: &str = "history";

#[async_trait]
pub trait HistoryStore: Send + Sync {
    /// Imports `events` into a tenant that has none yet (checked and written in one
    /// transaction, serialised against another replica doing the same); returns how many
    /// events went in (0 when the tenant already had events: nothing is imported twice).
    async fn import_history(&self, tenant: &str, events: &[PastEvent]) -> Result<u64, StoreError>;
}

/// The attempts of `events`, in the order they finished (ties by id): the order their
/// outcomes are recorded in, so the health rows end as the newest attempt left them.
pub fn attempts_in_finish_order(events: &[PastEvent]) -> Vec<&PastAttempt> {
    let mut all: Vec<&PastAttempt> = events
        .iter()
        .flat_map(|e| e.deliveries.iter().flat_map(|d| d.attempts.iter()))
        .collect();
    all.sort_by(|a, b| (a.finished_at(), &a.id).cmp(&(b.finished_at(), &b.id)));
    all
}
