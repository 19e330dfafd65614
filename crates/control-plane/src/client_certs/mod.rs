//! `/v1/targets/{name}/client-certificates…`: the client certificates (mTLS) a target's
//! deliveries present.
//!
//! - `PUT …/{id}` uploads one, `staged`. The id is chosen by the client and makes the upload
//!   idempotent, as `PUT /v1/retirements/{id}` is: the same certificate and key again answer
//!   200 with what is stored, another under the id 422 `certificate_reused`. It is checked
//!   first (`validate`): a 400 `validation_failed` names the field that is wrong.
//! - `GET` lists them (never a key); `POST …/{id}/activate` (keyed) makes one the target's
//!   active certificate and retires the one it replaces, or re-activates a retired one (roll
//!   back) until it expires (409 `certificate_expired`).
//!
//! The private key is sealed at rest (src/sealing.rs, `client_key_aad`) and leaves the store
//! only as the TLS identity of `crate::delivery::http`; no response, stored response or log
//! line carries it.

pub mod validate;

use async_trait::async_trait;
use axum::Json;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use switchyard_protocol::client_certs::is_certificate_id;
use switchyard_protocol::{
    ActivateCertificateResponse, CertificateExpiry, CertificateState, ClientCertificateInfo,
    ClientCertificateList, ResourceKind, UploadCertificateRequest,
};

use crate::AppState;
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::idempotency::{OpContext, Operation};
use crate::store::{
    Activation, CertMeta, ClientCertRow, StoreError, StoreTx, StoredResponse, Upload,
};

pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    use crate::openapi::{client_certs as doc, route};
    use utoipa::openapi::path::HttpMethod::{Get, Post, Put};
    utoipa_axum::router::OpenApiRouter::new()
        .routes(route(
            "/v1/targets/{name}/client-certificates",
            Get,
            list,
            doc::list(),
        ))
        .routes(route(
            "/v1/targets/{name}/client-certificates/{id}",
            Put,
            upload,
            doc::upload(),
        ))
        .routes(route(
            "/v1/targets/{name}/client-certificates/{id}/activate",
            Post,
            activate,
            doc::activate(),
        ))
}

pub fn info(meta: &CertMeta) -> ClientCertificateInfo {
    ClientCertificateInfo {
        id: meta.id.clone(),
        fingerprint_sha256: meta.fingerprint.clone(),
        subject: meta.subject.clone(),
        not_after: to_datetime(meta.not_after),
        state: meta.state,
        created_at: to_datetime(meta.created_at),
    }
}

fn target_missing(name: &str) -> ApiError {
    ApiError::NotFound {
        kind: ResourceKind::Target.as_str(),
        name: name.to_owned(),
    }
}

fn certificate_missing(id: &str) -> ApiError {
    ApiError::NotFound {
        kind: "client certificate",
        name: id.to_owned(),
    }
}

fn check_id(id: &str) -> Result<(), ApiError> {
    if is_certificate_id(id) {
        Ok(())
    } else {
        Err(ApiError::validation(
            "id",
            "must be 1-128 characters of letters, digits and . _ : -",
        ))
    }
}

/// The target's status fields of its certificates: `client_certificates` (when it has any)
/// and `client_certificate`, the active one's expiry, for the 30/7/1-day warnings.
pub async fn add_live_status(
    state: &AppState,
    tenant: &str,
    name: &str,
    status: &mut serde_json::Value,
) -> Result<(), StoreError> {
    let certs = state.store.list_client_certificates(tenant, name).await?;
    if certs.is_empty() {
        return Ok(());
    }
    let items: Vec<ClientCertificateInfo> = certs.iter().map(info).collect();
    let now = to_datetime(state.clock.now_ms());
    if let Some(active) = items.iter().find(|c| c.state == CertificateState::Active) {
        status["client_certificate"] =
            serde_json::to_value(CertificateExpiry::of(active, now)).expect("statuses serialize");
    }
    status["client_certificates"] = serde_json::to_value(items).expect("statuses serialize");
    Ok(())
}

async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
) -> Result<Json<ClientCertificateList>, ApiError> {
    if state
        .store
        .get_resource(&tenant, ResourceKind::Target, &name)
        .await?
        .is_none()
    {
        return Err(target_missing(&name));
    }
    let items = state.store.list_client_certificates(&tenant, &name).await?;
    Ok(Json(ClientCertificateList {
        items: items.iter().map(info).collect(),
    }))
}

fn stored(status: u16, name: &str, meta: &CertMeta) -> Response {
    StoredResponse {
        status,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            (
                "location".into(),
                format!("/v1/targets/{name}/client-certificates/{}", meta.id),
            ),
        ],
        body: serde_json::to_vec(&info(meta)).expect("certificates serialize"),
    }
    .into_response()
}

async fn upload(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path((name, id)): Path<(String, String)>,
    body: Result<JsonBody, ApiError>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    let JsonBody(body) = body?;
    // serde's message names the missing or unknown field, never a value.
    let request: UploadCertificateRequest =
        serde_json::from_value(body).map_err(|e| ApiError::validation("body", e.to_string()))?;
    let checked = validate::check(&request, state.clock.now_ms()).map_err(ApiError::Validation)?;
    let row = ClientCertRow {
        id: id.clone(),
        certificate_pem: checked.certificate_pem,
        private_key_pem: checked.private_key_pem,
        request_sha256: checked.request_sha256,
        fingerprint: checked.fingerprint,
        subject: checked.subject,
        not_after: checked.not_after,
        created_at: state.clock.now_ms(),
    };
    match state
        .store
        .upload_client_certificate(&tenant, &name, &row)
        .await?
    {
        Upload::Created(meta) => {
            tracing::info!(target_name = %name, certificate = %id, fingerprint = %meta.fingerprint,
                "client certificate staged");
            Ok(stored(201, &name, &meta))
        }
        Upload::Exists { meta, same: true } => Ok(stored(200, &name, &meta)),
        Upload::Exists { same: false, .. } => Err(ApiError::CertificateReused { id }),
        Upload::TargetMissing => Err(target_missing(&name)),
    }
}

pub struct Activate {
    pub target: String,
    pub id: String,
}

#[async_trait]
impl Operation for Activate {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        match tx
            .activate_client_certificate(ctx.tenant, &self.target, &self.id, ctx.now)
            .await?
        {
            Activation::Activated {
                certificate,
                previous,
                items,
            } => Ok(StoredResponse {
                status: 200,
                headers: vec![("content-type".into(), "application/json".into())],
                body: serde_json::to_vec(&ActivateCertificateResponse {
                    certificate: info(&certificate),
                    previous,
                    items: items.iter().map(info).collect(),
                })
                .expect("responses serialize"),
            }),
            Activation::TargetMissing => Err(target_missing(&self.target)),
            Activation::CertificateMissing => Err(certificate_missing(&self.id)),
            Activation::Expired => Err(ApiError::CertificateExpired {
                id: self.id.clone(),
            }),
        }
    }
}

async fn activate(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path((name, id)): Path<(String, String)>,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = crate::resources::precheck_key(&headers, &state) {
        return e.into_response();
    }
    let op = Activate { target: name, id };
    crate::resources::keyed(&state, &tenant, Method::POST, &uri, &headers, None, op).await
}

/// The certificate a target test presents: the one it names (any state, unexpired), or the
/// target's active one.
pub async fn test_identity(
    state: &AppState,
    tenant: &str,
    target: &str,
    id: Option<&str>,
    now: i64,
) -> Result<Option<crate::store::ClientIdentity>, ApiError> {
    let Some(id) = id else {
        return Ok(state.store.active_client_identity(tenant, target).await?);
    };
    let identity = state
        .store
        .client_identity(tenant, target, id)
        .await?
        .ok_or_else(|| certificate_missing(id))?;
    if !identity.valid_at(now) {
        return Err(ApiError::CertificateExpired { id: id.to_owned() });
    }
    Ok(Some(identity))
}
