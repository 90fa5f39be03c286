//! One simple command: functions, wrappers, nested shells, interpreters, `find -exec`.

use crate::interp;
use crate::model::{OpaqueReason, SimpleCommand, Word};
use crate::walk::{Ctx, RawCommand, Stdin};
use crate::wrappers;

/// Shells whose `-c STRING` and standard input are followed.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "yash", "posh", "lksh",
];

/// The base name of a command word (`/usr/bin/rm` -> `rm`).
pub(crate) fn basename(s: &str) -> String {
    s.rsplit('/').next().unwrap_or(s).to_owned()
}

/// Resolves one raw simple command and records everything it runs.
pub(crate) fn run(ctx: &mut Ctx<'_>, mut raw: RawCommand) {
    check_assignments(ctx, &raw.assignments, &raw.span);
    let via = ctx.via.clone();
    if raw.argv.is_empty() {
        // `f=.env` alone sets a shell variable (see `vars.rs`).
        for (name, value) in &raw.assignments {
            ctx.assign(name, value.clone());
        }
        // `> f` alone is `: > f`: the file is still opened. Emitted directly, so a function
        // named `:` is not called (bash does not call it either).
        if !raw.redirects.is_empty() {
            let mut raw = raw;
            raw.argv.push(Word {
                text: ":".to_owned(),
                known: true,
            });
            emit(ctx, &raw, &via);
        }
        return;
    }
    // A redirect target that stands for one file is that file (`f=~/.bashrc; echo x >> $f`).
    for r in &mut raw.redirects {
        if let Some([one]) = crate::vars::expand(&r.target, &ctx.vars).as_deref() {
            r.target = one.clone();
        }
    }
    for argv in substituted(&ctx.vars, &raw.argv) {
        let mut each = raw.clone();
        each.argv = argv;
        resolve(ctx, each, via.clone());
    }
}

/// The argv `argv` stands for, once for every combination of the candidates of the variables
/// assigned in the string (at most `vars::MAX_COMBINATIONS`; beyond, the words stay unknown).
fn substituted(vars: &crate::vars::Vars, argv: &[Word]) -> Vec<Vec<Word>> {
    let mut out: Vec<Vec<Word>> = vec![Vec::with_capacity(argv.len())];
    for w in argv {
        let choices = crate::vars::expand(w, vars).unwrap_or_else(|| vec![w.clone()]);
        if out.len() * choices.len() > crate::vars::MAX_COMBINATIONS {
            out.iter_mut().for_each(|a| a.push(w.clone()));
            continue;
        }
        out = out
            .into_iter()
            .flat_map(|a| {
                choices.iter().map(move |c| {
                    let mut a = a.clone();
                    a.push(c.clone());
                    a
                })
            })
            .collect();
    }
    out
}

/// Variables that change which program runs or make a harmless-looking program run code:
/// the loader (`LD_PRELOAD`), the shell (`BASH_ENV`, `IFS`), git's configuration, pager, editor
/// and ssh hooks (`GIT_EXTERNAL_DIFF=x git diff`), interpreters' start-up code
/// (`NODE_OPTIONS`, `PYTHONSTARTUP`), and `HOME`, which points git and shells at another
/// configuration. The command-valued ones are [`COMMAND_VARIABLES`].
const RISKY_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "ZDOTDIR",
    "BASH_ENV",
    "ENV",
    "IFS",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_LOADABLES_PATH",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "DOTNET_STARTUP_HOOKS",
    "GCONV_PATH",
    // Options or configuration files read from the environment by tools an agent is allowed
    // to run: each can add an option a rule refuses (`rg --pre=cmd`, `tar --to-command=cmd`,
    // `zip -TT cmd`) without it appearing in the argv.
    "RIPGREP_CONFIG_PATH",
    "TAR_OPTIONS",
    "ZIPOPT",
    "GREP_OPTIONS",
    // git reads the configuration (hooks, `core.fsmonitor`) of the common directory.
    "GIT_COMMON_DIR",
    // Expanded with command substitution by bash's `set -x` (`PS4='$(cmd)'`) and prompts.
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    // `cd DIR` and `cd -` go elsewhere than the words say, so paths after them are misread.
    "CDPATH",
    "OLDPWD",
];

/// Name prefixes with the same effect: every loader variable (`LD_*`, `DYLD_*`) and git's
/// configuration from the environment (`GIT_CONFIG`, `GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_0`...).
const RISKY_PREFIXES: &[&str] = &["LD_", "DYLD_", "GIT_CONFIG"];

/// Whether assigning `name` can change what runs.
fn is_risky(name: &str) -> bool {
    RISKY_VARIABLES.contains(&name)
        || COMMAND_VARIABLES.contains(&name)
        || RISKY_PREFIXES.iter().any(|p| name.starts_with(p))
        || (name.starts_with("CARGO_TARGET_") && name.ends_with("_RUNNER"))
}

/// Risky variables (see [`RISKY_VARIABLES`]) whose value is a command line that a program runs
/// through a shell
/// (`GIT_SSH_COMMAND="ssh -i k"`, `PAGER="less -R"`, `LESSOPEN="|lesspipe %s"`).
const COMMAND_VARIABLES: &[&str] = &[
    "PROMPT_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "SSH_ASKPASS",
    "PAGER",
    "MANPAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "EDITOR",
    "VISUAL",
    "BROWSER",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
];

/// An assignment to a risky variable (see [`is_risky`]) is opaque (`unsupported`): what runs
/// next is no longer what the words say. A command-valued one ([`COMMAND_VARIABLES`]) is also
/// analysed as the shell string it will run, so that what it is known to run is decided too
/// (`GIT_SSH_COMMAND="rm -rf ." git fetch` is a deletion, not only an unknown).
pub(crate) fn check_assignments(
    ctx: &mut Ctx<'_>,
    assignments: &[(String, Word)],
    span: &std::ops::Range<usize>,
) {
    for (name, value) in assignments {
        if is_risky(name) {
            let text = format!("{name}={}", value.text);
            ctx.opaque(OpaqueReason::Unsupported, &text, span.clone());
            if value.known && COMMAND_VARIABLES.contains(&name.as_str()) {
                // LESSOPEN and LESSCLOSE mark a pipe with leading bars (`|lesspipe %s`).
                let command = value.text.trim_start_matches('|');
                if !command.trim().is_empty() {
                    ctx.nested(command, Some(name), span.clone());
                }
            }
        }
    }
}

/// Records `raw` as a simple command.
pub(crate) fn emit(ctx: &mut Ctx<'_>, raw: &RawCommand, via: &[String]) {
    if ctx.over_budget() {
        return;
    }
    let program = match raw.argv.first() {
        Some(w) if w.known => basename(&w.text),
        _ => String::new(),
    };
    ctx.out.commands.push(SimpleCommand {
        argv: raw.argv.clone(),
        program,
        assignments: raw.assignments.clone(),
        redirects: raw.redirects.clone(),
        via: via.to_vec(),
        pipeline: ctx.pipe_pos,
        span: raw.span.clone(),
    });
    crate::scripts::record(ctx, raw);
}

fn resolve(ctx: &mut Ctx<'_>, mut raw: RawCommand, mut via: Vec<String>) {
    for _ in 0..64 {
        let Some(first) = raw.argv.first().cloned() else {
            return;
        };
        if !first.known {
            ctx.opaque(OpaqueReason::DynamicCommand, &first.text, raw.span.clone());
            return;
        }
        let program = basename(&first.text);
        if !first.text.contains('/') && ctx.functions.contains_key(&first.text) {
            call_function(ctx, &first.text, &raw, &via);
            return;
        }
        match peel(ctx, &program, &mut raw, &mut via) {
            Peeled::Again => continue,
            Peeled::Done => return,
            Peeled::NotWrapper => {}
        }
        interp::run(ctx, &program, raw, &via);
        return;
    }
    ctx.opaque(
        OpaqueReason::TooDeep,
        "wrappers nested too deep",
        raw.span.clone(),
    );
}

fn call_function(ctx: &mut Ctx<'_>, name: &str, raw: &RawCommand, via: &[String]) {
    let Some(body) = ctx.functions.get(name).cloned() else {
        return;
    };
    // Each expansion counts against the parse budget: `f1() { f2; f2; }; ...` doubles.
    ctx.parses += 1;
    if ctx.over_budget() {
        return;
    }
    if ctx.calling.contains(name) || ctx.depth + 1 > crate::walk::MAX_DEPTH {
        ctx.opaque(OpaqueReason::FunctionCall, name, raw.span.clone());
        return;
    }
    ctx.calling.insert(name.to_owned());
    let saved_via = std::mem::replace(&mut ctx.via, via.to_vec());
    ctx.via.push(format!("function {name}"));
    let saved_span = ctx.span_override.clone();
    if saved_span.is_none() {
        ctx.span_override = Some(raw.span.clone());
    }
    ctx.depth += 1;
    let n = ctx.inherited_redirects.len();
    ctx.inherited_redirects
        .extend(raw.redirects.iter().cloned());
    ctx.function_body(&body);
    ctx.inherited_redirects.truncate(n);
    ctx.depth -= 1;
    ctx.span_override = saved_span;
    ctx.via = saved_via;
    ctx.calling.remove(name);
}

enum Peeled {
    Again,
    Done,
    NotWrapper,
}

fn rest(raw: &RawCommand, start: usize) -> Vec<Word> {
    raw.argv
        .get(start..)
        .map(<[Word]>::to_vec)
        .unwrap_or_default()
}

fn peel(ctx: &mut Ctx<'_>, program: &str, raw: &mut RawCommand, via: &mut Vec<String>) -> Peeled {
    if program == "busybox" || program == "toybox" {
        if raw.argv.len() < 2 {
            emit(ctx, raw, via);
            return Peeled::Done;
        }
        raw.argv = rest(raw, 1);
        via.push(program.to_owned());
        return Peeled::Again;
    }
    if program == "find" {
        find(ctx, raw, via);
        return Peeled::Done;
    }
    if program == "npm" {
        crate::npm::canonical(&mut raw.argv);
    }
    match crate::runners::runner(program, &raw.argv) {
        crate::runners::Runner::No => {}
        crate::runners::Runner::Unknown(opt) => {
            emit(ctx, raw, via);
            let text = format!("{program} {opt}");
            ctx.opaque(OpaqueReason::Unsupported, &text, raw.span.clone());
            return Peeled::Done;
        }
        crate::runners::Runner::Shell(s) => {
            // The tool runs, and so does the shell string it is given.
            emit(ctx, raw, via);
            let label = format!("{program} -c");
            string_or_dynamic(ctx, s.known, &s.text, &label, raw, via);
            return Peeled::Done;
        }
        crate::runners::Runner::At(start) => {
            // The tool runs (its own rules apply), and so does the command it is given.
            emit(ctx, raw, via);
            let inner = rest(raw, start);
            if inner.is_empty() {
                return Peeled::Done;
            }
            raw.argv = inner;
            via.push(program.to_owned());
            return Peeled::Again;
        }
    }
    let Some(spec) = wrappers::spec_of(program) else {
        return Peeled::NotWrapper;
    };
    if spec.privileged {
        emit(ctx, raw, via);
    }
    let parsed = match wrappers::parse(&spec, &raw.argv) {
        Ok(p) => p,
        Err(opt) => {
            if !spec.privileged {
                emit(ctx, raw, via);
            }
            let text = format!("{program} {opt}");
            ctx.opaque(OpaqueReason::Unsupported, &text, raw.span.clone());
            return Peeled::Done;
        }
    };
    let (files, runs) = wrappers::files(program, &spec, &parsed);
    for text in runs {
        ctx.opaque(OpaqueReason::Unsupported, &text, raw.span.clone());
    }
    raw.redirects.extend(files);
    let mut inner = rest(raw, parsed.start);
    let label = program.to_owned();
    if special(ctx, program, &parsed, raw, via, &mut inner) {
        return Peeled::Done;
    }
    if inner.is_empty() {
        if !spec.privileged {
            emit(ctx, raw, via);
        }
        return Peeled::Done;
    }
    raw.argv = inner;
    check_assignments(ctx, &parsed.assignments, &raw.span);
    raw.assignments.extend(parsed.assignments);
    via.push(label);
    Peeled::Again
}

/// Wrapper-specific cases: `command -v`, `env -S`, `su -c`, `sudo -i`, `flock -c`, `xargs`,
/// and the forms that run no command. True when the command was fully handled.
fn special(
    ctx: &mut Ctx<'_>,
    program: &str,
    parsed: &wrappers::Parsed,
    raw: &mut RawCommand,
    via: &[String],
    inner: &mut Vec<Word>,
) -> bool {
    // `env -C DIR`, `sudo -D DIR`: the command runs in another folder, so its relative paths
    // are not the ones judged (`env -C / cat etc/shadow`). Opaque, and the command is still
    // judged by its own rules.
    let chdir: &[&str] = match program {
        "env" => &["C", "chdir"],
        "sudo" => &["D", "chdir"],
        _ => &[],
    };
    if !chdir.is_empty() && wrappers::has(parsed, chdir) {
        ctx.opaque(OpaqueReason::Unsupported, &format!("{program} --chdir"), raw.span.clone());
    }
    match program {
        "command" if wrappers::has(parsed, &["v", "V"]) => {
            emit(ctx, raw, via);
            return true;
        }
        "env" => {
            if let Some(s) = wrappers::value(parsed, &["S", "split-string"]) {
                let mut text = s.text.clone();
                for w in inner.iter() {
                    text.push(' ');
                    text.push_str(&quote(&w.text));
                }
                string_or_dynamic(
                    ctx,
                    s.known && inner.iter().all(|w| w.known),
                    &text,
                    "env -S",
                    raw,
                    via,
                );
                return true;
            }
        }
        "su" | "runuser" => {
            let late = late_command_option(raw, parsed.start);
            let given = wrappers::value(parsed, &["c", "command", "C", "session-command"]);
            if let Some(s) = given.cloned().or(late) {
                let label = format!("{program} -c");
                string_or_dynamic(ctx, s.known, &s.text, &label, raw, via);
                return true;
            }
            if program == "runuser" && wrappers::has(parsed, &["u", "user"]) && !inner.is_empty() {
                // `runuser -u USER cmd args`: command mode.
            } else {
                ctx.opaque(OpaqueReason::ShellFromStdin, program, raw.span.clone());
                return true;
            }
        }
        "sudo" | "doas"
            if inner.is_empty() && wrappers::has(parsed, &["s", "i", "shell", "login"]) =>
        {
            ctx.opaque(OpaqueReason::ShellFromStdin, program, raw.span.clone());
            return true;
        }
        "flock" => {
            if let Some(s) = wrappers::value(parsed, &["c", "command"]) {
                // The lock file is opened as `: > FILE` would open it.
                if !raw.redirects.is_empty() {
                    let mut open = raw.clone();
                    open.argv = vec![Word { text: ":".to_owned(), known: true }];
                    emit(ctx, &open, via);
                }
                string_or_dynamic(ctx, s.known, &s.text.clone(), "flock -c", raw, via);
                return true;
            }
        }
        "xargs" => {
            if inner.is_empty() {
                inner.push(Word {
                    text: "echo".to_owned(),
                    known: true,
                });
            }
            if wrappers::has(parsed, &["I", "i", "replace"]) {
                // `-i` and `--replace` without a value replace `{}`.
                let r = wrappers::value(parsed, &["I", "i", "replace"])
                    .map_or_else(|| "{}".to_owned(), |r| r.text.clone());
                for w in inner.iter_mut() {
                    if !r.is_empty() && w.text.contains(&r) {
                        mark_placeholder(raw, w, &r);
                    }
                }
            } else {
                inner.push(Word {
                    text: "<xargs input>".to_owned(),
                    known: false,
                });
            }
            raw.stdin = Stdin::Inherited;
        }
        "ionice" if wrappers::has(parsed, &["p", "P", "u", "pid", "pgid", "uid"]) => {
            emit(ctx, raw, via);
            return true;
        }
        "taskset" if wrappers::has(parsed, &["p", "pid"]) => {
            emit(ctx, raw, via);
            return true;
        }
        "strace" | "ltrace" if wrappers::has(parsed, &["p"]) => {
            emit(ctx, raw, via);
            return true;
        }
        "doas" if wrappers::has(parsed, &["C"]) => return true,
        _ => {}
    }
    false
}

/// The parameter a run-time replacement token stands for when a shell string is analysed.
const PLACEHOLDER: &str = "\"$__warden_xargs\"";

/// Marks `w` unknown because it holds the replacement token `token`; a word that was known
/// is remembered with the token replaced by [`PLACEHOLDER`] (see `RawCommand::placeholders`).
fn mark_placeholder(raw: &mut RawCommand, w: &mut Word, token: &str) {
    if w.known {
        let replaced = w.text.replace(token, PLACEHOLDER);
        raw.placeholders.push((w.text.clone(), replaced));
    }
    w.known = false;
}

/// The shell string to analyse for a word made unknown only by a replacement token.
pub(crate) fn placeholder<'r>(raw: &'r RawCommand, w: &Word) -> Option<&'r str> {
    if w.known {
        return None;
    }
    raw.placeholders
        .iter()
        .find(|(orig, _)| *orig == w.text)
        .map(|(_, replaced)| replaced.as_str())
}

/// After a placeholder string was analysed: the placeholder may have been single-quoted
/// (`sh -c "rm '{}'"`) and come out as a known literal. Every word of the commands from
/// index `from` on that holds it is unknown; a command whose command word holds it is
/// `dynamic_command` instead.
pub(crate) fn unknown_placeholders(ctx: &mut Ctx<'_>, from: usize) {
    let name = PLACEHOLDER.trim_matches('"');
    let fix = |w: &mut Word| {
        if w.text.contains(name) {
            w.known = false;
        }
    };
    let added = ctx.out.commands.split_off(from.min(ctx.out.commands.len()));
    for mut c in added {
        c.argv.iter_mut().for_each(fix);
        c.assignments.iter_mut().for_each(|(_, w)| fix(w));
        c.redirects.iter_mut().for_each(|r| fix(&mut r.target));
        match c.argv.first() {
            Some(w0) if !w0.known && !c.program.is_empty() => {
                let text = w0.text.clone();
                ctx.opaque(OpaqueReason::DynamicCommand, &text, c.span.clone());
            }
            _ => ctx.out.commands.push(c),
        }
    }
}

/// `su USER -c STRING`: options may follow the user name.
fn late_command_option(raw: &RawCommand, start: usize) -> Option<Word> {
    let mut i = start;
    while let Some(w) = raw.argv.get(i) {
        i += 1;
        let t = w.text.as_str();
        if matches!(t, "-c" | "--command" | "-C" | "--session-command") {
            return raw.argv.get(i).cloned();
        }
        if let Some(v) = t.strip_prefix("--command=") {
            return Some(Word {
                text: v.to_owned(),
                known: w.known,
            });
        }
    }
    None
}

/// Analyses a shell string given to a wrapper, or reports it as `dynamic_eval`.
pub(crate) fn string_or_dynamic(
    ctx: &mut Ctx<'_>,
    known: bool,
    text: &str,
    label: &str,
    raw: &RawCommand,
    via: &[String],
) {
    if !known {
        ctx.opaque(OpaqueReason::DynamicEval, text, raw.span.clone());
        return;
    }
    let saved = std::mem::replace(&mut ctx.via, via.to_vec());
    ctx.nested(text, Some(label), raw.span.clone());
    ctx.via = saved;
}

/// Single-quotes a word for re-parsing.
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `find ... -exec CMD ... ;`: the find itself, then each command it runs.
fn find(ctx: &mut Ctx<'_>, raw: &RawCommand, via: &[String]) {
    emit(ctx, raw, via);
    let mut i = 1;
    while let Some(w) = raw.argv.get(i) {
        i += 1;
        let is_exec = w.known && matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir");
        if !is_exec {
            continue;
        }
        let mut inner = raw.clone();
        let mut argv = vec![];
        while let Some(a) = raw.argv.get(i) {
            i += 1;
            if a.known && (a.text == ";" || a.text == "+") {
                break;
            }
            let mut a = a.clone();
            if a.text.contains("{}") {
                mark_placeholder(&mut inner, &mut a, "{}");
            }
            argv.push(a);
        }
        inner.argv = argv;
        inner.assignments = vec![];
        inner.stdin = Stdin::Inherited;
        let mut v = via.to_vec();
        v.push(format!("find {}", w.text));
        if inner.argv.is_empty() {
            continue;
        }
        resolve(ctx, inner, v);
    }
}

/// The shells followed by [`crate::interp`].
pub(crate) fn is_shell(program: &str) -> bool {
    SHELLS.contains(&program)
}
