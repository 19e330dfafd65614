//! SQL of client certificates. An activation first locks the target's resource row
//! (`resources::lock_target`), so two activations of one target run one after the other; the writes after
//! the lock are guarded all the same, and the unique partial index allows one active row.

use async_trait::async_trait;

use super::{Backend, BackendTx, Conn};
use crate::sealing::{Sealer, client_key_aad};
use crate::store::client_certs::{META_COLUMNS, MetaShaTuple, MetaTuple, meta};
use crate::store::{
    Activation, CertMeta, ClientCertRow, ClientCertStore, ClientCertTx, ClientIdentity, StoreError,
    Upload, sealed_error,
};

type IdentityTuple = (String, String, String, String, i64);

fn open_identity(
    sealer: &Sealer,
    tenant: &str,
    target: &str,
    row: Option<IdentityTuple>,
) -> Result<Option<ClientIdentity>, StoreError> {
    row.map(|(id, fingerprint, certificate_pem, sealed, not_after)| {
        let private_key_pem = sealer
            .open_text(&sealed, &client_key_aad(tenant, target, &id))
            .map_err(sealed_error)?;
        Ok(ClientIdentity {
            id,
            fingerprint,
            certificate_pem,
            private_key_pem,
            not_after,
        })
    })
    .transpose()
}

async fn list(conn: &mut Conn, tenant: &str, target: &str) -> Result<Vec<CertMeta>, StoreError> {
    let rows: Vec<MetaTuple> = sqlx::query_as(&format!(
        "SELECT {META_COLUMNS} FROM client_certificates WHERE tenant = $1 AND target = $2 \
         ORDER BY created_at, id"
    ))
    .bind(tenant)
    .bind(target)
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(meta).collect()
}

async fn one(
    conn: &mut Conn,
    tenant: &str,
    target: &str,
    id: &str,
) -> Result<Option<(CertMeta, Vec<u8>)>, StoreError> {
    let row: Option<MetaShaTuple> = sqlx::query_as(&format!(
        "SELECT {META_COLUMNS}, request_sha256 FROM client_certificates \
             WHERE tenant = $1 AND target = $2 AND id = $3"
    ))
    .bind(tenant)
    .bind(target)
    .bind(id)
    .fetch_optional(conn)
    .await?;
    row.map(|(a, b, c, d, e, f, sha)| Ok((meta((a, b, c, d, e, f))?, sha)))
        .transpose()
}

#[async_trait]
impl ClientCertStore for Backend {
    async fn list_client_certificates(
        &self,
        tenant: &str,
        target: &str,
    ) -> Result<Vec<CertMeta>, StoreError> {
        list(&mut *self.read().await?, tenant, target).await
    }

    async fn client_identity(
        &self,
        tenant: &str,
        target: &str,
        id: &str,
    ) -> Result<Option<ClientIdentity>, StoreError> {
        let row: Option<IdentityTuple> = sqlx::query_as(
            "SELECT id, fingerprint, certificate_pem, private_key, not_after \
             FROM client_certificates WHERE tenant = $1 AND target = $2 AND id = $3",
        )
        .bind(tenant)
        .bind(target)
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        open_identity(&self.sealer, tenant, target, row)
    }

    async fn active_client_identity(
        &self,
        tenant: &str,
        target: &str,
    ) -> Result<Option<ClientIdentity>, StoreError> {
        let row: Option<IdentityTuple> = sqlx::query_as(
            "SELECT id, fingerprint, certificate_pem, private_key, not_after \
             FROM client_certificates WHERE tenant = $1 AND target = $2 AND state = 'active'",
        )
        .bind(tenant)
        .bind(target)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        open_identity(&self.sealer, tenant, target, row)
    }

    async fn upload_client_certificate(
        &self,
        tenant: &str,
        target: &str,
        row: &ClientCertRow,
    ) -> Result<Upload, StoreError> {
        let mut tx = self.write().await?;
        let inserted = sqlx::query(
            "INSERT INTO client_certificates (tenant, target, id, certificate_pem, private_key, \
             request_sha256, fingerprint, subject, not_after, state, created_at, updated_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, 'staged', $10, $11 \
             WHERE EXISTS (SELECT 1 FROM resources WHERE tenant = $12 AND kind = 'target' AND name = $13) \
             ON CONFLICT (tenant, target, id) DO NOTHING",
        )
        .bind(tenant)
        .bind(target)
        .bind(&row.id)
        .bind(&row.certificate_pem)
        .bind(self.sealer.seal(
            row.private_key_pem.as_bytes(),
            &client_key_aad(tenant, target, &row.id),
        ))
        .bind(&row.request_sha256)
        .bind(&row.fingerprint)
        .bind(&row.subject)
        .bind(row.not_after)
        .bind(row.created_at)
        .bind(row.created_at)
        .bind(tenant)
        .bind(target)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let found = one(&mut tx, tenant, target, &row.id).await?;
        let outcome = match found {
            Some((meta, _)) if inserted == 1 => Upload::Created(meta),
            Some((meta, sha)) => Upload::Exists {
                meta,
                same: sha == row.request_sha256,
            },
            None => Upload::TargetMissing,
        };
        tx.commit().await?;
        Ok(outcome)
    }
}

#[async_trait]
impl ClientCertTx for BackendTx {
    async fn activate_client_certificate(
        &mut self,
        tenant: &str,
        target: &str,
        id: &str,
        now: i64,
    ) -> Result<Activation, StoreError> {
        let conn = &mut *self.tx;
        if !super::resources::lock_target(conn, tenant, target).await? {
            return Ok(Activation::TargetMissing);
        }
        let Some((found, _)) = one(conn, tenant, target, id).await? else {
            return Ok(Activation::CertificateMissing);
        };
        if found.not_after <= now {
            return Ok(Activation::Expired);
        }
        let previous: Option<String> = sqlx::query_scalar(
            "UPDATE client_certificates SET state = 'retired', updated_at = $1 \
             WHERE tenant = $2 AND target = $3 AND state = 'active' AND id <> $4 RETURNING id",
        )
        .bind(now)
        .bind(tenant)
        .bind(target)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
        let activated = sqlx::query(
            "UPDATE client_certificates SET state = 'active', updated_at = $1 \
             WHERE tenant = $2 AND target = $3 AND id = $4 AND not_after > $5",
        )
        .bind(now)
        .bind(tenant)
        .bind(target)
        .bind(id)
        .bind(now)
        .execute(&mut *conn)
        .await?
        .rows_affected();
        if activated == 0 {
            return Ok(Activation::Expired);
        }
        let items = list(conn, tenant, target).await?;
        let certificate = items
            .iter()
            .find(|c| c.id == id)
            .cloned()
            .ok_or_else(|| crate::store::corrupt("an activated certificate vanished"))?;
        Ok(Activation::Activated {
            certificate,
            previous,
            items,
        })
    }

    async fn delete_client_certificates(
        &mut self,
        tenant: &str,
        target: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM client_certificates WHERE tenant = $1 AND target = $2")
            .bind(tenant)
            .bind(target)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }
}
