//! A pest error becomes one [`Code::Parse`] diagnostic that says, in words, what was expected
//! and what was found, with advice where the fix can be guessed.

use pest::error::Error;
use pest::error::{ErrorVariant, InputLocation};

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

const STATEMENT: (u8, &str) = (0, "a statement (`version`, `tier`, `agent`, a rule, ...)");
const ITEM: (u8, &str) = (1, "an item (a rule, `tiers`, `limits`, ...)");
const RULE: (u8, &str) = (3, "a rule (`tools`, `exec`, `pipe`, `fs` or `net`)");
const END: (u8, &str) = (32, "the end of the line");
const SEMI: (u8, &str) = (31, "`;`");

/// What pest tried at the error position, in words, ranked for the message.
fn describe_all(positives: &[Rule]) -> Vec<(u8, &'static str)> {
    use Rule as R;
    let statement = positives.contains(&R::kw_version);
    let item = !statement && positives.contains(&R::kw_tiers);
    let rule = !statement && !item && positives.contains(&R::kw_exec);
    let mut out = Vec::new();
    for r in positives {
        let keyword = matches!(
            r,
            R::kw_version
                | R::kw_default
                | R::kw_opaque
                | R::kw_paths
                | R::kw_tier
                | R::kw_tiers
                | R::kw_limits
                | R::kw_env
                | R::kw_sandbox
                | R::kw_agent
                | R::kw_example
                | R::lock
                | R::verdict
                | R::standalone
                | R::kw_tools
                | R::kw_exec
                | R::kw_pipe
                | R::kw_fs
                | R::kw_net
        );
        if *r == R::file {
            // Nothing could start at the very beginning of the file.
            out.push(STATEMENT);
        } else if statement && (keyword || *r == R::EOI || *r == R::comment) {
            out.push(STATEMENT);
        } else if item && (keyword || *r == R::comment) {
            out.push(ITEM);
        } else if rule
            && matches!(
                r,
                R::kw_tools | R::kw_exec | R::kw_pipe | R::kw_fs | R::kw_net
            )
        {
            out.push(RULE);
        } else if matches!(r, R::condition | R::pipe_condition | R::cond_kw) {
            out.push((16, "`unless`"));
            out.push((17, "`with`"));
        } else if let Some(d) = describe(*r) {
            out.push(d);
        }
    }
    out
}

/// What a rule stands for in a message; `None` for rules never worth naming.
fn describe(r: Rule) -> Option<(u8, &'static str)> {
    use Rule as R;
    Some(match r {
        R::version_stmt
        | R::default_stmt
        | R::opaque_stmt
        | R::paths_stmt
        | R::tier_stmt
        | R::limits_stmt
        | R::env_stmt
        | R::sandbox_stmt
        | R::agent_stmt
        | R::example_stmt => STATEMENT,
        R::tiers_item => ITEM,
        R::standalone => (2, "a rule with its verdict (`deny exec rm`, ...)"),
        R::tools_rule | R::exec_rule | R::pipe_rule | R::fs_rule | R::net_rule => RULE,
        R::verdict => (4, "a verdict (`allow`, `ask` or `deny`)"),
        R::lock => (5, "`lock`"),
        R::name | R::set_name => (6, "a name"),
        R::number => (7, "a whole number"),
        R::colon => (8, "`:`"),
        R::equals => (9, "`=`"),
        R::body | R::lbrace => (10, "`{`"),
        R::path_list => (11, "a path (a string or the name of a `paths` set)"),
        R::fs_access => (12, "`read` or `write`"),
        R::net_none | R::net_any | R::net_hosts | R::kw_hosts => (13, "`none`, `any` or `hosts`"),
        R::pattern | R::command | R::pipe_from | R::pipe_command => (14, "a command pattern"),
        R::arg | R::pipe_arg => (15, "an argument"),
        R::seq | R::pipe_seq => (15, "a word"),
        R::limit => (18, "a limit such as `timeout 5m`"),
        R::example_tool | R::kw_tool => (18, "`tool`"),
        R::string | R::unclosed_string => (19, "a string"),
        R::word | R::pword | R::fword => (20, "a word"),
        R::lparen => (21, "`(`"),
        R::bar => (22, "`|`"),
        R::rparen => (23, "`)`"),
        R::kw_extends => (25, "`extends`"),
        R::kw_except => (26, "`except`"),
        R::kw_into => (27, "`into`"),
        R::kw_image => (28, "`image`"),
        R::kw_agent => (29, "`agent`"),
        R::kw_tier => (30, "`tier`"),
        R::rbrace => (33, "`}`"),
        R::end | R::item_end | R::comment => END,
        R::EOI => (34, "the end of the file"),
        _ => return None,
    })
}

/// Punctuation pest tried as a literal, worth naming.
fn describe_literal(token: &str) -> Option<(u8, &'static str)> {
    Some(match token {
        "," => (24, "`,`"),
        "}" => (33, "`}`"),
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
    if first == '"' {
        return (String::from("a string"), None);
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

/// Where a pest error stands.
pub(crate) fn position(err: &Error<Rule>) -> usize {
    match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    }
}

/// Converts a pest error.
pub(crate) fn from_pest(file: &str, text: &str, err: &Error<Rule>) -> Diagnostic {
    let pos = position(err);
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
    let mut expected = describe_all(&positives);
    if let Some(attempts) = err.parse_attempts()
        && attempts.max_position == pos
    {
        for token in attempts.expected_tokens() {
            if let Some(d) = describe_literal(&token.to_string()) {
                expected.push(d);
            }
        }
    }
    if expected.contains(&END) {
        expected.push(SEMI);
    }
    expected.sort_unstable();
    expected.dedup_by(|a, b| a.1 == b.1);
    let (found, word) = found_at(text, pos);
    let ranks: Vec<u8> = expected.iter().map(|(rank, _)| *rank).collect();
    if ranks == [19, 20]
        && let Some(what) = name_in_list(text, pos)
    {
        expected = vec![(19, what)];
    }
    let words: Vec<&str> = expected.iter().map(|(_, d)| *d).collect();
    let message = match words.split_last() {
        None => format!("unexpected {found}"),
        Some((last, [])) => format!("expected {last}, found {found}"),
        Some((last, rest)) => format!("expected {} or {last}, found {found}", rest.join(", ")),
    };
    let end = word.as_ref().map_or(pos, |w| pos + w.len()).max(pos);
    let end = if end == pos && pos < text.len() {
        pos + text
            .get(pos..)
            .and_then(|s| s.chars().next())
            .map_or(0, char::len_utf8)
    } else {
        end
    };
    let mut d = Diagnostic::new(Code::Parse, file, text, pos..end, message);
    if let Some(help) = advice(
        open_paren(text, pos),
        &positives,
        &expected,
        &found,
        word.as_deref(),
    ) {
        d = d.with_help(help);
    }
    d
}

fn advice(
    open_paren: bool,
    positives: &[Rule],
    expected: &[(u8, &str)],
    found: &str,
    word: Option<&str>,
) -> Option<String> {
    let has = |r: Rule| positives.contains(&r);
    let ranks = |n: u8| expected.iter().any(|(rank, _)| *rank == n);
    if let Some(word) = word {
        if ranks(0) {
            if word == "tiers" {
                return Some(String::from(
                    "`tiers` belongs inside an agent: `agent NAME { tiers ... }`",
                ));
            }
            if RULE_KEYWORDS.contains(&word) {
                return Some(format!(
                    "a rule outside a tier needs a verdict first, as in `deny {word} ...`"
                ));
            }
        }
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
        if has(Rule::fs_access) {
            return Some(String::from("write `fs read PATHS` or `fs write PATHS`"));
        }
        if expected.len() == 1 && ranks(19) {
            return Some(format!("quote it: `\"{word}\"`"));
        }
    }
    if ranks(6) && found == "a string" {
        return Some(String::from("names are written without quotes"));
    }
    if found == "`|`" && !ranks(22) {
        return Some(String::from(
            "`|` separates alternatives only inside `( )`, as in `git (status | diff)`",
        ));
    }
    if found == "`)`" && !ranks(23) {
        return Some(String::from(if open_paren {
            "an alternative cannot be empty: write a word, or remove the `|` or the `( )`"
        } else {
            "this `)` closes no `(`"
        }));
    }
    if word.is_some() && ranks(32) {
        return Some(String::from(
            "put each statement or item on its own line, or separate them with `;`",
        ));
    }
    if found == "the end of the file" && ranks(33) {
        return Some(String::from("a `{` is not closed"));
    }
    if found == "the end of the line" && ranks(23) {
        return Some(String::from("a `(` is not closed on this line"));
    }
    if found == "`{`" && ranks(8) {
        return Some(String::from(
            "a tier is written `tier NAME: VERDICT { ... }`",
        ));
    }
    if ranks(6) {
        return Some(String::from(
            "a name is a word that starts with a letter or `_`, such as `read`",
        ));
    }
    None
}

/// Whether a `(` is open (outside strings and comments) on the line before `pos`.
fn open_paren(text: &str, pos: usize) -> bool {
    let before = text.get(..pos).unwrap_or_default();
    let line = before.rsplit('\n').next().unwrap_or_default();
    let mut depth = 0i32;
    for c in super::lex::code_chars(line) {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

/// What a bare word or string stands for, from the keyword that starts the list on this line.
fn name_in_list(text: &str, pos: usize) -> Option<&'static str> {
    let before = text.get(..pos)?;
    let line = before.rsplit('\n').next()?;
    let words: Vec<&str> = line
        .split([' ', '\t', ',', ';', '{'])
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().rev().find_map(|w| match *w {
        "tools" | "tool" => Some("a tool name (a word or a string)"),
        "env" => Some("an environment variable name (a word or a string)"),
        "image" => Some("an image name (a word or a string)"),
        _ => None,
    })
}
