//! Header names used on the wire.

/// Client-chosen key that makes a mutating request safe to retry.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Set to `true` on a response replayed from the idempotency store.
pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";
/// Problem details media type (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The longest key [`parse_idempotency_key`] accepts.
pub const IDEMPOTENCY_KEY_MAX_LEN: usize = 255;
/// Keys [`parse_idempotency_key`] accepts in the bare form, as the OpenAPI document states
/// them: 1-255 printable ASCII characters, not starting or ending with a space (the header's
/// surrounding whitespace is not part of it) and not starting with `"` (the quoted form).
pub const IDEMPOTENCY_KEY_PATTERN: &str = "^[!#-~]([ -~]{0,253}[!-~])?$";

/// Parses an `Idempotency-Key` header value: the IETF form is a structured-field string
/// (`"abc"`), a bare token is accepted too; both mean the same key.
///
/// The key must be 1–255 printable ASCII characters (space to `~`).
pub fn parse_idempotency_key(raw: &[u8]) -> Result<String, &'static str> {
    let text = std::str::from_utf8(raw).map_err(|_| "must be printable ASCII")?;
    let text = text.trim_matches(|c| c == ' ' || c == '\t');
    let key = if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        unquote_sf_string(&text[1..text.len() - 1])?
    } else {
        text.to_owned()
    };
    if key.is_empty() {
        return Err("must not be empty");
    }
    if key.len() > IDEMPOTENCY_KEY_MAX_LEN {
        return Err("must be at most 255 characters");
    }
    if !key.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return Err("must be printable ASCII");
    }
    Ok(key)
}

/// Undoes the `\"` and `\\` escapes of an RFC 8941 string; any other escape is invalid.
fn unquote_sf_string(inner: &str) -> Result<String, &'static str> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\')) => out.push(e),
                _ => return Err("has an invalid escape in its quoted form"),
            },
            '"' => return Err("has an unescaped quote in its quoted form"),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Formats a key in the IETF structured-field string form.
pub fn format_idempotency_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 2);
    out.push('"');
    for c in key.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_and_bare_forms_are_the_same_key() {
        assert_eq!(parse_idempotency_key(b"\"abc-1\"").unwrap(), "abc-1");
        assert_eq!(parse_idempotency_key(b"abc-1").unwrap(), "abc-1");
        assert_eq!(parse_idempotency_key(br#""a\"b""#).unwrap(), "a\"b");
    }

    #[test]
    fn rejects_empty_long_and_non_ascii_keys() {
        assert!(parse_idempotency_key(b"").is_err());
        assert!(parse_idempotency_key(b"\"\"").is_err());
        assert!(parse_idempotency_key(&[b'a'; 256]).is_err());
        assert!(parse_idempotency_key(&[b'a'; 255]).is_ok());
        assert!(parse_idempotency_key("clé".as_bytes()).is_err());
        assert!(parse_idempotency_key(b"a\x01b").is_err());
        assert!(parse_idempotency_key(br#""a\nb""#).is_err());
    }

    #[test]
    fn format_round_trips() {
        for key in ["plain", "with \"quotes\"", "back\\slash"] {
            assert_eq!(
                parse_idempotency_key(format_idempotency_key(key).as_bytes()).unwrap(),
                key
            );
        }
    }
}
