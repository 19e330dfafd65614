//! `switchyard dlq …` and `switchyard replay …`: the dead-letter queue and replay sessions.
//! Reads go straight to the server; starting and cancelling a replay are writes, saved in
//! the local outbox first (the session id is minted once there), then sent (replay.rs).

mod replay;

use std::time::Duration;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use switchyard_core::protocol_dlq::{DlqEntry, DlqFilter, DlqGroupBy, DlqStats};
use switchyard_core::protocol_events::{Delivery, ErrorClass};
use switchyard_core::{Console, DlqQuery};

use crate::{Exit, emit, table};

pub use replay::{ReplayCmd, replay_cmd};

#[derive(Subcommand)]
pub enum DlqCmd {
    /// List dead deliveries, newest first.
    List {
        #[command(flatten)]
        filter: FilterArgs,
        /// Entries per page (1-500).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Continue from a previous page's next cursor.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Counts of dead deliveries matching the filter, grouped.
    Stats {
        /// error_class, target, hour, or error_class,target (the "by cause" matrix).
        #[arg(long, value_enum, default_value = "error_class")]
        group_by: GroupBy,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// One dead (or any) delivery with its attempts.
    Show { delivery_id: String },
    /// An event and all its deliveries (the same as `events get`).
    Event { event_id: String },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum GroupBy {
    Target,
    #[value(name = "error_class", alias = "error-class")]
    ErrorClass,
    Hour,
    /// Error class × target.
    #[value(
        name = "error_class,target",
        alias = "target,error_class",
        alias = "cause"
    )]
    Cause,
}

/// The DLQ filter, named like the API's query parameters.
#[derive(Args, Default)]
pub struct FilterArgs {
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub target: Option<String>,
    #[arg(long)]
    pub flow: Option<String>,
    /// http_4xx, http_5xx, timeout, connect, tls or forbidden_address.
    #[arg(long)]
    pub error_class: Option<String>,
    /// Dead at or after: RFC 3339, or an age like 30m, 2h, 1d.
    #[arg(long)]
    pub since: Option<String>,
    /// Dead before: RFC 3339, or an age like 30m, 2h, 1d.
    #[arg(long)]
    pub until: Option<String>,
}

fn parse_time(flag: &str, text: &str) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let age = match text.strip_suffix('d') {
        Some(days) => days
            .parse::<u64>()
            .ok()
            .map(|d| Duration::from_secs(d * 86_400)),
        None => crate::args::parse_duration(text).ok(),
    };
    match age {
        Some(age) => Ok(Utc::now() - chrono::Duration::from_std(age)?),
        None => bail!("--{flag} {text:?}: give an RFC 3339 time or an age like 30m, 2h, 1d"),
    }
}

impl FilterArgs {
    fn to_filter(&self) -> anyhow::Result<DlqFilter> {
        let error_class = self
            .error_class
            .as_deref()
            .map(|c| {
                ErrorClass::ALL
                    .into_iter()
                    .find(|k| k.as_str() == c)
                    .with_context(|| {
                        format!(
                            "--error-class {c:?}: one of http_4xx, http_5xx, timeout, connect, tls, forbidden_address"
                        )
                    })
            })
            .transpose()?;
        Ok(DlqFilter {
            endpoint: self.endpoint.clone(),
            target: self.target.clone(),
            flow: self.flow.clone(),
            error_class,
            since: self
                .since
                .as_deref()
                .map(|t| parse_time("since", t))
                .transpose()?,
            until: self
                .until
                .as_deref()
                .map(|t| parse_time("until", t))
                .transpose()?,
        })
    }
}

/// `dead_at` and attempt times as the tables show them (UTC, to the second).
fn time(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

pub async fn dlq_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    cmd: DlqCmd,
) -> anyhow::Result<Exit> {
    match cmd {
        DlqCmd::List {
            filter,
            limit,
            cursor,
        } => {
            let query = DlqQuery {
                filter: filter.to_filter()?,
                limit: Some(limit),
                cursor,
            };
            let page = console.dlq_page(profile, &query).await?;
            emit(json, &page, |page| {
                print_page(&page.items, page.next_cursor.as_deref())
            });
        }
        DlqCmd::Stats { group_by, filter } => {
            let group_by = match group_by {
                GroupBy::Target => DlqGroupBy::Target,
                GroupBy::ErrorClass => DlqGroupBy::ErrorClass,
                GroupBy::Hour => DlqGroupBy::Hour,
                GroupBy::Cause => DlqGroupBy::ErrorClassTarget,
            };
            let stats = console
                .dlq_stats(profile, group_by, &filter.to_filter()?)
                .await?;
            emit(json, &stats, |s| print_stats(group_by, s));
        }
        DlqCmd::Show { delivery_id } => {
            let d = console.delivery(profile, &delivery_id).await?;
            emit(json, &d, print_delivery);
        }
        DlqCmd::Event { event_id } => {
            let e = console.event(profile, event_id.trim()).await?;
            emit(json, &e, crate::events::print_event);
        }
    }
    Ok(Exit::Ok)
}

/// One page of the DLQ, and the cursor of the next one when there is more.
fn print_page(items: &[DlqEntry], next_cursor: Option<&str>) {
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|e| {
            vec![
                time(&e.dead_at),
                e.delivery_id.clone(),
                e.event_type.clone(),
                e.endpoint.clone(),
                e.flow.clone(),
                e.target.clone(),
                e.error_class.as_str().to_owned(),
                e.last_status_code
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    table::print(
        &[
            "DEAD AT (UTC)",
            "DELIVERY",
            "EVENT TYPE",
            "ENDPOINT",
            "FLOW",
            "TARGET",
            "ERROR",
            "STATUS",
        ],
        &rows,
    );
    if let Some(c) = next_cursor {
        outln!("more: --cursor {c}");
    }
}

/// The "by cause" view is a matrix (`rows`); every other grouping is one key per line.
fn print_stats(group_by: DlqGroupBy, s: &DlqStats) {
    if group_by == DlqGroupBy::ErrorClassTarget {
        let rows: Vec<Vec<String>> = s
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.error_class.as_str().to_owned(),
                    r.target.clone(),
                    r.count.to_string(),
                ]
            })
            .collect();
        table::print(&["ERROR CLASS", "TARGET", "DEAD"], &rows);
    } else {
        let rows: Vec<Vec<String>> = s
            .groups
            .iter()
            .map(|g| vec![g.key.clone(), g.count.to_string()])
            .collect();
        table::print(&["GROUP", "DEAD"], &rows);
    }
    outln!("total: {}", s.total);
}

fn print_delivery(d: &Delivery) {
    outln!(
        "{} {:?}  event {} ({})  {} → {} via {}",
        d.id,
        d.state,
        d.event_id,
        d.event_type,
        d.endpoint,
        d.target,
        d.flow
    );
    if let Some(next) = d.next_attempt_at {
        outln!("next attempt: {}", time(&next));
    }
    for a in &d.attempts {
        outln!(
            "  #{} {}  {:>6} ms  {}  {}",
            a.number,
            time(&a.started_at),
            a.duration_ms
                .map(|m| m.to_string())
                .unwrap_or_else(|| "-".into()),
            a.status_code
                .map(|s| s.to_string())
                .unwrap_or_else(|| "-".into()),
            a.error.clone().unwrap_or_default()
        );
    }
}
