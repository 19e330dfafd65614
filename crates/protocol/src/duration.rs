//! Durations as Switchyard writes them everywhere — the retry schedule (`0s,10s,1m,10m,1h`),
//! the server's flags (`--lease 30s`), the CLI's timeouts (`--timeout 5m`): a whole number and
//! a unit, `ms`, `s` (or none), `m`, `h` or `d`. One parser, so every place accepts the same.

use std::time::Duration;

/// Why a text is not a duration, in words naming the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationError(String);

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DurationError {}

/// Parses `500ms`, `90s` (or `90`), `10m`, `24h`, `2d`.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| {
        DurationError(format!(
            "{text:?} is not a duration like 50ms, 10s, 1m or 1h"
        ))
    })?;
    let ms = match unit {
        "ms" => 1,
        "s" | "" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => {
            return Err(DurationError(format!(
                "{text:?}: unknown unit {unit:?} (use ms, s, m, h or d)"
            )));
        }
    };
    Ok(Duration::from_millis(n.saturating_mul(ms)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_and_the_errors_name_the_text() {
        let ms = |t| parse_duration(t).unwrap().as_millis();
        assert_eq!(
            [
                ms("50ms"),
                ms("10s"),
                ms("10"),
                ms("1m"),
                ms(" 2h "),
                ms("1d")
            ],
            [50, 10_000, 10_000, 60_000, 7_200_000, 86_400_000]
        );
        assert_eq!(
            parse_duration("5w").unwrap_err().to_string(),
            "\"5w\": unknown unit \"w\" (use ms, s, m, h or d)"
        );
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .to_string()
                .contains("\"soon\"")
        );
        assert!(parse_duration("").is_err());
    }
}
