//! Retirement sessions from the console: start (`PUT /v1/retirements/{id}`, the id chosen
//! here and stored before the first send), cancel (`POST …/{id}/cancel`, keyed), status, the
//! list, and the server's dry run. Starts and cancels are recovery writes (`ops`): queued
//! locally first, sent with the same id, body and key every time, so a retry or a restart
//! never starts a second retirement.

use std::time::Duration;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchyard_protocol::retirement::{
    Retirement, RetirementDryRun, RetirementList, RetirementRequest,
};

use super::ops::{NewRecoveryOp, RecoveryAction, RecoveryOp};
use crate::Console;
use crate::action::{ActionState, op_error};
use crate::client::SendResult;
use crate::error::{CoreError, Result};

/// The longest grace period the control plane accepts (7 days).
pub const MAX_GRACE_SECONDS: u64 = 604_800;

/// A retirement as the console knows it: what it queued and what the control plane says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetirementView {
    pub id: String,
    /// The start as queued by this console (`None`: started elsewhere).
    pub start: Option<RecoveryOp>,
    /// The cancel, if this console queued one.
    pub cancel: Option<RecoveryOp>,
    /// The control plane's record (`None`: not there yet — saved locally — or not asked).
    pub server: Option<Retirement>,
    /// Why the control plane was not asked (unreachable).
    pub offline: Option<String>,
}

/// A new retirement id: `ret_` and a UUID.
pub fn new_retirement_id() -> String {
    format!("ret_{}", uuid::Uuid::new_v4().simple())
}

fn check_id(id: &str) -> Result<()> {
    // The server's rule (`is_session_id`: retirement ids have the same form), checked before
    // anything is queued.
    if switchyard_protocol::replay::is_session_id(id) {
        Ok(())
    } else {
        Err(CoreError::invalid(
            "retirement id",
            format!("{id:?} must be 1-128 of letters, digits, . _ : -"),
        ))
    }
}

fn check_request(request: &RetirementRequest) -> Result<()> {
    switchyard_protocol::validate_name(&request.name)
        .map_err(|e| CoreError::invalid("name", format!("{:?} {e}", request.name)))?;
    if request.grace_seconds > MAX_GRACE_SECONDS {
        return Err(CoreError::invalid(
            "grace",
            "must be at most 7 days (604800 seconds)",
        ));
    }
    Ok(())
}

fn parse_retirement(v: &Value) -> Option<Retirement> {
    serde_json::from_value(v.clone()).ok()
}

impl Console {
    /// "Retire…": queues the retirement (id `draft_id`, or a new one; the same id and request
    /// again queue nothing new, the same id with another request is refused) and sends it
    /// for at most `deadline`. The UI shows `server.state`, `server.drain_eta` /
    /// `server.delete_at` and `server.blockers`; with `start.state == pending` it shows
    /// "saved locally" and the sync sends it.
    pub async fn retire(
        &self,
        profile: &str,
        request: RetirementRequest,
        draft_id: Option<String>,
        deadline: Duration,
    ) -> Result<RetirementView> {
        check_request(&request)?;
        let id = match draft_id {
            Some(id) => {
                check_id(&id)?;
                id
            }
            None => new_retirement_id(),
        };
        let body = serde_json::to_value(RetirementRequest {
            dry_run: false,
            ..request.clone()
        })
        .expect("request serializes");
        let label = format!("retire {} {}", request.kind, request.name);
        let path = format!("/v1/retirements/{id}");
        let (op, _) = self
            .enqueue_recovery(
                profile,
                NewRecoveryOp {
                    action: RecoveryAction::Retire,
                    subject: &id,
                    label: &label,
                    method: "PUT",
                    path: &path,
                    body: Some(&body),
                    destructive: true,
                    key: None,
                },
            )
            .await?;
        if op.state == ActionState::Pending {
            self.send_recovery_op(op.id, deadline).await?;
        }
        self.retirement_view(profile, &id).await
    }

    /// Cancels retirement `id` (keyed; at most one cancel is queued per retirement): what it
    /// disabled is enabled again and nothing is deleted. Sent for at most `deadline`, after
    /// the start if that is still queued. The UI shows `server.state` (`cancelled`).
    pub async fn cancel_retirement(
        &self,
        profile: &str,
        id: &str,
        deadline: Duration,
    ) -> Result<RetirementView> {
        check_id(id)?;
        let path = format!("/v1/retirements/{id}/cancel");
        let label = format!("cancel retirement {id}");
        let (op, _) = self
            .enqueue_recovery(
                profile,
                NewRecoveryOp {
                    action: RecoveryAction::RetireCancel,
                    subject: id,
                    label: &label,
                    method: "POST",
                    path: &path,
                    body: None,
                    destructive: false,
                    key: None,
                },
            )
            .await?;
        if op.state == ActionState::Pending {
            // A start still queued goes first (the drain orders them).
            self.sync_recovery(profile, deadline).await?;
        }
        self.retirement_view(profile, id).await
    }

    /// Live progress of retirement `id`: the UI polls it and shows the state, the ETA
    /// (`drain_eta`, `delete_at`), the blockers and the history; `start`/`cancel` show what is
    /// still only saved locally. Unreachable: `offline` says so and `server` is absent.
    pub async fn retirement_status(&self, profile: &str, id: &str) -> Result<RetirementView> {
        check_id(id)?;
        self.retirement_view(profile, id).await
    }

    /// What this console queued for `id` and what the control plane says now (or, when it
    /// cannot be reached, what it last answered to this console's own writes).
    async fn retirement_view(&self, profile: &str, id: &str) -> Result<RetirementView> {
        let start = self
            .retirement_write(profile, RecoveryAction::Retire, id)
            .await?;
        let cancel = self
            .retirement_write(profile, RecoveryAction::RetireCancel, id)
            .await?;
        let answered = [&cancel, &start]
            .into_iter()
            .flatten()
            .filter(|o| o.state == ActionState::Done)
            .find_map(|o| o.result.as_ref().and_then(parse_retirement));
        let client = self.client(profile).await?;
        let (server, offline) = match client
            .get_json::<Retirement>(&format!("/v1/retirements/{id}"))
            .await
        {
            Ok(r) => (r, None),
            Err(CoreError::Offline { message, .. }) => (answered, Some(message)),
            Err(e) => return Err(e),
        };
        if start.is_none() && cancel.is_none() && server.is_none() && offline.is_none() {
            return Err(CoreError::not_found(format!("retirement {id:?}")));
        }
        Ok(RetirementView {
            id: id.to_owned(),
            start,
            cancel,
            server,
            offline,
        })
    }

    /// Every retirement: the control plane's (newest first) and those only saved locally so
    /// far. Unreachable: the local ones, with `offline` set on each.
    pub async fn retirements(&self, profile: &str) -> Result<Vec<RetirementView>> {
        let client = self.client(profile).await?;
        let (listed, offline) = match client.get_json::<RetirementList>("/v1/retirements").await {
            Ok(list) => (list.map(|l| l.items).unwrap_or_default(), None),
            Err(CoreError::Offline { message, .. }) => (Vec::new(), Some(message)),
            Err(e) => return Err(e),
        };
        let local = self.recovery_ops(profile, 500).await?;
        let mine = |id: &str, action| {
            local
                .iter()
                .find(|o| o.action == action && o.subject == id)
                .cloned()
        };
        let mut out: Vec<RetirementView> = listed
            .into_iter()
            .map(|r| RetirementView {
                id: r.id.clone(),
                start: mine(&r.id, RecoveryAction::Retire),
                cancel: mine(&r.id, RecoveryAction::RetireCancel),
                server: Some(r),
                offline: None,
            })
            .collect();
        for op in local.iter().filter(|o| o.action == RecoveryAction::Retire) {
            if out.iter().any(|v| v.id == op.subject) {
                continue;
            }
            out.push(RetirementView {
                id: op.subject.clone(),
                start: Some(op.clone()),
                cancel: mine(&op.subject, RecoveryAction::RetireCancel),
                server: None,
                offline: offline.clone(),
            });
        }
        Ok(out)
    }

    /// The impact preview of "Retire…": the control plane's dry run (referencing flows,
    /// pending deliveries, DLQ depth, open replays, where it would start). Creates nothing.
    pub async fn preview_retirement(
        &self,
        profile: &str,
        request: RetirementRequest,
    ) -> Result<RetirementDryRun> {
        check_request(&request)?;
        let body = serde_json::to_value(RetirementRequest {
            dry_run: true,
            ..request
        })
        .expect("request serializes");
        // A dry run creates nothing, so a throwaway id and key are fine.
        let id = format!("dry-{}", uuid::Uuid::new_v4().simple());
        let key = uuid::Uuid::new_v4().to_string();
        match self
            .client(profile)
            .await?
            .send_to(
                Method::PUT,
                &format!("/v1/retirements/{id}"),
                &body,
                Some(&key),
            )
            .await
        {
            SendResult::Answered(a) if (200..300).contains(&a.status) => {
                serde_json::from_value(a.body.unwrap_or_default()).map_err(|e| {
                    CoreError::server(a.status, None, format!("unreadable dry-run answer: {e}"))
                })
            }
            SendResult::Answered(a) => {
                let error = op_error(a.status, a.body.as_ref(), false);
                Err(CoreError::Server {
                    status: a.status,
                    message: error.message,
                    problem: error.problem.map(Box::new),
                })
            }
            SendResult::Transport(message) => Err(CoreError::Offline {
                profile: profile.to_owned(),
                message,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchyard_protocol::ResourceKind;

    #[test]
    fn bad_requests_are_refused_before_queuing() {
        let req = |name: &str, grace| RetirementRequest {
            kind: ResourceKind::Target,
            name: name.into(),
            grace_seconds: grace,
            cascade_flows: false,
            dlq: Default::default(),
            dry_run: false,
        };
        assert!(check_request(&req("crm", 0)).is_ok());
        assert!(check_request(&req("Bad Name", 0)).is_err());
        assert!(check_request(&req("crm", MAX_GRACE_SECONDS + 1)).is_err());
        assert!(check_id("ret_1").is_ok());
        assert!(check_id("has space").is_err());
        assert!(new_retirement_id().starts_with("ret_"));
    }
}
