//! The mutating operations on endpoints, targets and flows. Each runs inside the
//! idempotency pipeline's transaction; checks come before writes, so an error leaves nothing.

use async_trait::async_trait;
use base64::Engine;
use rand::RngCore;
use serde_json::{Value, json};
use switchyard_protocol::{ResourceKind, SigningSecretInfo, merge_patch};

use super::render::{no_content, resource_response};
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::{IfMatch, check_precondition};
use crate::idempotency::{OpContext, Operation};
use crate::store::{ResourceRow, SigningSecretRow, StoreTx, StoredResponse};

/// How many dependants an `in_use` error lists.
const USED_BY_LIMIT: u32 = 20;

pub struct Create {
    pub kind: ResourceKind,
    pub name: String,
    /// Already validated and canonical.
    pub spec: Value,
}

pub struct Update {
    pub kind: ResourceKind,
    pub name: String,
    pub patch: Value,
    pub if_match: Option<(IfMatch, String)>,
}

pub struct Apply {
    pub kind: ResourceKind,
    pub name: String,
    /// Already validated and canonical.
    pub spec: Value,
    pub if_match: Option<(IfMatch, String)>,
}

pub struct Delete {
    pub kind: ResourceKind,
    pub name: String,
    pub if_match: Option<(IfMatch, String)>,
}

pub struct SetEnabled {
    pub name: String,
    pub enabled: bool,
    pub if_match: Option<(IfMatch, String)>,
}

async fn current(
    tx: &mut dyn StoreTx,
    tenant: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<ResourceRow, ApiError> {
    tx.get_resource(tenant, kind, name)
        .await?
        .ok_or_else(|| ApiError::NotFound {
            kind: kind.as_str(),
            name: name.to_owned(),
        })
}

/// Whether a retirement holds the resource (`crate::retirement::advance::MARK`).
fn retiring(row: &ResourceRow) -> bool {
    row.status
        .get(crate::retirement::advance::MARK)
        .is_some_and(Value::is_string)
}

/// A flow may only name an endpoint and a target that exist and are not being retired (the
/// read locks the row on a backend with several writers, so a retirement's mark and this
/// check are ordered).
async fn check_references(
    tx: &mut dyn StoreTx,
    tenant: &str,
    kind: ResourceKind,
    spec: &Value,
) -> Result<(), ApiError> {
    if kind != ResourceKind::Flow {
        return Ok(());
    }
    for (field, ref_kind) in [
        ("spec.endpoint", ResourceKind::Endpoint),
        ("spec.target", ResourceKind::Target),
    ] {
        let name = spec[&field[5..]].as_str().unwrap_or_default();
        match tx.get_resource(tenant, ref_kind, name).await? {
            None => {
                return Err(ApiError::ReferenceMissing {
                    field,
                    kind: ref_kind.as_str(),
                    name: name.to_owned(),
                });
            }
            Some(row) if retiring(&row) => {
                return Err(ApiError::ResourceRetiring {
                    kind: ref_kind.as_str(),
                    name: name.to_owned(),
                });
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn initial_status(kind: ResourceKind) -> Value {
    match kind {
        ResourceKind::Endpoint => json!({"enabled": true, "pending_deliveries": 0}),
        ResourceKind::Target => json!({"signing_secrets": []}),
        ResourceKind::Flow => json!({}),
    }
}

/// Creates the resource row (and a target's first signing secret); returns the value of the
/// new secret to show once.
async fn insert_new(
    tx: &mut dyn StoreTx,
    ctx: &OpContext<'_>,
    kind: ResourceKind,
    name: &str,
    spec: Value,
) -> Result<(ResourceRow, Option<Value>), ApiError> {
    check_references(tx, ctx.tenant, kind, &spec).await?;
    let mut row = ResourceRow {
        kind,
        name: name.to_owned(),
        version: 1,
        spec,
        status: initial_status(kind),
        created_at: ctx.now,
        updated_at: ctx.now,
    };
    let mut shown_once = None;
    if kind == ResourceKind::Target {
        let secret = new_signing_secret(ctx.now);
        let info = SigningSecretInfo {
            id: secret.id.clone(),
            created_at: to_datetime(secret.created_at),
            expires_at: None,
        };
        row.status = json!({ "signing_secrets": [info] });
        shown_once = Some(json!({ "signing_secret": secret.secret }));
        if !tx.insert_resource(ctx.tenant, &row).await? {
            return Err(ApiError::NameTaken {
                kind: kind.as_str(),
                name: name.to_owned(),
            });
        }
        tx.insert_signing_secret(ctx.tenant, name, &secret).await?;
    } else if !tx.insert_resource(ctx.tenant, &row).await? {
        return Err(ApiError::NameTaken {
            kind: kind.as_str(),
            name: name.to_owned(),
        });
    }
    Ok((row, shown_once))
}

pub(crate) fn new_signing_secret(now: i64) -> SigningSecretRow {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let mut id = [0u8; 8];
    rand::rng().fill_bytes(&mut id);
    SigningSecretRow {
        id: format!("sec_{}", hex::encode(id)),
        secret: format!(
            "whsec_{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ),
        created_at: now,
        expires_at: None,
    }
}

/// Writes `spec` as the next version of `row` unless it is unchanged.
async fn replace_spec(
    tx: &mut dyn StoreTx,
    ctx: &OpContext<'_>,
    row: ResourceRow,
    spec: Value,
) -> Result<ResourceRow, ApiError> {
    if spec == row.spec {
        return Ok(row);
    }
    check_references(tx, ctx.tenant, row.kind, &spec).await?;
    let next = ResourceRow {
        version: row.version + 1,
        spec,
        updated_at: ctx.now,
        ..row.clone()
    };
    if !tx.update_resource(ctx.tenant, &next, row.version).await? {
        return Err(ApiError::Internal(
            "resource changed inside its own write transaction".into(),
        ));
    }
    Ok(next)
}

#[async_trait]
impl Operation for Create {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let (row, shown_once) =
            insert_new(tx, ctx, self.kind, &self.name, self.spec.clone()).await?;
        Ok(resource_response(201, &row, shown_once))
    }
}

#[async_trait]
impl Operation for Update {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let row = current(tx, ctx.tenant, self.kind, &self.name).await?;
        check_precondition(self.if_match.as_ref(), Some(row.version))?;
        let mut merged = row.spec.clone();
        merge_patch::apply(&mut merged, &self.patch);
        let spec = self
            .kind
            .validate_spec(&merged)
            .map_err(ApiError::Validation)?;
        let row = replace_spec(tx, ctx, row, spec).await?;
        Ok(resource_response(200, &row, None))
    }
}

#[async_trait]
impl Operation for Apply {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let row = match tx.get_resource(ctx.tenant, self.kind, &self.name).await? {
            Some(row) => row,
            None => {
                check_precondition(self.if_match.as_ref(), None)?;
                match insert_new(tx, ctx, self.kind, &self.name, self.spec.clone()).await {
                    Ok((row, shown_once)) => return Ok(resource_response(201, &row, shown_once)),
                    // Created meanwhile by a concurrent request (on a backend with several
                    // writers, the insert waited for it): apply over it.
                    Err(ApiError::NameTaken { .. }) => {
                        current(tx, ctx.tenant, self.kind, &self.name).await?
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        check_precondition(self.if_match.as_ref(), Some(row.version))?;
        let row = replace_spec(tx, ctx, row, self.spec.clone()).await?;
        Ok(resource_response(200, &row, None))
    }
}

#[async_trait]
impl Operation for Delete {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let row = current(tx, ctx.tenant, self.kind, &self.name).await?;
        check_precondition(self.if_match.as_ref(), Some(row.version))?;
        let used_by = tx
            .flows_referencing(ctx.tenant, self.kind, &self.name, USED_BY_LIMIT)
            .await?;
        if !used_by.is_empty() {
            let used_by = used_by.into_iter().map(|f| format!("flow/{f}")).collect();
            return Err(ApiError::InUse {
                kind: self.kind.as_str(),
                name: self.name.clone(),
                used_by,
            });
        }
        tx.delete_resource(ctx.tenant, self.kind, &self.name)
            .await?;
        if self.kind == ResourceKind::Target {
            tx.delete_signing_secrets(ctx.tenant, &self.name).await?;
            tx.delete_client_certificates(ctx.tenant, &self.name)
                .await?;
        }
        Ok(no_content())
    }
}

#[async_trait]
impl Operation for SetEnabled {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let row = current(tx, ctx.tenant, ResourceKind::Endpoint, &self.name).await?;
        check_precondition(self.if_match.as_ref(), Some(row.version))?;
        if row.status["enabled"].as_bool() == Some(self.enabled) {
            return Ok(resource_response(200, &row, None));
        }
        // A retirement's drain keeps it disabled; cancelling the retirement enables it.
        if self.enabled && retiring(&row) {
            return Err(ApiError::ResourceRetiring {
                kind: ResourceKind::Endpoint.as_str(),
                name: self.name.clone(),
            });
        }
        let mut next = ResourceRow {
            version: row.version + 1,
            updated_at: ctx.now,
            ..row.clone()
        };
        next.status["enabled"] = Value::Bool(self.enabled);
        if !tx.update_resource(ctx.tenant, &next, row.version).await? {
            return Err(ApiError::Internal(
                "resource changed inside its own write transaction".into(),
            ));
        }
        Ok(resource_response(200, &next, None))
    }
}
