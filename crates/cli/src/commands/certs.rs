//! `switchyard targets certs | upload-cert | activate-cert`: a target's client certificates
//! (mTLS) and the steps of their rotation (docs/rotation.md, "Client certificates (mTLS)").
//! An upload is sent directly (idempotent by its id, so it is simply run again after a
//! timeout) and its key file is read into memory only; an activation is a keyed write queued in
//! the console's data dir and sent at once, like `targets expire-secret`.

use serde_json::json;
use switchyard_core::cert_ops::CertOp;
use switchyard_core::protocol_client_certs::{
    CertificateExpiry, CertificateState, ClientCertificateInfo, UploadCertificateRequest,
};
use switchyard_core::*;

use crate::args::{ActivateCertArgs, UploadCertArgs, parse_duration};
use crate::{Exit, emit, table};

fn expiry_note(info: &ClientCertificateInfo) -> String {
    let expiry = CertificateExpiry::of(info, chrono::Utc::now());
    match (expiry.expires_in_days, expiry.warn_days) {
        (d, _) if info.not_after <= chrono::Utc::now() => format!("expired {} days ago", -d),
        (d, Some(_)) => format!("expires in {d} days: rotate it"),
        (d, None) => format!("{d} days left"),
    }
}

pub async fn list(
    console: &Console,
    profile: &str,
    json: bool,
    name: &str,
) -> anyhow::Result<Exit> {
    let items = console.client_certificates(profile, name).await?;
    emit(json, &items, |items| {
        if items.is_empty() {
            outln!(
                "target {name} has no client certificate; upload one with \
                 `switchyard targets upload-cert {name} --id ID --cert FILE --key FILE`"
            );
            return;
        }
        let rows: Vec<Vec<String>> = items
            .iter()
            .map(|c| {
                vec![
                    c.id.clone(),
                    c.state.as_str().to_owned(),
                    c.not_after.to_rfc3339(),
                    expiry_note(c),
                    c.subject.clone(),
                    c.fingerprint_sha256.chars().take(16).collect::<String>() + "…",
                ]
            })
            .collect();
        table::print(
            &["ID", "STATE", "NOT AFTER", "EXPIRY", "SUBJECT", "SHA-256"],
            &rows,
        );
        if let Some(staged) = items
            .iter()
            .rev()
            .find(|c| c.state == CertificateState::Staged)
        {
            outln!(
                "next: verify {id} with `switchyard targets test {name} --cert {id}`, then \
                 `switchyard targets activate-cert {name} {id}`",
                id = staged.id
            );
        }
    });
    Ok(Exit::Ok)
}

pub async fn upload(
    console: &Console,
    profile: &str,
    json: bool,
    args: UploadCertArgs,
) -> anyhow::Result<Exit> {
    let timeout = parse_duration(&args.timeout)?;
    let read = |path: &std::path::Path, what: &str| {
        std::fs::read_to_string(path).map_err(|e| CoreError::Invalid {
            field: what.to_owned(),
            message: format!("cannot read {}: {e}", path.display()),
        })
    };
    let request = UploadCertificateRequest {
        certificate_pem: read(&args.cert, "--cert")?,
        private_key_pem: read(&args.key, "--key")?,
    };
    let t = &args.name;
    let outcome = console
        .upload_client_certificate(profile, t, &args.id, &request, timeout)
        .await;
    drop(request);
    match outcome {
        Ok(up) => {
            emit(json, &up, |up| {
                let c = &up.certificate;
                let how = if up.created {
                    "uploaded"
                } else {
                    "already uploaded (the same certificate and key)"
                };
                outln!(
                    "client certificate {} of {t}: {how}, {}\n  {}, not after {} ({})\n  \
                     sha256 {}\nnext: verify with `switchyard targets test {t} --cert {id}`, then \
                     `switchyard targets activate-cert {t} {id}`",
                    c.id,
                    c.state.as_str(),
                    c.subject,
                    c.not_after.to_rfc3339(),
                    expiry_note(c),
                    c.fingerprint_sha256,
                    id = c.id,
                );
            });
            Ok(Exit::Ok)
        }
        Err(CoreError::Server {
            status, message, ..
        }) if (400..500).contains(&status) => {
            emit(
                json,
                &json!({"error": {"status": status, "message": message}}),
                |_| {
                    errln!(
                        "upload of {} refused: {message}\nnothing was stored",
                        args.id
                    )
                },
            );
            Ok(Exit::NeedsAttention)
        }
        Err(e @ CoreError::Offline { .. }) => {
            emit(
                json,
                &json!({"error": {"code": "offline", "message": e.to_string()}}),
                |_| errln!("{e}\nrun the same command again: an upload is idempotent by its id"),
            );
            Ok(Exit::Incomplete)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn activate(
    console: &Console,
    profile: &str,
    json: bool,
    args: ActivateCertArgs,
) -> anyhow::Result<Exit> {
    let timeout = parse_duration(&args.keyed.timeout)?;
    let op = console
        .enqueue_cert_activation(profile, &args.name, &args.id, args.keyed.key.clone())
        .await?;
    let op = console.send_cert_op(op.id, timeout).await?;
    emit(json, &op, |op| outln!("{}", describe(op)));
    Ok(match op.state {
        ActionState::Done => Exit::Ok,
        ActionState::NeedsAttention => Exit::NeedsAttention,
        ActionState::Pending => Exit::Incomplete,
    })
}

fn describe(op: &CertOp) -> String {
    let t = &op.target;
    let head = format!(
        "#{} activate client certificate {} of {t}",
        op.id, op.cert_id
    );
    match op.state {
        ActionState::Done => {
            let result = op.result.clone().unwrap_or_default();
            let mut out = format!("{head}: confirmed; deliveries now present it");
            match result["previous"].as_str() {
                Some(previous) => out.push_str(&format!(
                    "\n  {previous} is retired\nnext: watch deliveries (`switchyard status`); to roll \
                     back, `switchyard targets activate-cert {t} {previous}` (until it expires)"
                )),
                None => out.push_str("\nnext: watch deliveries (`switchyard status`)"),
            }
            out
        }
        ActionState::NeedsAttention => format!(
            "{head}: NEEDS ATTENTION: {}",
            op.last_error
                .as_ref()
                .map(|e| e.message.as_str())
                .unwrap_or("refused")
        ),
        ActionState::Pending => format!(
            "{head}: saved locally, not confirmed yet{}\n  run the same command with --key {} to resume it \
             (the control plane acts once)",
            op.last_error
                .as_ref()
                .map(|e| format!(" ({})", e.message))
                .unwrap_or_default(),
            op.idempotency_key
        ),
    }
}
