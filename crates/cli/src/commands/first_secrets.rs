//! A created target's first signing secret, shown once: after every sync (what it received,
//! and what an interrupted earlier sync still owes), and by `targets secrets --reveal-pending`
//! (crates/core/src/owed_secrets.rs). Values go to standard error (stdout keeps its `--json`
//! shape), except for `--reveal-pending --json`, which asks for them on stdout.

use std::io::Write as _;

use switchyard_core::owed_secrets::{OwedSecret, RevealReport};
use switchyard_core::shown_once::ShownSecret;
use switchyard_core::*;

use crate::{Exit, emit};

/// Shows (on stderr) the first secrets this process received, then fetches and shows those
/// still owed on `profile`, and names the targets whose secret is lost. Errors are told on
/// stderr too: a sync's own result comes first.
pub async fn show_after_sync(console: &Console, profile: &str) {
    let held = console.take_shown_secrets(profile);
    print_and_ack(console, held).await;
    match console.reveal_owed_secrets(profile).await {
        Ok(report) => {
            print_and_ack(console, report.shown).await;
            tell_lost(&report.lost, &report.waiting);
        }
        Err(e) => errln!("sync: cannot fetch the first signing secrets still owed: {e}"),
    }
}

/// `switchyard targets secrets --reveal-pending`: exit 0 when every owed secret was shown, 3
/// when some are lost (rotate them), 4 when the control plane could not be asked.
pub async fn reveal_pending(console: &Console, profile: &str, json: bool) -> anyhow::Result<Exit> {
    let report = console.reveal_owed_secrets(profile).await?;
    let exit = if !report.lost.is_empty() {
        Exit::NeedsAttention
    } else if !report.waiting.is_empty() {
        Exit::Incomplete
    } else {
        Exit::Ok
    };
    if json {
        // The caller asked for the values on stdout; they count as shown once printed.
        emit(true, &report, |_| {});
        console.secrets_shown(&report.shown).await?;
        return Ok(exit);
    }
    let RevealReport {
        shown,
        lost,
        waiting,
    } = report;
    let none = shown.is_empty() && lost.is_empty() && waiting.is_empty();
    print_and_ack(console, shown).await;
    tell_lost(&lost, &waiting);
    if none {
        errln!("no first signing secret is waiting to be shown on {profile}");
    }
    Ok(exit)
}

/// Prints each value on stderr and tells the console it was shown (only those printed).
async fn print_and_ack(console: &Console, secrets: Vec<ShownSecret>) {
    let mut printed = Vec::with_capacity(secrets.len());
    let mut err = std::io::stderr().lock();
    for s in secrets {
        let line = writeln!(
            err,
            "target {} was created with signing secret {}; shown once, store it now (the receiver verifies webhooks with it):\n  {}",
            crate::table::clean(&s.target),
            s.secret_id
                .as_deref()
                .map_or("(id not reported)".into(), crate::table::clean),
            s.value
        );
        if line.is_err() {
            break;
        }
        printed.push(s);
    }
    drop(err);
    if let Err(e) = console.secrets_shown(&printed).await {
        errln!(
            "note: the shown secrets could not be marked shown ({e}); a later sync may show them again"
        );
    }
}

/// Names the targets whose first secret is lost (with the forced rotation that replaces it)
/// and those that could not be fetched now.
fn tell_lost(lost: &[OwedSecret], waiting: &[OwedSecret]) {
    for l in lost {
        let target = crate::table::clean(&l.target);
        errln!(
            "target {target}: its first signing secret was never shown and can no longer be fetched ({}); \
             give it a new one with `switchyard targets rotate-secret {target} --force`",
            crate::table::clean(&l.reason)
        );
    }
    for w in waiting {
        errln!(
            "target {}: its first signing secret is still owed; not fetched now ({}); run `switchyard targets secrets --reveal-pending` later",
            crate::table::clean(&w.target),
            crate::table::clean(&w.reason)
        );
    }
}
