//! `switchyard rotation start | list | status | resume | verify | promote | rollback`: a
//! target's signing-secret rotation as a guided, resumable procedure (docs/rotation.md "From
//! the console"). The procedure is a row in the data dir; each step is a keyed write whose key
//! is derived from the rotation id, so a command killed mid-step is finished by
//! `rotation resume ID` without a second secret. The new value is printed once, from the
//! server's answer, and never stored.

use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::json;
use switchyard_core::rotation::{Rotation, RotationProgress, RotationStep, SecretValue};
use switchyard_core::*;

use crate::args::parse_duration;
use crate::{Exit, table};

#[derive(Subcommand)]
pub enum RotationCmd {
    /// Start rotating a target's signing secret and stage the new one: its value is printed
    /// once, with what the receiver must do and the next command.
    Start {
        target: String,
        /// How long the old secret keeps signing beside the new one (default 24h, at most 7d).
        #[arg(long, value_name = "DUR")]
        overlap: Option<String>,
        /// Rotate although an overlap is open, and expire the older secrets now (a leaked
        /// secret): receivers that only know an older one fail at once.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        wait: Wait,
    },
    /// The profile's rotations, newest first (as stored; `status ID` asks the server).
    List,
    /// One rotation: its step, secrets, last verify, and what to do next.
    Status { id: String },
    /// Continue a rotation from its stored step: send what is queued (same keys), show the
    /// value again while it is not acknowledged, verify a staged one, say what is next.
    Resume {
        id: String,
        #[command(flatten)]
        wait: Wait,
    },
    /// Send a test webhook signed with the new secret only (exit 5 if the receiver refuses
    /// it). Verifying records that the value is stored: it is not shown again.
    Verify {
        id: String,
        #[command(flatten)]
        wait: Wait,
    },
    /// End the overlap now: expire the old secret(s). Refused unless verified.
    Promote {
        id: String,
        /// Promote a staged rotation that was not (successfully) verified.
        #[arg(long)]
        skip_verify: bool,
        #[command(flatten)]
        wait: Wait,
    },
    /// Expire the new secret while the old one is still valid: the target is as before.
    Rollback {
        id: String,
        #[command(flatten)]
        wait: Wait,
    },
}

#[derive(Args)]
pub struct Wait {
    /// Give up waiting for the server after this long (the step stays queued; `resume` it).
    #[arg(long, value_name = "DUR", default_value = "60s")]
    pub timeout: String,
}

impl Wait {
    fn deadline(&self) -> anyhow::Result<Duration> {
        Ok(parse_duration(&self.timeout)?)
    }
}

pub async fn rotation_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    cmd: RotationCmd,
) -> anyhow::Result<Exit> {
    match cmd {
        RotationCmd::Start {
            target,
            overlap,
            force,
            wait,
        } => {
            let deadline = wait.deadline()?;
            let overlap = overlap.as_deref().map(parse_duration).transpose()?;
            start(console, profile, json, &target, overlap, force, deadline).await
        }
        RotationCmd::List => list(console, profile, json).await,
        RotationCmd::Status { id } => {
            let r = console.rotation(&id).await?;
            show(json, &r, None);
            Ok(match r.step {
                RotationStep::NeedsAttention => Exit::NeedsAttention,
                _ => Exit::Ok,
            })
        }
        RotationCmd::Resume { id, wait } => resume(console, json, &id, wait.deadline()?).await,
        RotationCmd::Verify { id, wait } => {
            let r = console.verify_rotation(&id, wait.deadline()?).await?;
            show(json, &r, None);
            Ok(verify_exit(&r))
        }
        RotationCmd::Promote {
            id,
            skip_verify,
            wait,
        } => {
            let r = console
                .promote_rotation(&id, skip_verify, wait.deadline()?)
                .await?;
            show(json, &r, None);
            Ok(exit_of(r.step))
        }
        RotationCmd::Rollback { id, wait } => {
            let r = console.rollback_rotation(&id, wait.deadline()?).await?;
            show(json, &r, None);
            Ok(exit_of(r.step))
        }
    }
}

/// Starts the rotation and sends its first step: staged (the value shown) is where it
/// should rest.
async fn start(
    console: &Console,
    profile: &str,
    json: bool,
    target: &str,
    overlap: Option<Duration>,
    force: bool,
    deadline: Duration,
) -> anyhow::Result<Exit> {
    let r = console
        .start_rotation(profile, target, overlap, force)
        .await?;
    let progress = console.resume_rotation(&r.id, deadline).await?;
    let exit = match progress.rotation.step {
        RotationStep::Staged => Exit::Ok,
        step => exit_of(step),
    };
    show(json, &progress.rotation, progress.value.as_ref());
    Ok(exit)
}

async fn list(console: &Console, profile: &str, json: bool) -> anyhow::Result<Exit> {
    let all = console.rotations(profile).await?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&all)?);
    } else {
        let rows: Vec<Vec<String>> = all
            .iter()
            .map(|r| {
                vec![
                    r.id.clone(),
                    r.target.clone(),
                    r.step.as_str().to_owned(),
                    r.new_secret_id
                        .clone()
                        .or_else(|| r.new_certificate_id.clone())
                        .unwrap_or_else(|| "-".into()),
                    table::time(Some(r.created_at)),
                ]
            })
            .collect();
        table::print(
            &["ID", "TARGET", "STEP", "NEW CREDENTIAL", "STARTED"],
            &rows,
        );
    }
    Ok(Exit::Ok)
}

/// Sends what is queued; a rotation that reaches staged is verified within the same
/// deadline.
async fn resume(
    console: &Console,
    json: bool,
    id: &str,
    deadline: Duration,
) -> anyhow::Result<Exit> {
    let started = std::time::Instant::now();
    let RotationProgress { rotation, value } = console.resume_rotation(id, deadline).await?;
    if rotation.step != RotationStep::Staged {
        show(json, &rotation, value.as_ref());
        return Ok(exit_of(rotation.step));
    }
    // Staged: the value (when it can still be shown) goes out before the verify, which
    // records it as stored.
    if let (Some(v), false) = (&value, json) {
        outln!("{}", value_lines(&rotation, v));
    }
    let left = deadline.saturating_sub(started.elapsed());
    let r = console.verify_rotation(id, left).await?;
    show(json, &r, if json { value.as_ref() } else { None });
    Ok(verify_exit(&r))
}

/// How a command that asked for a step ends: 0 once the rotation rests at a step, 4 while a
/// step is still queued or in flight, 3 when the server refused one.
fn exit_of(step: RotationStep) -> Exit {
    match step {
        RotationStep::Staging
        | RotationStep::Verifying
        | RotationStep::Promoting
        | RotationStep::RollingBack => Exit::Incomplete,
        RotationStep::NeedsAttention => Exit::NeedsAttention,
        _ => Exit::Ok,
    }
}

/// A verify ends 5 when the receiver refused the new secret (the rotation is back at staged).
fn verify_exit(r: &Rotation) -> Exit {
    match (r.step, &r.verify_result) {
        (RotationStep::Staged, Some(v)) if !v.ok => Exit::TestFailed,
        (step, _) => exit_of(step),
    }
}

/// Prints the rotation (`--json`: `{"rotation": …, "value": …}`, the value only in this
/// output), and in the human form what to do next.
fn show(json: bool, r: &Rotation, value: Option<&SecretValue>) {
    if json {
        let out = json!({"rotation": r, "value": value});
        outln!(
            "{}",
            serde_json::to_string_pretty(&out).expect("output serializes")
        );
        return;
    }
    outln!("{}", describe(r));
    if let Some(v) = value {
        outln!("{}", value_lines(r, v));
    }
    outln!("next: {}", next(r));
}

fn describe(r: &Rotation) -> String {
    let mut out = format!(
        "rotation {} of {}: {}",
        r.id,
        r.target,
        r.step.as_str().replace('_', " ")
    );
    if let Some(new) = &r.new_secret_id {
        out.push_str(&format!("; new secret {new}"));
    }
    let now = chrono::Utc::now();
    for old in &r.old_secrets {
        let when = if old.expires_at <= now {
            "expired"
        } else {
            "signs until"
        };
        out.push_str(&format!(
            "\n  old secret {} {when} {}",
            old.id,
            old.expires_at.to_rfc3339()
        ));
    }
    if let Some(c) = &r.new_certificate {
        out.push_str(&format!(
            "; new certificate {} ({}, sha256 {}, expires {})",
            c.id,
            c.subject,
            c.fingerprint_sha256,
            c.not_after.to_rfc3339()
        ));
    }
    if let Some(c) = &r.old_certificate {
        out.push_str(&format!(
            "\n  previously active certificate {} (expires {})",
            c.id,
            c.not_after.to_rfc3339()
        ));
    }
    if let Some(v) = &r.verify_result {
        let answer = match (v.status, &v.error) {
            (Some(s), _) => format!("HTTP {s}"),
            (None, Some(e)) => e.clone(),
            (None, None) => "no answer".into(),
        };
        let latency = v
            .latency_ms
            .map(|ms| format!(" in {ms} ms"))
            .unwrap_or_default();
        let what = if r.new_certificate_id.is_some() {
            "the new certificate's handshake"
        } else {
            "the new secret"
        };
        let verdict = if v.ok {
            format!("the receiver accepted {what}")
        } else {
            format!("the receiver did NOT accept {what}")
        };
        out.push_str(&format!(
            "\n  verify #{}: {verdict}: {answer}{latency}",
            v.attempt
        ));
    }
    if let Some(p) = &r.problem {
        out.push_str(&format!("\n  NEEDS ATTENTION: {}", p.message));
    }
    if !r.pending_keys.is_empty() {
        out.push_str(&format!(
            "\n  not confirmed yet; saved locally under key(s) {}",
            r.pending_keys.join(", ")
        ));
    }
    out
}

fn value_lines(r: &Rotation, v: &SecretValue) -> String {
    format!(
        "  value (shown once, never stored; give it to the receiver now): {}\n  \
         receiver: add it BESIDE the old secret and accept a request when any `v1,` signature \
         verifies with any secret you hold; keep the old one until the rotation is done{}",
        v.expose(),
        if r.force {
            " (forced: the old one no longer signs)"
        } else {
            ""
        }
    )
}

/// What the person does next, as a command.
fn next(r: &Rotation) -> String {
    let id = &r.id;
    match r.step {
        RotationStep::Staging
        | RotationStep::Verifying
        | RotationStep::Promoting
        | RotationStep::RollingBack => format!(
            "`switchyard rotation resume {id}` sends it again with the same key (the server acts once)"
        ),
        RotationStep::Staged if r.verify_result.as_ref().is_some_and(|v| !v.ok) => format!(
            "fix the receiver and `switchyard rotation verify {id}` again, or `switchyard rotation rollback {id}`"
        ),
        RotationStep::Staged => format!(
            "once the receiver has the value, `switchyard rotation verify {id}` (a test webhook signed with \
             the new secret only); roll back with `switchyard rotation rollback {id}`"
        ),
        RotationStep::Verified => format!(
            "`switchyard rotation promote {id}` ends the overlap now (or let it end on its own); \
             roll back with `switchyard rotation rollback {id}`"
        ),
        RotationStep::Done => {
            "nothing: only the new secret signs; the receiver may drop the old one".to_owned()
        }
        RotationStep::RolledBack => {
            "nothing: the old secret signs as before; the receiver may drop the new one".to_owned()
        }
        RotationStep::NeedsAttention => format!(
            "check `switchyard targets secrets {}`; start a new rotation if one is still needed",
            r.target
        ),
    }
}
