//! A lexical pass over strings, before pest: an unclosed string or an unknown escape is reported
//! at its own place, not where the grammar later gives up.

use crate::error::{Code, Diagnostic};

/// Every unclosed string and unknown escape, in source order.
///
/// Works on bytes: every byte it looks for is ASCII, which never occurs inside a multi-byte
/// UTF-8 character, and it jumps from one such byte to the next.
pub(crate) fn check(file: &str, text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut string_start: Option<usize> = None;
    let mut reported = false;
    while out.len() < super::MAX_DIAGNOSTICS {
        let wanted: &[u8] = if string_start.is_some() { b"\"\\\n" } else { b"#\"" };
        let Some(at) = bytes
            .get(i..)
            .and_then(|rest| rest.iter().position(|b| wanted.contains(b)))
        else {
            break;
        };
        i += at;
        match (string_start, bytes.get(i)) {
            (None, Some(b'#')) => {
                // The comment runs to the end of the line; the newline ends it.
                i = bytes
                    .get(i..)
                    .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
                    .map_or(bytes.len(), |nl| i + nl + 1);
                continue;
            }
            (None, _) => {
                string_start = Some(i);
                reported = false;
            }
            (Some(start), Some(b'\n')) => {
                out.push(unclosed(file, text, start));
                string_start = None;
            }
            (Some(_), Some(b'"')) => string_start = None,
            (Some(_), _) => {
                // A backslash: look at the character after it.
                match text.get(i + 1..).and_then(|rest| rest.chars().next()) {
                    Some('"' | '\\' | 'n' | 't') => i += 1,
                    Some('\n') | None => {}
                    Some(other) => {
                        let end = i + 1 + other.len_utf8();
                        if !reported {
                            reported = true;
                            let d = Diagnostic::new(
                                Code::Parse,
                                file,
                                text,
                                i..end,
                                format!("unknown escape `\\{other}` in string"),
                            )
                            .with_help(
                                "the escapes are `\\\"`, `\\\\`, `\\n` and `\\t`; write `\\\\` for a backslash",
                            );
                            out.push(d);
                        }
                        i = end;
                        continue;
                    }
                }
            }
        }
        i += 1;
    }
    if let Some(start) = string_start
        && out.len() < super::MAX_DIAGNOSTICS
    {
        out.push(unclosed(file, text, start));
    }
    out
}

fn unclosed(file: &str, text: &str, start: usize) -> Diagnostic {
    Diagnostic::new(Code::Parse, file, text, start..start + 1, "unclosed string")
        .with_help("a string ends with `\"` on the same line")
}

/// The characters of one line that are code: outside `"..."` strings (with `\` escapes) and
/// before a `#` comment. Quote characters themselves are not yielded.
pub(super) fn code_chars(line: &str) -> impl Iterator<Item = char> + '_ {
    let mut in_string = false;
    let mut escaped = false;
    line.chars()
        .scan((), move |(), c| match (in_string, c) {
            (true, _) if escaped => {
                escaped = false;
                Some(None)
            }
            (true, '\\') => {
                escaped = true;
                Some(None)
            }
            (_, '"') => {
                in_string = !in_string;
                Some(None)
            }
            (false, '#') => None,
            (true, _) => Some(None),
            (false, c) => Some(Some(c)),
        })
        .flatten()
}


#[cfg(test)]
mod tests {
    use super::check;

    fn spans(text: &str) -> Vec<(std::ops::Range<usize>, String)> {
        check("t", text)
            .into_iter()
            .map(|d| (d.span, d.message))
            .collect()
    }

    #[test]
    fn finds_unclosed_strings_and_unknown_escapes_in_place() {
        let unclosed = String::from("unclosed string");
        assert_eq!(spans("a \"b\" # \"c\n\"d\\\"\"\n"), vec![]);
        let both = vec![(3..4, unclosed.clone()), (8..9, unclosed.clone())];
        assert_eq!(spans("é \"x\ny \"z"), both);
        let escape = |c: &str| format!("unknown escape `\\{c}` in string");
        // One report per string; the span covers a multi-byte character after the backslash.
        let escapes = vec![(3..6, escape("ü")), (12..14, escape("q"))];
        assert_eq!(spans("\"é\\ü \\q\" \"\\q\""), escapes);
        assert_eq!(spans("\"a\\\n"), vec![(0..1, unclosed)]);
        assert_eq!(spans("# \"\n\"\\\\\" # \\q"), vec![]);
    }
}
