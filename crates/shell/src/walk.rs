//! The walk over brush's AST: finds every simple command and hands it to [`crate::command`].

use crate::guard;
use crate::model::{Access, Analysis, Opaque, OpaqueReason, PipelinePos, Redirect, Word};
use crate::words::{self, Resolved};
use brush_parser::ast;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// How deep nested strings (`sh -c`, `eval`, `$( )`, functions) are followed.
pub const MAX_DEPTH: usize = 16;
/// The most simple commands reported for one input.
pub const MAX_COMMANDS: usize = 4096;
/// The most parser invocations and function expansions for one input (each `$( )`, `sh -c`,
/// function call, ... is one).
pub const MAX_PARSES: usize = 512;

/// Where a command's standard input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stdin {
    /// Inherited (the agent's standard input) or a file.
    Inherited,
    /// The previous stage of a pipeline.
    Pipe,
    /// A here-document or here-string; `known` false when it depends on run time.
    Text { text: String, known: bool },
}

/// A simple command before wrappers and nested shells are looked at.
#[derive(Debug, Clone)]
pub(crate) struct RawCommand {
    pub argv: Vec<Word>,
    pub assignments: Vec<(String, Word)>,
    pub redirects: Vec<Redirect>,
    pub stdin: Stdin,
    pub span: Range<usize>,
    /// Words made unknown only by a run-time replacement token (`xargs -I {}`, `find -exec
    /// ... {}`): `(word text, the same text with the token replaced by a parameter)`, so a
    /// shell string among them can still be analysed.
    pub placeholders: Vec<(String, String)>,
    /// What here-documents and here-strings feed to descriptors other than 0 (`3<<< text`),
    /// for a program that reads its code from `/dev/fd/3`.
    pub fds: Vec<(u32, Stdin)>,
}

impl RawCommand {
    /// What the command reads on descriptor `fd`: its standard input for 0, the text a
    /// here-document or here-string feeds it, or `Inherited` (unknown) otherwise.
    pub fn on_fd(&self, fd: u32) -> &Stdin {
        if fd == 0 {
            return &self.stdin;
        }
        self.fds.iter().rev().find(|(n, _)| *n == fd).map_or(&Stdin::Inherited, |(_, s)| s)
    }

    /// Records what a here-document or here-string feeds to `fd` (none given: 0).
    fn feed(&mut self, fd: Option<i32>, text: Stdin) {
        match fd.map(u32::try_from) {
            None | Some(Ok(0)) => self.stdin = text,
            Some(Ok(n)) => self.fds.push((n, text)),
            // A negative descriptor: nothing a program can open.
            Some(Err(_)) => {}
        }
    }
}

/// The descriptor a path names when a program opens it (`/dev/stdin`, `/dev/fd/3`,
/// `/proc/self/fd/3`, `/proc/PID/fd/3`), or `None` for any other path.
pub(crate) fn fd_path(path: &str) -> Option<u32> {
    if path == "/dev/stdin" {
        return Some(0);
    }
    let n = match path.strip_prefix("/dev/fd/") {
        Some(n) => n,
        None => {
            let rest = path.strip_prefix("/proc/")?;
            let (_, n) = rest.split_once("/fd/")?;
            n
        }
    };
    n.parse().ok()
}

/// The walk's state for one call of `analyse`.
pub(crate) struct Ctx<'a> {
    pub input: &'a str,
    pub out: Analysis,
    pub depth: usize,
    pub via: Vec<String>,
    /// Span used for everything found inside a nested string.
    pub span_override: Option<Range<usize>>,
    pub pipe_pos: Option<PipelinePos>,
    pub stdin_pipe: bool,
    pub next_pipeline: usize,
    pub parses: usize,
    pub inherited_redirects: Vec<Redirect>,
    pub functions: HashMap<String, ast::FunctionBody>,
    /// Every value each variable is given in the string (see `vars.rs`).
    pub vars: crate::vars::Vars,
    /// The files written so far in the string, and what was written (see `scripts.rs`).
    pub written: crate::scripts::Written,
    /// Inside a construct that may not run, or not in this shell (a branch, a loop body, the
    /// right of `&&`/`||`, a pipeline stage, a subshell): an assignment there may not happen,
    /// so the variable may keep a value from before the string.
    pub maybe: usize,
    pub calling: HashSet<String>,
    pub limit_hit: bool,
    /// Byte offset of each character, when the input is not ASCII (brush counts characters).
    char_bytes: Option<Vec<usize>>,
    seen_opaque: HashSet<(String, Range<usize>, String)>,
}

impl<'a> Ctx<'a> {
    pub fn new(input: &'a str) -> Self {
        Ctx {
            input,
            out: Analysis::default(),
            depth: 0,
            via: vec![],
            span_override: None,
            pipe_pos: None,
            stdin_pipe: false,
            next_pipeline: 0,
            parses: 0,
            inherited_redirects: vec![],
            functions: HashMap::new(),
            vars: crate::vars::Vars::new(),
            written: crate::scripts::Written::default(),
            maybe: 0,
            calling: HashSet::new(),
            limit_hit: false,
            char_bytes: (!input.is_ascii()).then(|| input.char_indices().map(|(b, _)| b).collect()),
            seen_opaque: HashSet::new(),
        }
    }

    /// The span to report for something at `span` in the current string.
    pub fn span(&self, span: Option<Range<usize>>) -> Range<usize> {
        if let Some(o) = &self.span_override {
            return o.clone();
        }
        let len = self.input.len();
        match (span, &self.char_bytes) {
            (Some(s), None) => s.start.min(s.end).min(len)..s.end.min(len),
            (Some(s), Some(table)) => {
                let at = |i: usize| table.get(i).copied().unwrap_or(len);
                at(s.start).min(at(s.end))..at(s.end)
            }
            (None, _) => 0..len,
        }
    }

    /// Records an opaque part.
    pub fn opaque(&mut self, reason: OpaqueReason, text: &str, span: Range<usize>) {
        if self.out.opaque.len() >= MAX_COMMANDS {
            self.limit_hit = true;
            return;
        }
        let text = shorten(text);
        let key = (format!("{reason:?}"), span.clone(), text.clone());
        if self.seen_opaque.insert(key) {
            self.out.opaque.push(Opaque { reason, text, span });
        }
    }

    /// True once the command budget is spent (then one `too_large` part is recorded).
    pub fn over_budget(&mut self) -> bool {
        if self.out.commands.len() >= MAX_COMMANDS || self.parses > MAX_PARSES {
            self.limit_hit = true;
        }
        self.limit_hit
    }

    /// Parses `text` and walks it as a nested program: one level deeper, everything reported
    /// at `span`, with `label` added to `via` when given.
    pub fn nested(&mut self, text: &str, label: Option<&str>, span: Range<usize>) {
        if self.depth + 1 > MAX_DEPTH {
            self.opaque(OpaqueReason::TooDeep, text, span);
            return;
        }
        let saved = (
            self.span_override.clone(),
            self.pipe_pos,
            self.stdin_pipe,
            std::mem::take(&mut self.inherited_redirects),
        );
        self.depth += 1;
        if self.span_override.is_none() {
            self.span_override = Some(span.clone());
        }
        self.pipe_pos = None;
        self.stdin_pipe = false;
        if let Some(l) = label {
            self.via.push(l.to_owned());
        }
        self.program_text(text, span);
        if label.is_some() {
            self.via.pop();
        }
        self.depth -= 1;
        (
            self.span_override,
            self.pipe_pos,
            self.stdin_pipe,
            self.inherited_redirects,
        ) = saved;
    }

    /// Guards, parses and walks one program text.
    pub fn program_text(&mut self, text: &str, span: Range<usize>) {
        self.parses += 1;
        if self.over_budget() {
            return;
        }
        if let Err(r) = guard::check(text) {
            let reason = match r {
                guard::Refusal::Nesting => OpaqueReason::TooDeep,
                _ => OpaqueReason::ParseError,
            };
            self.opaque(reason, text, span);
            return;
        }
        let opts = words::options();
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &opts);
        match parser.parse_program() {
            Ok(program) => {
                for cc in &program.complete_commands {
                    self.compound_list(cc);
                }
            }
            Err(_) => self.opaque(OpaqueReason::ParseError, text, span),
        }
    }

    fn compound_list(&mut self, list: &ast::CompoundList) {
        for item in &list.0 {
            let ast::CompoundListItem(and_or, _) = item;
            self.pipeline(&and_or.first);
            self.maybe += 1;
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
                }
            }
            self.maybe -= 1;
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline) {
        if p.seq.len() < 2 {
            for c in &p.seq {
                self.command(c);
            }
            return;
        }
        let id = self.next_pipeline;
        self.next_pipeline += 1;
        let saved = (self.pipe_pos, self.stdin_pipe);
        self.maybe += 1;
        for (stage, c) in p.seq.iter().enumerate() {
            self.pipe_pos = Some(PipelinePos { id, stage });
            self.stdin_pipe = stage > 0 || saved.1;
            self.command(c);
        }
        self.maybe -= 1;
        (self.pipe_pos, self.stdin_pipe) = saved;
    }

    fn command(&mut self, c: &ast::Command) {
        if self.over_budget() {
            return;
        }
        match c {
            ast::Command::Simple(s) => self.simple(s),
            ast::Command::Compound(cc, redirects) => {
                let n = self.inherited_redirects.len();
                if let Some(list) = redirects {
                    for r in &list.0 {
                        let mut raw = empty_raw();
                        self.redirect(r, &mut raw, None);
                        self.inherited_redirects.extend(raw.redirects);
                    }
                }
                self.compound(cc);
                self.inherited_redirects.truncate(n);
            }
            ast::Command::Function(f) => {
                let name = words::resolve(&f.fname.value).word.text;
                if name == "command_not_found_handle" {
                    // Bash calls it for any command it cannot find: it may run at any time.
                    let span = self.span(loc(f.fname.loc.as_ref()));
                    let saved = self.span_override.replace(span);
                    self.via.push(format!("function {name}"));
                    self.function_body(&f.body);
                    self.via.pop();
                    self.span_override = saved;
                }
                self.functions.insert(name, f.body.clone());
            }
            ast::Command::ExtendedTest(t, _) => self.extended_test(&t.expr),
        }
    }

    /// Walks a function body at a call site.
    pub fn function_body(&mut self, body: &ast::FunctionBody) {
        let n = self.inherited_redirects.len();
        if let Some(list) = &body.1 {
            for r in &list.0 {
                let mut raw = empty_raw();
                self.redirect(r, &mut raw, None);
                self.inherited_redirects.extend(raw.redirects);
            }
        }
        self.compound(&body.0);
        self.inherited_redirects.truncate(n);
    }

    fn extended_test(&mut self, e: &ast::ExtendedTestExpr) {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a);
                self.extended_test(b);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.extended_test(a);
            }
            ast::ExtendedTestExpr::UnaryTest(_, w) => {
                self.word(w);
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(a);
                self.word(b);
            }
        }
    }

    fn compound(&mut self, cc: &ast::CompoundCommand) {
        // Only a `{ }` group runs for sure and in this shell; a `for` loop's body is counted below.
        let maybe = !matches!(cc, ast::CompoundCommand::BraceGroup(_) | ast::CompoundCommand::ForClause(_));
        self.maybe += usize::from(maybe);
        self.compound_inner(cc);
        self.maybe -= usize::from(maybe);
    }

    fn compound_inner(&mut self, cc: &ast::CompoundCommand) {
        match cc {
            ast::CompoundCommand::Arithmetic(a) => self.text_subs(&a.expr.value, loc(Some(&a.loc))),
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.text_subs(&e.value, loc(Some(&f.loc)));
                }
                self.compound_list(&f.body.list);
            }
            ast::CompoundCommand::BraceGroup(b) => self.compound_list(&b.list),
            ast::CompoundCommand::Subshell(s) => self.compound_list(&s.list),
            ast::CompoundCommand::ForClause(f) => {
                let mut values = Vec::new();
                for w in f.values.iter().flatten() {
                    values.extend(self.argv_words(w));
                }
                // `for GIT_EXTERNAL_DIFF in 'touch x'; do git diff; done` assigns the variable.
                let span = self.span(loc(Some(&f.loc)));
                if f.values.is_some() && crate::wrappers::is_name(&f.variable_name) {
                    // The words are the values (`for f in .env`).
                    let value = Word { text: format!("<value of {}>", f.variable_name), known: false };
                    crate::command::check_assignments(self, &[(f.variable_name.clone(), value)], &span);
                    for v in values {
                        self.assign(&f.variable_name, v);
                    }
                } else {
                    // Without `in`, the positional parameters: unknown.
                    self.assigned_by_builtin(&f.variable_name, span);
                }
                self.maybe += 1;
                self.compound_list(&f.body.list);
                self.maybe -= 1;
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.word(&c.value);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p);
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.compound_list(&i.condition);
                self.compound_list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.compound_list(c);
                    }
                    self.compound_list(&e.body);
                }
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.compound_list(&w.0);
                self.compound_list(&w.1.list);
            }
            ast::CompoundCommand::Coprocess(c) => {
                let span = self.span(loc(Some(&c.loc)));
                self.opaque(OpaqueReason::Unsupported, "coproc", span);
                self.command(&c.body);
            }
        }
    }

    /// Resolves a word and analyses the substitutions inside it.
    pub fn word(&mut self, w: &ast::Word) -> Word {
        self.word_in(w, None)
    }

    /// Like [`Ctx::word`]; `outer` is the span to use when the word has no location of its own
    /// (an assignment's value).
    fn word_in(&mut self, w: &ast::Word, outer: Option<Range<usize>>) -> Word {
        let span = self.span(loc(w.loc.as_ref()).or(outer));
        let r = words::resolve(&w.value);
        self.resolved(&r, &w.value, span);
        r.word
    }

    /// Like [`Ctx::word`] for an argv position: a static brace expansion gives its words.
    fn argv_words(&mut self, w: &ast::Word) -> Vec<Word> {
        let span = self.span(loc(w.loc.as_ref()));
        let r = words::resolve(&w.value);
        self.resolved(&r, &w.value, span);
        match r.expanded {
            Some(list) => list
                .into_iter()
                .map(|text| Word { text, known: true })
                .collect(),
            None => vec![r.word],
        }
    }

    fn resolved(&mut self, r: &Resolved, raw: &str, span: Range<usize>) {
        if r.failed {
            self.opaque(OpaqueReason::ParseError, raw, span.clone());
        }
        for name in &r.assigns {
            self.assigned_by_builtin(name, span.clone());
        }
        for sub in &r.subs {
            self.nested(sub, None, span.clone());
        }
    }

    /// A variable assigned otherwise than by `NAME=value` (`for NAME in`, `read NAME`,
    /// `printf -v NAME`, `${NAME:=value}`, ...), to a value not known statically: checked like
    /// the prefix form, so a risky name is opaque whether or not it is exported (`set -a`, or
    /// a variable such as `PATH` that is exported already).
    pub fn assigned_by_builtin(&mut self, name: &str, span: Range<usize>) {
        if !crate::wrappers::is_name(name) {
            self.opaque(OpaqueReason::Unsupported, &format!("assignment to `{name}`"), span);
            return;
        }
        let value = Word { text: format!("<value of {name}>"), known: false };
        crate::command::check_assignments(self, &[(name.to_owned(), value)], &span);
        let unknown = Word { text: format!("${name}"), known: false };
        self.assign(name, unknown);
    }

    /// Records a value of the shell variable `name` (see `vars.rs`); where the assignment may
    /// not happen ([`Ctx::maybe`], a nested string or function), the earlier value stays
    /// possible too.
    pub fn assign(&mut self, name: &str, value: Word) {
        if self.maybe > 0 || self.depth > 0 {
            crate::vars::assign(&mut self.vars, name, Word { text: format!("${name}"), known: false });
        }
        crate::vars::assign(&mut self.vars, name, value);
    }

    /// Analyses the substitutions in an arithmetic or other free text.
    fn text_subs(&mut self, text: &str, span: Option<Range<usize>>) {
        let span = self.span(span);
        let r = words::resolve(text);
        for sub in &r.subs {
            self.nested(sub, None, span.clone());
        }
        for name in &r.assigns {
            self.assigned_by_builtin(name, span.clone());
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand) {
        let mut raw = empty_raw();
        raw.stdin = if self.stdin_pipe {
            Stdin::Pipe
        } else {
            Stdin::Inherited
        };
        raw.redirects
            .extend(self.inherited_redirects.iter().cloned());
        let mut lo = usize::MAX;
        let mut hi = 0usize;
        let mut grow = |span: &Option<Range<usize>>| {
            if let Some(s) = span {
                lo = lo.min(s.start);
                hi = hi.max(s.end);
            }
        };
        let items = s.prefix.iter().flat_map(|p| p.0.iter());
        let word0 = s.word_or_name.iter();
        let suffix = s.suffix.iter().flat_map(|p| p.0.iter());
        for item in items {
            grow(&self.item(item, &mut raw, false));
        }
        for w in word0 {
            grow(&loc(w.loc.as_ref()));
            let words = self.argv_words(w);
            raw.argv.extend(words);
        }
        for item in suffix {
            grow(&self.item(item, &mut raw, true));
        }
        let span = if lo <= hi { Some(lo..hi) } else { None };
        raw.span = self.span(span);
        crate::command::run(self, raw);
    }

    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        raw: &mut RawCommand,
        suffix: bool,
    ) -> Option<Range<usize>> {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                self.redirect(r, raw, None);
                None
            }
            ast::CommandPrefixOrSuffixItem::Word(w) => {
                let words = self.argv_words(w);
                raw.argv.extend(words);
                loc(w.loc.as_ref())
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                let span = loc(w.loc.as_ref());
                if suffix {
                    let word = self.word(w);
                    raw.argv.push(word);
                } else {
                    let value = match &a.value {
                        ast::AssignmentValue::Scalar(v) => self.word_in(v, span.clone()),
                        ast::AssignmentValue::Array(items) => {
                            for (k, v) in items {
                                if let Some(k) = k {
                                    self.word_in(k, span.clone());
                                }
                                self.word_in(v, span.clone());
                            }
                            Word {
                                text: w.value.clone(),
                                known: false,
                            }
                        }
                    };
                    let (name, whole) = match &a.name {
                        ast::AssignmentName::VariableName(n) => (n.clone(), !a.append),
                        ast::AssignmentName::ArrayElementName(n, index) => {
                            // The subscript is expanded (and arithmetic-evaluated) by bash.
                            self.text_subs(index, span.clone());
                            (n.clone(), false)
                        }
                    };
                    // `x+=v` and `a[i]=v` give a value not known from this word alone.
                    let value = if whole { value } else { Word { text: format!("${name}"), known: false } };
                    raw.assignments.push((name, value));
                }
                span
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                let span = loc(Some(&sub.loc));
                self.process_sub(sub);
                let arrow = match kind {
                    ast::ProcessSubstitutionKind::Read => '<',
                    ast::ProcessSubstitutionKind::Write => '>',
                };
                let text = format!("{arrow}{}", self.source(span.clone()));
                raw.argv.push(Word { text, known: false });
                span
            }
        }
    }

    fn source(&self, span: Option<Range<usize>>) -> String {
        span.and_then(|s| self.input.get(s))
            .unwrap_or("<( )")
            .to_owned()
    }

    fn process_sub(&mut self, sub: &ast::SubshellCommand) {
        let saved = (self.pipe_pos, self.stdin_pipe);
        self.pipe_pos = None;
        self.stdin_pipe = false;
        self.compound_list(&sub.list);
        (self.pipe_pos, self.stdin_pipe) = saved;
    }

    fn redirect(&mut self, r: &ast::IoRedirect, raw: &mut RawCommand, _fd: Option<u32>) {
        match r {
            ast::IoRedirect::File(_, kind, target) => match target {
                ast::IoFileRedirectTarget::Filename(w) => {
                    let word = self.word(w);
                    let access = match kind {
                        ast::IoFileRedirectKind::Read => Some(Access::Read),
                        ast::IoFileRedirectKind::Append => Some(Access::Append),
                        ast::IoFileRedirectKind::DuplicateInput
                        | ast::IoFileRedirectKind::DuplicateOutput => dup_access(&word),
                        _ => Some(Access::Write),
                    };
                    if let Some(access) = access {
                        push_redirect(raw, access, word);
                    }
                }
                ast::IoFileRedirectTarget::Duplicate(w) => {
                    let word = self.word(w);
                    if let Some(access) = dup_access(&word) {
                        push_redirect(raw, access, word);
                    }
                }
                ast::IoFileRedirectTarget::Fd(_) => {}
                ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => self.process_sub(sub),
            },
            ast::IoRedirect::HereDocument(fd, doc) => {
                let span = self.span(loc(doc.doc.loc.as_ref()));
                if doc.requires_expansion {
                    // The shell feeds the body after its backslash processing: `\`rm -rf .\``
                    // in the body is a substitution for the `sh` that reads it.
                    let r = words::heredoc(&doc.doc.value);
                    self.resolved(&r, &doc.doc.value, span);
                    raw.feed(*fd, Stdin::Text {
                        text: r.word.text.clone(),
                        known: r.word.known,
                    });
                } else {
                    raw.feed(*fd, Stdin::Text {
                        text: doc.doc.value.clone(),
                        known: true,
                    });
                }
            }
            ast::IoRedirect::HereString(fd, w) => {
                let word = self.word(w);
                raw.feed(*fd, Stdin::Text {
                    text: word.text,
                    known: word.known,
                });
            }
            ast::IoRedirect::OutputAndError(w, append) => {
                let word = self.word(w);
                let access = if *append {
                    Access::Append
                } else {
                    Access::Write
                };
                push_redirect(raw, access, word);
            }
        }
    }
}

/// A descriptor duplication (`>&2`, `<&-`) is no file access; `>& file` is a write.
fn dup_access(w: &Word) -> Option<Access> {
    let t = w.text.as_str();
    if w.known && (t == "-" || t.trim_end_matches('-').bytes().all(|b| b.is_ascii_digit())) {
        None
    } else {
        Some(Access::Write)
    }
}

pub(crate) fn push_redirect(raw: &mut RawCommand, access: Access, target: Word) {
    let quiet = [
        "/dev/null",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/stdin",
        "/dev/tty",
    ];
    if target.known && quiet.contains(&target.text.as_str()) {
        return;
    }
    raw.redirects.push(Redirect { access, target });
}

pub(crate) fn empty_raw() -> RawCommand {
    RawCommand {
        argv: vec![],
        assignments: vec![],
        redirects: vec![],
        stdin: Stdin::Inherited,
        span: 0..0,
        placeholders: vec![],
        fds: vec![],
    }
}

fn loc(l: Option<&brush_parser::SourceSpan>) -> Option<Range<usize>> {
    l.map(|s| s.start.index..s.end.index)
}

/// At most 200 characters of `text`.
pub(crate) fn shorten(text: &str) -> String {
    let mut s: String = text.chars().take(200).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::fd_path;

    #[test]
    fn descriptor_paths() {
        for (path, fd) in [("/dev/stdin", Some(0)), ("/dev/fd/0", Some(0)), ("/dev/fd/3", Some(3)), ("/proc/self/fd/7", Some(7)), ("/proc/thread-self/fd/4", Some(4)), ("/proc/123/fd/3", Some(3))] {
            assert_eq!(fd_path(path), fd, "{path}");
        }
        for path in ["/dev/fd/x", "/dev/fd", "script.sh", "/proc/self/environ", "/dev/stdout", "-"] {
            assert_eq!(fd_path(path), None, "{path}");
        }
    }
}
