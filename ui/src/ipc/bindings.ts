// Generated from the Rust IPC types by src-tauri/ipc/bindings.rs. Do not edit.
// Regenerate: UPDATE_BINDINGS=1 cargo test -p switchyard-desktop --lib bindings

export type AgentsSettings = { profile: string, 
/**
 * The sandbox lives inside this app (its token too): agents cannot use it.
 */
sandbox: boolean, 
/**
 * The program and its arguments up to `mcp`; the mode's flag (`--allow-writes`,
 * `--allow-destructive`) goes after it.
 */
command: Array<string>, 
/**
 * `command[0]` was found beside the app; otherwise it is `switchyard`, looked up on PATH.
 */
program_found: boolean, 
/**
 * An operator marked the profile read-only for agents: writes are refused whatever the
 * flags.
 */
agents_read_only: boolean, 
/**
 * The newest `mcp.call` entries of the audit log for this profile (newest first).
 */
recent_calls: Array<AuditEntry>, };

export type AppInfo = { version: string, 
/**
 * Absent when the build's source had no git metadata.
 */
commit: string | null, 
/**
 * RFC 3339 UTC.
 */
build_date: string, tauri_version: string, 
/**
 * The system webview (WebKitGTK on Linux); absent when it cannot be asked.
 */
webview_version: string | null, os: string, log_file: string | null, data_dir: string, 
/**
 * Whether this build carries an update key (packaged builds do; source builds do not).
 */
signed_updates: boolean, };

export type ApplyProgress = { profile: string, source: string, commit: string, waves: Array<WaveProgress>, 
/**
 * Every write of the apply is confirmed.
 */
complete: boolean, };

export type ApplyReport = { profile: string, source: string, commit: string, 
/**
 * Writes queued now.
 */
queued: number, 
/**
 * Writes an earlier run of the same apply had already queued (same keys: resumed).
 */
resumed: number, 
/**
 * Outbox operation ids, in wave order.
 */
op_ids: Array<number>, progress: ApplyProgress, };

export type AttemptFiguresView = { attempts: number, successes: number, failures: number, 
/**
 * Most failures first; classes with none are absent.
 */
failures_by_class: Array<ClassCountView>, 
/**
 * `successes / attempts` (0 to 1); `null` without attempts.
 */
success_rate: number | null, 
/**
 * `null` without attempts.
 */
latency_ms: LatencyView | null, 
/**
 * Oldest first, one per bucket of the window (empty buckets included).
 */
buckets: Array<HealthBucketView>, };

export type AttemptOutcome = "in_flight" | "succeeded" | "failed";

export type AttemptView = { id: string, 
/**
 * 1-based, over the delivery's hops.
 */
number: number, hop: Hop, 
/**
 * 1-based within its hop.
 */
hop_attempt: number, started_at: number, duration_ms: number | null, outcome: AttemptOutcome, status_code: number | null, error_class: ErrorClass | null, error: string | null, performed_by: string, };

export type AuditEntry = { id: number, 
/**
 * `cli`, `desktop`, or `sync` for outcomes the sync engine recorded.
 */
actor: string, at: number, profile: string | null, 
/**
 * e.g. `write.enqueue`, `op.done`, `op.needs_attention`, `profile.add`.
 */
action: string, op_id: number | null, 
/**
 * `kind/name` when the action concerns a resource.
 */
resource: string | null, outcome: string, detail: string | null, };

export type Blocker = { 
/**
 * `flow` (references the resource), `pending_deliveries`, `open_replay`.
 */
kind: string, 
/**
 * The flow's name or the replay session's id; absent for a count.
 */
name?: string | null, count?: number | null, };

export type CertificateRotationInput = { target: string, certificate_id: string, 
/**
 * PEM, the leaf first.
 */
certificate_pem: string, 
/**
 * PEM (PKCS#8, PKCS#1 RSA or SEC1 EC).
 */
private_key_pem: string, };

export type CertificateState = "staged" | "active" | "retired";

export type CertificateView = { id: string, 
/**
 * SHA-256 of the leaf's DER, lowercase hex.
 */
fingerprint_sha256: string, 
/**
 * RFC 4514, e.g. `CN=billing-client`.
 */
subject: string, 
/**
 * RFC 3339.
 */
not_after: string, 
/**
 * As the rotation recorded it.
 */
state: CertificateState, };

export type ClassCountView = { error_class: ErrorClass, count: number, };

export type ConflictView = { op_id: number, kind: ResourceKind, name: string, base_version: number | null, base: JsonValue | null, 
/**
 * `null`: the edit is a delete.
 */
mine: JsonValue | null, theirs_version: number | null, 
/**
 * `null`: absent on the control plane.
 */
theirs: JsonValue | null, 
/**
 * `theirs` comes from the cache because the control plane could not be reached.
 */
theirs_from_cache: boolean, 
/**
 * Top-level spec fields both sides changed.
 */
conflicting_fields: Array<string>, };

export type CoreEvent = { "type": "sync" } & SyncStatus | { "type": "operation", profile: string, op_id: number, kind: ResourceKind, name: string, state: OpState, } | { "type": "resources_changed", profile: string, } | { "type": "replay_write", profile: string, session_id: string, state: ReplayWriteState, } | { "type": "secret_shown", profile: string, target: string, } | { "type": "quitting", sending: number, };

export type Credential = "secret" | "certificate";

export type DeliveryHealthView = { window: MetricsWindow, group_by: MetricsGroupBy, 
/**
 * The start of the first bucket, and the end of the report (the server's now).
 */
since: number, until: number, bucket_seconds: number, totals: HealthTotalsView, 
/**
 * Every group with an attempt in the window or a failure run still open, by name.
 */
groups: Array<HealthGroupView>, };

export type DeliveryState = "pending" | "in_flight" | "succeeded" | "dead" | "replayed" | "cancelled";

export type DeliveryView = { id: string, event_id: string, event_type: string, endpoint: string, flow: string, target: string, mode: FlowMode, state: DeliveryState, attempts_made: number, max_attempts: number, next_attempt_at: number | null, created_at: number, dead_at: number | null, 
/**
 * The hop whose attempt budget ran out (dead deliveries).
 */
exhausted_hop: Hop | null, error_class: ErrorClass | null, last_status_code: number | null, replay_session: string | null, replay_of: string | null, replayed_by: string | null, attempts: Array<AttemptView>, };

export type DlqCauseView = { error_class: string, target: string, count: number, };

export type DlqDisposition = "keep" | "purge";

export type DlqEntryView = { delivery_id: string, event_id: string, event_type: string, endpoint: string, flow: string, target: string, error_class: ErrorClass, last_status_code: number | null, attempts: number, dead_at: number, 
/**
 * The hop whose attempt budget ran out (absent from servers before per-hop budgets).
 */
exhausted_hop?: Hop | null, 
/**
 * Set when this delivery was itself a replay that died again.
 */
replay_session: string | null, };

export type DlqFilterInput = { endpoint: string | null, target: string | null, flow: string | null, error_class: ErrorClass | null, 
/**
 * Dead at or after (ms).
 */
since: number | null, 
/**
 * Dead before (ms).
 */
until: number | null, };

export type DlqGroupBy = "target" | "error_class" | "hour" | "error_class,target";

export type DlqGroupView = { 
/**
 * Target name, error class, or the hour's start (RFC 3339).
 */
key: string, count: number, };

export type DlqPageView = { items: Array<DlqEntryView>, next_cursor: string | null, };

export type DlqStatsView = { total: number, groups: Array<DlqGroupView>, };

export type ErrorClass = "http_4xx" | "http_5xx" | "timeout" | "connect" | "tls" | "forbidden_address";

export type EventListView = { items: Array<EventView>, 
/**
 * More events have this key than were returned (narrow by endpoint).
 */
more: boolean, };

export type EventView = { id: string, endpoint: string, event_type: string, event_key: string | null, payload: JsonValue, created_at: number, deliveries: Array<DeliveryView>, };

export type FieldChange = { field: string, 
/**
 * `null`: absent before.
 */
before: JsonValue | null, 
/**
 * `null`: absent after.
 */
after: JsonValue | null, };

export type Finding = { 
/**
 * `<class>:<subject kind>:<subject id>`: stable while the problem lasts.
 */
id: string, class: FindingClass, severity: Severity, subject: FindingSubject, 
/**
 * What is wrong and what happens if nobody acts, in plain language.
 */
detail: string, evidence: FindingEvidence, 
/**
 * The fixes, the recommended one first; empty when only a person can fix it (the
 * detail says what to look at).
 */
actions: Array<FixAction>, };

export type FindingClass = "stuck_delivery" | "edge_unreachable" | "failing_target" | "disabled_endpoint_backlog" | "stalled_replay" | "dlq_counter_drift" | "signing_overlap_open" | "certificate_expiring" | "needs_attention" | "unknown_outcome" | "stale_lease" | "orphan_reference" | "drift" | "unknown";

export type FindingEvidence = { 
/**
 * How many things are affected (deliveries stuck, consecutive failures, …).
 */
count?: number | null, 
/**
 * Up to 20 of the affected deliveries.
 */
delivery_ids?: Array<string>, 
/**
 * When the problem started (the oldest affected item, the first failure of the run).
 */
since?: string | null, 
/**
 * The last error seen (class and message), where the class is about failures.
 */
last_error?: string | null, 
/**
 * What the figure should be and what it is (counter drift).
 */
expected?: number | null, actual?: number | null, 
/**
 * When the state ends by itself (an open overlap's end, a certificate's `not_after`).
 */
until?: string | null, 
/**
 * Deliveries a replay holds (a failing target): their originals left the DLQ and their
 * re-deliveries are still pending or in flight, so they are in no DLQ count.
 */
replaying?: number | null, 
/**
 * The replay sessions holding them, the most first (at most 5).
 */
replay_sessions?: Array<string>, };

export type FindingSubject = { 
/**
 * `delivery`, `target`, `endpoint`, `flow`, `replay`, `edge`, `tenant` (server side);
 * `operation` (console side).
 */
kind: string, 
/**
 * The delivery id, resource name, replay session id, edge name or tenant.
 */
id: string, };

export type FixAction = { 
/**
 * What it does, in a few words ("Requeue the 3 stuck deliveries").
 */
label: string, 
/**
 * `POST`, `PUT`, `PATCH` or `DELETE`.
 */
method: string, 
/**
 * The path under the control plane's base URL, e.g. `/v1/deliveries/dlv_1/requeue`.
 */
path: string, body?: JsonValue | null, 
/**
 * It cannot be undone (a purge, a cancel, a bulk re-send such as a replay: the
 * receivers get the deliveries again): ask the operator to confirm, and for a replay
 * show its dry-run count first.
 */
destructive: boolean, };

export type FixOutcomeView = { message: string, write: RecoveryWriteView | null, };

export type FlowMode = "sync" | "async_inline" | "async_relay";

export type GitopsPlan = { profile: string, 
/**
 * The source's identity (see [`GitopsSource::id`]).
 */
source: string, spec: SourceSpec, 
/**
 * The full commit id the manifests were read from.
 */
commit: string, 
/**
 * The commit message's first line.
 */
commit_title: string, planned_at: number, prune: boolean, self_heal: boolean, manifests: number, summary: PlanSummary, 
/**
 * Every resource the commit declares or the source manages, in wave order then by
 * kind and name.
 */
items: Array<PlanItem>, };

export type GitopsSource = { profile: string, 
/**
 * The source's identity: the repository's absolute path and the folder
 * (`/srv/config:deploy/prod`). Part of every write's idempotency key.
 */
id: string, spec: SourceSpec, 
/**
 * The last commit whose apply was queued.
 */
queued_commit: string | null, queued_at: number | null, 
/**
 * The last commit whose every write the control plane confirmed.
 */
applied_commit: string | null, applied_at: number | null, 
/**
 * Resources this source manages on the profile's control plane.
 */
managed: number, };

export type GitopsStatus = { source: GitopsSource, 
/**
 * What the ref resolves to now (absent when the repository cannot be read).
 */
head_commit: string | null, 
/**
 * Why the repository could not be read.
 */
head_error: string | null, 
/**
 * The ref points at a commit other than the last applied one.
 */
behind: boolean, in_sync: number, drifted: number, missing: number, applying: number, 
/**
 * Managed resources that are not in sync (drifted, missing, applying).
 */
resources: Array<ManagedResource>, progress: ApplyProgress | null, };

export type Health = { ok: boolean, latency_ms: number | null, server_version: string | null, 
/**
 * The token's role (`viewer`, `operator`, `admin`, `edge`); `None` when the control
 * plane predates roles or did not answer.
 */
role: string | null, 
/**
 * Why it failed, in words a person can act on.
 */
error: string | null, };

export type HealthBucketView = { start: number, attempts: number, failures: number, 
/**
 * `null` when no attempt finished in the bucket.
 */
p95_ms: number | null, };

export type HealthGroupView = { name: string, figures: AttemptFiguresView, 
/**
 * Failed attempts since the last success; `null` when no attempt was recorded since the
 * server started keeping health figures.
 */
consecutive_failures: number | null, 
/**
 * The first failure of the current run of failures; `null` when the last attempt
 * succeeded.
 */
failing_since: number | null, last_success_at: number | null, last_failure_at: number | null, last_error_class: ErrorClass | null, 
/**
 * The last failure's message.
 */
last_error: string | null, };

export type HealthTotalsView = { 
/**
 * Events accepted in the window.
 */
events_accepted: number, figures: AttemptFiguresView, 
/**
 * Deliveries waiting for an attempt now.
 */
deliveries_pending: number, 
/**
 * Deliveries with an attempt on the wire now.
 */
deliveries_in_flight: number, 
/**
 * When the oldest waiting delivery was created; `null` when none waits.
 */
oldest_pending_at: number | null, 
/**
 * The DLQ's depth now.
 */
dead: number, replays_running: number, };

export type Hop = "control_plane_webhook" | "control_plane_edge" | "edge_webhook";

export type IpcError = { code: IpcErrorCode, message: string, 
/**
 * The server's problem body, when the failure came from the control plane.
 */
problem: WriteError | null, };

export type IpcErrorCode = "invalid_input" | "not_found" | "conflict" | "offline" | "unauthorized" | "remote" | "internal";

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type LatencyView = { p50: number, p95: number, p99: number, };

export type LaunchMarks = { 
/**
 * The UI's script starts running (the bundle is loaded and parsed).
 */
script_ms: number, 
/**
 * The first render is committed (the shell is on screen, without data).
 */
first_render_ms: number, 
/**
 * The first answer of a command reached the UI.
 */
first_answer_ms: number | null, 
/**
 * The first screen shows its data.
 */
shown_ms: number, };

export type ManagedResource = { kind: "endpoint" | "target" | "flow", name: string, source: string, 
/**
 * The commit that last wrote or confirmed it.
 */
commit: string, 
/**
 * Its manifest's file in that commit.
 */
path: string, 
/**
 * GitOps created it (so `--prune` may delete it); otherwise it was adopted.
 */
created: boolean, state: ResourceSync, 
/**
 * Fields that differ from what Git applied.
 */
changes: Array<FieldChange>, 
/**
 * Who changed it, when the local audit log knows (`cli`, `desktop`, `mcp (…)`).
 */
changed_by: string | null, changed_at: number | null, };

export type MetricsGroupBy = "target" | "endpoint" | "flow";

export type MetricsWindow = "15m" | "1h" | "24h" | "7d";

export type OldSecretView = { id: string, expires_at: string, };

export type OpKind = "create" | "update" | "apply" | "delete" | "enable" | "disable";

export type OpState = "pending" | "sending" | "done" | "needs_attention" | "discarded" | "superseded";

export type Origin = { "via": "console" } | { "via": "mcp", client: string, } | { "via": "gitops", source: string, commit: string, path: string, };

export type OutboxEntry = { id: number, profile: string, kind: ResourceKind, name: string, operation: OpKind, state: OpState, idempotency_key: string, body: JsonValue, base_version: number | null, 
/**
 * Send attempts so far.
 */
attempts: number, created_at: number, updated_at: number, 
/**
 * Earliest time of the next attempt (for the countdown).
 */
next_attempt_at: number | null, 
/**
 * The last failure: the control plane's answer or why it could not be reached.
 */
error: WriteError | null, 
/**
 * Who queued it: a person at the console, an agent over MCP, or GitOps.
 */
origin: Origin, };

export type Overview = { profile: string, endpoints: number, targets: number, flows: number, disabled_endpoints: number, 
/**
 * When the resource counts were last filled from the control plane; `null` when they
 * never were (a plane that has not answered yet): the counts are then unknown, not 0.
 */
refreshed_at: number | null, pending: number, needs_attention: number, 
/**
 * The latest actions a person took on this profile (sync runs and cache refreshes left
 * out). The DLQ size is not here: it comes from the control plane (`dlq_stats`), so this
 * answer never waits for the network.
 */
recent: Array<AuditEntry>, };

export type PendingWrite = { op_id: number, operation: OpKind, state: OpState, 
/**
 * The control plane's answer when it needs attention.
 */
error: WriteError | null, };

export type PlanAction = "create" | "update" | "delete" | "unchanged" | "drifted" | "orphaned" | "release";

export type PlanItem = { kind: "endpoint" | "target" | "flow", name: string, action: PlanAction, 
/**
 * The manifest's file: in this commit, or (for a resource the commit no longer
 * declares) in the commit that last applied it.
 */
path: string | null, 
/**
 * The version the plan was made against (sent as `If-Match`); absent when the
 * resource does not exist on the control plane.
 */
base_version: number | null, 
/**
 * Field changes from live state to the commit (update, drift: what differs).
 */
changes: Array<FieldChange>, 
/**
 * The commit's spec (canonical), for every resource the commit declares.
 */
desired: JsonValue | null, 
/**
 * The control plane's spec (normalised), except for unchanged resources and creates.
 */
live: JsonValue | null, 
/**
 * The order of writes: 1 targets and endpoints, 2 flows, 3 flow deletes, 4 endpoint
 * and target deletes. 0 for actions that write nothing.
 */
wave: number, 
/**
 * The write's idempotency key, derived from its content (see docs/gitops.md).
 */
key: string | null, };

export type PlanOptions = { 
/**
 * Delete what this source created and the commit no longer declares.
 */
prune: boolean, 
/**
 * Allow a prune that deletes every resource the source manages (a wrong `--path`, an
 * emptied folder). Refused without it.
 */
allow_delete_all: boolean, 
/**
 * Revert drift: resources changed outside Git are set back to the commit.
 */
self_heal: boolean, };

export type PlanSummary = { create: number, update: number, delete: number, unchanged: number, drifted: number, orphaned: number, release: number, };

export type ProfileInput = { name: string, url: string, token: string | null, };

export type ProfileView = { name: string, url: string, 
/**
 * The built-in sandbox: an embedded control plane with demo data.
 */
sandbox: boolean, active: boolean, 
/**
 * Whether a token is stored for it (the token itself never leaves the Rust side).
 */
has_token: boolean, 
/**
 * Its writes saved locally or being sent, not yet confirmed.
 */
pending: number, 
/**
 * Its writes the control plane refused; a person decides.
 */
needs_attention: number, };

export type QueuedCount = { kind: QueuedKind, count: number, 
/**
 * Of `count`, those waiting for a person's decision (writes only).
 */
needs_attention: number, 
/**
 * In words: "2 writes (1 needs attention)".
 */
label: string, };

export type QueuedKind = "write" | "rotation" | "replay" | "secret_change" | "certificate_activation" | "test_webhook" | "recovery";

export type QueuedWork = { total: number, kinds: Array<QueuedCount>, 
/**
 * In words: "2 writes (1 needs attention), 1 rotation in progress, 1 replay";
 * "nothing" when empty.
 */
summary: string, };

export type RecoveryAction = "fix" | "retire" | "retire_cancel";

export type RecoveryView = { findings: Array<Finding>, 
/**
 * When the control plane answered `GET /v1/diagnostics` (RFC 3339).
 */
server_checked_at: string | null, 
/**
 * Why the control plane's findings are missing or old, in a sentence.
 */
server_unavailable: string | null, 
/**
 * Console-side checks that could not run (they need the control plane).
 */
unchecked: Array<string>, };

export type RecoveryWriteView = { id: number, 
/**
 * The finding id (a fix) or the retirement id.
 */
subject: string, action: RecoveryAction, label: string, method: string, path: string, idempotency_key: string, state: ReplayWriteState, attempts: number, error: string | null, created_at: number, };

export type RedeliveryView = { target: string, attempts_made: number, max_attempts: number, next_attempt_at: number | null, error_class: ErrorClass | null, last_status_code: number | null, };

export type ReplayAction = "start" | "cancel";

export type ReplayCountsView = { total: number, succeeded: number, failed: number, pending: number, cancelled: number, skipped: number, };

export type ReplayItemStatus = "pending" | "succeeded" | "failed" | "cancelled" | "skipped";

export type ReplayItemView = { original_delivery_id: string, delivery_id: string | null, status: ReplayItemStatus, reason: string | null, 
/**
 * Where the re-delivery stands (pending and failed items, the first ones only).
 */
redelivery: RedeliveryView | null, };

export type ReplaySelectionInput = { "by": "ids", delivery_ids: Array<string>, } | { "by": "filter", filter: DlqFilterInput, };

export type ReplaySessionView = { id: string, status: ReplayStatus, 
/**
 * The selection in words (`3 deliveries`, `target=crm error_class=http_5xx`).
 */
selection: string, rate_per_s: number | null, created_at: number, cancelled_at: number | null, counts: ReplayCountsView, items: Array<ReplayItemView>, };

export type ReplayStartInput = { session_id: string, selection: ReplaySelectionInput, rate_per_s: number | null, };

export type ReplayStatus = "running" | "completed" | "cancelled";

export type ReplayWriteState = "saved_locally" | "sent" | "confirmed" | "needs_attention";

export type ReplayWriteView = { id: number, action: ReplayAction, session_id: string, state: ReplayWriteState, attempts: number, error: string | null, created_at: number, 
/**
 * Who queued it: a person at the console, or an agent over MCP.
 */
origin: Origin, };

export type Resolution = "retry_as_new" | "discard";

export type ResourceKind = "endpoint" | "target" | "flow";

export type ResourceRef = { kind: ResourceKind, name: string, };

export type ResourceSync = "in_sync" | "drifted" | "missing" | "applying";

export type ResourceView = { kind: ResourceKind, name: string, 
/**
 * The last version confirmed by the control plane (0 when only created locally).
 */
version: number, updated_at: number | null, spec: JsonValue, status: JsonValue, pending: PendingWrite | null, };

export type RetireInput = { id: string, kind: ResourceKind, name: string, 
/**
 * A duration (`0s`, `10m`, `1h`, `7d`).
 */
grace: string, cascade_flows: boolean, dlq: DlqDisposition, };

export type Retirement = { id: string, kind: ResourceKind, name: string, state: RetirementState, grace_seconds: number, cascade_flows: boolean, dlq: DlqDisposition, 
/**
 * Empty unless `blocked`.
 */
blockers: Array<Blocker>, impact: RetirementImpact, 
/**
 * When the drain should be over, from the retry schedule of what is still pending.
 */
drain_eta?: string | null, 
/**
 * When a `scheduled` retirement deletes the resource.
 */
delete_at?: string | null, 
/**
 * Flows retired first because of `cascade_flows`.
 */
cascaded_flows: Array<string>, created_at: string, updated_at: string, 
/**
 * Every state entered, oldest first.
 */
history: Array<RetirementStep>, };

export type RetirementDryRun = { id: string, dry_run: boolean, 
/**
 * `blocked` or `draining`: where the retirement would start.
 */
would_start: RetirementState, blockers: Array<Blocker>, impact: RetirementImpact, };

export type RetirementImpact = { 
/**
 * Flows that reference the resource (retired first with `cascade_flows`).
 */
flows: Array<string>, 
/**
 * Deliveries still pending or in flight that the drain waits for.
 */
pending_deliveries: number, 
/**
 * Dead deliveries of the resource (kept or purged per `dlq`).
 */
dlq_depth: number, 
/**
 * Replay sessions still running that re-deliver through it.
 */
open_replays: Array<string>, };

export type RetirementItemView = { id: string, 
/**
 * From the queued start when the control plane has no record yet.
 */
kind: ResourceKind | null, name: string | null, start: RecoveryWriteView | null, cancel: RecoveryWriteView | null, server: Retirement | null, offline: string | null, };

export type RetirementState = "blocked" | "draining" | "disabled" | "scheduled" | "deleted" | "cancelled";

export type RetirementStep = { state: RetirementState, at: string, };

export type RotationActions = { 
/**
 * A step is queued or in flight, or the value can be shown again:
 * [`crate::Console::resume_rotation`].
 */
resume: boolean, verify: boolean, 
/**
 * Verified: promote.
 */
promote: boolean, 
/**
 * Staged but not (successfully) verified: promote only with `skip_verify`.
 */
promote_skipping_verify: boolean, 
/**
 * Secret: the old secret is still valid (by its stored expiry). Certificate: before
 * promote (nothing to undo but ending the rotation), or after it while the previously
 * active certificate has not expired (it is activated again).
 */
roll_back: boolean, };

export type RotationProgressView = { rotation: RotationView, 
/**
 * The new value while the person has not said it is stored; `null` afterwards.
 */
value: string | null, };

export type RotationStartInput = { target: string, 
/**
 * How long the older secrets keep signing beside the new one; `null`: the server's day.
 */
overlap_seconds: number | null, 
/**
 * Rotate although an overlap is open and expire the older secrets now (a leaked secret).
 */
force: boolean, };

export type RotationStep = "staging" | "staged" | "verifying" | "verified" | "promoting" | "done" | "rolling_back" | "rolled_back" | "needs_attention";

export type RotationView = { id: string, profile: string, target: string, credential: Credential, step: RotationStep, stopped_step: RotationStep | null, 
/**
 * The overlap asked for; `null`: the server's default (a day).
 */
overlap_seconds: number | null, force: boolean, 
/**
 * The keys of the step in flight (what a resume sends again).
 */
pending_keys: Array<string>, new_secret_id: string | null, old_secrets: Array<OldSecretView>, 
/**
 * Certificate rotations: the uploaded certificate and the one active before it (which a
 * roll back after promote activates again).
 */
new_certificate_id: string | null, old_certificate_id: string | null, new_certificate: CertificateView | null, old_certificate: CertificateView | null, verify_attempts: number, verify_result: VerifyView | null, 
/**
 * The person said the value is stored: it is never shown again.
 */
acknowledged: boolean, 
/**
 * `needs_attention`: the control plane's problem (`code`, `field`) or what went wrong.
 */
problem: WriteError | null, actions: RotationActions, 
/**
 * Milliseconds since the epoch.
 */
created_at: number, updated_at: number, finished_at: number | null, };

export type Severity = "info" | "warning" | "critical";

export type ShownSecretView = { target: string, secret_id: string | null, value: string, };

export type SourceSpec = { 
/**
 * A path to a local Git repository (its work tree or its `.git` folder). A remote is
 * fetched by the user's own git (`git fetch`); name its remote-tracking ref in `git_ref`.
 */
repo: string, 
/**
 * A branch, tag, `origin/main`, a commit id… (default `HEAD`).
 */
git_ref: string, 
/**
 * The folder of the manifests inside the repository (`""` = the whole repository).
 */
path: string, };

export type SyncStatus = { profile: string, 
/**
 * `null` before the first contact.
 */
online: boolean | null, last_sync_at: number | null, pending: number, needs_attention: number, 
/**
 * A sync run is going on.
 */
syncing: boolean, 
/**
 * Writes settled in the current (or last) sync run, out of `round_total`.
 */
round_done: number, round_total: number, 
/**
 * Why the control plane is unreachable, when it is.
 */
offline_reason: string | null, };

export type TargetTestInput = { target: string, key: string, };

export type TargetTestResultView = { 
/**
 * A 2xx within the target's timeout.
 */
ok: boolean, status_code: number | null, error_class: ErrorClass | null, error: string | null, duration_ms: number, webhook_id: string, 
/**
 * RFC 3339.
 */
tested_at: string, };

export type TargetTestView = { id: number, target: string, key: string, 
/**
 * Saved locally → sent → confirmed (then `result` says what the receiver answered), or
 * needs attention (`error` says why the control plane refused it).
 */
state: ReplayWriteState, attempts: number, error: string | null, 
/**
 * The server's problem code when it refused the test (e.g. `not_found`).
 */
error_code: string | null, result: TargetTestResultView | null, created_at: number, };

export type UpdateSettingsInput = { feed_url: string | null, auto_check: boolean | null, };

export type UpdateSettingsView = { feed_url: string | null, 
/**
 * `null`: not decided yet (the first launch asks); nothing is checked until `true`.
 */
auto_check: boolean | null, signed_updates: boolean, 
/**
 * Whether this copy was installed from a package the updater can replace.
 */
installable: boolean, };

export type UpdateStatus = { "state": "idle" } | { "state": "checking" } | { "state": "up_to_date", current_version: string, } | { "state": "available", version: string, current_version: string, notes: string | null, date: string | null, } | { "state": "downloading", version: string, downloaded: number, total: number | null, } | { "state": "ready", version: string, } | { "state": "installing", version: string, } | { "state": "failed", message: string, refused: boolean, };

export type VerifyView = { ok: boolean, status: number | null, latency_ms: number | null, error: string | null, webhook_id: string | null, 
/**
 * RFC 3339.
 */
tested_at: string | null, attempt: number, 
/**
 * A certificate rotation: whether the test's TLS handshake presented the new
 * certificate (`false` over http: no handshake, nothing verified). `null` for a secret.
 */
certificate_presented: boolean | null, };

export type WaveProgress = { wave: number, total: number, 
/**
 * Confirmed by the control plane.
 */
done: number, 
/**
 * Saved locally or being sent.
 */
pending: number, 
/**
 * Refused (a conflict, a missing reference…): a person decides in the outbox.
 */
needs_attention: number, 
/**
 * Discarded by a person.
 */
discarded: number, };

export type WriteError = { 
/**
 * HTTP status, when the control plane answered.
 */
status: number | null, 
/**
 * The problem's machine code (`version_mismatch`, `name_taken`…), when there is one.
 */
code: string | null, 
/**
 * One sentence for a person.
 */
message: string, 
/**
 * Would be (or is being) retried by itself.
 */
transient: boolean, 
/**
 * The offending field (`spec.url`), for validation failures.
 */
field: string | null, 
/**
 * For `in_use`: what still references the resource.
 */
used_by: Array<string>, current_version: number | null, };

export type WriteRequest = { kind: ResourceKind, name: string, operation: OpKind, spec: JsonValue | null, 
/**
 * The version the operator edited; sent as `If-Match` for update and delete.
 */
base_version: number | null, };

/** The tauri event that carries `CoreEvent`. */
export const CORE_EVENT = "core-event";

/** Every command: its arguments and what it resolves to. */
export type Commands = {
  list_profiles: { args: {  }; result: Array<ProfileView> };
  save_profile: { args: { original: string | null; input: ProfileInput }; result: ProfileView };
  queued_work: { args: { name: string }; result: QueuedWork };
  remove_profile: { args: { name: string; discard: QueuedWork | null }; result: QueuedWork };
  activate_profile: { args: { name: string }; result: ProfileView };
  test_connection: { args: { input: ProfileInput }; result: Health };
  check_health: { args: { profile: string }; result: Health };
  overview: { args: { profile: string }; result: Overview };
  list_resources: { args: { profile: string; kind: ResourceKind }; result: Array<ResourceView> };
  search_resources: { args: { profile: string; query: string; limit: number }; result: Array<ResourceRef> };
  get_resource: { args: { profile: string; kind: ResourceKind; name: string }; result: ResourceView };
  fetch_live: { args: { profile: string; kind: ResourceKind; name: string }; result: ResourceView | null };
  resource_history: { args: { profile: string; kind: ResourceKind; name: string }; result: Array<OutboxEntry> };
  dependants: { args: { profile: string; kind: ResourceKind; name: string }; result: Array<string> };
  queue_write: { args: { profile: string; request: WriteRequest }; result: OutboxEntry };
  list_outbox: { args: { profile: string | null }; result: Array<OutboxEntry> };
  retry_now: { args: { id: number }; result: null };
  resolve: { args: { id: number; resolution: Resolution }; result: null };
  get_conflict: { args: { id: number }; result: ConflictView };
  sync_status: { args: {  }; result: SyncStatus };
  sync_now: { args: {  }; result: null };
  list_audit: { args: { limit: number }; result: Array<AuditEntry> };
  op_audit: { args: { id: number }; result: Array<AuditEntry> };
  ui_ready: { args: { marks: LaunchMarks | null }; result: number };
  dlq_page: { args: { profile: string; filter: DlqFilterInput; limit: number; cursor: string | null }; result: DlqPageView };
  dlq_stats: { args: { profile: string; groupBy: DlqGroupBy; filter: DlqFilterInput | null }; result: DlqStatsView };
  dlq_causes: { args: { profile: string; filter: DlqFilterInput }; result: Array<DlqCauseView> };
  delivery_metrics: { args: { profile: string; window: MetricsWindow; groupBy: MetricsGroupBy }; result: DeliveryHealthView };
  test_target: { args: { profile: string; input: TargetTestInput }; result: TargetTestView };
  list_target_tests: { args: { profile: string; target: string }; result: Array<TargetTestView> };
  take_shown_secrets: { args: { profile: string }; result: Array<ShownSecretView> };
  start_rotation: { args: { profile: string; input: RotationStartInput }; result: RotationProgressView };
  start_certificate_rotation: { args: { profile: string; input: CertificateRotationInput }; result: RotationProgressView };
  resume_rotation: { args: { id: string }; result: RotationProgressView };
  get_rotation: { args: { id: string }; result: RotationView };
  list_rotations: { args: { profile: string }; result: Array<RotationView> };
  acknowledge_secret: { args: { id: string }; result: RotationView };
  verify_rotation: { args: { id: string }; result: RotationView };
  promote_rotation: { args: { id: string; skipVerify: boolean }; result: RotationView };
  rollback_rotation: { args: { id: string }; result: RotationView };
  recovery_findings: { args: { profile: string }; result: RecoveryView };
  run_fix: { args: { profile: string; findingId: string; action: number; key: string }; result: FixOutcomeView };
  list_recovery_writes: { args: { profile: string }; result: Array<RecoveryWriteView> };
  new_retirement_id: { args: {  }; result: string };
  preview_retirement: { args: { profile: string; kind: ResourceKind; name: string; cascadeFlows: boolean }; result: RetirementDryRun };
  start_retirement: { args: { profile: string; input: RetireInput }; result: RetirementItemView };
  cancel_retirement: { args: { profile: string; id: string }; result: RetirementItemView };
  list_retirements: { args: { profile: string }; result: Array<RetirementItemView> };
  get_retirement: { args: { profile: string; id: string }; result: RetirementItemView };
  get_event: { args: { profile: string; id: string }; result: EventView };
  find_events: { args: { profile: string; eventKey: string; endpoint: string | null }; result: EventListView };
  get_delivery: { args: { profile: string; id: string }; result: DeliveryView };
  retry_schedule: { args: { profile: string }; result: Array<number> };
  replay_dry_run: { args: { profile: string; selection: ReplaySelectionInput }; result: number };
  new_replay_id: { args: {  }; result: string };
  start_replay: { args: { profile: string; input: ReplayStartInput }; result: ReplayWriteView };
  cancel_replay: { args: { profile: string; sessionId: string }; result: ReplayWriteView };
  list_replay_writes: { args: { profile: string }; result: Array<ReplayWriteView> };
  list_replays: { args: { profile: string }; result: Array<ReplaySessionView> };
  get_replay: { args: { profile: string; id: string }; result: ReplaySessionView };
  agents_settings: { args: { profile: string }; result: AgentsSettings };
  set_agents_read_only: { args: { profile: string; readOnly: boolean }; result: AgentsSettings };
  gitops_sources: { args: { profile: string }; result: Array<GitopsSource> };
  gitops_add_source: { args: { profile: string; spec: SourceSpec }; result: GitopsSource };
  gitops_remove_source: { args: { profile: string; source: string }; result: null };
  gitops_plan: { args: { profile: string; spec: SourceSpec; options: PlanOptions }; result: GitopsPlan };
  gitops_apply: { args: { plan: GitopsPlan }; result: ApplyReport };
  gitops_progress: { args: { profile: string; source: string; commit: string }; result: ApplyProgress };
  gitops_status: { args: { profile: string; source: string }; result: GitopsStatus };
  gitops_managed: { args: { profile: string }; result: Array<ManagedResource> };
  app_info: { args: {  }; result: AppInfo };
  diagnostics: { args: {  }; result: string };
  report_ui_error: { args: { message: string }; result: null };
  update_settings: { args: {  }; result: UpdateSettingsView };
  save_update_settings: { args: { input: UpdateSettingsInput }; result: UpdateSettingsView };
  check_update: { args: {  }; result: UpdateStatus };
  download_update: { args: {  }; result: UpdateStatus };
  update_status: { args: {  }; result: UpdateStatus };
  install_update: { args: {  }; result: null };
};
