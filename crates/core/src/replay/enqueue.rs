//! Queuing a replay write: checking the request, and committing its `replay_outbox` row with
//! its audit entry in one transaction (see the module's note on exactly once).

use serde_json::Value;
use sqlx::{Sqlite, Transaction};
use switchyard_protocol::replay::{ReplayRequest, ReplaySelection};

use super::{COLUMNS, ReplayAction, ReplayEnqueued, ReplayOp, ReplayRow, ReplayStart, TABLE};
use crate::Console;
use crate::action;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::types::Origin;

/// A replay start to insert: its origin and the caller's request fingerprint.
struct NewStart<'a> {
    body: &'a Value,
    origin: &'a Origin,
    fingerprint: Option<&'a str>,
}

fn check_session_id(id: &str) -> Result<()> {
    // The server's rule (`is_session_id`: retirement ids have the same form), checked before
    // anything is queued.
    if switchyard_protocol::replay::is_session_id(id) {
        Ok(())
    } else {
        Err(CoreError::invalid(
            "session id",
            format!("{id:?} must be 1-128 of letters, digits, . _ : -"),
        ))
    }
}

fn check_request(start: &ReplayStart) -> Result<()> {
    if let Some(rate) = start.rate_per_s
        && !(rate.is_finite()
            && (switchyard_protocol::replay::MIN_RATE_PER_S
                ..=switchyard_protocol::replay::MAX_RATE_PER_S)
                .contains(&rate))
    {
        return Err(CoreError::invalid(
            "rate",
            "must be from 0.001 to 10000 re-deliveries per second",
        ));
    }
    if let ReplaySelection::DeliveryIds(ids) = &start.selection {
        if ids.is_empty() || ids.len() > 1000 {
            return Err(CoreError::invalid(
                "delivery ids",
                "select between 1 and 1000 deliveries (or replay by filter)",
            ));
        }
    }
    Ok(())
}

/// A new session id: `rpl_` + a UUID.
pub fn new_session_id() -> String {
    format!("rpl_{}", uuid::Uuid::new_v4().simple())
}

impl Console {
    /// Queues starting a replay session. Returns the (new or existing) row at once.
    /// Same `session_id` and same request again: the existing row. Same id, another
    /// request: `Invalid` (the server would answer `replay_session_reused`).
    pub async fn enqueue_replay_start(
        &self,
        profile: &str,
        start: ReplayStart,
    ) -> Result<ReplayOp> {
        check_request(&start)?;
        let session_id = match &start.session_id {
            Some(id) => {
                check_session_id(id)?;
                id.clone()
            }
            None => new_session_id(),
        };
        let body = serde_json::to_value(ReplayRequest {
            selection: start.selection.clone(),
            rate_per_s: start.rate_per_s,
            dry_run: false,
        })
        .expect("request serializes");
        let start = NewStart {
            body: &body,
            origin: &Origin::Console,
            fingerprint: None,
        };
        let (op, _) = self
            .insert_replay_op(profile, ReplayAction::Start, &session_id, Some(start))
            .await?;
        if op.body != body {
            return Err(CoreError::invalid(
                "session id",
                format!("{session_id:?} was already used for another replay request"),
            ));
        }
        Ok(op)
    }

    /// [`Console::enqueue_replay_start`] for a caller that derives the session id from its own
    /// request key (an agent's `start_replay`): the session id is required, the start keeps
    /// `origin`, and queuing it again returns the row already queued (`replayed`) only when
    /// the request and `fingerprint` match; otherwise [`CoreError::KeyReused`] and nothing is
    /// queued. A session id that is already the idempotency key of a resource write is refused
    /// the same way (one key names one write).
    pub async fn enqueue_replay_start_with(
        &self,
        profile: &str,
        start: ReplayStart,
        origin: Origin,
        fingerprint: Option<String>,
    ) -> Result<ReplayEnqueued> {
        let Some(session_id) = start.session_id.clone() else {
            return Err(CoreError::invalid("session id", "is required"));
        };
        check_session_id(&session_id)?;
        check_request(&start)?;
        let body = serde_json::to_value(ReplayRequest {
            selection: start.selection.clone(),
            rate_per_s: start.rate_per_s,
            dry_run: false,
        })
        .expect("request serializes");
        let new = NewStart {
            body: &body,
            origin: &origin,
            fingerprint: fingerprint.as_deref(),
        };
        let (op, fresh) = self
            .insert_replay_op(profile, ReplayAction::Start, &session_id, Some(new))
            .await?;
        Ok(ReplayEnqueued {
            op,
            replayed: !fresh,
        })
    }

    /// Queues cancelling a replay session (at most one cancel per session is queued).
    pub async fn enqueue_replay_cancel(&self, profile: &str, session_id: &str) -> Result<ReplayOp> {
        check_session_id(session_id)?;
        let (op, _) = self
            .insert_replay_op(profile, ReplayAction::Cancel, session_id, None)
            .await?;
        Ok(op)
    }

    /// Inserts a row (or finds the one already there). Returns it and whether it is new. A
    /// start with a fingerprint that finds an existing row checks it is the same request.
    async fn insert_replay_op(
        &self,
        profile: &str,
        action: ReplayAction,
        session_id: &str,
        start: Option<NewStart<'_>>,
    ) -> Result<(ReplayOp, bool)> {
        let now = self.now();
        let slot = Slot {
            profile,
            action,
            session_id,
        };
        let origin = start.as_ref().map_or(&Origin::Console, |s| s.origin);
        let keyed = start.as_ref().is_some_and(|s| s.fingerprint.is_some());
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        if keyed && action::key_used_elsewhere(&mut tx, session_id, &TABLE).await? {
            return Err(CoreError::KeyReused {
                key: session_id.to_owned(),
            });
        }
        if !slot.check_existing(&mut tx, start.as_ref()).await? {
            crate::outbox::enqueue::check_agent_may_write(&mut tx, profile, origin).await?;
        }
        let fresh = self
            .insert_row(&mut tx, &slot, start.as_ref(), origin, now)
            .await?;
        let row: ReplayRow = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM replay_outbox WHERE profile = ? AND action = ? AND session_id = ?"
        ))
        .bind(profile)
        .bind(action)
        .bind(session_id)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        let op = ReplayOp::try_from(row)?;
        if fresh {
            self.announce(&op);
        }
        Ok((op, fresh))
    }

    /// The INSERT of the slot's row (none when one is there already) and, when it inserted,
    /// the audit entry. Returns whether it inserted.
    async fn insert_row(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        slot: &Slot<'_>,
        start: Option<&NewStart<'_>>,
        origin: &Origin,
        now: i64,
    ) -> Result<bool> {
        let Slot {
            profile,
            action,
            session_id,
        } = *slot;
        let inserted = sqlx::query(
            "INSERT INTO replay_outbox (profile, action, session_id, body, idempotency_key, next_attempt_at, \
             created_at, updated_at, origin, request_fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (profile, action, session_id) DO NOTHING",
        )
        .bind(profile)
        .bind(action)
        .bind(session_id)
        .bind(start.map(|s| s.body.to_string()))
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(now)
        .bind(now)
        .bind(now)
        .bind(
            (origin != &Origin::Console)
                .then(|| serde_json::to_string(origin).expect("origin serializes")),
        )
        .bind(start.and_then(|s| s.fingerprint))
        .execute(&mut **tx)
        .await
        .map_err(|e| CoreError::from_profile_write(e, profile))?;
        if inserted.rows_affected() != 1 {
            return Ok(false);
        }
        let action = format!("replay.{}", action.as_str());
        Audit::new(
            now,
            &origin.actor(&self.inner.opts.actor),
            &action,
            "queued",
        )
        .profile(profile)
        .resource(format!("replay/{session_id}"))
        .record(tx)
        .await?;
        Ok(true)
    }
}

/// Where a replay write goes: one row per profile, action and session.
#[derive(Clone, Copy)]
struct Slot<'a> {
    profile: &'a str,
    action: ReplayAction,
    session_id: &'a str,
}

impl Slot<'_> {
    /// Whether the slot already holds a row. A start with a fingerprint finding one checks
    /// it is the same request (body and fingerprint), refused as a reused key otherwise.
    async fn check_existing(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        start: Option<&NewStart<'_>>,
    ) -> Result<bool> {
        let existing: Option<(Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT body, request_fingerprint FROM replay_outbox WHERE profile = ? AND action = ? AND session_id = ?",
        )
        .bind(self.profile)
        .bind(self.action.as_str())
        .bind(self.session_id)
        .fetch_optional(&mut **tx)
        .await?;
        if let (Some((body, fingerprint)), Some(new)) = (&existing, start)
            && new.fingerprint.is_some()
        {
            let same_body = body
                .as_deref()
                .and_then(|b| serde_json::from_str::<Value>(b).ok())
                .is_some_and(|b| &b == new.body);
            if !same_body || fingerprint.as_deref() != new.fingerprint {
                return Err(CoreError::KeyReused {
                    key: self.session_id.to_owned(),
                });
            }
        }
        Ok(existing.is_some())
    }
}
