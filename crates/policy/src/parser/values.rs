//! Values the grammar leaves open: string escapes, durations, sizes, counts and limit keys.

use crate::ast::Limit;

/// The limit keys, in the order the reference lists them.
pub(crate) const LIMIT_KEYS: [&str; 9] = [
    "timeout",
    "memory",
    "processes",
    "output",
    "filesize",
    "files",
    "commands",
    "total-time",
    "total-output",
];

/// A problem in a value, with the byte range (relative to the value) it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueError {
    /// Offset of the problem inside the value.
    pub(crate) at: std::ops::Range<usize>,
    /// Lowercase message.
    pub(crate) message: String,
    /// Advice.
    pub(crate) help: Option<String>,
}

/// Unescapes the inside of a string literal (without its quotes).
pub(crate) fn unescape(inner: &str) -> Result<String, ValueError> {
    if !inner.contains('\\') {
        // Most strings have no escape: one copy instead of a push per character.
        return Ok(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, '"')) => out.push('"'),
            Some((_, '\\')) => out.push('\\'),
            Some((_, 'n')) => out.push('\n'),
            Some((_, 't')) => out.push('\t'),
            Some((j, other)) => {
                return Err(ValueError {
                    at: i..j + other.len_utf8(),
                    message: format!("unknown escape `\\{other}` in string"),
                    help: Some(String::from(
                        "the escapes are `\\\"`, `\\\\`, `\\n` and `\\t`; write `\\\\` for a backslash",
                    )),
                });
            }
            None => {
                return Err(ValueError {
                    at: i..i + 1,
                    message: String::from("string ends with a lone `\\`"),
                    help: Some(String::from("write `\\\\` for a backslash")),
                });
            }
        }
    }
    Ok(out)
}

/// Escapes a string for printing between double quotes.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// Splits `10m` into (`10`, `m`).
fn split_number(value: &str) -> (&str, &str) {
    let end = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    value.split_at(end)
}

fn number(digits: &str, whole: &str, what: &str, example: &str) -> Result<u64, ValueError> {
    if digits.is_empty() {
        return Err(ValueError {
            at: 0..whole.len(),
            message: format!("expected a {what}, found `{whole}`"),
            help: Some(format!("write a {what} such as `{example}`")),
        });
    }
    digits.parse::<u64>().map_err(|_| too_large(whole, what))
}

fn too_large(whole: &str, what: &str) -> ValueError {
    ValueError {
        at: 0..whole.len(),
        message: format!("{what} `{whole}` is too large"),
        help: None,
    }
}

/// `500ms`, `30s`, `10m`, `2h` to milliseconds.
pub(crate) fn duration(value: &str) -> Result<u64, ValueError> {
    let (digits, unit) = split_number(value);
    let n = number(digits, value, "duration", "30s")?;
    let factor: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => {
            return Err(ValueError {
                at: if unit.is_empty() {
                    0..value.len()
                } else {
                    digits.len()..value.len()
                },
                message: if unit.is_empty() {
                    format!("duration `{value}` has no unit")
                } else {
                    format!("unknown duration unit `{unit}` in `{value}`")
                },
                help: Some(String::from(
                    "the units are `ms`, `s`, `m` and `h`, as in `30s`",
                )),
            });
        }
    };
    n.checked_mul(factor)
        .ok_or_else(|| too_large(value, "duration"))
}

/// Bytes, or `B`, `KiB`, `MiB`, `GiB`, `KB`, `MB`, `GB`, to bytes.
pub(crate) fn size(value: &str) -> Result<u64, ValueError> {
    let (digits, unit) = split_number(value);
    let n = number(digits, value, "size", "512MiB")?;
    let factor: u64 = match unit {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => {
            return Err(ValueError {
                at: digits.len()..value.len(),
                message: format!("unknown size unit `{unit}` in `{value}`"),
                help: Some(String::from(
                    "the units are `B`, `KiB`, `MiB`, `GiB` (binary) and `KB`, `MB`, `GB` (decimal)",
                )),
            });
        }
    };
    n.checked_mul(factor)
        .ok_or_else(|| too_large(value, "size"))
}

/// A whole number.
pub(crate) fn count(value: &str) -> Result<u64, ValueError> {
    let (digits, unit) = split_number(value);
    if !unit.is_empty() {
        return Err(ValueError {
            at: 0..value.len(),
            message: format!("expected a whole number, found `{value}`"),
            help: Some(String::from("counts have no unit, as in `128`")),
        });
    }
    number(digits, value, "count", "128")
}

/// What a limit key is, or `None` for an unknown key.
pub(crate) fn limit(key: &str, value: &str) -> Option<Result<Limit, ValueError>> {
    Some(match key {
        "timeout" => duration(value).map(Limit::Timeout),
        "memory" => size(value).map(Limit::Memory),
        "processes" => count(value).map(Limit::Processes),
        "output" => size(value).map(Limit::Output),
        "filesize" => size(value).map(Limit::FileSize),
        "files" => count(value).map(Limit::Files),
        "commands" => count(value).map(Limit::Commands),
        "total-time" => duration(value).map(Limit::TotalTime),
        "total-output" => size(value).map(Limit::TotalOutput),
        _ => return None,
    })
}

/// The canonical text of a limit: `timeout 10m`.
pub(crate) fn limit_text(limit: &Limit) -> String {
    match *limit {
        Limit::Timeout(ms) => format!("timeout {}", duration_text(ms)),
        Limit::Memory(b) => format!("memory {}", size_text(b)),
        Limit::Processes(n) => format!("processes {n}"),
        Limit::Output(b) => format!("output {}", size_text(b)),
        Limit::FileSize(b) => format!("filesize {}", size_text(b)),
        Limit::Files(n) => format!("files {n}"),
        Limit::Commands(n) => format!("commands {n}"),
        Limit::TotalTime(ms) => format!("total-time {}", duration_text(ms)),
        Limit::TotalOutput(b) => format!("total-output {}", size_text(b)),
    }
}

fn duration_text(ms: u64) -> String {
    for (unit, factor) in [("h", 3_600_000u64), ("m", 60_000), ("s", 1_000)] {
        if ms != 0 && ms.is_multiple_of(factor) {
            return format!("{}{unit}", ms / factor);
        }
    }
    format!("{ms}ms")
}

fn size_text(bytes: u64) -> String {
    let units = [
        ("GiB", 1u64 << 30),
        ("GB", 1_000_000_000),
        ("MiB", 1 << 20),
        ("MB", 1_000_000),
        ("KiB", 1 << 10),
        ("KB", 1_000),
    ];
    for (unit, factor) in units {
        if bytes != 0 && bytes.is_multiple_of(factor) {
            return format!("{}{unit}", bytes / factor);
        }
    }
    format!("{bytes}B")
}

/// Edit distance counting a swap of two neighbours as one edit (optimal string alignment),
/// for "did you mean" advice.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    let get =
        |d: &Vec<usize>, i: usize, j: usize| d.get(at(i, j)).copied().unwrap_or(usize::MAX / 2);
    for i in 0..=a.len() {
        if let Some(x) = d.get_mut(at(i, 0)) {
            *x = i;
        }
    }
    for j in 0..=b.len() {
        if let Some(x) = d.get_mut(at(0, j)) {
            *x = j;
        }
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let (ca, cb) = (a.get(i - 1), b.get(j - 1));
            let cost = usize::from(ca != cb);
            let mut best = (get(&d, i - 1, j) + 1)
                .min(get(&d, i, j - 1) + 1)
                .min(get(&d, i - 1, j - 1) + cost);
            if i > 1 && j > 1 && ca == b.get(j - 2) && a.get(i - 2) == cb {
                best = best.min(get(&d, i - 2, j - 2) + 1);
            }
            if let Some(x) = d.get_mut(at(i, j)) {
                *x = best;
            }
        }
    }
    get(&d, a.len(), b.len())
}

/// The candidate nearest to `word`, if it is near enough to be a likely typo.
pub(crate) fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if word.chars().count() > 40 {
        return None;
    }
    let limit = (word.chars().count() / 3).max(1) + usize::from(word.len() > 5);
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, _)| *d <= limit && *d > 0)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("500ms"), Ok(500));
        assert_eq!(duration("30s"), Ok(30_000));
        assert_eq!(duration("10m"), Ok(600_000));
        assert_eq!(duration("2h"), Ok(7_200_000));
        assert!(duration("10x").is_err());
        assert!(duration("10").is_err());
        assert!(duration("m").is_err());
        assert!(duration("99999999999999999999h").is_err());
        assert!(duration("9999999999999999h").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(size("2GiB"), Ok(2 << 30));
        assert_eq!(size("1KB"), Ok(1000));
        assert_eq!(size("17"), Ok(17));
        assert_eq!(size("17B"), Ok(17));
        assert!(size("1TiB").is_err());
        assert!(size("18446744073709551615GiB").is_err());
    }

    #[test]
    fn printed_values_parse_back() {
        for v in [0u64, 1, 999, 1000, 1024, 1_000_000_000, 3 << 30, u64::MAX] {
            let text = limit_text(&Limit::Memory(v));
            let value = text.trim_start_matches("memory ");
            assert_eq!(size(value), Ok(v), "{text}");
        }
        for v in [0u64, 1, 1000, 60_000, 7_200_000, u64::MAX] {
            let text = limit_text(&Limit::Timeout(v));
            let value = text.trim_start_matches("timeout ");
            assert_eq!(duration(value), Ok(v), "{text}");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r#"a\"b\\c\nd\te"#).as_deref(), Ok("a\"b\\c\nd\te"));
        let err = unescape(r"ab\qc").unwrap_err();
        assert_eq!(err.at, 2..4);
        assert_eq!(escape("a\"\\\n\t"), r#""a\"\\\n\t""#);
    }

    #[test]
    fn nearest_keyword() {
        assert_eq!(nearest("alow", &["allow", "ask", "deny"]), Some("allow"));
        assert_eq!(nearest("teir", &["tier", "tiers", "agent"]), Some("tier"));
        assert_eq!(nearest("zzzzzz", &["allow", "ask", "deny"]), None);
    }
}
