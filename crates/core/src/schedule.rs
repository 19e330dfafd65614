//! Which queued operations may leave now: per resource in order, a flow after its endpoint
//! and target, an endpoint/target delete after the earlier flow writes that name it (the keys
//! are written by `crate::local::after_keys`); different resources in parallel. Pure: the
//! sync engine feeds it the live ops and the time.

use std::collections::HashSet;

use switchyard_protocol::ResourceKind;

use crate::types::OpState;

/// What the scheduler needs to know of a live op.
#[derive(Debug, Clone)]
pub struct LiveOp {
    pub id: i64,
    pub seq: i64,
    pub kind: ResourceKind,
    pub name: String,
    /// `kind/name` keys whose earlier ops must land first; `flow-ref/kind/name`: earlier
    /// flow ops naming that resource; `flow/*` (queued by older versions): every earlier
    /// flow op; `uses/kind/name`: not a wait, a resource a flow op names.
    pub after: Vec<String>,
    pub state: OpState,
    pub next_attempt_at: i64,
    pub lease_until: Option<i64>,
    /// The lease holder's process is known to be gone (kill -9): take over at once.
    pub owner_dead: bool,
    pub lease_epoch: i64,
}

impl LiveOp {
    pub fn key(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }
}

/// The result of one scheduling pass.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Ops to claim and send now, in order.
    pub ready: Vec<i64>,
    /// The earliest time a not-blocked op becomes ready (backoff or another lease ending).
    pub next_wake: Option<i64>,
    /// Some op is being sent by another process.
    pub others_sending: bool,
}

/// `kind/name` as a resource.
fn resource_of(key: &str) -> Option<(ResourceKind, &str)> {
    let (kind, name) = key.split_once('/')?;
    Some((ResourceKind::parse(kind)?, name))
}

/// What the earlier live ops hold, as the planner walks them in order.
#[derive(Default)]
struct Earlier<'a> {
    /// Resources with an earlier op.
    busy: HashSet<(ResourceKind, &'a str)>,
    /// Resources an earlier flow op names (before or after its change).
    referenced: HashSet<(ResourceKind, &'a str)>,
    any_flow: bool,
}

impl<'a> Earlier<'a> {
    /// Whether an earlier op holds `op` back.
    fn blocks(&self, op: &LiveOp) -> bool {
        self.busy.contains(&(op.kind, op.name.as_str())) || op.after.iter().any(|k| self.holds(k))
    }

    fn holds(&self, key: &str) -> bool {
        if key == "flow/*" {
            return self.any_flow;
        }
        if let Some(named) = key.strip_prefix("flow-ref/") {
            return resource_of(named).is_some_and(|r| self.referenced.contains(&r));
        }
        resource_of(key).is_some_and(|r| self.busy.contains(&r))
    }

    fn add(&mut self, op: &'a LiveOp) {
        self.busy.insert((op.kind, op.name.as_str()));
        if op.kind == ResourceKind::Flow {
            self.any_flow = true;
            for key in &op.after {
                let named = key.strip_prefix("uses/").unwrap_or(key);
                if let Some(r) = resource_of(named) {
                    self.referenced.insert(r);
                }
            }
        }
    }
}

/// `live` must be ordered by `(seq, id)`. `running` are ops this process is sending.
pub fn plan(live: &[LiveOp], running: &HashSet<i64>, now: i64) -> Plan {
    let mut earlier = Earlier::default();
    let mut out = Plan::default();
    for op in live {
        let blocked = earlier.blocks(op);
        earlier.add(op);
        if blocked || running.contains(&op.id) {
            continue;
        }
        let wake = match op.state {
            OpState::Pending => Some(op.next_attempt_at),
            OpState::Sending if op.owner_dead => Some(now),
            OpState::Sending => {
                out.others_sending = true;
                Some(op.lease_until.unwrap_or(now))
            }
            _ => None,
        };
        match wake {
            Some(at) if at <= now => out.ready.push(op.id),
            Some(at) => out.next_wake = Some(out.next_wake.map_or(at, |w: i64| w.min(at))),
            None => {}
        }
    }
    out
}

/// The earlier live ops that hold `id` back (empty: it waits for nothing but its own turn).
/// `live` as for [`plan`].
pub fn blockers(live: &[LiveOp], id: i64) -> Vec<i64> {
    let Some(pos) = live.iter().position(|o| o.id == id) else {
        return Vec::new();
    };
    let op = &live[pos];
    live[..pos]
        .iter()
        .filter(|e| {
            let mut one = Earlier::default();
            one.add(e);
            one.blocks(op)
        })
        .map(|e| e.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(
        id: i64,
        kind: ResourceKind,
        name: &str,
        after: &[&str],
        state: OpState,
        next: i64,
    ) -> LiveOp {
        LiveOp {
            id,
            seq: id,
            kind,
            name: name.into(),
            after: after.iter().map(|s| s.to_string()).collect(),
            state,
            next_attempt_at: next,
            lease_until: Some(1_000),
            owner_dead: false,
            lease_epoch: 0,
        }
    }
    use OpState::*;
    use ResourceKind::*;

    #[test]
    fn one_resource_goes_in_order_others_in_parallel() {
        let live = [
            op(1, Endpoint, "a", &[], Pending, 0),
            op(2, Endpoint, "a", &[], Pending, 0),
            op(3, Endpoint, "b", &[], Pending, 0),
        ];
        assert_eq!(plan(&live, &HashSet::new(), 10).ready, [1, 3]);
        // While 1 is in flight here, 2 still waits.
        assert_eq!(plan(&live, &HashSet::from([1]), 10).ready, [3]);
    }

    #[test]
    fn a_flow_waits_for_its_endpoint_and_target() {
        let live = [
            op(1, Target, "t", &[], Pending, 0),
            op(2, Flow, "f", &["endpoint/e", "target/t"], Pending, 0),
            op(3, Flow, "g", &["endpoint/e", "target/u"], Pending, 0),
        ];
        assert_eq!(plan(&live, &HashSet::new(), 10).ready, [1, 3]);
    }

    #[test]
    fn deleting_an_endpoint_waits_for_the_earlier_flow_writes_that_name_it() {
        let live = [
            op(1, Flow, "f", &["endpoint/x", "target/t"], NeedsAttention, 0),
            op(2, Flow, "g", &["uses/endpoint/y"], Pending, 0),
            op(3, Endpoint, "x", &["flow-ref/endpoint/x"], Pending, 0),
            op(4, Endpoint, "y", &["flow-ref/endpoint/y"], Pending, 0),
            op(5, Target, "u", &["flow-ref/target/u"], Pending, 0),
        ];
        // x waits for f, y for g (which stops using it); u is named by no flow.
        assert_eq!(plan(&live, &HashSet::new(), 10).ready, [2, 5]);
        assert_eq!(blockers(&live, 3), [1]);
        assert_eq!(blockers(&live, 4), [2]);
        assert!(blockers(&live, 5).is_empty());
        // An op queued by an older version waits for every earlier flow write.
        let legacy = [
            op(1, Flow, "f", &["endpoint/x", "target/t"], Pending, 0),
            op(2, Endpoint, "e", &["flow/*"], Pending, 0),
        ];
        assert_eq!(plan(&legacy, &HashSet::new(), 10).ready, [1]);
        assert_eq!(blockers(&legacy, 2), [1]);
    }

    #[test]
    fn backoff_and_foreign_leases_set_the_wake_time() {
        let live = [
            op(1, Endpoint, "a", &[], Pending, 50),
            op(2, Endpoint, "b", &[], Sending, 0),
            op(3, Endpoint, "b", &[], Pending, 0),
        ];
        let p = plan(&live, &HashSet::new(), 10);
        assert!(p.ready.is_empty());
        assert_eq!(p.next_wake, Some(50));
        assert!(p.others_sending);
        // A lease whose owner died (kill -9) is taken over at once; one that expired too.
        let mut dead = live.clone();
        dead[1].owner_dead = true;
        assert_eq!(plan(&dead, &HashSet::new(), 10).ready, [2]);
        assert_eq!(plan(&live, &HashSet::new(), 1_000).ready, [1, 2]);
    }

    #[test]
    fn needs_attention_blocks_its_resource_but_not_others() {
        let live = [
            op(1, Endpoint, "a", &[], NeedsAttention, 0),
            op(2, Endpoint, "a", &[], Pending, 0),
            op(3, Endpoint, "b", &[], Pending, 0),
        ];
        let p = plan(&live, &HashSet::new(), 10);
        assert_eq!(p.ready, [3]);
        assert_eq!(p.next_wake, None);
    }
}
