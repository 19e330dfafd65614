//! JSON-RPC checks shared by the stdio transport ([`crate::stdio`]) and the HTTP guard
//! ([`crate::http`]): what rmcp would drop in silence or answer with the wrong code gets the
//! answer JSON-RPC 2.0 prescribes. A line that is not UTF-8 or not JSON → -32700 with id
//! null (rmcp ignores it, so the client waits to its timeout); a known method with params of
//! the wrong shape (a `tools/call` without `name`, with array arguments) → -32602 (rmcp
//! parses it as a custom request and answers -32601, method not found); a request before
//! `initialize` → "initialize first" (rmcp's message speaks of a missing `_meta`).

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, GetMeta, ProtocolVersion, RequestId,
};
use serde_json::{Value, json};

/// A longer message (a stdio line, without its newline) is refused.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The requests a client may send that rmcp knows. One of these that parses only as a
/// custom request has params of the wrong shape.
const KNOWN_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
];

/// An error answer the server sends itself, without handing the message to rmcp.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The request's id, or null when it has none (or it could not be read).
    pub id: Value,
    pub code: ErrorCode,
    pub message: String,
}

impl Refusal {
    fn new(id: Value, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: message.into(),
        }
    }

    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(Value::Null, ErrorCode::PARSE_ERROR, message)
    }

    /// A message too long to read: its id is unknown.
    pub fn too_long(limit: usize) -> Self {
        const MIB: usize = 1024 * 1024;
        let size = if limit.is_multiple_of(MIB) {
            format!("{} MiB", limit / MIB)
        } else {
            format!("{limit} bytes")
        };
        Self::new(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            format!(
                "Invalid Request: the message is longer than {size} and was not read; send smaller messages"
            ),
        )
    }

    /// The JSON-RPC error response, as one JSON value.
    pub fn to_json(&self) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id,
               "error": {"code": self.code.0, "message": self.message}})
    }
}

/// What to do with one incoming message.
#[derive(Debug)]
pub enum Checked {
    Message(Box<ClientJsonRpcMessage>),
    /// A notification outside MCP (another protocol's, a client's own): ignored, as rmcp does.
    Ignore,
    Refuse(Refusal),
}

/// Reads one message (a stdio line without its newline, or an HTTP body).
pub fn check(bytes: &[u8]) -> Checked {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Checked::Refuse(Refusal::parse_error(format!(
                "Parse error: the message is not UTF-8 (byte {})",
                e.valid_up_to()
            )));
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Checked::Refuse(Refusal::parse_error(format!(
                "Parse error: the message is not JSON ({e})"
            )));
        }
    };
    let Value::Object(obj) = &value else {
        let why = if value.is_array() {
            "Invalid Request: batches (JSON arrays) are not supported; send one message at a time"
        } else {
            "Invalid Request: a JSON-RPC message is a JSON object"
        };
        return Checked::Refuse(Refusal::new(Value::Null, ErrorCode::INVALID_REQUEST, why));
    };
    let id = match obj.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let invalid = |message: String| {
        Checked::Refuse(Refusal::new(
            id.clone(),
            ErrorCode::INVALID_REQUEST,
            message,
        ))
    };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("Invalid Request: \"jsonrpc\" must be \"2.0\"".into());
    }
    let method = match obj.get("method") {
        None => None,
        Some(Value::String(m)) => Some(m.as_str()),
        Some(_) => return invalid("Invalid Request: \"method\" must be a string".into()),
    };
    if let (Some(method), true) = (method, obj.contains_key("id")) {
        if id.is_null() {
            return invalid("Invalid Request: \"id\" must be a string or a number".into());
        }
        if let Some(message) = params_problem(method, obj.get("params")) {
            return Checked::Refuse(Refusal::new(id, ErrorCode::INVALID_PARAMS, message));
        }
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(ClientJsonRpcMessage::Request(req))
            if matches!(req.request, ClientRequest::CustomRequest(_))
                && method.is_some_and(|m| KNOWN_REQUESTS.contains(&m)) =>
        {
            let method = method.unwrap_or_default();
            Checked::Refuse(Refusal::new(
                id,
                ErrorCode::INVALID_PARAMS,
                format!(
                    "Invalid params: the params of {method} do not have the shape MCP defines for it"
                ),
            ))
        }
        Ok(message) => Checked::Message(Box::new(message)),
        Err(_) if method.is_some() && !obj.contains_key("id") => Checked::Ignore,
        Err(_) => {
            invalid("Invalid Request: not a JSON-RPC 2.0 request, notification or response".into())
        }
    }
}

/// What is wrong with a known method's params, said plainly (serde's own messages name
/// its internals).
fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    match (method, params) {
        (_, None | Some(Value::Object(_))) if method != "tools/call" => None,
        (m, Some(Value::Null)) if m != "tools/call" => None,
        ("tools/call", Some(Value::Object(p))) => match (p.get("name"), p.get("arguments")) {
            (Some(Value::String(_)), None | Some(Value::Object(_) | Value::Null)) => None,
            (Some(Value::String(_)), Some(other)) => Some(format!(
                "Invalid params: tools/call params.arguments must be a JSON object of the tool's arguments by name, not {}",
                kind(other)
            )),
            (None, _) => {
                Some("Invalid params: tools/call needs params.name, the tool's name".into())
            }
            (Some(other), _) => Some(format!(
                "Invalid params: tools/call params.name must be a string, not {}",
                kind(other)
            )),
        },
        ("tools/call", _) => Some(
            "Invalid params: tools/call needs params, an object with name and arguments".into(),
        ),
        (m, Some(other)) if KNOWN_REQUESTS.contains(&m) => Some(format!(
            "Invalid params: the params of {m} must be a JSON object, not {}",
            kind(other)
        )),
        _ => None,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A request that may not come before `initialize`: anything but `initialize`, `ping` and
/// `server/discover`, unless it carries the inline metadata of the protocol revision
/// without a handshake (2026-07-28), which rmcp serves as it is.
pub fn before_initialize(message: &ClientJsonRpcMessage) -> Option<Refusal> {
    let ClientJsonRpcMessage::Request(req) = message else {
        return None;
    };
    if matches!(
        req.request,
        ClientRequest::InitializeRequest(_)
            | ClientRequest::PingRequest(_)
            | ClientRequest::DiscoverRequest(_)
    ) {
        return None;
    }
    let inline = req
        .request
        .get_meta()
        .missing_required_keys(&ProtocolVersion::V_2026_07_28)
        .is_empty();
    if inline {
        return None;
    }
    Some(Refusal::new(
        request_id(&req.id),
        ErrorCode::INVALID_REQUEST,
        format!(
            "initialize first: send an initialize request (then notifications/initialized) before {}",
            req.request.method()
        ),
    ))
}

fn request_id(id: &RequestId) -> Value {
    serde_json::to_value(id).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &str) -> Refusal {
        match check(line.as_bytes()) {
            Checked::Refuse(r) => r,
            other => panic!("{line}: not refused: {other:?}"),
        }
    }

    #[test]
    fn each_bad_message_gets_its_code_and_id() {
        let r = refused("not json");
        assert_eq!((r.code, r.id), (ErrorCode::PARSE_ERROR, Value::Null));
        let r = refused(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}"#);
        assert_eq!((r.code, r.id), (ErrorCode::INVALID_PARAMS, json!(4)));
        assert!(r.message.contains("params.name"), "{}", r.message);
        let r = refused(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
        );
        assert_eq!((r.code, r.id), (ErrorCode::INVALID_PARAMS, json!("a")));
        assert!(r.message.contains("not an array"), "{}", r.message);
        let r = refused(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(r.code, ErrorCode::INVALID_REQUEST);
        let r = refused(r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
        assert_eq!((r.code, r.id), (ErrorCode::INVALID_REQUEST, json!(9)));
    }

    #[test]
    fn good_messages_and_foreign_notifications_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ] {
            assert!(
                matches!(check(line.as_bytes()), Checked::Message(_)),
                "{line}"
            );
        }
        let foreign = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":[]}"#;
        assert!(!matches!(check(foreign.as_bytes()), Checked::Refuse(_)));
    }
}
