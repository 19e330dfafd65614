//! JSON Merge Patch (RFC 7396), used by `PATCH /v1/{kind}/{name}`.

use serde_json::Value;

/// Applies `patch` to `target` in place.
pub fn apply(target: &mut Value, patch: &Value) {
    let Value::Object(patch_fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    let Value::Object(target_fields) = target else {
        unreachable!("made an object above")
    };
    for (key, value) in patch_fields {
        if value.is_null() {
            target_fields.remove(key);
        } else {
            apply(
                target_fields.entry(key.clone()).or_insert(Value::Null),
                value,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn rfc7396_examples() {
        let cases = [
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (
                json!({"a":{"b":"c"}}),
                json!({"a":{"b":"d","c":null}}),
                json!({"a":{"b":"d"}}),
            ),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a"]), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
        ];
        for (mut target, patch, expected) in cases {
            super::apply(&mut target, &patch);
            assert_eq!(target, expected);
        }
    }
}
