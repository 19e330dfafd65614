//! The retirement state machine's decisions, as pure functions of the retirement, the facts
//! about its resource and the time: what the next guarded transition is, and when the drain
//! should be over. `crate::retirement::advance` applies what they decide.

use std::time::Duration;

use switchyard_protocol::{Blocker, RetirementImpact, RetirementState};

use crate::store::{RetirementFacts, RetirementRow};

/// Where a new retirement starts: `blocked` when flows reference the resource and
/// `cascade_flows` is off, else `draining`.
pub fn initial_state(cascade_flows: bool, facts: &RetirementFacts) -> RetirementState {
    if !cascade_flows && !facts.flows.is_empty() {
        RetirementState::Blocked
    } else {
        RetirementState::Draining
    }
}

/// What blocks a retirement in `blocked`: each flow that references the resource.
pub fn blockers(cascade_flows: bool, facts: &RetirementFacts) -> Vec<Blocker> {
    if cascade_flows {
        return Vec::new();
    }
    facts
        .flows
        .iter()
        .map(|f| Blocker {
            kind: "flow".into(),
            name: Some(f.clone()),
            count: None,
        })
        .collect()
}

pub fn impact(facts: &RetirementFacts) -> RetirementImpact {
    RetirementImpact {
        flows: facts.flows.clone(),
        pending_deliveries: facts.pending_count(),
        dlq_depth: facts.dlq_depth,
        open_replays: facts.open_replays.clone(),
    }
}

/// When the last open delivery reaches its outcome if every attempt left fails: for each
/// group, its latest due time plus the rest of the schedule, each delay at the top of the
/// jitter band (`jitter`, e.g. 0.2 for ±20 %), plus one attempt timeout per attempt left.
/// `None` when nothing is open.
pub fn drain_eta(
    facts: &RetirementFacts,
    schedule: &[Duration],
    jitter: f64,
    attempt_timeout_ms: i64,
    now: i64,
) -> Option<i64> {
    facts
        .pending
        .iter()
        .map(|g| {
            // Attempt `attempts_made + 1` is the one due at `latest_due`; the later ones
            // wait their schedule's delay after the one before.
            let later: i64 = (g.attempts_made + 2..=g.max_attempts)
                .map(|n| {
                    let base = schedule
                        .get(n as usize - 1)
                        .or(schedule.last())
                        .map_or(0, |d| d.as_millis() as i64);
                    (base as f64 * (1.0 + jitter)).ceil() as i64
                })
                .sum();
            let left = i64::from(g.max_attempts.saturating_sub(g.attempts_made).max(1));
            g.latest_due.max(now) + later + left * attempt_timeout_ms
        })
        .max()
}

/// The next step of a retirement.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub from: RetirementState,
    pub to: RetirementState,
    pub blockers: Vec<Blocker>,
    pub impact: RetirementImpact,
    pub drain_eta: Option<i64>,
    pub delete_at: Option<i64>,
    /// The transition also requires that nothing of the resource is pending (checked by the
    /// guarded statement itself).
    pub require_drained: bool,
}

/// What to do next with `row`, or `None` when nothing changes now. `eta` is the drain ETA
/// computed from the same facts.
pub fn next(
    row: &RetirementRow,
    facts: &RetirementFacts,
    eta: Option<i64>,
    now: i64,
) -> Option<Step> {
    let impact = impact(facts);
    let step = |to, require_drained| Step {
        from: row.state,
        to,
        blockers: Vec::new(),
        impact: impact.clone(),
        drain_eta: row.drain_eta,
        delete_at: row.delete_at,
        require_drained,
    };
    if row.state.is_final() {
        return None;
    }
    if !facts.exists {
        // Deleted by hand meanwhile: there is nothing left to retire.
        return Some(step(RetirementState::Deleted, false));
    }
    match row.state {
        RetirementState::Blocked => {
            let blockers = blockers(row.cascade_flows, facts);
            if blockers.is_empty() {
                Some(Step {
                    drain_eta: eta,
                    ..step(RetirementState::Draining, false)
                })
            } else if blockers != row.blockers || impact != row.impact {
                Some(Step {
                    blockers,
                    ..step(RetirementState::Blocked, false)
                })
            } else {
                None
            }
        }
        RetirementState::Draining => {
            if facts.pending_count() == 0 {
                Some(Step {
                    drain_eta: None,
                    ..step(RetirementState::Disabled, true)
                })
            } else if eta != row.drain_eta || impact != row.impact {
                Some(Step {
                    drain_eta: eta,
                    ..step(RetirementState::Draining, false)
                })
            } else {
                None
            }
        }
        RetirementState::Disabled => {
            let grace_ms = i64::try_from(row.grace_seconds.saturating_mul(1000)).unwrap_or(0);
            Some(Step {
                delete_at: Some(now.saturating_add(grace_ms)),
                ..step(RetirementState::Scheduled, false)
            })
        }
        RetirementState::Scheduled => {
            let due = row.delete_at.is_none_or(|at| at <= now);
            if due && facts.pending_count() == 0 {
                Some(step(RetirementState::Deleted, true))
            } else if impact != row.impact {
                Some(step(RetirementState::Scheduled, false))
            } else {
                None
            }
        }
        RetirementState::Deleted | RetirementState::Cancelled => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::PendingGroup;
    use switchyard_protocol::{DlqDisposition, ResourceKind};

    fn row(state: RetirementState) -> RetirementRow {
        RetirementRow {
            id: "r1".into(),
            kind: ResourceKind::Target,
            name: "crm".into(),
            state,
            grace_seconds: 60,
            cascade_flows: false,
            dlq: DlqDisposition::Keep,
            blockers: Vec::new(),
            impact: RetirementImpact::default(),
            cascaded_flows: Vec::new(),
            enabled_before: None,
            drain_eta: None,
            delete_at: None,
            created_at: 0,
            updated_at: 0,
            history: Vec::new(),
            fingerprint: Vec::new(),
        }
    }

    fn facts(flows: &[&str], pending: u64) -> RetirementFacts {
        RetirementFacts {
            exists: true,
            flows: flows.iter().map(|f| f.to_string()).collect(),
            pending: (pending > 0)
                .then_some(PendingGroup {
                    attempts_made: 1,
                    max_attempts: 3,
                    latest_due: 1_000,
                    count: pending,
                })
                .into_iter()
                .collect(),
            dlq_depth: 0,
            open_replays: Vec::new(),
        }
    }

    #[test]
    fn flows_block_unless_cascaded() {
        assert_eq!(
            initial_state(false, &facts(&["a"], 0)),
            RetirementState::Blocked
        );
        assert_eq!(
            initial_state(true, &facts(&["a"], 0)),
            RetirementState::Draining
        );
        let blocked = row(RetirementState::Blocked);
        let step = next(&blocked, &facts(&["a", "b"], 0), None, 5).unwrap();
        assert_eq!(step.to, RetirementState::Blocked);
        assert_eq!(step.blockers.len(), 2);
        let step = next(&blocked, &facts(&[], 0), None, 5).unwrap();
        assert_eq!(step.to, RetirementState::Draining);
    }

    #[test]
    fn the_walk_waits_for_the_drain_and_the_grace() {
        let draining = row(RetirementState::Draining);
        let waiting = next(&draining, &facts(&[], 2), Some(9), 5).unwrap();
        assert_eq!(
            (waiting.to, waiting.drain_eta),
            (RetirementState::Draining, Some(9))
        );
        let drained = next(&draining, &facts(&[], 0), None, 5).unwrap();
        assert_eq!(drained.to, RetirementState::Disabled);
        assert!(drained.require_drained);
        let scheduled = next(&row(RetirementState::Disabled), &facts(&[], 0), None, 5).unwrap();
        assert_eq!(scheduled.delete_at, Some(60_005));
        let mut in_grace = row(RetirementState::Scheduled);
        in_grace.delete_at = Some(60_005);
        assert_eq!(next(&in_grace, &facts(&[], 0), None, 60_004), None);
        assert_eq!(
            next(&in_grace, &facts(&[], 0), None, 60_005).map(|s| s.to),
            Some(RetirementState::Deleted)
        );
        assert_eq!(
            next(&row(RetirementState::Deleted), &facts(&[], 0), None, 5),
            None
        );
    }

    #[test]
    fn the_eta_runs_the_rest_of_the_schedule() {
        let schedule = [0, 10, 60].map(Duration::from_millis);
        // Attempt 2 due at 1000, then attempt 3 after 60 ms: 1000 + 60 + 2 timeouts of 5.
        assert_eq!(drain_eta(&facts(&[], 1), &schedule, 0.0, 5, 0), Some(1_070));
        assert_eq!(drain_eta(&facts(&[], 0), &schedule, 0.0, 5, 0), None);
    }
}
