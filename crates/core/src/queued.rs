//! The work still queued for a profile, in every table of `console.db` that is deleted with it
//! (`ON DELETE CASCADE` in crates/core/migrations), so removing a profile can name what it
//! would lose ("2 writes, 1 rotation in progress, 1 replay") and refuse unless the person
//! chose to lose it.
//!
//! What counts, per table (a row that is no longer work is history; the audit log, which
//! outlives the profile, keeps its outcome):
//! - `outbox`: every state but `done`, `discarded` and `superseded` (`needs_attention` too: a
//!   person can still retry or resolve it);
//! - `replay_outbox`, `target_tests`, `secret_ops`, `cert_ops`, `recovery_ops`: `pending`
//!   (saved locally, not confirmed; the next sync sends it). Their `needs_attention` is final:
//!   the console never sends such a row again;
//! - `rotations`: a procedure in progress (`staging` … `rolling_back`, the steps
//!   `rotations_open_per_target` names); `done`, `rolled_back` and `needs_attention` are where a
//!   procedure ends. The keyed rows that carry an open rotation's steps (keys `<id>:…`) are
//!   counted as that rotation, not again as their own kind.
//!
//! Not work: `cache`, `server_diagnostics` (copies of the server's answers), `gitops_sources`
//! and `gitops_inventory` (configuration; a GitOps write itself is an `outbox` row).

use std::fmt;

use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;

use crate::error::Result;

/// A kind of queued work, as a person would name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum QueuedKind {
    /// A resource write (create, update, delete, enable, disable…): `outbox`.
    Write,
    /// A guided credential rotation in progress: `rotations`.
    Rotation,
    /// A replay start or cancel: `replay_outbox`.
    Replay,
    /// A signing-secret rotation or expiry: `secret_ops`.
    SecretChange,
    /// A client-certificate activation: `cert_ops`.
    CertificateActivation,
    /// A test webhook: `target_tests`.
    TestWebhook,
    /// A server fix or a retirement (start or cancel): `recovery_ops`.
    Recovery,
}

impl QueuedKind {
    /// The noun for `n` of this kind.
    pub fn noun(self, n: u32) -> &'static str {
        let one = n == 1;
        match self {
            Self::Write if one => "write",
            Self::Write => "writes",
            Self::Rotation if one => "rotation in progress",
            Self::Rotation => "rotations in progress",
            Self::Replay if one => "replay",
            Self::Replay => "replays",
            Self::SecretChange if one => "signing-secret change",
            Self::SecretChange => "signing-secret changes",
            Self::CertificateActivation if one => "certificate activation",
            Self::CertificateActivation => "certificate activations",
            Self::TestWebhook if one => "test webhook",
            Self::TestWebhook => "test webhooks",
            Self::Recovery if one => "fix or retirement",
            Self::Recovery => "fixes or retirements",
        }
    }
}

/// How many of one kind are queued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QueuedCount {
    pub kind: QueuedKind,
    pub count: u32,
    /// Of `count`, those waiting for a person's decision (writes only).
    pub needs_attention: u32,
    /// In words: "2 writes (1 needs attention)".
    pub label: String,
}

/// Every kind of work queued for a profile: only the kinds there are, in [`QueuedKind`] order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QueuedWork {
    pub total: u32,
    pub kinds: Vec<QueuedCount>,
    /// In words: "2 writes (1 needs attention), 1 rotation in progress, 1 replay";
    /// "nothing" when empty.
    pub summary: String,
}

impl Default for QueuedWork {
    fn default() -> Self {
        Self::from_rows(Vec::new())
    }
}

impl QueuedWork {
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// How many of `kind` are queued.
    pub fn count(&self, kind: QueuedKind) -> u32 {
        self.kinds
            .iter()
            .find(|c| c.kind == kind)
            .map_or(0, |c| c.count)
    }

    /// No kind has more than `shown` has: what a person saw covers what is queued now.
    pub fn covered_by(&self, shown: &QueuedWork) -> bool {
        self.kinds.iter().all(|c| c.count <= shown.count(c.kind))
    }

    fn from_rows(mut rows: Vec<(QueuedKind, u32, u32)>) -> Self {
        rows.retain(|(_, count, _)| *count > 0);
        rows.sort_by_key(|(kind, _, _)| *kind);
        let kinds: Vec<QueuedCount> = rows
            .into_iter()
            .map(|(kind, count, needs_attention)| QueuedCount {
                kind,
                count,
                needs_attention,
                label: label(kind, count, needs_attention),
            })
            .collect();
        let summary = match kinds.is_empty() {
            true => "nothing".to_owned(),
            false => kinds
                .iter()
                .map(|c| c.label.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        Self {
            total: kinds.iter().map(|c| c.count).sum(),
            kinds,
            summary,
        }
    }
}

fn label(kind: QueuedKind, count: u32, needs_attention: u32) -> String {
    let mut out = format!("{count} {}", kind.noun(count));
    if needs_attention > 0 {
        let verb = if needs_attention == 1 {
            "needs"
        } else {
            "need"
        };
        out.push_str(&format!(" ({needs_attention} {verb} attention)"));
    }
    out
}

impl fmt::Display for QueuedWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary)
    }
}

/// What `Console::remove_profile` does with work still queued for the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiscardQueued {
    /// Refuse while anything is queued ([`crate::CoreError::QueuedWork`]); nothing is removed.
    No,
    /// Remove anyway, losing whatever is queued (the CLI's `--discard-queued`).
    All,
    /// Remove, losing at most what a person was shown (the desktop's dialog): refused when
    /// more of some kind was queued since.
    Shown(QueuedWork),
}

/// A keyed row that carries a step of an open rotation of its profile (its key is
/// `<rotation id>:<step>`): counted as that rotation.
const OF_OPEN_ROTATION: &str = "EXISTS (SELECT 1 FROM rotations r WHERE r.profile = t.profile \
     AND r.step NOT IN ('done', 'rolled_back', 'needs_attention') \
     AND substr(t.idempotency_key, 1, length(r.id) + 1) = r.id || ':')";

/// Counts the work queued for `profile`, inside the caller's transaction (so a removal
/// deletes exactly what it counted).
pub(crate) async fn count(conn: &mut SqliteConnection, profile: &str) -> Result<QueuedWork> {
    let keyed = |kind: &str, table: &str| {
        format!(
            "SELECT '{kind}', COUNT(*), 0 FROM {table} t WHERE t.profile = ?1 \
             AND t.state = 'pending' AND NOT {OF_OPEN_ROTATION}"
        )
    };
    let sql = [
        "SELECT 'write', COUNT(*), COALESCE(SUM(state = 'needs_attention'), 0) FROM outbox \
         WHERE profile = ?1 AND state NOT IN ('done', 'discarded', 'superseded')"
            .to_owned(),
        "SELECT 'rotation', COUNT(*), 0 FROM rotations WHERE profile = ?1 \
         AND step NOT IN ('done', 'rolled_back', 'needs_attention')"
            .to_owned(),
        "SELECT 'replay', COUNT(*), 0 FROM replay_outbox WHERE profile = ?1 AND state = 'pending'"
            .to_owned(),
        keyed("secret_change", "secret_ops"),
        keyed("certificate_activation", "cert_ops"),
        keyed("test_webhook", "target_tests"),
        "SELECT 'recovery', COUNT(*), 0 FROM recovery_ops WHERE profile = ?1 AND state = 'pending'"
            .to_owned(),
    ]
    .join(" UNION ALL ");
    let rows: Vec<(String, i64, i64)> = sqlx::query_as(&sql)
        .bind(profile)
        .fetch_all(&mut *conn)
        .await?;
    let rows = rows
        .into_iter()
        .map(|(kind, count, attention)| {
            let kind: QueuedKind = serde_json::from_value(serde_json::Value::String(kind))
                .expect("the query names only QueuedKind values");
            (kind, count as u32, attention as u32)
        })
        .collect();
    Ok(QueuedWork::from_rows(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_kind_in_plain_words() {
        let work = QueuedWork::from_rows(vec![
            (QueuedKind::Replay, 1, 0),
            (QueuedKind::Write, 2, 1),
            (QueuedKind::TestWebhook, 0, 0),
            (QueuedKind::Rotation, 1, 0),
        ]);
        assert_eq!(work.total, 4);
        assert_eq!(
            work.to_string(),
            "2 writes (1 needs attention), 1 rotation in progress, 1 replay"
        );
        assert_eq!(QueuedWork::default().to_string(), "nothing");
    }

    #[test]
    fn what_was_shown_covers_only_as_many_of_each_kind() {
        let shown = QueuedWork::from_rows(vec![(QueuedKind::Write, 2, 0)]);
        let fewer = QueuedWork::from_rows(vec![(QueuedKind::Write, 1, 0)]);
        let more = QueuedWork::from_rows(vec![(QueuedKind::Write, 3, 0)]);
        let other = QueuedWork::from_rows(vec![(QueuedKind::Replay, 1, 0)]);
        assert!(fewer.covered_by(&shown));
        assert!(shown.covered_by(&shown));
        assert!(!more.covered_by(&shown));
        assert!(!other.covered_by(&shown));
    }
}
