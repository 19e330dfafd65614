//! `GET /v1/dlq` (filtered, newest first, cursor-paginated) and `GET /v1/dlq/stats`.

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use switchyard_protocol::{DlqEntry, DlqFilter, DlqGroup, DlqGroupBy, DlqStats, ErrorClass, Page};

use crate::AppState;
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::Tenant;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/dlq", get(list))
        .route("/v1/dlq/stats", get(stats))
}

/// The query of `GET /v1/dlq`: the filter plus paging.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DlqQuery {
    pub endpoint: Option<String>,
    pub target: Option<String>,
    pub flow: Option<String>,
    pub error_class: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

fn time(
    field: &str,
    value: Option<&str>,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, ApiError> {
    value
        .map(|v| {
            chrono::DateTime::parse_from_rfc3339(v)
                .map(|t| t.with_timezone(&chrono::Utc))
                .map_err(|_| {
                    ApiError::validation(field, format!("{v:?} is not an RFC 3339 timestamp"))
                })
        })
        .transpose()
}

impl DlqQuery {
    pub fn filter(&self) -> Result<DlqFilter, ApiError> {
        let error_class = self
            .error_class
            .as_deref()
            .map(|c| {
                ErrorClass::parse(c).ok_or_else(|| {
                    ApiError::validation(
                        "error_class",
                        format!("{c:?} is not one of http_4xx, http_5xx, timeout, connect, tls"),
                    )
                })
            })
            .transpose()?;
        Ok(DlqFilter {
            endpoint: self.endpoint.clone(),
            target: self.target.clone(),
            flow: self.flow.clone(),
            error_class,
            since: time("since", self.since.as_deref())?,
            until: time("until", self.until.as_deref())?,
        })
    }
}

const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 500;

fn encode_cursor(dead_at: i64, id: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{dead_at}:{id}"))
}

fn decode_cursor(cursor: &str) -> Result<(i64, String), ApiError> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|text| {
            let (at, id) = text.split_once(':')?;
            Some((at.parse().ok()?, id.to_owned()))
        })
        .ok_or_else(|| ApiError::validation("cursor", "is not a cursor this server issued"))
}

async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    query: Result<Query<DlqQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Page<DlqEntry>>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::validation("query", e.body_text()))?;
    let filter = query.filter()?;
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::validation(
            "limit",
            format!("must be between 1 and {MAX_PAGE}"),
        ));
    }
    let after = query.cursor.as_deref().map(decode_cursor).transpose()?;
    let mut items = state
        .delivery
        .store
        .dlq_page(&tenant, &filter, after, limit + 1)
        .await?;
    let next_cursor = if items.len() > limit as usize {
        items.truncate(limit as usize);
        items
            .last()
            .map(|e| encode_cursor(e.dead_at.timestamp_millis(), &e.delivery_id))
    } else {
        None
    };
    Ok(Json(Page { items, next_cursor }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatsQuery {
    pub group_by: Option<String>,
}

async fn stats(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    query: Result<Query<StatsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<DlqStats>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::validation("query", e.body_text()))?;
    let group_by = match query.group_by.as_deref().unwrap_or("target") {
        "target" => DlqGroupBy::Target,
        "error_class" => DlqGroupBy::ErrorClass,
        "hour" => DlqGroupBy::Hour,
        other => {
            return Err(ApiError::validation(
                "group_by",
                format!("{other:?} is not one of target, error_class, hour"),
            ));
        }
    };
    let column = match group_by {
        DlqGroupBy::Target => "target",
        DlqGroupBy::ErrorClass => "error_class",
        DlqGroupBy::Hour => "hour",
    };
    let rows = state.delivery.store.dlq_counts(&tenant, column).await?;
    let total = rows
        .iter()
        .map(|(_, n)| u64::try_from(*n).unwrap_or(0))
        .sum();
    let groups = rows
        .into_iter()
        .map(|(key, count)| {
            let key = if group_by == DlqGroupBy::Hour {
                let hour: i64 = key.parse().unwrap_or(0);
                to_datetime(hour * 3_600_000).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            } else {
                key
            };
            DlqGroup {
                key,
                count: u64::try_from(count).unwrap_or(0),
            }
        })
        .collect();
    Ok(Json(DlqStats {
        group_by,
        total,
        groups,
    }))
}
