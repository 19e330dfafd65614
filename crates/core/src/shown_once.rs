//! A target's signing secret, shown once to the person who created the target.
//!
//! The control plane answers a target's creation with the new secret's value
//! (`status.signing_secret`), and a keyed replay of that creation answers it again. The
//! console never writes the value anywhere (the cache row is stripped of it: see
//! `sync/attempt.rs`): the sync run that received the answer keeps it in this process's memory
//! until a person's screen or terminal takes it ([`Console::take_shown_secrets`]), then it is
//! gone. What memory loses (the process stopped first, more values waiting than it keeps) is
//! still owed, durably and without the value, and fetched again by a keyed replay
//! (`owed_secrets.rs`); whoever shows a taken value says so with [`Console::secrets_shown`].

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::Console;
use crate::types::Event;

/// Values waiting to be shown, per process; more than this and the oldest go from memory
/// (they stay owed, and a replay fetches them again: `owed_secrets.rs`).
const MAX_WAITING: usize = 64;

/// One signing secret's value, for a person to copy once.
#[derive(Clone, Serialize)]
pub struct ShownSecret {
    pub profile: String,
    pub target: String,
    /// `sec_…`, to name it in `targets secrets` (absent from an older server's answer).
    pub secret_id: Option<String>,
    /// `whsec_…`.
    pub value: String,
}

impl fmt::Debug for ShownSecret {
    // A `{:?}` in a log line must not print the value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShownSecret")
            .field("profile", &self.profile)
            .field("target", &self.target)
            .field("secret_id", &self.secret_id)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// The secret a creation's answer carries, if any: its value and the newest secret's id.
pub(crate) fn secret_in(body: &Value) -> Option<(String, Option<String>)> {
    let status = body.get("status")?;
    let value = status.get("signing_secret")?.as_str()?.to_owned();
    let id = status
        .get("signing_secrets")
        .and_then(Value::as_array)
        .and_then(|all| all.last())
        .and_then(|s| s.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some((value, id))
}

impl Console {
    /// Keeps a secret a creation's answer carried until a person takes it, and tells the
    /// subscribers (the event names the target, never the value).
    pub(crate) fn hold_shown_secret(&self, secret: ShownSecret) {
        let (profile, target) = (secret.profile.clone(), secret.target.clone());
        {
            let mut waiting = self.inner.shown_once.lock().expect("shown-once lock");
            waiting.retain(|s| !(s.profile == profile && s.target == target));
            if waiting.len() >= MAX_WAITING {
                waiting.remove(0);
            }
            waiting.push(secret);
        }
        self.emit(Event::SecretShown { profile, target });
    }

    /// The signing secrets of targets this process created on `profile` that nobody has seen
    /// yet, oldest first. Taking them removes them: each is shown once.
    pub fn take_shown_secrets(&self, profile: &str) -> Vec<ShownSecret> {
        let mut waiting = self.inner.shown_once.lock().expect("shown-once lock");
        let (taken, kept) = std::mem::take(&mut *waiting)
            .into_iter()
            .partition(|s| s.profile == profile);
        *waiting = kept;
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_value_and_newest_id_and_redacts_debug() {
        let body = json!({"status": {"signing_secret": "whsec_abc",
            "signing_secrets": [{"id": "sec_old"}, {"id": "sec_new"}]}});
        assert_eq!(
            secret_in(&body),
            Some(("whsec_abc".into(), Some("sec_new".into())))
        );
        assert_eq!(secret_in(&json!({"status": {}})), None);
        let s = ShownSecret {
            profile: "p".into(),
            target: "t".into(),
            secret_id: None,
            value: "whsec_abc".into(),
        };
        assert!(!format!("{s:?}").contains("whsec_abc"));
    }
}
