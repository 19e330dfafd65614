//! `/v1/tokens` (admin) and `GET /v1/whoami` (any role).
//!
//! Creating and revoking are keyed local operations: the row, the key's claim and the stored
//! response commit together, so a retried creation answers the same value (from the stored
//! response, sealed at rest: src/sealing.rs) and never makes a second token.

use async_trait::async_trait;
use axum::Json;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use switchyard_protocol::{CreateTokenRequest, CreatedToken, TokenInfo, TokenList, validate_name};
use utoipa_axum::router::OpenApiRouter;

use super::Caller;
use crate::AppState;
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::idempotency::{OpContext, Operation};
use crate::resources::{keyed, parse, precheck_key};
use crate::store::{NewToken, StoreTx, StoredResponse, TokenInsert, TokenRow};

pub fn routes() -> OpenApiRouter<AppState> {
    use crate::openapi::{route, tokens as doc};
    use utoipa::openapi::path::HttpMethod::{Delete, Get, Post};
    OpenApiRouter::new()
        .routes(route("/v1/tokens", Post, create, doc::create()))
        .routes(route("/v1/tokens", Get, list, doc::list()))
        .routes(route("/v1/tokens/{id}", Delete, revoke, doc::revoke()))
        .routes(route("/v1/whoami", Get, whoami, doc::whoami()))
}

fn info(row: &TokenRow) -> TokenInfo {
    TokenInfo {
        id: row.id.clone(),
        name: row.name.clone(),
        role: row.role,
        created_at: to_datetime(row.created_at),
        last_used_at: row.last_used_at.map(to_datetime),
        revoked_at: row.revoked_at.map(to_datetime),
    }
}

/// Any token may ask who it is (an edge token too), so this one handler takes the caller
/// itself rather than [`Tenant`] (src/auth/roles.rs lists it as [`super::roles::ANY_ROLE`]).
async fn whoami(
    caller: Option<axum::Extension<Caller>>,
) -> Result<Json<switchyard_protocol::Caller>, ApiError> {
    let axum::Extension(caller) = caller.ok_or(ApiError::Unauthorized)?;
    let (token_id, token_name) = caller.token.unzip();
    Ok(Json(switchyard_protocol::Caller {
        tenant: caller.tenant,
        role: caller.role,
        token_id,
        token_name,
    }))
}

async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
) -> Result<Json<TokenList>, ApiError> {
    let rows = state
        .telemetry
        .store("list_tokens", state.store.list_tokens(&tenant))
        .await?;
    Ok(Json(TokenList {
        items: rows.iter().map(info).collect(),
    }))
}

async fn create(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    uri: OriginalUri,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Response {
    let prepared = (|| {
        precheck_key(&headers, &state)?;
        let JsonBody(body) = body?;
        let request: CreateTokenRequest = parse(&body)?;
        validate_name(&request.name).map_err(|e| ApiError::validation("name", e.to_string()))?;
        Ok::<_, ApiError>((body, request))
    })();
    match prepared {
        Ok((body, request)) => {
            let op = Create { request };
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

async fn revoke(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = precheck_key(&headers, &state) {
        return e.into_response();
    }
    keyed(
        &state,
        &tenant,
        Method::DELETE,
        &uri,
        &headers,
        None,
        Revoke { id },
    )
    .await
}

struct Create {
    request: CreateTokenRequest,
}

#[async_trait]
impl Operation for Create {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        // Made inside the unit of work: a retry after a crash mints a new value, but only the
        // committed one (with its stored answer) ever existed.
        let value = super::new_token_value();
        let id = crate::store::new_id("tok");
        let sha256 = super::digest(&value);
        let new = NewToken {
            tenant: ctx.tenant,
            id: &id,
            name: &self.request.name,
            role: self.request.role,
            sha256: &sha256,
            now: ctx.now,
        };
        match tx.insert_token(&new).await? {
            TokenInsert::Created(row) => Ok(StoredResponse::json(
                201,
                &CreatedToken {
                    token: info(&row),
                    value,
                },
            )),
            TokenInsert::NameTaken => Err(ApiError::NameTaken {
                kind: "token",
                name: self.request.name.clone(),
            }),
        }
    }
}

struct Revoke {
    id: String,
}

#[async_trait]
impl Operation for Revoke {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        match tx.revoke_token(ctx.tenant, &self.id, ctx.now).await? {
            Some(row) => Ok(StoredResponse::json(200, &info(&row))),
            None => Err(ApiError::NotFound {
                kind: "token",
                name: self.id.clone(),
            }),
        }
    }
}
