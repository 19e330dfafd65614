//! `switchyard profile …`: control-plane connections, and choosing the profile a command uses.

use std::io::Read;

use anyhow::{Context, bail};
use switchyard_core::*;

use crate::args::ProfileCmd;
use crate::{Exit, emit, print_error, table};

pub async fn pick_profile(console: &Console, chosen: &Option<String>) -> anyhow::Result<String> {
    if let Some(p) = chosen {
        return Ok(p.clone());
    }
    let profiles = console.list_profiles().await?;
    match profiles.as_slice() {
        [only] => Ok(only.name.clone()),
        [] => bail!(
            "no profile yet: add one with `switchyard profile add NAME --url URL --token-stdin`"
        ),
        many => bail!(
            "several profiles exist ({}); choose one with --profile NAME",
            many.iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn read_token() -> anyhow::Result<String> {
    let mut token = String::new();
    std::io::stdin()
        .read_to_string(&mut token)
        .context("reading the token from standard input")?;
    let token = token.trim().to_owned();
    if token.is_empty() {
        bail!(
            "no token on standard input (pipe it in: `printf %s \"$TOKEN\" | switchyard profile add …`)"
        );
    }
    Ok(token)
}

fn storage_note(p: &Profile) -> Option<String> {
    match &p.token_storage {
        TokenStorage::File { path } => Some(format!(
            "note: no OS keychain is available here; the token is stored in {path} (mode 0600, readable only by you)"
        )),
        _ => None,
    }
}

pub async fn profile_cmd(console: &Console, json: bool, cmd: ProfileCmd) -> anyhow::Result<Exit> {
    match cmd {
        ProfileCmd::Add {
            name,
            url,
            token_stdin: _,
        } => add(console, json, name, url).await?,
        ProfileCmd::Edit {
            name,
            url,
            token_stdin,
        } => {
            let token = if token_stdin {
                Some(read_token()?)
            } else {
                None
            };
            let p = console
                .edit_profile(&name, ProfileEdit { url, token })
                .await?;
            emit(json, &p, |p| {
                outln!("updated profile {} ({})", p.name, p.url)
            });
        }
        ProfileCmd::List => list(console, json).await?,
        ProfileCmd::Test { name } => return test(console, json, &name).await,
        ProfileCmd::Agents {
            name,
            read_only,
            allow_writes: _,
        } => agents(console, json, &name, read_only).await?,
        ProfileCmd::Remove {
            name,
            discard_queued,
        } => return remove(console, json, &name, discard_queued).await,
    }
    Ok(Exit::Ok)
}

/// Removes a profile: refused (exit 6, naming what is queued) unless nothing is queued or
/// `discard_queued`; then it names what was lost.
async fn remove(
    console: &Console,
    json: bool,
    name: &str,
    discard_queued: bool,
) -> anyhow::Result<Exit> {
    let discard = match discard_queued {
        true => DiscardQueued::All,
        false => DiscardQueued::No,
    };
    let lost = match console.remove_profile(name, discard).await {
        Ok(lost) => lost,
        Err(CoreError::QueuedWork { profile, queued }) => {
            let hints = queued_hints(&profile, &queued);
            print_error(json, &CoreError::QueuedWork { profile, queued }.into());
            if !json {
                for hint in hints {
                    errln!("hint: {hint}");
                }
            }
            return Ok(Exit::Refused);
        }
        Err(e) => return Err(e.into()),
    };
    let out = serde_json::json!({"removed": name, "discarded": lost});
    emit(json, &out, |_| {
        if lost.is_empty() {
            outln!("removed profile {name}")
        } else {
            outln!("removed profile {name}, discarding {lost} (not confirmed by the control plane)")
        }
    });
    Ok(Exit::Ok)
}

/// How to send each kind that is queued, then how to remove losing it.
fn queued_hints(name: &str, queued: &QueuedWork) -> Vec<String> {
    let mut hints: Vec<String> = Vec::new();
    for c in &queued.kinds {
        let hint = match c.kind {
            QueuedKind::Write | QueuedKind::Recovery => format!(
                "`switchyard --profile {name} sync` sends writes, fixes and retirements (`switchyard outbox list` shows them)"
            ),
            QueuedKind::Rotation => format!(
                "`switchyard --profile {name} rotation list` shows the rotation; `rotation resume ID` continues it"
            ),
            QueuedKind::Replay => format!("`switchyard --profile {name} replay sync` sends replays"),
            QueuedKind::SecretChange | QueuedKind::CertificateActivation | QueuedKind::TestWebhook => {
                "a signing-secret change, certificate activation or test webhook is sent by running its command again with the --key it printed".to_owned()
            }
        };
        if !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    hints.push(format!(
        "`switchyard profile remove {name} --discard-queued` removes the profile, losing it"
    ));
    hints
}

async fn add(console: &Console, json: bool, name: String, url: String) -> anyhow::Result<()> {
    let token = read_token()?;
    let p = console.add_profile(NewProfile { name, url, token }).await?;
    if let Some(note) = storage_note(&p) {
        errln!("{note}");
    }
    emit(json, &p, |p| outln!("added profile {} ({})", p.name, p.url));
    Ok(())
}

async fn list(console: &Console, json: bool) -> anyhow::Result<()> {
    let profiles = console.list_profiles().await?;
    emit(json, &profiles, |ps| {
        let rows = ps
            .iter()
            .map(|p| {
                let storage = match &p.token_storage {
                    TokenStorage::Keychain => "keychain".to_owned(),
                    TokenStorage::File { .. } => "file (0600)".to_owned(),
                    TokenStorage::Memory => "memory".to_owned(),
                };
                vec![
                    p.name.clone(),
                    p.url.clone(),
                    storage,
                    if p.sandbox { "yes".into() } else { "".into() },
                    if p.agents_read_only {
                        "read-only".into()
                    } else {
                        "".into()
                    },
                ]
            })
            .collect::<Vec<_>>();
        table::print(&["NAME", "URL", "TOKEN", "SANDBOX", "AGENTS"], &rows);
    });
    Ok(())
}

/// Checks the profile's connection and token: exit 0 when both are good, else 1.
async fn test(console: &Console, json: bool, name: &Option<String>) -> anyhow::Result<Exit> {
    let name = pick_profile(console, name).await?;
    let r = console.test_connection(&name).await?;
    let ok = r.healthy && r.authenticated;
    emit(json, &r, |r| {
        if ok {
            let v = r
                .server
                .as_ref()
                .map(|s| s.version.clone())
                .unwrap_or_default();
            let role = match &r.caller {
                Some(c) => format!(", role {} (tenant {})", c.role, c.tenant),
                None => ", no roles on this server (the token may do everything)".to_owned(),
            };
            outln!(
                "{}: healthy, token accepted, {} ms, server {v}{role}",
                r.profile,
                r.latency_ms.unwrap_or(0)
            );
        } else {
            outln!(
                "{}: FAILED: {}",
                r.profile,
                r.error.clone().unwrap_or_default()
            );
        }
    });
    Ok(if ok { Exit::Ok } else { Exit::Error })
}

async fn agents(console: &Console, json: bool, name: &str, read_only: bool) -> anyhow::Result<()> {
    let p = console.set_agents_read_only(name, read_only).await?;
    emit(json, &p, |p| {
        if p.agents_read_only {
            outln!(
                "profile {}: read-only for agents (switchyard mcp offers no write tools for it)",
                p.name
            )
        } else {
            outln!(
                "profile {}: agents may write (when their server runs with --allow-writes)",
                p.name
            )
        }
    });
    Ok(())
}
