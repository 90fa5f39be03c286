//! What a Gemini CLI `read_many_files` entry reaches on disk.
//!
//! Gemini CLI hands every entry to node-glob with `dot: true` and `nocase: true`: `.en?`,
//! `.ENV`, `[.]env` and `{.env,README.md}` all read `.env`. Judging the entry as a literal path
//! would let any of them past a deny of `**/.env`. So each entry is expanded here the way
//! Gemini expands it (braces; `*`, `?`, `[...]` within a name; `**` across folders, not into
//! links; dot files included; letters matched without regard to case), and every file it
//! reaches is judged as a read. The walk is bounded: an entry that reaches too much is refused.

use std::path::{Path, PathBuf};

/// Folder entries looked at, at most, for one call.
pub const MAX_VISITS: usize = 50_000;

/// Brace alternatives one entry may expand to, at most.
const MAX_ALTERNATIVES: usize = 256;

/// Why an entry could not be expanded.
#[derive(Debug, PartialEq, Eq)]
pub struct TooMuch;

/// The paths `pattern` reaches from `cwd` (sorted, without duplicates), counting folder
/// entries looked at against `visits`.
///
/// # Errors
/// More than [`MAX_VISITS`] entries, or more than 256 brace alternatives.
pub fn reached(cwd: &Path, pattern: &str, visits: &mut usize) -> Result<Vec<PathBuf>, TooMuch> {
    let mut out = Vec::new();
    // Gemini reads an entry that names an existing folder as `FOLDER/**`: all of it.
    let literal = cwd.join(pattern);
    if literal.is_dir() {
        everything(&literal, visits, &mut out)?;
    }
    for alternative in braces(pattern)? {
        let (base, rest) = match alternative.strip_prefix('/') {
            Some(rest) => (PathBuf::from("/"), rest.to_string()),
            None => (cwd.to_path_buf(), alternative),
        };
        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty() && *s != ".").collect();
        walk(&base, &segments, visits, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// `pattern` with its `{a,b}` groups expanded (nested groups too).
fn braces(pattern: &str) -> Result<Vec<String>, TooMuch> {
    let Some((open, close)) = group(pattern) else { return Ok(vec![pattern.to_string()]) };
    let (head, body, tail) = (&pattern[..open], &pattern[open + 1..close], &pattern[close + 1..]);
    let mut out = Vec::new();
    for choice in split_top(body) {
        for expanded in braces(&format!("{head}{choice}{tail}"))? {
            out.push(expanded);
            if out.len() > MAX_ALTERNATIVES {
                return Err(TooMuch);
            }
        }
    }
    Ok(out)
}

/// The first `{...}` group holding a top-level comma: byte offsets of its braces.
fn group(s: &str) -> Option<(usize, usize)> {
    let bytes = s.as_bytes();
    for (open, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'{') {
        let mut depth = 0usize;
        let mut comma = false;
        for (i, b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b',' if depth == 1 => comma = true,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if comma {
                            return Some((open, i));
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// `body` split at its top-level commas.
fn split_top(body: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0usize);
    for (i, b) in body.bytes().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
}

fn walk(dir: &Path, segments: &[&str], visits: &mut usize, out: &mut Vec<PathBuf>) -> Result<(), TooMuch> {
    let Some((first, rest)) = segments.split_first() else {
        out.push(dir.to_path_buf());
        return Ok(());
    };
    if *first == ".." {
        return walk(&dir.join(".."), rest, visits, out);
    }
    if *first == "**" {
        if rest.is_empty() {
            // At the end, `**` reaches every file beneath as well as every folder.
            return everything(dir, visits, out);
        }
        // Zero folders, then each folder beneath (links are not followed).
        walk(dir, rest, visits, out)?;
        for (path, is_dir) in entries(dir, visits)? {
            if is_dir {
                walk(&path, segments, visits, out)?;
            }
        }
        return Ok(());
    }
    for (path, is_dir) in entries(dir, visits)? {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if matches(first, &name) && (rest.is_empty() || is_dir || path.is_dir()) {
            walk(&path, rest, visits, out)?;
        }
    }
    Ok(())
}

/// `dir` and everything beneath it: files, links and folders (links are not followed).
fn everything(dir: &Path, visits: &mut usize, out: &mut Vec<PathBuf>) -> Result<(), TooMuch> {
    out.push(dir.to_path_buf());
    for (path, is_dir) in entries(dir, visits)? {
        if is_dir {
            everything(&path, visits, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// The entries of `dir` with whether each is a folder (not through a link); none when it
/// cannot be read.
fn entries(dir: &Path, visits: &mut usize) -> Result<Vec<(PathBuf, bool)>, TooMuch> {
    let Ok(read) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for entry in read.flatten() {
        *visits += 1;
        if *visits > MAX_VISITS {
            return Err(TooMuch);
        }
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        out.push((entry.path(), is_dir));
    }
    Ok(out)
}

/// Whether `name` matches the one-segment pattern `pat` (`*`, `?`, `[...]`, `[!...]`,
/// `\x`), letters compared without regard to case.
fn matches(pat: &str, name: &str) -> bool {
    let p: Vec<char> = pat.chars().flat_map(char::to_lowercase).collect();
    let n: Vec<char> = name.chars().flat_map(char::to_lowercase).collect();
    matches_at(&p, &n)
}

/// Linear in the name (one `*` to return to at a time), so no pattern can make it slow.
fn matches_at(p: &[char], n: &[char]) -> bool {
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while let Some(&c) = n.get(ni) {
        if p.get(pi) == Some(&'*') {
            star = Some((pi + 1, ni));
            pi += 1;
            continue;
        }
        if let Some((ok, len)) = one(p, pi, c)
            && ok
        {
            pi += len;
            ni += 1;
            continue;
        }
        match star {
            Some((after, from)) => {
                pi = after;
                ni = from + 1;
                star = Some((after, from + 1));
            }
            None => return false,
        }
    }
    p.get(pi..).is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

/// Whether the pattern element at `pi` (not a `*`) matches `c`, and its length; `None` past
/// the end of the pattern.
fn one(p: &[char], pi: usize, c: char) -> Option<(bool, usize)> {
    let rest = p.get(pi..)?;
    Some(match rest {
        [] => return None,
        ['?', ..] => (true, 1),
        ['[', after @ ..] => match class(after) {
            Some((set, negated, tail)) => (set.contains(&c) != negated, rest.len() - tail.len()),
            None => (c == '[', 1),
        },
        ['\\', x, ..] => (*x == c, 2),
        [x, ..] => (*x == c, 1),
    })
}

/// A `[...]` class after its `[`: its characters, whether negated, and what follows it.
fn class(p: &[char]) -> Option<(Vec<char>, bool, &[char])> {
    let (negated, body) = match p.first() {
        Some('!' | '^') => (true, p.get(1..).unwrap_or_default()),
        _ => (false, p),
    };
    let end = body.iter().skip(1).position(|c| *c == ']').map(|i| i + 1)?;
    let mut set = Vec::new();
    let mut i = 0;
    while i < end {
        match (body.get(i), body.get(i + 1), body.get(i + 2)) {
            (Some(a), Some('-'), Some(b)) if i + 2 < end => {
                set.extend((*a..=*b).flat_map(char::to_lowercase));
                i += 3;
            }
            (Some(a), ..) => {
                set.push(*a);
                i += 1;
            }
            _ => break,
        }
    }
    Some((set, negated, body.get(end + 1..)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_like_gemini_s_glob_without_regard_to_case() {
        for (pat, name) in [(".en?", ".env"), (".ENV", ".env"), ("[.]env", ".env"), ("*.PEM", "server.pem"), ("id_rsa*", "ID_RSA"), ("a\\*", "a*")] {
            assert!(matches(pat, name), "{pat} {name}");
        }
        for (pat, name) in [("*.pem", "server.key"), ("[!.]env", ".env"), ("?", "ab"), ("a\\*", "ab")] {
            assert!(!matches(pat, name), "{pat} {name}");
        }
    }

    #[test]
    fn braces_expand_nested_and_bounded() {
        assert_eq!(braces("{.env,README.md}").unwrap(), [".env", "README.md"]);
        assert_eq!(braces("a{b,c{d,e}}f").unwrap(), ["abf", "acdf", "acef"]);
        assert_eq!(braces("{x}").unwrap(), ["{x}"]);
        assert_eq!(braces(&"{a,b}".repeat(9)), Err(TooMuch));
    }

    #[test]
    fn a_pattern_of_many_stars_stays_fast() {
        // Backtracking into every `*` would take longer than the universe has.
        let name = "a".repeat(255);
        assert!(!matches(&format!("{}b", "*a".repeat(60)), &name));
        assert!(matches(&"*a".repeat(60), &name));
    }

    #[test]
    fn an_entry_reaches_what_gemini_would_read_and_a_huge_walk_is_refused() {
        let dir = scratch();
        std::fs::create_dir_all(dir.join("sub/deep")).unwrap();
        for f in [".env", "README.md", "sub/deep/server.pem", "sub/a.rs"] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        let got = |pat: &str| {
            let mut visits = 0;
            reached(&dir, pat, &mut visits).unwrap().into_iter().map(|p| p.strip_prefix(&dir).unwrap().display().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(got(".ENV"), [".env"]);
        assert_eq!(got("{.env,README.md}"), [".env", "README.md"]);
        assert_eq!(got("**/*.PEM"), ["sub/deep/server.pem"]);
        assert_eq!(got("sub/*"), ["sub/a.rs", "sub/deep"]);
        // A trailing `**` reaches the files beneath, not only the folders; so does a folder.
        let all = ["", ".env", "README.md", "sub", "sub/a.rs", "sub/deep", "sub/deep/server.pem"];
        assert_eq!(got("**"), all);
        assert_eq!(got("sub/**"), ["sub", "sub/a.rs", "sub/deep", "sub/deep/server.pem"]);
        assert_eq!(got("{sub,nothing}/**"), ["sub", "sub/a.rs", "sub/deep", "sub/deep/server.pem"]);
        assert_eq!(got("sub"), ["sub", "sub/a.rs", "sub/deep", "sub/deep/server.pem"]);
        assert_eq!(got("."), all);
        assert!(got("nothing*").is_empty());
        let mut visits = MAX_VISITS;
        assert_eq!(reached(&dir, "**", &mut visits), Err(TooMuch));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn scratch() -> PathBuf {
        let d = std::env::temp_dir().join(format!("warden-globs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }
}
