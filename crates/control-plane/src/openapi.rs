//! The OpenAPI 3.1 document. Each API route is declared with its operation (`route`), so
//! the router and the document come from one declaration: neither can hold a path or a
//! method the other lacks. `document` adds the protocol types' schemas and the constraints.

use axum::handler::Handler;
use axum::routing::{MethodFilter, on};
use switchyard_protocol::addresses::TargetAddresses;
use switchyard_protocol::{
    ApplyRequest, CreateRequest, EndpointSpec, EndpointStatus, ErrorCode, FlowMode, FlowSpec,
    FlowStatus, Problem, ResourceKind, ServerInfo, SigningSecretInfo, TargetSpec, TargetStatus,
    TargetTestRequest, TargetTestResult, UpdateRequest,
};
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, ParameterBuilder, ParameterIn, PathItem, Paths,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{ResponseBuilder, ResponsesBuilder};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathsBuilder, Ref,
    Required,
};
use utoipa::{PartialSchema, ToSchema};
use utoipa_axum::router::UtoipaMethodRouter;

pub mod client_certs;
mod constraints;
pub mod delivery;
pub mod diagnostics;
mod limits;
pub mod resources;
pub mod retirements;
pub mod secrets;
pub mod system;
pub mod tokens;

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
    for (status, description) in op.errors.iter().chain(&[
        ("400", bad_request),
        ("401", "unauthorized"),
        (
            "403",
            "forbidden_role: the token's role may not make this call (x-switchyard-role \
                 names the role it needs)",
        ),
    ]) {
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

/// One API route with its OpenAPI operation: the handler answers `method` on `path`, and the
/// document describes that method on that path, from this one call.
pub fn route<H, T, S>(
    path: &str,
    method: HttpMethod,
    handler: H,
    operation: Operation,
) -> UtoipaMethodRouter<S>
where
    H: Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    let filter = match method {
        HttpMethod::Get => MethodFilter::GET,
        HttpMethod::Post => MethodFilter::POST,
        HttpMethod::Put => MethodFilter::PUT,
        HttpMethod::Patch => MethodFilter::PATCH,
        HttpMethod::Delete => MethodFilter::DELETE,
        HttpMethod::Head => MethodFilter::HEAD,
        HttpMethod::Options => MethodFilter::OPTIONS,
        HttpMethod::Trace => MethodFilter::TRACE,
    };
    let paths = PathsBuilder::new()
        .path(path, PathItem::new(method, operation))
        .build();
    (Vec::new(), paths, on(filter, handler))
}

/// The document `GET /openapi.json` serves: the routes' operations (`paths`, from the
/// router), the protocol types' schemas, and the constraints the server validates written in
/// (`constraints`).
pub fn document(paths: Paths) -> serde_json::Value {
    let mut doc =
        serde_json::to_value(with_components(paths)).expect("the OpenAPI document serializes");
    constraints::apply(&mut doc);
    mark_roles(&mut doc);
    doc
}

/// Each operation says the role it needs (`x-switchyard-role`, from the one table in
/// src/auth/roles.rs); a public one has no 403.
fn mark_roles(doc: &mut serde_json::Value) {
    let Some(paths) = doc.get_mut("paths").and_then(|p| p.as_object_mut()) else {
        return;
    };
    for (template, item) in paths {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item {
            let Ok(method) = axum::http::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
            else {
                continue;
            };
            let Some(op) = op.as_object_mut() else {
                continue;
            };
            match crate::auth::roles::needed(&method, template) {
                Some(role) => {
                    op.insert("x-switchyard-role".into(), role.as_str().into());
                }
                None => {
                    if let Some(responses) = op.get_mut("responses").and_then(|r| r.as_object_mut())
                    {
                        responses.remove("403");
                    }
                }
            }
        }
    }
}

fn with_components(paths: Paths) -> OpenApi {
    let mut components = ComponentsBuilder::new().security_scheme(
        "bearer",
        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
    );
    components = components
        .schema(Problem::name(), Problem::schema())
        .schema(ErrorCode::name(), ErrorCode::schema())
        .schema(ServerInfo::name(), ServerInfo::schema())
        .schema(TargetAddresses::name(), TargetAddresses::schema())
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
    components = resources::components(components);

    components = delivery::components(components);
    components = secrets::components(components);
    components = client_certs::components(components);
    components = tokens::components(components);
    components = diagnostics::components(components);
    components =
        retirements::components(components).schema(ResourceKind::name(), ResourceKind::schema());

    let mut doc = OpenApiBuilder::new()
        .info(InfoBuilder::new().title("Switchyard control plane").version(env!("CARGO_PKG_VERSION"))
            .description(Some("Endpoints, targets and flows of an event-delivery platform. Errors are application/problem+json (RFC 9457) with a stable `code`.")).build())
        .paths(paths)
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
