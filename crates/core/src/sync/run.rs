//! One sync run: plan which ops may leave, claim them, send each in its own task, and record
//! what came back, until nothing is due (or, with `until_drained`, nothing is left).
//!
//! The run is a pipeline, so SQLite work overlaps the network: up to `concurrency` worker
//! tasks send claimed ops from a shared queue and hand back what came back; each turn of the
//! run writes in ONE transaction every outcome that arrived since the last turn and the
//! claims of the next ready ops (group commit), which refill the queue. Ops are claimed
//! ahead of the workers, so a worker that finishes an op takes the next one at once, without
//! waiting for the turn that records it.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
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
/// Ops claimed ahead of the workers, at least (and at least `concurrency`).
const MIN_AHEAD: usize = 8;

/// The workers and what connects them to the run.
struct Pipeline {
    /// Claimed, not yet taken by a worker.
    queue: Arc<Mutex<VecDeque<Claimed>>>,
    done_tx: mpsc::UnboundedSender<Attempted>,
    done_rx: mpsc::UnboundedReceiver<Attempted>,
    workers: JoinSet<()>,
}

impl Pipeline {
    fn new() -> Self {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        Self {
            queue: Arc::default(),
            done_tx,
            done_rx,
            workers: JoinSet::new(),
        }
    }

    fn queued(&self) -> usize {
        self.queue.lock().expect("queue lock").len()
    }

    /// Starts workers (up to `concurrency`, one per op waiting beyond those already
    /// running). A worker sends ops until the queue is empty.
    fn staff(&mut self, concurrency: usize, run: &Arc<Run>) {
        let wanted = concurrency.min(self.workers.len() + self.queued());
        while self.workers.len() < wanted {
            let (queue, done, run) = (self.queue.clone(), self.done_tx.clone(), run.clone());
            self.workers.spawn(async move {
                loop {
                    let next = queue.lock().expect("queue lock").pop_front();
                    let Some(claimed) = next else { break };
                    if done.send(run.attempt(claimed).await).is_err() {
                        break;
                    }
                }
            });
        }
    }

    /// Takes back every op no worker has taken yet.
    fn take_queued(&self) -> Vec<Claimed> {
        self.queue.lock().expect("queue lock").drain(..).collect()
    }
}

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

    /// A worker ended; one that failed leaves its op claimed by this process (its lease runs
    /// out and it is sent again, with the same key).
    fn worker_ended(&mut self, joined: std::result::Result<(), JoinError>) {
        if let Err(e) = joined {
            self.fatal = Some(CoreError::storage(format!("sync task failed: {e}")));
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
        let mut pipe = Pipeline::new();
        loop {
            while let Some(j) = pipe.workers.try_join_next() {
                st.worker_ended(j);
            }
            while let Ok(a) = pipe.done_rx.try_recv() {
                st.finished.push(a);
            }
            // A stop request ends the run the way its deadline does.
            let past_deadline =
                deadline.is_some_and(|d| Instant::now() >= d) || self.syncs_stopped();
            let stopping = st.halted() || past_deadline;
            if stopping {
                let unsent = pipe.take_queued();
                if !unsent.is_empty() {
                    for c in &unsent {
                        st.held.remove(&c.op.id);
                    }
                    st.progress.attempts -= unsent.len() as u64;
                    self.release(&unsent).await?;
                }
            } else {
                pipe.staff(self.inner.opts.concurrency, &run);
            }
            let fresh = st.reload || st.last_reload.elapsed() >= RELOAD_EVERY;
            if fresh {
                st.live = self.load_live(profile, &my_boot).await?;
                st.last_reload = Instant::now();
                st.reload = false;
            }
            let p = plan(&st.live, &st.held, self.now());
            if let Some(claimed) = self.write_turn(&p, stopping, &mut st, &run).await {
                pipe.queue.lock().expect("queue lock").extend(claimed);
                continue;
            }
            if pipe.workers.is_empty() {
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
            // Wait for an outcome (or a worker to end, or the deadline).
            let until = deadline
                .filter(|_| !past_deadline)
                .map(tokio::time::Instant::from_std);
            tokio::select! {
                Some(a) = pipe.done_rx.recv() => st.finished.push(a),
                Some(j) = pipe.workers.join_next() => st.worker_ended(j),
                _ = async { tokio::time::sleep_until(until.expect("a deadline")).await },
                    if until.is_some() => {}
                // Takes back at once what no worker has started yet.
                () = self.stop_requested(), if !past_deadline => {}
            }
        }
        self.finish_run(profile, &opts, st, started).await
    }

    /// One write turn: records every finished attempt and claims the next ready ops (up to
    /// `concurrency` in flight plus as many ahead), in one transaction. Returns the new claims,
    /// or `None` when there was nothing to write.
    async fn write_turn(
        &self,
        p: &Plan,
        stopping: bool,
        st: &mut RunState,
        run: &Run,
    ) -> Option<Vec<Claimed>> {
        let concurrency = self.inner.opts.concurrency;
        let room = if stopping {
            0
        } else {
            (concurrency + concurrency.max(MIN_AHEAD))
                .saturating_sub(st.held.len().saturating_sub(st.finished.len()))
        };
        let ready: HashSet<i64> = p.ready.iter().take(room).copied().collect();
        let wanted: Vec<(i64, i64)> = st
            .live
            .iter()
            .filter(|o| ready.contains(&o.id))
            .map(|o| (o.id, o.lease_epoch))
            .collect();
        if st.finished.is_empty() && wanted.is_empty() {
            return None;
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
                st.progress.attempts += claimed.len() as u64;
                for c in &claimed {
                    self.emit(Event::OpTransition {
                        profile: st.progress.profile.clone(),
                        op_id: c.op.id,
                        from: Some(OpState::Pending),
                        to: OpState::Sending,
                    });
                }
                if !batch.is_empty() {
                    self.emit(Event::SyncProgress(st.progress.clone()));
                    self.emit(Event::PendingCount {
                        profile: st.progress.profile.clone(),
                        counts: st.progress.counts,
                    });
                }
                Some(claimed)
            }
            // The ops stay claimed by this process; their leases run out and they are sent
            // again (same keys) by the next run.
            Err(e) => {
                for a in &batch {
                    st.held.remove(&a.claimed.op.id);
                }
                st.fatal = Some(e);
                Some(Vec::new())
            }
        }
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
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(wait.max(1) as u64)) => {}
            () = self.stop_requested() => {}
        }
    }

    /// Ends a run: refreshes the cache (if asked), counts what is left, audits and reports.
    async fn finish_run(
        &self,
        profile: &str,
        opts: &SyncOptions,
        st: RunState,
        started: Instant,
    ) -> Result<SyncReport> {
        if opts.refresh_after && !st.halted() && !self.syncs_stopped() {
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
                "{} done, {} needs attention, {} attempt{}",
                report.done,
                report.failed,
                report.attempts,
                if report.attempts == 1 { "" } else { "s" }
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
