//! `/v1/targets/{name}/secrets…`: the signing secrets of a target and their rotation.
//!
//! Rotating and expiring are keyed local operations: the store's transition, the claim and
//! the stored response commit together, so a keyed replay of a rotation answers the same
//! secret (from the stored response, sealed at rest like every stored response: see
//! src/sealing.rs) and never mints a second one.

use async_trait::async_trait;
use axum::Json;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use switchyard_protocol::{
    ExpireSecretResponse, ExpiringSecret, MAX_SIGNING_SECRETS, NewSigningSecret, ResourceKind,
    RotateSecretRequest, RotateSecretResponse, RotationStatus, SigningSecretInfo,
    SigningSecretList,
};
use utoipa_axum::router::OpenApiRouter;

use super::{keyed, parse, precheck_key};
use crate::AppState;
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::idempotency::{OpContext, Operation};
use crate::store::{
    Expiry, NewRotation, Rotation, SecretMeta, StoreTx, StoredResponse, overlap_ends_at,
};

pub fn routes() -> OpenApiRouter<AppState> {
    use crate::openapi::{route, secrets as doc};
    use utoipa::openapi::path::HttpMethod::{Get, Post};
    OpenApiRouter::new()
        .routes(route("/v1/targets/{name}/secrets", Get, list, doc::list()))
        .routes(route(
            "/v1/targets/{name}/secrets/rotate",
            Post,
            rotate,
            doc::rotate(),
        ))
        .routes(route(
            "/v1/targets/{name}/secrets/{id}/expire",
            Post,
            expire,
            doc::expire(),
        ))
}

pub fn info(meta: &SecretMeta) -> SigningSecretInfo {
    SigningSecretInfo {
        id: meta.id.clone(),
        created_at: to_datetime(meta.created_at),
        expires_at: meta.expires_at.map(to_datetime),
    }
}

fn target_missing(name: &str) -> ApiError {
    ApiError::NotFound {
        kind: ResourceKind::Target.as_str(),
        name: name.to_owned(),
    }
}

/// The live part of a target's status: its secrets (ids and expiry) and, while an overlap
/// is open, `rotation`.
pub async fn live_status(
    state: &AppState,
    tenant: &str,
    name: &str,
) -> Result<serde_json::Value, crate::store::StoreError> {
    let secrets = state.store.list_signing_secrets(tenant, name).await?;
    let mut status = serde_json::json!({
        "signing_secrets": secrets.iter().map(info).collect::<Vec<_>>(),
    });
    if let Some(ends_at) = overlap_ends_at(&secrets, state.clock.now_ms()) {
        status["rotation"] = serde_json::to_value(RotationStatus {
            open: true,
            ends_at: to_datetime(ends_at),
        })
        .expect("statuses serialize");
    }
    crate::client_certs::add_live_status(state, tenant, name, &mut status).await?;
    Ok(status)
}

async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
) -> Result<Json<SigningSecretList>, ApiError> {
    if state
        .store
        .get_resource(&tenant, ResourceKind::Target, &name)
        .await?
        .is_none()
    {
        return Err(target_missing(&name));
    }
    let items = state.store.list_signing_secrets(&tenant, &name).await?;
    Ok(Json(SigningSecretList {
        items: items.iter().map(info).collect(),
    }))
}

pub struct Rotate {
    pub target: String,
    pub overlap_ms: i64,
    pub force: bool,
}

#[async_trait]
impl Operation for Rotate {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let secret = super::ops::new_signing_secret(ctx.now);
        let outcome = tx
            .rotate_signing_secret(&NewRotation {
                tenant: ctx.tenant,
                target: &self.target,
                secret: &secret,
                now: ctx.now,
                older_expire_at: ctx.now.saturating_add(self.overlap_ms),
                force: self.force,
                limit: MAX_SIGNING_SECRETS,
            })
            .await?;
        let previous = match outcome {
            Rotation::Rotated { previous } => previous,
            Rotation::TargetMissing => return Err(target_missing(&self.target)),
            Rotation::InProgress { ends_at } => {
                return Err(ApiError::RotationInProgress {
                    target: self.target.clone(),
                    ends_at: to_datetime(ends_at)
                        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                });
            }
            Rotation::LimitReached => {
                return Err(ApiError::SecretLimitReached {
                    target: self.target.clone(),
                    limit: MAX_SIGNING_SECRETS,
                });
            }
        };
        let body = RotateSecretResponse {
            secret: NewSigningSecret {
                id: secret.id.clone(),
                value: secret.secret.clone(),
                created_at: to_datetime(secret.created_at),
            },
            previous: previous
                .iter()
                .map(|p| ExpiringSecret {
                    id: p.id.clone(),
                    expires_at: to_datetime(p.expires_at.unwrap_or(ctx.now)),
                })
                .collect(),
        };
        Ok(StoredResponse::json(201, &body))
    }
}

pub struct Expire {
    pub target: String,
    pub id: String,
}

#[async_trait]
impl Operation for Expire {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        match tx
            .expire_signing_secret(ctx.tenant, &self.target, &self.id, ctx.now)
            .await?
        {
            Expiry::Expired { secret, items } => Ok(StoredResponse::json(
                200,
                &ExpireSecretResponse {
                    secret: info(&secret),
                    items: items.iter().map(info).collect(),
                },
            )),
            Expiry::TargetMissing => Err(target_missing(&self.target)),
            Expiry::SecretMissing => Err(ApiError::NotFound {
                kind: "signing secret",
                name: self.id.clone(),
            }),
            Expiry::AlreadyExpired => Err(ApiError::SecretExpired {
                id: self.id.clone(),
            }),
            Expiry::LastSecret => Err(ApiError::LastSecret {
                target: self.target.clone(),
                id: self.id.clone(),
            }),
        }
    }
}

async fn rotate(
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
        let request: RotateSecretRequest = parse(&body)?;
        let overlap_s = request.overlap().map_err(ApiError::Validation)?;
        Ok::<_, ApiError>((
            body,
            Rotate {
                target: name,
                overlap_ms: overlap_s * 1000,
                force: request.force.unwrap_or(false),
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

async fn expire(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path((name, id)): Path<(String, String)>,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = precheck_key(&headers, &state) {
        return e.into_response();
    }
    let op = Expire { target: name, id };
    keyed(&state, &tenant, Method::POST, &uri, &headers, None, op).await
}
