//! Command-line arguments (contract section 2).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "switchyard",
    version = switchyard_build_info::LONG_VERSION,
    about = "The Switchyard console: manage endpoints, targets and flows on control planes"
)]
pub struct Cli {
    /// Data directory shared with the desktop app (default: the OS app-data dir).
    #[arg(long, global = true, env = "SWITCHYARD_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Profile to use (default: the only profile, if there is exactly one).
    #[arg(long, global = true, env = "SWITCHYARD_PROFILE", value_name = "NAME")]
    pub profile: Option<String>,
    /// Print JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Manage control-plane connections.
    #[command(subcommand)]
    Profile(ProfileCmd),
    /// Endpoints: where events come in.
    #[command(subcommand)]
    Endpoints(ResourceCmd),
    /// Targets: webhook destinations.
    #[command(subcommand)]
    Targets(TargetCmd),
    /// Flows: routes from an endpoint to a target.
    #[command(subcommand)]
    Flows(ResourceCmd),
    /// Queued writes.
    #[command(subcommand)]
    Outbox(OutboxCmd),
    /// Send queued writes to the control plane.
    Sync(SyncArgs),
    /// Re-read the profile's resources from the server into the local cache.
    Refresh,
    /// Show the local audit log (newest first).
    Audit(AuditArgs),
    /// The dead-letter queue: deliveries whose every attempt failed.
    #[command(subcommand)]
    Dlq(crate::commands::dlq::DlqCmd),
    /// Replay sessions: send dead deliveries again.
    #[command(subcommand)]
    Replay(crate::commands::dlq::ReplayCmd),
    /// Delivery health: success rate, failing targets (worst first), backlog, DLQ depth.
    Status(crate::commands::status::StatusArgs),
    /// Events: find one by id or by event key, with all its deliveries.
    #[command(subcommand)]
    Events(crate::commands::events::EventsCmd),
    /// Serve the Model Context Protocol for AI agents (stdio, or --http). See docs/mcp.md.
    Mcp(crate::commands::mcp::McpArgs),
    /// Guided signing-secret rotations: stage, verify, promote or roll back, resumable after a
    /// crash without a second secret (docs/rotation.md).
    #[command(subcommand)]
    Rotation(crate::commands::rotation::RotationCmd),
    /// GitOps: plan and apply a Git commit's manifests, and watch for drift.
    #[command(subcommand)]
    Gitops(crate::commands::gitops::GitopsCmd),
    /// What is wrong (console and control plane) and the guided fix for each.
    Doctor(crate::commands::doctor::DoctorArgs),
    /// Retire a resource: drain it, disable it, wait out a grace period, delete it.
    Retire(crate::commands::retire::RetireArgs),
}

#[derive(Subcommand)]
pub enum ProfileCmd {
    /// Add a profile. The token is read from standard input, never from an argument.
    Add {
        name: String,
        #[arg(long)]
        url: String,
        /// Read the bearer token from standard input (required).
        #[arg(long, required = true)]
        token_stdin: bool,
    },
    /// List profiles.
    List,
    /// Test a profile's connection (health, latency, token).
    Test { name: Option<String> },
    /// Change a profile's URL and/or token.
    Edit {
        name: String,
        #[arg(long)]
        url: Option<String>,
        #[arg(long)]
        token_stdin: bool,
    },
    /// Remove a profile. Refused (exit 6) while work is still queued for it (writes, replays,
    /// rotations in progress, …); the message names each kind and count.
    Remove {
        name: String,
        /// Remove it anyway, losing the queued work (the output names what was lost).
        #[arg(long)]
        discard_queued: bool,
    },
    /// Whether AI agents (`switchyard mcp`) may write through a profile: mark a production
    /// profile read-only for agents whatever flags their server was started with.
    #[command(group = clap::ArgGroup::new("agents").required(true))]
    Agents {
        name: String,
        /// Agents may only read.
        #[arg(long, group = "agents")]
        read_only: bool,
        /// Lift the mark: agents may write when their server runs with --allow-writes.
        #[arg(long, group = "agents")]
        allow_writes: bool,
    },
}

#[derive(Args)]
pub struct WaitArg {
    /// Wait until the write is synced (exit 3 if it needs attention).
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this long (e.g. 30s, 2m).
    #[arg(long, value_name = "DUR", default_value = "60s")]
    pub timeout: String,
}

#[derive(Subcommand)]
pub enum ResourceCmd {
    /// List resources from the local cache (works offline).
    List,
    /// Show one resource: server state and local view.
    Get { name: String },
    /// Queue a create. --spec is JSON, @FILE, or - for stdin.
    Create {
        name: String,
        #[arg(long)]
        spec: String,
        #[command(flatten)]
        wait: WaitArg,
    },
    /// Queue an update: --spec is a JSON merge patch of the spec.
    Update {
        name: String,
        #[arg(long)]
        spec: String,
        #[command(flatten)]
        wait: WaitArg,
    },
    /// Queue an apply (declarative upsert of the whole spec).
    Apply {
        name: String,
        #[arg(long)]
        spec: String,
        #[command(flatten)]
        wait: WaitArg,
    },
    /// Queue a delete.
    Delete {
        name: String,
        #[command(flatten)]
        wait: WaitArg,
    },
    /// Queue enabling an endpoint.
    Enable {
        name: String,
        #[command(flatten)]
        wait: WaitArg,
    },
    /// Queue disabling an endpoint.
    Disable {
        name: String,
        #[command(flatten)]
        wait: WaitArg,
    },
}

/// `switchyard targets …`: the resource commands, and what only targets have.
#[derive(Subcommand)]
pub enum TargetCmd {
    #[command(flatten)]
    Resource(ResourceCmd),
    /// Send one signed test webhook to a target and show what the receiver answered. Queued
    /// like every write (saved locally, then sent with one Idempotency-Key): run it again with
    /// the same --key after a timeout and the receiver still gets it once.
    Test(TargetTestArgs),
    /// List a target's signing secrets: ids, created and expiry times (never values), live.
    /// With --reveal-pending: show the first secrets of created targets that an interrupted
    /// sync never showed (fetched again from the control plane with the creation's key).
    Secrets {
        #[arg(
            required_unless_present = "reveal_pending",
            conflicts_with = "reveal_pending"
        )]
        name: Option<String>,
        /// Show every first signing secret still owed on the profile (values on stderr; with
        /// --json, on stdout), or name the targets that lost it and the rotation that
        /// replaces it.
        #[arg(long)]
        reveal_pending: bool,
    },
    /// Stage a new signing secret beside the old ones (docs/rotation.md): its value is shown
    /// once; the older ones expire after the overlap.
    RotateSecret(RotateSecretArgs),
    /// End one signing secret now: the old one to promote the new, the new one to roll back.
    ExpireSecret(ExpireSecretArgs),
    /// List a target's client certificates (mTLS): id, fingerprint, subject, expiry and state
    /// (staged, active, retired), live; never a key.
    Certs { name: String },
    /// Upload a client certificate chain (PEM, leaf first) and its key, staged: checked by the
    /// control plane, the key stored sealed there and never written by the console. Idempotent
    /// by --id: run it again after a timeout.
    UploadCert(UploadCertArgs),
    /// Make a client certificate the one every delivery presents; the previous one is retired
    /// (activate it again to roll back until it expires).
    ActivateCert(ActivateCertArgs),
}

#[derive(Args)]
pub struct UploadCertArgs {
    pub name: String,
    /// The certificate's id on the target (letters, digits and . _ : -; e.g. `billing-2027`).
    #[arg(long, value_name = "ID")]
    pub id: String,
    /// The certificate chain, PEM: the leaf first, then each issuer.
    #[arg(long, value_name = "FILE")]
    pub cert: std::path::PathBuf,
    /// The leaf's private key, PEM. Read into memory and sent; never stored by the console.
    #[arg(long, value_name = "FILE")]
    pub key: std::path::PathBuf,
    /// Give up resending after this long.
    #[arg(long, value_name = "DUR", default_value = "60s")]
    pub timeout: String,
}

#[derive(Args)]
pub struct ActivateCertArgs {
    pub name: String,
    /// The certificate to activate (see `targets certs NAME`).
    pub id: String,
    #[command(flatten)]
    pub keyed: KeyedArgs,
}

#[derive(Args)]
pub struct RotateSecretArgs {
    pub name: String,
    /// How long the older secrets keep signing beside the new one (default 24h, at most 7d).
    #[arg(long, value_name = "DUR")]
    pub overlap: Option<String>,
    /// Rotate although an overlap is still open, and expire every older secret now (a leaked
    /// secret): receivers that only know an older one fail at once.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub keyed: KeyedArgs,
}

#[derive(Args)]
pub struct ExpireSecretArgs {
    pub name: String,
    /// The secret to end (`sec_…`, see `targets secrets NAME`).
    pub id: String,
    #[command(flatten)]
    pub keyed: KeyedArgs,
}

/// A keyed write sent at once: its key, and how long to wait for the answer.
#[derive(Args)]
pub struct KeyedArgs {
    /// The write's idempotency key (default: a new one). The same key again resumes that write
    /// (the control plane acts once).
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Give up waiting for the answer after this long (the write stays queued).
    #[arg(long, value_name = "DUR", default_value = "60s")]
    pub timeout: String,
}

#[derive(Args)]
pub struct TargetTestArgs {
    pub name: String,
    /// The webhook's `type` (default `switchyard.test`).
    #[arg(long, value_name = "TYPE")]
    pub event_type: Option<String>,
    /// The webhook's `data`: JSON, @FILE, or - for stdin (default `{}`).
    #[arg(long, value_name = "JSON")]
    pub payload: Option<String>,
    /// Sign with this signing secret only (`sec_…`, from `GET /v1/targets/NAME/secrets`): the
    /// verify step of a rotation, proving the receiver accepts the new secret.
    #[arg(long, value_name = "ID")]
    pub secret: Option<String>,
    /// Present this client certificate (e.g. a staged one, see `targets certs NAME`) in the TLS
    /// handshake instead of the active one: the verify step of a certificate rotation.
    #[arg(long, value_name = "ID")]
    pub cert: Option<String>,
    /// The test's idempotency key (default: a new one). The same key again resumes that test.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Give up waiting for the answer after this long (the test stays queued).
    #[arg(long, value_name = "DUR", default_value = "60s")]
    pub timeout: String,
}

#[derive(Subcommand)]
pub enum OutboxCmd {
    /// List queued writes (live ones by default).
    List {
        /// Include done, discarded and superseded operations.
        #[arg(long)]
        all: bool,
    },
    /// Show one operation, with the three-way view when it conflicts.
    Show { id: i64 },
    /// Send a needs-attention operation again (same key if the server never stored its
    /// failure, else as a new operation rebased on the server's current version).
    Retry {
        id: i64,
        /// Always retry as a new operation (new key, rebased on the current server version).
        #[arg(long)]
        new_key: bool,
    },
    /// Drop a queued operation; the cache returns to server truth.
    Discard { id: i64 },
}

#[derive(Args)]
pub struct SyncArgs {
    /// Keep going until nothing is left to send.
    #[arg(long)]
    pub until_drained: bool,
    /// Give up after this long (e.g. 30s, 5m).
    #[arg(long, value_name = "DUR")]
    pub timeout: Option<String>,
}

#[derive(Args)]
pub struct AuditArgs {
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// Only actions starting with this (e.g. `op.`).
    #[arg(long)]
    pub action: Option<String>,
    /// Only entries about this outbox operation.
    #[arg(long)]
    pub op: Option<i64>,
}

/// The one duration parser (`500ms`, `30s`, `5m`, `1h`, `2d`), the control plane's too.
pub use switchyard_core::parse_duration;
