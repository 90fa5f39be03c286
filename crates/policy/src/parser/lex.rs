//! A lexical pass over strings, before pest: an unclosed string or an unknown escape is reported
//! at its own place, not where the grammar later gives up.

use crate::error::{Code, Diagnostic};

/// Every unclosed string and unknown escape, in source order.
pub(crate) fn check(file: &str, text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut chars = text.char_indices();
    let mut string_start: Option<usize> = None;
    let mut reported = false;
    while let Some((i, c)) = chars.next() {
        if out.len() >= super::MAX_DIAGNOSTICS {
            return out;
        }
        match (string_start, c) {
            (None, '#') => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            (None, '"') => {
                string_start = Some(i);
                reported = false;
            }
            (None, _) => {}
            (Some(start), '\n') => {
                out.push(unclosed(file, text, start));
                string_start = None;
            }
            (Some(_), '"') => string_start = None,
            (Some(_), '\\') => match chars.clone().next() {
                Some((_, '"' | '\\' | 'n' | 't')) => {
                    chars.next();
                }
                Some((_, '\n')) | None => {}
                Some((j, other)) => {
                    chars.next();
                    if !reported {
                        reported = true;
                        let d = Diagnostic::new(
                            Code::Parse,
                            file,
                            text,
                            i..j + other.len_utf8(),
                            format!("unknown escape `\\{other}` in string"),
                        )
                        .with_help(
                            "the escapes are `\\\"`, `\\\\`, `\\n` and `\\t`; write `\\\\` for a backslash",
                        );
                        out.push(d);
                    }
                }
            },
            (Some(_), _) => {}
        }
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

