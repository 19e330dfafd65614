//! Plain aligned tables for humans, and [`clean`]: what the control plane sends reaches the
//! terminal with its control characters escaped.

/// Text from the control plane (or anyone who can write to the tenant), safe to print: every
/// control character (C0 including CR, LF and TAB, DEL, C1) and every bidirectional override
/// is escaped as `\u{…}` (`\n`, `\r`, `\t` for the common ones), so a description cannot
/// retitle or clear the terminal, colour it, or forge a line of a table. `--json` output is
/// escaped by JSON itself.
pub fn clean(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// [`clean`], but line feeds stay: for whole lines a command composed (the fields in them
/// were cleaned, or are the command's own).
pub fn clean_lines(text: &str) -> String {
    if !text.chars().any(|c| c != '\n' && needs_escape(c)) {
        return text.to_owned();
    }
    text.split('\n').map(clean).collect::<Vec<_>>().join("\n")
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Prints an aligned table; every cell is [`clean`]ed (cells hold server-controlled names,
/// descriptions, errors).
pub fn print(headers: &[&str], rows: &[Vec<String>]) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|c| clean(c)).collect())
        .collect();
    let rows = &rows;
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        outln!("{}", out.trim_end());
    };
    line(headers.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

pub fn time(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn escapes_terminal_controls_and_keeps_plain_text() {
        assert_eq!(clean("Orders EU ü"), "Orders EU ü");
        assert_eq!(
            clean("\u{1b}]0;pwned\u{7}\u{1b}[2J\r\nFAKE\u{9b}\u{202e}"),
            "\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\r\\nFAKE\\u{9b}\\u{202e}"
        );
    }
}
