//! OpenAPI operations and schemas of the resources (endpoints, targets, flows): their CRUD
//! operations, the endpoint actions and the target test.

use switchyard_protocol::ResourceKind;
use utoipa::PartialSchema;
use utoipa::openapi::path::Operation;
use utoipa::openapi::{ComponentsBuilder, Ref};

use super::{Op, capitalize, operation, page_schema, path_param, query_param};

/// The names one kind's operations use: its tag, resource schema and request bodies.
struct Names {
    kind: ResourceKind,
    resource: String,
    create_body: String,
    update_body: String,
    apply_body: String,
}

impl Names {
    fn of(kind: ResourceKind) -> Self {
        let [create_body, update_body, apply_body] = ["Create", "Update", "Apply"]
            .map(|op| format!("{}{op}Request", capitalize(kind.as_str())));
        Names {
            kind,
            resource: format!("{}Resource", capitalize(kind.as_str())),
            create_body,
            update_body,
            apply_body,
        }
    }

    fn tag(&self) -> &'static str {
        self.kind.plural()
    }

    fn singular(&self) -> &'static str {
        self.kind.as_str()
    }
}

pub fn list(kind: ResourceKind) -> Operation {
    let names = &Names::of(kind);
    operation(Op {
        summary: format!("List {}, ordered by name", names.tag()),
        tag: names.tag(),
        keyed: false,
        if_match: false,
        params: vec![
            query_param("limit", "1-500, default 100"),
            query_param("cursor", "next_cursor of the previous page"),
        ],
        body: None,
        ok: ("200", "A page", Some(format!("{}Page", names.resource))),
        errors: &[],
    })
}

pub fn create(kind: ResourceKind) -> Operation {
    let names = &Names::of(kind);
    operation(Op {
        summary: format!("Create a {}", names.singular()),
        tag: names.tag(),
        keyed: true,
        if_match: false,
        params: vec![],
        body: Some(&names.create_body),
        ok: (
            "201",
            "Created; Location and ETag set",
            Some(names.resource.clone()),
        ),
        errors: &[("409", "name_taken or reference_missing")],
    })
}

pub fn read(kind: ResourceKind) -> Operation {
    let names = &Names::of(kind);
    operation(Op {
        summary: format!("Read a {}", names.singular()),
        tag: names.tag(),
        keyed: false,
        if_match: false,
        params: vec![path_param("name")],
        body: None,
        ok: (
            "200",
            "The resource; ETag set",
            Some(names.resource.clone()),
        ),
        errors: &[("404", "not_found")],
    })
}

pub fn update(kind: ResourceKind) -> Operation {
    let names = &Names::of(kind);
    operation(Op {
        summary: format!(
            "Update a {} with a JSON merge patch of its spec",
            names.singular()
        ),
        tag: names.tag(),
        keyed: true,
        if_match: true,
        params: vec![path_param("name")],
        body: Some(&names.update_body),
        ok: (
            "200",
            "Updated (or unchanged)",
            Some(names.resource.clone()),
        ),
        errors: &[("404", "not_found"), ("412", "version_mismatch")],
    })
}

pub fn apply(kind: ResourceKind) -> Operation {
    let names = &Names::of(kind);
    operation(Op {
        summary: format!("Apply a {} (declarative upsert)", names.singular()),
        tag: names.tag(),
        keyed: true,
        if_match: true,
        params: vec![path_param("name")],
        body: Some(&names.apply_body),
        ok: (
            "200",
            "Updated or unchanged (201 when created)",
            Some(names.resource.clone()),
        ),
        errors: &[("412", "version_mismatch")],
    })
}

pub fn delete(kind: ResourceKind) -> Operation {
    let names = &Names::of(kind);
    operation(Op {
        summary: format!("Delete a {}", names.singular()),
        tag: names.tag(),
        keyed: true,
        if_match: true,
        params: vec![path_param("name")],
        body: None,
        ok: ("204", "Deleted", None),
        errors: &[("404", "not_found"), ("412", "version_mismatch")],
    })
}

/// `POST /v1/endpoints/{name}/disable` (`"disable"`) and `…/enable` (`"enable"`).
pub fn endpoint_action(action: &str) -> Operation {
    operation(Op {
        summary: format!("{} an endpoint", capitalize(action)),
        tag: "endpoints",
        keyed: true,
        if_match: true,
        params: vec![path_param("name")],
        body: None,
        ok: ("200", "The endpoint", Some("EndpointResource".into())),
        errors: &[("404", "not_found"), ("412", "version_mismatch")],
    })
}

/// `POST /v1/targets/{name}/test`.
pub fn target_test() -> Operation {
    operation(Op {
        summary: "Send one signed test webhook to a target (an external effect: \
                  the webhook-id is derived from the Idempotency-Key); with secret_id, \
                  signed with that secret only (a rotation's verify step); with \
                  client_certificate_id, presenting that client certificate in the TLS \
                  handshake instead of the active one"
            .into(),
        tag: "targets",
        keyed: true,
        if_match: false,
        params: vec![path_param("name")],
        body: Some("TargetTestRequest"),
        ok: (
            "200",
            "What the receiver answered (ok: false when it failed)",
            Some("TargetTestResult".into()),
        ),
        errors: &[
            (
                "404",
                "not_found: the target, or the secret_id or client_certificate_id it names",
            ),
            (
                "409",
                "secret_expired or certificate_expired: the secret or certificate it \
                 names has expired",
            ),
        ],
    })
}

/// The resource schemas and their pages.
pub fn components(mut components: ComponentsBuilder) -> ComponentsBuilder {
    for (kind, spec, status) in [
        ("Endpoint", "EndpointSpec", "EndpointStatus"),
        ("Target", "TargetSpec", "TargetStatus"),
        ("Flow", "FlowSpec", "FlowStatus"),
    ] {
        components = components
            .schema(format!("{kind}Resource"), resource_schema(spec, status))
            .schema(
                format!("{kind}ResourcePage"),
                page_schema(&format!("{kind}Resource")),
            );
    }
    components
}

fn resource_schema(spec: &str, status: &str) -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .property("kind", ResourceKind::schema())
        .property(
            "name",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"))
                .max_length(Some(63)),
        )
        .property(
            "version",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1)),
        )
        .property(
            "created_at",
            ObjectBuilder::new().schema_type(Type::String).format(Some(
                utoipa::openapi::SchemaFormat::KnownFormat(utoipa::openapi::KnownFormat::DateTime),
            )),
        )
        .property(
            "updated_at",
            ObjectBuilder::new().schema_type(Type::String).format(Some(
                utoipa::openapi::SchemaFormat::KnownFormat(utoipa::openapi::KnownFormat::DateTime),
            )),
        )
        .property("spec", Ref::from_schema_name(spec))
        .property("status", Ref::from_schema_name(status))
        .required("kind")
        .required("name")
        .required("version")
        .required("created_at")
        .required("updated_at")
        .required("spec")
        .required("status")
        .into()
}
