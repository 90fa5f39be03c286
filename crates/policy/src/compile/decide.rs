//! `decide`: a request becomes parts (commands, wrappers, redirects, argument paths, pipe
//! matches, opaque parts, a tool and its path), each judged across layers; the decision is the
//! most severe of them.

use super::argglob::ArgForm;
use super::exec::{CmdView, Mode, Tri, base_name};
use super::judge::{Collector, How, Judge, Judged};
use super::model::{FsEntry, LayerC};
use super::paths::{Anchors, resolve};
use super::PolicySet;
use crate::ast::{FsAccess, Verdict};
use crate::decision::{Action, Context, Decision, Part, Request, RuleRef, Subject};
use warden_shell::{Access, Analysis, SimpleCommand, Word};

/// A judged part with what the decision needs beyond [`Part`].
pub(crate) struct PartX {
    pub(crate) part: Part,
    /// Reported tier as (layer, tier).
    pub(crate) rank: Option<(usize, usize)>,
    pub(crate) base_tier: Option<usize>,
    pub(crate) rule_ids: Vec<usize>,
}

/// Most relative paths a `cd` can fan out to before relative paths count as unknown.
const MAX_CWDS: usize = 8;

/// Paths that are not file access.
const NOT_FILES: [&str; 5] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"];

pub(crate) struct Decider<'p> {
    pub(crate) set: &'p PolicySet,
    pub(crate) judge: Judge<'p>,
    pub(crate) anchors: Anchors,
    pub(crate) parts: Vec<PartX>,
}

/// Which fs rules an access is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Read,
    Write,
    /// An argument: ask/deny read rules, and deny write rules (its access is unknown).
    Argument,
}

fn entry_applies(e: &FsEntry, check: Check) -> bool {
    match check {
        // `fs write` implies read as a grant: only allow write rules match reads.
        Check::Read => e.access == FsAccess::Read || e.verdict == Verdict::Allow,
        // A deny (or ask) of `fs read` covers every access.
        Check::Write => e.access == FsAccess::Write || e.verdict != Verdict::Allow,
        Check::Argument => e.access == FsAccess::Read || e.verdict == Verdict::Deny,
    }
}

fn argv_text(argv: &[Word]) -> String {
    argv.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
}

impl<'p> Decider<'p> {
    pub(crate) fn new(set: &'p PolicySet, judge: Judge<'p>, ctx: &Context) -> Decider<'p> {
        Decider { set, judge, anchors: Anchors::new(ctx), parts: Vec::new() }
    }

    /// The reason a rule gives (computed once at compile time).
    fn rule_reason(&self, l: usize, r: usize) -> Option<std::sync::Arc<str>> {
        let rule = self.judge.layers.get(l)?.rules.get(r)?;
        Some(std::sync::Arc::clone(&rule.message))
    }

    /// Records a judged part.
    fn push(
        &mut self,
        subject: Subject,
        what: &dyn Fn() -> String,
        j: Judged,
        span: Option<std::ops::Range<usize>>,
    ) {
        let reason: std::sync::Arc<str> = match &j.how {
            How::Rules => j
                .rules
                .first()
                .and_then(|(l, r)| self.rule_reason(*l, *r))
                .unwrap_or_else(|| "decided by a rule".into()),
            How::Default => {
                format!("no rule matches `{}`; the default is {}", what(), j.verdict.as_str()).into()
            }
            How::Opaque => format!(
                "`{}` depends on words that cannot be known statically; opaque commands take {}",
                what(),
                j.verdict.as_str()
            )
            .into(),
            How::AgentTier(t) => {
                let agent = self.judge.agent.map(|a| a.name.as_str()).unwrap_or_default();
                format!("agent `{agent}` may not use tier `{t}`").into()
            }
        };
        let rule_ids: Vec<usize> = j
            .rules
            .iter()
            .filter_map(|(l, r)| self.judge.layers.get(*l)?.rules.get(*r).map(|r| r.id))
            .collect();
        let rules: Vec<RuleRef> =
            rule_ids.iter().filter_map(|id| self.set.rules.get(*id).cloned()).collect();
        let tier = j.tier.and_then(|(l, t)| self.judge.tier_arc(l, t));
        self.parts.push(PartX {
            part: Part { subject, verdict: j.verdict, tier, reason, rules, span },
            rank: j.tier,
            base_tier: j.base_tier,
            rule_ids,
        });
    }

    /// A part decided without rules (opaque words, a request problem).
    pub(crate) fn push_plain(
        &mut self,
        subject: Subject,
        verdict: Verdict,
        reason: String,
        span: Option<std::ops::Range<usize>>,
    ) {
        self.parts.push(PartX {
            part: Part { subject, verdict, tier: None, reason: reason.into(), rules: vec![], span },
            rank: None,
            base_tier: None,
            rule_ids: vec![],
        });
    }

    /// Judges a file access against the `fs` rules.
    fn path(&mut self, path: &str, check: Check, span: Option<std::ops::Range<usize>>) {
        let anchors = &self.anchors;
        let segs = super::paths::segments(path);
        let collect = |layer: &LayerC, c: &mut Collector| {
            let index = if check == Check::Argument { &layer.fs_restrict } else { &layer.fs };
            index.for_each_match(path, anchors, |e| {
                if entry_applies(e, check) && !e.except.iter().any(|x| x.matches(&segs, anchors)) {
                    c.add(e.rule, e.verdict, Tri::Yes);
                }
            });
        };
        let Some(j) = self.judge.judge(check != Check::Argument, true, collect) else { return };
        let access = match check {
            Check::Write => "write",
            Check::Read | Check::Argument => "read",
        };
        self.push(Subject::Path { access, path: path.to_string() }, &|| path.to_string(), j, span);
    }

    /// A tool call, and the path it touches.
    pub(crate) fn tool(&mut self, name: &str, path: Option<&str>) {
        let collect = |layer: &LayerC, c: &mut Collector| {
            layer.tools.for_each(name, |r| {
                if let Some(rule) = layer.rules.get(r) {
                    c.add(r, rule.verdict, Tri::Yes);
                }
            });
        };
        if let Some(j) = self.judge.judge(true, false, collect) {
            self.push(Subject::Tool { name: name.to_string() }, &|| name.to_string(), j, None);
        }
        if let Some(p) = path {
            let check = match name {
                "read_file" | "list_dir" | "search" => Check::Read,
                // write_file, edit_file, and any tool whose access is not known: a write.
                _ => Check::Write,
            };
            let abs = resolve(p, &self.anchors.cwd, &self.anchors.home);
            self.path(&abs, check, None);
        }
    }

    /// Every part of an analysed command string.
    pub(crate) fn exec(&mut self, analysis: &Analysis) {
        let mut cwds = Cwds { list: vec![self.anchors.cwd.clone()], unknown: false };
        for cmd in &analysis.commands {
            self.command(cmd);
            self.redirects(cmd, &cwds);
            self.arguments(cmd, &cwds);
            cwds.follow(cmd, &self.anchors.home);
        }
        if self.judge.layers.iter().any(|l| !l.pipes.is_empty()) {
            self.pipes(analysis);
        }
        for o in &analysis.opaque {
            let reason = serde_reason(o.reason);
            self.push_plain(
                Subject::Opaque { reason: reason.to_string(), text: o.text.clone() },
                self.judge.opaque,
                format!(
                    "`{}` cannot be known statically ({reason}); opaque commands take {}",
                    o.text,
                    self.judge.opaque.as_str()
                ),
                Some(o.span.clone()),
            );
        }
    }

    fn command(&mut self, cmd: &SimpleCommand) {
        let Some((first, args)) = cmd.argv.split_first() else { return };
        let subject = Subject::Command { argv: cmd.argv.iter().map(|w| w.text.clone()).collect() };
        if !first.known {
            let v = self.judge.opaque;
            let reason = format!(
                "the command word `{}` cannot be known statically; opaque commands take {}",
                first.text,
                v.as_str()
            );
            self.push_plain(subject, v, reason, Some(cmd.span.clone()));
            return;
        }
        let view = CmdView { argv0: Some(&first.text), name: base_name(&first.text), args };
        let wrappers: Vec<&str> = cmd.via.iter().filter_map(|v| v.split_whitespace().next()).collect();
        let judge = &self.judge;
        let code_env = cmd.assignments.iter().map(|(n, _)| n.as_str()).find(|n| loads_code(n));
        let collect = |layer: &LayerC, c: &mut Collector| {
            for e in layer.exec.candidates(&first.text, view.name) {
                if let Some(rule) = layer.rules.get(e.rule) {
                    let mut tri = e.matcher.matches(&view, e.mode);
                    // An assignment that changes what code runs: no allow rule can vouch for it.
                    if code_env.is_some() && rule.verdict == Verdict::Allow {
                        tri = tri.min(Tri::Maybe);
                    }
                    c.add(e.rule, rule.verdict, tri);
                }
            }
            // Wrappers run too: ask/deny rules naming them apply (`deny exec sudo`).
            for w in &wrappers {
                let wv = CmdView { argv0: Some(w), name: base_name(w), args: &[] };
                for e in layer.exec.candidates(w, wv.name) {
                    match layer.rules.get(e.rule) {
                        Some(rule) if rule.verdict != Verdict::Allow && judge.applies(rule) => {
                            c.add(e.rule, rule.verdict, e.matcher.matches(&wv, Mode::Anywhere))
                        }
                        _ => {}
                    }
                }
            }
        };
        let Some(j) = self.judge.judge(true, false, collect) else { return };
        let opaque = j.how == How::Opaque;
        self.push(subject, &|| argv_text(&cmd.argv), j, Some(cmd.span.clone()));
        if let (Some(name), true, Some(last)) = (code_env, opaque, self.parts.last_mut()) {
            last.part.reason = format!(
                "`{}` sets `{name}`, which changes what code runs; opaque commands take {}",
                argv_text(&cmd.argv),
                last.part.verdict.as_str()
            )
            .into();
        }
    }

    fn redirects(&mut self, cmd: &SimpleCommand, cwds: &Cwds) {
        for r in &cmd.redirects {
            let check = match r.access {
                Access::Read => Check::Read,
                Access::Write | Access::Append => Check::Write,
            };
            self.path_word(&r.target, check, cwds, cmd);
        }
    }

    fn arguments(&mut self, cmd: &SimpleCommand, cwds: &Cwds) {
        if self.judge.layers.iter().all(|l| l.fs_restrict.is_empty()) {
            return;
        }
        for w in cmd.argv.iter().skip(1) {
            let text = match w.text.strip_prefix('-') {
                Some(flag) => match flag.split_once('=') {
                    Some((_, value)) => value,
                    None => continue,
                },
                None => w.text.as_str(),
            };
            if text.is_empty() || text.contains("://") {
                continue;
            }
            let word = match super::argglob::classify(text, w.known, &self.anchors) {
                ArgForm::Skip => continue,
                ArgForm::Overlap { text, exact } => {
                    self.overlap_argument(&text, exact, cwds, cmd);
                    if !exact || text.contains('/') {
                        continue;
                    }
                    // A bare glob is also checked as the literal word it may be.
                    Word { text, known: true }
                }
                ArgForm::Plain(text) => Word { text, known: true },
            };
            self.path_word(&word, Check::Argument, cwds, cmd);
        }
    }

    /// Checks a glob or parameter argument by overlap with ask/deny `fs` patterns (against every
    /// working directory it may run in).
    fn overlap_argument(&mut self, text: &str, exact: bool, cwds: &Cwds, cmd: &SimpleCommand) {
        let unknown_cwd = [String::from("$cwd")];
        let list: &[String] = if cwds.unknown { &unknown_cwd } else { &cwds.list };
        for cwd in list {
            let ap = super::argglob::arg_path(text, exact, &self.anchors, cwd);
            let anchors = &self.anchors;
            let tri = if ap.exact { Tri::Yes } else { Tri::Maybe };
            let collect = |layer: &LayerC, c: &mut Collector| {
                layer.fs_restrict.for_each_entry(|p, e| {
                    if entry_applies(e, Check::Argument) && p.overlaps(&ap, anchors) {
                        c.add(e.rule, e.verdict, tri);
                    }
                });
            };
            if let Some(j) = self.judge.judge(false, false, collect) {
                let shown = ap.shown.clone();
                let subject = Subject::Path { access: "read", path: shown.clone() };
                self.push(subject, &|| shown.clone(), j, Some(cmd.span.clone()));
            }
        }
    }

    /// Resolves a word naming a file (against every possible working directory) and judges it.
    fn path_word(&mut self, w: &Word, check: Check, cwds: &Cwds, cmd: &SimpleCommand) {
        let span = Some(cmd.span.clone());
        let relative = !(w.text.starts_with('/') || w.text.starts_with('~'));
        if !w.known || (relative && cwds.unknown) {
            let v = self.judge.opaque;
            let reason = format!(
                "the path `{}` cannot be known statically; opaque commands take {}",
                w.text,
                v.as_str()
            );
            let access = if check == Check::Write { "write" } else { "read" };
            self.push_plain(Subject::Path { access, path: w.text.clone() }, v, reason, span);
            return;
        }
        if NOT_FILES.contains(&w.text.as_str()) {
            return;
        }
        let mut seen: Vec<String> = Vec::new();
        for cwd in &cwds.list {
            let abs = resolve(&w.text, cwd, &self.anchors.home);
            if NOT_FILES.contains(&abs.as_str()) || seen.contains(&abs) {
                continue;
            }
            self.path(&abs, check, span.clone());
            seen.push(abs);
            if !relative {
                break;
            }
        }
    }

    fn pipes(&mut self, analysis: &Analysis) {
        let cmds = &analysis.commands;
        for (i, a) in cmds.iter().enumerate() {
            let Some(pa) = a.pipeline else { continue };
            for b in cmds.iter().skip(i + 1) {
                let Some(pb) = b.pipeline else { continue };
                if pa.id != pb.id || pb.stage <= pa.stage {
                    continue;
                }
                self.pipe_pair(a, b);
            }
        }
    }

    fn pipe_pair(&mut self, a: &SimpleCommand, b: &SimpleCommand) {
        let va = cmd_view(a);
        let vb = cmd_view(b);
        let collect = |layer: &LayerC, c: &mut Collector| {
            for p in &layer.pipes {
                let Some(rule) = layer.rules.get(p.rule) else { continue };
                let tri = p.from.matches(&va, p.mode).min(p.into.matches(&vb, p.mode));
                c.add(p.rule, rule.verdict, tri);
            }
        };
        let Some(j) = self.judge.judge(false, false, collect) else { return };
        let name = |c: &SimpleCommand| c.argv.first().map(|w| w.text.clone()).unwrap_or_default();
        let what = || format!("{} | {}", argv_text(&a.argv), argv_text(&b.argv));
        let span = a.span.start.min(b.span.start)..a.span.end.max(b.span.end);
        self.push(Subject::Pipe { from: name(a), into: name(b) }, &what, j, Some(span));
    }
}

fn cmd_view(c: &SimpleCommand) -> CmdView<'_> {
    match c.argv.split_first() {
        Some((first, args)) if first.known => {
            CmdView { argv0: Some(&first.text), name: base_name(&first.text), args }
        }
        Some((_, args)) => CmdView { argv0: None, name: "", args },
        None => CmdView { argv0: None, name: "", args: &[] },
    }
}

/// The working directories a command may run in, following `cd`/`pushd`.
struct Cwds {
    list: Vec<String>,
    unknown: bool,
}

impl Cwds {
    fn follow(&mut self, cmd: &SimpleCommand, home: &str) {
        let Some(first) = cmd.argv.first() else { return };
        if !first.known || !matches!(base_name(&first.text), "cd" | "pushd" | "popd") {
            return;
        }
        if base_name(&first.text) == "popd" {
            self.unknown = true;
            return;
        }
        let target = cmd.argv.iter().skip(1).find(|w| !(w.known && w.text.starts_with('-')));
        let mut next = Vec::new();
        match target {
            None => next.push(home.to_string()),
            Some(w) if w.known => {
                for cwd in &self.list {
                    next.push(resolve(&w.text, cwd, home));
                }
            }
            Some(_) => self.unknown = true,
        }
        for n in next {
            if !self.list.contains(&n) {
                self.list.push(n);
            }
        }
        if self.list.len() > MAX_CWDS {
            self.unknown = true;
        }
    }
}

/// Environment variables whose assignment changes which program or code runs.
fn loads_code(name: &str) -> bool {
    const EXACT: [&str; 18] = [
        "PATH", "BASH_ENV", "ENV", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS",
        "NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "PAGER", "EDITOR", "VISUAL",
        "MANPAGER", "LESSOPEN", "PROMPT_COMMAND",
    ];
    const PREFIX: [&str; 4] = ["LD_", "DYLD_", "GIT_", "BASH_FUNC_"];
    EXACT.contains(&name) || PREFIX.iter().any(|p| name.starts_with(p))
}

/// The snake_case name of an opaque reason.
fn serde_reason(r: warden_shell::OpaqueReason) -> &'static str {
    use warden_shell::OpaqueReason as R;
    match r {
        R::ParseError => "parse_error",
        R::TooLarge => "too_large",
        R::TooDeep => "too_deep",
        R::DynamicCommand => "dynamic_command",
        R::DynamicEval => "dynamic_eval",
        R::InlineCode => "inline_code",
        R::ShellFromStdin => "shell_from_stdin",
        R::FunctionCall => "function_call",
        R::Unsupported => "unsupported",
    }
}

/// Decides a request (the body of [`PolicySet::decide`]).
pub(crate) fn decide(set: &PolicySet, request: &Request<'_>, ctx: &Context) -> Decision {
    let agent = match request.agent {
        None => None,
        Some(name) => match set.agents.get(name) {
            Some(p) => Some(p),
            None => {
                return super::grants::refusal(
                    format!("unknown agent `{name}`"),
                    format!("no loaded policy defines agent `{name}`; requests naming it are denied"),
                );
            }
        },
    };
    let judge = Judge {
        layers: &set.layers,
        agent,
        opaque: set.opaque.max(agent.and_then(|a| a.opaque).unwrap_or(Verdict::Allow)),
        base_default: set.base_default().max(agent.and_then(|a| a.default).unwrap_or(Verdict::Allow)),
    };
    let mut d = Decider::new(set, judge, ctx);
    match request.action {
        Action::Exec(analysis) => d.exec(analysis),
        Action::Tool { name, path } => d.tool(name, path),
    }
    if d.parts.is_empty() {
        let v = d.judge.base_default;
        d.push_plain(
            Subject::Request { problem: String::from("nothing to run") },
            v,
            format!("the request runs nothing; the default is {}", v.as_str()),
            None,
        );
    }
    super::grants::combine(d, agent)
}
