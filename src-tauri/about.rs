//! What the About dialog shows and what "Copy diagnostics" copies: versions, the OS and its
//! WebKit, where the log and the data live, how many profiles there are and where their writes
//! stand. Never a token, a URL or a resource: a bug report is pasted into places others read.

use std::path::Path;

use switchyard_core::{Console, TokenStorage};

use crate::ipc::{AppInfo, OutboxTotals};

/// The name of the log file in the log dir (`tauri_plugin_log`'s `LogDir { file_name }`).
pub const LOG_FILE_NAME: &str = "switchyard";

/// The About dialog's facts for the running app.
pub fn info(state: &crate::state::AppState) -> AppInfo {
    use tauri::Manager;
    let log_dir = crate::update_flow::handle().and_then(|a| a.path().app_log_dir().ok());
    app_info(
        log_dir.as_deref(),
        state.core.data_dir(),
        crate::updates::key_present(),
    )
}

pub fn app_info(log_dir: Option<&Path>, data_dir: &Path, update_key: bool) -> AppInfo {
    AppInfo {
        version: switchyard_build_info::VERSION.to_owned(),
        commit: switchyard_build_info::commit().map(str::to_owned),
        build_date: switchyard_build_info::BUILD_DATE.to_owned(),
        tauri_version: tauri::VERSION.to_owned(),
        webview_version: wry::webview_version().ok(),
        os: os_description(),
        log_file: log_dir.map(|d| d.join(format!("{LOG_FILE_NAME}.log")).display().to_string()),
        data_dir: data_dir.display().to_string(),
        signed_updates: update_key,
    }
}

/// The OS as a person would name it: Linux's `PRETTY_NAME` and kernel, else family and arch.
fn os_description() -> String {
    let arch = std::env::consts::ARCH;
    if cfg!(target_os = "linux") {
        let pretty = std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                    .map(|v| v.trim_matches('"').to_owned())
            })
            .unwrap_or_else(|| "Linux".to_owned());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|k| format!(", kernel {}", k.trim()))
            .unwrap_or_default();
        format!("{pretty} ({arch}{kernel})")
    } else {
        format!("{} ({arch})", std::env::consts::OS)
    }
}

/// The outbox of every profile, summed, and the profiles' count.
pub async fn outbox_totals(core: &Console) -> switchyard_core::Result<OutboxTotals> {
    let profiles = core.list_profiles().await?;
    let mut totals = OutboxTotals {
        profiles: profiles.len() as u32,
        sandbox_profiles: profiles.iter().filter(|p| p.sandbox).count() as u32,
        keychain_tokens: profiles
            .iter()
            .filter(|p| matches!(p.token_storage, TokenStorage::Keychain))
            .count() as u32,
        ..OutboxTotals::default()
    };
    for p in &profiles {
        let c = core.pending_counts(&p.name).await?;
        totals.pending += c.pending;
        totals.sending += c.sending;
        totals.needs_attention += c.needs_attention;
    }
    Ok(totals)
}

/// The text "Copy diagnostics" puts on the clipboard. It is built only from `info` and
/// `totals`, which carry no token, URL or profile name by construction.
pub fn diagnostics_text(info: &AppInfo, totals: &OutboxTotals) -> String {
    let mut out = String::from("Switchyard diagnostics\n");
    let mut line = |k: &str, v: &str| out.push_str(&format!("{k:<16}{v}\n"));
    line("version", &info.version);
    line(
        "commit",
        info.commit
            .as_deref()
            .unwrap_or("unknown (built without git metadata)"),
    );
    line("built", &info.build_date);
    line("tauri", &info.tauri_version);
    line(
        "webview",
        info.webview_version.as_deref().unwrap_or("unknown"),
    );
    line("os", &info.os);
    line(
        "signed updates",
        if info.signed_updates {
            "yes"
        } else {
            "no (no update key in this build)"
        },
    );
    line("log file", info.log_file.as_deref().unwrap_or("unknown"));
    line("data dir", &info.data_dir);
    line(
        "profiles",
        &format!(
            "{} ({} sandbox, {} with the token in the OS keychain)",
            totals.profiles, totals.sandbox_profiles, totals.keychain_tokens
        ),
    );
    line(
        "outbox",
        &format!(
            "{} pending, {} sending, {} need attention",
            totals.pending, totals.sending, totals.needs_attention
        ),
    );
    out
}
