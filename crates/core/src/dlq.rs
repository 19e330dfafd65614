//! Reading the DLQ, events, deliveries and replay sessions of a profile's control plane.
//! These are reads: they go straight to the server (nothing is cached) and fail with
//! `Offline` when it cannot be reached.

use serde::{Deserialize, Serialize};
use switchyard_protocol::dlq::{DlqEntry, DlqFilter, DlqGroupBy, DlqStats};
use switchyard_protocol::events::{Delivery, Event};
use switchyard_protocol::replay::ReplaySession;
use switchyard_protocol::{Page, ServerInfo};

use crate::Console;
use crate::error::{CoreError, Result};

/// One page of the DLQ: a filter, a page size and the cursor of the previous page.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DlqQuery {
    #[serde(default)]
    pub filter: DlqFilter,
    /// 1–500 (the server's default is 50).
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// One cell of the "by cause" view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DlqCause {
    pub error_class: String,
    pub target: String,
    pub count: u64,
}

/// The query string of `GET /v1/dlq` (and of the filter part of other calls).
pub fn dlq_query_string(q: &DlqQuery) -> Result<String> {
    if let Some(limit) = q.limit
        && !(1..=500).contains(&limit)
    {
        return Err(CoreError::invalid("limit", "must be between 1 and 500"));
    }
    let mut url = url::Url::parse("http://x/v1/dlq").expect("static url");
    {
        let mut pairs = url.query_pairs_mut();
        let f = &q.filter;
        for (key, value) in [
            ("endpoint", f.endpoint.clone()),
            ("target", f.target.clone()),
            ("flow", f.flow.clone()),
            (
                "error_class",
                f.error_class.map(|c| {
                    serde_json::to_value(c)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                }),
            ),
            ("since", f.since.map(|t| t.to_rfc3339())),
            ("until", f.until.map(|t| t.to_rfc3339())),
            ("limit", q.limit.map(|l| l.to_string())),
            ("cursor", q.cursor.clone()),
        ] {
            if let Some(value) = value {
                pairs.append_pair(key, &value);
            }
        }
    }
    Ok(url.query().unwrap_or("").to_owned())
}

fn check_id(field: &str, id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if ok {
        Ok(())
    } else {
        Err(CoreError::invalid(
            field,
            format!("{id:?} is not an id (1-128 of letters, digits, . _ : -)"),
        ))
    }
}

impl Console {
    /// The server's `/v1/info` (retry schedule, retention…).
    pub async fn server_info(&self, profile: &str) -> Result<ServerInfo> {
        self.client(profile).await?.info().await
    }

    /// One page of dead deliveries, newest first.
    pub async fn dlq_page(&self, profile: &str, query: &DlqQuery) -> Result<Page<DlqEntry>> {
        let path = format!("/v1/dlq?{}", dlq_query_string(query)?);
        self.client(profile)
            .await?
            .get_json(&path)
            .await?
            .ok_or_else(|| CoreError::not_found("/v1/dlq"))
    }

    /// DLQ counts grouped by target, error class or hour.
    pub async fn dlq_stats(&self, profile: &str, group_by: DlqGroupBy) -> Result<DlqStats> {
        let key = match group_by {
            DlqGroupBy::Target => "target",
            DlqGroupBy::ErrorClass => "error_class",
            DlqGroupBy::Hour => "hour",
        };
        self.client(profile)
            .await?
            .get_json(&format!("/v1/dlq/stats?group_by={key}"))
            .await?
            .ok_or_else(|| CoreError::not_found("/v1/dlq/stats"))
    }

    /// The DLQ grouped by cause: error class × target, with counts, largest first. Built from
    /// the exact stats counters and one dry-run count per (class, target) pair present.
    pub async fn dlq_causes(&self, profile: &str) -> Result<Vec<DlqCause>> {
        let classes = self.dlq_stats(profile, DlqGroupBy::ErrorClass).await?;
        let targets = self.dlq_stats(profile, DlqGroupBy::Target).await?;
        let mut pairs = Vec::new();
        for c in classes.groups.iter().filter(|g| g.count > 0) {
            for t in targets.groups.iter().filter(|g| g.count > 0) {
                pairs.push((c.key.clone(), t.key.clone()));
            }
        }
        let counts =
            futures::future::try_join_all(pairs.iter().map(|(class, target)| async move {
                let filter = DlqFilter {
                    target: Some(target.clone()),
                    error_class: serde_json::from_value(serde_json::Value::String(class.clone()))
                        .ok(),
                    ..Default::default()
                };
                self.replay_dry_run(
                    profile,
                    switchyard_protocol::replay::ReplaySelection::Filter(filter),
                )
                .await
            }))
            .await?;
        let mut out: Vec<DlqCause> = pairs
            .into_iter()
            .zip(counts)
            .filter(|(_, n)| *n > 0)
            .map(|((error_class, target), count)| DlqCause {
                error_class,
                target,
                count,
            })
            .collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then(a.target.cmp(&b.target)));
        Ok(out)
    }

    /// An event with every delivery and attempt.
    pub async fn event(&self, profile: &str, id: &str) -> Result<Event> {
        check_id("event id", id)?;
        self.client(profile)
            .await?
            .get_json(&format!("/v1/events/{id}"))
            .await?
            .ok_or_else(|| CoreError::not_found(format!("event {id}")))
    }

    /// One delivery with its attempt history.
    pub async fn delivery(&self, profile: &str, id: &str) -> Result<Delivery> {
        check_id("delivery id", id)?;
        self.client(profile)
            .await?
            .get_json(&format!("/v1/deliveries/{id}"))
            .await?
            .ok_or_else(|| CoreError::not_found(format!("delivery {id}")))
    }

    /// Replay sessions on the server, newest first (without items).
    pub async fn replay_sessions(&self, profile: &str) -> Result<Vec<ReplaySession>> {
        let page: Page<ReplaySession> = self
            .client(profile)
            .await?
            .get_json("/v1/replays?limit=100")
            .await?
            .ok_or_else(|| CoreError::not_found("/v1/replays"))?;
        Ok(page.items)
    }

    /// One replay session with its per-item results.
    pub async fn replay_session(&self, profile: &str, id: &str) -> Result<ReplaySession> {
        check_id("session id", id)?;
        self.client(profile)
            .await?
            .get_json(&format!("/v1/replays/{id}"))
            .await?
            .ok_or_else(|| CoreError::not_found(format!("replay session {id}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchyard_protocol::ErrorClass;

    #[test]
    fn query_string_encodes_filters_and_plus_signs() {
        let q = DlqQuery {
            filter: DlqFilter {
                target: Some("crm".into()),
                error_class: Some(ErrorClass::Http5xx),
                since: Some("2026-11-29T10:00:00+00:00".parse().unwrap()),
                ..Default::default()
            },
            limit: Some(100),
            cursor: None,
        };
        let s = dlq_query_string(&q).unwrap();
        assert_eq!(
            s,
            "target=crm&error_class=http_5xx&since=2026-11-29T10%3A00%3A00%2B00%3A00&limit=100"
        );
        let bad = DlqQuery {
            limit: Some(0),
            ..Default::default()
        };
        assert!(matches!(
            dlq_query_string(&bad),
            Err(CoreError::Invalid { .. })
        ));
    }

    #[test]
    fn ids_are_checked_before_they_reach_a_url() {
        assert!(check_id("event id", "evt_01").is_ok());
        assert!(check_id("event id", "../x").is_err());
        assert!(check_id("event id", "").is_err());
    }
}
