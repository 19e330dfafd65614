//! Tool errors: what an agent reads when a call fails. Always a tool result with
//! `isError: true` (MCP clients show its text to the model), never a protocol error, with a
//! stable `code`, the argument at fault in `field`, and the server's problem when it sent one.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;
use switchyard_core::CoreError;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolError {
    /// Stable: `invalid_argument`, `request_key_reused`, `not_allowed`, `profile_read_only`,
    /// `not_found`, `offline`, `unauthorized`, `server_error`, `internal`.
    pub code: &'static str,
    /// The argument at fault (`spec.url`, `request_key`, …), when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
}

impl ToolError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: "invalid_argument",
            field: Some(field.into()),
            message: message.into(),
        }
    }

    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            field: None,
            message: message.into(),
        }
    }

    /// The result an agent sees: the error as JSON text (`{"error": {…}}`).
    pub fn into_result(self) -> CallToolResult {
        let text =
            serde_json::to_string(&serde_json::json!({ "error": self })).expect("error serializes");
        CallToolResult::error(vec![ContentBlock::text(text)])
    }
}

/// The longest stretch of a message echoed back: a message quoting an argument of
/// megabytes would fill the agent's context with it.
const ECHO_AT_MOST: usize = 400;

/// `text`, cut after [`ECHO_AT_MOST`] characters (and marked so).
pub fn clip(text: &str) -> String {
    match text.char_indices().nth(ECHO_AT_MOST) {
        None => text.to_owned(),
        Some((at, _)) => format!(
            "{}… ({} characters in all)",
            &text[..at],
            text.chars().count()
        ),
    }
}

/// An argument quoted in a message: at most 80 characters.
pub fn quoted(value: &str) -> String {
    match value.char_indices().nth(80) {
        None => format!("{value:?}"),
        Some((at, _)) => format!("{:?}… ({} characters)", &value[..at], value.chars().count()),
    }
}

/// The core names some fields in an operator's words; agents know the tool's argument names.
fn argument_name(core_field: &str) -> String {
    match core_field {
        "rate" => "rate_per_s".into(),
        "delivery ids" => "selection.delivery_ids".into(),
        "session id" => "id".into(),
        "event id" => "id".into(),
        "event key" => "key".into(),
        "idempotency_key" => "request_key".into(),
        other => other.replace(' ', "_"),
    }
}

impl From<CoreError> for ToolError {
    fn from(e: CoreError) -> Self {
        let message = e.to_string();
        match e {
            CoreError::Invalid { field, message } => {
                Self::invalid(argument_name(&field), clip(&message))
            }
            CoreError::KeyReused { .. } => Self {
                code: "request_key_reused",
                field: Some("request_key".into()),
                message: "this request_key already names a different change (other arguments or \
                          another tool); nothing was queued. Use a new request_key for a new change."
                    .into(),
            },
            CoreError::AgentsReadOnly { .. } => Self::new("profile_read_only", message),
            CoreError::NotFound { .. } => Self::new("not_found", clip(&message)),
            CoreError::Offline { .. } => Self::new("offline", message),
            CoreError::Unauthorized { .. } => Self::new("unauthorized", message),
            // The control plane named the argument at fault (a cursor it did not issue, a
            // filter value): the agent's mistake, not the server's.
            CoreError::Server {
                status: 400 | 422,
                problem: Some(p),
                ..
            } if p.field.is_some() => Self::invalid(
                argument_name(p.field.as_deref().unwrap_or_default()),
                clip(&message),
            ),
            CoreError::Server { .. } => Self::new("server_error", clip(&message)),
            _ => Self::new("internal", message),
        }
    }
}

/// Parses tool arguments into `T`, naming the argument at fault (`spec`, `selection.filter`,
/// …) when they do not fit.
pub fn parse_args<T: serde::de::DeserializeOwned>(
    arguments: Option<&serde_json::Map<String, Value>>,
) -> Result<T, ToolError> {
    let value = Value::Object(arguments.cloned().unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // A missing field is reported on its parent ("."), with the name in the message.
        let field = match missing_field(&inner) {
            Some(name) if path == "." => name.to_owned(),
            Some(name) => format!("{path}.{name}"),
            None if path == "." => "arguments".to_owned(),
            None => path,
        };
        let message = plain_message(&field, &inner);
        ToolError::invalid(field, message)
    })
}

/// serde's words for the mistakes agents make, in the tools' terms.
fn plain_message(field: &str, serde_message: &str) -> String {
    if field == "wait_seconds" || field.ends_with(".wait_seconds") {
        "must be a whole number of seconds, 0-120 (0 = queue and return)".to_owned()
    } else if serde_message.contains("expected map with a single key") {
        "give delivery_ids or filter, not both".to_owned()
    } else {
        clip(serde_message)
    }
}

fn missing_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next()
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        kind: String,
        inner: Inner,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        count: u32,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Waits {
        wait_seconds: Option<u32>,
        selection: Option<Selection>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Selection {
        DeliveryIds(Vec<String>),
        Filter(serde_json::Map<String, Value>),
    }

    #[test]
    fn messages_use_the_tools_words_not_serdes() {
        let e = parse_args::<Waits>(json!({"wait_seconds": -1}).as_object()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("wait_seconds"));
        assert!(e.message.contains("0-120"), "{}", e.message);
        let both = json!({"selection": {"delivery_ids": [], "filter": {}}});
        let e = parse_args::<Waits>(both.as_object()).unwrap_err();
        assert_eq!(e.message, "give delivery_ids or filter, not both");
    }

    fn field_of(v: Value) -> Option<String> {
        parse_args::<Args>(v.as_object()).unwrap_err().field
    }

    #[test]
    fn argument_errors_name_the_field() {
        assert_eq!(
            field_of(json!({"inner": {"count": 1}})),
            Some("kind".into())
        );
        assert_eq!(
            field_of(json!({"kind": "x", "inner": {"count": "many"}})),
            Some("inner.count".into())
        );
        assert_eq!(
            field_of(json!({"kind": "x", "inner": {}})),
            Some("inner.count".into())
        );
        assert_eq!(
            field_of(json!({"kind": "x", "inner": {"count": 1}, "extra": 1})),
            Some("extra".into())
        );
    }
}
