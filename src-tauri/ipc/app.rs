//! The About dialog, diagnostics and updates as the UI sees them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What this build is and where it keeps things (the About dialog).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct AppInfo {
    pub version: String,
    /// Absent when the build's source had no git metadata.
    pub commit: Option<String>,
    /// RFC 3339 UTC.
    pub build_date: String,
    pub tauri_version: String,
    /// The system webview (WebKitGTK on Linux); absent when it cannot be asked.
    pub webview_version: Option<String>,
    pub os: String,
    pub log_file: Option<String>,
    pub data_dir: String,
    /// Whether this build carries an update key (packaged builds do; source builds do not).
    pub signed_updates: bool,
}

/// Profiles and the outbox, summed over every profile (never a token, URL or name).
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct OutboxTotals {
    pub profiles: u32,
    pub sandbox_profiles: u32,
    pub keychain_tokens: u32,
    pub pending: u64,
    pub sending: u64,
    pub needs_attention: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct UpdateSettingsView {
    pub feed_url: Option<String>,
    /// `null`: not decided yet (the first launch asks); nothing is checked until `true`.
    pub auto_check: Option<bool>,
    pub signed_updates: bool,
    /// Whether this copy was installed from a package the updater can replace.
    pub installable: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct UpdateSettingsInput {
    pub feed_url: Option<String>,
    pub auto_check: Option<bool>,
}

/// Where an update stands; the UI polls it while something is under way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum UpdateStatus {
    #[default]
    Idle,
    Checking,
    UpToDate {
        current_version: String,
    },
    Available {
        version: String,
        current_version: String,
        notes: Option<String>,
        date: Option<String>,
    },
    Downloading {
        version: String,
        downloaded: u64,
        total: Option<u64>,
    },
    /// Downloaded and verified against the build's update key; installs on restart.
    Ready {
        version: String,
    },
    Installing {
        version: String,
    },
    /// `refused`: the artefact did not verify; nothing was installed.
    Failed {
        message: String,
        refused: bool,
    },
}

/// The webview's side of a launch, in ms since its page started loading (`performance.now()`),
/// sent with `ui_ready` and logged beside the app's own phases (docs/desktop.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, TS)]
pub struct LaunchMarks {
    /// The UI's script starts running (the bundle is loaded and parsed).
    pub script_ms: f64,
    /// The first render is committed (the shell is on screen, without data).
    pub first_render_ms: f64,
    /// The first answer of a command reached the UI.
    pub first_answer_ms: Option<f64>,
    /// The first screen shows its data.
    pub shown_ms: f64,
}
