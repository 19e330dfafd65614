//! One sync run: plan which ops may leave, claim them, start one attempt task per op, and
//! account for each result, until nothing is due (or, with `until_drained`, nothing is left).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::{JoinError, JoinSet};

use super::attempt::{Finished, Run};
use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::lease::boot_id;
use crate::schedule::{LiveOp, Plan, plan};
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

/// What one run knows and has decided so far.
struct RunState {
    /// Ops this process is sending now.
    running: HashSet<i64>,
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
            running: HashSet::new(),
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

    /// Takes one finished attempt into account; returns the op to re-read, if any.
    fn account(
        &mut self,
        console: &Console,
        joined: std::result::Result<(i64, Finished), JoinError>,
    ) -> Option<i64> {
        let (id, finished) = match joined {
            Ok(v) => v,
            Err(e) => {
                self.fatal = Some(CoreError::storage(format!("sync task failed: {e}")));
                self.running.clear();
                return None;
            }
        };
        self.running.remove(&id);
        match finished {
            Finished::Done => {
                self.progress.done += 1;
                self.set_online(console, true, None);
            }
            Finished::NeedsAttention => {
                self.progress.failed += 1;
                self.set_online(console, true, None);
            }
            Finished::Retry => {
                self.set_online(console, false, Some("transient failure; retrying".into()))
            }
            Finished::Unauthorized => self.unauthorized = true,
            Finished::LostLease => {}
            Finished::Aborted(msg) => self.fatal = Some(CoreError::storage(msg)),
        }
        Some(id)
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

    /// With nothing running: whether the run ends now.
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
        let mut tasks: JoinSet<(i64, Finished)> = JoinSet::new();
        loop {
            let fresh = st.reload || st.last_reload.elapsed() >= Duration::from_secs(1);
            if fresh {
                st.live = self.load_live(profile, &my_boot).await?;
                st.last_reload = Instant::now();
                st.reload = false;
            }
            let p = plan(&st.live, &st.running, self.now());
            let past_deadline = deadline.is_some_and(|d| Instant::now() >= d);
            if !st.halted() && !past_deadline {
                self.start_ready(&p, &mut st, &run, &mut tasks).await?;
            }
            if st.running.is_empty() {
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
                            st.account(self, j);
                        }
                        break;
                    }
                },
                None => tasks.join_next().await,
            };
            if let Some(j) = joined {
                if let Some(id) = st.account(self, j) {
                    self.refresh_live(&mut st.live, id, &my_boot).await?;
                }
                st.progress.counts = counts_of(&st.live);
                self.emit(Event::SyncProgress(st.progress.clone()));
                self.emit(Event::PendingCount {
                    profile: profile.to_owned(),
                    counts: st.progress.counts,
                });
            }
        }
        self.finish_run(profile, &opts, st, started).await
    }

    /// Claims the ready ops (up to the concurrency limit) and starts an attempt for each.
    async fn start_ready(
        &self,
        p: &Plan,
        st: &mut RunState,
        run: &Arc<Run>,
        tasks: &mut JoinSet<(i64, Finished)>,
    ) -> Result<()> {
        for id in p.ready.iter().copied() {
            if st.running.len() >= self.inner.opts.concurrency {
                break;
            }
            let epoch = st
                .live
                .iter()
                .find(|o| o.id == id)
                .map(|o| o.lease_epoch)
                .unwrap_or(0);
            let Some(claimed) = self.claim(id, epoch).await? else {
                st.reload = true;
                continue;
            };
            st.running.insert(id);
            st.progress.attempts += 1;
            self.emit(Event::OpTransition {
                profile: st.progress.profile.clone(),
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
        Ok(())
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
