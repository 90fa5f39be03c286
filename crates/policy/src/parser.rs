//! pest parser: text -> [`crate::ast::Policy`]. `Pairs<Rule>` never leave this module.
//!
//! The grammar (`grammar.pest`) decides the shape; the tree builder ([`build`]) turns pairs into
//! the typed AST, checks what the grammar leaves open (string escapes, limit keys and values,
//! `sandbox` kinds), and attaches comments ([`attach`]). A pest error becomes one
//! [`Code::Parse`] diagnostic that names what was expected in words ([`errors`]).
//!
//! A clean file (no error of any kind) is parsed first by a hand-written parser ([`fast`]),
//! which builds the same policy several times faster or gives up; whatever it gives up on, pest
//! parses, so diagnostics always come from the pest path.
//!
//! Hostile input: the text is capped at [`MAX_POLICY_BYTES`], NUL bytes are refused, the pest
//! call count is capped, and no grammar rule is recursive, so nothing can run away or overflow
//! the stack.

mod attach;
mod build;
mod errors;
mod fast;
mod lex;
mod recover;
mod rules;
mod same;
pub(crate) mod values;

use std::num::NonZeroUsize;

use pest::Parser as _;

use crate::ast::Policy;
use crate::error::{Code, Diagnostic, Diagnostics};

/// Largest policy file accepted, in bytes.
pub const MAX_POLICY_BYTES: usize = 1024 * 1024;

/// Diagnostics reported per file at most (each holds a copy of the text).
const MAX_DIAGNOSTICS: usize = 20;

/// Syntax errors reported per file at most; each one after the first costs a parse.
const MAX_SYNTAX_ERRORS: usize = 5;

/// Files larger than this stop at their first syntax error, to bound the cost of recovery.
const RECOVERY_BYTES: usize = 64 * 1024;

/// pest calls allowed per parse. A valid 1 MiB policy needs far fewer; the cap is there so that
/// a grammar change that made backtracking explode fails visibly instead of hanging.
const CALL_LIMIT: usize = 200_000_000;

mod grammar {
    #![allow(missing_docs, clippy::all)]
    /// The generated pest parser.
    #[derive(pest_derive::Parser)]
    #[grammar = "grammar.pest"]
    pub(super) struct PolicyParser;
}

pub(crate) use grammar::Rule;

/// Parses one policy file.
///
/// # Errors
/// Every syntax error, with file, line and column: [`Code::Source`] for input over 1 MiB
/// or containing NUL bytes, [`Code::Parse`] for text that does not follow
/// the grammar, [`Code::BadValue`] for malformed limits, [`Code::Version`] for a version that
/// does not fit.
///
/// # Examples
/// ```
/// let policy = warden_policy::parse("a.policy", "version 1\ndeny exec rm\n").unwrap();
/// assert_eq!(policy.statements.len(), 2);
/// ```
pub fn parse(file: &str, text: &str) -> Result<Policy, Diagnostics> {
    check_source(file, text)?;
    // A policy from the fast parser is the one the pest path below returns as `Ok`: no
    // lexical finding, the first pest parse succeeds, the builder finds nothing.
    if let Some(policy) = fast::parse(text) {
        return Ok(policy);
    }
    pest::set_call_limit(NonZeroUsize::new(CALL_LIMIT));
    let lexical = lex::check(file, text);
    let mut syntax = Vec::new();
    // After a syntax error on a line that opens or closes no brace, that line is blanked and
    // the text parsed again, to report a few more errors at once. Offsets do not move.
    let mut current = String::new();
    loop {
        let source = if syntax.is_empty() {
            text
        } else {
            current.as_str()
        };
        let pairs = match grammar::PolicyParser::parse(Rule::file, source) {
            Ok(pairs) => pairs,
            Err(err) => {
                let err = detailed(source).unwrap_or(err);
                let pos = errors::position(&err);
                syntax.push(errors::from_pest(file, text, &err));
                let more = syntax.len() < MAX_SYNTAX_ERRORS && text.len() <= RECOVERY_BYTES;
                if syntax.len() == 1 {
                    current = text.to_string();
                }
                if more && recover::blank_line(&mut current, pos) {
                    continue;
                }
                return Err(merge(lexical, syntax, Vec::new()));
            }
        };
        let built = build_tree(file, text, pairs.into_iter().next());
        if syntax.is_empty() && lexical.is_empty() {
            return built;
        }
        let found = built.err().map(|d| d.0).unwrap_or_default();
        return Err(merge(lexical, syntax, found));
    }
}

/// Parses a file that has no error: `Some` exactly when [`parse`] would return `Ok` (the same
/// policy), `None` otherwise, without collecting any diagnostic. It never touches pest's
/// process-wide error-detail switch, so several may run on threads side by side; a file that
/// fails goes through [`parse`] for its diagnostics.
pub(crate) fn parse_clean(file: &str, text: &str) -> Option<Policy> {
    check_source(file, text).ok()?;
    if let Some(policy) = fast::parse(text) {
        return Some(policy);
    }
    if !lex::check(file, text).is_empty() {
        return None;
    }
    pest_clean(file, text)
}

/// The pest path of [`parse_clean`], for text already checked by [`check_source`] and
/// [`lex::check`].
fn pest_clean(file: &str, text: &str) -> Option<Policy> {
    pest::set_call_limit(NonZeroUsize::new(CALL_LIMIT));
    let pairs = grammar::PolicyParser::parse(Rule::file, text).ok()?;
    build_tree(file, text, pairs.into_iter().next()).ok()
}

/// The two parsers of a clean file one by one, for the differential test and the fuzz oracle
/// (`fuzz/src/policy.rs`). Not part of the API.
#[doc(hidden)]
pub mod differential {
    use crate::ast::Policy;

    /// The fast path as [`crate::parse`] takes it: the fast parser after the size and NUL
    /// checks.
    pub fn fast(file: &str, text: &str) -> Option<Policy> {
        super::check_source(file, text).ok()?;
        super::fast::parse(text)
    }

    /// What `parse` gives for a clean file through pest and the tree builder alone: `Some`
    /// exactly when it has no diagnostic of any kind.
    pub fn pest(file: &str, text: &str) -> Option<Policy> {
        super::check_source(file, text).ok()?;
        if !super::lex::check(file, text).is_empty() {
            return None;
        }
        super::pest_clean(file, text)
    }
}

/// The typed tree of a parse, with the builder's own checks.
fn build_tree(file: &str, text: &str, root: Option<pest::iterators::Pair<'_, Rule>>) -> Result<Policy, Diagnostics> {
    let mut builder = build::Builder::new(file, text);
    let empty = Policy {
        statements: Vec::new(),
        trailing_comments: Vec::new(),
    };
    let policy = root.map_or(empty, |root| builder.file(root));
    builder.finish(policy)
}

/// Parses again with pest's detailed error tracking (the literal tokens it tried), which is
/// too slow to keep on for text that parses.
fn detailed(text: &str) -> Option<pest::error::Error<Rule>> {
    pest::set_error_detail(true);
    let result = grammar::PolicyParser::parse(Rule::file, text).err();
    pest::set_error_detail(false);
    result
}

/// Lexical, syntax and tree-building errors in source order, without repeats. A syntax error
/// at or after the first lexical one is most likely its consequence, and is dropped.
fn merge(lexical: Vec<Diagnostic>, syntax: Vec<Diagnostic>, built: Vec<Diagnostic>) -> Diagnostics {
    let first_lexical = lexical.first().map(|d| d.span.start);
    let syntax = syntax
        .into_iter()
        .filter(|d| first_lexical.is_none_or(|at| d.span.start < at));
    let mut all = lexical;
    for d in syntax.chain(built) {
        let repeated = all
            .iter()
            .any(|e| e.span == d.span && e.message == d.message);
        if !repeated {
            all.push(d);
        }
    }
    all.sort_by_key(|d| d.span.start);
    all.truncate(MAX_DIAGNOSTICS);
    Diagnostics(all)
}

/// Refuses text that is too large or contains NUL bytes.
fn check_source(file: &str, text: &str) -> Result<(), Diagnostics> {
    if text.len() > MAX_POLICY_BYTES {
        return Err(Diagnostics(vec![
            Diagnostic::new(
                Code::Source,
                file,
                "",
                0..0,
                format!(
                    "policy file is {} bytes, more than the {} allowed",
                    text.len(),
                    MAX_POLICY_BYTES
                ),
            )
            .with_help("split the policy into several files of one layer"),
        ]));
    }
    if let Some(at) = text.find('\0') {
        return Err(Diagnostics(vec![
            Diagnostic::new(
                Code::Source,
                file,
                text,
                at..at + 1,
                "policy file contains a NUL byte",
            )
            .with_help("policy files are plain UTF-8 text"),
        ]));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use pest::Parser as _;

    use super::Rule;
    use super::grammar::PolicyParser;

    /// The whole of `text` parses as `rule`.
    fn whole(rule: Rule, text: &str) -> bool {
        PolicyParser::parse(rule, text)
            .ok()
            .and_then(|mut pairs| pairs.next())
            .is_some_and(|p| p.as_str() == text)
    }

    #[test]
    fn ascii_word_and_name_characters_are_the_documented_ones() {
        for b in 0u8..128 {
            let c = char::from(b);
            let text = c.to_string();
            let in_word = c.is_ascii_alphanumeric() || "_./+@%:=^~-*?".contains(c);
            assert_eq!(whole(Rule::word, &text), in_word, "word {c:?}");
            assert_eq!(whole(Rule::pword, &text), in_word, "pword {c:?}");
            assert_eq!(whole(Rule::fword, &text), in_word, "fword {c:?}");
            let starts_name = c.is_ascii_alphabetic() || c == '_';
            assert_eq!(whole(Rule::name, &text), starts_name, "name {c:?}");
            let in_name = c.is_ascii_alphanumeric() || "_-.".contains(c);
            assert_eq!(whole(Rule::name, &format!("a{c}")), in_name, "name char {c:?}");
        }
        assert!(whole(Rule::word, "é٣x"));
        assert!(whole(Rule::pword, "é٣x") && whole(Rule::fword, "é٣x"));
        assert!(whole(Rule::name, "ñame٣"));
    }

    #[test]
    fn strings_and_comments_end_where_they_should() {
        assert!(whole(Rule::string, r#""a\"b\\c\n""#));
        assert!(whole(Rule::string, r#""""#));
        assert!(!whole(Rule::string, "\"a\nb\""));
        assert!(!whole(Rule::string, r#""a\"#));
        assert!(whole(Rule::unclosed_string, "\"abc"));
        assert!(whole(Rule::comment_text, " a\rb"));
        for text in ["# a\r\n", "# a\n"] {
            let pairs = PolicyParser::parse(Rule::comment, text).map(|mut p| p.next());
            let got = pairs.ok().flatten().map(|p| p.as_str().to_string());
            assert_eq!(got.as_deref(), Some("# a"), "{text:?}");
        }
    }
}
