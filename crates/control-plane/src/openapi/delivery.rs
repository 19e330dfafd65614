//! OpenAPI operations and schemas of the delivery pipeline: events, deliveries, the DLQ, replay
//! sessions and the edge-plane protocol.

use switchyard_protocol::{
    Attempt, AttemptFigures, AttemptOutcome, Delivery, DeliveryMetrics, DeliveryState, DlqCell,
    DlqEntry, DlqFilter, DlqGroup, DlqGroupBy, DlqStats, EdgeAttemptAck, EdgeAttemptReport,
    EdgeLease, EdgeLeaseRequest, ErrorClass, Event, EventList, Hop, LatencyMs, MetricsBucket,
    MetricsGroup, MetricsGroupBy, MetricsTotals, MetricsWindow, RelayedAttempt, ReplayCounts,
    ReplayDryRun, ReplayItem, ReplayItemStatus, ReplayRequest, ReplaySelection, ReplaySession,
    ReplayStatus, SubmitEventRequest, SubmitEventResponse,
};
use utoipa::openapi::ComponentsBuilder;
use utoipa::openapi::path::Operation;
use utoipa::{PartialSchema, ToSchema};

use super::{Op, operation, page_schema, path_param, query_param};

const DLQ_FILTER: [(&str, &str); 6] = [
    ("endpoint", "Only deliveries of this endpoint"),
    ("target", "Only deliveries to this target"),
    ("flow", "Only deliveries through this flow"),
    (
        "error_class",
        "http_4xx | http_5xx | timeout | connect | tls | forbidden_address",
    ),
    ("since", "Dead at or after this RFC 3339 instant"),
    ("until", "Dead before this RFC 3339 instant"),
];

/// A read: `GET` answering 200 with `schema`, or 404.
fn get(
    summary: &str,
    tag: &str,
    params: Vec<utoipa::openapi::path::Parameter>,
    ok: &str,
    schema: &str,
) -> Operation {
    operation(Op {
        summary: summary.into(),
        tag,
        keyed: false,
        if_match: false,
        params,
        body: None,
        ok: ("200", ok, Some(schema.into())),
        errors: &[("404", "not_found")],
    })
}

/// `POST /v1/events`.
pub fn submit_event() -> Operation {
    operation(Op {
        summary: "Submit an event. Dedup on (endpoint, event_key) within the retention \
                  window: a duplicate answers 200 with the original and duplicate: true. \
                  202 when accepted; with a matching sync flow, the answer comes after \
                  its first attempt: 200 if it succeeded, 202 if it failed (retries \
                  continue). No Idempotency-Key: event_key is the dedup key."
            .into(),
        tag: "events",
        keyed: false,
        if_match: false,
        params: vec![],
        body: Some("SubmitEventRequest"),
        ok: (
            "202",
            "Accepted (200: duplicate, or sync first attempt succeeded)",
            Some("SubmitEventResponse".into()),
        ),
        errors: &[
            ("404", "not_found (endpoint)"),
            ("409", "endpoint_disabled"),
        ],
    })
}

/// `GET /v1/events`.
pub fn find_events() -> Operation {
    operation(Op {
        summary: "Find events by event key: every event of the tenant with that key \
                  (optionally on one endpoint), newest first, each with its deliveries and \
                  their attempts. A key can hold several events: after the dedup window, or \
                  on different endpoints. event_key is required (400 validation_failed, \
                  field event_key); limit 1-100, default 20; more: true when there were more."
            .into(),
        tag: "events",
        keyed: false,
        if_match: false,
        params: vec![
            query_param("event_key", "Required: the event_key given at submission"),
            query_param("endpoint", "Only events submitted on this endpoint"),
            query_param("limit", "1-100, default 20"),
        ],
        body: None,
        ok: (
            "200",
            "The matching events (possibly none)",
            Some("EventList".into()),
        ),
        errors: &[],
    })
}

/// `GET /v1/events/{id}`.
pub fn read_event() -> Operation {
    get(
        "An event with its deliveries and their attempts",
        "events",
        vec![path_param("id")],
        "The event",
        "Event",
    )
}

/// `GET /v1/deliveries/{id}`.
pub fn read_delivery() -> Operation {
    get(
        "A delivery with its full attempt history and the next planned attempt",
        "events",
        vec![path_param("id")],
        "The delivery",
        "Delivery",
    )
}

/// `GET /v1/dlq`: the dead deliveries.
pub fn dlq_list() -> Operation {
    let mut params: Vec<_> = DLQ_FILTER.iter().map(|(n, d)| query_param(n, d)).collect();
    params.push(query_param("limit", "1-500, default 50"));
    params.push(query_param("cursor", "next_cursor of the previous page"));
    get(
        "Dead deliveries, newest first, filtered, cursor-paginated",
        "dlq",
        params,
        "One page",
        "DlqEntryPage",
    )
}

/// `GET /v1/dlq/stats`: their counts.
pub fn dlq_stats() -> Operation {
    let mut params = vec![query_param(
        "group_by",
        "target (default) | error_class | hour | error_class,target (two dimensions: rows)",
    )];
    params.extend(DLQ_FILTER.iter().map(|(n, d)| query_param(n, d)));
    get(
        "Counts of dead deliveries matching the filter (the same as GET /v1/dlq), grouped \
         by target, error_class or hour (groups), or by error_class,target (rows: one per \
         pair present). total: the matching dead deliveries.",
        "dlq",
        params,
        "Counts",
        "DlqStats",
    )
}

/// `GET /v1/metrics/deliveries`.
pub fn metrics() -> Operation {
    get(
        "Delivery health over a window ending now: per target, endpoint or flow, the \
         attempts that finished, successes, failures by error class, success rate, \
         latency percentiles (from a fixed histogram), the current run of failures, and \
         chart buckets; plus the tenant's totals (events accepted, pending, in flight, \
         dead, replays running). Read from rollups kept with every recorded attempt. A \
         figure that cannot be computed is null.",
        "metrics",
        vec![
            query_param("window", "15m | 1h (default) | 24h | 7d"),
            query_param("group_by", "target (default) | endpoint | flow"),
        ],
        "Health report",
        "DeliveryMetrics",
    )
}

/// `GET /v1/replays`: the sessions, without items.
pub fn replay_list() -> Operation {
    get(
        "Replay sessions, newest first (without items)",
        "replays",
        vec![
            query_param("limit", "1-200, default 50"),
            query_param("cursor", "next_cursor of the previous page"),
        ],
        "One page",
        "ReplaySessionPage",
    )
}

/// `PUT /v1/replays/{id}`: start a session.
pub fn replay_start() -> Operation {
    operation(Op {
        summary: "Start a replay session (keyed by the session id): 201 new, 200 the same \
                  request again (nothing new happens), 422 replay_session_reused for the same \
                  id with another body. Each selected dead delivery is re-delivered at most \
                  once per session, as a new delivery linked to it. dry_run answers 200 with \
                  the count and creates nothing."
            .into(),
        tag: "replays",
        keyed: false,
        if_match: false,
        params: vec![path_param("id")],
        body: Some("ReplayRequest"),
        ok: (
            "201",
            "Session created (200: the same session again; dry run: ReplayDryRun)",
            Some("ReplaySession".into()),
        ),
        errors: &[("422", "replay_session_reused")],
    })
}

/// `GET /v1/replays/{id}`.
pub fn replay_read() -> Operation {
    get(
        "A replay session with counts and per-item results",
        "replays",
        vec![path_param("id")],
        "The session",
        "ReplaySession",
    )
}

/// `POST /v1/replays/{id}/cancel`.
pub fn replay_cancel() -> Operation {
    operation(Op {
        summary: "Cancel a replay session: unsent re-deliveries are withdrawn and their \
                  originals return to the DLQ; in-flight attempts finish and are not \
                  retried."
            .into(),
        tag: "replays",
        keyed: true,
        if_match: false,
        params: vec![path_param("id")],
        body: None,
        ok: ("200", "The cancelled session", Some("ReplaySession".into())),
        errors: &[("404", "not_found")],
    })
}

/// `POST /v1/edges/{name}/lease`: the edge-plane protocol's lease.
pub fn edge_lease() -> Operation {
    operation(Op {
        summary: "Edge plane: lease due async_relay attempts of flows naming this edge. \
                  Each comes signed, with a lease token; an unreported lease that \
                  expires counts as a failed attempt (timeout)."
            .into(),
        tag: "edge",
        keyed: false,
        if_match: false,
        params: vec![path_param("name")],
        body: Some("EdgeLeaseRequest"),
        ok: (
            "200",
            "Leased attempts (possibly none)",
            Some("EdgeLease".into()),
        ),
        errors: &[],
    })
}

/// `POST /v1/edges/{name}/attempts/{attempt_id}`: an edge's report.
pub fn edge_report() -> Operation {
    operation(Op {
        summary: "Edge plane: report an attempt's outcome (idempotent by attempt id, \
                  fenced by the lease token)."
            .into(),
        tag: "edge",
        keyed: false,
        if_match: false,
        params: vec![path_param("name"), path_param("attempt_id")],
        body: Some("EdgeAttemptReport"),
        ok: ("200", "Acknowledged", Some("EdgeAttemptAck".into())),
        errors: &[("404", "not_found (no such attempt leased to this edge)")],
    })
}

pub fn components(components: ComponentsBuilder) -> ComponentsBuilder {
    components
        .schema(SubmitEventRequest::name(), SubmitEventRequest::schema())
        .schema(SubmitEventResponse::name(), SubmitEventResponse::schema())
        .schema(Event::name(), Event::schema())
        .schema(EventList::name(), EventList::schema())
        .schema(Delivery::name(), Delivery::schema())
        .schema(DeliveryState::name(), DeliveryState::schema())
        .schema(Attempt::name(), Attempt::schema())
        .schema(AttemptOutcome::name(), AttemptOutcome::schema())
        .schema(ErrorClass::name(), ErrorClass::schema())
        .schema(Hop::name(), Hop::schema())
        .schema(DlqFilter::name(), DlqFilter::schema())
        .schema(DlqEntry::name(), DlqEntry::schema())
        .schema("DlqEntryPage", page_schema("DlqEntry"))
        .schema(DlqGroupBy::name(), DlqGroupBy::schema())
        .schema(DlqGroup::name(), DlqGroup::schema())
        .schema(DlqCell::name(), DlqCell::schema())
        .schema(DlqStats::name(), DlqStats::schema())
        .schema(DeliveryMetrics::name(), DeliveryMetrics::schema())
        .schema(MetricsWindow::name(), MetricsWindow::schema())
        .schema(MetricsGroupBy::name(), MetricsGroupBy::schema())
        .schema(MetricsTotals::name(), MetricsTotals::schema())
        .schema(MetricsGroup::name(), MetricsGroup::schema())
        .schema(AttemptFigures::name(), AttemptFigures::schema())
        .schema(MetricsBucket::name(), MetricsBucket::schema())
        .schema(LatencyMs::name(), LatencyMs::schema())
        .schema(ReplayRequest::name(), ReplayRequest::schema())
        .schema(ReplaySelection::name(), ReplaySelection::schema())
        .schema(ReplayDryRun::name(), ReplayDryRun::schema())
        .schema(ReplayStatus::name(), ReplayStatus::schema())
        .schema(ReplayItemStatus::name(), ReplayItemStatus::schema())
        .schema(ReplayItem::name(), ReplayItem::schema())
        .schema(ReplayCounts::name(), ReplayCounts::schema())
        .schema(ReplaySession::name(), ReplaySession::schema())
        .schema("ReplaySessionPage", page_schema("ReplaySession"))
        .schema(EdgeLeaseRequest::name(), EdgeLeaseRequest::schema())
        .schema(EdgeLease::name(), EdgeLease::schema())
        .schema(RelayedAttempt::name(), RelayedAttempt::schema())
        .schema(EdgeAttemptReport::name(), EdgeAttemptReport::schema())
        .schema(EdgeAttemptAck::name(), EdgeAttemptAck::schema())
}
