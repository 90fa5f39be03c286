//! Recovery after a syntax error, to report several at once: the line holding the error is
//! blanked (same length, so offsets do not move) if that cannot change the structure around it.

/// Blanks the line holding `pos` if it is not empty and opens or closes no `{ }` (outside
/// strings and comments). Returns whether it did.
pub(crate) fn blank_line(text: &mut String, pos: usize) -> bool {
    if pos >= text.len() {
        return false;
    }
    let start = text
        .get(..pos)
        .and_then(|b| b.rfind('\n'))
        .map_or(0, |i| i + 1);
    let end = text
        .get(pos..)
        .and_then(|a| a.find('\n'))
        .map_or(text.len(), |i| pos + i);
    let Some(line) = text.get(start..end) else {
        return false;
    };
    if line.trim().is_empty() || brace_delta(line) != Some(0) {
        return false;
    }
    let blank = " ".repeat(line.len());
    text.replace_range(start..end, &blank);
    true
}

/// `{` minus `}` outside strings and comments; `None` if a `}` comes before its `{`.
fn brace_delta(line: &str) -> Option<i64> {
    let mut depth = 0i64;
    for c in super::lex::code_chars(line) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    Some(depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_only_balanced_lines() {
        let mut t = String::from("a\nalow exec ls\nb");
        assert!(blank_line(&mut t, 3));
        assert_eq!(t, "a\n            \nb");
        let mut t = String::from("tier a allow {\n}");
        assert!(!blank_line(&mut t, 7));
        let mut t = String::from("x }\n");
        assert!(!blank_line(&mut t, 0));
        let mut t = String::from("agent a { tiers read limits { } }\n");
        assert!(blank_line(&mut t, 21));
        let mut t = String::from("deny exec \"{\" x\n");
        assert!(blank_line(&mut t, 0));
        let mut t = String::from("   \n");
        assert!(!blank_line(&mut t, 1));
        assert!(!blank_line(&mut t, 99));
    }
}
