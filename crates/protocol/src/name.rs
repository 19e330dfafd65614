//! Resource names: 1–63 characters, `[a-z0-9]([a-z0-9-]*[a-z0-9])?` (a DNS label).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError(pub &'static str);

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for NameError {}

/// The longest name.
pub const NAME_MAX_LEN: usize = 63;
/// What [`validate_name`] accepts, as the OpenAPI document states it (with the length).
pub const NAME_PATTERN: &str = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$";

pub fn validate_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError("must not be empty"));
    }
    if name.len() > NAME_MAX_LEN {
        return Err(NameError("must be at most 63 characters"));
    }
    let ok_char = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-';
    if !name.bytes().all(ok_char) {
        return Err(NameError(
            "may contain only lowercase letters, digits and '-'",
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err(NameError("must start and end with a letter or digit"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate_name;

    #[test]
    fn accepts_dns_labels() {
        for ok in ["a", "orders", "orders-to-billing", "x1", &"a".repeat(63)] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "",
            "-a",
            "a-",
            "Orders",
            "a_b",
            "a.b",
            "a b",
            &"a".repeat(64),
            "é",
        ] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
