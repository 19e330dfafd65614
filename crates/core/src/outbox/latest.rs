//! The newest write on each resource, as a resource list shows it beside the resource:
//! "saved locally", "sending", "needs attention", or "confirmed" for a while after.

use std::collections::HashMap;

use switchyard_protocol::ResourceKind;

use crate::Console;
use crate::error::Result;
use crate::types::{OpState, OutboxFilter, OutboxOp};

/// How long a confirmed write keeps showing "confirmed" beside its resource.
pub const CONFIRMED_SHOWN_MS: i64 = 10 * 60 * 1000;

/// How many of the newest operations are read to find them.
const READ_AT_MOST: u32 = 2000;

impl Console {
    /// The newest operation on each resource of `profile` (of `kind`, and named `name`, when
    /// given): a live one (pending, sending, needs attention) wins over a confirmed one; a
    /// confirmed one shows for [`CONFIRMED_SHOWN_MS`] after it was confirmed, by the console's
    /// clock. Discarded and superseded operations never show.
    pub async fn latest_ops(
        &self,
        profile: &str,
        kind: Option<ResourceKind>,
        name: Option<&str>,
    ) -> Result<HashMap<(ResourceKind, String), OutboxOp>> {
        let ops = self
            .list_outbox(OutboxFilter {
                profile: Some(profile.to_owned()),
                states: vec![
                    OpState::Pending,
                    OpState::Sending,
                    OpState::NeedsAttention,
                    OpState::Done,
                ],
                kind,
                name: name.map(str::to_owned),
                newest_first: true,
                limit: Some(READ_AT_MOST),
            })
            .await?;
        Ok(latest_per_resource(ops, self.now()))
    }
}

/// `ops` newest first → the one to show per resource at `now`.
fn latest_per_resource(ops: Vec<OutboxOp>, now: i64) -> HashMap<(ResourceKind, String), OutboxOp> {
    let mut latest: HashMap<(ResourceKind, String), OutboxOp> = HashMap::new();
    for op in ops {
        let recent = op.state != OpState::Done || now - op.updated_at < CONFIRMED_SHOWN_MS;
        let key = (op.kind, op.name.clone());
        // Newest first: the first op seen per resource is the newest; a live op wins over a
        // confirmed one.
        match latest.get(&key) {
            None if recent => {
                latest.insert(key, op);
            }
            Some(seen) if seen.state == OpState::Done && op.state.is_live() => {
                latest.insert(key, op);
            }
            _ => {}
        }
    }
    latest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{OpKind, Origin};

    const NOW: i64 = 1_000_000_000;

    fn op(id: i64, name: &str, state: OpState, updated_at: i64) -> OutboxOp {
        OutboxOp {
            id,
            profile: "p".into(),
            op: OpKind::Update,
            kind: ResourceKind::Endpoint,
            name: name.into(),
            body: serde_json::Value::Null,
            base_version: None,
            if_match: None,
            idempotency_key: format!("k{id}"),
            state,
            attempts: 0,
            last_error: None,
            next_attempt_at: None,
            created_at: updated_at,
            updated_at,
            first_sent_at: None,
            result_version: None,
            replaced_by: None,
            origin: Origin::default(),
        }
    }

    fn shown(ops: Vec<OutboxOp>) -> Vec<(String, i64)> {
        let mut shown: Vec<_> = latest_per_resource(ops, NOW)
            .into_values()
            .map(|op| (op.name, op.id))
            .collect();
        shown.sort();
        shown
    }

    #[test]
    fn the_newest_op_per_resource_shows() {
        let ops = vec![
            op(3, "a", OpState::Pending, NOW - 10),
            op(2, "b", OpState::Sending, NOW - 20),
            op(1, "a", OpState::NeedsAttention, NOW - 30),
        ];
        assert_eq!(shown(ops), [("a".into(), 3), ("b".into(), 2)]);
    }

    #[test]
    fn a_live_op_wins_over_a_newer_confirmed_one() {
        let ops = vec![
            op(5, "a", OpState::Done, NOW - 10),
            op(4, "a", OpState::NeedsAttention, NOW - 20),
        ];
        assert_eq!(shown(ops), [("a".into(), 4)]);
    }

    #[test]
    fn a_confirmed_op_shows_for_ten_minutes_by_the_clock_given() {
        let fresh = op(2, "a", OpState::Done, NOW - CONFIRMED_SHOWN_MS + 1);
        let stale = op(1, "b", OpState::Done, NOW - CONFIRMED_SHOWN_MS);
        assert_eq!(shown(vec![fresh, stale]), [("a".into(), 2)]);
    }
}
