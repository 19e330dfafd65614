//! Endpoints, targets and flows: representations, requests and validation.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

/// The three managed resource kinds. The plural is the path segment (`/v1/endpoints`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "sqlx", derive(sqlx::Type))]
#[cfg_attr(feature = "sqlx", sqlx(type_name = "TEXT", rename_all = "snake_case"))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ResourceKind {
    Endpoint,
    Target,
    Flow,
}

impl ResourceKind {
    pub const ALL: [ResourceKind; 3] = [Self::Endpoint, Self::Target, Self::Flow];

    /// Singular name, as in the representation's `kind` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Endpoint => "endpoint",
            Self::Target => "target",
            Self::Flow => "flow",
        }
    }

    /// Plural name, as in the URL path.
    pub fn plural(self) -> &'static str {
        match self {
            Self::Endpoint => "endpoints",
            Self::Target => "targets",
            Self::Flow => "flows",
        }
    }

    /// Accepts the singular or the plural form.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == text || k.plural() == text)
    }

    /// Checks a spec of this kind; returns it in canonical form (defaults filled in), or the
    /// first field it gets wrong.
    pub fn validate_spec(self, spec: &Value) -> Result<Value, FieldError> {
        self.spec_problems(spec)
            .map_err(|mut all| all.swap_remove(0))
    }

    /// Like `validate_spec`, naming every field the rules refuse (a GitOps plan lists them
    /// all). A spec that does not have the type's shape (a wrong type, an unknown field) is
    /// one problem: its other fields cannot be read.
    pub fn spec_problems(self, spec: &Value) -> Result<Value, Vec<FieldError>> {
        match self {
            Self::Endpoint => canonical::<EndpointSpec>(spec),
            Self::Target => canonical::<TargetSpec>(spec),
            Self::Flow => canonical::<FlowSpec>(spec),
        }
    }
}

impl std::fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn canonical<S: Spec>(spec: &Value) -> Result<Value, Vec<FieldError>> {
    if !spec.is_object() {
        return Err(vec![FieldError::new("spec", "must be a JSON object")]);
    }
    let typed: S = serde_json::from_value(spec.clone())
        .map_err(|e| vec![FieldError::new("spec", e.to_string())])?;
    let problems = typed.problems();
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(serde_json::to_value(&typed).expect("specs serialize"))
}

/// A field that failed validation, named as a JSON path (`spec.url`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

/// A resource spec that can check itself beyond what its type says.
pub trait Spec: Serialize + DeserializeOwned {
    /// Every rule the spec breaks, one per field, in field order; empty when it is valid.
    fn problems(&self) -> Vec<FieldError>;

    /// The first rule the spec breaks.
    fn validate(&self) -> Result<(), FieldError> {
        self.problems().into_iter().next().map_or(Ok(()), Err)
    }
}

/// A managed resource as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource<S = Value, St = Value> {
    pub kind: ResourceKind,
    pub name: String,
    /// Starts at 1 and grows by 1 on every change; also the `ETag`.
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub spec: S,
    pub status: St,
}

/// One page of a list: pass `next_cursor` back as `cursor` for the next page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

/// `POST /v1/{kind}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateRequest {
    pub name: String,
    pub spec: Value,
}

/// `PATCH /v1/{kind}/{name}`: `spec` is a JSON merge patch (RFC 7396) of the spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateRequest {
    pub spec: Value,
}

/// `PUT /v1/{kind}/{name}`: the whole desired spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApplyRequest {
    pub spec: Value,
}

/// Most event types an endpoint or a flow lists.
pub const MAX_EVENT_TYPES: usize = 64;
/// What an endpoint's or a flow's event type may be (`*` is a wildcard), as the OpenAPI
/// document states it.
pub const EVENT_TYPE_FILTER_PATTERN: &str = "^[A-Za-z0-9._:*-]{1,128}$";
/// The longest endpoint description, in characters.
pub const DESCRIPTION_MAX_CHARS: usize = 1024;
/// An endpoint description: no control characters (C0, DEL, C1), as the OpenAPI document
/// states it.
pub const DESCRIPTION_PATTERN: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";
/// A target's timeout, in milliseconds.
pub const TIMEOUT_MS_RANGE: std::ops::RangeInclusive<u32> = 1..=120_000;
/// Most extra headers a target sends.
pub const MAX_TARGET_HEADERS: usize = 32;
/// The longest extra header value, in bytes.
pub const HEADER_VALUE_MAX_BYTES: usize = 4096;
/// An extra header's name (an HTTP token), as the OpenAPI document states it; the reserved
/// names and prefixes are excluded besides.
pub const HEADER_NAME_PATTERN: &str = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/// An extra header's value, as the OpenAPI document states it (with the length).
pub const HEADER_VALUE_PATTERN: &str = "^[\\t -~]*$";

/// A free-text field may not hold control characters (C0 including NUL, tab and newline,
/// DEL, C1): a description is printed in tables and terminals, where an ESC sequence would
/// retitle or clear the reader's terminal or forge rows, and NUL truncates it in C tools.
fn control_problem(field: &str, text: &str) -> Option<FieldError> {
    let (at, c) = text.chars().enumerate().find(|(_, c)| c.is_control())?;
    Some(FieldError::new(
        field,
        format!(
            "must not contain control characters (U+{:04X} at character {})",
            u32::from(c),
            at + 1
        ),
    ))
}

fn event_type_problems(field: &str, types: &[String], out: &mut Vec<FieldError>) {
    if types.len() > MAX_EVENT_TYPES {
        out.push(FieldError::new(
            field,
            format!("at most {MAX_EVENT_TYPES} event types"),
        ));
        return;
    }
    for (i, t) in types.iter().enumerate() {
        let ok = !t.is_empty()
            && t.len() <= 128
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._:-*".contains(&b));
        if !ok {
            out.push(FieldError::new(
                format!("{field}[{i}]"),
                "must be 1-128 characters of letters, digits and . _ : - *",
            ));
        }
    }
}

/// Where events come in.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EndpointSpec {
    #[serde(default)]
    pub description: String,
    /// Event types this endpoint accepts; empty accepts any.
    #[serde(default)]
    pub event_types: Vec<String>,
}

impl Spec for EndpointSpec {
    fn problems(&self) -> Vec<FieldError> {
        let mut out = Vec::new();
        if self.description.chars().count() > DESCRIPTION_MAX_CHARS {
            out.push(FieldError::new(
                "spec.description",
                "must be at most 1024 characters",
            ));
        }
        out.extend(control_problem("spec.description", &self.description));
        event_type_problems("spec.event_types", &self.event_types, &mut out);
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EndpointStatus {
    pub enabled: bool,
    #[serde(default)]
    pub pending_deliveries: u64,
    /// The id of the retirement that holds the endpoint (it stays disabled until that
    /// retirement deletes it or is cancelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retirement: Option<String>,
}

/// A webhook destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// `http` or `https` URL that receives the webhook POSTs.
    pub url: String,
    /// How long one attempt may take before it counts as a `timeout`.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u32,
    /// Extra request headers sent with every delivery.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

fn default_timeout_ms() -> u32 {
    15_000
}

/// Headers the delivery pipeline sets itself; a target may not override them.
pub const RESERVED_HEADER_PREFIXES: [&str; 2] = ["webhook-", "switchyard-"];
pub const RESERVED_HEADERS: [&str; 5] = [
    "content-type",
    "content-length",
    "host",
    "transfer-encoding",
    "connection",
];

impl Spec for TargetSpec {
    fn problems(&self) -> Vec<FieldError> {
        let mut out = Vec::new();
        if let Err(e) = url_problem(&self.url) {
            out.push(e);
        }
        if !TIMEOUT_MS_RANGE.contains(&self.timeout_ms) {
            out.push(FieldError::new(
                "spec.timeout_ms",
                "must be between 1 and 120000",
            ));
        }
        if self.headers.len() > MAX_TARGET_HEADERS {
            out.push(FieldError::new("spec.headers", "at most 32 headers"));
        }
        out.extend(
            self.headers
                .iter()
                .filter_map(|(name, value)| header_problem(name, value)),
        );
        out
    }
}

fn url_problem(raw: &str) -> Result<(), FieldError> {
    let url = url::Url::parse(raw)
        .map_err(|e| FieldError::new("spec.url", format!("is not a valid URL: {e}")))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(FieldError::new("spec.url", "must use http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) || !names_authority(raw) {
        return Err(FieldError::new(
            "spec.url",
            "must name a host after the scheme's `//` (https://hooks.example.com/path)",
        ));
    }
    Ok(())
}

/// Whether the URL as written has a non-empty authority: `scheme://host…`. The WHATWG parser
/// reads `http:///nohost`, `http:/nohost`, `http:nohost` and `http:\\nohost` all as host
/// `nohost`, but other parsers (a receiver's proxy, an auditor's script) read an empty
/// authority there; only the spelling every parser agrees on is stored.
fn names_authority(raw: &str) -> bool {
    // The parser ignores leading and trailing spaces and control characters, and so does
    // this check (the scheme itself was read by the parser).
    let raw = raw.trim_matches(|c: char| c <= ' ');
    let Some((_, rest)) = raw.split_once(':') else {
        return false;
    };
    let Some(after) = rest.strip_prefix("//") else {
        return false;
    };
    let authority = after
        .split(['/', '\\', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    !host.is_empty() && !host.starts_with(':')
}

fn header_problem(name: &str, value: &str) -> Option<FieldError> {
    let field = format!("spec.headers.{name}");
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return Some(FieldError::new(field, "is not a valid header name"));
    }
    let lower = name.to_ascii_lowercase();
    if RESERVED_HEADERS.contains(&lower.as_str())
        || RESERVED_HEADER_PREFIXES
            .iter()
            .any(|p| lower.starts_with(p))
    {
        return Some(FieldError::new(
            field,
            "is set by Switchyard and cannot be overridden",
        ));
    }
    if value.len() > HEADER_VALUE_MAX_BYTES
        || !value
            .bytes()
            .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
    {
        return Some(FieldError::new(
            field,
            "value must be printable ASCII, at most 4096 bytes",
        ));
    }
    None
}

/// Signing secret metadata; the value itself is shown once, in `signing_secret` of the
/// target's creation or in the response of the rotation that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SigningSecretInfo {
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetStatus {
    pub signing_secrets: Vec<SigningSecretInfo>,
    /// The new secret's value (`whsec_…`), present only in the response that created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
    /// Present while a rotation's overlap is open: the older secrets still sign until
    /// `ends_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<crate::secrets::RotationStatus>,
    /// The target's client certificates (mTLS), oldest first; never a key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_certificates: Vec<crate::client_certs::ClientCertificateInfo>,
    /// The active client certificate's expiry, when the target has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_certificate: Option<crate::client_certs::CertificateExpiry>,
    /// The id of the retirement that holds the target (no new flow may name it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retirement: Option<String>,
}

/// Without the new secret's value: a `{:?}` in a log line or a failing assertion must not
/// print it.
impl std::fmt::Debug for TargetStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TargetStatus")
            .field("signing_secrets", &self.signing_secrets)
            .field(
                "signing_secret",
                &self.signing_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("rotation", &self.rotation)
            .field("client_certificates", &self.client_certificates)
            .field("client_certificate", &self.client_certificate)
            .field("retirement", &self.retirement)
            .finish()
    }
}

/// How a flow delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum FlowMode {
    /// The event submission waits for the first attempt and answers with its outcome.
    Sync,
    /// The control plane's own worker delivers.
    AsyncInline,
    /// An edge plane (named by `edge`) delivers.
    AsyncRelay,
}

/// A route from an endpoint to a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub endpoint: String,
    pub target: String,
    /// Event types routed; empty routes all.
    #[serde(default)]
    pub event_types: Vec<String>,
    #[serde(default = "default_mode")]
    pub mode: FlowMode,
    /// The edge plane that delivers an `async_relay` flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge: Option<String>,
}

fn default_mode() -> FlowMode {
    FlowMode::AsyncInline
}

impl Spec for FlowSpec {
    fn problems(&self) -> Vec<FieldError> {
        let mut out = Vec::new();
        let name = |field: &str, value: &str| {
            crate::validate_name(value)
                .err()
                .map(|e| FieldError::new(field, e.to_string()))
        };
        out.extend(name("spec.endpoint", &self.endpoint));
        out.extend(name("spec.target", &self.target));
        event_type_problems("spec.event_types", &self.event_types, &mut out);
        match (self.mode, &self.edge) {
            (FlowMode::AsyncRelay, None) => out.push(FieldError::new(
                "spec.edge",
                "is required when mode is async_relay",
            )),
            (FlowMode::AsyncRelay, Some(edge)) => out.extend(name("spec.edge", edge)),
            (_, Some(_)) => out.push(FieldError::new(
                "spec.edge",
                "is only allowed when mode is async_relay",
            )),
            (_, None) => {}
        }
        out
    }
}

impl FlowSpec {
    /// Whether this flow routes an event of `event_type`.
    pub fn matches(&self, event_type: &str) -> bool {
        self.event_types.is_empty() || self.event_types.iter().any(|t| t == event_type)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FlowStatus {
    /// `false` while a retirement holds the flow: it routes no new events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The id of the retirement that holds the flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retirement: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_target_status_prints_without_the_new_secret() {
        let status = TargetStatus {
            signing_secret: Some("whsec_abc".into()),
            ..TargetStatus::default()
        };
        let printed = format!("{status:?}");
        assert!(!printed.contains("whsec_abc"), "{printed}");
        assert!(printed.contains("<redacted>"), "{printed}");
    }

    #[test]
    fn canonical_spec_fills_defaults() {
        let spec = ResourceKind::Target
            .validate_spec(&json!({"url": "https://example.test/hook"}))
            .unwrap();
        assert_eq!(
            spec,
            json!({"url": "https://example.test/hook", "timeout_ms": 15000, "headers": {}})
        );
        let flow = ResourceKind::Flow
            .validate_spec(&json!({"endpoint": "a", "target": "b"}))
            .unwrap();
        assert_eq!(flow["mode"], "async_inline");
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (ResourceKind::Target, json!({"url": "ftp://x"}), "spec.url"),
            (
                ResourceKind::Target,
                json!({"url": "http://x", "timeout_ms": 0}),
                "spec.timeout_ms",
            ),
            (
                ResourceKind::Target,
                json!({"url": "http://x", "headers": {"Webhook-Id": "x"}}),
                "spec.headers.Webhook-Id",
            ),
            (
                ResourceKind::Target,
                json!({"url": "http://x", "bogus": 1}),
                "spec",
            ),
            (
                ResourceKind::Flow,
                json!({"endpoint": "A", "target": "b"}),
                "spec.endpoint",
            ),
            (
                ResourceKind::Flow,
                json!({"endpoint": "a", "target": "b", "mode": "async_relay"}),
                "spec.edge",
            ),
            (
                ResourceKind::Endpoint,
                json!({"event_types": ["ok", "no spaces"]}),
                "spec.event_types[1]",
            ),
            (ResourceKind::Endpoint, json!([]), "spec"),
        ];
        for (kind, spec, field) in cases {
            let err = kind.validate_spec(&spec).unwrap_err();
            assert_eq!(err.field, field, "{spec}: {err}");
        }
    }

    #[test]
    fn unknown_fields_are_named_in_the_message() {
        let err = ResourceKind::Endpoint
            .validate_spec(&json!({"descriptin": "x"}))
            .unwrap_err();
        assert!(err.message.contains("descriptin"), "{}", err.message);
    }
}
