//! The sync engine: claims due operations atomically (a fenced lease in SQLite), sends each
//! once per attempt, and records the outcome with the cache change in one transaction.
//! Retries happen here and only here (see `retry`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use sqlx::Row;
use switchyard_protocol::{Problem, Resource};
use tokio::task::JoinSet;

use crate::Console;
use crate::client::{ApiClient, SendResult};
use crate::error::{CoreError, Result};
use crate::lease::{boot_id, owner_is_dead};
use crate::local::effect_visible;
use crate::outbox::{OP_COLUMNS, op_from_row};
use crate::retry::{
    AttemptOutcome, Next, RetryBudget, classify_status, next_after, parse_retry_after,
};
use crate::schedule::{LiveOp, plan};
use crate::types::*;

/// How long an idle engine waits before looking again at ops other processes hold.
const IDLE_POLL_MS: i64 = 250;

fn counts_of(live: &[LiveOp]) -> PendingCounts {
    let mut c = PendingCounts::default();
    for op in live {
        match op.state {
            OpState::Pending => c.pending += 1,
            OpState::Sending => c.sending += 1,
            OpState::NeedsAttention => c.needs_attention += 1,
            _ => {}
        }
    }
    c
}

/// An op this process has claimed: its lease epoch fences every later write.
struct Claimed {
    op: OutboxOp,
    epoch: i64,
    /// An earlier claim already sent (or may have sent) it.
    sent_before: bool,
}

/// What one attempt task reports back.
enum Finished {
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

struct Run {
    console: Console,
    client: ApiClient,
    budget: RetryBudget,
    retention_ms: tokio::sync::Mutex<Option<i64>>,
}

impl Console {
    /// Sends the profile's queued operations. With `until_drained`, keeps going through
    /// backoff until nothing is pending or sending (or the timeout passes); otherwise sends
    /// what is due now and returns. Publishes progress on the event stream.
    pub async fn sync(&self, profile: &str, opts: SyncOptions) -> Result<SyncReport> {
        let started = Instant::now();
        let client = self.client(profile).await?;
        let run = Arc::new(Run {
            console: self.clone(),
            client,
            budget: RetryBudget::new(&self.inner.opts.retry, self.now()),
            retention_ms: tokio::sync::Mutex::new(None),
        });
        let deadline = opts.timeout_ms.map(|t| started + Duration::from_millis(t));
        let my_boot = boot_id();
        let initial = self.pending_counts(profile).await?;
        let mut progress = SyncProgress {
            profile: profile.to_owned(),
            total: initial.pending + initial.sending,
            done: 0,
            failed: 0,
            attempts: 0,
            counts: initial,
        };
        self.emit(Event::SyncStarted {
            profile: profile.to_owned(),
            total: progress.total,
        });
        let mut running: HashSet<i64> = HashSet::new();
        let mut tasks: JoinSet<(i64, Finished)> = JoinSet::new();
        let mut unauthorized = false;
        let mut fatal: Option<CoreError> = None;
        let mut online_reported: Option<bool> = None;
        // Stopped because what is left waits on operations that need a person.
        let mut blocked_only = false;
        let mut live: Vec<LiveOp> = Vec::new();
        let mut reload = true;
        let mut last_reload = Instant::now();
        loop {
            // The in-memory view is kept current for our own ops; other processes' changes
            // are picked up by a periodic reload, and always before deciding to stop.
            let fresh = reload || last_reload.elapsed() >= Duration::from_secs(1);
            if fresh {
                live = self.load_live(profile, &my_boot).await?;
                last_reload = Instant::now();
                reload = false;
            }
            let now = self.now();
            let p = plan(&live, &running, now);
            let past_deadline = deadline.is_some_and(|d| Instant::now() >= d);
            if !unauthorized && fatal.is_none() && !past_deadline {
                for id in p.ready.iter().copied() {
                    if running.len() >= self.inner.opts.concurrency {
                        break;
                    }
                    let epoch = live
                        .iter()
                        .find(|o| o.id == id)
                        .map(|o| o.lease_epoch)
                        .unwrap_or(0);
                    let Some(claimed) = self.claim(id, epoch).await? else {
                        reload = true;
                        continue;
                    };
                    running.insert(id);
                    progress.attempts += 1;
                    self.emit(Event::OpTransition {
                        profile: profile.to_owned(),
                        op_id: id,
                        from: Some(OpState::Pending),
                        to: OpState::Sending,
                    });
                    let run = run.clone();
                    tasks.spawn(async move {
                        let id = claimed.op.id;
                        (id, run.attempt(claimed).await)
                    });
                }
            }
            if running.is_empty() {
                if !fresh {
                    reload = true;
                    continue;
                }
                let stop = unauthorized
                    || fatal.is_some()
                    || past_deadline
                    || match p.next_wake {
                        None => !p.others_sending,
                        Some(_) => !opts.until_drained,
                    };
                if stop
                    && !(p.others_sending
                        && opts.until_drained
                        && !past_deadline
                        && !unauthorized
                        && fatal.is_none())
                {
                    blocked_only = p.next_wake.is_none() && !p.others_sending && p.ready.is_empty();
                    break;
                }
                let now = self.now();
                let mut wait = p.next_wake.map_or(IDLE_POLL_MS, |w| (w - now).max(1));
                if p.others_sending {
                    wait = wait.min(IDLE_POLL_MS);
                }
                if let Some(d) = deadline {
                    wait = wait
                        .min(d.saturating_duration_since(Instant::now()).as_millis() as i64 + 1);
                }
                tokio::time::sleep(Duration::from_millis(wait.max(1) as u64)).await;
                reload = true;
                continue;
            }
            // Wait for one attempt to finish (or the deadline), then re-plan.
            let joined = match deadline {
                Some(d) => match tokio::time::timeout(
                    d.saturating_duration_since(Instant::now()),
                    tasks.join_next(),
                )
                .await
                {
                    Ok(j) => j,
                    Err(_) => {
                        // Deadline: stop starting new attempts, let the in-flight ones finish.
                        while let Some(j) = tasks.join_next().await {
                            self.account(
                                j,
                                &mut running,
                                &mut progress,
                                &mut unauthorized,
                                &mut fatal,
                                &mut online_reported,
                            );
                        }
                        break;
                    }
                },
                None => tasks.join_next().await,
            };
            if let Some(j) = joined {
                if let Some(id) = self.account(
                    j,
                    &mut running,
                    &mut progress,
                    &mut unauthorized,
                    &mut fatal,
                    &mut online_reported,
                ) {
                    self.refresh_live(&mut live, id, &my_boot).await?;
                }
                progress.counts = counts_of(&live);
                self.emit(Event::SyncProgress(progress.clone()));
                self.emit(Event::PendingCount {
                    profile: profile.to_owned(),
                    counts: progress.counts,
                });
            }
        }
        if opts.refresh_after && !unauthorized && fatal.is_none() {
            // Best effort: the ops' own responses already updated the cache.
            let _ = self.refresh(profile).await;
        }
        let counts = self.pending_counts(profile).await?;
        let outcome = if counts.pending + counts.sending > 0
            && !(blocked_only && counts.needs_attention > 0)
        {
            SyncOutcome::Incomplete
        } else if counts.needs_attention > 0 {
            SyncOutcome::NeedsAttention
        } else {
            SyncOutcome::Drained
        };
        let report = SyncReport {
            profile: profile.to_owned(),
            outcome,
            done: progress.done,
            failed: progress.failed,
            attempts: progress.attempts,
            counts,
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        crate::audit::insert(
            &self.inner.writer,
            self.now(),
            &self.inner.opts.actor,
            Some(profile),
            "sync.run",
            None,
            None,
            match outcome {
                SyncOutcome::Drained => "drained",
                SyncOutcome::NeedsAttention => "needs_attention",
                SyncOutcome::Incomplete => "incomplete",
            },
            Some(&format!(
                "{} done, {} needs attention, {} attempt{}",
                report.done,
                report.failed,
                report.attempts,
                if report.attempts == 1 { "" } else { "s" }
            )),
        )
        .await?;
        self.emit(Event::SyncFinished(report.clone()));
        if unauthorized {
            return Err(CoreError::Unauthorized {
                profile: profile.to_owned(),
            });
        }
        if let Some(e) = fatal {
            return Err(e);
        }
        Ok(report)
    }

    fn account(
        &self,
        joined: std::result::Result<(i64, Finished), tokio::task::JoinError>,
        running: &mut HashSet<i64>,
        progress: &mut SyncProgress,
        unauthorized: &mut bool,
        fatal: &mut Option<CoreError>,
        online: &mut Option<bool>,
    ) -> Option<i64> {
        let (id, finished) = match joined {
            Ok(v) => v,
            Err(e) => {
                *fatal = Some(CoreError::Storage(format!("sync task failed: {e}")));
                running.clear();
                return None;
            }
        };
        running.remove(&id);
        let mut set_online = |v: bool, detail: Option<String>| {
            if *online != Some(v) {
                *online = Some(v);
                self.emit(Event::Connectivity {
                    profile: progress.profile.clone(),
                    online: v,
                    detail,
                });
            }
        };
        match finished {
            Finished::Done => {
                progress.done += 1;
                set_online(true, None);
            }
            Finished::NeedsAttention => {
                progress.failed += 1;
                set_online(true, None);
            }
            Finished::Retry => set_online(false, Some("transient failure; retrying".into())),
            Finished::Unauthorized => *unauthorized = true,
            Finished::LostLease => {}
            Finished::Aborted(msg) => *fatal = Some(CoreError::Storage(msg)),
        }
        Some(id)
    }

    /// Re-reads one op after its attempt, keeping the in-memory live list current.
    async fn refresh_live(&self, live: &mut Vec<LiveOp>, id: i64, my_boot: &str) -> Result<()> {
        let row = sqlx::query(
            "SELECT state, next_attempt_at, lease_until, lease_owner, lease_epoch FROM outbox WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(&self.inner.pool)
        .await?;
        let state = row.as_ref().and_then(|r| OpState::parse(r.get("state")));
        match (row, state) {
            (Some(r), Some(state)) if state.is_live() => {
                if let Some(op) = live.iter_mut().find(|o| o.id == id) {
                    let owner: Option<String> = r.get("lease_owner");
                    op.state = state;
                    op.next_attempt_at = r.get("next_attempt_at");
                    op.lease_until = r.get("lease_until");
                    op.owner_dead = owner.as_deref().is_some_and(|o| owner_is_dead(o, my_boot));
                    op.lease_epoch = r.get("lease_epoch");
                }
            }
            _ => live.retain(|o| o.id != id),
        }
        Ok(())
    }

    async fn load_live(&self, profile: &str, my_boot: &str) -> Result<Vec<LiveOp>> {
        let rows = sqlx::query(
            "SELECT id, seq, kind, name, after_keys, state, next_attempt_at, lease_until, lease_owner, lease_epoch \
             FROM outbox WHERE profile = ? AND state IN ('pending','sending','needs_attention') ORDER BY seq, id",
        )
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let owner: Option<String> = r.get("lease_owner");
                let after: String = r.get("after_keys");
                Ok(LiveOp {
                    id: r.get("id"),
                    seq: r.get("seq"),
                    kind: switchyard_protocol::ResourceKind::parse(r.get("kind"))
                        .ok_or_else(|| CoreError::Storage("unknown kind in outbox".into()))?,
                    name: r.get("name"),
                    after: serde_json::from_str(&after).unwrap_or_default(),
                    state: OpState::parse(r.get("state"))
                        .ok_or_else(|| CoreError::Storage("unknown state in outbox".into()))?,
                    next_attempt_at: r.get("next_attempt_at"),
                    lease_until: r.get("lease_until"),
                    owner_dead: owner.as_deref().is_some_and(|o| owner_is_dead(o, my_boot)),
                    lease_epoch: r.get("lease_epoch"),
                })
            })
            .collect()
    }

    /// Claims an op for this process: one conditional UPDATE on the epoch we saw, so two
    /// processes can never both win. Fixes `If-Match` before the first send.
    async fn claim(&self, id: i64, epoch: i64) -> Result<Option<Claimed>> {
        let now = self.now();
        let lease_until = now + self.inner.opts.lease.as_millis() as i64;
        // One statement, so it is atomic on its own. A chained op (queued behind earlier
        // writes to the same resource) takes as If-Match the version the last of them
        // produced, else the cached server version; it is fixed here, before the first send.
        // `first_sent_at` is set on the first claim: a value equal to `now` means "never
        // sent before", which the retention check treats as fresh.
        let claimed = sqlx::query(&format!(
            "UPDATE outbox SET state = 'sending', lease_owner = ?1, lease_until = ?2, lease_epoch = lease_epoch + 1, \
             attempts = attempts + 1, updated_at = ?3, first_sent_at = COALESCE(first_sent_at, ?3), \
             if_match = CASE WHEN if_match_fixed = 1 THEN if_match ELSE COALESCE( \
                 (SELECT p.result_version FROM outbox p WHERE p.profile = outbox.profile AND p.kind = outbox.kind \
                  AND p.name = outbox.name AND p.seq < outbox.seq AND p.state = 'done' ORDER BY p.seq DESC, p.id DESC LIMIT 1), \
                 (SELECT c.server_version FROM cache c WHERE c.profile = outbox.profile AND c.kind = outbox.kind \
                  AND c.name = outbox.name)) END, \
             if_match_fixed = 1 \
             WHERE id = ?4 AND lease_epoch = ?5 AND state IN ('pending', 'sending') \
             RETURNING {OP_COLUMNS}, first_sent_at < ?3 AS sent_before"
        ))
        .bind(&self.inner.owner)
        .bind(lease_until)
        .bind(now)
        .bind(id)
        .bind(epoch)
        .fetch_optional(&self.inner.writer)
        .await?;
        let Some(claimed) = claimed else {
            return Ok(None);
        };
        let op = op_from_row(&claimed)?;
        let epoch = claimed.get("lease_epoch");
        let sent_before = claimed.get::<i64, _>("sent_before") != 0;
        Ok(Some(Claimed {
            op,
            epoch,
            sent_before,
        }))
    }
}

impl Run {
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
    async fn attempt(&self, claimed: Claimed) -> Finished {
        let c = &self.console;
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
                            OpError {
                                status: Some(401),
                                problem: None,
                                message: "the control plane rejected the token".into(),
                                transient: false,
                            },
                        )
                        .await;
                }
                Err(e) => return self.record_transient(&op, epoch, None, e.to_string()).await,
            };
            if c.now() - first > retention {
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
            SendResult::Answered(answer) => {
                let problem: Option<Problem> = answer
                    .body
                    .as_ref()
                    .filter(|_| answer.status >= 400)
                    .and_then(|b| serde_json::from_value(b.clone()).ok());
                let code = problem.as_ref().map(|p| p.code.as_str());
                let retry_after = answer
                    .retry_after
                    .as_deref()
                    .and_then(|v| parse_retry_after(v, c.now()));
                match classify_status(answer.status, code, retry_after) {
                    AttemptOutcome::Success => {
                        let resource: Option<Resource> = answer
                            .body
                            .as_ref()
                            .and_then(|b| serde_json::from_value(strip_shown_once(b.clone())).ok());
                        self.record_done(&op, epoch, resource, answer.status).await
                    }
                    AttemptOutcome::Transient { retry_after_ms } => {
                        let msg = match &problem {
                            Some(p) => p.to_string(),
                            None => format!("HTTP {}", answer.status),
                        };
                        self.record_outcome(
                            &op,
                            epoch,
                            AttemptOutcome::Transient { retry_after_ms },
                            OpError {
                                status: Some(answer.status),
                                problem,
                                message: msg,
                                transient: true,
                            },
                        )
                        .await
                    }
                    AttemptOutcome::Unauthorized => {
                        self.record_outcome(
                            &op,
                            epoch,
                            AttemptOutcome::Unauthorized,
                            OpError {
                                status: Some(401),
                                problem,
                                message: "the control plane rejected the token".into(),
                                transient: false,
                            },
                        )
                        .await
                    }
                    AttemptOutcome::Permanent => {
                        let msg = match &problem {
                            Some(p) => p.to_string(),
                            None => format!("HTTP {}", answer.status),
                        };
                        self.record_outcome(
                            &op,
                            epoch,
                            AttemptOutcome::Permanent,
                            OpError {
                                status: Some(answer.status),
                                problem,
                                message: msg,
                                transient: false,
                            },
                        )
                        .await
                    }
                }
            }
        }
    }

    /// For an op older than key retention: `Some(..)` when live state decides it.
    async fn verify_old(&self, op: &OutboxOp, epoch: i64) -> Result<Option<Finished>> {
        let live = self.client.get(op.kind, &op.name).await?;
        let base_json: Option<String> =
            sqlx::query_scalar("SELECT base_json FROM outbox WHERE id = ?")
                .bind(op.id)
                .fetch_one(&self.console.inner.pool)
                .await?;
        let base: Option<LocalView> = base_json.and_then(|b| serde_json::from_str(&b).ok());
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

    async fn record_transient(
        &self,
        op: &OutboxOp,
        epoch: i64,
        status: Option<u16>,
        message: String,
    ) -> Finished {
        self.record_outcome(
            op,
            epoch,
            AttemptOutcome::Transient {
                retry_after_ms: None,
            },
            OpError {
                status,
                problem: None,
                message,
                transient: true,
            },
        )
        .await
    }

    async fn record_done(
        &self,
        op: &OutboxOp,
        epoch: i64,
        resource: Option<Resource>,
        status: u16,
    ) -> Finished {
        match self.try_record_done(op, epoch, resource, status).await {
            Ok(f) => f,
            Err(e) => Finished::Aborted(e.to_string()),
        }
    }

    async fn try_record_done(
        &self,
        op: &OutboxOp,
        epoch: i64,
        resource: Option<Resource>,
        status: u16,
    ) -> Result<Finished> {
        let c = &self.console;
        let now = c.now();
        let mut tx = c.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'done', result_version = ?, last_error = NULL, lease_owner = NULL, lease_until = NULL, \
             updated_at = ? WHERE id = ? AND lease_epoch = ? AND state = 'sending'",
        )
        .bind(resource.as_ref().map(|r| r.version))
        .bind(now)
        .bind(op.id)
        .bind(epoch)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Ok(Finished::LostLease);
        }
        // The server's answer is the newest truth for this resource, unless a refresh already
        // brought something newer.
        let state = sqlx::query(
            "SELECT c.server_version, EXISTS (SELECT 1 FROM outbox o WHERE o.profile = c.profile AND o.kind = c.kind \
             AND o.name = c.name AND o.state IN ('pending', 'sending', 'needs_attention')) AS more \
             FROM cache c WHERE c.profile = ? AND c.kind = ? AND c.name = ?",
        )
        .bind(&op.profile)
        .bind(op.kind.as_str())
        .bind(&op.name)
        .fetch_optional(&mut *tx)
        .await?;
        let cached: Option<i64> = state.as_ref().and_then(|r| r.get("server_version"));
        let more_queued = state.as_ref().is_some_and(|r| r.get::<i64, _>("more") != 0);
        match (&resource, op.op) {
            // The common case: nothing else queued for this resource, so the local view is
            // the server's answer. One statement.
            (Some(r), _) if !more_queued && cached.is_none_or(|v| r.version >= v) => {
                sqlx::query(
                    "INSERT INTO cache (profile, kind, name, server_json, server_version, refreshed_at, local_json, local_deleted) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0) ON CONFLICT (profile, kind, name) DO UPDATE SET \
                     server_json = ?4, server_version = ?5, refreshed_at = ?6, local_json = ?7, local_deleted = 0",
                )
                .bind(&op.profile)
                .bind(op.kind.as_str())
                .bind(&op.name)
                .bind(serde_json::to_string(r).expect("resource serializes"))
                .bind(r.version)
                .bind(now)
                .bind(serde_json::to_string(&crate::local::view_of(r)).expect("view serializes"))
                .execute(&mut *tx)
                .await?;
            }
            // The server's answer is the newest truth, unless a refresh brought something newer.
            (Some(r), _) if cached.is_none_or(|v| r.version >= v) => {
                crate::cache::upsert_server(&mut tx, &op.profile, op.kind, &op.name, Some(r), now)
                    .await?
            }
            (None, OpKind::Delete) => {
                crate::cache::upsert_server(&mut tx, &op.profile, op.kind, &op.name, None, now)
                    .await?
            }
            _ => crate::outbox::recompute_local(&mut tx, &op.profile, op.kind, &op.name).await?,
        }
        crate::audit::record(
            &mut tx,
            now,
            "sync",
            Some(&op.profile),
            "op.done",
            Some(op.id),
            Some(&format!("{}/{}", op.kind, op.name)),
            "ok",
            Some(&format!("{} → HTTP {status}", op.op.as_str())),
        )
        .await?;
        tx.commit().await?;
        self.budget.on_success(now);
        c.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: op.id,
            from: Some(OpState::Sending),
            to: OpState::Done,
        });
        Ok(Finished::Done)
    }

    async fn record_outcome(
        &self,
        op: &OutboxOp,
        epoch: i64,
        outcome: AttemptOutcome,
        error: OpError,
    ) -> Finished {
        match self.try_record_outcome(op, epoch, outcome, error).await {
            Ok(f) => f,
            Err(e) => Finished::Aborted(e.to_string()),
        }
    }

    async fn try_record_outcome(
        &self,
        op: &OutboxOp,
        epoch: i64,
        outcome: AttemptOutcome,
        error: OpError,
    ) -> Result<Finished> {
        let c = &self.console;
        let now = c.now();
        let failures: i64 = sqlx::query_scalar("SELECT failures FROM outbox WHERE id = ?")
            .bind(op.id)
            .fetch_one(&c.inner.pool)
            .await?;
        let next = next_after(
            &outcome,
            failures as u32 + 1,
            &c.inner.opts.retry,
            &self.budget,
            now,
            c.inner.opts.rng.as_ref(),
        );
        let error_json = serde_json::to_string(&error).expect("error serializes");
        let mut tx = c.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let (state, next_at, failures_now, finished) = match next {
            Next::RetryAt { at_ms } => (OpState::Pending, at_ms, failures + 1, Finished::Retry),
            Next::Hold => (OpState::Pending, now, failures, Finished::Unauthorized),
            Next::NeedsAttention { .. } => (
                OpState::NeedsAttention,
                now,
                failures,
                Finished::NeedsAttention,
            ),
            Next::Done => unreachable!("failures are never done"),
        };
        let changed = sqlx::query(
            "UPDATE outbox SET state = ?, next_attempt_at = ?, failures = ?, last_error = ?, lease_owner = NULL, lease_until = NULL, \
             updated_at = ? WHERE id = ? AND lease_epoch = ? AND state = 'sending'",
        )
        .bind(state.as_str())
        .bind(next_at)
        .bind(failures_now)
        .bind(&error_json)
        .bind(now)
        .bind(op.id)
        .bind(epoch)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Ok(Finished::LostLease);
        }
        if state == OpState::NeedsAttention {
            crate::audit::record(
                &mut tx,
                now,
                "sync",
                Some(&op.profile),
                "op.needs_attention",
                Some(op.id),
                Some(&format!("{}/{}", op.kind, op.name)),
                "needs_attention",
                Some(&error.message),
            )
            .await?;
        }
        tx.commit().await?;
        c.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: op.id,
            from: Some(OpState::Sending),
            to: state,
        });
        Ok(finished)
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
