//! OpenAPI operations and schemas of the diagnostics and their own fixes (src/diagnostics/).

use switchyard_protocol::{
    Diagnostics, DlqRecount, Finding, FindingClass, FindingEvidence, FindingSubject, FixAction,
    RequeueRequest, Requeued, Severity,
};
use utoipa::openapi::ComponentsBuilder;
use utoipa::openapi::path::Operation;
use utoipa::{PartialSchema, ToSchema};

use super::{Op, operation, path_param};

/// `GET /v1/diagnostics`.
pub fn diagnose() -> Operation {
    operation(Op {
        summary: "What is wrong for this tenant, most severe first: stuck \
                  deliveries, unreachable edges, failing targets, disabled endpoints \
                  with a backlog, stalled replays, DLQ counter drift; each finding \
                  with the keyed calls that fix it (docs/recovery.md)"
            .into(),
        tag: "diagnostics",
        keyed: false,
        if_match: false,
        params: vec![],
        body: None,
        ok: ("200", "The findings", Some("Diagnostics".into())),
        errors: &[],
    })
}

/// `POST /v1/deliveries/{id}/requeue`.
pub fn requeue() -> Operation {
    operation(Op {
        summary: "Take back a stuck delivery: only while it is in flight on the \
                  named attempt with its lease expired, that attempt is recorded \
                  as failed (timeout) and the delivery is due again at once"
            .into(),
        tag: "deliveries",
        keyed: true,
        if_match: false,
        params: vec![path_param("id")],
        body: Some("RequeueRequest"),
        ok: ("200", "Requeued", Some("Requeued".into())),
        errors: &[
            ("404", "not_found: no such delivery"),
            (
                "409",
                "delivery_not_stuck: not in flight on that attempt, or its lease \
                 has not expired",
            ),
        ],
    })
}

/// `POST /v1/dlq/recount`.
pub fn recount() -> Operation {
    operation(Op {
        summary: "Recompute the tenant's DLQ counters (GET /v1/dlq/stats) from the \
                  dead deliveries, in one transaction; no delivery changes"
            .into(),
        tag: "dlq",
        keyed: true,
        if_match: false,
        params: vec![],
        body: None,
        ok: ("200", "Recounted", Some("DlqRecount".into())),
        errors: &[],
    })
}

pub fn components(components: ComponentsBuilder) -> ComponentsBuilder {
    components
        .schema(Diagnostics::name(), Diagnostics::schema())
        .schema(Finding::name(), Finding::schema())
        .schema(FindingClass::name(), FindingClass::schema())
        .schema(Severity::name(), Severity::schema())
        .schema(FindingSubject::name(), FindingSubject::schema())
        .schema(FindingEvidence::name(), FindingEvidence::schema())
        .schema(FixAction::name(), FixAction::schema())
        .schema(RequeueRequest::name(), RequeueRequest::schema())
        .schema(Requeued::name(), Requeued::schema())
        .schema(DlqRecount::name(), DlqRecount::schema())
}
