//! What is in the pipeline now, as `GET /metrics` reads it at scrape time (src/telemetry.rs)
//! and a tenant's delivery-health report does (src/metrics.rs): the DLQ's depth, the
//! deliveries pending and in flight, the replay sessions running. Every figure
//! comes from a trigger-maintained counter (`dlq_counts`) or a partial index, so a scrape
//! costs the size of the open work, never of the history.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::StoreError;

/// The gauges, for one tenant or summed over all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Dead deliveries (the DLQ), from `dlq_counts`.
    pub dlq_depth: u64,
    /// Deliveries waiting for their next attempt.
    pub pending: u64,
    /// Deliveries with an attempt under a lease right now.
    pub in_flight: u64,
    /// Replay sessions not cancelled with a re-delivery still pending or in flight.
    pub replays_running: u64,
}

/// What one tenant has in its pipeline now, for its delivery-health report
/// (`GET /v1/metrics/deliveries`).
#[derive(Debug, Clone, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct TenantGauges {
    pub pending: i64,
    pub in_flight: i64,
    /// `created_at` of the oldest pending delivery.
    pub oldest_pending_at: Option<i64>,
    pub dead: i64,
    pub replays_running: i64,
}

#[async_trait]
pub trait GaugeStore {
    /// One tenant's pending (with the oldest), in flight, dead and running replays now (from
    /// the open deliveries' index and the DLQ's counters, never a scan of finished deliveries).
    async fn tenant_gauges(&self, tenant: &str) -> Result<TenantGauges, StoreError>;

    /// The gauges summed over every tenant.
    async fn gauges(&self) -> Result<Gauges, StoreError>;

    /// The gauges of each tenant that has anything to count (the others are absent).
    async fn gauges_by_tenant(&self) -> Result<BTreeMap<String, Gauges>, StoreError>;

    /// The tenant a delivery belongs to: what labels the final state of a delivery the
    /// reaper decided (an expired lease names no tenant) when tenant labels are on.
    async fn delivery_tenant(&self, delivery_id: &str) -> Result<Option<String>, StoreError>;
}

/// Folds `(tenant, figure, value)` rows, as both backends' per-tenant query returns them,
/// into gauges per tenant. `figure` is `dlq`, `pending`, `in_flight` or `replays`.
pub(crate) fn fold_by_tenant(rows: Vec<(String, String, i64)>) -> BTreeMap<String, Gauges> {
    let mut out: BTreeMap<String, Gauges> = BTreeMap::new();
    for (tenant, figure, value) in rows {
        let value = u64::try_from(value).unwrap_or(0);
        let gauges = out.entry(tenant).or_default();
        match figure.as_str() {
            "dlq" => gauges.dlq_depth += value,
            "pending" => gauges.pending += value,
            "in_flight" => gauges.in_flight += value,
            "replays" => gauges.replays_running += value,
            _ => {}
        }
    }
    out.retain(|_, g| *g != Gauges::default());
    out
}

pub(crate) fn from_totals((dlq, pending, in_flight, replays): (i64, i64, i64, i64)) -> Gauges {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Gauges {
        dlq_depth: n(dlq),
        pending: n(pending),
        in_flight: n(in_flight),
        replays_running: n(replays),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fold_into_gauges_per_tenant() {
        let row = |t: &str, f: &str, v: i64| (t.to_owned(), f.to_owned(), v);
        let folded = fold_by_tenant(vec![
            row("acme", "dlq", 3),
            row("acme", "pending", 2),
            row("acme", "in_flight", 1),
            row("acme", "replays", 1),
            row("other", "dlq", 0),
        ]);
        let acme = Gauges {
            dlq_depth: 3,
            pending: 2,
            in_flight: 1,
            replays_running: 1,
        };
        assert_eq!(folded.get("acme"), Some(&acme));
        assert!(!folded.contains_key("other"), "nothing to count: absent");
        assert_eq!(from_totals((3, 2, 1, -1)).replays_running, 0);
    }
}
