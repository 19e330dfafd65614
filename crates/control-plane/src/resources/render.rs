//! Rendering resources into the responses that are sent and stored.

use serde_json::Value;
use switchyard_protocol::{Resource, ResourceKind};

use crate::clock::to_datetime;
use crate::store::{ResourceRow, StoredResponse};

pub fn to_wire(row: &ResourceRow) -> Resource {
    Resource {
        kind: row.kind,
        name: row.name.clone(),
        version: row.version,
        created_at: to_datetime(row.created_at),
        updated_at: to_datetime(row.updated_at),
        spec: row.spec.clone(),
        status: row.status.clone(),
    }
}

pub fn location(kind: ResourceKind, name: &str) -> String {
    format!("/v1/{}/{name}", kind.plural())
}

pub fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

/// A JSON response for one resource with its `ETag` (and `Location` when created).
pub fn resource_response(
    status: u16,
    row: &ResourceRow,
    extra_status: Option<Value>,
) -> StoredResponse {
    let mut wire = to_wire(row);
    if let (Some(Value::Object(extra)), Value::Object(status)) = (extra_status, &mut wire.status) {
        status.extend(extra);
    }
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("etag".to_owned(), etag(row.version)),
    ];
    if status == 201 {
        headers.push(("location".to_owned(), location(row.kind, &row.name)));
    }
    StoredResponse {
        status,
        headers,
        body: serde_json::to_vec(&wire).expect("resources serialize"),
    }
}

pub fn no_content() -> StoredResponse {
    StoredResponse {
        status: 204,
        headers: Vec::new(),
        body: Vec::new(),
    }
}
