//! One sync run: plan which ops may leave, claim them, send each in its own task, and record
//! what came back, until nothing is due (or, with `until_drained`, nothing is left).
//!
//! The run is a pipeline, so SQLite work overlaps the network: each turn writes in ONE
//! transaction every outcome that arrived since the last turn and the claims of the next
//! ready ops (group commit). Up to `concurrency` ops are in flight, and as many more are
//! claimed ahead, so a finished op's slot is refilled at once, before its outcome is written.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::{JoinError, JoinSet};

use super::attempt::{Attempted, Claimed, Run};
use super::record::{Finished, Recorded};
use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::lease::boot_id;
use crate::schedule::{LiveOp, Plan, plan};
use crate::types::*;

/// How long an idle engine waits before looking again at ops other processes hold.
const IDLE_POLL_MS: i64 = 250;
/// How often the live view is re-read while busy (other processes' changes).
const RELOAD_EVERY: Duration = Duration::from_secs(1);

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

/// What one run knows and has decided so far.
struct RunState {
    /// Ops claimed by this run and not yet recorded (queued, in flight, or finished).
    held: HashSet<i64>,
    /// Claimed, not yet started.
    queued: VecDeque<Claimed>,
    /// Finished, not yet recorded.
    finished: Vec<Attempted>,
    progress: SyncProgress,
    /// The server refused the token: start nothing more.
    unauthorized: bool,
    /// A local failure that ends the run.
    fatal: Option<CoreError>,
    /// The connectivity last announced, so each change is announced once.
    online: Option<bool>,
    /// Stopped because what is left waits on operations that need a person.
    blocked_only: bool,
    /// The live ops of the profile: kept current for our own ops; other processes' changes
    /// are picked up by a periodic reload, and always before deciding to stop.
    live: Vec<LiveOp>,
    reload: bool,
    last_reload: Instant,
}

impl RunState {
    fn new(profile: &str, initial: PendingCounts) -> Self {
        Self {
            held: HashSet::new(),
            queued: VecDeque::new(),
            finished: Vec::new(),
            progress: SyncProgress {
                profile: profile.to_owned(),
                total: initial.pending + initial.sending,
                done: 0,
                failed: 0,
                attempts: 0,
                counts: initial,
            },
            unauthorized: false,
            fatal: None,
            online: None,
            blocked_only: false,
            live: Vec::new(),
            reload: true,
            last_reload: Instant::now(),
        }
    }

    /// Nothing more may start: the token was refused or something failed locally.
    fn halted(&self) -> bool {
        self.unauthorized || self.fatal.is_some()
    }

    fn joined(&mut self, joined: std::result::Result<Attempted, JoinError>) {
        match joined {
            Ok(a) => self.finished.push(a),
            // The op stays claimed by this process; its lease runs out and it is sent again.
            Err(e) => self.fatal = Some(CoreError::storage(format!("sync task failed: {e}"))),
        }
    }

    /// Takes recorded attempts into account: the live view, the counters, connectivity.
    fn apply(&mut self, console: &Console, recorded: &[Recorded]) {
        let mut gone: HashSet<i64> = HashSet::new();
        for r in recorded {
            self.held.remove(&r.id);
            let (state, next) = match r.finished {
                Finished::Done => {
                    self.progress.done += 1;
                    self.set_online(console, true, None);
                    gone.insert(r.id);
                    continue;
                }
                Finished::NeedsAttention => {
                    self.progress.failed += 1;
                    self.set_online(console, true, None);
                    (OpState::NeedsAttention, None)
                }
                Finished::Retry { at } => {
                    self.set_online(console, false, Some("transient failure; retrying".into()));
                    (OpState::Pending, Some(at))
                }
                Finished::Unauthorized { at } => {
                    self.unauthorized = true;
                    (OpState::Pending, Some(at))
                }
                Finished::LostLease => {
                    self.reload = true;
                    continue;
                }
            };
            if let Some(op) = self.live.iter_mut().find(|o| o.id == r.id) {
                op.state = state;
                op.next_attempt_at = next.unwrap_or(op.next_attempt_at);
                op.lease_until = None;
                op.owner_dead = false;
                op.lease_epoch = r.epoch;
            }
        }
        if !gone.is_empty() {
            self.live.retain(|o| !gone.contains(&o.id));
        }
        self.progress.counts = counts_of(&self.live);
    }

    fn set_online(&mut self, console: &Console, online: bool, detail: Option<String>) {
        if self.online != Some(online) {
            self.online = Some(online);
            console.emit(Event::Connectivity {
                profile: self.progress.profile.clone(),
                online,
                detail,
            });
        }
    }

    /// With nothing in flight: whether the run ends now.
    fn should_stop(&self, p: &Plan, opts: &SyncOptions, past_deadline: bool) -> bool {
        let stop = self.halted()
            || past_deadline
            || match p.next_wake {
                None => !p.others_sending,
                Some(_) => !opts.until_drained,
            };
        // Until drained, another process's sends are waited for (they may fail back to us).
        let wait_for_others =
            p.others_sending && opts.until_drained && !past_deadline && !self.halted();
        stop && !wait_for_others
    }
}

impl Console {
    /// Sends the profile's queued operations. With `until_drained`, keeps going through
    /// backoff until nothing is pending or sending (or the timeout passes); otherwise sends
    /// what is due now and returns. Publishes progress on the event stream.
    pub async fn sync(&self, profile: &str, opts: SyncOptions) -> Result<SyncReport> {
        let started = Instant::now();
        let run = Arc::new(Run::new(self.clone(), self.client(profile).await?));
        let deadline = opts.timeout_ms.map(|t| started + Duration::from_millis(t));
        let my_boot = boot_id();
        let mut st = RunState::new(profile, self.pending_counts(profile).await?);
        self.emit(Event::SyncStarted {
            profile: profile.to_owned(),
            total: st.progress.total,
        });
        let mut tasks: JoinSet<Attempted> = JoinSet::new();
        loop {
            let past_deadline = deadline.is_some_and(|d| Instant::now() >= d);
            let stopping = st.halted() || past_deadline;
            if stopping && !st.queued.is_empty() {
                let unsent: Vec<Claimed> = st.queued.drain(..).collect();
                for c in &unsent {
                    st.held.remove(&c.op.id);
                }
                self.release(&unsent).await?;
            }
            if !stopping {
                self.start_queued(&mut st, &run, &mut tasks);
            }
            let fresh = st.reload || st.last_reload.elapsed() >= RELOAD_EVERY;
            if fresh {
                st.live = self.load_live(profile, &my_boot).await?;
                st.last_reload = Instant::now();
                st.reload = false;
            }
            let p = plan(&st.live, &st.held, self.now());
            if self.write_turn(&p, stopping, &mut st, &run).await {
                continue;
            }
            if tasks.is_empty() {
                if !fresh {
                    st.reload = true;
                    continue;
                }
                if st.should_stop(&p, &opts, past_deadline) {
                    st.blocked_only =
                        p.next_wake.is_none() && !p.others_sending && p.ready.is_empty();
                    break;
                }
                self.idle(&p, deadline).await;
                st.reload = true;
                continue;
            }
            // Wait for an attempt to finish (or the deadline), then take every finished one.
            let joined = match deadline {
                Some(d) => tokio::time::timeout(
                    d.saturating_duration_since(Instant::now()),
                    tasks.join_next(),
                )
                .await
                .ok(),
                None => Some(tasks.join_next().await),
            };
            match joined {
                Some(Some(j)) => st.joined(j),
                Some(None) => {}
                None => {
                    // Deadline: start nothing more, let the in-flight attempts finish.
                    while let Some(j) = tasks.join_next().await {
                        st.joined(j);
                    }
                }
            }
            while let Some(j) = tasks.try_join_next() {
                st.joined(j);
            }
        }
        self.finish_run(profile, &opts, st, started).await
    }

    /// Starts queued claims while slots are free.
    fn start_queued(&self, st: &mut RunState, run: &Arc<Run>, tasks: &mut JoinSet<Attempted>) {
        while tasks.len() < self.inner.opts.concurrency {
            let Some(claimed) = st.queued.pop_front() else {
                break;
            };
            st.progress.attempts += 1;
            self.emit(Event::OpTransition {
                profile: st.progress.profile.clone(),
                op_id: claimed.op.id,
                from: Some(OpState::Pending),
                to: OpState::Sending,
            });
            let run = run.clone();
            tasks.spawn(async move { run.attempt(claimed).await });
        }
    }

    /// One write turn: records every finished attempt and claims the next ready ops (up to
    /// `concurrency` in flight plus as many queued), in one transaction. `false` when there
    /// was nothing to write.
    async fn write_turn(&self, p: &Plan, stopping: bool, st: &mut RunState, run: &Run) -> bool {
        let concurrency = self.inner.opts.concurrency;
        let room = if stopping {
            0
        } else {
            (2 * concurrency).saturating_sub(st.held.len().saturating_sub(st.finished.len()))
        };
        let ready: HashSet<i64> = p.ready.iter().take(room).copied().collect();
        let wanted: Vec<(i64, i64)> = st
            .live
            .iter()
            .filter(|o| ready.contains(&o.id))
            .map(|o| (o.id, o.lease_epoch))
            .collect();
        if st.finished.is_empty() && wanted.is_empty() {
            return false;
        }
        let batch = std::mem::take(&mut st.finished);
        match self.record_and_claim(run, &batch, &wanted).await {
            Ok((recorded, claimed)) => {
                run.announce(&batch, &recorded);
                st.apply(self, &recorded);
                if claimed.len() < wanted.len() {
                    st.reload = true;
                }
                st.held.extend(claimed.iter().map(|c| c.op.id));
                st.queued.extend(claimed);
                if !batch.is_empty() {
                    self.emit(Event::SyncProgress(st.progress.clone()));
                    self.emit(Event::PendingCount {
                        profile: st.progress.profile.clone(),
                        counts: st.progress.counts,
                    });
                }
            }
            // The ops stay claimed by this process; their leases run out and they are sent
            // again (same keys) by the next run.
            Err(e) => {
                for a in &batch {
                    st.held.remove(&a.claimed.op.id);
                }
                st.fatal = Some(e);
            }
        }
        true
    }

    async fn record_and_claim(
        &self,
        run: &Run,
        batch: &[Attempted],
        wanted: &[(i64, i64)],
    ) -> Result<(Vec<Recorded>, Vec<Claimed>)> {
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let recorded = run.record(&mut tx, batch).await?;
        let claimed = self.claim(&mut tx, wanted).await?;
        tx.commit().await?;
        Ok((recorded, claimed))
    }

    /// Nothing running and nothing due: sleeps until the next op is due (backoff, another
    /// process's lease), at most the idle poll when others are sending, never past the deadline.
    async fn idle(&self, p: &Plan, deadline: Option<Instant>) {
        let now = self.now();
        let mut wait = p.next_wake.map_or(IDLE_POLL_MS, |w| (w - now).max(1));
        if p.others_sending {
            wait = wait.min(IDLE_POLL_MS);
        }
        if let Some(d) = deadline {
            wait = wait.min(d.saturating_duration_since(Instant::now()).as_millis() as i64 + 1);
        }
        tokio::time::sleep(Duration::from_millis(wait.max(1) as u64)).await;
    }

    /// Ends a run: refreshes the cache (if asked), counts what is left, audits and reports.
    async fn finish_run(
        &self,
        profile: &str,
        opts: &SyncOptions,
        st: RunState,
        started: Instant,
    ) -> Result<SyncReport> {
        if opts.refresh_after && !st.halted() {
            // Best effort: the ops' own responses already updated the cache.
            let _ = self.refresh(profile).await;
        }
        let counts = self.pending_counts(profile).await?;
        let outcome = if counts.pending + counts.sending > 0
            && !(st.blocked_only && counts.needs_attention > 0)
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
            done: st.progress.done,
            failed: st.progress.failed,
            attempts: st.progress.attempts,
            counts,
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        let outcome_word = match outcome {
            SyncOutcome::Drained => "drained",
            SyncOutcome::NeedsAttention => "needs_attention",
            SyncOutcome::Incomplete => "incomplete",
        };
        Audit::new(self.now(), &self.inner.opts.actor, "sync.run", outcome_word)
            .profile(profile)
            .detail(format!(
                "{} done, {} needs attention, {} attempts",
                report.done, report.failed, report.attempts
            ))
            .insert(&self.inner.writer)
            .await?;
        self.emit(Event::SyncFinished(report.clone()));
        if st.unauthorized {
            return Err(CoreError::Unauthorized {
                profile: profile.to_owned(),
            });
        }
        if let Some(e) = st.fatal {
            return Err(e);
        }
        Ok(report)
    }
}
