//! The Switchyard console core, shared by the `switchyard` CLI and the desktop app.
//!
//! Open a [`Console`] on a data dir, then:
//! - profiles: [`Console::add_profile`], [`Console::list_profiles`], [`Console::edit_profile`],
//!   [`Console::remove_profile`], [`Console::test_connection`], [`Console::register_sandbox`];
//! - the cache: [`Console::list_resources`], [`Console::get_resource`], [`Console::refresh`];
//! - writes: [`Console::enqueue`] (returns the [`OutboxOp`] at once, works offline);
//! - the outbox: [`Console::list_outbox`], [`Console::op`], [`Console::retry`],
//!   [`Console::retry_as_new`], [`Console::discard`], [`Console::conflict`],
//!   [`Console::pending_counts`];
//! - sync: [`Console::sync`] (one pass, or until drained), progress on [`Console::subscribe`];
//! - the audit log: [`Console::audit`];
//! - rotations: [`Console::start_rotation`], [`Console::resume_rotation`],
//!   [`Console::verify_rotation`], [`Console::promote_rotation`], [`Console::rollback_rotation`],
//!   [`Console::acknowledge_secret`], [`Console::rotation`], [`Console::rotations`] (see [`rotation`]);
//! - GitOps: [`Console::gitops_plan`], [`Console::gitops_apply`], [`Console::gitops_status`]
//!   (see [`gitops`]);
//! - recovery: [`Console::findings`], [`Console::run_fix`], [`Console::retire`],
//!   [`Console::retirement_status`], [`Console::cancel_retirement`], [`Console::retirements`],
//!   [`Console::preview_retirement`], [`Console::recovery_ops`], [`Console::sync_recovery`]
//!   (see [`recovery`]).
//!
//! Exactly-once: every write gets a UUID idempotency key when it is queued, and every resend
//! uses it; the optimistic cache change and the outbox row commit in one transaction; a
//! fenced lease in SQLite keeps two processes (CLI and app) from sending one op at once.

mod action;
mod audit;
mod cache;
pub mod cert_ops;
pub mod client;
pub mod clock;
mod console;
mod db;
pub mod dlq;
pub mod error;
pub mod gitops;
mod health;
mod lease;
mod live;
pub mod local;
mod outbox;
pub mod owed_secrets;
pub mod queued;
pub mod recovery;
pub mod replay;
pub mod retry;
pub mod rotation;
pub mod schedule;
pub mod secret_ops;
mod secrets;
pub mod shown_once;
mod sync;
pub mod target_test;
pub mod types;

pub use action::ActionState;
pub use clock::{Clock, RandomSource};
pub use console::{Console, ConsoleOptions, default_data_dir};
/// The SQLite pragmas of the console database (the benchmark baseline uses the same).
pub use db::connect_options as sqlite_connect_options;
/// The pool options of the console database (the benchmark baseline uses the same).
pub use db::pool_options as sqlite_pool_options;
pub use dlq::{DlqCause, DlqQuery};
pub use error::{CoreError, ErrorBody, ErrorClass, ManifestProblem, Result};
pub use queued::{DiscardQueued, QueuedCount, QueuedKind, QueuedWork};
pub use recovery::{
    DoctorFinding, DoctorReport, FindingSource, FixOutcome, RecoveryAction, RecoveryOp,
    RetirementView, ServerCheck,
};
pub use replay::{ReplayAction, ReplayEnqueued, ReplayOp, ReplayOpState, ReplayStart};
pub use retry::RetryPolicy;
pub use rotation::{Rotation, RotationProgress, RotationStep, SecretValue};
pub use switchyard_protocol::client_certs as protocol_client_certs;
pub use switchyard_protocol::diagnostics as protocol_diagnostics;
pub use switchyard_protocol::dlq as protocol_dlq;
pub use switchyard_protocol::events as protocol_events;
pub use switchyard_protocol::metrics as protocol_metrics;
pub use switchyard_protocol::replay as protocol_replay;
pub use switchyard_protocol::retirement as protocol_retirement;
pub use switchyard_protocol::secrets as protocol_secrets;
pub use switchyard_protocol::{
    Problem, Resource, ResourceKind, ServerInfo, TargetTestRequest, TargetTestResult,
    parse_duration,
};
pub use target_test::TargetTestOp;
pub use types::*;
