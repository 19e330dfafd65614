//! The write tools. Each is queued in the console's outbox under the key derived from
//! (profile, request key), with the arguments' fingerprint; the core answers the operation
//! already queued under that key (`replayed`) or refuses a different write
//! (`request_key_reused`) inside one write transaction, so concurrent calls, other
//! `switchyard mcp` processes and restarts all find one operation. Then the call waits up to
//! `wait_seconds` for the sync engine to land it.

use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use serde_json::{Map, Value};
use switchyard_core::protocol_replay::{ReplaySelection, ReplaySession, ReplayStatus};
use switchyard_core::{
    EnqueueOptions, OpKind, OpState, Origin, OutboxOp, ReplayOp, ReplayOpState, ReplayStart,
    ResourceKind, SyncOptions, Write,
};

use crate::args::*;
use crate::error::{ToolError, parse_args};
use crate::keys::{check_request_key, derived_key, fingerprint};
use crate::reads::{chain, op_views};
use crate::server::{McpServer, Summary};
use crate::tools::Mode;
use crate::views::*;

type Args<'a> = Option<&'a Map<String, Value>>;

impl Summary for WriteResult {
    fn summary(&self) -> String {
        let op = self.latest_attempt.as_ref().unwrap_or(&self.operation);
        format!(
            " {}/{} op={} key={:?} state={}{}",
            op.kind,
            op.name,
            op.id,
            self.request_key,
            state_word(self.state),
            if self.replayed { " (replayed)" } else { "" }
        )
    }

    fn op(&self) -> Option<(i64, String)> {
        let op = self.latest_attempt.as_ref().unwrap_or(&self.operation);
        Some((op.id, format!("{}/{}", op.kind, op.name)))
    }
}

impl Summary for ReplayResult {
    fn summary(&self) -> String {
        format!(
            " session={} key={:?} state={}{}",
            self.session_id.as_deref().unwrap_or("-"),
            self.request_key,
            state_word(self.state),
            if self.replayed { " (replayed)" } else { "" }
        )
    }
}

fn state_word(s: WriteState) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The core write a resource tool asks for, with its request key and wait.
fn write_of(tool: &str, args: Args<'_>) -> Result<(Write, String, Option<u32>), ToolError> {
    Ok(match tool {
        "create_resource" => {
            let a: CreateArgs = parse_args(args)?;
            let kind = a.kind.into();
            let write = Write::Create {
                kind,
                name: a.name,
                spec: with_defaults(kind, a.spec),
            };
            (write, a.request_key, a.wait_seconds)
        }
        "update_resource" => {
            let a: UpdateArgs = parse_args(args)?;
            let write = Write::Update {
                kind: a.kind.into(),
                name: a.name,
                patch: Value::Object(a.patch),
            };
            (write, a.request_key, a.wait_seconds)
        }
        "apply_resource" => {
            let a: ApplyArgs = parse_args(args)?;
            let kind = a.kind.into();
            let write = Write::Apply {
                kind,
                name: a.name,
                spec: with_defaults(kind, a.spec),
            };
            (write, a.request_key, a.wait_seconds)
        }
        "delete_resource" => {
            let a: DeleteArgs = parse_args(args)?;
            let write = Write::Delete {
                kind: a.kind.into(),
                name: a.name,
            };
            (write, a.request_key, a.wait_seconds)
        }
        "enable_endpoint" | "disable_endpoint" => {
            let a: EndpointArgs = parse_args(args)?;
            let write = if tool == "enable_endpoint" {
                Write::Enable { name: a.name }
            } else {
                Write::Disable { name: a.name }
            };
            (write, a.request_key, a.wait_seconds)
        }
        other => {
            return Err(ToolError::new(
                "internal",
                format!("{other} is not a resource write"),
            ));
        }
    })
}

/// A whole spec (create, apply) with every default written out, as the control plane
/// would store it: `"event_types": []` and leaving it out are the same write, so the same
/// request key. A spec the protocol does not accept is left as it came (the control plane's
/// validation names the field).
fn with_defaults(kind: ResourceKind, spec: Map<String, Value>) -> Value {
    fn typed<T: serde::de::DeserializeOwned + serde::Serialize>(spec: &Value) -> Option<Value> {
        serde_json::from_value::<T>(spec.clone())
            .ok()
            .and_then(|t| serde_json::to_value(t).ok())
    }
    let spec = Value::Object(spec);
    let full = match kind {
        ResourceKind::Endpoint => typed::<switchyard_protocol::EndpointSpec>(&spec),
        ResourceKind::Target => typed::<switchyard_protocol::TargetSpec>(&spec),
        ResourceKind::Flow => typed::<switchyard_protocol::FlowSpec>(&spec),
    };
    full.unwrap_or(spec)
}

/// The arguments the fingerprint is taken of: as given, with a whole spec's defaults
/// written out (see [`with_defaults`]).
fn fingerprinted(args: Args<'_>, write: &Write) -> Map<String, Value> {
    let mut args = args.cloned().unwrap_or_default();
    if let Write::Create { spec, .. } | Write::Apply { spec, .. } = write {
        args.insert("spec".into(), spec.clone());
    }
    args
}

pub async fn resource_write(
    srv: &McpServer,
    tool: &str,
    args: Args<'_>,
    client: &str,
) -> Result<WriteResult, ToolError> {
    let (write, request_key, wait) = write_of(tool, args)?;
    check_request_key(&request_key)?;
    let fingerprint = fingerprint(tool, &fingerprinted(args, &write));
    let wait = wait_seconds(wait)?;
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    let opts = EnqueueOptions {
        idempotency_key: Some(derived_key(profile, &request_key)),
        if_match: None,
        origin: Origin::Mcp {
            client: client.to_owned(),
        },
        fingerprint: Some(fingerprint),
    };
    let queued = console
        .enqueue_with(profile, write, opts)
        .await
        .map_err(|e| patch_field(tool, e.into()))?;
    srv.inner.kick.notify_one();
    let sync_error = settle(srv, queued.op.id, Duration::from_secs(wait.into())).await;
    let ops = chain(srv, console.op(queued.op.id).await?).await?;
    let latest = ops.last().expect("a chain has its first op");
    let state = WriteState::of(latest.state);
    let note = first_secret_note(srv, latest);
    let mut views = op_views(srv, &ops).await?;
    let latest_attempt = (views.len() > 1).then(|| views.pop()).flatten();
    Ok(WriteResult {
        state,
        replayed: queued.replayed,
        request_key,
        profile: profile.clone(),
        operation: views.swap_remove(0),
        latest_attempt,
        problem: problem_of(latest, state, sync_error),
        note,
    })
}

/// A created target's first signing secret is never given to an agent (it would sit in the
/// model's context). The console keeps it only in this process's memory, where no person
/// can read it, so it is dropped here, and the agent is told how an operator gets one.
fn first_secret_note(srv: &McpServer, op: &OutboxOp) -> Option<String> {
    let creates = matches!(op.op, OpKind::Create | OpKind::Apply);
    if op.kind != ResourceKind::Target || !creates {
        return None;
    }
    forget_first_secrets(srv);
    Some(format!(
        "signing secret withheld from agents: a target created here has a first signing secret \
nobody sees. Tell the operator to run `switchyard rotation start {}` (or use the desktop's \
rotation wizard), which shows them a new secret once, before a receiver verifies signatures",
        op.name
    ))
}

/// Drops the first signing secrets this process received (see [`first_secret_note`]).
fn forget_first_secrets(srv: &McpServer) {
    let taken = srv
        .inner
        .console
        .take_shown_secrets(&srv.inner.config.profile);
    drop(taken);
}

/// An update's spec changes arrive as `patch`: name that argument, not the core's `spec`.
fn patch_field(tool: &str, mut e: ToolError) -> ToolError {
    if tool == "update_resource"
        && let Some(field) = &e.field
        && (field == "spec" || field.starts_with("spec."))
    {
        e.field = Some(format!("patch{}", &field[4..]));
    }
    e
}

fn problem_of(op: &OutboxOp, state: WriteState, sync_error: Option<String>) -> Option<ProblemView> {
    match (state, &op.last_error, sync_error) {
        (WriteState::NeedsAttention | WriteState::Pending, Some(e), _) => Some(e.into()),
        (WriteState::Pending, None, Some(message)) => Some(ProblemView {
            status: None,
            code: None,
            field: None,
            message,
            transient: true,
        }),
        _ => None,
    }
}

/// Whether an op needs nothing more from the sync engine.
fn settled(op: &OutboxOp) -> bool {
    matches!(
        op.state,
        OpState::Done | OpState::NeedsAttention | OpState::Discarded
    )
}

/// Sends the profile's due writes (one pass at a time) until the op (or the attempt that
/// replaced it) is settled or `wait` is over. Returns why the last pass failed, if it did.
/// Each pass runs in its own task: a call given up by its client leaves the pass to finish,
/// so no operation is left mid-send until its lease expires.
async fn settle(srv: &McpServer, op_id: i64, wait: Duration) -> Option<String> {
    let deadline = Instant::now() + wait;
    let mut last_error = None;
    loop {
        let op = match latest_op(srv, op_id).await {
            Ok(op) => op,
            Err(e) => return Some(e.message),
        };
        let now = Instant::now();
        if settled(&op) || now >= deadline {
            return last_error;
        }
        let guard = srv.inner.sync_lock.lock().await;
        match latest_op(srv, op_id).await {
            Ok(op) if settled(&op) => return last_error,
            _ => {}
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        let (console, profile) = (srv.inner.console.clone(), srv.inner.config.profile.clone());
        let pass = tokio::spawn(async move {
            console
                .sync(
                    &profile,
                    SyncOptions {
                        until_drained: false,
                        timeout_ms: Some(remaining.as_millis() as u64),
                        refresh_after: false,
                    },
                )
                .await
        });
        last_error = match pass.await {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(e) => Some(format!("sync task failed: {e}")),
        };
        drop(guard);
        let op = match latest_op(srv, op_id).await {
            Ok(op) => op,
            Err(e) => return Some(e.message),
        };
        if settled(&op) {
            return last_error;
        }
        // Waiting out a retry's backoff, or another process holding the op: look again soon.
        let now_ms = chrono::Utc::now().timestamp_millis();
        let due_in = op
            .next_attempt_at
            .map_or(250, |t| (t - now_ms).clamp(50, 1_000) as u64);
        let left = deadline.saturating_duration_since(Instant::now());
        tokio::time::sleep(Duration::from_millis(due_in).min(left)).await;
    }
}

async fn latest_op(srv: &McpServer, op_id: i64) -> Result<OutboxOp, ToolError> {
    let first = srv.inner.console.op(op_id).await?;
    Ok(chain(srv, first)
        .await?
        .pop()
        .expect("a chain has its first op"))
}

fn selection_of(s: SelectionArgs) -> Result<ReplaySelection, ToolError> {
    Ok(match s {
        SelectionArgs::DeliveryIds(ids) => ReplaySelection::DeliveryIds(ids),
        SelectionArgs::Filter(f) => ReplaySelection::Filter(f.to_filter("selection.filter")?),
    })
}

pub async fn start_replay(
    srv: &McpServer,
    args: Args<'_>,
    client: &str,
    mode: Mode,
    context: &RequestContext<RoleServer>,
) -> Result<ReplayResult, ToolError> {
    let a: StartReplayArgs = parse_args(args)?;
    check_request_key(&a.request_key)?;
    let wait = wait_seconds(a.wait_seconds)?;
    let selection = selection_of(a.selection)?;
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    let mut result = ReplayResult {
        state: WriteState::DryRun,
        replayed: false,
        request_key: a.request_key.clone(),
        profile: profile.clone(),
        session_id: None,
        count: None,
        write: None,
        session: None,
        problem: None,
    };
    if a.dry_run == Some(true) {
        result.count = Some(console.replay_dry_run(profile, selection).await?);
        return Ok(result);
    }
    let session_id = derived_key(profile, &a.request_key);
    check_replay_limit(srv, &session_id, &selection, mode).await?;
    let start = ReplayStart {
        session_id: Some(session_id.clone()),
        selection,
        rate_per_s: a.rate_per_s,
    };
    let queued = console
        .enqueue_replay_start_with(
            profile,
            start,
            Origin::Mcp {
                client: client.to_owned(),
            },
            Some(fingerprint(
                "start_replay",
                &args.cloned().unwrap_or_default(),
            )),
        )
        .await?;
    srv.inner.kick.notify_one();
    let deadline = Instant::now() + Duration::from_secs(wait.into());
    let op = send_replay_start(srv, queued.op, deadline).await;
    result.replayed = queued.replayed;
    result.session_id = Some(session_id.clone());
    result.state = match op.state {
        ReplayOpState::Done => WriteState::Confirmed,
        ReplayOpState::Pending => WriteState::Pending,
        ReplayOpState::NeedsAttention => WriteState::NeedsAttention,
    };
    result.problem = op.last_error.as_ref().map(Into::into);
    result.write = Some((&op).into());
    if op.state == ReplayOpState::Done {
        let session = follow_session(srv, &session_id, deadline, context).await;
        result.session = session
            .map(|s| serde_json::to_value(s).expect("session serializes"))
            .or_else(|| op.result.clone())
            .map(without_items);
    }
    Ok(result)
}

/// A replay larger than the server's limit needs --allow-destructive; a retry of a start
/// already queued is not a new replay.
async fn check_replay_limit(
    srv: &McpServer,
    session_id: &str,
    selection: &ReplaySelection,
    mode: Mode,
) -> Result<(), ToolError> {
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    if mode >= Mode::Destructive || console.replay_start(profile, session_id).await?.is_some() {
        return Ok(());
    }
    let count = match selection {
        ReplaySelection::DeliveryIds(ids) => ids.len() as u64,
        ReplaySelection::Filter(_) => console.replay_dry_run(profile, selection.clone()).await?,
    };
    let limit = srv.inner.config.replay_limit;
    if count > limit {
        return Err(ToolError {
            code: "not_allowed",
            field: Some("selection".into()),
            message: format!(
                "this replay takes {count} dead deliveries, more than this server's limit of \
                 {limit} without --allow-destructive; nothing was queued (narrow the selection)"
            ),
        });
    }
    Ok(())
}

/// Sends pending replay writes of the profile until this one is confirmed or refused, or the
/// deadline passes (in its own task, like [`settle`]).
async fn send_replay_start(srv: &McpServer, op: ReplayOp, deadline: Instant) -> ReplayOp {
    if op.state != ReplayOpState::Pending || Instant::now() >= deadline {
        return op;
    }
    let guard = srv.inner.sync_lock.lock().await;
    let (console, profile) = (srv.inner.console.clone(), srv.inner.config.profile.clone());
    let remaining = deadline.saturating_duration_since(Instant::now());
    let _ = tokio::spawn(async move { console.sync_replays(&profile, remaining).await }).await;
    drop(guard);
    srv.inner.console.replay_op(op.id).await.unwrap_or(op)
}

/// Watches a confirmed session until it completes or the deadline passes, reporting MCP
/// progress notifications when the client asked for them (a progress token).
async fn follow_session(
    srv: &McpServer,
    session_id: &str,
    deadline: Instant,
    context: &RequestContext<RoleServer>,
) -> Option<ReplaySession> {
    let token = context.meta.get_progress_token();
    let (console, profile) = (&srv.inner.console, &srv.inner.config.profile);
    let mut last_progress = None;
    loop {
        let session = console.replay_session(profile, session_id).await.ok()?;
        let c = &session.counts;
        let done = c.succeeded + c.failed + c.cancelled;
        if let Some(token) = &token
            && last_progress != Some(done)
        {
            last_progress = Some(done);
            let mut p = ProgressNotificationParam::new(token.clone(), done as f64);
            p.total = Some(c.total as f64);
            p.message = Some(format!(
                "{done}/{} re-delivered ({} succeeded, {} failed, {} pending)",
                c.total, c.succeeded, c.failed, c.pending
            ));
            if let Err(e) = context.peer.notify_progress(p).await {
                tracing::debug!("progress notification not sent: {e}");
            }
        }
        if session.status != ReplayStatus::Running || Instant::now() >= deadline {
            return Some(session);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        tokio::time::sleep(Duration::from_millis(500).min(left)).await;
    }
}

/// A session without its per-item list (it can hold 1000 items; `replay_status` has them).
fn without_items(mut session: Value) -> Value {
    if let Some(obj) = session.as_object_mut() {
        obj.remove("items");
    }
    session
}
