//! Delivery health of a profile's control plane (`GET /v1/metrics/deliveries`): a read that
//! goes straight to the server and fails with `Offline` when it cannot be reached.

use switchyard_protocol::metrics::{DeliveryMetrics, MetricsGroupBy, MetricsWindow};

use crate::Console;
use crate::error::{CoreError, Result};

impl Console {
    /// Attempts, success rate, latency and failure runs over `window`, per target, endpoint
    /// or flow, with the tenant's totals (pending, in flight, DLQ depth, replays running).
    pub async fn delivery_metrics(
        &self,
        profile: &str,
        window: MetricsWindow,
        group_by: MetricsGroupBy,
    ) -> Result<DeliveryMetrics> {
        let path = format!(
            "/v1/metrics/deliveries?window={}&group_by={}",
            window.as_str(),
            group_by.as_str()
        );
        self.client(profile)
            .await?
            .get_json(&path)
            .await?
            .ok_or_else(|| CoreError::not_found("/v1/metrics/deliveries"))
    }
}
