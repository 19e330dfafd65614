//! `switchyard events get EVT_ID` / `switchyard events find --key K [--endpoint E]`: an event
//! (by id, or every event submitted with a key) and all its deliveries, each with its state
//! and attempts; a dead one is the DLQ entry to look at (`dlq show DLV_ID`) or replay.

use clap::Subcommand;
use switchyard_core::Console;
use switchyard_core::protocol_events::Event;

use crate::{Exit, emit, table};

#[derive(Subcommand)]
pub enum EventsCmd {
    /// One event by id (evt_…), with every delivery.
    Get { event_id: String },
    /// The events submitted with an event key (newest first), with every delivery.
    Find {
        /// The event_key given at submission.
        #[arg(long)]
        key: String,
        /// Only events submitted on this endpoint.
        #[arg(long)]
        endpoint: Option<String>,
        /// At most this many events (1-100).
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
}

fn time(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// An event's header line and its deliveries as a table.
pub fn print_event(e: &Event) {
    outln!(
        "{} {} on {}{} at {}",
        e.id,
        e.event_type,
        e.endpoint,
        e.event_key
            .as_ref()
            .map(|k| format!(" (key {k})"))
            .unwrap_or_default(),
        time(&e.created_at)
    );
    let rows: Vec<Vec<String>> = e
        .deliveries
        .iter()
        .map(|d| {
            let last = d.attempts.last();
            vec![
                d.id.clone(),
                d.flow.clone(),
                d.target.clone(),
                d.state.as_str().to_owned(),
                format!("{}/{}", d.attempts_made, d.max_attempts),
                match (d.last_status_code, d.error_class) {
                    (Some(s), _) => s.to_string(),
                    (None, Some(c)) => c.as_str().to_owned(),
                    (None, None) => "-".into(),
                },
                last.map(|a| time(&a.started_at))
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    if rows.is_empty() {
        outln!("  no deliveries (no enabled flow of the endpoint matched)");
    } else {
        table::print(
            &[
                "DELIVERY",
                "FLOW",
                "TARGET",
                "STATE",
                "ATTEMPTS",
                "LAST",
                "LAST ATTEMPT (UTC)",
            ],
            &rows,
        );
    }
    if e.deliveries.iter().any(|d| d.state.as_str() == "dead") {
        outln!("  dead ones are in the DLQ: `switchyard dlq show DELIVERY` for the attempts");
    }
}

pub async fn events_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    cmd: EventsCmd,
) -> anyhow::Result<Exit> {
    match cmd {
        EventsCmd::Get { event_id } => {
            let e = console.event(profile, event_id.trim()).await?;
            emit(json, &e, print_event);
        }
        EventsCmd::Find {
            key,
            endpoint,
            limit,
        } => {
            let found = console
                .find_events(profile, &key, endpoint.as_deref(), Some(limit))
                .await?;
            emit(json, &found, |found| {
                if found.items.is_empty() {
                    outln!("no event with key {key:?}");
                }
                for (i, e) in found.items.iter().enumerate() {
                    if i > 0 {
                        outln!();
                    }
                    print_event(e);
                }
                if found.more {
                    outln!("more events have this key: raise --limit or narrow with --endpoint");
                }
            });
        }
    }
    Ok(Exit::Ok)
}
