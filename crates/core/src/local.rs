//! The optimistic local view: a resource's confirmed server state with the queued writes
//! applied on top, in order. Pure functions, shared by enqueue, completion and refresh.

use serde_json::{Value, json};
use switchyard_protocol::{Resource, ResourceKind, merge_patch};

use crate::error::{CoreError, Result};
use crate::types::{LocalView, OpKind, Write};

/// The view of a confirmed server resource.
pub fn view_of(resource: &Resource) -> LocalView {
    LocalView {
        spec: resource.spec.clone(),
        enabled: match resource.kind {
            ResourceKind::Endpoint => resource.status["enabled"].as_bool().or(Some(true)),
            _ => None,
        },
    }
}

/// A write broken into the parts the outbox stores.
pub struct Prepared {
    pub op: OpKind,
    pub kind: ResourceKind,
    pub name: String,
    /// The request body (`Value::Null` when the request has none).
    pub body: Value,
}

/// Checks a write's shape and names, and builds the request body. Specs are validated with
/// the same rules the server uses, so a typo fails here, before it is queued.
pub fn prepare(write: &Write) -> Result<Prepared> {
    let check_name = |name: &str| {
        switchyard_protocol::validate_name(name)
            .map_err(|e| CoreError::invalid("name", e.to_string()))
    };
    let checked = |kind: ResourceKind, spec: &Value| {
        kind.validate_spec(spec)
            .map_err(|e| CoreError::invalid(e.field, e.message))
    };
    Ok(match write {
        Write::Create { kind, name, spec } => {
            check_name(name)?;
            let spec = checked(*kind, spec)?;
            Prepared {
                op: OpKind::Create,
                kind: *kind,
                name: name.clone(),
                body: json!({"name": name, "spec": spec}),
            }
        }
        Write::Update { kind, name, patch } => {
            check_name(name)?;
            if !patch.is_object() {
                return Err(CoreError::invalid(
                    "spec",
                    "must be a JSON merge patch object",
                ));
            }
            Prepared {
                op: OpKind::Update,
                kind: *kind,
                name: name.clone(),
                body: json!({"spec": patch}),
            }
        }
        Write::Apply { kind, name, spec } => {
            check_name(name)?;
            let spec = checked(*kind, spec)?;
            Prepared {
                op: OpKind::Apply,
                kind: *kind,
                name: name.clone(),
                body: json!({"spec": spec}),
            }
        }
        Write::Delete { kind, name } => {
            check_name(name)?;
            Prepared {
                op: OpKind::Delete,
                kind: *kind,
                name: name.clone(),
                body: Value::Null,
            }
        }
        Write::Enable { name } | Write::Disable { name } => {
            check_name(name)?;
            let op = if matches!(write, Write::Enable { .. }) {
                OpKind::Enable
            } else {
                OpKind::Disable
            };
            Prepared {
                op,
                kind: ResourceKind::Endpoint,
                name: name.clone(),
                body: Value::Null,
            }
        }
    })
}

/// Applies one queued write to a local view. `Err` names why it cannot apply (e.g. an
/// update of a resource that does not exist locally).
pub fn apply_op(
    kind: ResourceKind,
    name: &str,
    current: Option<&LocalView>,
    op: OpKind,
    body: &Value,
) -> Result<Option<LocalView>> {
    let missing = || CoreError::not_found(format!("{kind} {name:?}"));
    match op {
        OpKind::Create => {
            if current.is_some() {
                return Err(CoreError::invalid(
                    "name",
                    format!("{kind} {name:?} already exists"),
                ));
            }
            Ok(Some(LocalView {
                spec: body["spec"].clone(),
                enabled: (kind == ResourceKind::Endpoint).then_some(true),
            }))
        }
        OpKind::Apply => Ok(Some(LocalView {
            spec: body["spec"].clone(),
            enabled: match kind {
                ResourceKind::Endpoint => Some(current.and_then(|c| c.enabled).unwrap_or(true)),
                _ => None,
            },
        })),
        OpKind::Update => {
            let current = current.ok_or_else(missing)?;
            let mut spec = current.spec.clone();
            merge_patch::apply(&mut spec, &body["spec"]);
            let spec = kind
                .validate_spec(&spec)
                .map_err(|e| CoreError::invalid(e.field, e.message))?;
            Ok(Some(LocalView {
                spec,
                enabled: current.enabled,
            }))
        }
        OpKind::Delete => {
            current.ok_or_else(missing)?;
            Ok(None)
        }
        OpKind::Enable | OpKind::Disable => {
            let current = current.ok_or_else(missing)?;
            Ok(Some(LocalView {
                spec: current.spec.clone(),
                enabled: Some(op == OpKind::Enable),
            }))
        }
    }
}

/// Resources whose earlier queued writes must land before this one, and what a flow write
/// references (see `crate::schedule`):
/// - a flow waits for its endpoint and target (`endpoint/E`, `target/T`, from `result`); it
///   also names the endpoint and target it used before (`uses/endpoint/E`, `uses/target/T`,
///   from `before`), which it may be moving away from or, deleted, stop using;
/// - deleting an endpoint or target waits for the earlier flow writes that name it
///   (`flow-ref/endpoint/E`), before or after: one may be moving a flow away from it.
///
/// Same-resource order is implied.
pub fn after_keys(
    kind: ResourceKind,
    name: &str,
    op: OpKind,
    before: Option<&LocalView>,
    result: Option<&LocalView>,
) -> Vec<String> {
    let refs = |view: Option<&LocalView>, prefix: &str| -> Vec<String> {
        let spec = view.map(|v| &v.spec);
        ["endpoint", "target"]
            .into_iter()
            .filter_map(|k| {
                let used = spec.and_then(|s| s[k].as_str())?;
                Some(format!("{prefix}{k}/{used}"))
            })
            .collect()
    };
    match (kind, op) {
        (ResourceKind::Flow, _) => {
            let mut keys = match op {
                OpKind::Create | OpKind::Update | OpKind::Apply => refs(result, ""),
                _ => Vec::new(),
            };
            for used in refs(before, "uses/") {
                if !keys
                    .iter()
                    .any(|k| used.strip_prefix("uses/") == Some(k.as_str()))
                {
                    keys.push(used);
                }
            }
            keys
        }
        (ResourceKind::Endpoint | ResourceKind::Target, OpKind::Delete) => {
            vec![format!("flow-ref/{}/{name}", kind.as_str())]
        }
        _ => Vec::new(),
    }
}

/// Whether an op's live effect is already visible in `server` (used before resending an
/// op older than the server's key retention, instead of replaying it blindly).
pub fn effect_visible(
    op: OpKind,
    body: &Value,
    if_match: Option<i64>,
    base: Option<&LocalView>,
    server: Option<&Resource>,
) -> Option<bool> {
    match op {
        OpKind::Create | OpKind::Apply => Some(server.is_some_and(|s| s.spec == body["spec"])),
        OpKind::Delete => Some(server.is_none()),
        OpKind::Enable | OpKind::Disable => {
            server.map(|s| s.status["enabled"].as_bool() == Some(op == OpKind::Enable))
        }
        OpKind::Update => {
            let server = server?;
            if Some(server.version) == if_match {
                return Some(false);
            }
            // Moved on: applied by us if the result is exactly base+patch; otherwise unknown.
            let mut expected = base?.spec.clone();
            merge_patch::apply(&mut expected, &body["spec"]);
            (server.spec == expected).then_some(true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_writes_fold_into_the_local_view() {
        let create = prepare(&Write::Create {
            kind: ResourceKind::Endpoint,
            name: "orders".into(),
            spec: json!({"description": "a"}),
        })
        .unwrap();
        let v = apply_op(
            ResourceKind::Endpoint,
            "orders",
            None,
            create.op,
            &create.body,
        )
        .unwrap();
        assert_eq!(v.as_ref().unwrap().spec["description"], "a");
        let upd = prepare(&Write::Update {
            kind: ResourceKind::Endpoint,
            name: "orders".into(),
            patch: json!({"description": "b"}),
        })
        .unwrap();
        let v = apply_op(
            ResourceKind::Endpoint,
            "orders",
            v.as_ref(),
            upd.op,
            &upd.body,
        )
        .unwrap();
        assert_eq!(v.as_ref().unwrap().spec["description"], "b");
        let dis = prepare(&Write::Disable {
            name: "orders".into(),
        })
        .unwrap();
        let v = apply_op(
            ResourceKind::Endpoint,
            "orders",
            v.as_ref(),
            dis.op,
            &dis.body,
        )
        .unwrap();
        assert_eq!(v.as_ref().unwrap().enabled, Some(false));
        let del = prepare(&Write::Delete {
            kind: ResourceKind::Endpoint,
            name: "orders".into(),
        })
        .unwrap();
        let v = apply_op(
            ResourceKind::Endpoint,
            "orders",
            v.as_ref(),
            del.op,
            &del.body,
        )
        .unwrap();
        assert!(v.is_none());
        assert!(apply_op(ResourceKind::Endpoint, "orders", None, upd.op, &upd.body).is_err());
    }

    #[test]
    fn bad_input_is_refused_before_it_is_queued() {
        let err = prepare(&Write::Create {
            kind: ResourceKind::Target,
            name: "t".into(),
            spec: json!({"url": "ftp://x"}),
        })
        .err()
        .unwrap();
        assert!(err.to_string().contains("spec.url"), "{err}");
        assert!(
            prepare(&Write::Delete {
                kind: ResourceKind::Flow,
                name: "Bad Name".into()
            })
            .is_err()
        );
    }

    #[test]
    fn flows_wait_for_their_endpoint_and_target() {
        let view = |e: &str, t: &str| LocalView {
            spec: json!({"endpoint": e, "target": t}),
            enabled: None,
        };
        let (flow, target) = (ResourceKind::Flow, ResourceKind::Target);
        let (old, new) = (view("e", "t"), view("e", "u"));
        assert_eq!(
            after_keys(flow, "f", OpKind::Create, None, Some(&old)),
            ["endpoint/e", "target/t"]
        );
        // Moving a flow from target t to u also names t, which it stops using.
        assert_eq!(
            after_keys(flow, "f", OpKind::Apply, Some(&old), Some(&new)),
            ["endpoint/e", "target/u", "uses/target/t"]
        );
        assert_eq!(
            after_keys(flow, "f", OpKind::Delete, Some(&old), None),
            ["uses/endpoint/e", "uses/target/t"]
        );
        assert_eq!(
            after_keys(target, "t", OpKind::Delete, None, None),
            ["flow-ref/target/t"]
        );
        assert!(after_keys(target, "t", OpKind::Create, None, None).is_empty());
    }
}
