//! Endpoints, targets and flows.

use async_trait::async_trait;
use serde_json::Value;
use switchyard_protocol::{FlowSpec, ResourceKind};

use super::StoreError;

/// A resource as stored. Times are unix milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRow {
    pub kind: ResourceKind,
    pub name: String,
    pub version: i64,
    pub spec: Value,
    pub status: Value,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Reads outside any unit of work.
#[async_trait]
pub trait ResourceStore {
    async fn get_resource(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError>;

    /// Resources of one kind ordered by name, starting after `after`.
    async fn list_resources(
        &self,
        tenant: &str,
        kind: ResourceKind,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ResourceRow>, StoreError>;

    /// The flows of `endpoint` that route events (not disabled by a retirement), by name,
    /// with their specs.
    async fn flows_of_endpoint(
        &self,
        tenant: &str,
        endpoint: &str,
    ) -> Result<Vec<(String, FlowSpec)>, StoreError>;
}

/// Writes inside the idempotency pipeline's unit of work.
#[async_trait]
pub trait ResourceTx {
    /// Reads a resource for a change: a backend with several writers locks the row until
    /// the unit of work ends, so the version check of the update cannot lose a race.
    async fn get_resource(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError>;

    /// Inserts a new resource; `false` when the name is taken.
    async fn insert_resource(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
    ) -> Result<bool, StoreError>;

    /// Replaces a resource if it is still at `expected_version`; `false` otherwise.
    async fn update_resource(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
        expected_version: i64,
    ) -> Result<bool, StoreError>;

    async fn delete_resource(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<bool, StoreError>;

    /// Names of flows that reference the endpoint or target `name`, at most `limit`.
    async fn flows_referencing(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
        limit: u32,
    ) -> Result<Vec<String>, StoreError>;
}
