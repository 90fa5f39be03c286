//! `decide`: a request becomes parts (commands, wrappers, redirects, argument paths, pipe
//! matches, opaque parts, a tool and its path), each judged across layers; the decision is the
//! most severe of them.

use super::argglob::ArgForm;
use super::exec::{CmdView, Mode, Tri, base_name};
use super::grants::Tally;
use super::into::Written;
use super::judge::{Collector, How, Judge, Judged};
use super::model::{FsEntry, LayerC, RuleC};
use super::paths::{Anchors, Through, resolve, with_resolved, with_segments};
use super::PolicySet;
use crate::ast::{FsAccess, Verdict};
use crate::decision::{Action, Context, Decision, Part, Parts, Request, RuleRef, RuleWhy, Subject, Text};
use std::borrow::Cow;
use std::sync::Arc;
use warden_shell::{Access, Analysis, SimpleCommand, Word};

/// Most relative paths a `cd` can fan out to before relative paths count as unknown.
const MAX_CWDS: usize = 8;

/// Where a path starts when the folder it is relative to is not known (`cd $dir; cat .env`,
/// `~root/.npmrc`): a folder no fixed pattern names, so only the patterns that match anywhere
/// can match beneath it.
const UNKNOWN_FOLDER: &str = "/(unknown folder)";

/// Paths that are not file access.
const NOT_FILES: [&str; 5] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"];

/// Where an absolute path leads on the host through symbolic links, when that differs from the
/// path itself (see [`PolicySet::decide_through_links`]).
pub type Links<'a> = &'a dyn Fn(&str) -> Option<String>;

pub(crate) struct Decider<'p> {
    pub(crate) set: &'p PolicySet,
    /// Paths are also judged where they lead (a hook: nothing confines what it allows).
    pub(crate) links: Option<Links<'p>>,
    pub(crate) judge: Judge<'p>,
    pub(crate) anchors: Anchors<'p>,
    pub(crate) parts: Parts,
    /// What combining needs beyond the parts (tiers), kept as parts are pushed.
    pub(crate) tally: Tally,
}

/// Which fs rules an access is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Read,
    Write,
    /// An argument (its access is unknown): ask/deny read rules, deny write rules, and ask
    /// write rules of their own. A tier's `fs write` in an ask tier is that tier's grant, not a
    /// restriction: naming a path it covers (`cat src/x`) does not ask.
    Argument,
}

fn entry_applies(e: &FsEntry, check: Check) -> bool {
    match check {
        // `fs write` implies read as a grant: only allow write rules match reads.
        Check::Read => e.access == FsAccess::Read || e.verdict == Verdict::Allow,
        // A deny (or ask) of `fs read` covers every access.
        Check::Write => e.access == FsAccess::Write || e.verdict != Verdict::Allow,
        Check::Argument => e.access == FsAccess::Read || e.verdict == Verdict::Deny || !e.in_tier,
    }
}

/// Judges a file access (a normalised absolute path, as segments) against the `fs` rules.
fn judge_path(judge: &Judge<'_>, anchors: &Anchors<'_>, segs: &[&str], check: Check) -> Option<Judged> {
    let collect = |layer: &LayerC, c: &mut Collector| {
        let index = if check == Check::Argument { &layer.fs_restrict } else { &layer.fs };
        index.for_each_match(segs, anchors, |e| {
            if entry_applies(e, check) && !e.except.iter().any(|x| x.matches(segs, anchors)) {
                c.add(e.rule, e.verdict, Tri::Yes);
            }
        });
    };
    judge.judge(check != Check::Argument, true, collect)
}

/// Whether the path of `segs` is one of [`NOT_FILES`].
fn is_not_file(segs: &[&str]) -> bool {
    match segs {
        ["dev", name] => NOT_FILES.iter().any(|n| n.strip_prefix("/dev/") == Some(*name)),
        _ => false,
    }
}

/// The absolute path of `segs`.
fn join_segments(segs: &[&str]) -> String {
    let mut s = String::with_capacity(segs.iter().map(|x| x.len() + 1).sum::<usize>().max(1));
    for seg in segs {
        s.push('/');
        s.push_str(seg);
    }
    if s.is_empty() {
        s.push('/');
    }
    s
}

/// Appends the argv as written, words separated by spaces.
fn push_argv(out: &mut String, argv: &[Word]) {
    for (i, w) in argv.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&w.text);
    }
}

/// `head`, then what `what` writes, then `tail` and `verdict`.
fn sentence(head: &str, what: &dyn Fn(&mut String), tail: &str, verdict: Verdict) -> String {
    let mut s = String::with_capacity(96);
    s.push_str(head);
    what(&mut s);
    s.push_str(tail);
    s.push_str(verdict.as_str());
    s
}

/// What a decision by rule `r` of `layer` states (see [`RuleC::message`]).
fn message_of(set: &PolicySet, layer: &LayerC, r: &RuleC) -> Arc<str> {
    let text = set.rules.get(r.id).map_or("", |x| &*x.text);
    r.message(text, r.tier.and_then(|t| layer.tiers.get(t)).map(|t| &*t.name))
}

/// What a part decided by rule `r` of `layer` alone states: made the first time a decision
/// needs it (not for every rule when the policy compiles), then shared by every part it decides.
fn rule_why<'s>(set: &'s PolicySet, layer: &LayerC, r: &RuleC) -> Option<&'s Arc<RuleWhy>> {
    let rule = set.rules.get(r.id)?;
    let slot = set.why.get(r.id)?;
    Some(slot.get_or_init(|| {
        let tier = r.tier.and_then(|t| layer.tiers.get(t)).map(|t| Arc::clone(&t.name));
        let message = r.message(&rule.text, tier.as_deref());
        Arc::new(RuleWhy::new(tier, message, rule.clone()))
    }))
}

impl<'p> Decider<'p> {
    pub(crate) fn new(set: &'p PolicySet, judge: Judge<'p>, ctx: &'p Context) -> Decider<'p> {
        Decider {
            set,
            links: None,
            judge,
            anchors: Anchors::new(ctx),
            parts: Parts::new(),
            tally: Tally::default(),
        }
    }

    /// Records a judged part. `what` writes the part as the reason shows it (only called when
    /// no rule's reason applies).
    fn push(
        &mut self,
        subject: Subject,
        what: &dyn Fn(&mut String),
        j: Judged,
        span: Option<std::ops::Range<usize>>,
    ) {
        self.tally.note(j.verdict, j.tier, j.base_tier, self.parts.len());
        let rule = |(l, r): &(usize, usize)| {
            let layer = self.judge.layers.get(*l)?;
            Some((layer, layer.rules.get(*r)?))
        };
        // One rule decided alone (the usual case): the part shares what the rule states.
        if let (How::Rules, [one]) = (&j.how, j.rules.as_slice())
            && let Some(why) = rule(one).and_then(|(layer, r)| rule_why(self.set, layer, r))
        {
            self.parts.push(Part::by_rule(subject, j.verdict, why, span));
            return;
        }
        let reason: Text = match &j.how {
            How::Rules => j
                .rules
                .first()
                .and_then(rule)
                .map_or_else(|| String::from("decided by a rule").into(), |(layer, r)| message_of(self.set, layer, r).into()),
            How::Default => sentence("no rule matches `", what, "`; the default is ", j.verdict).into(),
            How::Opaque => sentence(
                "`",
                what,
                "` depends on words that cannot be known statically; opaque commands take ",
                j.verdict,
            )
            .into(),
            How::AgentTier(t) => {
                let agent = self.judge.agent.map(|a| a.name.as_str()).unwrap_or_default();
                format!("agent `{agent}` may not use tier `{t}`").into()
            }
        };
        // Sized once: a collect through `filter_map` would grow the list as it goes.
        let mut rules: Vec<RuleRef> = Vec::with_capacity(j.rules.len());
        rules.extend(j.rules.iter().filter_map(|x| self.set.rules.get(rule(x)?.1.id)).cloned());
        let tier = j.tier.and_then(|(l, t)| self.judge.tier_arc(l, t));
        self.parts.push(Part::new(subject, j.verdict, tier, reason, rules, span));
    }

    /// A part decided without rules (opaque words, a request problem).
    pub(crate) fn push_plain(
        &mut self,
        subject: Subject,
        verdict: Verdict,
        reason: String,
        span: Option<std::ops::Range<usize>>,
    ) {
        self.parts.push(Part::new(subject, verdict, None, reason, Vec::new(), span));
    }

    /// Judges a file access against the `fs` rules.
    fn path(&mut self, path: &str, check: Check, span: Option<std::ops::Range<usize>>) {
        match super::paths::through_proc(path) {
            Some(Through::Root(beneath)) => return self.path(&beneath, check, span),
            Some(Through::Unknown(rest)) => {
                self.opaque_path(path, check, span.clone());
                return self.path(&format!("{UNKNOWN_FOLDER}/{rest}"), check, span);
            }
            None => {}
        }
        let judged = with_segments(path, |segs| judge_path(&self.judge, &self.anchors, segs, check));
        if let Some(j) = judged {
            self.push_path(path.to_string(), check, j, span);
        }
    }

    /// Judges the file access `abs` (absolute, normalised) again where it leads through a
    /// link, when the decision follows links and that is elsewhere (`lk/hooks/x`, `lk -> .git`).
    fn through_link(&mut self, abs: &str, check: Check, span: Option<std::ops::Range<usize>>) {
        if let Some(real) = self.links.and_then(|links| links(abs)) {
            self.path(&real, check, span);
        }
    }

    /// Records a judged file access.
    fn push_path(&mut self, path: String, check: Check, j: Judged, span: Option<std::ops::Range<usize>>) {
        let access = match check {
            Check::Write => "write",
            Check::Read | Check::Argument => "read",
        };
        let what = path.clone();
        self.push(Subject::Path { access, path }, &|s| s.push_str(&what), j, span);
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
            self.push(Subject::Tool { name: name.to_string() }, &|s| s.push_str(name), j, None);
        }
        if let Some(p) = path {
            let check = match name {
                "read_file" | "list_dir" | "search" => Check::Read,
                // write_file, edit_file, and any tool whose access is not known: a write.
                _ => Check::Write,
            };
            let abs = resolve(p, &self.anchors.cwd, &self.anchors.home);
            self.path(&abs, check, None);
            if name == "search" {
                // A search reads the whole folder (an agent's Grep and Glob tools).
                self.read_beneath(std::slice::from_ref(&abs), None);
            }
        }
    }

    /// Every part of an analysed command string.
    pub(crate) fn exec(&mut self, analysis: &Analysis) {
        let mut cwds = Cwds { first: self.anchors.cwd.clone(), extra: Vec::new(), unknown: false };
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
        let bytes = cmd.argv.iter().map(|w| w.text.len()).sum();
        let mut argv = crate::Argv::with_capacity(cmd.argv.len(), bytes);
        cmd.argv.iter().for_each(|w| argv.push(&w.text));
        let subject = Subject::Command { argv };
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
            for (known, e) in layer.exec.candidates(&first.text, view.name) {
                if let Some(rule) = layer.rules.get(e.rule) {
                    let mut tri = e.matcher.matches_known(&view, e.mode, known);
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
                for (known, e) in layer.exec.candidates(w, wv.name) {
                    match layer.rules.get(e.rule) {
                        Some(rule) if rule.verdict != Verdict::Allow && judge.applies(rule) => {
                            c.add(e.rule, rule.verdict, e.matcher.matches_known(&wv, Mode::Anywhere, known))
                        }
                        _ => {}
                    }
                }
            }
        };
        let Some(j) = self.judge.judge(true, false, collect) else { return };
        let opaque = j.how == How::Opaque;
        self.push(subject, &|s| push_argv(s, &cmd.argv), j, Some(cmd.span.clone()));
        if let (Some(name), true, Some(last)) = (code_env, opaque, self.parts.last_mut()) {
            let tail = format!("` sets `{name}`, which changes what code runs; opaque commands take ");
            last.set_reason(sentence("`", &|s| push_argv(s, &cmd.argv), &tail, last.verdict));
        }
    }

    fn redirects(&mut self, cmd: &SimpleCommand, cwds: &Cwds) {
        for r in &cmd.redirects {
            let check = match r.access {
                Access::Read => Check::Read,
                Access::Write | Access::Append => Check::Write,
            };
            self.path_word(&r.target.text, r.target.known, check, cwds, cmd);
        }
    }

    fn arguments(&mut self, cmd: &SimpleCommand, cwds: &Cwds) {
        if self.judge.layers.iter().all(|l| l.fs_restrict.is_empty()) {
            return;
        }
        let pattern = super::operands::pattern_operand(cmd);
        for (i, w) in cmd.argv.iter().enumerate().skip(1) {
            if pattern == Some(i) {
                continue; // a search pattern or a sed/awk script, not a path
            }
            let text = match w.text.strip_prefix('-') {
                Some(flag) => match flag.split_once('=') {
                    Some((_, value)) => value,
                    // `-o~/.bashrc` is `-o ~/.bashrc`.
                    None => match super::attached::value(&cmd.program, &w.text) {
                        Some(value) => value,
                        None => continue,
                    },
                },
                None => w.text.as_str(),
            };
            if text.is_empty() || text.contains("://") {
                continue;
            }
            let word: Cow<'_, str> = match super::argglob::classify(text, w.known, &self.anchors) {
                ArgForm::Skip => {
                    // `cat $(printf '.%sv' en)`: a file not known here.
                    if !super::argglob::names_no_file(&cmd.program, text) {
                        self.opaque_path(text, Check::Argument, Some(cmd.span.clone()));
                    }
                    continue;
                }
                ArgForm::Overlap { text, exact, expanded } => {
                    self.overlap_argument(&text, exact, expanded, cwds, cmd);
                    if !exact || text.contains('/') {
                        continue;
                    }
                    // A bare glob is also checked as the literal word it may be.
                    text
                }
                ArgForm::Plain(text) => text,
            };
            self.path_word(&word, true, Check::Argument, cwds, cmd);
        }
        self.trees(cmd, cwds);
        for file in super::implied::reads(cmd) {
            self.path(file, Check::Read, Some(cmd.span.clone()));
        }
        self.written_inside(cmd, cwds);
    }

    /// What a copy or an extraction writes inside a folder it names (see `into.rs`): a
    /// source's own name there is judged as if named, and a folder written with names not
    /// known by the patterns that reach into it.
    fn written_inside(&mut self, cmd: &SimpleCommand, cwds: &Cwds) {
        for w in super::into::written(cmd) {
            match w {
                Written::Path(path) => self.path_word(&path, true, Check::Argument, cwds, cmd),
                Written::Folder(dir) => self.folder_written(&dir, false, cwds, cmd),
                Written::Named(path) => self.folder_written(path, true, cwds, cmd),
            }
        }
    }

    /// Judges the ask and deny patterns that reach into the folder `dir` by name (`by_name`:
    /// and not as their anchor folder), as a write of names not known beneath it.
    fn folder_written(&mut self, dir: &str, by_name: bool, cwds: &Cwds, cmd: &SimpleCommand) {
        let relative = !(dir.starts_with('/') || dir.starts_with('~'));
        if (relative && cwds.unknown) || super::paths::other_home(dir) {
            return; // judged opaque as an argument already
        }
        let mut folders: Vec<String> = cwds.iter().map(|cwd| resolve(dir, cwd, &self.anchors.home)).collect();
        // `ln -s /proc/1/root r` links the root itself (a folder not known is opaque already).
        for f in &mut folders {
            if let Some(Through::Root(beneath)) = super::paths::through_proc(f) {
                *f = beneath;
            }
        }
        let linked: Vec<String> = self.links.map(|links| folders.iter().filter_map(|f| links(f)).collect()).unwrap_or_default();
        folders.extend(linked);
        for folder in folders {
            let anchors = &self.anchors;
            let collect = |layer: &LayerC, c: &mut Collector| {
                with_segments(&folder, |segs| {
                    layer.fs_restrict.for_each_entry(|p, e| {
                        let excepted = || e.except.iter().any(|x| x.matches(segs, anchors));
                        if entry_applies(e, Check::Argument) && p.reaches_into(segs, anchors, by_name) && !excepted() {
                            c.add(e.rule, e.verdict, Tri::Yes);
                        }
                    });
                });
            };
            if let Some(j) = self.judge.judge(false, false, collect) {
                let shown = format!("{}/**", folder.trim_end_matches('/'));
                let subject = Subject::Path { access: "write", path: shown.clone() };
                self.push(subject, &|s| s.push_str(&shown), j, Some(cmd.span.clone()));
            }
        }
    }

    /// A folder read whole (`grep -r x ~`, `tar czf h.tgz /home`) reads the denied paths with a
    /// fixed folder beneath it (see `recursive.rs`).
    fn trees(&mut self, cmd: &SimpleCommand, cwds: &Cwds) {
        let Some((dirs, cwd_itself)) = super::recursive::trees(cmd) else { return };
        let mut folders: Vec<String> = Vec::new();
        for dir in dirs {
            let relative = !(dir.starts_with('/') || dir.starts_with('~'));
            if (relative && cwds.unknown) || super::paths::other_home(dir) {
                continue; // judged opaque as an argument already
            }
            folders.extend(cwds.iter().map(|cwd| resolve(dir, cwd, &self.anchors.home)));
        }
        if cwd_itself && !cwds.unknown {
            folders.extend(cwds.iter().map(str::to_string));
        }
        self.read_beneath(&folders, Some(cmd.span.clone()));
    }

    /// Judges, as reads, the ask and deny `fs read` patterns whose fixed folder is one of
    /// `folders` or lies beneath one. The pattern itself is judged, so that
    /// `/etc/ssh/ssh_host_*` stands for the keys, not for the folder that holds them.
    fn read_beneath(&mut self, folders: &[String], span: Option<std::ops::Range<usize>>) {
        if folders.is_empty() {
            return;
        }
        let mut inside: Vec<String> = Vec::new();
        for layer in self.judge.layers.iter() {
            layer.fs_restrict.for_each_entry(|p, e| {
                if entry_applies(e, Check::Read)
                    && let Some(b) = super::recursive::base(p, &self.anchors)
                    && folders.iter().any(|f| super::recursive::within(&b, f))
                {
                    let shown = p.expand(&self.anchors);
                    if !inside.contains(&shown) {
                        inside.push(shown);
                    }
                }
            });
        }
        for pattern in inside {
            self.path(&pattern, Check::Read, span.clone());
        }
    }

    /// Checks a glob or parameter argument by overlap with ask/deny `fs` patterns (against every
    /// working directory it may run in).
    fn overlap_argument(&mut self, text: &str, exact: bool, expanded: bool, cwds: &Cwds, cmd: &SimpleCommand) {
        let unknown = cwds.unknown;
        for cwd in cwds.iter().filter(|_| !unknown).chain(unknown.then_some("$cwd")) {
            let ap = super::argglob::arg_path(text, exact, expanded, &self.anchors, cwd);
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
                let subject = Subject::Path { access: "read", path: ap.shown.clone() };
                self.push(subject, &|s| s.push_str(&ap.shown), j, Some(cmd.span.clone()));
            }
        }
    }

    /// Resolves a word naming a file (against every possible working directory) and judges it.
    fn path_word(&mut self, text: &str, known: bool, check: Check, cwds: &Cwds, cmd: &SimpleCommand) {
        let span = Some(cmd.span.clone());
        let relative = !(text.starts_with('/') || text.starts_with('~'));
        // `~root/.npmrc` is in a home that is not known, and a relative path after `cd $dir` is in
        // a folder that is not known: opaque. Such a known word is also judged from a folder
        // that no fixed pattern names (`/(unknown folder)/.npmrc`), so the patterns that match
        // anywhere (`**/.ssh/**`, `**/.env`) still deny, and no folder is guessed.
        let other_home = known && super::paths::other_home(text);
        let partly_known = other_home || (known && relative && cwds.unknown);
        if !known {
            self.opaque_path(text, check, Some(cmd.span.clone()));
            return;
        }
        if partly_known {
            let rest = if other_home { text.find('/').and_then(|i| text.get(i + 1..)).unwrap_or_default() } else { text };
            self.unknown_folder(text, rest, check, cwds, cmd);
            return;
        }
        if NOT_FILES.contains(&text) {
            return;
        }
        if !relative && let Some(through) = super::paths::through_proc(text) {
            match through {
                // `/proc/self/root/etc/shadow` is `/etc/shadow`.
                Through::Root(path) => self.path_word(&path, true, check, cwds, cmd),
                // `/proc/1/cwd/.env`: a folder not known, as a relative path after `cd $dir`.
                Through::Unknown(rest) => self.unknown_folder(text, &rest, check, cwds, cmd),
            }
            return;
        }
        // Paths already judged, kept only when there are several working directories.
        let mut seen: Vec<String> = Vec::new();
        let several = relative && cwds.len() > 1;
        for cwd in cwds.iter() {
            let (judge, anchors) = (&self.judge, &self.anchors);
            // Resolved as segments on the stack; the path is written out only when it is shown.
            let outcome = with_resolved(text, cwd, &anchors.home, |segs| {
                let key = several.then(|| join_segments(segs));
                if is_not_file(segs) || key.as_ref().is_some_and(|k| seen.contains(k)) {
                    return None;
                }
                let judged = judge_path(judge, anchors, segs, check).map(|j| (j, join_segments(segs)));
                Some((judged, key))
            });
            let Some((judged, key)) = outcome else { continue };
            if let Some((j, abs)) = judged {
                self.push_path(abs, check, j, span.clone());
            }
            self.through_link(&resolve(text, cwd, &self.anchors.home), check, span.clone());
            if !relative {
                break;
            }
            seen.extend(key);
        }
    }

    /// A path that cannot be known statically: the opaque verdict.
    fn opaque_path(&mut self, text: &str, check: Check, span: Option<std::ops::Range<usize>>) {
        let v = self.judge.opaque;
        let reason = format!("the path `{text}` cannot be known statically; opaque commands take {}", v.as_str());
        let access = if check == Check::Write { "write" } else { "read" };
        self.push_plain(Subject::Path { access, path: text.to_string() }, v, reason, span);
    }

    /// `text` is `rest` beneath a folder not known: opaque, and `rest` is also judged from a
    /// folder no fixed pattern names, so the patterns that match anywhere still apply.
    fn unknown_folder(&mut self, text: &str, rest: &str, check: Check, cwds: &Cwds, cmd: &SimpleCommand) {
        self.opaque_path(text, check, Some(cmd.span.clone()));
        let rebased = format!("{UNKNOWN_FOLDER}/{rest}");
        self.path_word(&rebased, true, check, cwds, cmd);
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
        let what = |s: &mut String| {
            push_argv(s, &a.argv);
            s.push_str(" | ");
            push_argv(s, &b.argv);
        };
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

/// The working directories a command may run in, following `cd`/`pushd`: the context's, then
/// those `cd` may have reached.
struct Cwds<'a> {
    first: Cow<'a, str>,
    extra: Vec<String>,
    unknown: bool,
}

impl Cwds<'_> {
    fn iter(&self) -> impl Iterator<Item = &str> {
        std::iter::once(&*self.first).chain(self.extra.iter().map(String::as_str))
    }

    fn len(&self) -> usize {
        1 + self.extra.len()
    }

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
            // `cd ~root`, `cd ~-`: somewhere not known, never a folder named `~root`.
            Some(w) if w.known && super::paths::other_home(&w.text) => self.unknown = true,
            Some(w) if w.known => {
                for cwd in self.iter() {
                    next.push(resolve(&w.text, cwd, home));
                }
            }
            Some(_) => self.unknown = true,
        }
        for n in next {
            if !self.iter().any(|c| c == n) {
                self.extra.push(n);
            }
        }
        if self.len() > MAX_CWDS {
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

/// Decides a request (the body of [`PolicySet::decide`]); `with_grants` false leaves the
/// decision's grants empty (for the `example` checks, which look at the verdict alone).
pub(crate) fn decide(set: &PolicySet, request: &Request<'_>, ctx: &Context, with_grants: bool, links: Option<Links<'_>>) -> Decision {
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
    d.links = links;
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
    super::grants::combine(d, agent, with_grants)
}
