//! The control plane's own findings (`GET /v1/diagnostics`). Each answer is kept in
//! `server_diagnostics`, so a fix can be queued from the last check while the control plane
//! cannot be reached (the keyed write is sent when it is back), and the Recovery page can say
//! how old what it shows is.

use switchyard_protocol::diagnostics::{Diagnostics, Finding};

use super::ServerCheck;
use crate::Console;
use crate::error::{CoreError, Result};

impl Console {
    /// The server's findings and what became of the check. 404: the control plane does not
    /// report diagnostics (`Unsupported`, no findings). Unreachable: the last check's.
    pub(super) async fn server_findings(
        &self,
        profile: &str,
    ) -> Result<(ServerCheck, Vec<Finding>)> {
        let client = self.client(profile).await?;
        match client.get_json::<Diagnostics>("/v1/diagnostics").await {
            Ok(Some(d)) => {
                sqlx::query(
                    "INSERT INTO server_diagnostics (profile, body, fetched_at) VALUES (?, ?, ?) \
                     ON CONFLICT (profile) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at",
                )
                .bind(profile)
                .bind(serde_json::to_string(&d).expect("diagnostics serialize"))
                .bind(self.now())
                .execute(&self.inner.writer)
                .await?;
                Ok((
                    ServerCheck::Reported {
                        checked_at: d.checked_at,
                    },
                    d.findings,
                ))
            }
            Ok(None) => {
                // Findings of an older check no longer describe this server.
                sqlx::query("DELETE FROM server_diagnostics WHERE profile = ?")
                    .bind(profile)
                    .execute(&self.inner.writer)
                    .await?;
                Ok((ServerCheck::Unsupported, Vec::new()))
            }
            Err(CoreError::Offline { message, .. }) => {
                let last = self.last_diagnostics(profile).await?;
                Ok((
                    ServerCheck::Unreachable {
                        message,
                        last_checked_at: last.as_ref().map(|d| d.checked_at),
                    },
                    last.map(|d| d.findings).unwrap_or_default(),
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// The last `GET /v1/diagnostics` answer kept for `profile`.
    async fn last_diagnostics(&self, profile: &str) -> Result<Option<Diagnostics>> {
        let body: Option<String> =
            sqlx::query_scalar("SELECT body FROM server_diagnostics WHERE profile = ?")
                .bind(profile)
                .fetch_optional(&self.inner.pool)
                .await?;
        body.map(|b| {
            serde_json::from_str(&b)
                .map_err(|_| CoreError::storage("the kept server diagnostics cannot be read"))
        })
        .transpose()
    }

    /// One server finding by id: from a fresh check, or the last one when the control plane
    /// cannot be reached.
    pub(super) async fn server_finding(&self, profile: &str, id: &str) -> Result<Finding> {
        let (check, findings) = self.server_findings(profile).await?;
        if let Some(f) = findings.into_iter().find(|f| f.id == id) {
            return Ok(f);
        }
        Err(match check {
            ServerCheck::Unsupported => CoreError::Refused {
                code: "diagnostics_unsupported",
                message: "this control plane does not report diagnostics (GET /v1/diagnostics answered 404)"
                    .into(),
            },
            ServerCheck::Unreachable {
                last_checked_at: None,
                ..
            } => CoreError::Offline {
                profile: profile.to_owned(),
                message: "no earlier check to fix from; run `switchyard doctor` when the control plane answers"
                    .into(),
            },
            _ => CoreError::not_found(format!(
                "finding {id:?} (it may be fixed already; run `switchyard doctor` again)"
            )),
        })
    }
}
