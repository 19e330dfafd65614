//! Tool arguments. Their JSON Schemas (schemars) are the tools' `inputSchema`; unknown
//! arguments are refused (`deny_unknown_fields`) so a misspelt one never passes silently.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use switchyard_core::ResourceKind;
use switchyard_core::protocol_dlq::DlqFilter;

use crate::error::ToolError;

/// The default of `wait_seconds`, and its ceiling.
pub const DEFAULT_WAIT_SECONDS: u32 = 10;
pub const MAX_WAIT_SECONDS: u32 = 120;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Endpoint,
    Target,
    Flow,
}

impl From<Kind> for ResourceKind {
    fn from(k: Kind) -> Self {
        match k {
            Kind::Endpoint => ResourceKind::Endpoint,
            Kind::Target => ResourceKind::Target,
            Kind::Flow => ResourceKind::Flow,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListResourcesArgs {
    pub kind: Kind,
    /// Only names containing this text (case-insensitive).
    pub name_contains: Option<String>,
    /// At most this many (1-500, default 100), by name.
    pub limit: Option<u32>,
    /// Re-read every resource of the profile from the control plane into the local cache
    /// first (default false: answer from the cache, which works offline).
    pub refresh: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetResourceArgs {
    pub kind: Kind,
    pub name: String,
    /// Read it from the control plane now (and update the cache) instead of the cache.
    pub live: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutboxStatusArgs {
    /// One operation by id (as a write tool returned it).
    pub op_id: Option<i64>,
    /// The operation (or replay start) a write tool queued under this request key.
    pub request_key: Option<String>,
    /// Without op_id/request_key: at most this many live operations (1-200, default 50).
    pub limit: Option<u32>,
}

/// The DLQ filter, named like the control plane's query parameters.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterArgs {
    /// Only dead deliveries of this endpoint.
    pub endpoint: Option<String>,
    /// Only those to this target.
    pub target: Option<String>,
    /// Only those of this flow.
    pub flow: Option<String>,
    /// `http_4xx`, `http_5xx`, `timeout`, `connect`, `tls` or `forbidden_address`.
    pub error_class: Option<String>,
    /// Dead at or after this instant (RFC 3339).
    pub since: Option<String>,
    /// Dead strictly before this instant (RFC 3339).
    pub until: Option<String>,
}

impl FilterArgs {
    /// The protocol's filter; `prefix` names where the filter sits in the arguments.
    pub fn to_filter(&self, prefix: &str) -> Result<DlqFilter, ToolError> {
        let field = |name: &str| {
            if prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{prefix}.{name}")
            }
        };
        let time = |name: &str, v: &Option<String>| -> Result<Option<Value>, ToolError> {
            match v {
                None => Ok(None),
                Some(t) => chrono::DateTime::parse_from_rfc3339(t)
                    .map(|_| Some(Value::String(t.clone())))
                    .map_err(|e| {
                        ToolError::invalid(field(name), format!("{t:?} is not RFC 3339: {e}"))
                    }),
            }
        };
        let mut obj = serde_json::Map::new();
        for (name, v) in [
            ("endpoint", &self.endpoint),
            ("target", &self.target),
            ("flow", &self.flow),
        ] {
            if let Some(v) = v {
                check_name(&field(name), v)?;
                obj.insert(name.into(), Value::String(v.clone()));
            }
        }
        if let Some(class) = &self.error_class {
            obj.insert("error_class".into(), Value::String(class.clone()));
        }
        for (name, v) in [("since", &self.since), ("until", &self.until)] {
            if let Some(t) = time(name, v)? {
                obj.insert(name.into(), t);
            }
        }
        serde_json::from_value(Value::Object(obj)).map_err(|_| {
            ToolError::invalid(
                field("error_class"),
                "must be one of http_4xx, http_5xx, timeout, connect, tls, forbidden_address",
            )
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DlqListArgs {
    /// Only dead deliveries of this endpoint.
    pub endpoint: Option<String>,
    /// Only those to this target.
    pub target: Option<String>,
    /// Only those of this flow.
    pub flow: Option<String>,
    /// `http_4xx`, `http_5xx`, `timeout`, `connect`, `tls` or `forbidden_address`.
    pub error_class: Option<String>,
    /// Dead at or after this instant (RFC 3339).
    pub since: Option<String>,
    /// Dead strictly before this instant (RFC 3339).
    pub until: Option<String>,
    /// Page size, 1-500 (default 50).
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

impl DlqListArgs {
    pub fn filter(&self) -> FilterArgs {
        FilterArgs {
            endpoint: self.endpoint.clone(),
            target: self.target.clone(),
            flow: self.flow.clone(),
            error_class: self.error_class.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum GroupBy {
    #[serde(rename = "target")]
    Target,
    #[serde(rename = "error_class")]
    ErrorClass,
    #[serde(rename = "hour")]
    Hour,
    /// Counts per (error class, target) pair, largest first, in `rows`.
    #[serde(rename = "error_class,target")]
    ErrorClassTarget,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DlqStatsArgs {
    pub group_by: GroupBy,
    /// Only dead deliveries of this endpoint.
    pub endpoint: Option<String>,
    /// Only those to this target.
    pub target: Option<String>,
    /// Only those of this flow.
    pub flow: Option<String>,
    /// `http_4xx`, `http_5xx`, `timeout`, `connect`, `tls` or `forbidden_address`.
    pub error_class: Option<String>,
    /// Dead at or after this instant (RFC 3339).
    pub since: Option<String>,
    /// Dead strictly before this instant (RFC 3339).
    pub until: Option<String>,
}

impl DlqStatsArgs {
    pub fn filter(&self) -> FilterArgs {
        FilterArgs {
            endpoint: self.endpoint.clone(),
            target: self.target.clone(),
            flow: self.flow.clone(),
            error_class: self.error_class.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindEventArgs {
    /// The event's id (`evt_…`). Give `id` or `key`, not both.
    pub id: Option<String>,
    /// The event key it was submitted with; every event with that key, newest first.
    pub key: Option<String>,
    /// With `key`: only events on this endpoint.
    pub endpoint: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayStatusArgs {
    /// The replay session id. Give `id` or `request_key`, not both.
    pub id: Option<String>,
    /// The request key a `start_replay` call was made with.
    pub request_key: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// One key per change, the same on every retry (see the instructions).
    pub request_key: String,
    pub kind: Kind,
    pub name: String,
    /// The resource's spec (see the control plane's API for each kind).
    pub spec: Map<String, Value>,
    /// Seconds to wait for the control plane to confirm (0-120, default 10).
    #[schemars(range(max = 120))]
    pub wait_seconds: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// One key per change, the same on every retry (see the instructions).
    pub request_key: String,
    pub kind: Kind,
    pub name: String,
    /// A JSON merge patch (RFC 7396) of the spec: the fields to change; null removes one.
    pub patch: Map<String, Value>,
    /// Seconds to wait for the control plane to confirm (0-120, default 10).
    #[schemars(range(max = 120))]
    pub wait_seconds: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyArgs {
    /// One key per change, the same on every retry (see the instructions).
    pub request_key: String,
    pub kind: Kind,
    pub name: String,
    /// The whole desired spec: created if absent, replaced if present.
    pub spec: Map<String, Value>,
    /// Seconds to wait for the control plane to confirm (0-120, default 10).
    #[schemars(range(max = 120))]
    pub wait_seconds: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// One key per change, the same on every retry (see the instructions).
    pub request_key: String,
    pub kind: Kind,
    pub name: String,
    /// Seconds to wait for the control plane to confirm (0-120, default 10).
    #[schemars(range(max = 120))]
    pub wait_seconds: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointArgs {
    /// One key per change, the same on every retry (see the instructions).
    pub request_key: String,
    /// The endpoint's name.
    pub name: String,
    /// Seconds to wait for the control plane to confirm (0-120, default 10).
    #[schemars(range(max = 120))]
    pub wait_seconds: Option<u32>,
}

/// Which dead deliveries to replay: `{"delivery_ids": [...]}` or `{"filter": {...}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SelectionArgs {
    /// These dead deliveries (1-1000 ids, `dlv_…`).
    DeliveryIds(Vec<String>),
    /// Every dead delivery matching the filter when the session starts.
    Filter(FilterArgs),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartReplayArgs {
    /// One key per replay, the same on every retry: the session id is derived from it.
    pub request_key: String,
    pub selection: SelectionArgs,
    /// Only count what would be replayed: queues nothing and does not use the request key.
    pub dry_run: Option<bool>,
    /// At most this many re-deliveries start per second (default: no limit).
    pub rate_per_s: Option<f64>,
    /// Seconds to wait for the control plane to confirm (0-120, default 10).
    #[schemars(range(max = 120))]
    pub wait_seconds: Option<u32>,
}

/// `wait_seconds`, checked: 0-120, default 10.
pub fn wait_seconds(v: Option<u32>) -> Result<u32, ToolError> {
    match v {
        None => Ok(DEFAULT_WAIT_SECONDS),
        Some(s) if s <= MAX_WAIT_SECONDS => Ok(s),
        Some(_) => Err(ToolError::invalid(
            "wait_seconds",
            format!(
                "must be 0-{MAX_WAIT_SECONDS} (0 = queue and return; poll outbox_status after)"
            ),
        )),
    }
}

/// A resource name argument: the control plane's rule, checked here so a bad one is named
/// (a name of megabytes would otherwise fail as an unreachable URL).
pub fn check_name(field: &str, name: &str) -> Result<(), ToolError> {
    switchyard_protocol::validate_name(name).map_err(|e| {
        ToolError::invalid(
            field,
            format!(
                "{} {e} (a name is 1-63 of a-z, 0-9 and '-')",
                crate::error::quoted(name)
            ),
        )
    })
}
