//! A pest error becomes one [`Code::Parse`] diagnostic that says, in words, what was expected
//! and what was found, with advice where the fix can be guessed.

use pest::error::{ErrorVariant, InputLocation};
use pest::error::Error;

use super::Rule;
use super::values::nearest;
use crate::error::{Code, Diagnostic};

const STATEMENT_KEYWORDS: [&str; 14] = [
    "version", "default", "opaque", "paths", "tier", "limits", "env", "sandbox", "agent",
    "example", "lock", "allow", "ask", "deny",
];
const ITEM_KEYWORDS: [&str; 15] = [
    "tiers", "default", "opaque", "limits", "env", "sandbox", "lock", "allow", "ask", "deny",
    "tools", "exec", "pipe", "fs", "net",
];
const RULE_KEYWORDS: [&str; 5] = ["tools", "exec", "pipe", "fs", "net"];
const VERDICTS: [&str; 3] = ["allow", "ask", "deny"];

/// What a rule stands for in a message; `None` for rules never worth naming.
fn describe(r: Rule) -> Option<(u8, &'static str)> {
    use Rule as R;
    Some(match r {
        R::version_stmt | R::default_stmt | R::opaque_stmt | R::paths_stmt | R::tier_stmt
        | R::limits_stmt | R::env_stmt | R::sandbox_stmt | R::agent_stmt | R::example_stmt => {
            (0, "a statement (`version`, `tier`, `agent`, a rule, ...)")
        }
        R::tiers_item => (1, "a body item (a rule, `tiers`, `limits`, ...) or `}`"),
        R::standalone => (2, "a rule with its verdict (`deny exec rm`, ...)"),
        R::tools_rule | R::exec_rule | R::pipe_rule | R::fs_rule | R::net_rule => {
            (3, "a rule (`tools`, `exec`, `pipe`, `fs` or `net`)")
        }
        R::verdict => (4, "a verdict (`allow`, `ask` or `deny`)"),
        R::lock => (5, "`lock`"),
        R::name | R::set_name => (6, "a name"),
        R::number => (7, "a whole number"),
        R::colon => (8, "`:`"),
        R::equals => (9, "`=`"),
        R::body | R::lbrace => (10, "`{`"),
        R::path_list => (11, "a path (a string or the name of a `paths` set)"),
        R::fs_access => (12, "`read` or `write`"),
        R::net_none | R::net_any | R::net_hosts => (13, "`none`, `any` or `hosts`"),
        R::pattern | R::command => (14, "a command pattern"),
        R::arg | R::seq => (15, "an argument"),
        R::condition | R::cond_kw => (16, "`unless` or `with`"),
        R::limit => (17, "a limit such as `timeout 5m`"),
        R::example_tool | R::kw_tool => (18, "`tool`"),
        R::string | R::unclosed_string => (19, "a string"),
        R::word | R::pword => (20, "a word"),
        R::lparen => (21, "`(`"),
        R::bar => (22, "`|`"),
        R::rparen => (23, "`)`"),
        R::kw_extends => (24, "`extends`"),
        R::kw_except => (25, "`except`"),
        R::kw_into => (26, "`into`"),
        R::kw_image => (27, "`image`"),
        R::kw_agent => (28, "`agent`"),
        R::kw_hosts => (29, "`hosts`"),
        R::kw_tier => (30, "`tier`"),
        R::rbrace => (31, "`}`"),
        R::end => (32, "the end of the statement (a newline or `;`)"),
        R::item_end => (33, "the end of the item (a newline, `;` or `}`)"),
        R::EOI => (34, "the end of the file"),
        _ => return None,
    })
}

/// Punctuation pest tried as a literal, worth naming.
fn describe_literal(token: &str) -> Option<(u8, &'static str)> {
    Some(match token {
        ":" => (8, "`:`"),
        "=" => (9, "`=`"),
        "{" => (10, "`{`"),
        "," => (24, "`,`"),
        "(" => (21, "`(`"),
        "|" => (22, "`|`"),
        ")" => (23, "`)`"),
        "}" => (31, "`}`"),
        _ => return None,
    })
}

/// The text at `pos`, for "found ...".
fn found_at(text: &str, pos: usize) -> (String, Option<String>) {
    let rest = text.get(pos..).unwrap_or_default();
    let Some(first) = rest.chars().next() else {
        return (String::from("the end of the file"), None);
    };
    if first == '\n' || rest.starts_with("\r\n") {
        return (String::from("the end of the line"), None);
    }
    let is_word = |c: char| c.is_alphanumeric() || "_./+@%:=^~-*?".contains(c);
    let word: String = if is_word(first) {
        rest.chars().take_while(|c| is_word(*c)).take(40).collect()
    } else {
        first.to_string()
    };
    let shown = word.replace('`', "'");
    (format!("`{shown}`"), is_word(first).then_some(word))
}

/// Converts a pest error.
pub(crate) fn from_pest(file: &str, text: &str, err: &Error<Rule>) -> Diagnostic {
    let pos = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    let positives: Vec<Rule> = match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => positives.clone(),
        ErrorVariant::CustomError { message } => {
            let d = Diagnostic::new(
                Code::Source,
                file,
                text,
                pos..pos,
                format!("policy is too complex to parse: {message}"),
            );
            return d.with_help("simplify the policy or split it into several files");
        }
    };
    let mut expected: Vec<(u8, &'static str)> = positives.iter().filter_map(|r| describe(*r)).collect();
    if let Some(attempts) = err.parse_attempts() {
        if attempts.max_position == pos {
            for token in attempts.expected_tokens() {
                if let Some(d) = describe_literal(&token.to_string()) {
                    expected.push(d);
                }
            }
        }
    }
    expected.sort_unstable();
    expected.dedup();
    // A statement or item can always start where the file or body could end: name the bigger
    // thing only.
    if expected.iter().any(|(rank, _)| *rank <= 1) {
        expected.retain(|(rank, _)| *rank <= 1 || *rank == 31);
    }
    let (found, word) = found_at(text, pos);
    let words: Vec<&str> = expected.iter().map(|(_, d)| *d).collect();
    let message = match words.split_last() {
        None => format!("unexpected {found}"),
        Some((last, [])) => format!("expected {last}, found {found}"),
        Some((last, rest)) => format!("expected {} or {last}, found {found}", rest.join(", ")),
    };
    let end = word.as_ref().map_or(pos, |w| pos + w.len()).max(pos);
    let end = if end == pos && pos < text.len() {
        pos + text.get(pos..).and_then(|s| s.chars().next()).map_or(0, char::len_utf8)
    } else {
        end
    };
    let mut d = Diagnostic::new(Code::Parse, file, text, pos..end, message);
    if let Some(help) = advice(&positives, &expected, &found, word.as_deref()) {
        d = d.with_help(help);
    }
    d
}

fn advice(positives: &[Rule], expected: &[(u8, &str)], found: &str, word: Option<&str>) -> Option<String> {
    let has = |r: Rule| positives.contains(&r);
    let ranks = |n: u8| expected.iter().any(|(rank, _)| *rank == n);
    if let Some(word) = word {
        let lists: [(&[&str], bool); 6] = [
            (&VERDICTS, has(Rule::verdict)),
            (&STATEMENT_KEYWORDS, ranks(0)),
            (&ITEM_KEYWORDS, ranks(1)),
            (&RULE_KEYWORDS, ranks(3)),
            (&["read", "write"], has(Rule::fs_access)),
            (&["none", "any", "hosts"], ranks(13)),
        ];
        for (candidates, applies) in lists {
            if let Some(near) = applies.then(|| nearest(word, candidates)).flatten() {
                return Some(format!("did you mean `{near}`?"));
            }
        }
        if ranks(6) && ranks(8) {
            return None;
        }
    }
    if found == "`|`" && !ranks(22) {
        return Some(String::from(
            "`|` separates alternatives only inside `( )`, as in `git (status | diff)`",
        ));
    }
    if found == "`)`" && !ranks(23) {
        return Some(String::from("this `)` closes no `(`"));
    }
    if found == "the end of the file" && ranks(31) {
        return Some(String::from("a `{` is not closed"));
    }
    if found == "the end of the line" && ranks(23) {
        return Some(String::from("a `(` is not closed on this line"));
    }
    if found == "`{`" && ranks(8) {
        return Some(String::from("a tier is written `tier NAME: VERDICT { ... }`"));
    }
    if ranks(6) && has(Rule::name) {
        return Some(String::from("names start with a letter or `_`"));
    }
    None
}
