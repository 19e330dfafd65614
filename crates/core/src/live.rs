//! Small additions for the desktop app: read one resource live (refreshing its cache row), and
//! make waiting operations due now (the operator's "retry now", or the control plane coming
//! back). Neither sends anything by itself: sending stays with the sync engine.

use switchyard_protocol::{Resource, ResourceKind};

use crate::Console;
use crate::error::{CoreError, Result};
use crate::types::*;

impl Console {
    /// Fetches one resource from the server and stores it as the cache's server state.
    /// `None`: the server does not have it.
    pub async fn fetch_live(
        &self,
        profile: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<Resource>> {
        let client = self.client(profile).await?;
        let live = client.get(kind, name).await?;
        self.store_server_state(profile, kind, name, live.as_ref())
            .await?;
        self.emit(Event::CacheChanged {
            profile: profile.to_owned(),
        });
        Ok(live)
    }

    /// Makes a pending operation due now instead of at its next scheduled retry. Only the
    /// schedule changes: the operation keeps its idempotency key and its place in the order.
    pub async fn make_due(&self, id: i64) -> Result<OutboxOp> {
        let now = self.now();
        let changed = sqlx::query(
            "UPDATE outbox SET next_attempt_at = ?1, updated_at = ?1 WHERE id = ?2 AND state = 'pending'",
        )
        .bind(now)
        .bind(id)
        .execute(&self.inner.pool)
        .await?;
        let op = self.op(id).await?;
        if changed.rows_affected() != 1 {
            return Err(CoreError::WrongState {
                id,
                state: op.state.as_str().into(),
                action: "made due",
            });
        }
        Ok(op)
    }

    /// Makes every pending operation of a profile due now (its control plane answers again).
    /// Returns how many were rescheduled.
    pub async fn make_all_due(&self, profile: &str) -> Result<u64> {
        let now = self.now();
        let changed = sqlx::query(
            "UPDATE outbox SET next_attempt_at = ?1 WHERE profile = ?2 AND state = 'pending' AND next_attempt_at > ?1",
        )
        .bind(now)
        .bind(profile)
        .execute(&self.inner.pool)
        .await?;
        Ok(changed.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ConsoleOptions;

    #[tokio::test]
    async fn make_due_moves_only_the_schedule_of_pending_ops() {
        let dir = tempfile::tempdir().unwrap();
        let console = Console::open(ConsoleOptions::new(dir.path(), "test"))
            .await
            .unwrap();
        console
            .register_sandbox("http://127.0.0.1:9", "t")
            .await
            .unwrap();
        let write = Write::Create {
            kind: ResourceKind::Endpoint,
            name: "a".into(),
            spec: json!({}),
        };
        let op = console.enqueue(SANDBOX_PROFILE, write).await.unwrap();
        sqlx::query("UPDATE outbox SET next_attempt_at = ? WHERE id = ?")
            .bind(op.created_at + 60_000)
            .bind(op.id)
            .execute(&console.inner.pool)
            .await
            .unwrap();
        assert_eq!(console.make_all_due(SANDBOX_PROFILE).await.unwrap(), 1);
        let due = console.make_due(op.id).await.unwrap();
        assert!(due.next_attempt_at.unwrap() <= console.now());
        assert_eq!(due.idempotency_key, op.idempotency_key);
        console.discard(op.id).await.unwrap();
        assert!(matches!(
            console.make_due(op.id).await,
            Err(CoreError::WrongState { .. })
        ));
    }
}
