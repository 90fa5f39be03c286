//! A candidate location as a scanner found it, and the small parsers every scanner shares.

/// A location named in one line, before it is resolved against the filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Loc<'a> {
    /// The path as printed (may be relative, absolute or a `file://` URL).
    pub path: &'a str,
    /// 1-based line.
    pub line: Option<u32>,
    /// 1-based column.
    pub column: Option<u32>,
}

impl<'a> Loc<'a> {
    pub(crate) fn new(path: &'a str, line: Option<u32>, column: Option<u32>) -> Self {
        Loc { path, line, column }
    }
}

/// A positive `u32` written in ASCII digits only (no sign, no spaces).
pub(crate) fn number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<u32>().ok().filter(|&n| n > 0)
}

/// The leading run of ASCII digits of `s` and what follows it.
fn digits(s: &str) -> (&str, &str) {
    let end = s.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

/// Whether a location's number ends here: end of text, a colon, a comma or white space.
fn ends_number(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with([':', ',', ')']) || rest.starts_with(char::is_whitespace)
}

/// Parses `path:line[:col]` at the start of `s`, the path free of white space.
/// Returns the location and the text after the last number.
pub(crate) fn head(s: &str) -> Option<(Loc<'_>, &str)> {
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            return None;
        }
        if c != ':' || i == 0 {
            continue;
        }
        let (path, after) = s.split_at(i);
        if path.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (num, rest) = digits(after.get(1..)?);
        let Some(line) = number(num).filter(|_| ends_number(rest)) else {
            continue;
        };
        if let Some(more) = rest.strip_prefix(':') {
            let (num, tail) = digits(more);
            if let Some(column) = number(num).filter(|_| ends_number(tail)) {
                return Some((Loc::new(path, Some(line), Some(column)), tail));
            }
        }
        return Some((Loc::new(path, Some(line), None), rest));
    }
    None
}

/// Parses a whole token `path:line[:col]`, reading the numbers from the right so that the
/// path may itself hold colons (`file:///x.mjs:3:9`).
pub(crate) fn tail(token: &str) -> Option<Loc<'_>> {
    let (front, last) = token.rsplit_once(':')?;
    let last = number(last)?;
    if let Some((path, mid)) = front.rsplit_once(':')
        && let Some(line) = number(mid)
        && !path.is_empty()
    {
        return Some(Loc::new(path, Some(line), Some(last)));
    }
    (!front.is_empty()).then(|| Loc::new(front, Some(last), None))
}

/// Whether the last component of `path` has an extension: `name.ext`, ext 1 to 12 ASCII
/// alphanumerics, name not empty.
pub(crate) fn has_extension(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty() && (1..=12).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_positive_u32() {
        assert_eq!(number("12"), Some(12));
        for bad in ["0", "", "-1", "+1", " 1", "4294967296", "1a"] {
            assert_eq!(number(bad), None, "{bad}");
        }
        assert_eq!(number("4294967295"), Some(u32::MAX));
    }

    #[test]
    fn head_reads_path_line_and_column() {
        let (loc, rest) = head("src/a.c:3:5: error: x").unwrap();
        assert_eq!((loc, rest), (Loc::new("src/a.c", Some(3), Some(5)), ": error: x"));
        let (loc, rest) = head("A.java:3: error: x").unwrap();
        assert_eq!((loc, rest), (Loc::new("A.java", Some(3), None), ": error: x"));
        let (loc, _) = head("file:///ws/a.mjs:3").unwrap();
        assert_eq!(loc, Loc::new("file:///ws/a.mjs", Some(3), None));
        assert_eq!(head("a.c:3x: y"), None);
        assert_eq!(head("a.c:0: y"), None);
        assert_eq!(head("has space.c:3: y"), None);
        assert_eq!(head(":3: y"), None);
        assert_eq!(head("12:30:01 started"), None);
        assert_eq!(head("a.c:99999999999: y"), None);
    }

    #[test]
    fn head_keeps_line_when_column_is_bad() {
        let (loc, rest) = head("a.c:3:0: x").unwrap();
        assert_eq!((loc, rest), (Loc::new("a.c", Some(3), None), ":0: x"));
    }

    #[test]
    fn tail_reads_numbers_from_the_right() {
        assert_eq!(tail("/ws/a.js:3:9"), Some(Loc::new("/ws/a.js", Some(3), Some(9))));
        assert_eq!(tail("file:///ws/a.mjs:3:9"), Some(Loc::new("file:///ws/a.mjs", Some(3), Some(9))));
        assert_eq!(tail("a.py:7"), Some(Loc::new("a.py", Some(7), None)));
        assert_eq!(tail(":7"), None);
        assert_eq!(tail("a.py"), None);
        assert_eq!(tail("a.py:0"), None);
    }

    #[test]
    fn extensions() {
        assert!(has_extension("src/main.rs"));
        assert!(has_extension("a.tar.gz"));
        for bad in ["Makefile", ".bashrc", "dir.d/file", "a.", "x.some-thing"] {
            assert!(!has_extension(bad), "{bad}");
        }
    }
}

/// Runs one family's scanner on one line (for the scanners' unit tests).
#[cfg(test)]
pub(super) fn collect<'a>(scan: fn(&'a str, &mut Vec<Loc<'a>>), line: &'a str) -> Vec<Loc<'a>> {
    let mut out = Vec::new();
    scan(line, &mut out);
    out
}
