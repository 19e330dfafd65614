//! Group commit of the worker's outcomes: attempts that finish while an earlier batch is
//! being written are recorded together, in one call to the store
//! ([`crate::store::DeliveryStore::finish_attempts`]: on SQLite, one transaction).
//!
//! Nothing waits to fill a batch: the recorder writes whatever has queued up, so one
//! attempt finishing alone is recorded at once, and a busy worker's outcomes share a
//! commit. Each outcome is still its own fenced update, decided with [`decide`] when it
//! is written, and its sender waits for the answer, so "recorded" means committed.

use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};

use super::http::AttemptResult;
use super::{DeliveryContext, decide};
use crate::store::{Claimed, Finish, FinishedBy, StoreError};

/// The most outcomes written in one batch (one transaction's worth of row locks and work).
const MAX_BATCH: usize = 64;

struct Outcome {
    claimed: Claimed,
    result: AttemptResult,
    /// Whether the request went out (its duration is then observed in the metrics).
    sent: bool,
    answer: oneshot::Sender<Result<bool, StoreError>>,
    /// The worker's slot, given back once the outcome is written.
    slot: OwnedSemaphorePermit,
}

/// Queues outcomes for the recorder task; cloned into each attempt's task.
#[derive(Clone)]
pub struct Recorder {
    queue: mpsc::UnboundedSender<Outcome>,
}

impl Recorder {
    /// Starts the recorder task; it ends when every [`Recorder`] is dropped and the queue
    /// is written.
    pub fn spawn(ctx: std::sync::Arc<DeliveryContext>) -> Self {
        let (queue, mut rx) = mpsc::unbounded_channel::<Outcome>();
        tokio::spawn(async move {
            let mut batch = Vec::with_capacity(MAX_BATCH);
            while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
                write(&ctx, std::mem::take(&mut batch)).await;
            }
        });
        Self { queue }
    }

    /// Records `result` of `claimed` under its fence and waits until it is committed.
    /// `Ok(false)`: the lease was lost and a newer holder owns the delivery. Once written,
    /// the attempt leaves the worker's in-flight set and its `slot` is given back; the
    /// worker is woken once for the whole batch, so it claims the freed slots together.
    pub async fn record(
        &self,
        claimed: Claimed,
        result: AttemptResult,
        sent: bool,
        slot: OwnedSemaphorePermit,
    ) -> Result<bool, StoreError> {
        let (answer, answered) = oneshot::channel();
        let outcome = Outcome {
            claimed,
            result,
            sent,
            answer,
            slot,
        };
        if self.queue.send(outcome).is_err() {
            return Err(StoreError::RecorderStopped);
        }
        answered.await.unwrap_or(Err(StoreError::RecorderStopped))
    }
}

async fn write(ctx: &DeliveryContext, batch: Vec<Outcome>) {
    let now = ctx.clock.now_ms();
    let nexts: Vec<_> = batch
        .iter()
        .map(|o| {
            let c = &o.claimed;
            decide(&o.result, c.hop_number, c.max_attempts, &ctx.policy, now)
        })
        .collect();
    let items: Vec<Finish<'_>> = batch
        .iter()
        .zip(&nexts)
        .map(|(o, &next)| Finish {
            fence: o.claimed.fence(),
            result: &o.result,
            finished_by: FinishedBy::Sender,
            next,
        })
        .collect();
    let answers = ctx
        .telemetry
        .store("finish_attempts", ctx.store.finish_attempts(&items, now))
        .await;
    drop(items);
    for ((outcome, next), answer) in batch.into_iter().zip(nexts).zip(answers) {
        let c = &outcome.claimed;
        match &answer {
            Ok(true) => {
                ctx.telemetry.attempt_recorded(
                    c.hop,
                    &outcome.result,
                    next,
                    Some(&c.tenant),
                    outcome.sent,
                );
            }
            Ok(false) => {
                tracing::warn!(delivery = %c.delivery_id, attempt = %c.attempt_id,
                    "attempt lease was lost before its outcome was recorded; the newer holder decides");
            }
            Err(_) => {}
        }
        ctx.in_flight
            .lock()
            .expect("in-flight lock")
            .remove(&c.attempt_id);
        drop(outcome.slot);
        // The attempt's task may be gone (aborted); the outcome stands either way.
        let _ = outcome.answer.send(answer);
    }
    ctx.wake.notify_one();
}
