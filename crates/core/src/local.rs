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

/// Resources whose earlier queued writes must land before this one: a flow waits for its
/// endpoint and target; deleting an endpoint or target waits for earlier flow writes
/// (one may be moving a flow away from it). Same-resource order is implied.
pub fn after_keys(kind: ResourceKind, op: OpKind, result: Option<&LocalView>) -> Vec<String> {
    match (kind, op) {
        (ResourceKind::Flow, OpKind::Create | OpKind::Update | OpKind::Apply) => {
            let spec = result.map(|r| &r.spec);
            let mut keys = Vec::new();
            if let Some(e) = spec.and_then(|s| s["endpoint"].as_str()) {
                keys.push(format!("endpoint/{e}"));
            }
            if let Some(t) = spec.and_then(|s| s["target"].as_str()) {
                keys.push(format!("target/{t}"));
            }
            keys
        }
        (ResourceKind::Endpoint | ResourceKind::Target, OpKind::Delete) => {
            vec!["flow/*".to_owned()]
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
        let view = LocalView {
            spec: json!({"endpoint": "e", "target": "t"}),
            enabled: None,
        };
        assert_eq!(
            after_keys(ResourceKind::Flow, OpKind::Create, Some(&view)),
            ["endpoint/e", "target/t"]
        );
        assert_eq!(
            after_keys(ResourceKind::Target, OpKind::Delete, None),
            ["flow/*"]
        );
        assert!(after_keys(ResourceKind::Target, OpKind::Create, None).is_empty());
    }
}
