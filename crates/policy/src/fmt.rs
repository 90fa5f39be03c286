//! The canonical printer behind `warden fmt`: keeps comments, re-parses to the same AST.
//!
//! Layout: one statement or item per line, bodies indented by four spaces and always written
//! over several lines, single spaces between tokens, alternatives as `(a | b)`, a blank line
//! between groups of statements and around blocks. Every comment is kept: whole-line comments
//! above their statement or item, same-line comments after it (for a block, after its `{`),
//! the comments at the end of a body before its `}`. Comments written inside a `limits { }`
//! block are printed above it.
//!
//! `parse(format(p))` has the same meaning as `p` ([`Policy::same_meaning`]), and `format` is
//! idempotent on its own output.

use crate::ast::{
    ArgAlt, Comment, Condition, ConditionKind, ExampleRequest, ExecPattern, FsAccess, Item,
    ItemKind, Limit, Net, PathRef, Policy, Rule, Sandbox, Spanned, StandaloneRule, Statement,
    StatementKind, Verdict,
};
use crate::error::Diagnostics;
use crate::parser::values::{escape, limit_text};

const INDENT: &str = "    ";

/// Prints a policy in canonical form.
///
/// # Examples
/// ```
/// let policy = warden_policy::parse("a.policy", "version 1;deny   exec rm # no\n").unwrap();
/// assert_eq!(warden_policy::format(&policy), "version 1\n\ndeny exec rm  # no\n");
/// ```
pub fn format(policy: &Policy) -> String {
    let mut out = String::new();
    let mut previous: Option<&Statement> = None;
    for statement in &policy.statements {
        if previous.is_some_and(|prev| blank_between(prev, statement)) {
            out.push('\n');
        }
        statement_text(&mut out, statement);
        previous = Some(statement);
    }
    if !policy.trailing_comments.is_empty() {
        if previous.is_some() {
            out.push('\n');
        }
        comments(&mut out, "", &policy.trailing_comments);
    }
    out
}

/// Parses and prints.
///
/// # Errors
/// Any parse error.
pub fn format_source(file: &str, text: &str) -> Result<String, Diagnostics> {
    crate::parse(file, text).map(|p| format(&p))
}

/// Statements of one group sit together; blocks and commented statements stand apart.
fn blank_between(prev: &Statement, next: &Statement) -> bool {
    fn group(kind: &StatementKind) -> u8 {
        match kind {
            StatementKind::Version(_) => 0,
            StatementKind::Default(_) | StatementKind::Opaque(_) => 1,
            StatementKind::Paths { .. } => 2,
            StatementKind::Limits(_) | StatementKind::Env(_) | StatementKind::Sandbox(_) => 3,
            StatementKind::Tier(_) => 4,
            StatementKind::Rule(_) => 5,
            StatementKind::Agent(_) => 6,
            StatementKind::Example(_) => 7,
        }
    }
    let block = |k: &StatementKind| matches!(k, StatementKind::Tier(_) | StatementKind::Agent(_));
    group(&prev.kind) != group(&next.kind)
        || block(&prev.kind)
        || block(&next.kind)
        || !next.leading.is_empty()
}

fn comments(out: &mut String, indent: &str, list: &[Comment]) {
    for c in list {
        out.push_str(indent);
        out.push('#');
        out.push_str(&c.text);
        out.push('\n');
    }
}

fn trailing(out: &mut String, comment: Option<&Comment>) {
    if let Some(c) = comment {
        out.push_str("  #");
        out.push_str(&c.text);
    }
}

fn statement_text(out: &mut String, st: &Statement) {
    comments(out, "", &st.leading);
    match &st.kind {
        StatementKind::Version(v) => out.push_str(&format!("version {}", v.node)),
        StatementKind::Default(v) => out.push_str(&format!("default {}", verdict(v.node))),
        StatementKind::Opaque(v) => out.push_str(&format!("opaque {}", verdict(v.node))),
        StatementKind::Paths { name, members } => {
            out.push_str(&format!("paths {} = {}", name.node, path_list(members)));
        }
        StatementKind::Tier(t) => {
            let lock = if t.lock.is_some() { "lock " } else { "" };
            let reason = t.reason.as_ref().map(|r| format!(" {}", escape(&r.node)));
            let head = format!(
                "{lock}tier {}: {}{}",
                t.name.node,
                verdict(t.verdict.node),
                reason.unwrap_or_default()
            );
            block(out, &head, st.trailing.as_ref(), &t.items, &t.end_comments);
            return;
        }
        StatementKind::Agent(a) => {
            let extends = a.extends.as_ref().map(|e| format!(" extends {}", e.node));
            let head = format!("agent {}{}", a.name.node, extends.unwrap_or_default());
            block(out, &head, st.trailing.as_ref(), &a.items, &a.end_comments);
            return;
        }
        StatementKind::Rule(r) => out.push_str(&standalone(r)),
        StatementKind::Limits(l) => out.push_str(&limits(l)),
        StatementKind::Env(e) => out.push_str(&format!("env {}", tokens(e, false))),
        StatementKind::Sandbox(s) => out.push_str(&sandbox(&s.node)),
        StatementKind::Example(e) => {
            let agent = e.agent.as_ref().map(|a| format!(" agent {}", a.node));
            let request = match &e.request {
                ExampleRequest::Command(c) => escape(&c.node),
                ExampleRequest::Tool { name, path } => {
                    let path = path.as_ref().map(|p| format!(" {}", escape(&p.node)));
                    format!(
                        "tool {}{}",
                        token(&name.node, false),
                        path.unwrap_or_default()
                    )
                }
            };
            out.push_str(&format!(
                "example {}{} {request}",
                verdict(e.verdict.node),
                agent.unwrap_or_default()
            ));
        }
    }
    trailing(out, st.trailing.as_ref());
    out.push('\n');
}

fn block(out: &mut String, head: &str, header: Option<&Comment>, items: &[Item], end: &[Comment]) {
    out.push_str(head);
    if items.is_empty() && end.is_empty() && header.is_none() {
        out.push_str(" { }\n");
        return;
    }
    out.push_str(" {");
    trailing(out, header);
    out.push('\n');
    for (i, item) in items.iter().enumerate() {
        if i > 0 && !item.leading.is_empty() {
            out.push('\n');
        }
        comments(out, INDENT, &item.leading);
        out.push_str(INDENT);
        out.push_str(&item_text(&item.kind));
        trailing(out, item.trailing.as_ref());
        out.push('\n');
    }
    comments(out, INDENT, end);
    out.push_str("}\n");
}

fn item_text(kind: &ItemKind) -> String {
    match kind {
        ItemKind::Rule(r) => rule(r),
        ItemKind::Standalone(s) => standalone(s),
        ItemKind::Limits(l) => limits(l),
        ItemKind::Env(e) => format!("env {}", tokens(e, false)),
        ItemKind::Sandbox(s) => sandbox(&s.node),
        ItemKind::Tiers(t) => {
            format!(
                "tiers {}",
                t.iter()
                    .map(|n| n.node.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        ItemKind::Default(v) => format!("default {}", verdict(v.node)),
        ItemKind::Opaque(v) => format!("opaque {}", verdict(v.node)),
    }
}

fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::Ask => "ask",
        Verdict::Deny => "deny",
    }
}

/// A word if it can be written bare (in a pattern: and is not `unless`, `with` or `into`),
/// else a string.
fn token(s: &str, in_pattern: bool) -> String {
    let bare = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./+@%:=^~-*?".contains(c))
        && !(in_pattern && matches!(s, "unless" | "with" | "into"));
    if bare { s.to_string() } else { escape(s) }
}

fn tokens(list: &[Spanned<String>], in_pattern: bool) -> String {
    list.iter()
        .map(|t| token(&t.node, in_pattern))
        .collect::<Vec<_>>()
        .join(", ")
}

fn alternatives(list: &[Spanned<String>]) -> String {
    match list {
        [one] => token(&one.node, true),
        _ => format!(
            "({})",
            list.iter()
                .map(|t| token(&t.node, true))
                .collect::<Vec<_>>()
                .join(" | ")
        ),
    }
}

fn path_list(list: &[PathRef]) -> String {
    list.iter()
        .map(|p| match p {
            PathRef::Pattern(s) => escape(&s.node),
            PathRef::Set(s) => s.node.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn limits(list: &[Spanned<Limit>]) -> String {
    if list.is_empty() {
        return String::from("limits { }");
    }
    let inner: Vec<String> = list.iter().map(|l| limit_text(&l.node)).collect();
    format!("limits {{ {} }}", inner.join(", "))
}

fn sandbox(s: &Sandbox) -> String {
    match s {
        Sandbox::Native => String::from("sandbox native"),
        Sandbox::Wasi { image: None } => String::from("sandbox wasi"),
        Sandbox::Wasi { image: Some(i) } => format!("sandbox wasi image {}", token(i, false)),
    }
}

fn standalone(s: &StandaloneRule) -> String {
    let lock = if s.lock.is_some() { "lock " } else { "" };
    let reason = s.reason.as_ref().map(|r| format!(" {}", escape(&r.node)));
    format!(
        "{lock}{}{} {}",
        verdict(s.verdict.node),
        reason.unwrap_or_default(),
        rule(&s.rule)
    )
}

fn rule(r: &Rule) -> String {
    match r {
        Rule::Tools(t) => format!("tools {}", tokens(t, false)),
        Rule::Exec(patterns) => {
            format!(
                "exec {}",
                patterns.iter().map(pattern).collect::<Vec<_>>().join(", ")
            )
        }
        Rule::Pipe { from, into } => format!("pipe {} into {}", pattern(from), pattern(into)),
        Rule::Fs {
            access,
            paths,
            except,
        } => {
            let access = match access.node {
                FsAccess::Read => "read",
                FsAccess::Write => "write",
            };
            let mut s = format!("fs {access} {}", path_list(paths));
            if !except.is_empty() {
                s.push_str(&format!(" except {}", path_list(except)));
            }
            s
        }
        Rule::Net(n) => match &n.node {
            Net::None => String::from("net none"),
            Net::Any => String::from("net any"),
            Net::Hosts(h) => format!(
                "net hosts {}",
                h.iter()
                    .map(|h| escape(&h.node))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
}

fn pattern(p: &ExecPattern) -> String {
    let mut parts = vec![alternatives(&p.command)];
    parts.extend(p.args.iter().map(arg));
    parts.extend(p.conditions.iter().map(condition));
    parts.join(" ")
}

fn arg(a: &ArgAlt) -> String {
    let seq = |s: &Vec<Spanned<String>>| {
        s.iter()
            .map(|t| token(&t.node, true))
            .collect::<Vec<_>>()
            .join(" ")
    };
    match a.alternatives.as_slice() {
        [one] if one.len() == 1 => seq(one),
        alts => format!("({})", alts.iter().map(seq).collect::<Vec<_>>().join(" | ")),
    }
}

fn condition(c: &Condition) -> String {
    let kw = match c.kind {
        ConditionKind::Unless => "unless",
        ConditionKind::With => "with",
    };
    format!("{kw} {}", alternatives(&c.flags))
}
