//! Findings about a target's credentials: a signing-secret overlap still open, and an active
//! client certificate near its expiry (docs/recovery.md, "The classes"). Pure functions of the
//! store's rows and now, like the rest of `findings`.

use switchyard_protocol::client_certs::CERTIFICATE_WARN_DAYS;
use switchyard_protocol::{Finding, FindingClass, FindingEvidence, Severity};

use super::findings::{at, finding};
use crate::clock::to_datetime;
use crate::store::{ExpiringCertRow, OverlapRow};

/// An open overlap is not a fault: it is a rotation half done. Info, with no action of its
/// own: promoting blind could stop deliveries, so the detail names the verify first.
pub fn overlap_open(o: &OverlapRow, now: i64) -> Finding {
    let t = &o.target;
    let detail = format!(
        "Target {t} is in a signing-secret rotation: {} older secret(s) still sign beside the \
         newest until {} ({} left). Receivers must accept both meanwhile. Verify the receiver \
         accepts the new secret alone (POST /v1/targets/{t}/test with its secret_id), then \
         promote it by expiring the older secret(s) (POST /v1/targets/{t}/secrets/{{id}}/expire), \
         or let the overlap end; expiring the new one instead rolls the rotation back.",
        o.expiring,
        at(o.ends_at),
        span(o.ends_at - now),
    );
    finding(
        FindingClass::SigningOverlapOpen,
        Severity::Info,
        "target",
        t,
        detail,
        FindingEvidence {
            count: Some(u64::try_from(o.expiring).unwrap_or(0)),
            until: Some(to_datetime(o.ends_at)),
            ..FindingEvidence::default()
        },
        Vec::new(),
    )
}

const DAY_MS: i64 = 86_400_000;

/// A span in its largest whole unit ("40 s", "3 min", "5 h", "19 d"): the one format of a
/// credential's remaining time, as the desktop's badge and overview write it
/// (ui/src/lib/format.ts, `timeLeft`), never "479 h".
fn span(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        3600..=86_399 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

/// How far ahead an active client certificate's expiry becomes a finding: the first of the
/// 30/7/1 days a console warns at (`CERTIFICATE_WARN_DAYS`, also behind the target's
/// `status.client_certificate.warn_days`).
pub const CERTIFICATE_NOTICE_MS: i64 = CERTIFICATE_WARN_DAYS[0] * DAY_MS;

/// An active client certificate near its `not_after`: info within 30 days, warning within 7,
/// critical within 1 or once expired (a receiver that requires it refuses every delivery).
/// No action: the new certificate and its key come from a person.
pub fn certificate_expiring(c: &ExpiringCertRow, now: i64) -> Finding {
    let [_, warning_days, critical_days] = CERTIFICATE_WARN_DAYS;
    let left = c.not_after - now;
    let severity = match left {
        l if l <= critical_days * DAY_MS => Severity::Critical,
        l if l <= warning_days * DAY_MS => Severity::Warning,
        _ => Severity::Info,
    };
    let (t, id) = (&c.target, &c.id);
    let when = if left <= 0 {
        format!("expired at {} ({} ago)", at(c.not_after), span(-left))
    } else {
        format!("expires at {} ({} left)", at(c.not_after), span(left))
    };
    let detail = format!(
        "The active client certificate {id} of target {t} ({}) {when}. Receivers that require \
         a client certificate refuse the TLS handshake with an expired one, so every delivery \
         to {t} would fail. Upload a new certificate (PUT /v1/targets/{t}/client-certificates/\
         {{id}}), test the handshake with it (POST /v1/targets/{t}/test with its \
         client_certificate_id), then activate it (POST …/client-certificates/{{id}}/activate).",
        c.subject
    );
    finding(
        FindingClass::CertificateExpiring,
        severity,
        "target",
        t,
        detail,
        FindingEvidence {
            until: Some(to_datetime(c.not_after)),
            ..FindingEvidence::default()
        },
        Vec::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    #[test]
    fn an_open_overlap_is_info_with_its_end_and_no_blind_promote() {
        let o = OverlapRow {
            target: "billing".into(),
            ends_at: NOW + 2 * 3_600_000,
            expiring: 1,
        };
        let f = overlap_open(&o, NOW);
        assert_eq!(f.id, "signing_overlap_open:target:billing");
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.evidence.until, Some(to_datetime(o.ends_at)));
        assert!(f.actions.is_empty(), "{:?}", f.actions);
        assert!(f.detail.contains("(2 h left)"), "{}", f.detail);
        assert!(
            f.detail.contains("/v1/targets/billing/test"),
            "{}",
            f.detail
        );
    }

    #[test]
    fn a_certificate_is_info_30_days_ahead_warning_at_7_critical_at_1_and_after() {
        const DAY: i64 = 86_400_000;
        let cert = |left: i64| ExpiringCertRow {
            target: "erp".into(),
            id: "cert-2026".into(),
            subject: "CN=switchyard".into(),
            not_after: NOW + left,
        };
        let severity = |left| certificate_expiring(&cert(left), NOW).severity;
        assert_eq!(severity(20 * DAY), Severity::Info);
        assert_eq!(severity(7 * DAY), Severity::Warning);
        assert_eq!(severity(2 * DAY), Severity::Warning);
        assert_eq!(severity(DAY), Severity::Critical);
        assert_eq!(severity(-5_000), Severity::Critical);
        let f = certificate_expiring(&cert(3 * DAY), NOW);
        assert_eq!(f.id, "certificate_expiring:target:erp");
        assert_eq!(f.evidence.until, Some(to_datetime(NOW + 3 * DAY)));
        assert!(f.detail.contains("expires at"), "{}", f.detail);
        assert!(f.detail.contains("(3 d left)"), "{}", f.detail);
        // 479 h read "in 479 h" here while the desktop's badge said "19 d left".
        let soon = certificate_expiring(&cert(479 * 3_600_000), NOW);
        assert!(soon.detail.contains("(19 d left)"), "{}", soon.detail);
        let gone = certificate_expiring(&cert(-3_600_000), NOW);
        assert!(gone.detail.contains("expired at"), "{}", gone.detail);
        assert!(gone.detail.contains("(1 h ago)"), "{}", gone.detail);
    }
}
