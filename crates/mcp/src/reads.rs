//! The read tools: the local cache and outbox, and the control plane's DLQ, events and
//! replay sessions. None of them queues anything.

use serde_json::{Map, Value};
use switchyard_core::{DlqQuery, OpState, OutboxFilter, OutboxOp, ResourceKind};

use crate::args::*;
use crate::error::{ToolError, parse_args};
use crate::keys::{check_request_key, derived_key};
use crate::server::{McpServer, Summary};
use crate::views::*;

type Args<'a> = Option<&'a Map<String, Value>>;

impl Summary for ResourceList {}
impl Summary for ResourceResult {}
impl Summary for OutboxStatus {}
impl Summary for DlqPageView {}
impl Summary for DlqStatsView {}
impl Summary for EventsView {}
impl Summary for ReplayStatusView {}

pub async fn list_resources(srv: &McpServer, args: Args<'_>) -> Result<ResourceList, ToolError> {
    let a: ListResourcesArgs = parse_args(args)?;
    let limit = a.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ToolError::invalid("limit", "must be 1-500"));
    }
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    if a.refresh == Some(true) {
        console.refresh(profile).await?;
    }
    let kind = ResourceKind::from(a.kind);
    let needle = a.name_contains.map(|n| n.to_lowercase());
    let mut items: Vec<ResourceView> = console
        .list_resources(profile, kind)
        .await?
        .into_iter()
        .filter(|r| {
            needle
                .as_deref()
                .is_none_or(|n| r.name.to_lowercase().contains(n))
        })
        .map(ResourceView::from)
        .collect();
    let truncated = items.len() > limit as usize;
    items.truncate(limit as usize);
    Ok(ResourceList {
        profile: profile.clone(),
        kind: kind.as_str().to_owned(),
        items,
        truncated,
    })
}

pub async fn get_resource(srv: &McpServer, args: Args<'_>) -> Result<ResourceResult, ToolError> {
    let a: GetResourceArgs = parse_args(args)?;
    check_name("name", &a.name)?;
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    let kind = ResourceKind::from(a.kind);
    if a.live == Some(true) {
        console.fetch_live(profile, kind, &a.name).await?;
    }
    let r = console.get_resource(profile, kind, &a.name).await?;
    Ok(ResourceResult {
        profile: profile.clone(),
        resource: r.into(),
    })
}

/// An op and, when an operator retried it as new, every later attempt (the latest last).
pub(crate) async fn chain(srv: &McpServer, first: OutboxOp) -> Result<Vec<OutboxOp>, ToolError> {
    let mut ops = vec![first];
    // Bounded: a chain is as long as the number of times a person retried it.
    for _ in 0..100 {
        let Some(next) = ops.last().and_then(|o| o.replaced_by) else {
            break;
        };
        ops.push(srv.inner.console.op(next).await?);
    }
    Ok(ops)
}

/// The views of `ops`, each live one with the earlier writes it waits for.
pub(crate) async fn op_views(
    srv: &McpServer,
    ops: &[OutboxOp],
) -> Result<Vec<OperationView>, ToolError> {
    let mut views = Vec::with_capacity(ops.len());
    for op in ops {
        let mut view = OperationView::from(op);
        if matches!(op.state, OpState::Pending | OpState::Sending) {
            view.waiting_for = srv
                .inner
                .console
                .waiting_for(&srv.inner.config.profile, op.id)
                .await?;
        }
        views.push(view);
    }
    Ok(views)
}

pub async fn outbox_status(srv: &McpServer, args: Args<'_>) -> Result<OutboxStatus, ToolError> {
    let a: OutboxStatusArgs = parse_args(args)?;
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    let counts = console.pending_counts(profile).await?.into();
    let mut status = OutboxStatus {
        profile: profile.clone(),
        counts,
        operations: Vec::new(),
        replays: Vec::new(),
    };
    match (a.op_id, a.request_key) {
        (Some(_), Some(_)) => Err(ToolError::invalid(
            "op_id",
            "give op_id or request_key, not both",
        )),
        (Some(id), None) => {
            let op = console.op(id).await?;
            if &op.profile != profile {
                return Err(ToolError::new(
                    "not_found",
                    format!("outbox operation {id} not found"),
                ));
            }
            status.operations = op_views(srv, &chain(srv, op).await?).await?;
            Ok(status)
        }
        (None, Some(key)) => {
            check_request_key(&key)?;
            let derived = derived_key(profile, &key);
            if let Some(op) = console.op_by_key(&derived).await? {
                status.operations = op_views(srv, &chain(srv, op).await?).await?;
            }
            if let Some(op) = console.replay_start(profile, &derived).await? {
                status.replays.push((&op).into());
            }
            if status.operations.is_empty() && status.replays.is_empty() {
                return Err(ToolError {
                    code: "not_found",
                    field: Some("request_key".into()),
                    message: "no write was queued with this request_key in this profile".into(),
                });
            }
            Ok(status)
        }
        (None, None) => {
            let limit = a.limit.unwrap_or(50);
            if !(1..=200).contains(&limit) {
                return Err(ToolError::invalid("limit", "must be 1-200"));
            }
            let live = console
                .list_outbox(OutboxFilter {
                    profile: Some(profile.clone()),
                    limit: Some(limit),
                    ..Default::default()
                })
                .await?;
            status.operations = op_views(srv, &live).await?;
            let replays = console.replay_ops(profile).await?;
            status.replays = replays.iter().take(20).map(Into::into).collect();
            Ok(status)
        }
    }
}

pub async fn dlq_list(srv: &McpServer, args: Args<'_>) -> Result<DlqPageView, ToolError> {
    let a: DlqListArgs = parse_args(args)?;
    let query = DlqQuery {
        filter: a.filter().to_filter("")?,
        limit: a.limit,
        cursor: a.cursor.clone(),
    };
    let page = srv
        .inner
        .console
        .dlq_page(&srv.inner.config.profile, &query)
        .await?;
    Ok(DlqPageView {
        items: page
            .items
            .into_iter()
            .map(|e| serde_json::to_value(e).expect("entry serializes"))
            .collect(),
        next_cursor: page.next_cursor,
    })
}

pub async fn dlq_stats(srv: &McpServer, args: Args<'_>) -> Result<DlqStatsView, ToolError> {
    use switchyard_core::protocol_dlq::DlqGroupBy;
    let a: DlqStatsArgs = parse_args(args)?;
    let group_by = match a.group_by {
        GroupBy::Target => DlqGroupBy::Target,
        GroupBy::ErrorClass => DlqGroupBy::ErrorClass,
        GroupBy::Hour => DlqGroupBy::Hour,
        GroupBy::ErrorClassTarget => DlqGroupBy::ErrorClassTarget,
    };
    let stats = srv
        .inner
        .console
        .dlq_stats(
            &srv.inner.config.profile,
            group_by,
            &a.filter().to_filter("")?,
        )
        .await?;
    let to_values = |v: Value| match v {
        Value::Array(items) => items,
        _ => Vec::new(),
    };
    let json = serde_json::to_value(&stats).expect("stats serialize");
    Ok(DlqStatsView {
        group_by: group_by.as_str().to_owned(),
        total: stats.total,
        groups: to_values(json["groups"].clone()),
        rows: to_values(json["rows"].clone()),
    })
}

pub async fn find_event(srv: &McpServer, args: Args<'_>) -> Result<EventsView, ToolError> {
    let a: FindEventArgs = parse_args(args)?;
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    let events = match (&a.id, &a.key) {
        (Some(id), None) => {
            if a.endpoint.is_some() {
                return Err(ToolError::invalid("endpoint", "only applies with key"));
            }
            vec![serde_json::to_value(console.event(profile, id).await?).expect("serializes")]
        }
        (None, Some(key)) => {
            let list = console
                .find_events(profile, key, a.endpoint.as_deref(), None)
                .await?;
            serde_json::to_value(list).expect("serializes")["items"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        }
        _ => return Err(ToolError::invalid("id", "give id or key (exactly one)")),
    };
    Ok(EventsView { events })
}

pub async fn replay_status(srv: &McpServer, args: Args<'_>) -> Result<ReplayStatusView, ToolError> {
    let a: ReplayStatusArgs = parse_args(args)?;
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    let id = match (a.id, a.request_key) {
        (Some(id), None) => id,
        (None, Some(key)) => {
            check_request_key(&key)?;
            derived_key(profile, &key)
        }
        _ => {
            return Err(ToolError::invalid(
                "id",
                "give id or request_key (exactly one)",
            ));
        }
    };
    let write = console.replay_start(profile, &id).await?;
    let session = match console.replay_session(profile, &id).await {
        Ok(s) => Some(serde_json::to_value(s).expect("session serializes")),
        // Only queued so far: the local row answers.
        Err(switchyard_core::CoreError::NotFound { .. }) if write.is_some() => None,
        Err(e) => return Err(e.into()),
    };
    Ok(ReplayStatusView {
        session,
        write: write.as_ref().map(Into::into),
    })
}
