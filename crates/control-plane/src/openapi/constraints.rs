//! What the server validates, written into the OpenAPI document: name patterns and lengths,
//! limits, enums, the header forms, and every status an operation really answers. The values
//! come from where the validation lives (`switchyard_protocol` for the wire rules, the
//! handlers' modules for page sizes), so the document cannot drift from it; the tests below
//! hold each pattern against its validator.
//!
//! A schema here is never tighter than what the server accepts where the value comes back in
//! a response (a stored spec): a response that did not match its own schema would be a
//! failure of the document, not of the client.

use serde_json::{Value, json};
use switchyard_protocol::client_certs::CERTIFICATE_ID_PATTERN;
use switchyard_protocol::events::{EVENT_KEY_PATTERN, EVENT_TYPE_PATTERN};
use switchyard_protocol::headers::{IDEMPOTENCY_KEY_MAX_LEN, IDEMPOTENCY_KEY_PATTERN};
use switchyard_protocol::name::{NAME_MAX_LEN, NAME_PATTERN};
use switchyard_protocol::replay::{
    MAX_DELIVERY_IDS, MAX_RATE_PER_S, MIN_RATE_PER_S, SESSION_ID_PATTERN,
};
use switchyard_protocol::resource::{
    DESCRIPTION_MAX_CHARS, DESCRIPTION_PATTERN, EVENT_TYPE_FILTER_PATTERN, HEADER_NAME_PATTERN,
    HEADER_VALUE_MAX_BYTES, HEADER_VALUE_PATTERN, MAX_EVENT_TYPES, MAX_TARGET_HEADERS,
    RESERVED_HEADER_PREFIXES, RESERVED_HEADERS, TIMEOUT_MS_RANGE,
};
use switchyard_protocol::{DlqGroupBy, MetricsGroupBy, MetricsWindow, ResourceKind};

/// An `If-Match` the server parses: `*`, or strong version tags (`"3"`, `"1", "2"`).
pub const IF_MATCH_PATTERN: &str = r#"^(\*|"[0-9]{1,18}"( *, *"[0-9]{1,18}")*)$"#;
/// A target URL's start: http or https (the rest is judged by a URL parser, no pattern).
pub const TARGET_URL_PATTERN: &str = "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]";

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn name() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": NAME_MAX_LEN, "pattern": NAME_PATTERN})
}

/// Merges `extra`'s keys into the object at `pointer` (created when absent).
fn merge(doc: &mut Value, pointer: &str, extra: Value) {
    let Some(target) = doc.pointer_mut(pointer) else {
        panic!("the OpenAPI document has nothing at {pointer}");
    };
    if !target.is_object() {
        *target = json!({});
    }
    let (Value::Object(target), Value::Object(extra)) = (target, extra) else {
        unreachable!("both are objects")
    };
    target.extend(extra);
}

/// A pattern matching `text` in any letter case (ECMA patterns have no `(?i)`).
fn any_case(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
            } else {
                regex_escape(c)
            }
        })
        .collect()
}

fn regex_escape(c: char) -> String {
    if "\\^$.|?*+()[]{}-".contains(c) {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

/// The extra headers a target may send: tokens, not one the pipeline sets itself.
pub fn reserved_header_pattern() -> String {
    let names = RESERVED_HEADERS.iter().map(|h| format!("{}$", any_case(h)));
    let prefixes = RESERVED_HEADER_PREFIXES.iter().map(|p| any_case(p));
    format!("^({})", names.chain(prefixes).collect::<Vec<_>>().join("|"))
}

fn spec_schemas(doc: &mut Value) {
    let s = "/components/schemas";
    let event_types = json!({"maxItems": MAX_EVENT_TYPES,
        "items": {"type": "string", "pattern": EVENT_TYPE_FILTER_PATTERN}});
    merge(
        doc,
        &format!("{s}/EndpointSpec"),
        json!({"additionalProperties": false}),
    );
    merge(
        doc,
        &format!("{s}/EndpointSpec/properties/description"),
        json!({"maxLength": DESCRIPTION_MAX_CHARS, "pattern": DESCRIPTION_PATTERN}),
    );
    merge(
        doc,
        &format!("{s}/EndpointSpec/properties/event_types"),
        event_types.clone(),
    );

    merge(
        doc,
        &format!("{s}/TargetSpec"),
        json!({"additionalProperties": false}),
    );
    merge(
        doc,
        &format!("{s}/TargetSpec/properties/url"),
        json!({"pattern": TARGET_URL_PATTERN}),
    );
    merge(
        doc,
        &format!("{s}/TargetSpec/properties/timeout_ms"),
        json!({"minimum": TIMEOUT_MS_RANGE.start(), "maximum": TIMEOUT_MS_RANGE.end()}),
    );
    merge(
        doc,
        &format!("{s}/TargetSpec/properties/headers"),
        json!({
            "maxProperties": MAX_TARGET_HEADERS,
            "propertyNames": {"type": "string", "pattern": HEADER_NAME_PATTERN,
                "not": {"pattern": reserved_header_pattern()}},
            "additionalProperties": {"type": "string", "maxLength": HEADER_VALUE_MAX_BYTES,
                "pattern": HEADER_VALUE_PATTERN},
        }),
    );

    merge(
        doc,
        &format!("{s}/FlowSpec"),
        json!({
            "additionalProperties": false,
            // `edge` names the edge plane of an async_relay flow, and only of one.
            "oneOf": [
                {"required": ["mode", "edge"], "properties": {"mode": {"const": "async_relay"}}},
                {"not": {"required": ["edge"]},
                 "properties": {"mode": {"enum": ["sync", "async_inline"]}}},
            ],
        }),
    );
    for field in ["endpoint", "target", "edge"] {
        merge(doc, &format!("{s}/FlowSpec/properties/{field}"), name());
    }
    merge(
        doc,
        &format!("{s}/FlowSpec/properties/event_types"),
        event_types,
    );
}

/// The request bodies of the resource operations, one per kind: the create and apply bodies
/// carry that kind's spec, the update body a merge patch of it (its fields, none required).
fn resource_requests(doc: &mut Value) {
    let schemas = doc.pointer_mut("/components/schemas").expect("schemas");
    for kind in ResourceKind::ALL {
        let kind_name = super::capitalize(kind.as_str());
        let spec = format!("{kind_name}Spec");
        let mut patch = schemas[&spec].clone();
        if let Some(patch) = patch.as_object_mut() {
            patch.remove("required");
            patch.remove("oneOf");
        }
        schemas[format!("{kind_name}Patch")] = patch;
        schemas[format!("{kind_name}CreateRequest")] = json!({
            "type": "object", "additionalProperties": false, "required": ["name", "spec"],
            "properties": {"name": name(), "spec": schema_ref(&spec)},
        });
        schemas[format!("{kind_name}ApplyRequest")] = json!({
            "type": "object", "additionalProperties": false, "required": ["spec"],
            "properties": {"spec": schema_ref(&spec)},
        });
        schemas[format!("{kind_name}UpdateRequest")] = json!({
            "type": "object", "additionalProperties": false, "required": ["spec"],
            "properties": {"spec": schema_ref(&format!("{kind_name}Patch"))},
        });
        schemas[format!("{kind_name}Resource")]["properties"]["name"] = name();
    }
    for generic in ["CreateRequest", "UpdateRequest", "ApplyRequest"] {
        if let Some(schemas) = schemas.as_object_mut() {
            schemas.remove(generic);
        }
    }
}

fn other_schemas(doc: &mut Value) {
    let s = "/components/schemas";
    let closed = json!({"additionalProperties": false});
    for schema in [
        "SubmitEventRequest",
        "TargetTestRequest",
        "ReplayRequest",
        "EdgeLeaseRequest",
        "EdgeAttemptReport",
        "RequeueRequest",
        "RetirementRequest",
    ] {
        merge(doc, &format!("{s}/{schema}"), closed.clone());
    }
    merge(
        doc,
        &format!("{s}/RetirementRequest/properties/name"),
        name(),
    );
    merge(
        doc,
        &format!("{s}/RetirementRequest/properties/grace_seconds"),
        json!({"minimum": 0, "maximum": crate::retirement::MAX_GRACE_SECONDS}),
    );
    merge(
        doc,
        &format!("{s}/SubmitEventRequest/properties/endpoint"),
        name(),
    );
    let event_type = json!({"pattern": EVENT_TYPE_PATTERN});
    merge(
        doc,
        &format!("{s}/SubmitEventRequest/properties/event_type"),
        event_type.clone(),
    );
    merge(
        doc,
        &format!("{s}/SubmitEventRequest/properties/event_key"),
        json!({"pattern": EVENT_KEY_PATTERN}),
    );
    merge(
        doc,
        &format!("{s}/TargetTestRequest/properties/event_type"),
        event_type,
    );
    merge(
        doc,
        &format!("{s}/ReplayRequest/properties/rate_per_s"),
        json!({"minimum": MIN_RATE_PER_S, "maximum": MAX_RATE_PER_S}),
    );
    let selection = doc
        .pointer_mut(&format!("{s}/ReplaySelection/oneOf"))
        .and_then(Value::as_array_mut)
        .expect("ReplaySelection is a oneOf");
    for branch in selection {
        merge(branch, "", closed.clone());
        if let Some(ids) = branch.pointer_mut("/properties/delivery_ids") {
            merge(
                ids,
                "",
                json!({"minItems": 1, "maxItems": MAX_DELIVERY_IDS}),
            );
        }
    }
    merge(
        doc,
        &format!("{s}/EdgeLeaseRequest/properties/max"),
        json!({"minimum": 1, "maximum": crate::edge::MAX_LEASE}),
    );
    // A report has a status code, an error class, or both.
    merge(
        doc,
        &format!("{s}/EdgeAttemptReport"),
        json!({"anyOf": [{"required": ["status_code"]}, {"required": ["error_class"]}]}),
    );
}

/// The most items one page of `path`'s list answers.
fn page_limit(path: &str) -> Option<u32> {
    match path {
        "/v1/dlq" => Some(crate::dlq::MAX_PAGE),
        "/v1/events" => Some(crate::events::lookup::MAX_LIMIT),
        "/v1/replays" => Some(crate::replays::MAX_PAGE),
        "/v1/retirements" => Some(crate::retirement::MAX_PAGE),
        _ if ResourceKind::ALL
            .iter()
            .any(|k| path == format!("/v1/{}", k.plural())) =>
        {
            Some(crate::resources::MAX_PAGE)
        }
        _ => None,
    }
}

fn parameter_schema(path: &str, location: &str, param: &str) -> Option<(Value, bool)> {
    let enum_of = |values: Vec<&str>| json!({"type": "string", "enum": values});
    let schema = match (location, param) {
        ("path", "name") => name(),
        ("path", "id")
            if path.starts_with("/v1/replays/") || path.starts_with("/v1/retirements/") =>
        {
            json!({"type": "string", "pattern": SESSION_ID_PATTERN})
        }
        ("path", "id") if path.starts_with("/v1/targets/{name}/client-certificates/") => {
            json!({"type": "string", "pattern": CERTIFICATE_ID_PATTERN})
        }
        ("query", "state") if path == "/v1/retirements" => schema_ref("RetirementState"),
        ("header", "Idempotency-Key") => json!({"type": "string",
            "maxLength": IDEMPOTENCY_KEY_MAX_LEN, "pattern": IDEMPOTENCY_KEY_PATTERN}),
        ("header", "If-Match") => json!({"type": "string", "pattern": IF_MATCH_PATTERN}),
        ("query", "limit") => json!({"type": "integer", "minimum": 1,
            "maximum": page_limit(path)?}),
        ("query", "endpoint" | "target" | "flow") => name(),
        ("query", "error_class") => schema_ref("ErrorClass"),
        ("query", "since" | "until") => json!({"type": "string", "format": "date-time"}),
        ("query", "event_key") => {
            return Some((
                json!({"type": "string", "pattern": EVENT_KEY_PATTERN}),
                true,
            ));
        }
        ("query", "window") => enum_of(MetricsWindow::ALL.iter().map(|w| w.as_str()).collect()),
        ("query", "group_by") if path == "/v1/metrics/deliveries" => {
            enum_of(MetricsGroupBy::ALL.iter().map(|g| g.as_str()).collect())
        }
        ("query", "group_by") => {
            let mut values: Vec<&str> = [
                DlqGroupBy::Target,
                DlqGroupBy::ErrorClass,
                DlqGroupBy::Hour,
                DlqGroupBy::ErrorClassTarget,
            ]
            .iter()
            .map(|g| g.as_str())
            .collect();
            values.push("target,error_class");
            enum_of(values)
        }
        _ => return None,
    };
    Some((schema, false))
}

fn parameters(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for op in item.values_mut() {
            let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
                continue;
            };
            for param in params {
                let location = param["in"].as_str().unwrap_or_default().to_owned();
                let name = param["name"].as_str().unwrap_or_default().to_owned();
                if let Some((schema, required)) = parameter_schema(path, &location, &name) {
                    param["schema"] = schema;
                    if required {
                        param["required"] = json!(true);
                    }
                }
            }
        }
    }
}

/// The answers beside each operation's main one: 415 wherever a JSON body is read, and the
/// other successes (an apply that creates, a duplicate or sync event, a replay again).
fn responses(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            let responses = &mut op["responses"];
            if op_has_body(method, path) {
                responses["415"] = json!({
                    "description": "unsupported_media_type: the body is not application/json",
                    "content": {"application/problem+json": {"schema": schema_ref("Problem")}},
                });
            }
            let apply = method == "put" && path.starts_with("/v1/") && path.ends_with("/{name}");
            if apply {
                let mut created = responses["200"].clone();
                created["description"] = json!("Created; Location and ETag set");
                responses["201"] = created;
            }
            if method == "post" && path == "/v1/events" {
                let mut ok = responses["202"].clone();
                ok["description"] = json!(
                    "A duplicate (duplicate: true), or the sync flow's first attempt succeeded"
                );
                responses["200"] = ok;
            }
            if method == "put" && path == "/v1/retirements/{id}" {
                responses["200"] = json!({
                    "description": "The same retirement again (nothing new happens), or a dry run's impact",
                    "content": {"application/json": {"schema": {"oneOf": [
                        schema_ref("Retirement"), schema_ref("RetirementDryRun")]}}},
                });
            }
            if method == "put" && path == "/v1/targets/{name}/client-certificates/{id}" {
                let mut again = responses["201"].clone();
                again["description"] =
                    json!("The same certificate and key again (nothing new is stored)");
                responses["200"] = again;
            }
            if method == "put" && path == "/v1/replays/{id}" {
                responses["200"] = json!({
                    "description": "The same session again (nothing new happens), or a dry run's count",
                    "content": {"application/json": {"schema": {"oneOf": [
                        schema_ref("ReplaySession"), schema_ref("ReplayDryRun")]}}},
                });
            }
        }
    }
}

/// Every operation that reads a JSON body (`crate::extract::JsonBody`) answers 415 to
/// another media type, whether or not a body is documented as required.
fn op_has_body(method: &str, path: &str) -> bool {
    match method {
        "post" => {
            !path.ends_with("/disable")
                && !path.ends_with("/enable")
                && !path.ends_with("/cancel")
                && !path.ends_with("/activate")
                && path != "/v1/dlq/recount"
        }
        "put" | "patch" => true,
        _ => false,
    }
}

pub fn apply(doc: &mut Value) {
    spec_schemas(doc);
    resource_requests(doc);
    other_schemas(doc);
    parameters(doc);
    responses(doc);
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;
    use switchyard_protocol::events::{is_event_key, is_event_type};
    use switchyard_protocol::headers::parse_idempotency_key;
    use switchyard_protocol::replay::is_session_id;
    use switchyard_protocol::validate_name;

    fn samples() -> Vec<String> {
        let mut out: Vec<String> = [
            "",
            "a",
            "0",
            "-",
            "a-",
            "-a",
            "a-b",
            "Orders",
            "a_b",
            "a.b",
            "a:b",
            "a*b",
            "a b",
            " a",
            "a ",
            "\"a\"",
            "\"a",
            "a\"",
            "é",
            "a\tb",
            "x\u{1}",
            "*",
            "\"3\"",
            "\"1\", \"2\"",
            "3",
            "W/\"3\"",
        ]
        .map(String::from)
        .to_vec();
        for n in [62, 63, 64, 127, 128, 129, 254, 255, 256] {
            out.push("a".repeat(n));
            out.push("~".repeat(n));
        }
        out
    }

    fn agree(pattern: &str, accepts: impl Fn(&str) -> bool, max_len: Option<usize>) {
        let re = Regex::new(pattern).unwrap();
        for s in samples() {
            let by_schema = re.is_match(&s) && max_len.is_none_or(|m| s.chars().count() <= m);
            assert_eq!(by_schema, accepts(&s), "{pattern} on {s:?}");
        }
    }

    #[test]
    fn the_patterns_accept_what_the_validators_accept() {
        agree(
            NAME_PATTERN,
            |s| validate_name(s).is_ok(),
            Some(NAME_MAX_LEN),
        );
        agree(EVENT_TYPE_PATTERN, is_event_type, None);
        agree(EVENT_KEY_PATTERN, is_event_key, None);
        agree(SESSION_ID_PATTERN, is_session_id, None);
    }

    #[test]
    fn the_header_patterns_admit_only_what_the_server_parses() {
        // Tighter than the parser (no surrounding space, no quoted form): every key the
        // pattern admits parses, to itself.
        let key = Regex::new(IDEMPOTENCY_KEY_PATTERN).unwrap();
        let mut admitted = 0;
        for s in samples() {
            if key.is_match(&s) {
                admitted += 1;
                assert_eq!(
                    parse_idempotency_key(s.as_bytes()).as_deref(),
                    Ok(s.as_str())
                );
            }
        }
        assert!(admitted > 5);
        let if_match = Regex::new(IF_MATCH_PATTERN).unwrap();
        for s in samples() {
            if if_match.is_match(&s) {
                let mut headers = axum::http::HeaderMap::new();
                headers.insert("if-match", s.parse().unwrap());
                assert!(
                    crate::extract::IfMatch::from_headers(&headers).is_ok(),
                    "{s:?}"
                );
            }
        }
        assert!(if_match.is_match("\"1\", \"2\"") && if_match.is_match("*"));
    }

    #[test]
    fn reserved_headers_are_excluded_in_any_case() {
        let reserved = Regex::new(&reserved_header_pattern()).unwrap();
        for name in ["Content-Type", "HOST", "webhook-id", "Switchyard-Attempt"] {
            assert!(reserved.is_match(name), "{name}");
        }
        for name in ["X-Api-Key", "Authorization", "Hostname"] {
            assert!(!reserved.is_match(name), "{name}");
        }
    }
}
