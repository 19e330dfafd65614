//! `GET /v1/dlq` (filtered, newest first, cursor-paginated); `GET /v1/dlq/stats` is in
//! [`crate::dlq_stats`].

use axum::Json;
use axum::extract::{Query, State};
use serde::Deserialize;
use switchyard_protocol::{DlqEntry, DlqFilter, ErrorClass, Page};
use utoipa::openapi::path::HttpMethod::Get;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::Tenant;
use crate::openapi::{delivery as doc, route};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(route("/v1/dlq", Get, list, doc::dlq_list()))
        .routes(route(
            "/v1/dlq/stats",
            Get,
            crate::dlq_stats::stats,
            doc::dlq_stats(),
        ))
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
                        format!(
                            "{c:?} is not one of http_4xx, http_5xx, timeout, connect, tls, forbidden_address"
                        ),
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
pub const MAX_PAGE: u32 = 500;

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
    let after = query
        .cursor
        .as_deref()
        .map(crate::cursor::decode_at)
        .transpose()?;
    let page = state.store.dlq_page(&tenant, &filter, after, limit + 1);
    let mut items = state.telemetry.store("dlq_page", page).await?;
    let next_cursor = if items.len() > limit as usize {
        items.truncate(limit as usize);
        items
            .last()
            .map(|e| crate::cursor::encode_at(e.dead_at.timestamp_millis(), &e.delivery_id))
    } else {
        None
    };
    Ok(Json(Page { items, next_cursor }))
}
