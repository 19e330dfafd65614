//! Running a keyed request. A local effect: the effect, then the key recorded with its response
//! by one guarded insert, one commit. An external effect: a committed claim, the call out, a
//! fenced completion.

use sha2::{Digest, Sha256};

#[cfg(feature = "fault-injection")]
use super::ClaimStrategy;
use super::{Effect, OpContext, Operation, Outcome};
use crate::AppState;
use crate::error::ApiError;
use crate::hooks::HookPoint;
use crate::store::{ClaimOutcome, KeyRecord, KeyScope, KeyState, StoreTx, StoredResponse};

pub(super) async fn run_keyed(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
    op: &dyn Operation,
) -> Result<Outcome, ApiError> {
    match op.effect() {
        Effect::Local => run_local(state, scope, fingerprint, op).await,
        Effect::External => run_external(state, scope, fingerprint, op).await,
    }
}

/// What a request learns from a key that already exists.
enum Found {
    Replay(StoredResponse),
    /// In progress with an expired lease, at this attempt: it may be taken over.
    Expired(i64),
}

/// Rules 4, 5, 6 and 9 for a key someone else wrote.
fn judge(state: &AppState, record: &KeyRecord, fingerprint: &[u8]) -> Result<Found, ApiError> {
    if record.fingerprint != fingerprint {
        return Err(ApiError::KeyReused);
    }
    match record.state {
        KeyState::Completed => Ok(Found::Replay(record.response.clone().ok_or_else(|| {
            ApiError::Internal("completed idempotency key has no stored response".into())
        })?)),
        KeyState::InProgress if record.locked_until > state.clock.now_ms() => {
            Err(in_progress(state, record))
        }
        KeyState::InProgress => Ok(Found::Expired(record.attempt)),
    }
}

enum Claim {
    Owned(i64),
    Replay(StoredResponse),
}

// ---------------------------------------------------------------------------------------
// Local effects: one write transaction.

/// Effect, key and stored response commit together, in one write transaction: the effect
/// is written first, then the key is recorded as completed with its response by one guarded
/// `INSERT … ON CONFLICT DO NOTHING`. That insert is the claim: of two copies of a request
/// only one inserts the key, and the other's effect rolls back unseen. A copy arriving while
/// the first is uncommitted waits for it (on the write lock in SQLite; on the key's, or the
/// effect's, uncommitted index entries in PostgreSQL) and then answers with its stored
/// response. Recording the key at the end writes it once instead of inserting an
/// in-progress claim and updating it, which is most of what a key costs a fresh write
/// (docs/control-plane.md, "Benchmark").
async fn run_local(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
    op: &dyn Operation,
) -> Result<Outcome, ApiError> {
    #[cfg(feature = "fault-injection")]
    if state.idempotency.claim_strategy == ClaimStrategy::CheckThenInsert {
        return run_local_claimed(state, scope, fingerprint, op).await;
    }
    let mut tx = state.telemetry.store("begin", state.store.begin()).await?;
    let now = state.clock.now_ms();
    let ctx = OpContext {
        tenant: &scope.tenant,
        now,
        external: None,
    };
    let response = match op.execute(&mut *tx, &ctx).await {
        Ok(response) => response,
        Err(error) => {
            drop(tx); // whatever the operation wrote rolls back
            if let Some(outcome) = answer_of_a_copy(state, scope, fingerprint).await? {
                return Ok(outcome);
            }
            return store_local_error(state, scope, fingerprint, error).await;
        }
    };
    state.hooks.at(HookPoint::AfterEffect, &scope.key).await;
    match tx
        .record_completed_key(scope, fingerprint, now, &response)
        .await?
    {
        ClaimOutcome::Claimed { .. } => {}
        ClaimOutcome::Existing(record) => {
            drop(tx); // a copy got the key first: its effect stands, this one's rolls back
            return match judge(state, &record, fingerprint)? {
                Found::Replay(response) => Ok(Outcome::Replayed(response)),
                // A claim left in progress by a crash of an earlier server version (which
                // committed the claim before the effect): take it over the guarded way.
                Found::Expired(_) => run_local_claimed(state, scope, fingerprint, op).await,
            };
        }
    }
    state.hooks.at(HookPoint::AfterClaim, &scope.key).await;
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

/// The claim-first form of [`run_local`], in one transaction too: claim (or take over an
/// expired claim), effect, fenced completion. For a key found in progress, and for the
/// negative control, whose claim is the unguarded one.
async fn run_local_claimed(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
    op: &dyn Operation,
) -> Result<Outcome, ApiError> {
    let (mut tx, attempt) = match begin_and_claim(state, scope, fingerprint).await? {
        (_, Claim::Replay(response)) => return Ok(Outcome::Replayed(response)),
        (tx, Claim::Owned(attempt)) => (tx, attempt),
    };
    state.hooks.at(HookPoint::AfterClaim, &scope.key).await;
    let ctx = OpContext {
        tenant: &scope.tenant,
        now: state.clock.now_ms(),
        external: None,
    };
    let response = match op.execute(&mut *tx, &ctx).await {
        Ok(response) => response,
        Err(error) => {
            drop(tx); // the claim and whatever the operation wrote roll back together
            return store_local_error(state, scope, fingerprint, error).await;
        }
    };
    state.hooks.at(HookPoint::AfterEffect, &scope.key).await;
    if !tx.complete_key(scope, attempt, &response).await? {
        drop(tx);
        return fenced_out(state, scope).await;
    }
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

/// Opens the write transaction and claims the key inside it. On a replay the transaction is
/// dropped (rolled back: it wrote nothing).
async fn begin_and_claim(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
) -> Result<(Box<dyn StoreTx>, Claim), ApiError> {
    #[cfg(feature = "fault-injection")]
    if state.idempotency.claim_strategy == ClaimStrategy::CheckThenInsert {
        return check_then_insert(state, scope, fingerprint, true).await;
    }
    let mut tx = state.telemetry.store("begin", state.store.begin()).await?;
    let claim = claim_in_tx(state, &mut *tx, scope, fingerprint).await?;
    Ok((tx, claim))
}

async fn claim_in_tx(
    state: &AppState,
    tx: &mut dyn StoreTx,
    scope: &KeyScope,
    fingerprint: &[u8],
) -> Result<Claim, ApiError> {
    let (now, locked_until) = lease_from_now(state);
    let record = match tx.claim_key(scope, fingerprint, now, locked_until).await? {
        ClaimOutcome::Claimed { attempt } => return Ok(Claim::Owned(attempt)),
        ClaimOutcome::Existing(record) => record,
    };
    match judge(state, &record, fingerprint)? {
        Found::Replay(response) => Ok(Claim::Replay(response)),
        // A claim left in progress by a crash (resource writes commit their claim with the
        // effect now, but an earlier server version committed it first). The takeover is
        // guarded by the attempt seen, so of two racing takeovers one wins.
        Found::Expired(seen) => match tx.take_over_key(scope, seen, now, locked_until).await? {
            Some(attempt) => {
                tracing::info!(key = %scope.key, attempt, "took over an expired idempotency lease");
                Ok(Claim::Owned(attempt))
            }
            None => Err(ApiError::KeyInProgress { retry_after_s: 1 }),
        },
    }
}

/// The deliberately wrong claim (negative control): read outside the transaction (unless
/// `check` is false: storing an error it already owns), then write the claim
/// unconditionally inside it.
#[cfg(feature = "fault-injection")]
async fn check_then_insert(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
    check: bool,
) -> Result<(Box<dyn StoreTx>, Claim), ApiError> {
    let existing = match check {
        true => state.store.get_key(scope).await?,
        false => None,
    };
    // Widen the race window the way a busy server would.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let mut tx = state.telemetry.store("begin", state.store.begin()).await?;
    if let Some(record) = existing
        && let Found::Replay(response) = judge(state, &record, fingerprint)?
    {
        return Ok((tx, Claim::Replay(response)));
    }
    let (now, locked_until) = lease_from_now(state);
    tx.overwrite_claim(scope, fingerprint, now, locked_until)
        .await?;
    Ok((tx, Claim::Owned(1)))
}

/// A local operation failed and its transaction rolled back. Rule 7: store the error in a
/// new transaction (unless a copy of the request finished meanwhile — then its answer is
/// the key's answer), or leave the key free for a corrected retry.
async fn store_local_error(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
    error: ApiError,
) -> Result<Outcome, ApiError> {
    if !error.is_stored() {
        return Err(error);
    }
    #[cfg(feature = "fault-injection")]
    let claimed = match state.idempotency.claim_strategy {
        ClaimStrategy::Atomic => begin_and_claim(state, scope, fingerprint).await?,
        ClaimStrategy::CheckThenInsert => {
            check_then_insert(state, scope, fingerprint, false).await?
        }
    };
    #[cfg(not(feature = "fault-injection"))]
    let claimed = begin_and_claim(state, scope, fingerprint).await?;
    let (mut tx, attempt) = match claimed {
        (_, Claim::Replay(response)) => return Ok(Outcome::Replayed(response)),
        (tx, Claim::Owned(attempt)) => (tx, attempt),
    };
    let response = error.to_stored();
    if !tx.complete_key(scope, attempt, &response).await? {
        drop(tx);
        return fenced_out(state, scope).await;
    }
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

/// The answer of a copy of this request that recorded the key, if one did: asked when this
/// request's effect failed, since the copy's effect may be why (its name taken, its version
/// moved on). One read, before any claim; `None` when the key is free (or left in progress
/// by an earlier version's crash, which the claim that stores the error takes over).
async fn answer_of_a_copy(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
) -> Result<Option<Outcome>, ApiError> {
    match state.store.get_key(scope).await? {
        Some(record) => match judge(state, &record, fingerprint)? {
            Found::Replay(response) => Ok(Some(Outcome::Replayed(response))),
            Found::Expired(_) => Ok(None),
        },
        None => Ok(None),
    }
}

// ---------------------------------------------------------------------------------------
// External effects: committed claim, call out, fenced completion.

async fn run_external(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
    op: &dyn Operation,
) -> Result<Outcome, ApiError> {
    let attempt = match claim_committed(state, scope, fingerprint).await? {
        Claim::Owned(attempt) => attempt,
        Claim::Replay(response) => return Ok(Outcome::Replayed(response)),
    };
    state.hooks.at(HookPoint::AfterClaim, &scope.key).await;
    let mut ctx = OpContext {
        tenant: &scope.tenant,
        now: state.clock.now_ms(),
        external: None,
    };
    let downstream = downstream_key(scope);
    let call = op.call_external(state, &ctx, &downstream);
    match with_heartbeat(state, scope, attempt, call).await {
        Ok(result) => ctx.external = Some(result),
        Err(error) => return finish_with_error(state, scope, attempt, error).await,
    }
    let mut tx = state.telemetry.store("begin", state.store.begin()).await?;
    let response = match op.execute(&mut *tx, &ctx).await {
        Ok(response) => response,
        Err(error) => {
            drop(tx);
            return finish_with_error(state, scope, attempt, error).await;
        }
    };
    state.hooks.at(HookPoint::AfterEffect, &scope.key).await;
    if !tx.complete_key(scope, attempt, &response).await? {
        drop(tx);
        return fenced_out(state, scope).await;
    }
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

/// Runs `work` (the call out) while renewing the claim's lease every third of a lease, so a
/// copy of the request, on this replica or another, never takes over a holder that is still
/// working; if this process dies, the lease lapses within one lease period and a retry
/// takes over. A renewal that finds the claim taken over stops: the completion is fenced.
async fn with_heartbeat<T>(
    state: &AppState,
    scope: &KeyScope,
    attempt: i64,
    work: impl std::future::Future<Output = T>,
) -> T {
    let lease = state.idempotency.lease;
    let every = (lease / 3).max(std::time::Duration::from_millis(100));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut renewing = true;
    tokio::pin!(work);
    loop {
        tokio::select! {
            out = &mut work => return out,
            _ = tick.tick(), if renewing => {
                let (_, locked_until) = lease_from_now(state);
                match state.store.renew_key(scope, attempt, locked_until).await {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::warn!(key = %scope.key, attempt,
                            "idempotency lease was taken over during the call; its result will be fenced out");
                        renewing = false;
                    }
                    Err(e) => tracing::warn!(key = %scope.key, error = %e,
                        "renewing the idempotency lease failed; will retry"),
                }
            }
        }
    }
}

/// The key every attempt at one idempotency key passes downstream (`msg_` + 26 hex digits of
/// SHA-256 over tenant and key), so a takeover repeats the call with the same identity.
pub(super) fn downstream_key(scope: &KeyScope) -> String {
    let mut hash = Sha256::new();
    hash.update((scope.tenant.len() as u64).to_be_bytes());
    hash.update(scope.tenant.as_bytes());
    hash.update(scope.key.as_bytes());
    let digest = hash.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("msg_{}", &hex[..26])
}

/// Claims the key in its own commit (visible to copies as in progress, leased).
async fn claim_committed(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
) -> Result<Claim, ApiError> {
    let (now, locked_until) = lease_from_now(state);
    let record = match state
        .store
        .claim_key(scope, fingerprint, now, locked_until)
        .await?
    {
        ClaimOutcome::Claimed { attempt } => return Ok(Claim::Owned(attempt)),
        ClaimOutcome::Existing(record) => record,
    };
    let seen = match judge(state, &record, fingerprint)? {
        Found::Replay(response) => return Ok(Claim::Replay(response)),
        Found::Expired(seen) => seen,
    };
    match state
        .store
        .take_over_key(scope, seen, now, locked_until)
        .await?
    {
        Some(attempt) => {
            tracing::info!(key = %scope.key, attempt, "took over an expired idempotency lease");
            Ok(Claim::Owned(attempt))
        }
        // Someone else took it over first; they hold a fresh lease now.
        None => match state.store.get_key(scope).await? {
            Some(record) => match judge(state, &record, fingerprint)? {
                Found::Replay(response) => Ok(Claim::Replay(response)),
                Found::Expired(_) => Err(in_progress(state, &record)),
            },
            None => Err(ApiError::KeyInProgress { retry_after_s: 1 }),
        },
    }
}

/// An external operation failed after its claim committed: store the error if rule 7 says
/// so, else release the key so a corrected retry can run.
async fn finish_with_error(
    state: &AppState,
    scope: &KeyScope,
    attempt: i64,
    error: ApiError,
) -> Result<Outcome, ApiError> {
    if !error.is_stored() {
        state.store.release_key(scope, attempt).await?;
        return Err(error);
    }
    let response = error.to_stored();
    let mut tx = state.telemetry.store("begin", state.store.begin()).await?;
    if !tx.complete_key(scope, attempt, &response).await? {
        drop(tx);
        return fenced_out(state, scope).await;
    }
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

// ---------------------------------------------------------------------------------------

/// A takeover bumped the attempt while this holder ran; its work was rolled back. Answer
/// with whatever the key holds now.
async fn fenced_out(state: &AppState, scope: &KeyScope) -> Result<Outcome, ApiError> {
    tracing::warn!(key = %scope.key, "stale idempotency lease fenced out; effect rolled back");
    match state.store.get_key(scope).await? {
        Some(KeyRecord {
            state: KeyState::Completed,
            response: Some(response),
            ..
        }) => Ok(Outcome::Replayed(response)),
        Some(record) => Err(in_progress(state, &record)),
        None => Err(ApiError::KeyInProgress { retry_after_s: 1 }),
    }
}

fn lease_from_now(state: &AppState) -> (i64, i64) {
    let now = state.clock.now_ms();
    let lease = i64::try_from(state.idempotency.lease.as_millis()).unwrap_or(i64::MAX / 2);
    (now, now.saturating_add(lease))
}

fn in_progress(state: &AppState, record: &KeyRecord) -> ApiError {
    let left_ms = (record.locked_until - state.clock.now_ms()).max(0);
    let retry_after_s = u64::try_from((left_ms + 999) / 1000).unwrap_or(1).max(1);
    ApiError::KeyInProgress { retry_after_s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_downstream_key_is_stable_and_scoped_by_tenant() {
        let scope = |t: &str, k: &str| KeyScope {
            tenant: t.into(),
            key: k.into(),
        };
        let a = downstream_key(&scope("acme", "k1"));
        assert_eq!(a, downstream_key(&scope("acme", "k1")));
        assert_eq!(a.len(), 4 + 26);
        assert!(a.starts_with("msg_"));
        assert_ne!(a, downstream_key(&scope("other", "k1")));
        assert_ne!(a, downstream_key(&scope("acme", "k2")));
        // Length-prefixing keeps ("ab", "c") and ("a", "bc") apart.
        assert_ne!(
            downstream_key(&scope("ab", "c")),
            downstream_key(&scope("a", "bc"))
        );
    }
}
