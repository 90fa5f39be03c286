//! Validation of parsed layers: every problem becomes a [`Diagnostic`] with a stable code, the
//! span of the offending token and advice. Nothing is compiled when any is found.

use super::paths::check_pattern;
use super::sets::{FileAst, LayerAst, SetEnv};
use crate::ast::{
    Agent, ExampleRequest, ExecPattern, Item, ItemKind, Net, PathRef, Rule, Span, Spanned,
    StatementKind, Tier, Verdict,
};
use crate::error::{Code, Diagnostic};
use std::collections::{HashMap, HashSet};

/// A diagnostic with the position of its file in the input, for sorting.
pub(crate) type Found = (usize, Diagnostic);

struct Ctx<'a> {
    file: &'a FileAst,
    out: &'a mut Vec<Found>,
}

impl Ctx<'_> {
    fn err(&mut self, code: Code, span: &Span, message: String, help: &str) {
        let d = Diagnostic::new(code, &self.file.name, &self.file.text, span.clone(), message)
            .with_help(help);
        self.out.push((self.file.order, d));
    }
}

/// Names visible to every layer: tiers and agents (with what they extend).
struct Globals<'a> {
    tiers: HashSet<&'a str>,
    extends: HashMap<&'a str, Vec<&'a str>>,
}

fn globals(layers: &[LayerAst]) -> Globals<'_> {
    let mut g = Globals { tiers: HashSet::new(), extends: HashMap::new() };
    for layer in layers {
        for file in &layer.files {
            for st in &file.policy.statements {
                match &st.kind {
                    StatementKind::Tier(t) => {
                        g.tiers.insert(t.name.node.as_str());
                    }
                    StatementKind::Agent(a) => {
                        let e = g.extends.entry(a.name.node.as_str()).or_default();
                        if let Some(p) = &a.extends {
                            e.push(p.node.as_str());
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    g
}

/// How many agents an `extends` chain may climb: real ones climb two or three. Every agent's
/// profile merges its whole chain, so an unbounded one would make loading quadratic.
pub(crate) const MAX_AGENT_DEPTH: usize = 32;

/// What agent `name`'s `extends` chain does.
#[derive(Debug, PartialEq, Eq)]
enum Chain {
    Ends,
    /// It reaches `name` again.
    Loops,
    /// It climbs more than [`MAX_AGENT_DEPTH`] agents.
    TooDeep,
}

/// Follows agent `name`'s `extends` chain, level by level.
fn agent_chain(g: &Globals<'_>, name: &str) -> Chain {
    let mut level: Vec<&str> = g.extends.get(name).cloned().unwrap_or_default();
    let mut seen: HashSet<&str> = HashSet::new();
    for _ in 0..MAX_AGENT_DEPTH {
        if level.contains(&name) {
            return Chain::Loops;
        }
        let next: Vec<&str> =
            level.iter().filter(|n| seen.insert(n)).flat_map(|n| g.extends.get(n).into_iter().flatten().copied()).collect();
        if next.is_empty() {
            return Chain::Ends;
        }
        level = next;
    }
    Chain::TooDeep
}

/// Validates every layer; returns all diagnostics found.
pub(crate) fn validate(layers: &[LayerAst]) -> Vec<Found> {
    let mut out = Vec::new();
    let g = globals(layers);
    let env = SetEnv::new(layers);
    for (li, layer) in layers.iter().enumerate() {
        validate_layer(li, layer, &g, &env, &mut out);
    }
    out
}

/// Where a name was first defined in a layer, for duplicate messages.
type Seen = HashMap<String, (String, u32)>;

fn first_seen(seen: &mut Seen, key: String, file: &FileAst, span: &Span) -> Option<(String, u32)> {
    if let Some(prev) = seen.get(&key) {
        return Some(prev.clone());
    }
    let (line, _) = file.line_col(&file.starts, span.start);
    seen.insert(key, (file.name.clone(), line));
    None
}

fn validate_layer(
    li: usize,
    layer: &LayerAst,
    g: &Globals<'_>,
    env: &SetEnv<'_>,
    out: &mut Vec<Found>,
) {
    let mut seen = Seen::new();
    let settings = (layer_setting(layer, true), layer_setting(layer, false));
    for file in &layer.files {
        let mut cx = Ctx { file, out };
        check_version(&mut cx);
        let file_agents: HashSet<&str> = file
            .policy
            .statements
            .iter()
            .filter_map(|s| match &s.kind {
                StatementKind::Agent(a) => Some(a.name.node.as_str()),
                _ => None,
            })
            .collect();
        for st in &file.policy.statements {
            check_statement(&mut cx, &mut seen, st, (li, g, env), settings, &file_agents);
        }
    }
}

/// Reports a second definition of `kind NAME` in a layer (`name` empty for `default`/`opaque`).
fn duplicate(cx: &mut Ctx<'_>, seen: &mut Seen, kind: &str, name: &str, span: &Span) -> bool {
    let Some((f, l)) = first_seen(seen, format!("{kind}\u{0}{name}"), cx.file, span) else {
        return false;
    };
    let (message, help) = if name.is_empty() {
        (format!("duplicate `{kind}`"), format!("a layer sets `{kind}` once; it is already set at {f}:{l}"))
    } else {
        (format!("duplicate {kind} `{name}`"), format!("it is already defined at {f}:{l}; rename one"))
    };
    cx.err(Code::Duplicate, span, message, &help);
    true
}

fn check_statement(
    cx: &mut Ctx<'_>,
    seen: &mut Seen,
    st: &crate::ast::Statement,
    (li, g, env): (usize, &Globals<'_>, &SetEnv<'_>),
    (layer_default, layer_opaque): (Option<Verdict>, Option<Verdict>),
    file_agents: &HashSet<&str>,
) {
    match &st.kind {
        StatementKind::Version(_) | StatementKind::Limits(_) | StatementKind::Sandbox(_) => {}
        StatementKind::Default(_) => {
            duplicate(cx, seen, "default", "", &st.span);
        }
        StatementKind::Opaque(_) => {
            duplicate(cx, seen, "opaque", "", &st.span);
        }
        StatementKind::Paths { name, members } => {
            if !duplicate(cx, seen, "path set", &name.node, &name.span)
                && let Some((via, at)) = env.cycle(li, &name.node)
            {
                cx.err(
                    Code::PathSetCycle,
                    &at,
                    format!("path set `{}` refers to itself through `{via}`", name.node),
                    "a set may only name sets that do not lead back to it",
                );
            }
            check_paths(cx, li, env, members);
        }
        StatementKind::Tier(t) => {
            duplicate(cx, seen, "tier", &t.name.node, &t.name.span);
            check_tier(cx, li, env, t);
        }
        StatementKind::Rule(r) => check_rule(cx, li, env, &r.rule),
        StatementKind::Env(names) => check_names(cx, names, "environment variable"),
        StatementKind::Agent(a) => {
            duplicate(cx, seen, "agent", &a.name.node, &a.name.span);
            check_agent(cx, li, env, g, a, layer_default, layer_opaque);
        }
        StatementKind::Example(e) => {
            if let Some(agent) = &e.agent
                && !file_agents.contains(agent.node.as_str())
            {
                cx.err(
                    Code::UnknownAgent,
                    &agent.span,
                    format!("unknown agent `{}` in example", agent.node),
                    "examples are checked against their own file: define the agent in it",
                );
            }
            if let ExampleRequest::Tool { name, .. } = &e.request
                && name.node.is_empty()
            {
                cx.err(
                    Code::BadRule,
                    &name.span,
                    "empty tool name in example".into(),
                    "name the tool, such as `read_file`",
                );
            }
        }
    }
}

/// The first `default` (or `opaque`) a layer sets.
fn layer_setting(layer: &LayerAst, default: bool) -> Option<Verdict> {
    layer.files.iter().flat_map(|f| &f.policy.statements).find_map(|s| match (&s.kind, default) {
        (StatementKind::Default(v), true) | (StatementKind::Opaque(v), false) => Some(v.node),
        _ => None,
    })
}

fn check_version(cx: &mut Ctx<'_>) {
    let versions: Vec<(&Spanned<u32>, &Span)> = cx
        .file
        .policy
        .statements
        .iter()
        .filter_map(|s| match &s.kind {
            StatementKind::Version(v) => Some((v, &s.span)),
            _ => None,
        })
        .collect();
    match versions.as_slice() {
        [] => {
            let span = cx.file.policy.statements.first().map_or(0..0, |s| s.span.start..s.span.start);
            cx.err(
                Code::Version,
                &span,
                "missing `version 1`".into(),
                "start the file with `version 1`",
            );
        }
        [(first, _), rest @ ..] => {
            if first.node != 1 {
                cx.err(
                    Code::Version,
                    &first.span,
                    format!("unsupported version `{}`", first.node),
                    "this warden understands `version 1`",
                );
            }
            for (_, at) in rest {
                cx.err(
                    Code::Version,
                    at,
                    "`version` appears more than once".into(),
                    "keep one `version 1` at the top of the file",
                );
            }
        }
    }
}

fn check_names(cx: &mut Ctx<'_>, names: &[Spanned<String>], what: &str) {
    for n in names {
        if n.node.is_empty() {
            cx.err(Code::BadRule, &n.span, format!("empty {what} name"), "write a name or remove it");
        }
    }
}

fn check_paths(cx: &mut Ctx<'_>, li: usize, env: &SetEnv<'_>, refs: &[PathRef]) {
    for r in refs {
        match r {
            PathRef::Pattern(p) => {
                if let Err(e) = check_pattern(&p.node) {
                    cx.err(Code::BadPath, &p.span, e.message, &e.help);
                } else if p.node.trim() != p.node {
                    // ` ~/.ssh/**` is a path relative to the workspace that starts with a space.
                    cx.err(Code::BadPath, &p.span, format!("path pattern `{}` starts or ends with a space", p.node), "remove the space");
                } else if p.node.len() > 1 && p.node.ends_with('/') {
                    // `~/.ssh/` names the folder alone: a rule on it protects none of its files.
                    let folder = p.node.trim_end_matches('/');
                    cx.err(
                        Code::BadPath,
                        &p.span,
                        format!("path pattern `{}` ends with `/`, which names the folder alone, not what is in it", p.node),
                        &format!("write `{folder}/**` for everything in it, or `{folder}` for the folder"),
                    );
                }
            }
            PathRef::Set(s) => {
                if env.lookup(li, &s.node).is_none() {
                    cx.err(
                        Code::UnknownPathSet,
                        &s.span,
                        format!("unknown path set `{}`", s.node),
                        "define it with `paths NAME = \"...\"`, or quote it to use it as a path",
                    );
                }
            }
        }
    }
}

/// warden's name for a tool an agent names otherwise (its hooks map these onto warden's own
/// requests: docs/hooks.md), if `name` is one.
fn agent_spelling(name: &str) -> Option<&'static str> {
    Some(match name {
        "Bash" | "run_shell_command" => "exec",
        "Read" | "read_many_files" => "read_file",
        "Write" => "write_file",
        "Edit" | "MultiEdit" | "NotebookEdit" | "replace" => "edit_file",
        "Glob" | "Grep" | "glob" | "grep_search" | "search_file_content" => "search",
        "LS" | "list_directory" => "list_dir",
        _ => return None,
    })
}

fn check_exec(cx: &mut Ctx<'_>, p: &ExecPattern) {
    if p.command.is_empty() {
        cx.err(Code::BadRule, &p.span, "exec pattern without a command".into(), "name a command");
    }
    for c in &p.command {
        if c.node.is_empty() {
            cx.err(Code::BadRule, &c.span, "empty command word".into(), "name a command, such as `git`");
        } else if c.node.chars().any(char::is_whitespace) {
            // `exec "rm -rf"` names one argv word `rm -rf`: no program is called that.
            cx.err(
                Code::BadRule,
                &c.span,
                format!("command word `{}` holds a space: it matches a program of that exact name, which no command has", c.node),
                "write the words apart: `exec rm -rf`, or `exec rm with -rf` for the flag anywhere",
            );
        }
    }
    for slot in &p.args {
        if slot.alternatives.is_empty() || slot.alternatives.iter().any(|a| a.is_empty()) {
            cx.err(Code::BadRule, &slot.span, "empty argument alternative".into(), "write at least one token");
        }
    }
    for c in &p.conditions {
        if c.flags.is_empty() {
            cx.err(Code::BadRule, &c.span, "condition without flags".into(), "write at least one flag");
        }
        for f in &c.flags {
            if f.node.is_empty() {
                cx.err(Code::BadRule, &f.span, "empty flag".into(), "write a flag such as `-i`");
            }
        }
    }
}

fn check_rule(cx: &mut Ctx<'_>, li: usize, env: &SetEnv<'_>, rule: &Rule) {
    match rule {
        Rule::Tools(names) => {
            check_names(cx, names, "tool");
            for n in names {
                if let Some(ours) = agent_spelling(&n.node) {
                    let help = if ours == "exec" { String::from("decide commands with `exec` rules, such as `exec git status`") } else { format!("write `{ours}`") };
                    cx.err(
                        Code::BadRule,
                        &n.span,
                        format!("`{}` is an agent's name for a tool; warden decides it as `{ours}`, so this rule never matches", n.node),
                        &help,
                    );
                }
                if n.node == "exec" {
                    cx.err(
                        Code::BadRule,
                        &n.span,
                        "`exec` is not a tool name".into(),
                        "commands are decided by `exec` rules, such as `exec git status`",
                    );
                }
            }
        }
        Rule::Exec(patterns) => {
            for p in patterns {
                check_exec(cx, p);
            }
        }
        Rule::Pipe { from, into } => {
            check_exec(cx, from);
            check_exec(cx, into);
        }
        Rule::Fs { paths, except, access } => {
            if paths.is_empty() {
                cx.err(Code::BadRule, &access.span, "`fs` rule without paths".into(), "name paths or sets");
            }
            check_paths(cx, li, env, paths);
            check_paths(cx, li, env, except);
        }
        Rule::Net(n) => {
            if let Net::Hosts(hosts) = &n.node {
                check_names(cx, hosts, "host");
                if hosts.is_empty() {
                    cx.err(Code::BadRule, &n.span, "`net hosts` without hosts".into(), "name hosts");
                }
            }
        }
    }
}

fn check_tier(cx: &mut Ctx<'_>, li: usize, env: &SetEnv<'_>, t: &Tier) {
    for item in &t.items {
        match &item.kind {
            ItemKind::Rule(r) => check_rule(cx, li, env, r),
            ItemKind::Standalone(s) => cx.err(
                Code::Misplaced,
                &s.verdict.span,
                format!("a rule with its own verdict `{}` inside tier `{}`", s.verdict.node.as_str(), t.name.node),
                "rules in a tier take the tier's verdict: drop the verdict, or move the rule out",
            ),
            ItemKind::Env(names) => check_names(cx, names, "environment variable"),
            ItemKind::Limits(_) | ItemKind::Sandbox(_) => {}
            ItemKind::Tiers(_) | ItemKind::Default(_) | ItemKind::Opaque(_) => {
                misplaced_in_tier(cx, item, &t.name.node)
            }
        }
    }
}

fn misplaced_in_tier(cx: &mut Ctx<'_>, item: &Item, tier: &str) {
    let word = match item.kind {
        ItemKind::Tiers(_) => "tiers",
        ItemKind::Default(_) => "default",
        _ => "opaque",
    };
    cx.err(
        Code::Misplaced,
        &item.span,
        format!("`{word}` inside tier `{tier}`"),
        "`tiers` belongs in an agent; `default` and `opaque` at the top level or in an agent",
    );
}

fn check_agent(
    cx: &mut Ctx<'_>,
    li: usize,
    env: &SetEnv<'_>,
    g: &Globals<'_>,
    a: &Agent,
    layer_default: Option<Verdict>,
    layer_opaque: Option<Verdict>,
) {
    if let Some(p) = &a.extends {
        if !g.extends.contains_key(p.node.as_str()) {
            cx.err(
                Code::UnknownAgent,
                &p.span,
                format!("agent `{}` extends unknown agent `{}`", a.name.node, p.node),
                "define the parent agent, or remove `extends`",
            );
        } else {
            match agent_chain(g, &a.name.node) {
                Chain::Ends => {}
                Chain::Loops => cx.err(
                    Code::UnknownAgent,
                    &p.span,
                    format!("agent `{}` extends itself through `{}`", a.name.node, p.node),
                    "`extends` chains must not loop",
                ),
                Chain::TooDeep => cx.err(
                    Code::UnknownAgent,
                    &p.span,
                    format!("agent `{}` climbs more than {MAX_AGENT_DEPTH} agents through `extends`", a.name.node),
                    "flatten the chain: extend a common parent instead of each other",
                ),
            }
        }
    }
    let (mut default_seen, mut opaque_seen) = (false, false);
    for item in &a.items {
        match &item.kind {
            ItemKind::Rule(Rule::Net(_)) => {}
            ItemKind::Rule(r) => {
                check_rule(cx, li, env, r);
                cx.err(
                    Code::Misplaced,
                    &item.span,
                    format!("a rule without a verdict inside agent `{}`", a.name.node),
                    "an agent only narrows: write `deny ...` or `ask ...`",
                );
            }
            ItemKind::Standalone(s) => {
                if s.verdict.node == Verdict::Allow {
                    cx.err(
                        Code::Misplaced,
                        &s.verdict.span,
                        format!("an `allow` rule inside agent `{}`", a.name.node),
                        "an agent only narrows: use `tiers` to choose what it may do, `deny` or `ask` to restrict",
                    );
                }
                check_rule(cx, li, env, &s.rule);
            }
            ItemKind::Tiers(names) => {
                for n in names {
                    if !g.tiers.contains(n.node.as_str()) {
                        cx.err(
                            Code::UnknownTier,
                            &n.span,
                            format!("unknown tier `{}`", n.node),
                            "name a tier defined with `tier NAME: ...`",
                        );
                    }
                }
            }
            ItemKind::Default(v) | ItemKind::Opaque(v) => {
                let is_default = matches!(item.kind, ItemKind::Default(_));
                let (word, seen, policy) = if is_default {
                    ("default", &mut default_seen, layer_default.unwrap_or(Verdict::Deny))
                } else {
                    ("opaque", &mut opaque_seen, layer_opaque.unwrap_or(Verdict::Ask))
                };
                if *seen {
                    cx.err(
                        Code::Duplicate,
                        &item.span,
                        format!("duplicate `{word}` in agent `{}`", a.name.node),
                        "set it once",
                    );
                }
                *seen = true;
                if v.node < policy {
                    cx.err(
                        Code::Misplaced,
                        &v.span,
                        format!(
                            "agent `{}` sets `{word} {}`, less severe than the policy's `{}`",
                            a.name.node,
                            v.node.as_str(),
                            policy.as_str()
                        ),
                        "an agent can only narrow: use a verdict at least as severe as the policy's",
                    );
                }
            }
            ItemKind::Env(names) => check_names(cx, names, "environment variable"),
            ItemKind::Limits(_) | ItemKind::Sandbox(_) => {}
        }
    }
}
