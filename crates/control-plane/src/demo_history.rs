//! The sandbox's day of history: events of the demo endpoints over the last 24 hours and what
//! the demo targets did with them, attempt by attempt on the demo's retry schedule — billing
//! healthy, analytics slow, crm flaky (503 three times in ten), legacy-erp always 500,
//! warehouse never answering within its 1 s timeout. So a first launch shows a dashboard with a
//! day behind it and a DLQ with dead deliveries at once, instead of filling from nothing.
//! Pure: the clock and the randomness come from the caller; the store imports it
//! (`store/history.rs`).

use rand::Rng;
use serde_json::json;

use crate::store::history::{PastAttempt, PastDelivery, PastEvent};

/// How far back the history goes.
pub const HISTORY_SPAN_MS: i64 = 24 * 3_600_000;

/// The demo's flows: endpoint, its event types, and the flows out of it (name, target, the
/// event types it takes; empty = all). The same as `demo::demo_resources`.
type Flow = (&'static str, &'static str, &'static [&'static str]);
const ROUTES: [(&str, &[&str], &[Flow]); 3] = [
    (
        "orders",
        &["order.created", "order.paid", "order.shipped"],
        &[
            ("orders-to-billing", "billing", &["order.paid"]),
            ("orders-to-analytics", "analytics", &[]),
            ("orders-to-crm", "crm", &[]),
        ],
    ),
    (
        "payments",
        &["payment.succeeded", "payment.failed"],
        &[("payments-to-erp", "legacy-erp", &[])],
    ),
    (
        "inventory",
        &["stock.low", "stock.out"],
        &[("inventory-to-warehouse", "warehouse", &[])],
    ),
];

/// One attempt's answer at a demo target: (succeeded, status, error class, error, duration).
type Answer = (bool, Option<i64>, Option<&'static str>, Option<String>, i64);

fn answer(target: &str, rng: &mut impl Rng) -> Answer {
    match target {
        "billing" => (true, Some(200), None, None, rng.random_range(15..90)),
        "analytics" => (true, Some(200), None, None, rng.random_range(600..2400)),
        "crm" if rng.random_bool(0.3) => failed(503, rng.random_range(20..120)),
        "crm" => (true, Some(200), None, None, rng.random_range(20..120)),
        "legacy-erp" => failed(500, rng.random_range(5..40)),
        _ => (
            false,
            None,
            Some("timeout"),
            Some("no answer within 1000 ms".into()),
            1000,
        ),
    }
}

fn failed(status: i64, duration: i64) -> Answer {
    (
        false,
        Some(status),
        Some("http_5xx"),
        Some(format!("receiver answered HTTP {status}")),
        duration,
    )
}

/// A time-ordered id at `at_ms`: a UUIDv7 whose time is the row's own, its random bits from
/// the caller's source (the injected randomness), so one seed gives one history.
fn id_at(prefix: &str, at_ms: i64, rng: &mut impl Rng) -> String {
    let mut bytes = [0u8; 16];
    rng.fill(&mut bytes[6..]);
    bytes[..6].copy_from_slice(&(at_ms as u64).to_be_bytes()[2..]);
    bytes[6] = 0x70 | (bytes[6] & 0x0f);
    bytes[8] = 0x80 | (bytes[8] & 0x3f);
    format!("{prefix}_{}", uuid::Uuid::from_bytes(bytes).simple())
}

/// The history ending at `now_ms`: an event every 2 to 8 minutes on each demo endpoint over
/// the last 24 hours, each flow's delivery attempted on `schedule_ms` (the delays before
/// attempts 1, 2, …) until it succeeds or runs out of attempts. Every attempt finishes
/// before `now_ms`; an event whose deliveries would not is left out.
pub fn demo_history(now_ms: i64, schedule_ms: &[i64], rng: &mut impl Rng) -> Vec<PastEvent> {
    let mut events = Vec::new();
    for (endpoint, types, flows) in ROUTES {
        let mut at = now_ms - HISTORY_SPAN_MS + rng.random_range(0..120_000);
        let mut sequence = 0u64;
        while at < now_ms {
            sequence += 1;
            let event_type = types[rng.random_range(0..types.len())];
            let mut deliveries = Vec::new();
            for (flow, target, takes) in flows {
                if !takes.is_empty() && !takes.contains(&event_type) {
                    continue;
                }
                deliveries.push(delivery(flow, target, at, schedule_ms, rng));
            }
            if deliveries.iter().all(|d| d.finished_at() < now_ms) {
                events.push(PastEvent {
                    id: id_at("evt", at, rng),
                    endpoint: endpoint.into(),
                    event_type: event_type.into(),
                    payload: json!({"demo": true, "history": true, "sequence": sequence,
                                    "amount_cents": rng.random_range(100..100_000)}),
                    created_at: at,
                    deliveries,
                });
            }
            at += rng.random_range(120_000..480_000);
        }
    }
    events.sort_by_key(|e| e.created_at);
    events
}

fn delivery(
    flow: &str,
    target: &str,
    created_at: i64,
    schedule_ms: &[i64],
    rng: &mut impl Rng,
) -> PastDelivery {
    let mut attempts: Vec<PastAttempt> = Vec::new();
    let mut start = created_at;
    for (i, delay) in schedule_ms.iter().enumerate() {
        // The next attempt is due `delay` after the previous one finished (the first after
        // the event), plus the worker's pick-up time.
        start += delay + rng.random_range(5..60);
        let (succeeded, status_code, error_class, error, duration_ms) = answer(target, rng);
        attempts.push(PastAttempt {
            id: id_at("att", start, rng),
            number: i as i64 + 1,
            started_at: start,
            duration_ms,
            succeeded,
            status_code,
            error_class,
            error,
        });
        start += duration_ms;
        if succeeded {
            break;
        }
    }
    PastDelivery {
        id: id_at("dlv", created_at, rng),
        flow: flow.into(),
        target: target.into(),
        max_attempts: schedule_ms.len() as i64,
        attempts,
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    const SCHEDULE: [i64; 5] = [0, 2_000, 10_000, 30_000, 60_000];
    const NOW: i64 = 1_790_000_000_000;

    fn day() -> Vec<PastEvent> {
        demo_history(NOW, &SCHEDULE, &mut StdRng::seed_from_u64(7))
    }

    #[test]
    fn a_day_of_events_on_every_endpoint_all_finished_before_now() {
        let events = day();
        for endpoint in ["orders", "payments", "inventory"] {
            let n = events.iter().filter(|e| e.endpoint == endpoint).count();
            // 24 h at one event every 2 to 8 minutes.
            assert!((180..=720).contains(&n), "{endpoint}: {n}");
        }
        for e in &events {
            assert!(e.created_at >= NOW - HISTORY_SPAN_MS && e.created_at < NOW);
            for d in &e.deliveries {
                assert!(d.finished_at() < NOW);
                assert!(d.attempts.first().unwrap().started_at >= e.created_at);
            }
        }
        assert!(
            events
                .windows(2)
                .all(|w| w[0].created_at <= w[1].created_at)
        );
    }

    #[test]
    fn targets_behave_as_the_demo_receiver_does() {
        let events = day();
        let of = |target: &str| -> Vec<&PastDelivery> {
            events
                .iter()
                .flat_map(|e| &e.deliveries)
                .filter(|d| d.target == target)
                .collect()
        };
        for d in of("billing") {
            assert!(d.succeeded() && d.attempts.len() == 1);
        }
        for target in ["legacy-erp", "warehouse"] {
            for d in of(target) {
                assert!(!d.succeeded(), "{target} always fails");
                assert_eq!(d.attempts.len(), 5, "dead after the schedule's 5 attempts");
            }
        }
        let wh = of("warehouse");
        assert!(
            wh.iter()
                .all(|d| d.attempts.iter().all(|a| a.error_class == Some("timeout")))
        );
        // crm fails three times in ten, so some deliveries needed a retry and then succeeded.
        let crm = of("crm");
        assert!(crm.iter().any(|d| d.succeeded() && d.attempts.len() > 1));
        // The attempts follow the schedule: attempt 2 at least 2 s after attempt 1 finished.
        let erp = of("legacy-erp")[0];
        let gap = erp.attempts[1].started_at - erp.attempts[0].finished_at();
        assert!((2_000..2_100).contains(&gap), "{gap}");
        // Only billing takes just order.paid.
        let paid = events
            .iter()
            .filter(|e| e.event_type == "order.paid")
            .count();
        assert_eq!(of("billing").len(), paid);
    }

    #[test]
    fn the_same_seed_gives_the_same_history_and_ids_carry_their_time() {
        assert!(day() == day(), "one seed, one history");
        let e = &day()[0];
        let uuid = uuid::Uuid::parse_str(e.id.strip_prefix("evt_").unwrap()).unwrap();
        let (secs, _) = uuid.get_timestamp().unwrap().to_unix();
        assert_eq!(secs as i64, e.created_at / 1000);
    }
}
