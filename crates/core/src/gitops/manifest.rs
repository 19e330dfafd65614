//! Manifests: YAML or JSON documents `{kind, name, spec}`, several per file. Each is checked
//! with the server's own rules (name, spec) before anything is planned; every problem names
//! its file, document and field. Pure.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::Value;
use switchyard_protocol::ResourceKind;

use crate::error::{CoreError, ManifestProblem};
use crate::gitops::types::Manifest;

/// At most this many problems are reported at once (the rest are counted).
pub(crate) const MAX_PROBLEMS: usize = 50;

/// Every document of a commit read and checked on its own: the valid manifests, the problems
/// found, and what the checks against the control plane need ([`Parsed::finish`]): every
/// name declared (a document refused for its spec still declares its name, so a flow naming
/// it is not also told it is missing), each flow's references and each target's URL.
#[derive(Debug, Default)]
pub struct Parsed {
    pub manifests: Vec<Manifest>,
    pub problems: Vec<ManifestProblem>,
    pub declared: HashSet<(ResourceKind, String)>,
    /// A flow's `spec.endpoint` / `spec.target`: where, the field, and the name it gives.
    pub references: Vec<(Place, &'static str, ResourceKind, String)>,
    /// A target's `spec.url` (one its own rules did not already refuse).
    pub target_urls: Vec<(Place, String)>,
    /// Some file could not be read to its end: a name used may be declared in what was lost.
    pub unreadable: bool,
}

/// A document: its file and its number in the file.
#[derive(Debug, Clone)]
pub struct Place {
    pub path: String,
    pub document: usize,
}

impl Place {
    fn problem(&self, field: &str, message: String) -> ManifestProblem {
        ManifestProblem {
            path: self.path.clone(),
            document: self.document,
            field: field.to_owned(),
            message,
        }
    }
}

impl Parsed {
    /// Adds the problems only the control plane can tell — a flow naming an endpoint or
    /// target neither declared nor `live`, a target URL `policy` (the address policy the
    /// server advertises) refuses — to those of the documents themselves, so one plan names
    /// every problem there is. Either the manifests, or every problem.
    pub fn finish<R>(
        mut self,
        live: &HashMap<(ResourceKind, String), R>,
        policy: Option<&switchyard_protocol::addresses::AddressPolicy>,
    ) -> Result<Vec<Manifest>, CoreError> {
        if let Some(policy) = policy {
            for (place, url) in &self.target_urls {
                if let Some(e) = policy.url_problem(url) {
                    self.problems.push(place.problem(
                        &e.field,
                        format!(
                            "{} (this control plane refuses it: target_address_forbidden)",
                            e.message
                        ),
                    ));
                }
            }
        }
        for (place, field, kind, name) in &self.references {
            let key = (*kind, name.clone());
            if !self.declared.contains(&key) && !live.contains_key(&key) {
                let lost = if self.unreadable {
                    " (or in a part of a manifest that could not be read)"
                } else {
                    ""
                };
                self.problems.push(place.problem(
                    field,
                    format!("{kind} {name:?} is neither declared in this commit nor on the control plane{lost}"),
                ));
            }
        }
        self.into_result()
    }

    /// The manifests, or the problems found so far.
    pub fn into_result(self) -> Result<Vec<Manifest>, CoreError> {
        if self.problems.is_empty() {
            Ok(self.manifests)
        } else {
            let mut problems = self.problems;
            let total = problems.len();
            problems.truncate(MAX_PROBLEMS);
            Err(CoreError::InvalidManifests { problems, total })
        }
    }
}

/// Parses and validates every document of every file, without the control plane. Either all
/// manifests, or every problem found (nothing is planned from a commit with a bad manifest).
/// The plan itself uses [`parse`] and [`Parsed::finish`], which add the checks against the
/// control plane.
pub fn parse_all(files: &[(String, Vec<u8>)]) -> Result<Vec<Manifest>, CoreError> {
    parse(files).into_result()
}

/// Reads and checks every document of every file.
pub fn parse(files: &[(String, Vec<u8>)]) -> Parsed {
    let mut parsed = Parsed::default();
    for (path, content) in files {
        let (docs, problem) = documents(path, content);
        if let Some(p) = problem {
            parsed.problems.push(p);
            parsed.unreadable = true;
        }
        for (document, value) in docs {
            let place = Place {
                path: path.clone(),
                document,
            };
            note(&mut parsed, &place, &value);
            match manifest(path, document, value) {
                Ok(m) => parsed.manifests.push(m),
                Err(p) => parsed.problems.extend(p),
            }
        }
    }
    let mut seen: HashMap<(ResourceKind, &str), &Manifest> = HashMap::new();
    for m in &parsed.manifests {
        if let Some(first) = seen.insert((m.kind, m.name.as_str()), m) {
            parsed.problems.push(ManifestProblem {
                path: m.path.clone(),
                document: m.document,
                field: "name".into(),
                message: format!(
                    "{} {:?} is also declared in {} (document {}); a name appears once per kind",
                    m.kind, m.name, first.path, first.document
                ),
            });
        }
    }
    parsed
}

/// Records what a document declares and references, valid or not, for [`Parsed::finish`].
fn note(parsed: &mut Parsed, place: &Place, value: &Value) {
    let text = |v: &Value, field: &str| v.get(field).and_then(Value::as_str).map(str::to_owned);
    let Some(kind) = text(value, "kind").and_then(|k| ResourceKind::parse(&k)) else {
        return;
    };
    if let Some(name) = text(value, "name") {
        parsed.declared.insert((kind, name));
    }
    let Some(spec) = value.get("spec") else {
        return;
    };
    match kind {
        ResourceKind::Flow => {
            for (field, of) in [
                ("spec.endpoint", ResourceKind::Endpoint),
                ("spec.target", ResourceKind::Target),
            ] {
                let name = text(spec, &field[5..]);
                // A missing or malformed name is the spec's own problem, reported by its rules.
                if let Some(name) = name.filter(|n| switchyard_protocol::validate_name(n).is_ok()) {
                    parsed.references.push((place.clone(), field, of, name));
                }
            }
        }
        ResourceKind::Target => {
            let refused = kind
                .spec_problems(spec)
                .err()
                .is_some_and(|e| e.iter().any(|e| e.field == "spec.url"));
            if let Some(url) = text(spec, "url").filter(|_| !refused) {
                parsed.target_urls.push((place.clone(), url));
            }
        }
        ResourceKind::Endpoint => {}
    }
}

/// The documents of one file, numbered from 1 (empty YAML documents are skipped), and the
/// problem that stopped the reading, if any: the documents before it are still checked.
fn documents(path: &str, content: &[u8]) -> (Vec<(usize, Value)>, Option<ManifestProblem>) {
    let problem = |document: usize, message: String| ManifestProblem {
        path: path.to_owned(),
        document,
        field: String::new(),
        message,
    };
    if path.to_ascii_lowercase().ends_with(".json") {
        return match serde_json::from_slice(content) {
            // A JSON file holds one document, or an array of them.
            Ok(Value::Array(items)) => (
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| (i + 1, v))
                    .collect(),
                None,
            ),
            Ok(other) => (vec![(1, other)], None),
            Err(e) => (
                Vec::new(),
                Some(problem(1, format!("is not valid JSON: {e}"))),
            ),
        };
    }
    let mut out = Vec::new();
    for (i, doc) in serde_norway::Deserializer::from_slice(content).enumerate() {
        match Value::deserialize(doc) {
            Ok(Value::Null) => {}
            Ok(value) => out.push((i + 1, value)),
            Err(e) => return (out, Some(problem(i + 1, format!("is not valid YAML: {e}")))),
        }
    }
    (out, None)
}

/// One document as a manifest, or every problem it has: its kind, name, extra fields and each
/// field of its spec the rules refuse are named together, so one plan shows all there is to fix
/// in it (a document that is not a mapping, or whose kind is unknown, is one problem).
fn manifest(path: &str, document: usize, value: Value) -> Result<Manifest, Vec<ManifestProblem>> {
    let problem = |field: &str, message: String| ManifestProblem {
        path: path.to_owned(),
        document,
        field: field.to_owned(),
        message,
    };
    let Value::Object(mut fields) = value else {
        return Err(vec![problem(
            "",
            "must be a mapping with kind, name and spec".into(),
        )]);
    };
    let mut problems = Vec::new();
    let kind = match fields.remove("kind") {
        Some(Value::String(k)) => ResourceKind::parse(&k).or_else(|| {
            problems.push(problem(
                "kind",
                format!("{k:?} is not one of endpoint, target, flow"),
            ));
            None
        }),
        Some(_) => {
            problems.push(problem("kind", "must be a string".into()));
            None
        }
        None => {
            problems.push(problem("kind", "is missing".into()));
            None
        }
    };
    let name = match fields.remove("name") {
        Some(Value::String(n)) => match switchyard_protocol::validate_name(&n) {
            Ok(()) => Some(n),
            Err(e) => {
                problems.push(problem("name", format!("{n:?} {e}")));
                None
            }
        },
        Some(_) => {
            problems.push(problem("name", "must be a string".into()));
            None
        }
        None => {
            problems.push(problem("name", "is missing".into()));
            None
        }
    };
    let spec = fields.remove("spec");
    if spec.is_none() {
        problems.push(problem("spec", "is missing".into()));
    }
    problems.extend(fields.keys().map(|unknown| {
        problem(
            unknown,
            "is not a manifest field (expected kind, name, spec)".into(),
        )
    }));
    // The spec's rules depend on the kind: without one it cannot be checked.
    let spec = match (kind, spec) {
        (Some(kind), Some(spec)) => match kind.spec_problems(&spec) {
            Ok(spec) => Some(spec),
            Err(refused) => {
                problems.extend(refused.into_iter().map(|e| problem(&e.field, e.message)));
                None
            }
        },
        _ => None,
    };
    match (kind, name, spec) {
        (Some(kind), Some(name), Some(spec)) if problems.is_empty() => Ok(Manifest {
            kind,
            name,
            spec,
            path: path.to_owned(),
            document,
        }),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn file(path: &str, text: &str) -> (String, Vec<u8>) {
        (path.to_owned(), text.as_bytes().to_vec())
    }

    fn problems(files: &[(String, Vec<u8>)]) -> Vec<ManifestProblem> {
        match parse_all(files) {
            Err(CoreError::InvalidManifests { problems, .. }) => problems,
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn yaml_files_hold_several_documents_and_json_one_or_an_array() {
        let files = [
            file(
                "deploy/a.yaml",
                "kind: endpoint\nname: orders\nspec:\n  description: Orders\n---\n---\nkind: target\nname: billing\nspec:\n  url: https://billing.example/hook\n",
            ),
            file(
                "deploy/b.json",
                r#"[{"kind":"flow","name":"o2b","spec":{"endpoint":"orders","target":"billing"}}]"#,
            ),
        ];
        let m = parse_all(&files).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!((m[1].kind, m[1].document), (ResourceKind::Target, 3));
        // Canonical: server defaults filled in, so they never show as a diff.
        assert_eq!(m[1].spec["timeout_ms"], 15000);
        assert_eq!(m[2].spec["mode"], "async_inline");
        assert_eq!(m[2].path, "deploy/b.json");
    }

    #[test]
    fn every_problem_names_its_file_document_and_field() {
        let files = [
            file(
                "a.yaml",
                "kind: endpoint\nname: ok\nspec: {}\n---\nkind: target\nname: t\nspec:\n  url: ftp://x\n",
            ),
            file("b.yaml", "kind: widget\nname: w\nspec: {}\n"),
            file("c.yaml", "kind: endpoint\nname: Bad_Name\nspec: {}\n"),
            file(
                "d.yaml",
                "kind: endpoint\nname: e\nspec: {}\nmetadata: {}\n",
            ),
            file(
                "e.yaml",
                "kind: endpoint\nname: e2\nspec:\n  descriptin: typo\n",
            ),
            file("f.yaml", "kind: endpoint\n  name: [unclosed\n"),
            file("g.json", "{\"kind\": "),
        ];
        let p = problems(&files);
        let got: Vec<(&str, usize, &str)> = p
            .iter()
            .map(|p| (p.path.as_str(), p.document, p.field.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("a.yaml", 2, "spec.url"),
                ("b.yaml", 1, "kind"),
                ("c.yaml", 1, "name"),
                ("d.yaml", 1, "metadata"),
                ("e.yaml", 1, "spec"),
                ("f.yaml", 1, ""),
                ("g.json", 1, ""),
            ]
        );
        assert!(p[4].message.contains("descriptin"), "{}", p[4].message);
    }

    #[test]
    fn a_document_with_several_problems_names_each_of_them() {
        let files = [file(
            "deploy/t.yaml",
            "kind: target\nname: Bad_Name\nspec:\n  url: ftp://x\n  timeout_ms: 0\n  headers: {Webhook-Id: x, X-Ok: fine}\nlabels: {}\n",
        )];
        let p = problems(&files);
        let fields: Vec<&str> = p.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "name",
                "labels",
                "spec.url",
                "spec.timeout_ms",
                "spec.headers.Webhook-Id"
            ]
        );
        assert!(
            p.iter()
                .all(|p| p.path == "deploy/t.yaml" && p.document == 1)
        );
        // The plan's message lists them all, with the count of documents refused.
        let message = parse_all(&files).unwrap_err().to_string();
        assert!(
            message.contains("spec.timeout_ms: must be between 1 and 120000"),
            "{message}"
        );
        assert!(
            message.contains("spec.url: must use http or https"),
            "{message}"
        );
    }

    #[test]
    fn a_name_declared_twice_is_an_error_naming_both_places() {
        let files = [
            file("a.yaml", "kind: endpoint\nname: orders\nspec: {}\n"),
            file("b.yaml", "kind: endpoint\nname: orders\nspec: {}\n"),
            // The same name in another kind is another resource.
            file(
                "c.yaml",
                "kind: target\nname: orders\nspec: {url: 'https://x.example'}\n",
            ),
        ];
        let p = problems(&files);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].path.as_str(), p[0].field.as_str()),
            ("b.yaml", "name")
        );
        assert!(p[0].message.contains("a.yaml"), "{}", p[0].message);
    }

    #[test]
    fn the_kind_may_be_plural_and_values_keep_their_json_types() {
        let m = parse_all(&[file(
            "t.yml",
            "kind: targets\nname: t\nspec:\n  url: https://x.example\n  timeout_ms: 2000\n  headers: {X-Team: ops}\n",
        )])
        .unwrap();
        assert_eq!(
            m[0].spec,
            json!({"url": "https://x.example", "timeout_ms": 2000, "headers": {"X-Team": "ops"}})
        );
    }
}
