//! The idempotency key of a GitOps write, derived from its content: (profile, source,
//! commit, kind/name, operation and the version it starts from, hash of the canonical
//! desired spec). Re-running an apply of the same commit against the same live state derives
//! the same keys, so the outbox and the server see the same writes again and make each once;
//! another commit (a revert to earlier content included) derives new keys, so the server
//! never answers a new write with an old stored response. When a write under a content key
//! has already settled and the same write is needed again (the resource was deleted and is
//! re-created from the same commit), the console suffixes the key with a count (see
//! `Console::gitops_settle_keys`). Pure.

use serde_json::Value;
use sha2::{Digest, Sha256};
use switchyard_protocol::ResourceKind;

/// What a key is derived from.
#[derive(Debug, Clone, Copy)]
pub struct KeyParts<'a> {
    pub profile: &'a str,
    pub source: &'a str,
    pub commit: &'a str,
    pub kind: ResourceKind,
    pub name: &'a str,
    /// `create`, `update` or `delete`.
    pub operation: &'a str,
    /// The live version the write starts from (`If-Match`); `None` for a create. Part of the
    /// operation: setting a resource back to the same commit after someone changed it by
    /// hand is another write than the first apply of that commit.
    pub base_version: Option<i64>,
    /// The desired spec (canonical); `None` for a delete.
    pub spec: Option<&'a Value>,
}

/// SHA-256 of the canonical JSON of a spec, in hex.
pub fn spec_hash(spec: Option<&Value>) -> String {
    match spec {
        None => "none".to_owned(),
        Some(spec) => hex::encode(Sha256::digest(switchyard_protocol::canonical_json::to_vec(
            spec,
        ))),
    }
}

/// `gitops-` and 64 hex digits: a valid `Idempotency-Key`, unique per content.
pub fn derive(parts: &KeyParts<'_>) -> String {
    let mut h = Sha256::new();
    let base = parts
        .base_version
        .map_or_else(|| "absent".to_owned(), |v| v.to_string());
    let fields = [
        "switchyard-gitops-v1",
        parts.profile,
        parts.source,
        parts.commit,
        parts.kind.as_str(),
        parts.name,
        parts.operation,
        &base,
        &spec_hash(parts.spec),
    ];
    // Length-prefixed, so no two tuples encode alike.
    for f in fields {
        h.update((f.len() as u64).to_be_bytes());
        h.update(f.as_bytes());
    }
    format!("gitops-{}", hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_part_changes_the_key_and_nothing_else_does() {
        let spec = json!({"description": "a", "event_types": []});
        let base = KeyParts {
            profile: "prod",
            source: "/srv/config:deploy",
            commit: "c1",
            kind: ResourceKind::Endpoint,
            name: "orders",
            operation: "update",
            base_version: Some(3),
            spec: Some(&spec),
        };
        let key = derive(&base);
        assert!(key.starts_with("gitops-") && key.len() == 71, "{key}");
        // Key order inside the spec does not matter: the spec is hashed canonically.
        let reordered: Value =
            serde_json::from_str(r#"{"event_types": [], "description": "a"}"#).unwrap();
        assert_eq!(
            derive(&KeyParts {
                spec: Some(&reordered),
                ..base
            }),
            key
        );
        let other_spec = json!({"description": "b", "event_types": []});
        let variants = [
            KeyParts {
                profile: "staging",
                ..base
            },
            KeyParts {
                source: "/srv/other:deploy",
                ..base
            },
            KeyParts {
                commit: "c2",
                ..base
            },
            KeyParts {
                kind: ResourceKind::Target,
                ..base
            },
            KeyParts {
                name: "billing",
                ..base
            },
            KeyParts {
                operation: "create",
                ..base
            },
            KeyParts {
                base_version: Some(4),
                ..base
            },
            KeyParts {
                base_version: None,
                ..base
            },
            KeyParts {
                spec: Some(&other_spec),
                ..base
            },
            KeyParts { spec: None, ..base },
        ];
        let mut keys: Vec<String> = variants.iter().map(derive).collect();
        keys.push(key);
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "every part is in the key");
    }
}
