//! Client certificates (mTLS) of a target (`switchyard targets certs | upload-cert |
//! activate-cert`, docs/rotation.md "Client certificates (mTLS)").
//!
//! - **Upload** is sent directly, not queued: `PUT …/client-certificates/{id}` is idempotent by
//!   the id the person chose (the same certificate and key again answer 200, another 422), so a
//!   resend after a timeout or a lost answer is the same request and stores one certificate.
//!   Queuing it would mean writing the private key into `console.db`; instead the key is read
//!   from its file into memory, sent, and dropped. A failed upload is simply run again (it
//!   re-reads the files). The audit log records the id and fingerprint, never the key.
//! - **Activate** is a keyed write committed to `cert_ops` before it is sent (the `secret_ops`
//!   pattern): a resend uses the same Idempotency-Key, so the control plane activates once; a row
//!   queued longer ago than the server keeps keys needs a person (a blind resend could undo a
//!   later activation).

use std::time::{Duration, Instant};

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchyard_protocol::{ClientCertificateInfo, ClientCertificateList, UploadCertificateRequest};

use crate::Console;
use crate::action::{self, ActionState, SendOne, Step};
use crate::audit::Audit;
use crate::client::SendResult;
use crate::error::{CoreError, Result};
use crate::retry::{AttemptOutcome, classify_status, parse_retry_after};
use crate::types::OpError;

/// One queued activation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CertOp {
    pub id: i64,
    pub profile: String,
    pub target: String,
    /// The certificate it activates.
    pub cert_id: String,
    pub idempotency_key: String,
    pub state: ActionState,
    pub attempts: u32,
    pub last_error: Option<OpError>,
    /// The server's answer once done (`ActivateCertificateResponse`).
    pub result: Option<Value>,
    pub created_at: i64,
}

#[derive(sqlx::FromRow)]
struct CertOpRow {
    id: i64,
    profile: String,
    target: String,
    cert_id: String,
    idempotency_key: String,
    state: ActionState,
    attempts: i64,
    last_error: Option<String>,
    result: Option<String>,
    next_attempt_at: i64,
    created_at: i64,
}

const COLUMNS: &str = "id, profile, target, cert_id, idempotency_key, state, attempts, last_error, \
    result, next_attempt_at, created_at";
const TABLE: action::Table = action::Table {
    name: "cert_ops",
    columns: COLUMNS,
};

impl action::Row for CertOpRow {
    fn profile(&self) -> &str {
        &self.profile
    }
    fn state(&self) -> ActionState {
        self.state
    }
    fn created_at(&self) -> i64 {
        self.created_at
    }
    fn next_attempt_at(&self) -> i64 {
        self.next_attempt_at
    }
}

impl CertOpRow {
    fn op(&self) -> CertOp {
        fn parse<T: serde::de::DeserializeOwned>(t: &Option<String>) -> Option<T> {
            t.as_deref().and_then(|s| serde_json::from_str(s).ok())
        }
        CertOp {
            id: self.id,
            profile: self.profile.clone(),
            target: self.target.clone(),
            cert_id: self.cert_id.clone(),
            idempotency_key: self.idempotency_key.clone(),
            state: self.state,
            attempts: self.attempts as u32,
            last_error: parse(&self.last_error),
            result: parse(&self.result),
            created_at: self.created_at,
        }
    }
}

/// How an upload ended.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CertUploaded {
    /// `true`: stored now (201); `false`: the same certificate was already stored under the id
    /// (200, a resend).
    pub created: bool,
    pub certificate: ClientCertificateInfo,
}

impl Console {
    /// The target's client certificates, live from the control plane (never a key).
    pub async fn client_certificates(
        &self,
        profile: &str,
        target: &str,
    ) -> Result<Vec<ClientCertificateInfo>> {
        let list: ClientCertificateList = self
            .client(profile)
            .await?
            .get_json(&format!("/v1/targets/{target}/client-certificates"))
            .await?
            .ok_or_else(|| CoreError::not_found(format!("target {target:?} on {profile:?}")))?;
        Ok(list.items)
    }

    /// Uploads a certificate chain and its key under `id`, sent at once and resent as it is
    /// after a transport failure or a transient answer until `deadline`. The request lives in
    /// memory only: nothing of it is written to `console.db` but the audit entry (id and
    /// fingerprint).
    pub async fn upload_client_certificate(
        &self,
        profile: &str,
        target: &str,
        id: &str,
        request: &UploadCertificateRequest,
        deadline: Duration,
    ) -> Result<CertUploaded> {
        let started = Instant::now();
        let client = self.client(profile).await?;
        let path = format!("/v1/targets/{target}/client-certificates/{id}");
        let body = serde_json::to_value(request).expect("requests serialize");
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let now = self.now();
            let (message, wait_ms) = match client.send_to(Method::PUT, &path, &body, None).await {
                SendResult::Transport(message) => (message, None),
                SendResult::Answered(answer) => {
                    let code = answer
                        .body
                        .as_ref()
                        .and_then(|b| b.get("code"))
                        .and_then(Value::as_str);
                    let retry_after = answer
                        .retry_after
                        .as_deref()
                        .and_then(|v| parse_retry_after(v, now));
                    match classify_status(answer.status, code, retry_after) {
                        AttemptOutcome::Success => {
                            let certificate: ClientCertificateInfo = answer
                                .body
                                .and_then(|b| serde_json::from_value(b).ok())
                                .ok_or_else(|| CoreError::Server {
                                    status: answer.status,
                                    message: "the upload's answer is unreadable".into(),
                                    problem: None,
                                })?;
                            let uploaded = CertUploaded {
                                created: answer.status == 201,
                                certificate,
                            };
                            self.audit_upload(profile, target, &uploaded).await?;
                            return Ok(uploaded);
                        }
                        AttemptOutcome::Unauthorized => {
                            return Err(CoreError::Unauthorized {
                                profile: profile.to_owned(),
                            });
                        }
                        AttemptOutcome::Permanent => {
                            return Err(server_error(answer.status, answer.body));
                        }
                        AttemptOutcome::Transient { retry_after_ms } => (
                            format!("the control plane answered HTTP {}", answer.status),
                            retry_after_ms,
                        ),
                    }
                }
            };
            let policy = &self.inner.opts.retry;
            let wait = wait_ms
                .map(|ms| ms.min(policy.max_retry_after_ms))
                .unwrap_or_else(|| policy.backoff_ms(attempt, self.inner.opts.rng.as_ref()));
            let wait = Duration::from_millis(wait);
            if attempt >= policy.max_attempts || started.elapsed() + wait > deadline {
                return Err(CoreError::Offline {
                    profile: profile.to_owned(),
                    message: format!(
                        "{message}; the upload was not confirmed (run it again: it is idempotent by its id)"
                    ),
                });
            }
            tokio::time::sleep(wait).await;
        }
    }

    async fn audit_upload(&self, profile: &str, target: &str, up: &CertUploaded) -> Result<()> {
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let outcome = if up.created { "done" } else { "unchanged" };
        let mut entry = Audit::new(self.now(), &self.inner.opts.actor, "cert.upload", outcome)
            .profile(profile)
            .resource(format!("target/{target}"));
        entry.detail = Some(format!(
            "certificate {} (sha256 {})",
            up.certificate.id, up.certificate.fingerprint_sha256
        ));
        entry.record(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Queues the activation of certificate `cert_id` under `key` (default: a new one); the
    /// same key again returns the row already queued, the same key for another write is refused
    /// ([`CoreError::KeyReused`]).
    pub async fn enqueue_cert_activation(
        &self,
        profile: &str,
        target: &str,
        cert_id: &str,
        key: Option<String>,
    ) -> Result<CertOp> {
        self.profile(profile).await?;
        let key = key.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let op = self
            .insert_cert_op(&mut tx, profile, target, cert_id, &key)
            .await?;
        tx.commit().await?;
        Ok(op)
    }

    /// Queues an activation inside the caller's transaction (a rotation's promote or roll
    /// back queues it together with its step change).
    pub(crate) async fn insert_cert_op(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
        profile: &str,
        target: &str,
        cert_id: &str,
        key: &str,
    ) -> Result<CertOp> {
        let now = self.now();
        if action::key_used_elsewhere(tx, key, &TABLE).await? {
            return Err(CoreError::KeyReused {
                key: key.to_owned(),
            });
        }
        let inserted = sqlx::query(
            "INSERT INTO cert_ops (profile, target, action, cert_id, idempotency_key, next_attempt_at, \
             created_at, updated_at) VALUES (?, ?, 'activate', ?, ?, ?, ?, ?) \
             ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(profile)
        .bind(target)
        .bind(cert_id)
        .bind(key)
        .bind(now)
        .bind(now)
        .bind(now)
        .execute(&mut **tx)
        .await?;
        let row: CertOpRow = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM cert_ops WHERE idempotency_key = ?"
        ))
        .bind(key)
        .fetch_one(&mut **tx)
        .await?;
        if row.profile != profile || row.target != target || row.cert_id != cert_id {
            return Err(CoreError::KeyReused {
                key: key.to_owned(),
            });
        }
        if inserted.rows_affected() == 1 {
            Audit::new(now, &self.inner.opts.actor, "cert.activate", "queued")
                .profile(profile)
                .resource(format!("target/{target}"))
                .record(tx)
                .await?;
        }
        Ok(row.op())
    }

    /// The activation queued under `key`, if one is.
    pub(crate) async fn cert_op_by_key(&self, key: &str) -> Result<Option<CertOp>> {
        let row: Option<CertOpRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM cert_ops WHERE idempotency_key = ?"
        ))
        .bind(key)
        .fetch_optional(&self.inner.pool)
        .await?;
        Ok(row.map(|r| r.op()))
    }

    pub async fn cert_op(&self, id: i64) -> Result<CertOp> {
        Ok(self.cert_op_row(id).await?.op())
    }

    async fn cert_op_row(&self, id: i64) -> Result<CertOpRow> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM cert_ops WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.inner.pool)
            .await?
            .ok_or_else(|| CoreError::not_found(format!("certificate operation {id}")))
    }

    /// Sends the queued activation `id` (same key every time) until it is settled or
    /// `deadline` would pass while waiting for a retry.
    pub async fn send_cert_op(&self, id: i64, deadline: Duration) -> Result<CertOp> {
        let load = || -> Step<'_, CertOpRow> { Box::pin(self.cert_op_row(id)) };
        let send = |row| -> Step<'_, Option<CertOp>> { Box::pin(self.send_cert_once(row)) };
        match action::send_one(self, deadline, load, send).await? {
            SendOne::Settled(op) => Ok(op),
            SendOne::AsItIs(row) => Ok(row.op()),
            SendOne::Forgotten(row) => {
                let message = "queued longer ago than the control plane keeps idempotency keys: a resend could \
                               undo a later activation; check `switchyard targets certs` and activate again if \
                               still needed";
                action::needs_attention(&self.inner.writer, &TABLE, row.id, message, self.now())
                    .await?;
                self.cert_op(row.id).await
            }
        }
    }

    /// One send; `Some` once the op is settled (by this send or another process).
    async fn send_cert_once(&self, row: CertOpRow) -> Result<Option<CertOp>> {
        let marked: Option<CertOpRow> =
            action::mark_sent(&self.inner.writer, &TABLE, row.id, self.now()).await?;
        let Some(row) = marked else {
            return Ok(Some(self.cert_op(row.id).await?));
        };
        let client = self.client(&row.profile).await?;
        let path = format!(
            "/v1/targets/{}/client-certificates/{}/activate",
            row.target, row.cert_id
        );
        let result = client
            .send_to(
                Method::POST,
                &path,
                &Value::Null,
                Some(&row.idempotency_key),
            )
            .await;
        let now = self.now();
        let settled = self.settle_action(result, row.attempts as u32, now, &row.profile)?;
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let text = settled.answer.as_ref().map(Value::to_string);
        let updated: Option<CertOpRow> =
            action::record(&mut tx, &TABLE, row.id, &settled, text, now).await?;
        if settled.state != ActionState::Pending {
            let mut entry = Audit::new(
                now,
                &self.inner.opts.actor,
                "cert.activate",
                settled.state.as_str(),
            )
            .profile(&row.profile)
            .resource(format!("target/{}", row.target));
            entry.detail = settled
                .error
                .as_ref()
                .map(|e| e.message.clone())
                .or_else(|| Some(format!("certificate {}", row.cert_id)));
            entry.record(&mut tx).await?;
        }
        tx.commit().await?;
        let op = match updated {
            Some(r) => r.op(),
            None => self.cert_op(row.id).await?,
        };
        Ok((op.state != ActionState::Pending).then_some(op))
    }
}

/// A refused upload as an error carrying the server's problem (its `field` names what is
/// wrong; its detail never quotes the key).
fn server_error(status: u16, body: Option<Value>) -> CoreError {
    let problem: Option<switchyard_protocol::Problem> =
        body.and_then(|b| serde_json::from_value(b).ok());
    let message = problem
        .as_ref()
        .map(|p| {
            let detail = p.detail.clone().unwrap_or_else(|| p.title.clone());
            match &p.field {
                Some(field) => format!("{}: {field}: {detail}", p.code),
                None => format!("{}: {detail}", p.code),
            }
        })
        .unwrap_or_else(|| format!("HTTP {status}"));
    CoreError::Server {
        status,
        message,
        problem: problem.map(Box::new),
    }
}
