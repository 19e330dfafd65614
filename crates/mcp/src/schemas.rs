//! The tools' JSON Schemas as standard JSON Schema, saying what the server enforces: schemars
//! writes `format: uint32` and the like, which clients do not know (the TypeScript SDK warns
//! about each); here they become `integer` with `minimum`/`maximum`. Input schemas gain the
//! rules the tools check (request keys, names, limits); output schemas drop descriptions,
//! which docs/mcp.md carries, to keep `tools/list` small.

use rmcp::model::JsonObject;
use serde_json::{Value, json};
use switchyard_protocol::name::{NAME_MAX_LEN, NAME_PATTERN};

/// Arguments that are resource names.
const NAMES: &[&str] = &["name", "endpoint", "target", "flow"];

pub fn standard(mut schema: JsonObject, input: bool) -> JsonObject {
    // Said by the protocol already (2020-12) and by the tool's name.
    schema.remove("$schema");
    schema.remove("title");
    if !input {
        shallow(&mut schema);
    }
    walk(&mut schema, input);
    schema
}

/// An output schema describes the result's own fields; a nested object (an operation, a
/// problem) is only `object` there, its fields are in docs/mcp.md. Enums stay inlined.
fn shallow(schema: &mut JsonObject) {
    let defs = match schema.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => return,
    };
    fn resolve(value: &mut Value, defs: &JsonObject) {
        if let Some(target) = value
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            let def = defs.get(target).cloned().unwrap_or(Value::Null);
            *value = if def.get("properties").is_some() {
                json!({"type": "object"})
            } else {
                def
            };
            return;
        }
        match value {
            Value::Object(map) => map.values_mut().for_each(|v| resolve(v, defs)),
            Value::Array(items) => items.iter_mut().for_each(|v| resolve(v, defs)),
            _ => {}
        }
    }
    for value in schema.values_mut() {
        resolve(value, &defs);
    }
}

fn walk(obj: &mut JsonObject, input: bool) {
    if !input {
        as_enum(obj);
    }
    if let Some(Value::String(format)) = obj.get("format") {
        let range = match format.as_str() {
            "uint8" => Some((0, Some(u8::MAX as u64))),
            "uint16" => Some((0, Some(u16::MAX as u64))),
            "uint32" => Some((0, Some(u32::MAX as u64))),
            "uint64" | "uint" => Some((0, None)),
            _ => None,
        };
        let standard = matches!(format.as_str(), "date-time" | "uri" | "email");
        if !standard {
            obj.remove("format");
        }
        if let Some((min, max)) = range {
            obj.entry("minimum").or_insert(json!(min));
            if let Some(max) = max {
                obj.entry("maximum").or_insert(json!(max));
            }
        }
    }
    if !input && obj.get("description").is_some_and(Value::is_string) {
        obj.remove("description");
    }
    if input && let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if let Value::Object(p) = prop {
                rules(name, p);
            }
        }
    }
    for value in obj.values_mut() {
        match value {
            Value::Object(inner) => walk(inner, input),
            Value::Array(items) => {
                for item in items.iter_mut().filter_map(Value::as_object_mut) {
                    walk(item, input);
                }
            }
            _ => {}
        }
    }
}

/// `oneOf` a list of constants (schemars' form for a described enum): `enum`, shorter.
fn as_enum(obj: &mut JsonObject) {
    let Some(Value::Array(items)) = obj.get("oneOf") else {
        return;
    };
    let consts: Option<Vec<Value>> = items.iter().map(|i| i.get("const").cloned()).collect();
    if let Some(consts) = consts {
        obj.remove("oneOf");
        obj.insert("type".into(), json!("string"));
        obj.insert("enum".into(), Value::Array(consts));
    }
}

/// What the tools check of an argument, by its name.
fn rules(name: &str, prop: &mut JsonObject) {
    let is_string = match prop.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    match name {
        "request_key" => {
            prop.insert("minLength".into(), json!(1));
            prop.insert("maxLength".into(), json!(255));
            prop.insert("pattern".into(), json!("^[\\x20-\\x7E]+$"));
        }
        "limit" => {
            prop.insert("minimum".into(), json!(1));
        }
        _ if is_string && NAMES.contains(&name) => {
            prop.insert("maxLength".into(), json!(NAME_MAX_LEN));
            prop.insert("pattern".into(), json!(NAME_PATTERN));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_become_ranges_and_arguments_get_their_rules() {
        let schema = json!({"type": "object", "properties": {
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
            "request_key": {"type": "string"},
            "name": {"type": "string", "description": "The name."},
            "rate": {"type": "number", "format": "double"}
        }});
        let out = standard(schema.as_object().unwrap().clone(), true);
        let p = &out["properties"];
        assert_eq!(p["limit"]["minimum"], 1);
        assert_eq!(p["limit"]["maximum"], u32::MAX);
        assert!(p["limit"].get("format").is_none() && p["rate"].get("format").is_none());
        assert_eq!(p["request_key"]["maxLength"], 255);
        assert_eq!(p["name"]["pattern"], NAME_PATTERN);
        assert_eq!(p["name"]["description"], "The name.");
        let output = standard(schema.as_object().unwrap().clone(), false);
        assert!(output["properties"]["name"].get("description").is_none());
    }
}
