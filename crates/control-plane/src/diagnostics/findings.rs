//! From the store's facts to findings: pure functions of the rows, the thresholds and now.
//! Every action is an ordinary keyed call of this API; its body is written out in full, so a
//! client sends it as it is with an Idempotency-Key of its own.

use serde_json::{Value, json};
use switchyard_protocol::{
    Finding, FindingClass, FindingEvidence, FindingSubject, FixAction, Severity,
};

use crate::clock::to_datetime;
use crate::store::{Backlog, DriftRow, ExpiringCertRow, FailingRow, OverlapRow, StuckRow};

use super::credentials::{certificate_expiring, overlap_open};

/// What the checks read, for one tenant at `now`.
pub struct Facts<'a> {
    pub now: i64,
    pub tenant: &'a str,
    pub edge_silence_ms: i64,
    /// Counts at this figure are "at least".
    pub count_cap: u64,
    pub stuck: Vec<StuckRow>,
    pub relays: Vec<Backlog>,
    pub disabled: Vec<Backlog>,
    pub replays: Vec<Backlog>,
    pub failing: Vec<FailingRow>,
    pub drift: Vec<DriftRow>,
    pub overlaps: Vec<OverlapRow>,
    pub certificates: Vec<ExpiringCertRow>,
}

/// Every finding, most severe first, then by class and subject (a stable order).
pub fn all(facts: Facts<'_>) -> Vec<Finding> {
    let cap = facts.count_cap;
    let mut out: Vec<Finding> = Vec::new();
    out.extend(facts.stuck.iter().map(|s| stuck_delivery(s, facts.now)));
    out.extend(
        facts
            .relays
            .iter()
            .filter_map(|b| edge_unreachable(b, facts.now, facts.edge_silence_ms, cap)),
    );
    out.extend(facts.failing.iter().map(|f| failing_target(f, cap)));
    out.extend(facts.disabled.iter().map(|b| disabled_backlog(b, cap)));
    out.extend(facts.replays.iter().map(|b| stalled_replay(b, cap)));
    out.extend(dlq_drift(facts.tenant, &facts.drift));
    out.extend(facts.overlaps.iter().map(|o| overlap_open(o, facts.now)));
    out.extend(
        facts
            .certificates
            .iter()
            .map(|c| certificate_expiring(c, facts.now)),
    );
    out.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.class.cmp(&b.class))
            .then(a.id.cmp(&b.id))
    });
    out
}

pub(super) fn finding(
    class: FindingClass,
    severity: Severity,
    kind: &str,
    id: &str,
    detail: String,
    evidence: FindingEvidence,
    actions: Vec<FixAction>,
) -> Finding {
    let subject = FindingSubject {
        kind: kind.to_owned(),
        id: id.to_owned(),
    };
    Finding {
        id: Finding::id_for(class, &subject),
        class,
        severity,
        subject,
        detail,
        evidence,
        actions,
    }
}

fn action(
    label: String,
    method: &str,
    path: String,
    body: Option<Value>,
    destructive: bool,
) -> FixAction {
    FixAction {
        label,
        method: method.to_owned(),
        path,
        body,
        destructive,
    }
}

pub(super) fn at(ms: i64) -> String {
    to_datetime(ms).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// "12", or "10000 or more" at the cap.
fn how_many(count: u64, cap: u64) -> String {
    if count >= cap {
        format!("{count} or more")
    } else {
        count.to_string()
    }
}

pub(super) fn ago(now: i64, then: i64) -> String {
    let s = (now - then).max(0) / 1000;
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        _ => format!("{} h", s / 3600),
    }
}

pub fn stuck_delivery(s: &StuckRow, now: i64) -> Finding {
    let attempt = u32::try_from(s.attempts_made).unwrap_or(0);
    let holder = s.lease_owner.as_deref().unwrap_or("its sender");
    let detail = format!(
        "Delivery {} to target {} is still in flight on attempt {attempt}, held by {holder}, \
         whose lease expired at {} ({} ago). A running delivery worker takes an expired lease \
         back within a second, so no worker is reaping: check that a replica runs the delivery \
         worker (serve without --no-worker) and that its store calls succeed. Requeueing records \
         attempt {attempt} as failed (timeout) and makes the delivery due now; the receiver may \
         get it again, with the same webhook-id.",
        s.id,
        s.target,
        at(s.lease_until),
        ago(now, s.lease_until),
    );
    finding(
        FindingClass::StuckDelivery,
        Severity::Critical,
        "delivery",
        &s.id,
        detail,
        FindingEvidence {
            count: Some(1),
            delivery_ids: vec![s.id.clone()],
            since: Some(to_datetime(s.lease_until)),
            ..FindingEvidence::default()
        },
        vec![action(
            format!("Requeue delivery {} (attempt {attempt})", s.id),
            "POST",
            format!("/v1/deliveries/{}/requeue", s.id),
            Some(json!({ "attempt": attempt })),
            false,
        )],
    )
}

/// `None` while the edge leased within the silence, or its oldest waiting delivery is
/// younger than that (a new edge that has not polled yet).
pub fn edge_unreachable(b: &Backlog, now: i64, silence_ms: i64, cap: u64) -> Option<Finding> {
    let quiet_since = b.last_seen_at.unwrap_or(b.oldest_at);
    if now - quiet_since < silence_ms || now - b.oldest_at < silence_ms {
        return None;
    }
    let seen = match b.last_seen_at {
        Some(t) => format!("has not called lease since {} ({} ago)", at(t), ago(now, t)),
        None => "has never called lease here".to_owned(),
    };
    let detail = format!(
        "Edge plane {} {seen}; {} async_relay deliveries wait for it, the oldest created at {}. \
         Each hand-off it does not take within --edge-pickup-timeout counts as a failed attempt \
         and, after the last, the delivery goes to the DLQ. Check that the edge process runs, \
         that its token belongs to this tenant and that it reaches this control plane; once it \
         leases again the waiting deliveries go out. There is no API fix: a flow switched to \
         async_inline would only route new events, and the control plane may not reach the \
         receivers the edge does.",
        b.subject,
        how_many(b.count, cap),
        at(b.oldest_at),
    );
    Some(finding(
        FindingClass::EdgeUnreachable,
        Severity::Critical,
        "edge",
        &b.subject,
        detail,
        FindingEvidence {
            count: Some(b.count),
            delivery_ids: b.sample.clone(),
            since: Some(to_datetime(quiet_since)),
            ..FindingEvidence::default()
        },
        vec![],
    ))
}

/// The replay session id of a failing target's fix: the same for the whole run (a repeated
/// fix finds the session it started: `PUT /v1/replays/{id}` answers 200, replays nothing new),
/// a new one for the next run.
pub fn replay_session_for(target: &str, failing_since: i64) -> String {
    format!("diag-failing-target-{target}-{failing_since}")
}

/// The rate a failing target's replay fix asks for (re-deliveries per second), the same as
/// the console's replay dialog starts with: a replay is a bulk re-send, and a receiver that
/// just recovered should not get hundreds at once.
pub const REPLAY_FIX_RATE_PER_S: f64 = 10.0;

/// "583 are being replayed (session diag-…)", and what becomes of them while the target
/// still fails; empty when no replay holds the target's deliveries.
fn replaying_words(f: &FailingRow, open: u64, cap: u64) -> String {
    if open == 0 {
        return String::new();
    }
    let sessions: Vec<&str> = f.replaying.iter().map(|h| h.session_id.as_str()).collect();
    format!(
        " {} {} being replayed (session {}): they left the DLQ, and each re-delivery follows \
         the retry schedule, so while the target fails they go back to the DLQ when their \
         attempts run out.",
        how_many(open, cap),
        if open == 1 { "is" } else { "are" },
        sessions.join(", "),
    )
}

fn last_error(f: &FailingRow) -> String {
    match (&f.last_error_class, &f.last_error) {
        (Some(class), Some(e)) => format!("{class}: {e}"),
        (Some(class), None) => class.clone(),
        (None, Some(e)) => e.clone(),
        (None, None) => "no error recorded".to_owned(),
    }
}

pub fn failing_target(f: &FailingRow, cap: u64) -> Finding {
    let since = f.failing_since.or(f.last_failure_at).unwrap_or(0);
    let dead = u64::try_from(f.dead_in_run).unwrap_or(0);
    let replaying: u64 = f
        .replaying
        .iter()
        .map(|h| u64::try_from(h.open_count).unwrap_or(0))
        .sum();
    let error = last_error(f);
    let mut detail = format!(
        "Target {} has failed its last {} attempts, since {}; the last error was {error}.",
        f.name,
        f.consecutive_failures,
        at(since),
    );
    detail.push_str(&replaying_words(f, replaying, cap));
    let mut actions = vec![action(
        format!("Send a test webhook to {}", f.name),
        "POST",
        format!("/v1/targets/{}/test", f.name),
        Some(json!({})),
        false,
    )];
    if dead > 0 {
        detail.push_str(&format!(
            " {} deliveries died during this run and wait in the DLQ. Fix the receiver (or the \
             target's URL), check it with a test webhook, then replay them: each is re-delivered \
             once, as a new delivery, at most {REPLAY_FIX_RATE_PER_S} per second.",
            how_many(dead, cap)
        ));
        // A bulk re-send: destructive (the receivers get them again), at a bounded rate.
        actions.push(action(
            format!(
                "Replay the {} deliveries to {} that died since {}",
                how_many(dead, cap),
                f.name,
                at(since)
            ),
            "PUT",
            format!("/v1/replays/{}", replay_session_for(&f.name, since)),
            Some(json!({
                "selection": {"filter": {"target": f.name, "since": at(since)}},
                "rate_per_s": REPLAY_FIX_RATE_PER_S,
            })),
            true,
        ));
    } else if replaying > 0 {
        detail.push_str(
            " Fix the receiver (or the target's URL) and check it with a test webhook; the \
             replay goes on by itself.",
        );
    } else {
        detail.push_str(
            " Nothing has died yet: the deliveries are being retried on schedule and go to the \
             DLQ when their attempts run out. Fix the receiver (or the target's URL) and check \
             it with a test webhook.",
        );
    }
    finding(
        FindingClass::FailingTarget,
        if dead > 0 || replaying > 0 {
            Severity::Critical
        } else {
            Severity::Warning
        },
        "target",
        &f.name,
        detail,
        FindingEvidence {
            count: Some(u64::try_from(f.consecutive_failures).unwrap_or(0)),
            since: Some(to_datetime(since)),
            last_error: Some(error),
            replaying: (replaying > 0).then_some(replaying),
            replay_sessions: f.replaying.iter().map(|h| h.session_id.clone()).collect(),
            ..FindingEvidence::default()
        },
        actions,
    )
}

pub fn disabled_backlog(b: &Backlog, cap: u64) -> Finding {
    let detail = format!(
        "Endpoint {} is disabled and still has {} open deliveries, the oldest created at {}. \
         They keep being attempted on schedule, but the endpoint refuses new events (409 \
         endpoint_disabled), so producers' events are not accepted. Enable it if the disable \
         was not meant to last; if it was, nothing is lost: the open deliveries finish or go \
         to the DLQ.",
        b.subject,
        how_many(b.count, cap),
        at(b.oldest_at),
    );
    finding(
        FindingClass::DisabledEndpointBacklog,
        Severity::Warning,
        "endpoint",
        &b.subject,
        detail,
        FindingEvidence {
            count: Some(b.count),
            delivery_ids: b.sample.clone(),
            since: Some(to_datetime(b.oldest_at)),
            ..FindingEvidence::default()
        },
        vec![action(
            format!("Enable endpoint {}", b.subject),
            "POST",
            format!("/v1/endpoints/{}/enable", b.subject),
            None,
            false,
        )],
    )
}

pub fn stalled_replay(b: &Backlog, cap: u64) -> Finding {
    let detail = format!(
        "Replay session {} has {} re-deliveries due since {} that have not been sent: no \
         delivery worker is taking due work (every replica runs --no-worker or is down), or \
         the workers are saturated by a backlog. Check that a replica runs the delivery worker \
         and what it is busy with. Cancelling withdraws the re-deliveries not yet sent and \
         returns their originals to the DLQ, where a later session can replay them; it cannot \
         be undone.",
        b.subject,
        how_many(b.count, cap),
        at(b.oldest_at),
    );
    finding(
        FindingClass::StalledReplay,
        Severity::Warning,
        "replay",
        &b.subject,
        detail,
        FindingEvidence {
            count: Some(b.count),
            delivery_ids: b.sample.clone(),
            since: Some(to_datetime(b.oldest_at)),
            ..FindingEvidence::default()
        },
        vec![action(
            format!("Cancel replay session {}", b.subject),
            "POST",
            format!("/v1/replays/{}/cancel", b.subject),
            None,
            true,
        )],
    )
}

/// One finding for the tenant's counters, naming the first groups that drifted.
pub fn dlq_drift(tenant: &str, drift: &[DriftRow]) -> Option<Finding> {
    if drift.is_empty() {
        return None;
    }
    let rows: i64 = drift.iter().map(|d| d.rows).sum();
    let counted: i64 = drift.iter().map(|d| d.counted).sum();
    let groups: Vec<String> = drift
        .iter()
        .take(5)
        .map(|d| {
            format!(
                "target {} / {} / hour {}: counted {}, dead deliveries {}",
                d.target,
                if d.error_class.is_empty() {
                    "no class"
                } else {
                    &d.error_class
                },
                at(d.hour.saturating_mul(3_600_000)),
                d.counted,
                d.rows
            )
        })
        .collect();
    let detail = format!(
        "The maintained DLQ counters (what GET /v1/dlq/stats and the DLQ depth gauge report) \
         disagree with the dead deliveries in {} group(s): {}. The DLQ itself is intact; only \
         the counts are wrong. A recount recomputes the counters from the rows in one \
         transaction and changes no delivery. If drift comes back, the counting trigger is \
         being bypassed (a manual edit of the database): call whoever maintains it.",
        drift.len(),
        groups.join("; "),
    );
    Some(finding(
        FindingClass::DlqCounterDrift,
        Severity::Warning,
        "tenant",
        tenant,
        detail,
        FindingEvidence {
            count: Some(drift.len() as u64),
            expected: Some(rows),
            actual: Some(counted),
            ..FindingEvidence::default()
        },
        vec![action(
            "Recount the DLQ counters from the dead deliveries".to_owned(),
            "POST",
            "/v1/dlq/recount".to_owned(),
            None,
            false,
        )],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn backlog(subject: &str, oldest_at: i64, last_seen_at: Option<i64>) -> Backlog {
        Backlog {
            subject: subject.into(),
            count: 3,
            oldest_at,
            sample: vec!["dlv_1".into()],
            last_seen_at,
        }
    }

    #[test]
    fn an_edge_is_unreachable_only_after_the_silence() {
        let silence = 120_000;
        let quiet = backlog("e1", NOW - 600_000, Some(NOW - 300_000));
        let f = edge_unreachable(&quiet, NOW, silence, 10_000).expect("silent edge");
        assert_eq!(f.id, "edge_unreachable:edge:e1");
        assert!(f.actions.is_empty(), "no API fix is offered");
        assert_eq!(f.evidence.since, Some(to_datetime(NOW - 300_000)));
        let polling = backlog("e1", NOW - 600_000, Some(NOW - 1_000));
        assert!(edge_unreachable(&polling, NOW, silence, 10_000).is_none());
        let fresh = backlog("e1", NOW - 5_000, None);
        assert!(
            edge_unreachable(&fresh, NOW, silence, 10_000).is_none(),
            "deliveries younger than the silence: not yet"
        );
        let never = backlog("e1", NOW - 600_000, None);
        assert!(edge_unreachable(&never, NOW, silence, 10_000).is_some());
    }

    #[test]
    fn a_failing_target_offers_a_replay_only_with_dead_deliveries_and_keeps_its_session_id() {
        let mut row = FailingRow {
            name: "crm".into(),
            consecutive_failures: 7,
            failing_since: Some(NOW - 60_000),
            last_failure_at: Some(NOW),
            last_error_class: Some("http_5xx".into()),
            last_error: Some("receiver answered HTTP 503".into()),
            dead_in_run: 0,
            replaying: vec![],
        };
        let f = failing_target(&row, 10_000);
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.actions.len(), 1);
        row.dead_in_run = 2;
        let f = failing_target(&row, 10_000);
        assert_eq!(f.severity, Severity::Critical);
        let replay = &f.actions[1];
        assert_eq!(replay.method, "PUT");
        assert_eq!(
            replay.path,
            format!("/v1/replays/diag-failing-target-crm-{}", NOW - 60_000)
        );
        assert_eq!(
            replay.body.as_ref().unwrap()["selection"]["filter"]["target"],
            "crm"
        );
        assert_eq!(failing_target(&row, 10_000).actions, f.actions, "stable");
        assert!(replay.destructive, "a bulk re-send asks first");
        assert_eq!(replay.body.as_ref().unwrap()["rate_per_s"], 10.0);
        // The replay took them all out of the DLQ: not "nothing has died".
        row.dead_in_run = 0;
        row.replaying = vec![crate::store::ReplayHold {
            session_id: "diag-x".into(),
            open_count: 583,
        }];
        let f = failing_target(&row, 10_000);
        assert!(
            f.detail.contains("583 are being replayed (session diag-x)"),
            "{}",
            f.detail
        );
        assert!(!f.detail.contains("Nothing has died yet"), "{}", f.detail);
        assert_eq!(f.evidence.replaying, Some(583));
        assert_eq!(f.evidence.replay_sessions, ["diag-x"]);
        assert!(
            switchyard_protocol::replay::is_session_id(&replay_session_for(
                &"a".repeat(63),
                i64::MAX
            )),
            "the longest target name still makes a valid session id"
        );
    }

    #[test]
    fn findings_come_most_severe_first_and_counts_at_the_cap_say_so() {
        let facts = Facts {
            now: NOW,
            tenant: "acme",
            edge_silence_ms: 1,
            count_cap: 3,
            stuck: vec![StuckRow {
                id: "dlv_s".into(),
                target: "tg".into(),
                edge: None,
                lease_owner: Some("worker-1".into()),
                lease_until: NOW - 90_000,
                attempts_made: 2,
            }],
            relays: vec![],
            disabled: vec![backlog("ep", NOW - 1_000, None)],
            replays: vec![],
            failing: vec![],
            drift: vec![DriftRow {
                target: "tg".into(),
                error_class: "http_5xx".into(),
                hour: NOW / 3_600_000,
                counted: 9,
                rows: 2,
            }],
            overlaps: vec![OverlapRow {
                target: "tg".into(),
                ends_at: NOW + 3_600_000,
                expiring: 1,
            }],
            certificates: vec![],
        };
        let findings = all(facts);
        let classes: Vec<FindingClass> = findings.iter().map(|f| f.class).collect();
        assert_eq!(
            classes,
            [
                FindingClass::StuckDelivery,
                FindingClass::DisabledEndpointBacklog,
                FindingClass::DlqCounterDrift,
                FindingClass::SigningOverlapOpen
            ]
        );
        assert_eq!(
            findings[0].actions[0].body,
            Some(json!({"attempt": 2})),
            "the requeue names the attempt it was planned against"
        );
        assert!(findings[1].detail.contains("3 or more"));
        assert_eq!(findings[2].evidence.expected, Some(2));
        assert_eq!(findings[2].evidence.actual, Some(9));
    }
}
