//! Delivery health of a control plane: a thin command over the core.

use tauri::State;

use super::Result;
use crate::ipc::*;
use crate::state::AppState;

/// Attempts, success rate, latency and failure runs over `window`, grouped by `group_by`,
/// with the tenant's totals. Straight from the control plane (`Offline` when it does not
/// answer; `not_found` from a server without the metrics API).
#[tauri::command]
pub async fn delivery_metrics(
    state: State<'_, AppState>,
    profile: String,
    window: MetricsWindow,
    group_by: MetricsGroupBy,
) -> Result<DeliveryHealthView> {
    let metrics = state
        .core
        .delivery_metrics(&profile, window, group_by)
        .await?;
    Ok(metrics.into())
}
