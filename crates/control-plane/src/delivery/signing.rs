//! Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per
//! active secret. A secret is `whsec_<base64 key>`; the key is the decoded part. Which
//! secrets are active is decided by the caller at send time (`SigningKey::valid_at` in
//! src/store/secrets.rs), with the same comparison the API's expiry uses.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The headers of a signed webhook request at `now_ms`: the target's own headers, then
/// `content-type` and the Standard Webhooks `webhook-id`, `webhook-timestamp` and (when there
/// is an active secret) `webhook-signature`. Callers append their `switchyard-*` headers.
pub fn webhook_headers(
    target_headers: Option<&std::collections::BTreeMap<String, String>>,
    id: &str,
    now_ms: i64,
    secrets: &[&str],
    body: &[u8],
) -> Vec<(String, String)> {
    let timestamp = now_ms.div_euclid(1000);
    let mut headers: Vec<(String, String)> = target_headers
        .map(|h| h.clone().into_iter().collect())
        .unwrap_or_default();
    headers.push(("content-type".into(), "application/json".into()));
    headers.push(("webhook-id".into(), id.to_owned()));
    headers.push(("webhook-timestamp".into(), timestamp.to_string()));
    let signature = signature_header(secrets, id, timestamp, body);
    if !signature.is_empty() {
        headers.push(("webhook-signature".into(), signature));
    }
    headers
}

/// Signs `id.timestamp.body` with every secret; returns the `webhook-signature` value.
/// Secrets that do not decode are skipped (they cannot have been issued by this server).
pub fn signature_header(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .filter_map(|s| sign(s, id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One `v1,…` signature, or `None` when the secret is not `whsec_<base64>`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let key = STANDARD.decode(secret.strip_prefix("whsec_")?).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Some(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// What a receiver does: true when any `v1,` signature in `header` matches `secret`.
pub fn verify(secret: &str, id: &str, timestamp: i64, body: &[u8], header: &str) -> bool {
    let Some(expected) = sign(secret, id, timestamp, body) else {
        return false;
    };
    header.split(' ').any(|candidate| {
        subtle::ConstantTimeEq::ct_eq(candidate.as_bytes(), expected.as_bytes()).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_standard_webhooks_reference_vector() {
        // From the Standard Webhooks specification's test vectors.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = br#"{"test": 2432232314}"#;
        let sig = sign(secret, id, 1614265330, body).unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(verify(
            secret,
            id,
            1614265330,
            body,
            &format!("v1,bogus {sig}")
        ));
        assert!(!verify(secret, id, 1614265331, body, &sig));
    }

    #[test]
    fn one_signature_per_secret() {
        let a = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let b = "whsec_c2Vjb25kLXNlY3JldA==";
        let header = signature_header(&[a, b, "not-a-secret"], "evt_1", 1, b"{}");
        assert_eq!(header.split(' ').count(), 2);
    }
}
