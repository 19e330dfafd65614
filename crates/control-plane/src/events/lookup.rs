//! `GET /v1/events?event_key=K[&endpoint=E][&limit=N]`: every event of the tenant with that
//! key (optionally on one endpoint), newest first, each with its deliveries and attempts.
//!
//! An event key is the client's dedup key: inside the retention window one event holds it,
//! after the window a new event may take it again, and two endpoints may use the same key.
//! So the answer is a list (usually of one). `event_key` is required (listing every event of
//! an endpoint is not what this is for); `limit` is 1–100, default 20, and `more` says when
//! there were more.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use serde::Deserialize;
use switchyard_protocol::EventList;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::Tenant;

const DEFAULT_LIMIT: u32 = 20;
pub const MAX_LIMIT: u32 = 100;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupQuery {
    pub event_key: Option<String>,
    pub endpoint: Option<String>,
    pub limit: Option<u32>,
}

/// The checked query: the key, the optional endpoint and the limit.
fn check(query: &LookupQuery) -> Result<(String, Option<String>, u32), ApiError> {
    let key = match query.event_key.as_deref() {
        None | Some("") => {
            return Err(ApiError::validation(
                "event_key",
                "is required: GET /v1/events?event_key=K[&endpoint=E] (one event by id: GET /v1/events/{id})",
            ));
        }
        Some(k) if !switchyard_protocol::events::is_event_key(k) => {
            return Err(ApiError::validation(
                "event_key",
                "must be 1-255 printable ASCII characters",
            ));
        }
        Some(k) => k.to_owned(),
    };
    let endpoint = match query.endpoint.as_deref() {
        None | Some("") => None,
        Some(e) => {
            switchyard_protocol::validate_name(e)
                .map_err(|err| ApiError::validation("endpoint", err.to_string()))?;
            Some(e.to_owned())
        }
    };
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::validation(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}"),
        ));
    }
    Ok((key, endpoint, limit))
}

pub async fn find(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    query: Result<Query<LookupQuery>, QueryRejection>,
) -> Result<Json<EventList>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::validation("query", e.body_text()))?;
    let (key, endpoint, limit) = check(&query)?;
    let mut items = state
        .store
        .events_by_key(&tenant, &key, endpoint.as_deref(), limit + 1)
        .await?;
    let more = items.len() > limit as usize;
    items.truncate(limit as usize);
    Ok(Json(EventList { items, more }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(key: Option<&str>, endpoint: Option<&str>, limit: Option<u32>) -> LookupQuery {
        LookupQuery {
            event_key: key.map(str::to_owned),
            endpoint: endpoint.map(str::to_owned),
            limit,
        }
    }

    fn field(e: ApiError) -> String {
        match e {
            ApiError::Validation(f) => f.field,
            other => panic!("not a validation error: {other:?}"),
        }
    }

    #[test]
    fn the_key_is_required_and_every_bad_parameter_is_named() {
        assert_eq!(
            field(check(&q(None, Some("ep"), None)).unwrap_err()),
            "event_key"
        );
        assert_eq!(
            field(check(&q(Some(""), None, None)).unwrap_err()),
            "event_key"
        );
        assert_eq!(
            field(check(&q(Some("a\u{1}"), None, None)).unwrap_err()),
            "event_key"
        );
        assert_eq!(
            field(check(&q(Some("k"), Some("Bad Name"), None)).unwrap_err()),
            "endpoint"
        );
        assert_eq!(
            field(check(&q(Some("k"), None, Some(0))).unwrap_err()),
            "limit"
        );
        assert_eq!(
            field(check(&q(Some("k"), None, Some(101))).unwrap_err()),
            "limit"
        );
        let (key, endpoint, limit) = check(&q(Some("order-42"), Some(""), None)).unwrap();
        assert_eq!((key.as_str(), endpoint, limit), ("order-42", None, 20));
    }
}
