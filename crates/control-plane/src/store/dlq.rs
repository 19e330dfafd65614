//! The DLQ: dead deliveries, newest first, and their counts.

use async_trait::async_trait;
use switchyard_protocol::{DlqEntry, DlqFilter, DlqGroupBy};

use super::StoreError;

/// One group of dead deliveries. Only the dimensions of the requested grouping are set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DlqCount {
    /// The stored error class (empty when none was recorded).
    pub error_class: Option<String>,
    pub target: Option<String>,
    /// The UTC hour the deliveries died in, as `dead_at / 3_600_000`.
    pub hour: Option<i64>,
    pub count: u64,
}

#[async_trait]
pub trait DlqStore {
    /// One DLQ page, newest first, after the `(dead_at, id)` position `after`.
    async fn dlq_page(
        &self,
        tenant: &str,
        filter: &DlqFilter,
        after: Option<(i64, String)>,
        limit: u32,
    ) -> Result<Vec<DlqEntry>, StoreError>;

    /// Counts of the tenant's dead deliveries matching `filter`, grouped by `group_by`.
    /// Exact, and equal to what listing with the same filter returns; groups with no
    /// deliveries are absent.
    async fn dlq_counts(
        &self,
        tenant: &str,
        filter: &DlqFilter,
        group_by: DlqGroupBy,
    ) -> Result<Vec<DlqCount>, StoreError>;
}
