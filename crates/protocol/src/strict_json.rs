//! JSON parsing that refuses duplicate object keys.
//!
//! `serde_json` keeps the last of two equal keys (`{"url":"a","url":"b"}` is `{"url":"b"}`),
//! and other parsers keep the first or refuse: a proxy or an auditor reading the same body
//! could see another request than the server acts on (RFC 8259 §4: names "SHOULD be
//! unique"). The control plane reads every request body with [`from_slice`], so a body with
//! a repeated key is refused, naming it, instead of silently choosing one.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why a body is not accepted JSON.
#[derive(Debug)]
pub enum StrictJsonError {
    /// Not JSON at all.
    Syntax(serde_json::Error),
    /// An object repeats a key: `path` names it as a JSON path (`spec.description`,
    /// `headers.X-Team`, `items[2].id`).
    DuplicateKey { path: String },
}

impl fmt::Display for StrictJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax(e) => write!(f, "is not valid JSON: {e}"),
            Self::DuplicateKey { path } => write!(
                f,
                "{path:?} appears more than once in its object; duplicate keys are refused"
            ),
        }
    }
}

impl std::error::Error for StrictJsonError {}

/// Parses `bytes` as one JSON value, refusing an object that repeats a key.
pub fn from_slice(bytes: &[u8]) -> Result<Value, StrictJsonError> {
    let duplicate = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = Unique {
        path: String::new(),
        duplicate: &duplicate,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match (parsed, duplicate.into_inner()) {
        (_, Some(path)) => Err(StrictJsonError::DuplicateKey { path }),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(StrictJsonError::Syntax(e)),
    }
}

/// A value at `path`; the first duplicate key found is recorded in `duplicate` (the parse
/// then stops with an error).
struct Unique<'a> {
    path: String,
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Unique<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let seed = Unique {
                path: format!("{}[{}]", self.path, items.len()),
                duplicate: self.duplicate,
            };
            match seq.next_element_seed(seed)? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if out.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(path);
                return Err(serde::de::Error::custom("duplicate key"));
            }
            let value = map.next_value_seed(Unique {
                path,
                duplicate: self.duplicate,
            })?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn duplicate(text: &str) -> String {
        match from_slice(text.as_bytes()) {
            Err(StrictJsonError::DuplicateKey { path }) => path,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn bodies_without_repeated_keys_parse_as_serde_json_does() {
        for text in [
            r#"{"spec":{"url":"https://x.example","headers":{"A":"1","a":"2"}}}"#,
            r#"[1, -2, 3.5, true, null, "s", {"k": [{"k": 1}]}]"#,
            r#"{"a":{"b":1},"b":{"a":1}}"#,
            "  \"text\"  ",
        ] {
            let strict = from_slice(text.as_bytes()).unwrap();
            assert_eq!(
                strict,
                serde_json::from_str::<Value>(text).unwrap(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_repeated_key_is_named_by_its_path() {
        assert_eq!(duplicate(r#"{"spec":{},"spec":{}}"#), "spec");
        assert_eq!(
            duplicate(r#"{"spec":{"description":"a","description":"b"}}"#),
            "spec.description"
        );
        assert_eq!(
            duplicate(r#"{"items":[{},{"id":1,"id":1}]}"#),
            "items[1].id"
        );
        // Keys are compared as decoded: an escape spells the same key.
        assert_eq!(duplicate(r#"{"url":"a","\u0075rl":"b"}"#), "url");
    }

    #[test]
    fn syntax_errors_stay_syntax_errors() {
        for text in [r#"{"a":1"#, r#"{"a":1} x"#, "", "{\"a\":1,}"] {
            assert!(
                matches!(from_slice(text.as_bytes()), Err(StrictJsonError::Syntax(_))),
                "{text}"
            );
        }
        assert_eq!(
            from_slice(br#"{"n": 12345678901234567890}"#).unwrap(),
            json!({"n": 12345678901234567890u64})
        );
    }
}
