//! One path segment of a shell glob in an argument (`.e[n]v`, `ssh_host_*`, `[!a-z]?`): `*`,
//! `?` and bracket classes, as bash expands them. Two questions are asked of it: does it match
//! a file name (a literal pattern segment), and can it match a name that a policy's wildcard
//! segment (`*`, `?`) also matches.
//!
//! A policy's literal text must be spelled by the argument: the argument's `*` may stand for
//! the policy's `*` or `?`, not for its letters, so `*.rs` does not meet `id_rsa*` (though
//! `id_rsa.rs` matches both) while `ssh_host_*` meets `ssh_host_*` and `certs/*.key` meets
//! `*.key`.
//!
//! Bash does not let `*`, `?` or a class match a `.` at the start of a name (without
//! `dotglob`), so `*` never names `.env`; a segment starting with a literal `.` can. Anything
//! this module does not understand (a POSIX class `[:alpha:]`, an equivalence class) matches
//! any character: it errs towards an overlap.

/// One token of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A literal character.
    Char(char),
    /// `?`
    One,
    /// `*`
    Star,
    /// `[...]`: inclusive ranges, negated with `!` or `^`. `any`: a class it cannot read.
    Class { ranges: Vec<(char, char)>, negated: bool, any: bool },
}

/// A compiled argument glob segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShGlob(Vec<Tok>);

impl ShGlob {
    /// Compiles a segment. A `[` without its `]` is a literal character, as in bash.
    pub(crate) fn new(text: &str) -> ShGlob {
        let chars: Vec<char> = text.chars().collect();
        let mut toks = Vec::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            i += 1;
            match c {
                '*' => {
                    if toks.last() != Some(&Tok::Star) {
                        toks.push(Tok::Star);
                    }
                }
                '?' => toks.push(Tok::One),
                '[' => match class(&chars, i) {
                    Some((tok, next)) => {
                        toks.push(tok);
                        i = next;
                    }
                    None => toks.push(Tok::Char('[')),
                },
                c => toks.push(Tok::Char(c)),
            }
        }
        ShGlob(toks)
    }

    /// Whether the segment has literal text outside its wildcards and classes.
    pub(crate) fn has_literal(&self) -> bool {
        self.0.iter().any(|t| matches!(t, Tok::Char(_)))
    }

    /// Whether a leading `.` can be matched: only by a literal one.
    fn dot_ok(&self) -> bool {
        self.0.first() == Some(&Tok::Char('.'))
    }

    /// Whether the file name `name` matches the segment.
    pub(crate) fn matches(&self, name: &str) -> bool {
        if name.starts_with('.') && !self.dot_ok() {
            return false;
        }
        let name: Vec<char> = name.chars().collect();
        let other: Vec<Tok> = name.into_iter().map(Tok::Char).collect();
        intersects(&self.0, &other, true)
    }

    /// Whether some name matches both the segment and the policy's wildcard segment `pattern`
    /// (characters, `*` and `?`; no classes).
    pub(crate) fn meets(&self, pattern: &[char]) -> bool {
        let mut other: Vec<Tok> = Vec::with_capacity(pattern.len());
        for c in pattern {
            match c {
                '*' if other.last() == Some(&Tok::Star) => {}
                '*' => other.push(Tok::Star),
                '?' => other.push(Tok::One),
                c => other.push(Tok::Char(*c)),
            }
        }
        if !self.dot_ok() && other.first() == Some(&Tok::Char('.')) {
            return false; // the name cannot start with `.`
        }
        intersects(&self.0, &other, false)
    }
}

/// Parses a class whose `[` is just before `start`; the token and the index after its `]`.
fn class(chars: &[char], start: usize) -> Option<(Tok, usize)> {
    let mut i = start;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut any = false;
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some((Tok::Class { ranges, negated, any }, i + 1));
        }
        first = false;
        if c == '[' && matches!(chars.get(i + 1), Some(':' | '=' | '.')) {
            // `[:alpha:]`, `[=a=]`, `[.a.]`: not read; any character.
            let close = *chars.get(i + 1)?;
            let end = (i + 2..chars.len().saturating_sub(1))
                .find(|&k| chars.get(k) == Some(&close) && chars.get(k + 1) == Some(&']'))?;
            any = true;
            i = end + 2;
            continue;
        }
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|e| *e != ']') {
            let end = *chars.get(i + 2)?;
            ranges.push((c, end));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
}

/// Whether some character matches both single-character tokens.
fn same_char(a: &Tok, b: &Tok) -> bool {
    match (a, b) {
        (Tok::Char(x), Tok::Char(y)) => x == y,
        (Tok::One, _) | (_, Tok::One) => true,
        (Tok::Char(c), class) | (class, Tok::Char(c)) => in_class(class, *c),
        // Two classes: assumed to share a character.
        _ => true,
    }
}

fn in_class(class: &Tok, c: char) -> bool {
    match class {
        Tok::Class { ranges, negated, any } => {
            *any || (ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != *negated)
        }
        _ => false,
    }
}

/// Whether some string matches both token lists: a walk of the product of the two automata.
/// Without `star_spells`, a `*` of `a` does not stand for a literal character of `b`.
fn intersects(a: &[Tok], b: &[Tok], star_spells: bool) -> bool {
    let (n, m) = (a.len(), b.len());
    let mut reach = vec![vec![false; m + 1]; n + 1];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        let Some(cell) = reach.get_mut(i).and_then(|r| r.get_mut(j)) else { continue };
        if *cell {
            continue;
        }
        *cell = true;
        if i == n && j == m {
            return true;
        }
        let (x, y) = (a.get(i), b.get(j));
        // A star may match nothing.
        if x == Some(&Tok::Star) {
            stack.push((i + 1, j));
        }
        if y == Some(&Tok::Star) {
            stack.push((i, j + 1));
        }
        match (x, y) {
            (Some(Tok::Star), Some(Tok::Star)) => {}
            // A star takes one more character of the other side.
            (Some(Tok::Star), Some(Tok::Char(_))) if !star_spells => {}
            (Some(Tok::Star), Some(_)) => stack.push((i, j + 1)),
            (Some(_), Some(Tok::Star)) => stack.push((i + 1, j)),
            (Some(p), Some(q)) if same_char(p, q) => stack.push((i + 1, j + 1)),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_match_names() {
        assert!(ShGlob::new(".e[n]v").matches(".env"));
        assert!(ShGlob::new("[s]hadow").matches("shadow"));
        assert!(ShGlob::new("shado[w]").matches("shadow"));
        assert!(ShGlob::new("id_ed2551[0-9]").matches("id_ed25519"));
        assert!(!ShGlob::new("[!s]hadow").matches("shadow"));
        assert!(ShGlob::new("[[:alpha:]]hadow").matches("shadow"));
        assert!(ShGlob::new("[]]x").matches("]x"));
        assert!(ShGlob::new("a[").matches("a["));
        assert!(ShGlob::new("*").matches("shadow"));
        // A leading dot is matched only by a literal one.
        assert!(!ShGlob::new("*").matches(".env"));
        assert!(!ShGlob::new("?env").matches(".env"));
        assert!(!ShGlob::new("[.]env").matches(".env"));
        assert!(ShGlob::new(".[a-z]*").matches(".ssh"));
    }

    #[test]
    fn wildcards_meet_wildcards() {
        let meets = |a: &str, p: &str| ShGlob::new(a).meets(&p.chars().collect::<Vec<_>>());
        assert!(meets("ssh_host_*", "ssh_host_*"));
        assert!(!meets("ssh_host_*", "ssh_host_*_key"));
        assert!(meets("ssh_host_*_key", "ssh_host_*"));
        assert!(meets("*", "*"));
        assert!(!meets("*", "*.pem"));
        assert!(!meets("*.rs", "id_rsa*"));
        assert!(meets("*.pem", "*.pem"));
        assert!(meets("*.k[e]y", "*.key"));
        assert!(!meets("*.rs", "*.pem"));
        assert!(!meets("*", ".env*"));
        // `.e*` is judged by the literal `.env` it matches, not here.
        assert!(!meets(".e*", ".env*"));
        assert!(!meets("src?", "*.pem"));
    }
}
