//! `/v1/{endpoints,targets,flows}`: handlers that parse and validate, then hand a mutation to
//! the idempotency pipeline or read from the store.

pub mod ops;
pub mod render;
pub mod secrets;
pub mod target_test;

use axum::Json;
use axum::extract::{OriginalUri, Path, Query, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use switchyard_protocol::{
    ApplyRequest, CreateRequest, Page, Resource, ResourceKind, TargetTestRequest, UpdateRequest,
    validate_name,
};
use utoipa::openapi::path::HttpMethod::{Delete, Get, Patch, Post, Put};
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{IfMatch, JsonBody, Tenant};
use crate::idempotency::{self, Operation, fingerprint};
use crate::openapi::{resources as doc, route};

pub fn routes() -> OpenApiRouter<AppState> {
    let mut router = OpenApiRouter::new();
    for kind in ResourceKind::ALL {
        let collection = format!("/v1/{}", kind.plural());
        let item = format!("{collection}/{{name}}");
        router = router
            .routes(route(
                &collection,
                Get,
                move |s, t, q| list(kind, s, t, q),
                doc::list(kind),
            ))
            .routes(route(
                &collection,
                Post,
                move |s, t, u, h, b| create(kind, s, t, u, h, b),
                doc::create(kind),
            ))
            .routes(route(
                &item,
                Get,
                move |s, t, p| read(kind, s, t, p),
                doc::read(kind),
            ))
            .routes(route(
                &item,
                Patch,
                move |s, t, p, u, h, b| update(kind, s, t, p, u, h, b),
                doc::update(kind),
            ))
            .routes(route(
                &item,
                Put,
                move |s, t, p, u, h, b| apply(kind, s, t, p, u, h, b),
                doc::apply(kind),
            ))
            .routes(route(
                &item,
                Delete,
                move |s, t, p, u, h| delete(kind, s, t, p, u, h),
                doc::delete(kind),
            ));
    }
    router
        .routes(route(
            "/v1/endpoints/{name}/disable",
            Post,
            |s, t, p, u, h| set_enabled(false, s, t, p, u, h),
            doc::endpoint_action("disable"),
        ))
        .routes(route(
            "/v1/endpoints/{name}/enable",
            Post,
            |s, t, p, u, h| set_enabled(true, s, t, p, u, h),
            doc::endpoint_action("enable"),
        ))
        .routes(route(
            "/v1/targets/{name}/test",
            Post,
            test_target,
            doc::target_test(),
        ))
        .merge(secrets::routes())
        .merge(crate::client_certs::routes())
}

/// Parses a request body into `T`, naming the offending field on failure.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(body: &Value) -> Result<T, ApiError> {
    serde_json::from_value(body.clone()).map_err(|e| ApiError::validation("body", e.to_string()))
}

fn checked_spec(kind: ResourceKind, spec: &Value) -> Result<Value, ApiError> {
    kind.validate_spec(spec).map_err(ApiError::Validation)
}

/// Refuses a target whose `url` (in a spec, or in a merge patch that sets it) names an
/// address deliveries may not reach, unless this server allows private targets. Only what
/// the URL itself says is judged here (an IP literal, `localhost`); a name is judged by
/// what it resolves to when an attempt connects (`crate::delivery::http`).
fn check_target_url(state: &AppState, kind: ResourceKind, spec: &Value) -> Result<(), ApiError> {
    if kind != ResourceKind::Target {
        return Ok(());
    }
    let Some(url) = spec.get("url").and_then(Value::as_str) else {
        return Ok(());
    };
    match state.delivery.http.policy().url_problem(url) {
        None => Ok(()),
        Some(problem) => Err(ApiError::TargetAddressForbidden(problem)),
    }
}

pub(crate) async fn keyed(
    state: &AppState,
    tenant: &str,
    method: Method,
    uri: &OriginalUri,
    headers: &HeaderMap,
    body: Option<&Value>,
    op: impl Operation,
) -> Response {
    let if_match = headers
        .get(axum::http::header::IF_MATCH)
        .and_then(|v| v.to_str().ok());
    let fp = fingerprint(method.as_str(), uri.path(), if_match, body);
    // Cancellation safety (a client hanging up mid-transaction) is the router's job: every
    // request runs to completion in its own task (`server::run_to_completion`).
    idempotency::run(state, tenant, headers, fp, &op).await
}

/// Validation runs before the key is looked at: a 400 is never stored (contract rule 7).
pub(crate) fn precheck_key(headers: &HeaderMap, state: &AppState) -> Result<(), ApiError> {
    match idempotency::key_from_headers(headers)? {
        None if state.idempotency.require_key => Err(ApiError::KeyMissing),
        _ => Ok(()),
    }
}

async fn create(
    kind: ResourceKind,
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    uri: OriginalUri,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Response {
    let prepared = (|| {
        precheck_key(&headers, &state)?;
        let JsonBody(body) = body?;
        let request: CreateRequest = parse(&body)?;
        validate_name(&request.name).map_err(|e| ApiError::validation("name", e.to_string()))?;
        let spec = checked_spec(kind, &request.spec)?;
        check_target_url(&state, kind, &spec)?;
        Ok::<_, ApiError>((
            body,
            ops::Create {
                kind,
                name: request.name,
                spec,
            },
        ))
    })();
    match prepared {
        Ok((body, op)) => {
            keyed(
                &state,
                &tenant,
                Method::POST,
                &uri,
                &headers,
                Some(&body),
                op,
            )
            .await
        }
        Err(e) => e.into_response(),
    }
}

async fn update(
    kind: ResourceKind,
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Response {
    let prepared = (|| {
        precheck_key(&headers, &state)?;
        let if_match = IfMatch::from_headers(&headers)?;
        let JsonBody(body) = body?;
        let request: UpdateRequest = parse(&body)?;
        if !request.spec.is_object() {
            return Err(ApiError::validation(
                "spec",
                "must be a JSON merge patch object",
            ));
        }
        check_target_url(&state, kind, &request.spec)?;
        Ok((
            body,
            ops::Update {
                kind,
                name,
                patch: request.spec,
                if_match,
            },
        ))
    })();
    match prepared {
        Ok((body, op)) => {
            keyed(
                &state,
                &tenant,
                Method::PATCH,
                &uri,
                &headers,
                Some(&body),
                op,
            )
            .await
        }
        Err(e) => e.into_response(),
    }
}

async fn apply(
    kind: ResourceKind,
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Response {
    let prepared = (|| {
        precheck_key(&headers, &state)?;
        validate_name(&name).map_err(|e| ApiError::validation("name", e.to_string()))?;
        let if_match = IfMatch::from_headers(&headers)?;
        let JsonBody(body) = body?;
        let request: ApplyRequest = parse(&body)?;
        let spec = checked_spec(kind, &request.spec)?;
        check_target_url(&state, kind, &spec)?;
        Ok::<_, ApiError>((
            body,
            ops::Apply {
                kind,
                name,
                spec,
                if_match,
            },
        ))
    })();
    match prepared {
        Ok((body, op)) => {
            keyed(
                &state,
                &tenant,
                Method::PUT,
                &uri,
                &headers,
                Some(&body),
                op,
            )
            .await
        }
        Err(e) => e.into_response(),
    }
}

async fn delete(
    kind: ResourceKind,
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Response {
    let prepared = (|| {
        precheck_key(&headers, &state)?;
        let if_match = IfMatch::from_headers(&headers)?;
        Ok::<_, ApiError>(ops::Delete {
            kind,
            name,
            if_match,
        })
    })();
    match prepared {
        Ok(op) => keyed(&state, &tenant, Method::DELETE, &uri, &headers, None, op).await,
        Err(e) => e.into_response(),
    }
}

async fn set_enabled(
    enabled: bool,
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Response {
    let prepared = (|| {
        precheck_key(&headers, &state)?;
        let if_match = IfMatch::from_headers(&headers)?;
        Ok::<_, ApiError>(ops::SetEnabled {
            name,
            enabled,
            if_match,
        })
    })();
    match prepared {
        Ok(op) => keyed(&state, &tenant, Method::POST, &uri, &headers, None, op).await,
        Err(e) => e.into_response(),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

pub const DEFAULT_PAGE: u32 = 100;
pub const MAX_PAGE: u32 = 500;

async fn list(
    kind: ResourceKind,
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Page<Resource>>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::validation("query", e.body_text()))?;
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
        .map(crate::cursor::decode)
        .transpose()?;
    // One extra row tells whether another page exists.
    let mut rows = state
        .store
        .list_resources(&tenant, kind, after.as_deref(), limit + 1)
        .await?;
    let next_cursor = if rows.len() > limit as usize {
        rows.truncate(limit as usize);
        rows.last().map(|r| crate::cursor::encode(&r.name))
    } else {
        None
    };
    Ok(Json(Page {
        items: crate::delivery::with_live_status(
            &state,
            &tenant,
            rows.iter().map(render::to_wire).collect(),
        )
        .await?,
        next_cursor,
    }))
}

async fn read(
    kind: ResourceKind,
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let row = state
        .store
        .get_resource(&tenant, kind, &name)
        .await?
        .ok_or_else(|| ApiError::NotFound {
            kind: kind.as_str(),
            name: name.clone(),
        })?;
    let live = crate::delivery::live_status(&state, &tenant, kind, &name).await?;
    Ok(render::resource_response(200, &row, live).into_response())
}

async fn test_target(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Response {
    let prepared = (|| {
        precheck_key(&headers, &state)?;
        let JsonBody(body) = body?;
        let request: TargetTestRequest = parse(&body)?;
        let event_type = request
            .event_type
            .unwrap_or_else(|| target_test::DEFAULT_TEST_EVENT_TYPE.to_owned());
        crate::events::check_event_type(&event_type)?;
        Ok::<_, ApiError>((
            body,
            target_test::TestTarget {
                name,
                secret_id: request.secret_id,
                client_certificate_id: request.client_certificate_id,
                event_type,
                payload: request.payload.unwrap_or_else(|| serde_json::json!({})),
            },
        ))
    })();
    match prepared {
        Ok((body, op)) => {
            keyed(
                &state,
                &tenant,
                Method::POST,
                &uri,
                &headers,
                Some(&body),
                op,
            )
            .await
        }
        Err(e) => e.into_response(),
    }
}
