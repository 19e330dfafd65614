//! Canonical JSON: object keys sorted, no insignificant whitespace. The server fingerprints
//! requests with it; the console derives GitOps keys from it.
//!
//! Written out explicitly rather than relying on `serde_json::Map` ordering, which a
//! dependency enabling serde_json's `preserve_order` feature would silently change.

use serde_json::Value;

pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("strings serialize");
                out.push(b':');
                write(value, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        scalar => serde_json::to_writer(&mut *out, scalar).expect("scalars serialize"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{ "b": 1, "a": {"y": [1, 2], "x": "s"} }"#).unwrap();
        let b: serde_json::Value =
            serde_json::from_str(r#"{"a":{"x":"s","y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(super::to_vec(&a), super::to_vec(&b));
        assert_eq!(super::to_vec(&a), br#"{"a":{"x":"s","y":[1,2]},"b":1}"#);
        assert_ne!(
            super::to_vec(&json!({"a": [1, 2]})),
            super::to_vec(&json!({"a": [2, 1]}))
        );
    }
}
