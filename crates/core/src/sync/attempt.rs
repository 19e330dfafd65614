//! One attempt of one claimed operation: (maybe) check live state, send it once, classify
//! the answer and record the outcome (see `record`).

use serde_json::Value;
use switchyard_protocol::{Problem, Resource};

use crate::Console;
use crate::client::{Answer, ApiClient, SendResult};
use crate::error::{CoreError, Result};
use crate::local::effect_visible;
use crate::retry::{AttemptOutcome, RetryBudget, classify_status, parse_retry_after};
use crate::types::*;

/// An op this process has claimed: its lease epoch fences every later write.
pub(super) struct Claimed {
    pub op: OutboxOp,
    pub epoch: i64,
    /// An earlier claim already sent (or may have sent) it.
    pub sent_before: bool,
}

/// What one attempt task reports back.
pub(super) enum Finished {
    Done,
    Retry,
    NeedsAttention,
    /// 401: the op is back to pending untouched; stop the run.
    Unauthorized,
    /// Another process took the lease over; our result was dropped (it resends the same key).
    LostLease,
    /// The attempt could not start (local error); the op is back to pending.
    Aborted(String),
}

/// What every attempt of one run shares.
pub(super) struct Run {
    pub console: Console,
    pub client: ApiClient,
    pub budget: RetryBudget,
    retention_ms: tokio::sync::Mutex<Option<i64>>,
}

fn rejected_token(problem: Option<Problem>) -> OpError {
    OpError {
        status: Some(401),
        problem,
        message: "the control plane rejected the token".into(),
        transient: false,
    }
}

impl Run {
    pub fn new(console: Console, client: ApiClient) -> Self {
        let budget = RetryBudget::new(&console.inner.opts.retry, console.now());
        Self {
            console,
            client,
            budget,
            retention_ms: tokio::sync::Mutex::new(None),
        }
    }

    async fn retention_ms(&self) -> Result<i64> {
        let mut cached = self.retention_ms.lock().await;
        if let Some(r) = *cached {
            return Ok(r);
        }
        let info = self.client.info().await?;
        let r = (info.idempotency_retention_seconds as i64).saturating_mul(1000);
        *cached = Some(r);
        Ok(r)
    }

    /// One attempt: (maybe) verify live state, send once, record the outcome.
    pub async fn attempt(&self, claimed: Claimed) -> Finished {
        let Claimed {
            op,
            epoch,
            sent_before,
        } = claimed;
        // An op first sent longer ago than the server keeps keys may have executed and been
        // forgotten: check live state instead of replaying blindly.
        if let Some(first) = op.first_sent_at.filter(|_| sent_before) {
            let retention = match self.retention_ms().await {
                Ok(r) => r,
                Err(CoreError::Unauthorized { .. }) => {
                    return self
                        .record_outcome(
                            &op,
                            epoch,
                            AttemptOutcome::Unauthorized,
                            rejected_token(None),
                        )
                        .await;
                }
                Err(e) => return self.record_transient(&op, epoch, None, e.to_string()).await,
            };
            if self.console.now() - first > retention {
                match self.verify_old(&op, epoch).await {
                    Ok(Some(f)) => return f,
                    Ok(None) => {}
                    Err(e) => return self.record_transient(&op, epoch, None, e.to_string()).await,
                }
            }
        }
        let result = self
            .client
            .send(
                op.op,
                op.kind,
                &op.name,
                &op.body,
                op.if_match,
                &op.idempotency_key,
            )
            .await;
        match result {
            SendResult::Transport(msg) => self.record_transient(&op, epoch, None, msg).await,
            SendResult::Answered(answer) => self.answered(&op, epoch, answer).await,
        }
    }

    /// Classifies the server's answer and records it.
    async fn answered(&self, op: &OutboxOp, epoch: i64, answer: Answer) -> Finished {
        let problem: Option<Problem> = answer
            .body
            .as_ref()
            .filter(|_| answer.status >= 400)
            .and_then(|b| serde_json::from_value(b.clone()).ok());
        let code = problem.as_ref().map(|p| p.code.as_str());
        let retry_after = answer
            .retry_after
            .as_deref()
            .and_then(|v| parse_retry_after(v, self.console.now()));
        let outcome = classify_status(answer.status, code, retry_after);
        let message = |problem: &Option<Problem>| match problem {
            Some(p) => p.to_string(),
            None => format!("HTTP {}", answer.status),
        };
        match outcome {
            AttemptOutcome::Success => {
                let resource: Option<Resource> = answer
                    .body
                    .as_ref()
                    .and_then(|b| serde_json::from_value(strip_shown_once(b.clone())).ok());
                self.record_done(op, epoch, resource, answer.status).await
            }
            AttemptOutcome::Unauthorized => {
                self.record_outcome(op, epoch, outcome, rejected_token(problem))
                    .await
            }
            AttemptOutcome::Transient { .. } | AttemptOutcome::Permanent => {
                let error = OpError {
                    status: Some(answer.status),
                    message: message(&problem),
                    problem,
                    transient: matches!(outcome, AttemptOutcome::Transient { .. }),
                };
                self.record_outcome(op, epoch, outcome, error).await
            }
        }
    }

    /// For an op older than key retention: `Some(..)` when live state decides it.
    async fn verify_old(&self, op: &OutboxOp, epoch: i64) -> Result<Option<Finished>> {
        let live = self.client.get(op.kind, &op.name).await?;
        let base = self.console.op_base(op.id).await?;
        match effect_visible(op.op, &op.body, op.if_match, base.as_ref(), live.as_ref()) {
            Some(true) => Ok(Some(self.record_done(op, epoch, live, 200).await)),
            Some(false) => Ok(None),
            None => Ok(Some(
                self.record_outcome(op, epoch, AttemptOutcome::Permanent, OpError {
                    status: None,
                    problem: None,
                    message: "first sent longer ago than the server remembers idempotency keys, and the live state \
                              cannot tell whether it was applied; compare and retry as new or discard"
                        .into(),
                    transient: false,
                })
                .await,
            )),
        }
    }
}

/// A target's new signing secret is shown once in the create response; it must not land in
/// the cache (SQLite).
fn strip_shown_once(mut body: Value) -> Value {
    if let Some(status) = body.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("signing_secret");
    }
    body
}
