//! The OpenAPI 3.1 document, built from the route table and the protocol types' schemas.

use switchyard_protocol::{
    ApplyRequest, CreateRequest, EndpointSpec, EndpointStatus, ErrorCode, FlowMode, FlowSpec,
    FlowStatus, Problem, ResourceKind, ServerInfo, SigningSecretInfo, TargetSpec, TargetStatus,
    TargetTestRequest, TargetTestResult, UpdateRequest,
};
use utoipa::openapi::path::{
    HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{ResponseBuilder, ResponsesBuilder};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathsBuilder, Ref,
    Required,
};
use utoipa::{PartialSchema, ToSchema};

mod client_certs;
mod constraints;
mod delivery;
mod diagnostics;
mod limits;
mod retirements;
mod secrets;

const IDEMPOTENCY_DOC: &str = "Required on every mutating request: 1-255 printable ASCII characters, \
as an RFC 8941 string (\"abc\") or a bare token. Scoped to the tenant. The same key with the same \
request (method, path, If-Match, canonical JSON body) replays the stored response byte for byte with \
`Idempotent-Replayed: true`; with a different request it answers 422 idempotency_key_reused; while \
the first is still running, 409 idempotency_key_in_progress with Retry-After. Responses are stored \
once execution began (2xx, 404/409/412, 5xx); 400/401/413/415/429 are not, so a corrected retry with \
the same key runs. Keys are kept for idempotency_retention_seconds (see /v1/info, default 86400).";

fn json_content(schema_ref: &str) -> utoipa::openapi::Content {
    ContentBuilder::new()
        .schema(Some(Ref::from_schema_name(schema_ref)))
        .build()
}

fn problem_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content("application/problem+json", json_content("Problem"))
        .build()
}

/// `GET /metrics` (docs/prometheus.md): Prometheus text, not JSON; on the API's listener
/// unless `--metrics-listen` moves it; behind its own token when `--metrics-token-file` is set.
fn metrics_operation() -> utoipa::openapi::path::Operation {
    let text = ContentBuilder::new()
        .schema(Some(
            utoipa::openapi::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String),
        ))
        .build();
    OperationBuilder::new()
        .summary(Some(
            "Prometheus metrics in the text exposition format (not on this listener when \
             --metrics-listen is set); Bearer the metrics token when --metrics-token-file is set",
        ))
        .tag("system")
        .responses(
            ResponsesBuilder::new()
                .response(
                    "200",
                    ResponseBuilder::new()
                        .description("The metrics (docs/prometheus.md)")
                        .content("text/plain; version=0.0.4", text)
                        .build(),
                )
                .response(
                    "401",
                    problem_response("a metrics token is set and was not presented: unauthorized"),
                )
                .build(),
        )
        .build()
}

fn header_param(name: &str, required: bool, description: &str) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(if required {
            Required::True
        } else {
            Required::False
        })
        .description(Some(description))
        .schema(Some(String::schema()))
        .build()
}

fn path_param(name: &str) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .schema(Some(String::schema()))
        .build()
}

fn query_param(name: &str, description: &str) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(String::schema()))
        .build()
}

struct Op<'a> {
    summary: String,
    tag: &'a str,
    keyed: bool,
    if_match: bool,
    params: Vec<utoipa::openapi::path::Parameter>,
    body: Option<&'a str>,
    ok: (&'a str, &'a str, Option<String>),
    errors: &'a [(&'a str, &'a str)],
}

fn operation(op: Op<'_>) -> utoipa::openapi::path::Operation {
    let mut params = op.params;
    if op.keyed {
        params.push(header_param("Idempotency-Key", true, IDEMPOTENCY_DOC));
    }
    if op.if_match {
        params.push(header_param(
            "If-Match",
            false,
            "Strong ETag of the version you edited (\"3\"); 412 version_mismatch if stale.",
        ));
    }
    let mut ok = ResponseBuilder::new().description(op.ok.1);
    if let Some(schema) = op.ok.2 {
        ok = ok.content("application/json", json_content(&schema));
    }
    let mut responses = ResponsesBuilder::new().response(op.ok.0, ok.build());
    // A target's create, update and apply also refuse a URL naming a forbidden address.
    let writes_target = op.tag == ResourceKind::Target.plural()
        && op.body.is_some_and(|b| {
            ["CreateRequest", "UpdateRequest", "ApplyRequest"]
                .iter()
                .any(|r| b.ends_with(r))
        });
    let bad_request = if writes_target {
        "validation_failed, target_address_forbidden (field spec.url: an IP literal in a \
         loopback, private, link-local or other non-public range, or localhost), \
         idempotency_key_missing or idempotency_key_invalid"
    } else {
        "validation_failed, idempotency_key_missing or idempotency_key_invalid"
    };
    for (status, description) in op
        .errors
        .iter()
        .chain(&[("400", bad_request), ("401", "unauthorized")])
    {
        responses = responses.response(*status, problem_response(description));
    }
    if op.keyed {
        // The key's own 409 shares the status with the operation's domain conflicts.
        let conflict = match op.errors.iter().find(|(status, _)| *status == "409") {
            Some((_, domain)) => {
                format!("idempotency_key_in_progress (with Retry-After), or {domain}")
            }
            None => "idempotency_key_in_progress (with Retry-After), or a domain conflict".into(),
        };
        responses = responses
            .response("409", problem_response(&conflict))
            .response("422", problem_response("idempotency_key_reused"));
    }
    let mut builder = OperationBuilder::new()
        .summary(Some(op.summary))
        .tag(op.tag)
        .parameters(Some(params))
        .responses(responses.build())
        .security(SecurityRequirement::new("bearer", Vec::<String>::new()));
    if let Some(body) = op.body {
        builder = builder.request_body(Some(
            RequestBodyBuilder::new()
                .content("application/json", json_content(body))
                .required(Some(Required::True))
                .build(),
        ));
    }
    builder.build()
}

/// The document `GET /openapi.json` serves: the operations and the protocol types' schemas,
/// with the constraints the server validates written in (`constraints`).
pub fn document() -> serde_json::Value {
    let mut doc = serde_json::to_value(operations()).expect("the OpenAPI document serializes");
    constraints::apply(&mut doc);
    doc
}

fn operations() -> OpenApi {
    let mut paths = PathsBuilder::new();
    for kind in ResourceKind::ALL {
        let plural = kind.plural();
        let tag = plural;
        let res = format!("{}Resource", capitalize(kind.as_str()));
        let [create_body, update_body, apply_body] = ["Create", "Update", "Apply"]
            .map(|op| format!("{}{op}Request", capitalize(kind.as_str())));
        let collection = format!("/v1/{plural}");
        let item = format!("/v1/{plural}/{{name}}");
        let name = || vec![path_param("name")];
        paths = paths
            .path(
                &collection,
                PathItem::new(
                    HttpMethod::Get,
                    operation(Op {
                        summary: format!("List {plural}, ordered by name"),
                        tag,
                        keyed: false,
                        if_match: false,
                        params: vec![
                            query_param("limit", "1-500, default 100"),
                            query_param("cursor", "next_cursor of the previous page"),
                        ],
                        body: None,
                        ok: ("200", "A page", Some(format!("{res}Page"))),
                        errors: &[],
                    }),
                ),
            )
            .path(
                &collection,
                PathItem::new(
                    HttpMethod::Post,
                    operation(Op {
                        summary: format!("Create a {}", kind.as_str()),
                        tag,
                        keyed: true,
                        if_match: false,
                        params: vec![],
                        body: Some(&create_body),
                        ok: ("201", "Created; Location and ETag set", Some(res.clone())),
                        errors: &[("409", "name_taken or reference_missing")],
                    }),
                ),
            )
            .path(
                &item,
                PathItem::new(
                    HttpMethod::Get,
                    operation(Op {
                        summary: format!("Read a {}", kind.as_str()),
                        tag,
                        keyed: false,
                        if_match: false,
                        params: name(),
                        body: None,
                        ok: ("200", "The resource; ETag set", Some(res.clone())),
                        errors: &[("404", "not_found")],
                    }),
                ),
            )
            .path(
                &item,
                PathItem::new(
                    HttpMethod::Patch,
                    operation(Op {
                        summary: format!(
                            "Update a {} with a JSON merge patch of its spec",
                            kind.as_str()
                        ),
                        tag,
                        keyed: true,
                        if_match: true,
                        params: name(),
                        body: Some(&update_body),
                        ok: ("200", "Updated (or unchanged)", Some(res.clone())),
                        errors: &[("404", "not_found"), ("412", "version_mismatch")],
                    }),
                ),
            )
            .path(
                &item,
                PathItem::new(
                    HttpMethod::Put,
                    operation(Op {
                        summary: format!("Apply a {} (declarative upsert)", kind.as_str()),
                        tag,
                        keyed: true,
                        if_match: true,
                        params: name(),
                        body: Some(&apply_body),
                        ok: (
                            "200",
                            "Updated or unchanged (201 when created)",
                            Some(res.clone()),
                        ),
                        errors: &[("412", "version_mismatch")],
                    }),
                ),
            )
            .path(
                &item,
                PathItem::new(
                    HttpMethod::Delete,
                    operation(Op {
                        summary: format!("Delete a {}", kind.as_str()),
                        tag,
                        keyed: true,
                        if_match: true,
                        params: name(),
                        body: None,
                        ok: ("204", "Deleted", None),
                        errors: &[("404", "not_found"), ("412", "version_mismatch")],
                    }),
                ),
            );
    }
    for action in ["disable", "enable"] {
        paths = paths.path(
            format!("/v1/endpoints/{{name}}/{action}"),
            PathItem::new(
                HttpMethod::Post,
                operation(Op {
                    summary: format!("{} an endpoint", capitalize(action)),
                    tag: "endpoints",
                    keyed: true,
                    if_match: true,
                    params: vec![path_param("name")],
                    body: None,
                    ok: ("200", "The endpoint", Some("EndpointResource".into())),
                    errors: &[("404", "not_found"), ("412", "version_mismatch")],
                }),
            ),
        );
    }
    paths = paths.path(
        "/v1/targets/{name}/test",
        PathItem::new(
            HttpMethod::Post,
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
            }),
        ),
    );
    paths = paths
        .path(
            "/healthz",
            PathItem::new(
                HttpMethod::Get,
                OperationBuilder::new()
                    .summary(Some("Liveness: 200 when the store is reachable"))
                    .tag("system")
                    .responses(
                        ResponsesBuilder::new()
                            .response("200", ResponseBuilder::new().description("ok").build())
                            .response(
                                "503",
                                ResponseBuilder::new()
                                    .description("store unreachable")
                                    .build(),
                            )
                            .build(),
                    )
                    .build(),
            ),
        )
        .path(
            "/readyz",
            PathItem::new(
                HttpMethod::Get,
                OperationBuilder::new()
                    .summary(Some(
                        "Readiness: 200 while serving, 503 once draining (stop a load \
                         balancer's traffic) or when the store is unreachable",
                    ))
                    .tag("system")
                    .responses(
                        ResponsesBuilder::new()
                            .response("200", ResponseBuilder::new().description("ready").build())
                            .response(
                                "503",
                                ResponseBuilder::new()
                                    .description("draining, or store unreachable")
                                    .build(),
                            )
                            .build(),
                    )
                    .build(),
            ),
        )
        .path(
            "/metrics",
            PathItem::new(HttpMethod::Get, metrics_operation()),
        )
        .path(
            "/v1/info",
            PathItem::new(
                HttpMethod::Get,
                operation(Op {
                    summary: "Server version, idempotency retention, retry schedule, features"
                        .into(),
                    tag: "system",
                    keyed: false,
                    if_match: false,
                    params: vec![],
                    body: None,
                    ok: ("200", "Server info", Some("ServerInfo".into())),
                    errors: &[],
                }),
            ),
        );

    paths = delivery::paths(paths);
    paths = secrets::paths(paths);
    paths = client_certs::paths(paths);
    paths = diagnostics::paths(paths);
    paths = retirements::paths(paths);

    let mut components = ComponentsBuilder::new().security_scheme(
        "bearer",
        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
    );
    components = components
        .schema(Problem::name(), Problem::schema())
        .schema(ErrorCode::name(), ErrorCode::schema())
        .schema(ServerInfo::name(), ServerInfo::schema())
        .schema(CreateRequest::name(), CreateRequest::schema())
        .schema(UpdateRequest::name(), UpdateRequest::schema())
        .schema(ApplyRequest::name(), ApplyRequest::schema())
        .schema(EndpointSpec::name(), EndpointSpec::schema())
        .schema(EndpointStatus::name(), EndpointStatus::schema())
        .schema(TargetSpec::name(), TargetSpec::schema())
        .schema(TargetStatus::name(), TargetStatus::schema())
        .schema(SigningSecretInfo::name(), SigningSecretInfo::schema())
        .schema(FlowSpec::name(), FlowSpec::schema())
        .schema(FlowMode::name(), FlowMode::schema())
        .schema(FlowStatus::name(), FlowStatus::schema())
        .schema(TargetTestRequest::name(), TargetTestRequest::schema())
        .schema(TargetTestResult::name(), TargetTestResult::schema());
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

    components = delivery::components(components);
    components = secrets::components(components);
    components = client_certs::components(components);
    components = diagnostics::components(components);
    components =
        retirements::components(components).schema(ResourceKind::name(), ResourceKind::schema());

    let mut doc = OpenApiBuilder::new()
        .info(InfoBuilder::new().title("Switchyard control plane").version(env!("CARGO_PKG_VERSION"))
            .description(Some("Endpoints, targets and flows of an event-delivery platform. Errors are application/problem+json (RFC 9457) with a stable `code`.")).build())
        .paths(paths.build())
        .components(Some(components.build()))
        .build();
    limits::add_limit_responses(&mut doc);
    doc
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
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

fn page_schema(item: &str) -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    ObjectBuilder::new()
        .property(
            "items",
            ArrayBuilder::new().items(Ref::from_schema_name(item)),
        )
        .property(
            "next_cursor",
            ObjectBuilder::new().schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                Type::String,
                Type::Null,
            ])),
        )
        .required("items")
        .into()
}
