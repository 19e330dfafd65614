//! SQL of signing secrets. A rotation or an expiry first locks the target's resource row
//! ([`dialect::FOR_UPDATE`]; on SQLite the single writer's lock is held already): under
//! PostgreSQL's READ COMMITTED a second one waits there, and every later
//! statement of it reads a fresh snapshot that holds what the first committed — so it sees
//! the first one's open overlap (409) instead of racing it, and two expiries never both see
//! the other's secret as the one that stays valid. The writes after the lock are guarded
//! all the same.

use async_trait::async_trait;

use super::{Backend, BackendTx, Conn};
use crate::sealing::{Sealer, secret_aad};
use crate::store::{
    Expiry, NewRotation, Rotation, SecretMeta, SecretStore, SecretTx, SigningKey, SigningSecretRow,
    StoreError, sealed_error,
};

/// Opens `(id, sealed value, expires_at)` rows of one target.
fn open_keys(
    sealer: &Sealer,
    tenant: &str,
    target: &str,
    rows: Vec<(String, String, Option<i64>)>,
) -> Result<Vec<SigningKey>, StoreError> {
    rows.into_iter()
        .map(|(id, sealed, expires_at)| {
            let value = sealer
                .open_text(&sealed, &secret_aad(tenant, target, &id))
                .map_err(sealed_error)?;
            Ok(SigningKey {
                id,
                value,
                expires_at,
            })
        })
        .collect()
}

pub(in crate::store) async fn active(
    conn: &mut Conn,
    sealer: &Sealer,
    tenant: &str,
    target: &str,
    now: i64,
) -> Result<Vec<SigningKey>, StoreError> {
    let rows: Vec<(String, String, Option<i64>)> = sqlx::query_as(
        "SELECT id, secret, expires_at FROM signing_secrets WHERE tenant = $1 AND target = $2 \
         AND (expires_at IS NULL OR expires_at > $3) ORDER BY created_at, id",
    )
    .bind(tenant)
    .bind(target)
    .bind(now)
    .fetch_all(conn)
    .await?;
    open_keys(sealer, tenant, target, rows)
}

async fn list(conn: &mut Conn, tenant: &str, target: &str) -> Result<Vec<SecretMeta>, StoreError> {
    let rows: Vec<(String, i64, Option<i64>)> = sqlx::query_as(
        "SELECT id, created_at, expires_at FROM signing_secrets WHERE tenant = $1 AND target = $2 \
         ORDER BY created_at, id",
    )
    .bind(tenant)
    .bind(target)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, created_at, expires_at)| SecretMeta {
            id,
            created_at,
            expires_at,
        })
        .collect())
}

#[async_trait]
impl SecretStore for Backend {
    async fn active_secrets(
        &self,
        tenant: &str,
        target: &str,
        now: i64,
    ) -> Result<Vec<SigningKey>, StoreError> {
        active(&mut *self.read().await?, &self.sealer, tenant, target, now).await
    }

    async fn list_signing_secrets(
        &self,
        tenant: &str,
        target: &str,
    ) -> Result<Vec<SecretMeta>, StoreError> {
        list(&mut *self.read().await?, tenant, target).await
    }

    async fn signing_secret(
        &self,
        tenant: &str,
        target: &str,
        id: &str,
    ) -> Result<Option<SigningKey>, StoreError> {
        let rows: Vec<(String, String, Option<i64>)> = sqlx::query_as(
            "SELECT id, secret, expires_at FROM signing_secrets \
             WHERE tenant = $1 AND target = $2 AND id = $3",
        )
        .bind(tenant)
        .bind(target)
        .bind(id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(open_keys(&self.sealer, tenant, target, rows)?.pop())
    }
}

#[async_trait]
impl SecretTx for BackendTx {
    async fn insert_signing_secret(
        &mut self,
        tenant: &str,
        target: &str,
        secret: &SigningSecretRow,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO signing_secrets (tenant, target, id, secret, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(tenant)
        .bind(target)
        .bind(&secret.id)
        .bind(self.sealer.seal(
            secret.secret.as_bytes(),
            &secret_aad(tenant, target, &secret.id),
        ))
        .bind(secret.created_at)
        .bind(secret.expires_at)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }

    async fn delete_signing_secrets(
        &mut self,
        tenant: &str,
        target: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM signing_secrets WHERE tenant = $1 AND target = $2")
            .bind(tenant)
            .bind(target)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }

    async fn rotate_signing_secret(&mut self, r: &NewRotation<'_>) -> Result<Rotation, StoreError> {
        let conn = &mut *self.tx;
        if !super::resources::lock_target(conn, r.tenant, r.target).await? {
            return Ok(Rotation::TargetMissing);
        }
        sqlx::query(
            "DELETE FROM signing_secrets WHERE tenant = $1 AND target = $2 AND expires_at <= $3",
        )
        .bind(r.tenant)
        .bind(r.target)
        .bind(r.now)
        .execute(&mut *conn)
        .await?;
        let mut previous = Vec::new();
        if r.force {
            previous = expire_older(conn, r).await?;
        }
        // The new secret goes in only while no overlap is open and the cap has room.
        let inserted = sqlx::query(
            "INSERT INTO signing_secrets (tenant, target, id, secret, created_at, expires_at) \
             SELECT $1, $2, $3, $4, $5, NULL \
             WHERE NOT EXISTS (SELECT 1 FROM signing_secrets \
                               WHERE tenant = $6 AND target = $7 AND expires_at > $8) \
               AND (SELECT count(*) FROM signing_secrets WHERE tenant = $9 AND target = $10 \
                    AND (expires_at IS NULL OR expires_at > $11)) < $12",
        )
        .bind(r.tenant)
        .bind(r.target)
        .bind(&r.secret.id)
        .bind(self.sealer.seal(
            r.secret.secret.as_bytes(),
            &secret_aad(r.tenant, r.target, &r.secret.id),
        ))
        .bind(r.secret.created_at)
        .bind(r.tenant)
        .bind(r.target)
        .bind(r.now)
        .bind(r.tenant)
        .bind(r.target)
        .bind(r.now)
        .bind(i64::try_from(r.limit).unwrap_or(i64::MAX))
        .execute(&mut *conn)
        .await?
        .rows_affected();
        if inserted == 0 {
            let ends_at: Option<i64> = sqlx::query_scalar(
                "SELECT max(expires_at) FROM signing_secrets \
                 WHERE tenant = $1 AND target = $2 AND expires_at > $3",
            )
            .bind(r.tenant)
            .bind(r.target)
            .bind(r.now)
            .fetch_one(&mut *conn)
            .await?;
            return Ok(match ends_at {
                Some(ends_at) => Rotation::InProgress { ends_at },
                None => Rotation::LimitReached,
            });
        }
        if !r.force {
            previous = expire_older(conn, r).await?;
        }
        Ok(Rotation::Rotated { previous })
    }

    async fn expire_signing_secret(
        &mut self,
        tenant: &str,
        target: &str,
        id: &str,
        now: i64,
    ) -> Result<Expiry, StoreError> {
        let conn = &mut *self.tx;
        if !super::resources::lock_target(conn, tenant, target).await? {
            return Ok(Expiry::TargetMissing);
        }
        let Some((created_at, expires_at)) = sqlx::query_as::<_, (i64, Option<i64>)>(
            "SELECT created_at, expires_at FROM signing_secrets \
             WHERE tenant = $1 AND target = $2 AND id = $3",
        )
        .bind(tenant)
        .bind(target)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        else {
            return Ok(Expiry::SecretMissing);
        };
        if expires_at.is_some_and(|at| at <= now) {
            return Ok(Expiry::AlreadyExpired);
        }
        // Expired only while another secret stays valid.
        let expired = sqlx::query(
            "UPDATE signing_secrets SET expires_at = $1 \
             WHERE tenant = $2 AND target = $3 AND id = $4 \
               AND (expires_at IS NULL OR expires_at > $5) \
               AND EXISTS (SELECT 1 FROM signing_secrets o WHERE o.tenant = $6 AND o.target = $7 \
                           AND o.id <> $8 AND (o.expires_at IS NULL OR o.expires_at > $9))",
        )
        .bind(now)
        .bind(tenant)
        .bind(target)
        .bind(id)
        .bind(now)
        .bind(tenant)
        .bind(target)
        .bind(id)
        .bind(now)
        .execute(&mut *conn)
        .await?
        .rows_affected();
        if expired == 0 {
            return Ok(Expiry::LastSecret);
        }
        // Rolled back to secrets that were all due to expire: they stay.
        let lasting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM signing_secrets \
             WHERE tenant = $1 AND target = $2 AND expires_at IS NULL",
        )
        .bind(tenant)
        .bind(target)
        .fetch_one(&mut *conn)
        .await?;
        if lasting == 0 {
            sqlx::query(
                "UPDATE signing_secrets SET expires_at = NULL \
                 WHERE tenant = $1 AND target = $2 AND expires_at > $3",
            )
            .bind(tenant)
            .bind(target)
            .bind(now)
            .execute(&mut *conn)
            .await?;
        }
        Ok(Expiry::Expired {
            secret: SecretMeta {
                id: id.to_owned(),
                created_at,
                expires_at: Some(now),
            },
            items: list(conn, tenant, target).await?,
        })
    }
}

/// Gives every valid secret of the target other than the new one the rotation's expiry for
/// older secrets. Forced, this runs before the insert (the overlap it ends must not block
/// it); otherwise after, when no valid secret has an expiry (no overlap was open).
async fn expire_older(conn: &mut Conn, r: &NewRotation<'_>) -> Result<Vec<SecretMeta>, StoreError> {
    let mut rows: Vec<SecretMeta> = sqlx::query_as::<_, (String, i64, Option<i64>)>(
        "UPDATE signing_secrets SET expires_at = $1 \
         WHERE tenant = $2 AND target = $3 AND id <> $4 AND (expires_at IS NULL OR expires_at > $5) \
         RETURNING id, created_at, expires_at",
    )
    .bind(r.older_expire_at)
    .bind(r.tenant)
    .bind(r.target)
    .bind(&r.secret.id)
    .bind(r.now)
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(|(id, created_at, expires_at)| SecretMeta {
        id,
        created_at,
        expires_at,
    })
    .collect();
    rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(rows)
}
