//! Bash brace expansion of a static word: `pre{a,b}post`, nested groups, `{1..3}`, `{a..c}`.
//!
//! Input is the resolved word as characters, each flagged `true` when it was unquoted (only
//! unquoted `{`, `,`, `}` and `..` are special). The expansion is bounded: more than
//! [`MAX_WORDS`] resulting words or more than [`MAX_GROUPS`] unquoted `{` give `None`, and the
//! caller keeps the word unknown.

/// The most words one brace expansion may produce.
pub(crate) const MAX_WORDS: usize = 256;
/// The most unquoted `{` a word may hold to be expanded.
pub(crate) const MAX_GROUPS: usize = 64;

/// One character of a word: the character and whether it was unquoted.
pub(crate) type Ch = (char, bool);

/// The outcome of brace expansion.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Expansion {
    /// No brace group: the word is literal.
    Literal,
    /// The words the group(s) expand to, in bash's order.
    Words(Vec<String>),
    /// Too large or too complex to expand.
    TooMany,
}

/// Expands the brace groups of `word`.
pub(crate) fn expand(word: &[Ch]) -> Expansion {
    let groups = word.iter().filter(|(c, u)| *u && *c == '{').count();
    if groups == 0 {
        return Expansion::Literal;
    }
    if groups > MAX_GROUPS {
        return Expansion::TooMany;
    }
    if find_group(word).is_none() {
        return Expansion::Literal;
    }
    let mut out = vec![];
    if expand_into(word, &mut out) {
        Expansion::Words(out)
    } else {
        Expansion::TooMany
    }
}

/// A brace group: the index of `{`, of the matching `}`, and its alternatives.
struct Group {
    open: usize,
    close: usize,
    alts: Vec<Vec<Ch>>,
}

/// Expands `word` into `out`; false when the cap is exceeded.
fn expand_into(word: &[Ch], out: &mut Vec<String>) -> bool {
    let Some(g) = find_group(word) else {
        out.push(word.iter().map(|(c, _)| *c).collect());
        return out.len() <= MAX_WORDS;
    };
    let prefix = word.get(..g.open).unwrap_or_default();
    let suffix = word.get(g.close + 1..).unwrap_or_default();
    for alt in &g.alts {
        let mut next = Vec::with_capacity(prefix.len() + alt.len() + suffix.len());
        next.extend_from_slice(prefix);
        next.extend_from_slice(alt);
        next.extend_from_slice(suffix);
        if !expand_into(&next, out) {
            return false;
        }
    }
    true
}

/// The first valid brace group, scanning left to right (an invalid `{x}` is skipped).
fn find_group(word: &[Ch]) -> Option<Group> {
    let mut start = 0;
    while let Some(rel) = word
        .get(start..)?
        .iter()
        .position(|(c, u)| *u && *c == '{')
    {
        let open = start + rel;
        if let Some(g) = group_at(word, open) {
            return Some(g);
        }
        start = open + 1;
    }
    None
}

/// The group opening at `open`, if it closes and has a top-level comma or is a sequence.
fn group_at(word: &[Ch], open: usize) -> Option<Group> {
    let mut depth = 0usize;
    let mut commas = vec![];
    let mut close = None;
    for (i, (c, u)) in word.iter().enumerate().skip(open + 1) {
        if !*u {
            continue;
        }
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                close = Some(i);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => commas.push(i),
            _ => {}
        }
    }
    let close = close?;
    let inner = word.get(open + 1..close)?;
    if commas.is_empty() {
        let text: String = inner.iter().map(|(c, _)| *c).collect();
        if !inner.iter().all(|(_, u)| *u) {
            return None;
        }
        let items = sequence(&text)?;
        let alts = items
            .into_iter()
            .map(|s| s.chars().map(|c| (c, false)).collect())
            .collect();
        return Some(Group { open, close, alts });
    }
    let mut alts = vec![];
    let mut from = open + 1;
    for at in commas.into_iter().chain(std::iter::once(close)) {
        alts.push(word.get(from..at)?.to_vec());
        from = at + 1;
    }
    Some(Group { open, close, alts })
}

/// The items of a sequence expression `x..y[..incr]`, or `None` if `text` is none (or too
/// long).
fn sequence(text: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = text.split("..").collect();
    let (a, b, step) = match parts.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, s] => (*a, *b, Some(*s)),
        _ => return None,
    };
    let step: i64 = match step {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    let step = step.checked_abs()?.max(1);
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let count = x.abs_diff(y) / step.unsigned_abs() + 1;
        if count > MAX_WORDS as u64 {
            return Some(vec![String::new(); MAX_WORDS + 1]);
        }
        let padded = |s: &str| {
            let d = s.trim_start_matches('-');
            d.len() > 1 && d.starts_with('0')
        };
        let width = if padded(a) || padded(b) {
            a.len().max(b.len())
        } else {
            0
        };
        let dir = if y >= x { step } else { -step };
        let mut out = vec![];
        let mut v = x;
        for _ in 0..count {
            out.push(pad(v, width));
            v = v.checked_add(dir)?;
        }
        return Some(out);
    }
    let (mut ca, mut cb) = (a.chars(), b.chars());
    match (ca.next(), ca.next(), cb.next(), cb.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (x, y) = (x as u8, y as u8);
            let step = usize::try_from(step).ok()?;
            let range: Vec<u8> = if x <= y {
                (x..=y).step_by(step).collect()
            } else {
                (y..=x).rev().step_by(step).collect()
            };
            Some(range.into_iter().map(|c| char::from(c).to_string()).collect())
        }
        _ => None,
    }
}

/// `v` with zeros after the sign up to `width` characters in all.
fn pad(v: i64, width: usize) -> String {
    let digits = v.unsigned_abs().to_string();
    let sign = if v < 0 { "-" } else { "" };
    let zeros = width.saturating_sub(digits.len() + sign.len());
    format!("{sign}{}{digits}", "0".repeat(zeros))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unquoted(s: &str) -> Vec<Ch> {
        s.chars().map(|c| (c, true)).collect()
    }

    fn words(s: &str) -> Vec<String> {
        match expand(&unquoted(s)) {
            Expansion::Words(w) => w,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn alternatives_and_nesting() {
        assert_eq!(words("{rm,-rf,.}"), ["rm", "-rf", "."]);
        assert_eq!(words("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(words("{a,{b,c}}"), ["a", "b", "c"]);
        assert_eq!(words("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
        assert_eq!(words("x{,y}"), ["x", "xy"]);
        assert_eq!(words("{x}{a,b}"), ["{x}a", "{x}b"]);
    }

    #[test]
    fn sequences() {
        assert_eq!(words("{1..3}"), ["1", "2", "3"]);
        assert_eq!(words("{3..1}"), ["3", "2", "1"]);
        assert_eq!(words("{1..10..4}"), ["1", "5", "9"]);
        assert_eq!(words("{01..03}"), ["01", "02", "03"]);
        assert_eq!(words("{a..c}"), ["a", "b", "c"]);
        assert_eq!(words("{c..a}"), ["c", "b", "a"]);
        assert_eq!(words("{-1..1}"), ["-1", "0", "1"]);
    }

    #[test]
    fn literal_braces() {
        for s in ["{}", "{x}", "{a,b", "a}b,c{", "{1..b}", "{1...3}", "x"] {
            assert_eq!(expand(&unquoted(s)), Expansion::Literal, "{s}");
        }
        let quoted: Vec<Ch> = "{a,b}".chars().map(|c| (c, c != ',')).collect();
        assert_eq!(expand(&quoted), Expansion::Literal);
    }

    #[test]
    fn large_expansions_are_refused() {
        assert_eq!(expand(&unquoted("{1..1000}")), Expansion::TooMany);
        assert_eq!(expand(&unquoted("{1..99999999999}")), Expansion::TooMany);
        assert_eq!(
            expand(&unquoted(&"{a,b}".repeat(9))),
            Expansion::TooMany
        );
        assert_eq!(expand(&unquoted(&"{a,".repeat(100))), Expansion::TooMany);
        assert_eq!(words(&"{a,b}".repeat(8)).len(), 256);
    }
}
