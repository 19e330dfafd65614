//! Reading the DLQ, events, deliveries and replay sessions of a profile's control plane.
//! These are reads: they go straight to the server (nothing is cached) and fail with
//! `Offline` when it cannot be reached.

use serde::{Deserialize, Serialize};
use switchyard_protocol::dlq::{DlqEntry, DlqFilter, DlqGroupBy, DlqStats};
use switchyard_protocol::events::{Delivery, Event, EventList};
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

    /// DLQ counts of the dead deliveries matching `filter`, grouped by target, error class,
    /// hour, or error class × target (`rows`).
    pub async fn dlq_stats(
        &self,
        profile: &str,
        group_by: DlqGroupBy,
        filter: &DlqFilter,
    ) -> Result<DlqStats> {
        let filter = dlq_query_string(&DlqQuery {
            filter: filter.clone(),
            ..Default::default()
        })?;
        let mut url = url::Url::parse("http://x/v1/dlq/stats").expect("static url");
        url.query_pairs_mut()
            .append_pair("group_by", group_by.as_str());
        let mut query = url.query().unwrap_or("").to_owned();
        if !filter.is_empty() {
            query = format!("{query}&{filter}");
        }
        self.client(profile)
            .await?
            .get_json(&format!("/v1/dlq/stats?{query}"))
            .await?
            .ok_or_else(|| CoreError::not_found("/v1/dlq/stats"))
    }

    /// The DLQ matching `filter` grouped by cause: error class × target, with counts, largest
    /// first, in one call (`group_by=error_class,target`).
    pub async fn dlq_causes(&self, profile: &str, filter: &DlqFilter) -> Result<Vec<DlqCause>> {
        let stats = self
            .dlq_stats(profile, DlqGroupBy::ErrorClassTarget, filter)
            .await?;
        Ok(stats
            .rows
            .into_iter()
            .map(|r| DlqCause {
                error_class: r.error_class.as_str().to_owned(),
                target: r.target,
                count: r.count,
            })
            .collect())
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

    /// The events submitted with `event_key` (on `endpoint`, when given), newest first, each
    /// with every delivery and attempt; at most `limit` (1–100, the server's default is 20).
    pub async fn find_events(
        &self,
        profile: &str,
        event_key: &str,
        endpoint: Option<&str>,
        limit: Option<u32>,
    ) -> Result<EventList> {
        if event_key.is_empty()
            || event_key.len() > 255
            || !event_key.bytes().all(|b| (0x20..=0x7e).contains(&b))
        {
            return Err(CoreError::invalid(
                "event key",
                "must be 1-255 printable ASCII characters",
            ));
        }
        if let Some(limit) = limit
            && !(1..=100).contains(&limit)
        {
            return Err(CoreError::invalid("limit", "must be between 1 and 100"));
        }
        let mut url = url::Url::parse("http://x/v1/events").expect("static url");
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("event_key", event_key);
            if let Some(e) = endpoint.filter(|e| !e.is_empty()) {
                pairs.append_pair("endpoint", e);
            }
            if let Some(l) = limit {
                pairs.append_pair("limit", &l.to_string());
            }
        }
        let path = format!("/v1/events?{}", url.query().unwrap_or(""));
        self.client(profile)
            .await?
            .get_json(&path)
            .await?
            .ok_or_else(|| CoreError::not_found("/v1/events"))
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

    /// The re-deliveries of `session`'s items still pending or failed (the first `limit` of
    /// them, fetched concurrently): where each stands in its own retry schedule and why it
    /// failed. Items whose re-delivery cannot be read are left out.
    pub async fn replay_redeliveries(
        &self,
        profile: &str,
        session: &ReplaySession,
        limit: usize,
    ) -> Result<Vec<Delivery>> {
        use switchyard_protocol::replay::ReplayItemStatus;
        let ids: Vec<&str> = session
            .items
            .iter()
            .flatten()
            .filter(|i| {
                matches!(
                    i.status,
                    ReplayItemStatus::Pending | ReplayItemStatus::Failed
                )
            })
            .filter_map(|i| i.delivery_id.as_deref())
            .filter(|id| check_id("delivery id", id).is_ok())
            .take(limit)
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client(profile).await?;
        let paths: Vec<String> = ids
            .iter()
            .map(|id| format!("/v1/deliveries/{id}"))
            .collect();
        let fetches = paths.iter().map(|path| client.get_json::<Delivery>(path));
        let found = futures::future::join_all(fetches).await;
        Ok(found.into_iter().filter_map(|r| r.ok().flatten()).collect())
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
