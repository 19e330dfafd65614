//! Signed updates (tauri-plugin-updater): the feed URL and the opt-in live in the app's
//! settings; a check shows "version X available — what changed"; the download reports
//! progress and is verified against this build's update key before anything is kept; the
//! install happens on restart, after the sync driver's current round has finished, so no
//! write is cut off mid-send (queued writes stay in the outbox and go out after the restart).

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use tauri_plugin_updater::{Error as UpdaterError, Update};
use url::Url;

use crate::ipc::{IpcError, IpcErrorCode, UpdateSettingsInput, UpdateSettingsView, UpdateStatus};

/// Settings file in the data dir.
const SETTINGS_FILE: &str = "desktop-updates.json";

/// What a person chose. `auto_check: None` is the first launch's "not decided yet": nothing
/// is asked of any feed until they opt in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateSettings {
    pub feed_url: Option<String>,
    pub auto_check: Option<bool>,
}

impl UpdateSettings {
    pub fn load(data_dir: &Path) -> Self {
        std::fs::read(data_dir.join(SETTINGS_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, data_dir: &Path) -> std::io::Result<()> {
        let body = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(data_dir.join(SETTINGS_FILE), body)
    }

    /// Whether the app may ask the feed on its own (at launch, then daily).
    pub fn checks_automatically(&self) -> bool {
        self.auto_check == Some(true) && self.feed_url.is_some()
    }
}

/// A feed URL must be https; plain http only on this machine (a local mirror, a test server),
/// since the feed's answer itself is not signed (only the artefact is).
pub fn validate_feed(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw.trim()).map_err(|e| format!("feed_url: not a URL ({e})"))?;
    // The URL is kept in the settings file and shown in About and in update errors, so a
    // user name or password in it would be a secret on disk and on screen. The message does
    // not repeat the URL.
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "feed_url: must not carry a user name or password; the feed is read \
                    without credentials (only the download's signature is trusted)"
                .into(),
        );
    }
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        "http" => {
            Err("feed_url: must use https (plain http only on 127.0.0.1, ::1 or localhost)".into())
        }
        other => Err(format!("feed_url: unsupported scheme {other:?}; use https")),
    }
}

/// The update in flight and what the UI polls.
#[derive(Default)]
pub struct Updates {
    pub status: Mutex<UpdateStatus>,
    /// The offer from the last check, then the verified bytes once downloaded.
    pub offer: Mutex<Option<Update>>,
    pub verified: Mutex<Option<Vec<u8>>>,
}

impl Updates {
    pub fn set(&self, status: UpdateStatus) {
        *self.status.lock().expect("update status lock") = status;
    }

    pub fn get(&self) -> UpdateStatus {
        self.status.lock().expect("update status lock").clone()
    }
}

pub fn settings_view(
    settings: &UpdateSettings,
    key_present: bool,
    installable: bool,
) -> UpdateSettingsView {
    UpdateSettingsView {
        feed_url: settings.feed_url.as_deref().map(shown_feed),
        auto_check: settings.auto_check,
        signed_updates: key_present,
        installable,
    }
}

/// A saved feed URL as About shows it. One saved before `validate_feed` refused credentials is
/// shown without them; saving it as shown replaces the saved one.
fn shown_feed(saved: &str) -> String {
    match Url::parse(saved) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        _ => saved.to_owned(),
    }
}

/// Validates and stores the settings; returns them.
pub fn apply_settings(
    data_dir: &Path,
    input: UpdateSettingsInput,
) -> Result<UpdateSettings, IpcError> {
    let feed_url = match input.feed_url.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(raw) => Some(
            validate_feed(raw)
                .map_err(|m| IpcError::new(IpcErrorCode::InvalidInput, m))?
                .to_string(),
        ),
    };
    let settings = UpdateSettings {
        feed_url,
        auto_check: input.auto_check,
    };
    settings.save(data_dir).map_err(|e| {
        IpcError::new(
            IpcErrorCode::Internal,
            format!("cannot save the update settings: {e}"),
        )
    })?;
    Ok(settings)
}

/// Words for an updater failure. `refused` is true when the artefact did not verify: then
/// nothing was installed and the running version stays.
pub fn explain(e: &UpdaterError, version: Option<&str>) -> (String, bool) {
    let running = switchyard_build_info::VERSION;
    let what = version
        .map(|v| format!("version {v}"))
        .unwrap_or_else(|| "the update".into());
    match e {
        UpdaterError::Minisign(_)
        | UpdaterError::Base64(_)
        | UpdaterError::SignatureUtf8(_)
        | UpdaterError::SignedVersionMismatch { .. } => (
            format!(
                "The download of {what} did not match its signature ({e}). It was refused and \
                 nothing was installed; Switchyard {running} keeps running."
            ),
            true,
        ),
        UpdaterError::Reqwest(_) | UpdaterError::Network(_) => (
            format!(
                "The update feed could not be reached: {}. Switchyard {running} keeps running.",
                with_causes(e)
            ),
            false,
        ),
        UpdaterError::ReleaseNotFound | UpdaterError::Serialization(_) => (
            format!("The update feed did not answer with a release description ({e})."),
            false,
        ),
        UpdaterError::TargetNotFound(_) | UpdaterError::TargetsNotFound(_) => (
            format!("The update feed has no build for this system ({e})."),
            false,
        ),
        other => (
            format!(
                "Updating failed: {}. Switchyard {running} keeps running.",
                with_causes(other)
            ),
            false,
        ),
    }
}

/// An error and its causes, "error: cause: cause". The HTTP client's own message is often
/// only "builder error" or "error sending request for url (…)"; what failed (no CA
/// certificates, a refused connection, a TLS alert) is in its causes. A cause whose text
/// the message already carries is not repeated.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

/// The log and the data this build was installed as: a package the updater can replace
/// (deb, AppImage, rpm, msi, nsis, app), or a binary run from a build or an archive.
pub fn installable() -> bool {
    tauri::utils::platform::bundle_type().is_some()
}

/// Where to read the update key from: the build's config (`plugins.updater.pubkey`); debug
/// builds also honour `SWITCHYARD_TEST_UPDATE_PUBKEY` so tests can use a key they generate.
/// Release builds never read it: a variable must not be able to change whom the app trusts.
pub fn test_pubkey_override() -> Option<String> {
    if cfg!(debug_assertions) {
        std::env::var("SWITCHYARD_TEST_UPDATE_PUBKEY")
            .ok()
            .filter(|k| !k.is_empty())
    } else {
        None
    }
}

static KEY_PRESENT: OnceLock<bool> = OnceLock::new();

/// Records, at start, whether this build can verify updates (a non-empty update key).
pub fn set_key_present(present: bool) {
    let _ = KEY_PRESENT.set(present);
}

pub fn key_present() -> bool {
    KEY_PRESENT.get().copied().unwrap_or(false)
}

/// The update key in the app's config (`plugins.updater.pubkey`), if any.
pub fn configured_pubkey(config: &tauri::Config) -> Option<String> {
    config
        .plugins
        .0
        .get("updater")
        .and_then(|u| u.get("pubkey"))
        .and_then(|k| k.as_str())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn an_update_error_says_what_failed_underneath() {
        let bare = Layer(
            "builder error",
            Some(Box::new(Layer(
                "no CA certificates found",
                Some(Box::new(Layer("no CA certificates found", None))),
            ))),
        );
        assert_eq!(
            with_causes(&bare),
            "builder error: no CA certificates found"
        );
        assert_eq!(with_causes(&Layer("timed out", None)), "timed out");
    }

    #[test]
    fn feeds_must_be_https_or_on_this_machine() {
        assert!(validate_feed("https://releases.example.com/switchyard/latest.json").is_ok());
        assert!(validate_feed("http://127.0.0.1:8123/latest.json").is_ok());
        assert!(validate_feed("http://[::1]:8123/latest.json").is_ok());
        assert!(validate_feed("http://localhost/latest.json").is_ok());
        let plain = validate_feed("http://releases.example.com/latest.json").unwrap_err();
        assert!(plain.contains("https"), "{plain}");
        assert!(validate_feed("ftp://example.com/x").is_err());
        for with_credentials in [
            "https://ops:s3cret-token@releases.example.com/latest.json",
            "https://s3cret-token@releases.example.com/latest.json",
            "http://ops:s3cret-token@127.0.0.1:8123/latest.json",
        ] {
            let refused = validate_feed(with_credentials).unwrap_err();
            assert!(refused.contains("user name or password"), "{refused}");
            assert!(
                !refused.contains("s3cret"),
                "the refusal repeats the secret: {refused}"
            );
        }
        assert!(
            validate_feed("not a url")
                .unwrap_err()
                .starts_with("feed_url")
        );
    }

    #[test]
    fn a_feed_saved_with_credentials_is_shown_without_them() {
        let saved = UpdateSettings {
            feed_url: Some("https://ops:s3cret-token@releases.example.com/latest.json".into()),
            auto_check: Some(true),
        };
        let view = settings_view(&saved, true, true);
        let shown = view.feed_url.unwrap();
        assert_eq!(shown, "https://releases.example.com/latest.json");
        assert!(
            validate_feed(&shown).is_ok(),
            "saving it as shown is accepted"
        );
        let plain = UpdateSettings {
            feed_url: Some("https://releases.example.com/latest.json".into()),
            ..saved
        };
        assert_eq!(
            settings_view(&plain, true, true).feed_url.as_deref(),
            Some("https://releases.example.com/latest.json")
        );
    }

    #[test]
    fn the_first_launch_asks_no_feed_until_the_person_opts_in() {
        let first = UpdateSettings::default();
        assert!(!first.checks_automatically());
        let declined = UpdateSettings {
            feed_url: Some("https://x.example/f.json".into()),
            auto_check: Some(false),
        };
        assert!(!declined.checks_automatically());
        let opted_in = UpdateSettings {
            auto_check: Some(true),
            ..declined
        };
        assert!(opted_in.checks_automatically());
    }

    #[test]
    fn settings_round_trip_and_reject_a_bad_feed_without_saving() {
        let dir = tempfile::tempdir().unwrap();
        let saved = apply_settings(
            dir.path(),
            UpdateSettingsInput {
                feed_url: Some(" https://x.example/f.json ".into()),
                auto_check: Some(true),
            },
        )
        .unwrap();
        assert_eq!(UpdateSettings::load(dir.path()), saved);
        let bad = apply_settings(
            dir.path(),
            UpdateSettingsInput {
                feed_url: Some("http://x.example/f.json".into()),
                auto_check: Some(false),
            },
        )
        .unwrap_err();
        assert_eq!(bad.code, IpcErrorCode::InvalidInput);
        assert!(bad.message.starts_with("feed_url"));
        assert_eq!(UpdateSettings::load(dir.path()), saved, "nothing saved");
    }
}
