//! `switchyard profile …`: control-plane connections, and choosing the profile a command uses.

use std::io::Read;

use anyhow::{Context, bail};
use switchyard_core::*;

use crate::args::ProfileCmd;
use crate::{Exit, emit, table};

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
        ProfileCmd::Remove { name } => {
            console.remove_profile(&name).await?;
            emit(json, &serde_json::json!({"removed": name}), |_| {
                outln!("removed profile {name}")
            });
        }
    }
    Ok(Exit::Ok)
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
            outln!(
                "{}: healthy, token accepted, {} ms, server {v}",
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
