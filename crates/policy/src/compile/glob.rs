//! Word globs (`*`, `?`) for command words, argument tokens, flags, tool names, hosts and
//! environment names. No character classes: `[` is a literal.

use std::sync::Arc;

/// A compiled word pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) enum Glob {
    /// No wildcard: byte equality. Shared with the index keys that name it.
    Literal(#[serde(with = "super::stored::shared_str")] Arc<str>),
    /// Contains `*` or `?`.
    Wild(Vec<char>),
}

impl Glob {
    /// Compiles a word.
    pub(crate) fn new(text: &str) -> Glob {
        if text.bytes().any(|b| b == b'*' || b == b'?') {
            Glob::Wild(text.chars().collect())
        } else {
            Glob::Literal(text.into())
        }
    }

    /// The word, when it has no wildcard.
    pub(crate) fn literal(&self) -> Option<&Arc<str>> {
        match self {
            Glob::Literal(s) => Some(s),
            Glob::Wild(_) => None,
        }
    }

    /// Whether `text` matches the whole pattern.
    pub(crate) fn matches(&self, text: &str) -> bool {
        match self {
            Glob::Literal(s) => **s == *text,
            Glob::Wild(p) => wild_match(p, text),
        }
    }

    /// The literal text before the first wildcard.
    pub(crate) fn literal_prefix(&self) -> String {
        match self {
            Glob::Literal(s) => s.to_string(),
            Glob::Wild(p) => p.iter().take_while(|c| **c != '*' && **c != '?').collect(),
        }
    }
}

/// Iterative wildcard match with single-star backtracking over the text's characters (no
/// allocation): linear in practice, never exponential.
pub(crate) fn wild_match(pattern: &[char], text: &str) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while let Some(c) = text.get(t..).and_then(|rest| rest.chars().next()) {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(pc) if *pc == '?' || *pc == c => {
                p += 1;
                t += c.len_utf8();
            }
            _ => match star {
                Some((sp, st)) => {
                    let skipped = text.get(st..).and_then(|r| r.chars().next()).map_or(1, char::len_utf8);
                    p = sp + 1;
                    t = st + skipped;
                    star = Some((sp, t));
                }
                None => return false,
            },
        }
    }
    pattern.get(p..).is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(Glob::new("--output*").matches("--output=x"));
        assert!(Glob::new("--output*").matches("--output"));
        assert!(!Glob::new("--output*").matches("--outpu"));
        assert!(Glob::new("mcp__*__x").matches("mcp__a__b__x"));
        assert!(Glob::new("a?c").matches("abc"));
        assert!(!Glob::new("a?c").matches("ac"));
        assert!(Glob::new("*").matches(""));
        assert!(!Glob::new("rm").matches("rmdir"));
        assert_eq!(Glob::new("-fprint*").literal_prefix(), "-fprint");
        assert!(Glob::new("é?*ü").matches("éxyzü"));
        assert!(!Glob::new("é?ü").matches("éü"));
        assert!(Glob::new("*a*b*c").matches("xxaxxbxxbc"));
        assert!(!Glob::new("*a*b*c").matches("xxaxxbxxb"));
    }
}
