//! The fast parser's atomic rules: blanks, keywords, words, names, numbers, strings and
//! comments, matched exactly as `grammar.pest` defines them.
//!
//! Every byte it looks for is ASCII, which never occurs inside a multi-byte UTF-8 character, so
//! positions move by bytes and stay on character boundaries; a non-ASCII character is decoded
//! only where a character class must be decided.

use super::{Fast, Parsed};
use crate::ast::{Comment, ConditionKind, Spanned, Verdict};
use crate::parser::values;

/// A character of `word` (and of `pword`, `fword`).
const WORD: u8 = 1;
/// A character of `name_char`.
const NAME: u8 = 2;
/// A character that starts a `name`.
const START: u8 = 4;

/// The classes of each byte, spelled as the grammar's ranges; none for the bytes of non-ASCII
/// characters, which [`wide_in`] classifies.
const CLASSES: [u8; 256] = classes();

#[allow(clippy::indexing_slicing)] // Evaluated at compile time: an index out of range fails the build.
const fn classes() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 128 {
        let c = i as u8;
        let mut class = 0;
        // word: 'a'..'z' | '-'..'9' | '?'..'Z' | '^'..'_' | '*'..'+' | ":" | "=" | "%" | "~"
        if matches!(c, b'a'..=b'z' | b'-'..=b'9' | b'?'..=b'Z' | b'^'..=b'_' | b'*'..=b'+')
            || matches!(c, b':' | b'=' | b'%' | b'~')
        {
            class |= WORD;
        }
        // name_char: 'a'..'z' | '0'..'9' | 'A'..'Z' | '-'..'.' | "_"
        if matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'A'..=b'Z' | b'-'..=b'.' | b'_') {
            class |= NAME;
        }
        // the start of a name: 'a'..'z' | 'A'..'Z' | "_"
        if matches!(c, b'a'..=b'z' | b'A'..=b'Z' | b'_') {
            class |= START;
        }
        table[i] = class;
        i += 1;
    }
    table
}

/// The classes of a byte.
fn class_of(b: u8) -> u8 {
    CLASSES.get(usize::from(b)).copied().unwrap_or_default()
}

/// Whether a non-ASCII character belongs to `class`. These are pest's own tables for `LETTER`
/// and `NUMBER` (the Unicode general categories L and N): `pest::unicode` is hidden from pest's
/// docs, but it is what the code pest_derive generates calls, so the two parsers cannot disagree
/// on a character; should a pest upgrade change that, the unit test below, which sweeps code
/// points through the generated rules, fails. No non-ASCII character is in the ranges.
fn wide_in(c: char, class: u8) -> bool {
    use pest::unicode::{LETTER, NUMBER};
    if class == START {
        LETTER(c)
    } else {
        LETTER(c) || NUMBER(c)
    }
}

impl<'a> Fast<'a> {
    /// The byte at `p`.
    pub(super) fn byte(self, p: usize) -> Option<u8> {
        self.bytes.get(p).copied()
    }

    /// Whether the text at `p` starts with `literal`.
    pub(super) fn looking_at(self, p: usize, literal: &[u8]) -> bool {
        self.bytes
            .get(p..)
            .is_some_and(|rest| rest.starts_with(literal))
    }

    /// `WHITESPACE*`: spaces, tabs and carriage returns.
    pub(super) fn skip(self, mut p: usize) -> usize {
        while let Some(b' ' | b'\t' | b'\r') = self.byte(p) {
            p += 1;
        }
        p
    }

    /// The length of the character at `p` if it belongs to `class`.
    #[inline]
    fn class_len(self, p: usize, class: u8) -> Option<usize> {
        let b = self.byte(p)?;
        if b.is_ascii() {
            return (class_of(b) & class != 0).then_some(1);
        }
        let c = self.text.get(p..)?.chars().next()?;
        wide_in(c, class).then(|| c.len_utf8())
    }

    /// The end of the run of `class` characters from `p`.
    fn run(self, mut p: usize, class: u8) -> usize {
        loop {
            // ASCII by table, up to a byte outside the class or of a non-ASCII character.
            let rest = self.bytes.get(p..).unwrap_or_default();
            p += rest
                .iter()
                .position(|&b| class_of(b) & class == 0)
                .unwrap_or(rest.len());
            match self.class_len(p, class) {
                Some(n) => p += n,
                None => return p,
            }
        }
    }

    /// Whether a `word` character is at `p`.
    pub(super) fn at_word(self, p: usize) -> bool {
        self.class_len(p, WORD).is_some()
    }

    /// The run of name characters at `p`, and where it ends. A keyword rule (`"tier" ~
    /// !name_char`) matches at `p` exactly when this run is the keyword.
    pub(super) fn keyword(self, p: usize) -> (&'a str, usize) {
        let end = self.run(p, NAME);
        (self.text.get(p..end).unwrap_or_default(), end)
    }

    /// The text from `start` to `end` as a spanned string.
    fn spanned(self, start: usize, end: usize) -> Parsed<Spanned<String>> {
        let node = self.text.get(start..end)?.to_string();
        Some((
            Spanned {
                node,
                span: start..end,
            },
            end,
        ))
    }

    /// `word`: one or more word characters.
    pub(super) fn word(self, p: usize) -> Parsed<Spanned<String>> {
        let end = self.run(p, WORD);
        if end == p {
            return None;
        }
        self.spanned(p, end)
    }

    /// `name`: a letter or `_`, then name characters.
    pub(super) fn name(self, p: usize) -> Parsed<Spanned<String>> {
        let first = self.class_len(p, START)?;
        let end = self.run(p + first, NAME);
        self.spanned(p, end)
    }

    /// `number`: one or more ASCII digits.
    pub(super) fn number(self, p: usize) -> Option<usize> {
        let mut end = p;
        while self.byte(end).is_some_and(|b| b.is_ascii_digit()) {
            end += 1;
        }
        (end > p).then_some(end)
    }

    /// `verdict`: `allow`, `ask` or `deny`, not followed by a name character.
    pub(super) fn verdict(self, p: usize) -> Parsed<Spanned<Verdict>> {
        let (word, end) = self.keyword(p);
        let node = match word {
            "allow" => Verdict::Allow,
            "ask" => Verdict::Ask,
            "deny" => Verdict::Deny,
            _ => return None,
        };
        Some((Spanned { node, span: p..end }, end))
    }

    /// `cond_kw`: `unless` or `with`, not followed by a word character.
    pub(super) fn cond_kw(self, p: usize) -> Option<(ConditionKind, usize)> {
        let (kind, end) = if self.looking_at(p, b"unless") {
            (ConditionKind::Unless, p + 6)
        } else if self.looking_at(p, b"with") {
            (ConditionKind::With, p + 4)
        } else {
            return None;
        };
        (!self.at_word(end)).then_some((kind, end))
    }

    /// `kw_into`: `into`, not followed by a word character.
    pub(super) fn kw_into(self, p: usize) -> Option<usize> {
        (self.looking_at(p, b"into") && !self.at_word(p + 4)).then_some(p + 4)
    }

    /// Whether `ptoken` (or, in the feeding side of a pipe, `ftoken`) matches at `p`: a string,
    /// or a word that is not a reserved keyword.
    pub(super) fn at_ptoken(self, p: usize, pipe: bool) -> bool {
        match self.byte(p) {
            Some(b'"') => true,
            // Only `unless`, `with` and `into` are reserved: look at their first letter first.
            Some(b'u' | b'w') => self.cond_kw(p).is_none(),
            Some(b'i') if pipe => self.kw_into(p).is_none(),
            _ => self.at_word(p),
        }
    }

    /// `ptoken` (`ftoken` when `pipe`). `None` where [`Self::at_ptoken`] is false, and for a
    /// string that is not clean.
    pub(super) fn ptoken(self, p: usize, pipe: bool) -> Parsed<Spanned<String>> {
        if self.byte(p) == Some(b'"') {
            return self.string(p);
        }
        if !self.at_ptoken(p, pipe) {
            return None;
        }
        self.word(p)
    }

    /// `token`: a word or a string.
    pub(super) fn token(self, p: usize) -> Parsed<Spanned<String>> {
        if self.byte(p) == Some(b'"') {
            self.string(p)
        } else {
            self.word(p)
        }
    }

    /// A closed `string` at `p`, unescaped. `None` for anything else, including an
    /// `unclosed_string` or an unknown escape (both errors).
    pub(super) fn string(self, p: usize) -> Parsed<Spanned<String>> {
        if self.byte(p) != Some(b'"') {
            return None;
        }
        let mut i = p + 1;
        let close = loop {
            let at = self
                .bytes
                .get(i..)?
                .iter()
                .position(|b| matches!(b, b'"' | b'\\' | b'\n'))?;
            i += at;
            match self.byte(i)? {
                b'"' => break i,
                // `"\\" ~ (!"\n" ~ ANY)`: the byte after may start a multi-byte character; its
                // continuation bytes are never one of the three looked for.
                b'\\' if self.byte(i + 1).is_some_and(|b| b != b'\n') => i += 2,
                _ => return None,
            }
        };
        let node = values::unescape(self.text.get(p + 1..close)?).ok()?;
        let end = close + 1;
        Some((Spanned { node, span: p..end }, end))
    }

    /// A `comment` at `p` (which holds `#`): its text runs up to `\r\n`, `\n` or the end; its
    /// span, like every span of the tree builder, leaves out trailing blanks.
    pub(super) fn comment(self, p: usize) -> Parsed<Comment> {
        let start = p + 1;
        let rest = self.bytes.get(start..)?;
        let end = match rest.iter().position(|&b| b == b'\n') {
            Some(at) if at > 0 && rest.get(at - 1) == Some(&b'\r') => start + at - 1,
            Some(at) => start + at,
            None => self.bytes.len(),
        };
        let text = self.text.get(start..end)?;
        let kept = self
            .text
            .get(p..end)?
            .trim_end_matches([' ', '\t', '\r'])
            .len();
        let comment = Comment {
            text: text.to_string(),
            span: p..p + kept,
        };
        Some((comment, end))
    }
}

#[cfg(test)]
mod tests {
    use pest::Parser as _;

    use super::Fast;
    use crate::parser::Rule;
    use crate::parser::fast::lists::Scratch;
    use crate::parser::grammar::PolicyParser;

    /// The whole of `text` parses as `rule` in the generated parser.
    fn pest_whole(rule: Rule, text: &str) -> bool {
        PolicyParser::parse(rule, text)
            .ok()
            .and_then(|mut pairs| pairs.next())
            .is_some_and(|p| p.as_str() == text)
    }

    /// The whole of `text` matches one of the fast parser's atomic rules.
    fn fast_whole(
        text: &str,
        rule: impl Fn(Fast<'_>) -> Option<(crate::ast::Spanned<String>, usize)>,
    ) -> bool {
        let scratch = Scratch::default();
        let fast = Fast {
            text,
            bytes: text.as_bytes(),
            scratch: &scratch,
        };
        rule(fast).is_some_and(|(_, end)| end == text.len())
    }

    #[test]
    fn character_classes_are_the_generated_parsers() {
        // Every code point below U+0800 (Latin, Greek, Cyrillic, Hebrew, Arabic, with their
        // marks) and every 31st one above, surrogates excepted.
        let chars = (0..0x11_0000u32)
            .filter(|n| *n < 0x800 || n % 31 == 0)
            .filter_map(char::from_u32);
        let mut checked = 0;
        for c in chars {
            let word = c.to_string();
            let named = format!("a{c}");
            let w = fast_whole(&word, |f| f.word(0));
            assert_eq!(w, pest_whole(Rule::word, &word), "word {c:?}");
            let starts = fast_whole(&word, |f| f.name(0));
            assert_eq!(starts, pest_whole(Rule::name, &word), "name start {c:?}");
            let continues = fast_whole(&named, |f| f.name(0));
            assert_eq!(continues, pest_whole(Rule::name, &named), "name char {c:?}");
            let scratch = Scratch::default();
            let after = Fast {
                text: &named,
                bytes: named.as_bytes(),
                scratch: &scratch,
            };
            let keyword = after.keyword(0).1 == named.len();
            assert_eq!(keyword, continues, "keyword boundary {c:?}");
            checked += 1;
        }
        assert!(checked > 30_000, "{checked}");
    }
}
