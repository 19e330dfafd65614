//! `POST /v1/targets/{name}/test`: one signed test webhook to a target — the control plane's
//! external-effect operation (seed rule 6). The claim commits before the call; the call
//! carries a `webhook-id` derived from the Idempotency-Key, so a retry after a crash or a
//! lease takeover repeats the same message rather than a new one; the result is stored
//! and replayed like any other response.

use async_trait::async_trait;
use serde_json::{Value, json};
use switchyard_protocol::{ResourceKind, TargetSpec, TargetTestResult};

use crate::AppState;
use crate::clock::to_datetime;
use crate::delivery::{http, signing};
use crate::error::ApiError;
use crate::idempotency::{Effect, OpContext, Operation};
use crate::store::{SigningKey, StoreTx, StoredResponse};

/// The `type` of a test webhook when the request names none.
pub const DEFAULT_TEST_EVENT_TYPE: &str = "switchyard.test";

pub struct TestTarget {
    pub name: String,
    /// Sign with this secret only (a rotation's verify step); every valid one otherwise.
    pub secret_id: Option<String>,
    /// Present this client certificate (a rotation's verify step); the active one otherwise.
    pub client_certificate_id: Option<String>,
    pub event_type: String,
    pub payload: Value,
}

impl TestTarget {
    /// The secrets to sign with: the target's active ones, or only the one `secret_id` names
    /// (a rotation's verify step), which must still be valid.
    async fn signing_secrets(
        &self,
        state: &AppState,
        ctx: &OpContext<'_>,
    ) -> Result<Vec<SigningKey>, ApiError> {
        Ok(match &self.secret_id {
            None => {
                state
                    .store
                    .active_secrets(ctx.tenant, &self.name, ctx.now)
                    .await?
            }
            Some(id) => {
                let key = state
                    .store
                    .signing_secret(ctx.tenant, &self.name, id)
                    .await?
                    .ok_or_else(|| ApiError::NotFound {
                        kind: "signing secret",
                        name: id.clone(),
                    })?;
                if !key.valid_at(ctx.now) {
                    return Err(ApiError::SecretExpired { id: id.clone() });
                }
                vec![key]
            }
        })
    }
}

#[async_trait]
impl Operation for TestTarget {
    fn effect(&self) -> Effect {
        Effect::External
    }

    async fn call_external(
        &self,
        state: &AppState,
        ctx: &OpContext<'_>,
        downstream_key: &str,
    ) -> Result<Value, ApiError> {
        let not_found = || ApiError::NotFound {
            kind: ResourceKind::Target.as_str(),
            name: self.name.clone(),
        };
        let row = state
            .store
            .get_resource(ctx.tenant, ResourceKind::Target, &self.name)
            .await?
            .ok_or_else(not_found)?;
        let spec: TargetSpec = serde_json::from_value(row.spec)
            .map_err(|e| ApiError::Internal(format!("stored target spec: {e}")))?;
        let secrets = self.signing_secrets(state, ctx).await?;
        let secrets: Vec<&str> = secrets.iter().map(|k| k.value.as_str()).collect();
        let identity = crate::client_certs::test_identity(
            state,
            ctx.tenant,
            &self.name,
            self.client_certificate_id.as_deref(),
            ctx.now,
        )
        .await?;

        let body = json!({
            "id": downstream_key,
            "type": self.event_type,
            "target": self.name,
            "timestamp": to_datetime(ctx.now).to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "data": self.payload,
        })
        .to_string();
        let mut headers = signing::webhook_headers(
            Some(&spec.headers),
            downstream_key,
            ctx.now,
            &secrets,
            body.as_bytes(),
        );
        headers.push(("switchyard-test".into(), "true".into()));

        let timeout = std::time::Duration::from_millis(u64::from(spec.timeout_ms));
        let outcome = http::send_as(
            &state.delivery.http,
            identity.as_ref(),
            &spec.url,
            timeout,
            &headers,
            body,
        )
        .await;
        // Only a TLS handshake presents a certificate; one that completed got an answer.
        let presented = identity.is_some()
            && spec
                .url
                .get(..8)
                .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
            && outcome.status_code.is_some();
        let result = TargetTestResult {
            target: self.name.clone(),
            webhook_id: downstream_key.to_owned(),
            ok: outcome.succeeded(),
            status_code: outcome.status_code,
            error_class: outcome.error_class,
            error: outcome.error,
            duration_ms: outcome.duration_ms,
            tested_at: to_datetime(ctx.now),
            client_certificate_presented: presented,
        };
        serde_json::to_value(result).map_err(|e| ApiError::Internal(e.to_string()))
    }

    async fn execute(
        &self,
        _tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let result = ctx
            .external
            .as_ref()
            .ok_or_else(|| ApiError::Internal("target test ran without its call".into()))?;
        Ok(StoredResponse {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(result).expect("JSON values serialize"),
        })
    }
}
