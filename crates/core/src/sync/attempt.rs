//! One attempt of one claimed operation: (maybe) check live state, send it once, and
//! classify the answer. Nothing here writes: the run records every attempt's outcome (see
//! `record`), several at once in one transaction.

use serde_json::Value;
use switchyard_protocol::{Problem, Resource, ResourceKind};

use crate::Console;
use crate::client::{Answer, ApiClient, SendResult};
use crate::error::{CoreError, Result};
use crate::local::effect_visible;
use crate::retry::{AttemptOutcome, RetryBudget, classify_status, parse_retry_after};
use crate::shown_once::{ShownSecret, secret_in};
use crate::types::*;

/// An op this process has claimed: its lease epoch fences every later write.
#[derive(Debug)]
pub(super) struct Claimed {
    pub op: OutboxOp,
    pub epoch: i64,
    /// An earlier claim already sent (or may have sent) it.
    pub sent_before: bool,
    /// Transient failures in a row before this attempt.
    pub failures: i64,
}

/// How an attempt ended, before it is recorded.
#[derive(Debug)]
pub(super) enum Outcome {
    /// The server confirmed it (`resource`: its answer; `None` for a delete).
    Done {
        resource: Option<Resource>,
        status: u16,
        /// A created target's first secret, from the answer (owed until shown: see
        /// `owed_secrets.rs`).
        secret: Option<ShownSecret>,
    },
    /// It failed: the retry rules decide what follows.
    Failed {
        outcome: AttemptOutcome,
        error: OpError,
    },
}

/// A finished attempt, waiting to be recorded.
#[derive(Debug)]
pub(super) struct Attempted {
    pub claimed: Claimed,
    pub outcome: Outcome,
}

/// What every attempt of one run shares.
pub(super) struct Run {
    pub console: Console,
    pub client: ApiClient,
    pub budget: RetryBudget,
    retention_ms: tokio::sync::Mutex<Option<i64>>,
}

fn rejected_token(problem: Option<Problem>) -> Outcome {
    Outcome::Failed {
        outcome: AttemptOutcome::Unauthorized,
        error: OpError {
            status: Some(401),
            problem,
            message: "the control plane rejected the token".into(),
            transient: false,
        },
    }
}

fn transient(message: String) -> Outcome {
    Outcome::Failed {
        outcome: AttemptOutcome::Transient {
            retry_after_ms: None,
        },
        error: OpError {
            status: None,
            problem: None,
            message,
            transient: true,
        },
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

    /// One attempt: (maybe) verify live state, send once, classify the answer.
    pub async fn attempt(&self, claimed: Claimed) -> Attempted {
        let outcome = self.outcome_of(&claimed).await;
        Attempted { claimed, outcome }
    }

    async fn outcome_of(&self, claimed: &Claimed) -> Outcome {
        let op = &claimed.op;
        // An op first sent longer ago than the server keeps keys may have executed and been
        // forgotten: check live state instead of replaying blindly.
        if let Some(first) = op.first_sent_at.filter(|_| claimed.sent_before) {
            let retention = match self.retention_ms().await {
                Ok(r) => r,
                Err(CoreError::Unauthorized { .. }) => return rejected_token(None),
                Err(e) => return transient(e.to_string()),
            };
            if self.console.now() - first > retention {
                match self.verify_old(op).await {
                    Ok(Some(outcome)) => return outcome,
                    Ok(None) => {}
                    Err(e) => return transient(e.to_string()),
                }
            }
        }
        let result = self.client.send_op(op).await;
        match result {
            SendResult::Transport(msg) => transient(msg),
            SendResult::Answered(answer) => {
                let secret = secret_of(op, &answer);
                let mut outcome = self.classify(answer);
                if let Outcome::Done { secret: held, .. } = &mut outcome {
                    *held = secret;
                }
                outcome
            }
        }
    }

    /// Classifies the server's answer.
    fn classify(&self, answer: Answer) -> Outcome {
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
        match outcome {
            AttemptOutcome::Success => Outcome::Done {
                resource: answer
                    .body
                    .and_then(|b| serde_json::from_value(strip_shown_once(b)).ok()),
                status: answer.status,
                secret: None,
            },
            AttemptOutcome::Unauthorized => rejected_token(problem),
            AttemptOutcome::Transient { .. } | AttemptOutcome::Permanent => {
                let message = match &problem {
                    Some(p) => p.to_string(),
                    None => format!("HTTP {}", answer.status),
                };
                Outcome::Failed {
                    error: OpError {
                        status: Some(answer.status),
                        problem,
                        message,
                        transient: matches!(outcome, AttemptOutcome::Transient { .. }),
                    },
                    outcome,
                }
            }
        }
    }

    /// For an op older than key retention: `Some(..)` when live state decides it.
    async fn verify_old(&self, op: &OutboxOp) -> Result<Option<Outcome>> {
        let live = self.client.get(op.kind, &op.name).await?;
        let base = self.console.op_base(op.id).await?;
        Ok(
            match effect_visible(op.op, &op.body, op.if_match, base.as_ref(), live.as_ref()) {
                Some(true) => Some(Outcome::Done {
                    resource: live,
                    status: 200,
                    secret: None,
                }),
                Some(false) => None,
                None => Some(Outcome::Failed {
                    outcome: AttemptOutcome::Permanent,
                    error: OpError {
                        status: None,
                        problem: None,
                        message: "first sent longer ago than the server remembers idempotency keys, and the live \
                                  state cannot tell whether it was applied; compare and retry as new or discard"
                            .into(),
                        transient: false,
                    },
                }),
            },
        )
    }
}

/// A created target's answer carries its signing secret: the run keeps it in memory for a
/// person to see once (`shown_once.rs`) once the confirmation is recorded, with a durable note
/// that it is owed (`owed_secrets.rs`); the cache gets the answer without it.
fn secret_of(op: &OutboxOp, answer: &Answer) -> Option<ShownSecret> {
    if op.kind != ResourceKind::Target || !(200..300).contains(&answer.status) {
        return None;
    }
    let (value, secret_id) = answer.body.as_ref().and_then(secret_in)?;
    Some(ShownSecret {
        profile: op.profile.clone(),
        target: op.name.clone(),
        secret_id,
        value,
    })
}

/// A target's new signing secret is shown once in the create response; it must not land in
/// the cache (SQLite).
fn strip_shown_once(mut body: Value) -> Value {
    if let Some(status) = body.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("signing_secret");
    }
    body
}
