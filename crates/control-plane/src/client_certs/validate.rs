//! Checks an uploaded client certificate before it is stored: the chain parses, it is in
//! order (leaf first, each certificate issued — name and signature — by the next), no
//! certificate of it has expired (by the server's clock) or is not yet valid, and the key
//! parses and is the leaf's. A failure is a 400 `validation_failed` naming the field; its
//! message never quotes the key.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use sha2::{Digest, Sha256};
use switchyard_protocol::{FieldError, UploadCertificateRequest};
use x509_parser::prelude::{FromDer, X509Certificate};

/// The longest chain accepted.
pub const MAX_CHAIN: usize = 10;

const CERT_FIELD: &str = "certificate_pem";
const KEY_FIELD: &str = "private_key_pem";

/// What a valid upload is, ready to store.
pub struct Checked {
    /// The chain re-encoded from its DER: CERTIFICATE blocks only, leaf first.
    pub certificate_pem: String,
    pub private_key_pem: String,
    pub request_sha256: Vec<u8>,
    /// SHA-256 of the leaf's DER, lowercase hex.
    pub fingerprint: String,
    pub subject: String,
    /// The leaf's `notAfter`, unix ms.
    pub not_after: i64,
}

fn cert_error(message: impl Into<String>) -> FieldError {
    FieldError::new(CERT_FIELD, message)
}

fn key_error(message: impl Into<String>) -> FieldError {
    FieldError::new(KEY_FIELD, message)
}

/// The DER of every CERTIFICATE block of `pem`, in order.
fn chain_der(pem: &str) -> Result<Vec<Vec<u8>>, FieldError> {
    let mut chain = Vec::new();
    for (n, block) in x509_parser::pem::Pem::iter_from_buffer(pem.as_bytes()).enumerate() {
        let block = block.map_err(|_| cert_error(format!("PEM block {} is malformed", n + 1)))?;
        if block.label.contains("PRIVATE KEY") {
            // Never kept where it would be stored in clear.
            return Err(cert_error(
                "holds a private key: send only certificates here, and the key in private_key_pem",
            ));
        }
        if block.label != "CERTIFICATE" {
            return Err(cert_error(format!(
                "PEM block {} is {:?}; only CERTIFICATE blocks belong here",
                n + 1,
                block.label
            )));
        }
        chain.push(block.contents);
    }
    if chain.is_empty() {
        return Err(cert_error(
            "holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        ));
    }
    if chain.len() > MAX_CHAIN {
        return Err(cert_error(format!(
            "holds {} certificates; at most {MAX_CHAIN}",
            chain.len()
        )));
    }
    Ok(chain)
}

fn pem_block(label: &str, der: &[u8]) -> String {
    let encoded = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

fn rfc3339(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(seconds, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| seconds.to_string())
}

/// The key re-encoded from its DER, with the label of its form.
fn key_pem(key: &PrivateKeyDer<'_>) -> String {
    let label = match key {
        PrivateKeyDer::Pkcs1(_) => "RSA PRIVATE KEY",
        PrivateKeyDer::Sec1(_) => "EC PRIVATE KEY",
        _ => "PRIVATE KEY",
    };
    pem_block(label, key.secret_der())
}

/// Checks `request` at `now_ms` (unix ms).
pub fn check(request: &UploadCertificateRequest, now_ms: i64) -> Result<Checked, FieldError> {
    let ders = chain_der(&request.certificate_pem)?;
    let mut chain = Vec::with_capacity(ders.len());
    for (n, der) in ders.iter().enumerate() {
        let (_, cert) = X509Certificate::from_der(der).map_err(|_| {
            cert_error(format!("certificate {} is not an X.509 certificate", n + 1))
        })?;
        chain.push(cert);
    }
    let key = PrivateKeyDer::from_pem_slice(request.private_key_pem.as_bytes())
        .map_err(|_| key_error("holds no PEM private key (PKCS#8, PKCS#1 RSA or SEC1 EC)"))?;
    let signer = rustls::crypto::ring::sign::any_supported_type(&key).map_err(|_| {
        key_error("is not a key this server can use (RSA, ECDSA P-256/P-384 or Ed25519)")
    })?;

    // Order: leaf first, each certificate issued by the next one.
    for (n, pair) in chain.windows(2).enumerate() {
        let (cert, issuer) = (&pair[0], &pair[1]);
        let named = cert.issuer().as_raw() == issuer.subject().as_raw();
        if !named || cert.verify_signature(Some(issuer.public_key())).is_err() {
            return Err(cert_error(format!(
                "certificate {} ({}) was not issued by certificate {} ({}): the chain goes \
                 leaf first, each certificate followed by its issuer",
                n + 1,
                cert.subject(),
                n + 2,
                issuer.subject()
            )));
        }
    }

    let leaf = &chain[0];
    let matches = signer
        .public_key()
        .is_some_and(|spki| spki.as_ref() == leaf.public_key().raw);
    if !matches {
        return Err(key_error(format!(
            "is not the key of the leaf certificate ({})",
            leaf.subject()
        )));
    }

    let now_s = now_ms.div_euclid(1000);
    for (n, cert) in chain.iter().enumerate() {
        let validity = cert.validity();
        if validity.not_after.timestamp() <= now_s {
            return Err(cert_error(format!(
                "certificate {} ({}) expired at {}",
                n + 1,
                cert.subject(),
                rfc3339(validity.not_after.timestamp())
            )));
        }
        if validity.not_before.timestamp() > now_s {
            return Err(cert_error(format!(
                "certificate {} ({}) is not valid before {}",
                n + 1,
                cert.subject(),
                rfc3339(validity.not_before.timestamp())
            )));
        }
    }

    let mut request_sha = Sha256::new();
    for der in &ders {
        request_sha.update((der.len() as u64).to_be_bytes());
        request_sha.update(der);
    }
    request_sha.update(key.secret_der());
    let not_after = leaf.validity().not_after.timestamp().saturating_mul(1000);
    Ok(Checked {
        certificate_pem: ders.iter().map(|d| pem_block("CERTIFICATE", d)).collect(),
        private_key_pem: key_pem(&key),
        request_sha256: request_sha.finalize().to_vec(),
        fingerprint: hex::encode(Sha256::digest(&ders[0])),
        subject: leaf.subject().to_string(),
        not_after,
    })
}

#[cfg(test)]
mod tests {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SignatureAlgorithm};

    use super::*;

    fn ca_params(cn: &str) -> CertificateParams {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
    }

    fn leaf_params(cn: &str) -> CertificateParams {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        params
    }

    fn now_ms() -> i64 {
        chrono::Utc::now().timestamp_millis()
    }

    fn request(chain: &[&rcgen::Certificate], key: &KeyPair) -> UploadCertificateRequest {
        UploadCertificateRequest {
            certificate_pem: chain.iter().map(|c| c.pem()).collect(),
            private_key_pem: key.serialize_pem(),
        }
    }

    #[test]
    fn every_key_type_rustls_signs_with_is_matched_to_its_leaf() {
        let ca_key = KeyPair::generate().unwrap();
        let ca = ca_params("CA").self_signed(&ca_key).unwrap();
        let algorithms: [&'static SignatureAlgorithm; 3] = [
            &rcgen::PKCS_ECDSA_P256_SHA256,
            &rcgen::PKCS_ECDSA_P384_SHA384,
            &rcgen::PKCS_ED25519,
        ];
        for alg in algorithms {
            let key = KeyPair::generate_for(alg).unwrap();
            let leaf = leaf_params("leaf").signed_by(&key, &ca, &ca_key).unwrap();
            let checked = check(&request(&[&leaf, &ca], &key), now_ms())
                .unwrap_or_else(|e| panic!("{alg:?}: {e}"));
            assert_eq!(checked.subject, "CN=leaf");
            assert_eq!(checked.fingerprint, hex::encode(Sha256::digest(leaf.der())));
            assert!(checked.certificate_pem.matches("BEGIN CERTIFICATE").count() == 2);
            let other = KeyPair::generate_for(alg).unwrap();
            let refused = check(&request(&[&leaf, &ca], &other), now_ms())
                .err()
                .unwrap();
            assert_eq!(refused.field, KEY_FIELD);
        }
    }

    #[test]
    fn a_chain_goes_leaf_first_each_followed_by_its_issuer() {
        let root_key = KeyPair::generate().unwrap();
        let root = ca_params("root").self_signed(&root_key).unwrap();
        let mid_key = KeyPair::generate().unwrap();
        let mid = ca_params("intermediate")
            .signed_by(&mid_key, &root, &root_key)
            .unwrap();
        let key = KeyPair::generate().unwrap();
        let leaf = leaf_params("leaf").signed_by(&key, &mid, &mid_key).unwrap();
        let at = now_ms();
        assert!(
            check(&request(&[&leaf], &key), at).is_ok(),
            "the leaf alone"
        );
        assert!(check(&request(&[&leaf, &mid], &key), at).is_ok());
        assert!(check(&request(&[&leaf, &mid, &root], &key), at).is_ok());
        for wrong in [
            vec![&leaf, &root],
            vec![&leaf, &root, &mid],
            vec![&mid, &leaf],
        ] {
            let refused = check(&request(&wrong, &key), at).err().unwrap();
            assert_eq!(refused.field, CERT_FIELD);
            assert!(
                refused.message.contains("was not issued by"),
                "{}",
                refused.message
            );
        }
        // A subject that names the issuer is not enough: the signature must verify too.
        let impostor_key = KeyPair::generate().unwrap();
        let impostor = ca_params("intermediate")
            .self_signed(&impostor_key)
            .unwrap();
        let refused = check(&request(&[&leaf, &impostor], &key), at)
            .err()
            .unwrap();
        assert!(
            refused.message.contains("was not issued by"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn expiry_and_start_are_judged_by_the_given_clock() {
        let key = KeyPair::generate().unwrap();
        let mut params = leaf_params("leaf");
        params.not_before = rcgen::date_time_ymd(2026, 1, 1);
        params.not_after = rcgen::date_time_ymd(2027, 1, 1);
        let leaf = params.self_signed(&key).unwrap();
        let at = |y: i32| {
            chrono::NaiveDate::from_ymd_opt(y, 6, 1)
                .unwrap()
                .and_hms_opt(0, 0, 0)
                .unwrap()
                .and_utc()
                .timestamp_millis()
        };
        let ok = check(&request(&[&leaf], &key), at(2026)).unwrap();
        assert_eq!(ok.not_after, at(2027) - 151 * 86_400_000);
        let expired = check(&request(&[&leaf], &key), at(2027)).err().unwrap();
        assert!(
            expired.message.contains("expired at 2027-01-01"),
            "{}",
            expired.message
        );
        let early = check(&request(&[&leaf], &key), at(2025)).err().unwrap();
        assert!(
            early.message.contains("not valid before"),
            "{}",
            early.message
        );
    }
}
