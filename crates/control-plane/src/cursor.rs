//! Page cursors: where the next page starts, opaque to clients (URL-safe base64). A resource
//! list pages by name; the DLQ and replay sessions by a time and an id (`{at}:{id}`).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::ApiError;

/// A cursor after `name`.
pub fn encode(name: &str) -> String {
    URL_SAFE_NO_PAD.encode(name)
}

/// A cursor after the row at `at` with `id`.
pub fn encode_at(at: i64, id: &str) -> String {
    encode(&format!("{at}:{id}"))
}

/// The name a cursor of [`encode`] holds.
pub fn decode(cursor: &str) -> Result<String, ApiError> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(not_ours)
}

/// The time and id a cursor of [`encode_at`] holds.
pub fn decode_at(cursor: &str) -> Result<(i64, String), ApiError> {
    let text = decode(cursor)?;
    let (at, id) = text.split_once(':').ok_or_else(not_ours)?;
    Ok((at.parse().map_err(|_| not_ours())?, id.to_owned()))
}

fn not_ours() -> ApiError {
    ApiError::validation("cursor", "is not a cursor this server issued")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip() {
        assert_eq!(decode(&encode("orders-eu")).unwrap(), "orders-eu");
        let at = encode_at(1_796_121_000_000, "dlv_01a2:b");
        assert_eq!(
            decode_at(&at).unwrap(),
            (1_796_121_000_000, "dlv_01a2:b".to_owned())
        );
    }

    #[test]
    fn a_cursor_not_issued_here_is_a_validation_error_naming_it() {
        for bad in ["not base64!", &encode("no-colon"), &encode("x:dlv_1")] {
            let err = decode_at(bad).unwrap_err();
            assert!(
                matches!(&err, ApiError::Validation(v) if v.field == "cursor"),
                "{bad}: {err:?}"
            );
        }
        assert!(decode("%%%").is_err());
    }
}
