//! Word resolution: quotes and escapes removed, run-time parts marked unknown, and the
//! command texts of `$( )` and backticks collected so the walker can analyse them.

use crate::model::Word;
use crate::brace::{self, Ch, Expansion};
use brush_parser::word::{Parameter, ParameterExpr, WordPiece, WordPieceWithSource};

/// A word after resolution.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The resolved word; for an unknown word, `text` is the raw source.
    pub word: Word,
    /// Command texts of `$( )` and backticks inside the word, in order.
    pub subs: Vec<String>,
    /// The word (or a part of it) could not be parsed.
    pub failed: bool,
    /// A static word with brace expansion: the words it expands to (then `word` is unknown,
    /// for the places where one word is expected, such as a redirect target).
    pub expanded: Option<Vec<String>>,
    /// Variables the word assigns (`${NAME:=value}`, `${NAME=value}`); an indirect one
    /// (`${!ref:=value}`) is named by `!`, which is no variable name.
    pub assigns: Vec<String>,
}

/// Parser options used for every word and program.
pub(crate) fn options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions {
        tilde_expansion_at_word_start: false,
        ..brush_parser::ParserOptions::default()
    }
}

#[derive(Default)]
struct Acc {
    text: String,
    /// Unquoted text only; quoted parts become `Q`, run-time parts `D`.
    unquoted: String,
    known: bool,
    subs: Vec<String>,
    failed: bool,
    assigns: Vec<String>,
    /// The resolved text, each character flagged `true` when unquoted (for brace expansion).
    chars: Vec<Ch>,
    /// A here-document body: `\"` keeps its backslash there.
    heredoc: bool,
}

impl Acc {
    /// Appends resolved text; `unquoted` when its braces and commas are special.
    fn push(&mut self, s: &str, unquoted: bool) {
        self.text.push_str(s);
        self.chars.extend(s.chars().map(|c| (c, unquoted)));
    }
}

/// Resolves one raw word as brush returns it.
pub(crate) fn resolve(raw: &str) -> Resolved {
    let mut acc = Acc {
        known: true,
        ..Acc::default()
    };
    match brush_parser::word::parse(raw, &options()) {
        Ok(pieces) => pieces_into(&mut acc, raw, &pieces, false),
        Err(_) => {
            acc.known = false;
            acc.failed = true;
        }
    }
    let mut expanded = None;
    if has_glob(&acc.unquoted) {
        acc.known = false;
    } else if acc.known {
        match brace::expand(&acc.chars) {
            Expansion::Literal => {}
            Expansion::Words(w) => {
                acc.known = false;
                let keep_empty = acc.chars.iter().any(|(_, unquoted)| !unquoted);
                expanded = Some(
                    w.into_iter()
                        .filter(|s| keep_empty || !s.is_empty())
                        .collect(),
                );
            }
            Expansion::TooMany => acc.known = false,
        }
    }
    // Fail closed if the expander and the shape check ever disagree.
    if expanded.is_none() && has_brace(&acc.unquoted) {
        acc.known = false;
    }
    let text = if acc.known { acc.text } else { raw.to_owned() };
    Resolved {
        word: Word {
            text,
            known: acc.known,
        },
        subs: acc.subs,
        failed: acc.failed,
        expanded,
        assigns: acc.assigns,
    }
}

/// Collects the command substitutions of a here-document body (unquoted delimiter) and says
/// whether the body is static; a static body's text is what the shell feeds, after its
/// backslash processing (`\``, `\$`, `\\`, a line continuation).
pub(crate) fn heredoc(body: &str) -> Resolved {
    let mut acc = Acc {
        known: true,
        heredoc: true,
        ..Acc::default()
    };
    match brush_parser::word::parse_heredoc(body, &options()) {
        Ok(pieces) => pieces_into(&mut acc, body, &pieces, true),
        Err(_) => {
            acc.known = false;
            acc.failed = true;
        }
    }
    let text = if acc.known { acc.text } else { body.to_owned() };
    Resolved {
        word: Word {
            text,
            known: acc.known,
        },
        subs: acc.subs,
        failed: acc.failed,
        expanded: None,
        assigns: acc.assigns,
    }
}

fn slice(raw: &str, p: &WordPieceWithSource) -> String {
    raw.get(p.start_index..p.end_index)
        .unwrap_or(raw)
        .to_owned()
}

fn pieces_into(acc: &mut Acc, raw: &str, pieces: &[WordPieceWithSource], in_dq: bool) {
    for p in pieces {
        match &p.piece {
            WordPiece::Text(s) => {
                acc.push(s, !in_dq);
                if in_dq {
                    acc.unquoted.push('Q');
                } else {
                    acc.unquoted.push_str(s);
                }
            }
            WordPiece::SingleQuotedText(s) => {
                acc.push(s, false);
                acc.unquoted.push('Q');
            }
            WordPiece::AnsiCQuotedText(s) => {
                acc.push(&decode_ansi_c(s), false);
                acc.unquoted.push('Q');
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                acc.unquoted.push('Q');
                pieces_into(acc, raw, inner, true);
            }
            WordPiece::TildeExpansion(_) => {
                let s = slice(raw, p);
                acc.push(&s, false);
                acc.unquoted.push('Q');
            }
            WordPiece::ParameterExpansion(expr) => {
                acc.known = false;
                acc.unquoted.push('D');
                if let ParameterExpr::AssignDefaultValues { parameter, indirect, .. } = expr {
                    match parameter {
                        _ if *indirect => acc.assigns.push("!".to_owned()),
                        Parameter::Named(name)
                        | Parameter::NamedWithIndex { name, .. }
                        | Parameter::NamedWithAllIndices { name, .. } => acc.assigns.push(name.clone()),
                        Parameter::Positional(_) | Parameter::Special(_) => {}
                    }
                }
                for nested in param_texts(expr) {
                    nested_into(acc, nested);
                }
            }
            WordPiece::CommandSubstitution(s) => {
                acc.known = false;
                acc.unquoted.push('D');
                acc.subs.push(s.clone());
            }
            WordPiece::BackquotedCommandSubstitution(s) => {
                acc.known = false;
                acc.unquoted.push('D');
                acc.subs.push(s.replace("\\$", "$").replace("\\\\", "\\"));
            }
            WordPiece::EscapeSequence(s) => {
                let mut chars = s.chars();
                let _backslash = chars.next();
                let rest: String = chars.collect();
                let quote_kept = acc.heredoc && rest == "\"";
                if quote_kept || (in_dq && !matches!(rest.as_str(), "$" | "`" | "\"" | "\\" | "\n")) {
                    acc.push(s, false);
                } else if rest != "\n" {
                    acc.push(&rest, false);
                }
                acc.unquoted.push('Q');
            }
            WordPiece::ArithmeticExpression(e) => {
                acc.known = false;
                acc.unquoted.push('D');
                nested_into(acc, &e.value);
            }
        }
    }
}

/// Collects substitutions inside a nested word (a `${x:-...}` operand, an arithmetic text).
fn nested_into(acc: &mut Acc, text: &str) {
    if !text.contains('$') && !text.contains('`') {
        return;
    }
    let inner = resolve(text);
    acc.subs.extend(inner.subs);
    acc.assigns.extend(inner.assigns);
    acc.failed |= inner.failed;
}

fn param_texts(expr: &ParameterExpr) -> Vec<&str> {
    let mut out: Vec<&str> = vec![];
    let param = match expr {
        ParameterExpr::Parameter { parameter, .. }
        | ParameterExpr::ParameterLength { parameter, .. }
        | ParameterExpr::Transform { parameter, .. } => Some(parameter),
        ParameterExpr::UseDefaultValues {
            parameter,
            default_value: v,
            ..
        }
        | ParameterExpr::AssignDefaultValues {
            parameter,
            default_value: v,
            ..
        }
        | ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            error_message: v,
            ..
        }
        | ParameterExpr::UseAlternativeValue {
            parameter,
            alternative_value: v,
            ..
        }
        | ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::UppercaseFirstChar {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::UppercasePattern {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            pattern: v,
            ..
        }
        | ParameterExpr::LowercasePattern {
            parameter,
            pattern: v,
            ..
        } => {
            out.extend(v.as_deref());
            Some(parameter)
        }
        ParameterExpr::Substring {
            parameter,
            offset,
            length,
            ..
        } => {
            out.push(&offset.value);
            out.extend(length.as_ref().map(|l| l.value.as_str()));
            Some(parameter)
        }
        ParameterExpr::ReplaceSubstring {
            parameter,
            pattern,
            replacement,
            ..
        } => {
            out.push(pattern);
            out.extend(replacement.as_deref());
            Some(parameter)
        }
        ParameterExpr::VariableNames { .. } | ParameterExpr::MemberKeys { .. } => None,
    };
    if let Some(Parameter::NamedWithIndex { index, .. }) = param {
        out.push(index);
    }
    out
}

/// True when unquoted text holds a glob (`*`, `?`, `[...]`, extglob `(`).
pub(crate) fn has_glob(unquoted: &str) -> bool {
    if unquoted.contains(['*', '?', '(']) {
        return true;
    }
    match unquoted.find('[') {
        Some(i) => unquoted.get(i + 1..).is_some_and(|rest| rest.contains(']')),
        None => false,
    }
}

/// True when unquoted text holds a brace expansion (`{a,b}`, `{1..3}`).
pub(crate) fn has_brace(unquoted: &str) -> bool {
    let mut rest = unquoted;
    while let Some(open) = rest.find('{') {
        let after = rest.get(open + 1..).unwrap_or("");
        if let Some(close) = after.find('}') {
            let inner = after.get(..close).unwrap_or("");
            if inner.contains(',') || inner.contains("..") {
                return true;
            }
        }
        rest = after;
    }
    false
}

/// Decodes the body of an ANSI-C quoted string (`$'...'`).
pub(crate) fn decode_ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            continue;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 2),
            'c' => {
                if let Some(x) = chars.next() {
                    out.push(char::from((x as u32 & 0x1f) as u8));
                }
                continue;
            }
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(e);
        }
        while digits.len() < max + usize::from(radix == 8) {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) if !digits.is_empty() => out.push(ch),
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(raw: &str) -> (String, bool) {
        let x = resolve(raw);
        (x.word.text, x.word.known)
    }

    #[test]
    fn quotes_and_escapes_resolve() {
        assert_eq!(r("'r'm"), ("rm".into(), true));
        assert_eq!(r("\"rm\""), ("rm".into(), true));
        assert_eq!(r("r\\m"), ("rm".into(), true));
        assert_eq!(r("$'\\x72m'"), ("rm".into(), true));
        assert_eq!(r("$'\\162m'"), ("rm".into(), true));
        assert_eq!(r("\"a\\\"b\\c\""), ("a\"b\\c".into(), true));
        assert_eq!(r("~/x"), ("~/x".into(), true));
    }

    #[test]
    fn runtime_parts_are_unknown() {
        assert_eq!(r("$x"), ("$x".into(), false));
        assert_eq!(r("${x}"), ("${x}".into(), false));
        assert_eq!(r("$((1+2))"), ("$((1+2))".into(), false));
        assert_eq!(r("r?"), ("r?".into(), false));
        assert_eq!(r("{rm,-rf}"), ("{rm,-rf}".into(), false));
        assert_eq!(r("'*'"), ("*".into(), true));
        assert_eq!(r("{}"), ("{}".into(), true));
    }

    #[test]
    fn substitutions_are_collected() {
        assert_eq!(resolve("$(rm x)").subs, vec!["rm x".to_owned()]);
        assert_eq!(resolve("\"a$(rm x)\"").subs, vec!["rm x".to_owned()]);
        assert_eq!(resolve("`rm x`").subs, vec!["rm x".to_owned()]);
        assert_eq!(resolve("${x:-$(rm x)}").subs, vec!["rm x".to_owned()]);
        assert_eq!(resolve("$(( $(rm x) + 1 ))").subs, vec!["rm x".to_owned()]);
    }
}

/// The word an option takes as its value, at `argv[*i]` (then `*i` moves past it): `Err` when
/// it is not known statically (the caller gives up on the command), `Ok(None)` past the end.
pub(crate) fn option_value<'a>(argv: &'a [Word], i: &mut usize) -> Result<Option<&'a str>, Unknown> {
    let word = argv.get(*i);
    *i += 1;
    match word {
        Some(w) if !w.known => Err(Unknown),
        w => Ok(w.map(|w| w.text.as_str())),
    }
}

/// A word known only at run time.
#[derive(Debug)]
pub(crate) struct Unknown;
