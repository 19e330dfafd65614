//! Comparing specs: live state normalised like a manifest (server defaults filled in, so a
//! manifest that omits a defaulted field shows no phantom diff), and field-level changes.
//! Pure.

use serde_json::Value;
use switchyard_protocol::ResourceKind;

use crate::gitops::types::FieldChange;

/// A live spec in canonical form. The server stores canonical specs already; this keeps an
/// older server's (or a hand-written store's) omitted defaults from reading as changes.
pub fn normalize(kind: ResourceKind, spec: &Value) -> Value {
    kind.validate_spec(spec).unwrap_or_else(|_| spec.clone())
}

/// The fields that differ between two specs, as paths under `spec` (objects are walked
/// field by field; arrays and scalars compare whole), sorted by path.
pub fn changes(before: Option<&Value>, after: Option<&Value>) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk("spec", before, after, &mut out);
    out
}

fn walk(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<FieldChange>) {
    match (before, after) {
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                walk(&format!("{path}.{k}"), b.get(k), a.get(k), out);
            }
        }
        (b, a) if b == a => {}
        (b, a) => out.push(FieldChange {
            field: path.to_owned(),
            before: b.cloned(),
            after: a.cloned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nested_fields_are_named_and_equal_specs_have_no_changes() {
        let before =
            json!({"url": "https://a", "timeout_ms": 15000, "headers": {"X-A": "1", "X-B": "2"}});
        let after =
            json!({"url": "https://b", "timeout_ms": 15000, "headers": {"X-A": "1", "X-C": "3"}});
        let c = changes(Some(&before), Some(&after));
        let fields: Vec<&str> = c.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["spec.headers.X-B", "spec.headers.X-C", "spec.url"]);
        assert_eq!(c[0].after, None);
        assert_eq!(c[1].before, None);
        assert!(changes(Some(&before), Some(&before)).is_empty());
        // A created resource: the whole spec is new.
        assert_eq!(changes(None, Some(&after))[0].field, "spec");
    }

    #[test]
    fn omitted_server_defaults_are_no_change() {
        let live = json!({"url": "https://a"});
        let desired = ResourceKind::Target
            .validate_spec(&json!({"url": "https://a", "timeout_ms": 15000}))
            .unwrap();
        let live = normalize(ResourceKind::Target, &live);
        assert!(changes(Some(&live), Some(&desired)).is_empty());
    }
}
