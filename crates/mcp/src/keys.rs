//! The MCP request key: what an agent sends with every write, and how it becomes the outbox
//! operation's Idempotency-Key (or a replay's session id), plus the arguments' fingerprint.
//!
//! The derived key depends only on (profile, request key), so every `switchyard mcp` process
//! on the data dir — and the same process after a restart — finds the operation an earlier
//! call queued. The fingerprint covers every argument that shapes the write; `wait_seconds`
//! is left out on purpose: it says how long this call waits, not what is written, so an agent
//! may retry a timed-out call with a longer wait and still get the original operation.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::ToolError;

/// Arguments that never count in the fingerprint (see the module docs).
const NOT_FINGERPRINTED: &[&str] = &["request_key", "wait_seconds"];

/// Checks a request key: 1–255 printable ASCII characters.
pub fn check_request_key(key: &str) -> Result<(), ToolError> {
    if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return Err(ToolError::invalid(
            "request_key",
            "must be 1-255 printable ASCII characters (choose one per intended change and reuse it on every retry)",
        ));
    }
    Ok(())
}

/// The outbox Idempotency-Key (and replay session id) for a request key in a profile:
/// `mcp-` and the SHA-256 of both, in hex. Printable, 68 characters, valid as a session id.
pub fn derived_key(profile: &str, request_key: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"switchyard-mcp-request-key\0");
    h.update(profile.as_bytes());
    h.update(b"\0");
    h.update(request_key.as_bytes());
    format!("mcp-{}", hex::encode(h.finalize()))
}

/// The fingerprint of a write tool call: SHA-256 of the canonical JSON (object keys sorted,
/// no spaces) of the tool name and its arguments, without `request_key` and `wait_seconds`.
pub fn fingerprint(tool: &str, arguments: &serde_json::Map<String, Value>) -> String {
    let mut args = arguments.clone();
    for key in NOT_FINGERPRINTED {
        args.remove(*key);
    }
    // Absent and null mean the same for every optional argument.
    args.retain(|_, v| !v.is_null());
    let mut text = String::new();
    canonical(
        &serde_json::json!({"tool": tool, "arguments": Value::Object(args)}),
        &mut text,
    );
    format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

/// Canonical JSON: object keys in byte order, no insignificant whitespace.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                canonical(&map[*k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn derived_keys_are_stable_printable_and_scoped_to_the_profile() {
        let a = derived_key("prod", "change-42");
        assert_eq!(a, derived_key("prod", "change-42"));
        assert_eq!(a.len(), 68);
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        assert_ne!(a, derived_key("staging", "change-42"));
        assert_ne!(a, derived_key("prod", "change-43"));
        // The separator keeps ("a", "b\0c") and ("a\0b", "c") apart.
        assert_ne!(derived_key("a", "b c"), derived_key("a b", "c"));
    }

    #[test]
    fn fingerprints_ignore_key_order_the_wait_and_nulls_but_not_values() {
        let base = fingerprint(
            "create_resource",
            &args(
                json!({"kind": "endpoint", "name": "o", "spec": {"a": 1, "b": [1, 2]},
                         "request_key": "k", "wait_seconds": 5}),
            ),
        );
        let reordered = fingerprint(
            "create_resource",
            &args(
                json!({"spec": {"b": [1, 2], "a": 1}, "name": "o", "kind": "endpoint",
                         "request_key": "other", "wait_seconds": null}),
            ),
        );
        assert_eq!(base, reordered);
        let changed = fingerprint(
            "create_resource",
            &args(json!({"kind": "endpoint", "name": "o", "spec": {"a": 2, "b": [1, 2]}})),
        );
        assert_ne!(base, changed);
        let other_tool = fingerprint(
            "apply_resource",
            &args(json!({"kind": "endpoint", "name": "o", "spec": {"a": 1, "b": [1, 2]}})),
        );
        assert_ne!(base, other_tool);
    }

    #[test]
    fn request_keys_must_be_printable_ascii() {
        assert!(check_request_key("deploy-2026-12-01/orders#1").is_ok());
        assert!(check_request_key(&"k".repeat(255)).is_ok());
        for bad in ["", "tab\there", "café", &"k".repeat(256)] {
            let err = check_request_key(bad).unwrap_err();
            assert_eq!(err.field.as_deref(), Some("request_key"));
        }
    }
}
