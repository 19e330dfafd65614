//! OpenAPI operations and schemas of retirement sessions (src/retirement/).

use switchyard_protocol::{
    Blocker, DlqDisposition, Retirement, RetirementDryRun, RetirementImpact, RetirementList,
    RetirementRequest, RetirementState, RetirementStep,
};
use utoipa::openapi::ComponentsBuilder;
use utoipa::openapi::path::Operation;
use utoipa::{PartialSchema, ToSchema};

use super::{Op, operation, path_param, query_param};

/// `GET /v1/retirements`.
pub fn list() -> Operation {
    operation(Op {
        summary: "Retirements, newest first".into(),
        tag: "retirements",
        keyed: false,
        if_match: false,
        params: vec![
            query_param(
                "state",
                "Only retirements in this state: blocked | draining | disabled | \
                 scheduled | deleted | cancelled",
            ),
            query_param("limit", "1-200, default 50"),
        ],
        body: None,
        ok: ("200", "The retirements", Some("RetirementList".into())),
        errors: &[],
    })
}

/// `PUT /v1/retirements/{id}`: start one.
pub fn start() -> Operation {
    operation(Op {
        summary: "Start retiring an endpoint, target or flow (keyed by the retirement id): \
                  201 new, 200 the same request again (defaults spelled out or not), 422 \
                  retirement_reused for the same id with another request. The server walks \
                  it blocked (flows reference the resource and cascade_flows is off: \
                  blockers names each) → draining (an endpoint refuses events with 409 \
                  endpoint_disabled, a flow routes no new events, a target takes no new \
                  flows; open deliveries finish or die on their retry schedule, drain_eta) \
                  → disabled → scheduled (grace_seconds, delete_at) → deleted (a tombstone \
                  is kept; dead deliveries kept or purged per dlq), or cancelled. dry_run \
                  answers 200 RetirementDryRun and creates nothing."
            .into(),
        tag: "retirements",
        keyed: false,
        if_match: false,
        params: vec![path_param("id")],
        body: Some("RetirementRequest"),
        ok: (
            "201",
            "Retirement created (200: the same retirement again, or a dry run)",
            Some("Retirement".into()),
        ),
        errors: &[
            ("404", "not_found: no such resource"),
            (
                "409",
                "resource_retiring: another retirement of this resource is still open",
            ),
            ("422", "retirement_reused"),
        ],
    })
}

/// `GET /v1/retirements/{id}`.
pub fn read() -> Operation {
    operation(Op {
        summary: "A retirement: its state, blockers, impact, drain ETA, delete time and \
                  the history of the states it entered"
            .into(),
        tag: "retirements",
        keyed: false,
        if_match: false,
        params: vec![path_param("id")],
        body: None,
        ok: ("200", "The retirement", Some("Retirement".into())),
        errors: &[("404", "not_found")],
    })
}

/// `POST /v1/retirements/{id}/cancel`.
pub fn cancel() -> Operation {
    operation(Op {
        summary: "Cancel a retirement that has not deleted its resource: what it \
                  disabled is enabled again (an endpoint as it was before), \
                  nothing is deleted. A cancelled one answers 200 as it is."
            .into(),
        tag: "retirements",
        keyed: true,
        if_match: false,
        params: vec![path_param("id")],
        body: None,
        ok: ("200", "The cancelled retirement", Some("Retirement".into())),
        errors: &[
            ("404", "not_found"),
            (
                "409",
                "retirement_not_cancellable: it has deleted its resource",
            ),
        ],
    })
}

pub fn components(components: ComponentsBuilder) -> ComponentsBuilder {
    components
        .schema(RetirementRequest::name(), RetirementRequest::schema())
        .schema(DlqDisposition::name(), DlqDisposition::schema())
        .schema(RetirementState::name(), RetirementState::schema())
        .schema(Blocker::name(), Blocker::schema())
        .schema(RetirementImpact::name(), RetirementImpact::schema())
        .schema(RetirementStep::name(), RetirementStep::schema())
        .schema(Retirement::name(), Retirement::schema())
        .schema(RetirementDryRun::name(), RetirementDryRun::schema())
        .schema(RetirementList::name(), RetirementList::schema())
}
