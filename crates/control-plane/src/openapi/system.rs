//! OpenAPI operations of the system routes: liveness, readiness, metrics and server info.

use utoipa::openapi::ContentBuilder;
use utoipa::openapi::path::{Operation, OperationBuilder};
use utoipa::openapi::response::{ResponseBuilder, ResponsesBuilder};

use super::{Op, operation, problem_response};

/// `GET /healthz`.
pub fn healthz() -> Operation {
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
        .build()
}

/// `GET /readyz`.
pub fn readyz() -> Operation {
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
        .build()
}

/// `GET /v1/info`.
pub fn info() -> Operation {
    operation(Op {
        summary: "Server version, idempotency retention, retry schedule, features".into(),
        tag: "system",
        keyed: false,
        if_match: false,
        params: vec![],
        body: None,
        ok: ("200", "Server info", Some("ServerInfo".into())),
        errors: &[],
    })
}

/// `GET /metrics` (docs/prometheus.md): Prometheus text, not JSON; on the API's listener
/// unless `--metrics-listen` moves it; behind its own token when `--metrics-token-file` is set.
pub fn metrics() -> Operation {
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
