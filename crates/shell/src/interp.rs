//! Programs that run other programs from a string: shells (`sh -c`, `bash <<EOF`), `eval`,
//! `source`, and interpreters with inline code (`python3 -c`, `node -e`, `awk`, `sed e`).

use crate::command::{emit, is_shell, placeholder, string_or_dynamic};
use crate::model::{Access, OpaqueReason, Word};
use crate::walk::{Ctx, RawCommand, Stdin, fd_path};

/// Records `raw` (after wrappers), following nested programs.
pub(crate) fn run(ctx: &mut Ctx<'_>, program: &str, raw: RawCommand, via: &[String]) {
    if crate::scripts::executed(ctx, &raw, via) {
        return;
    }
    if is_shell(program) {
        return shell(ctx, program, &raw, via);
    }
    match program {
        "eval" => {
            let mut args = raw.argv.get(1..).unwrap_or_default();
            if args.first().is_some_and(|w| w.known && w.text == "--") {
                args = args.get(1..).unwrap_or_default();
            }
            if args.is_empty() {
                return;
            }
            let known = args.iter().all(|w| w.known);
            let text = args
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            string_or_dynamic(ctx, known, &text, "eval", &raw, via);
        }
        "source" | "." => {
            emit(ctx, &raw, via);
            let text = words_text(&raw.argv);
            ctx.opaque(OpaqueReason::Unsupported, &text, raw.span.clone());
        }
        "trap" => {
            emit(ctx, &raw, via);
            trap(ctx, &raw, via);
        }
        "alias" => {
            emit(ctx, &raw, via);
            alias(ctx, &raw, via);
        }
        "enable" if raw.argv.len() > 1 => {
            emit(ctx, &raw, via);
            let text = words_text(&raw.argv);
            ctx.opaque(OpaqueReason::Unsupported, &text, raw.span.clone());
        }
        "watch" => watch(ctx, &raw, via),
        "printf" | "read" | "getopts" | "mapfile" | "readarray" | "wait" => {
            emit(ctx, &raw, via);
            crate::builtins::assigned(ctx, program, &raw, via);
        }
        "export" | "declare" | "typeset" | "readonly" | "local" => {
            emit(ctx, &raw, via);
            crate::builtins::namerefs(ctx, &raw);
            let assignments: Vec<(String, Word)> = raw
                .argv
                .iter()
                .skip(1)
                .filter_map(|w| {
                    let (name, value) = w.text.split_once('=')?;
                    let value = Word {
                        text: value.to_owned(),
                        known: w.known,
                    };
                    Some((name.trim_end_matches('+').to_owned(), value))
                })
                .collect();
            crate::command::check_assignments(ctx, &assignments, &raw.span);
        }
        "hash"
            if raw
                .argv
                .iter()
                .any(|w| w.text.starts_with("-p") || !w.known) =>
        {
            emit(ctx, &raw, via);
            ctx.opaque(OpaqueReason::Unsupported, "hash -p", raw.span.clone());
        }
        "sed" | "gsed" => sed(ctx, raw, via),
        "uniq" | "xxd" => {
            let mut raw = raw;
            if let Some(target) = crate::outputs::output(program, &raw.argv).cloned() {
                crate::walk::push_redirect(&mut raw, Access::Write, target);
            }
            emit(ctx, &raw, via);
        }
        _ => {
            emit(ctx, &raw, via);
            interpreter(ctx, program, &raw);
        }
    }
}

/// `sh -c STRING`, `bash <<EOF`, `curl | sh`, `sh script.sh`.
fn shell(ctx: &mut Ctx<'_>, program: &str, raw: &RawCommand, via: &[String]) {
    let mut command_mode = false;
    let mut i = 1;
    let mut operand: Option<&Word> = None;
    let mut read_stdin = false;
    while let Some(w) = raw.argv.get(i) {
        i += 1;
        let t = w.text.as_str();
        if command_mode && placeholder(raw, w).is_some() {
            operand = Some(w);
            break;
        }
        if !w.known {
            emit(ctx, raw, via);
            ctx.opaque(OpaqueReason::DynamicEval, t, raw.span.clone());
            return;
        }
        if t == "--" || t == "-" {
            operand = raw.argv.get(i);
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                i += 1;
            }
            if long == "command" {
                command_mode = true;
            }
            continue;
        }
        if let Some(cluster) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            if cluster.contains('c') {
                command_mode = true;
            }
            if cluster.contains('s') {
                read_stdin = true;
            }
            if cluster.contains('o') || cluster.contains('O') {
                i += 1;
            }
            continue;
        }
        operand = Some(w);
        break;
    }
    if command_mode {
        match operand {
            Some(s) => {
                let label = format!("{program} -c");
                if let Some(text) = placeholder(raw, s) {
                    // The file name is pasted into the string as shell code: it can inject
                    // commands, so the string stays opaque; what it visibly runs is reported.
                    ctx.opaque(OpaqueReason::DynamicEval, &s.text, raw.span.clone());
                    let text = text.to_owned();
                    let n = ctx.out.commands.len();
                    string_or_dynamic(ctx, true, &text, &label, raw, via);
                    crate::command::unknown_placeholders(ctx, n);
                } else {
                    string_or_dynamic(ctx, s.known, &s.text.clone(), &label, raw, via);
                }
            }
            None => emit(ctx, raw, via),
        }
        return;
    }
    // A script named by a descriptor (`bash /dev/fd/3 3<<< …`) is whatever is fed to it.
    let source = match operand.map(|w| fd_path(&w.text)) {
        Some(Some(fd)) if !read_stdin => raw.on_fd(fd),
        Some(None) if !read_stdin => {
            emit(ctx, raw, via);
            if let Some(script) = operand {
                crate::scripts::shell_runs(ctx, script, raw, via);
            }
            return;
        }
        _ => &raw.stdin,
    };
    match source {
        Stdin::Text { text, known: true } => {
            let label = format!("{program} <<");
            string_or_dynamic(ctx, true, &text.clone(), &label, raw, via);
        }
        _ => {
            emit(ctx, raw, via);
            let text = words_text(&raw.argv);
            ctx.opaque(OpaqueReason::ShellFromStdin, &text, raw.span.clone());
        }
    }
}

/// `trap ACTION SIGNAL...`: the action is a shell string that runs later, analysed like `eval`.
/// `trap`, `trap -p`, `trap -l`, `trap - SIG`, `trap '' SIG` and `trap SIG` run nothing.
fn trap(ctx: &mut Ctx<'_>, raw: &RawCommand, via: &[String]) {
    let mut args = raw.argv.get(1..).unwrap_or_default();
    while let Some(first) = args.first() {
        let t = first.text.as_str();
        if !first.known {
            break;
        }
        if t == "--" {
            args = args.get(1..).unwrap_or_default();
            break;
        }
        if t.starts_with('-') && t.len() > 1 {
            if t.contains(['p', 'P', 'l']) {
                return;
            }
            args = args.get(1..).unwrap_or_default();
            continue;
        }
        break;
    }
    // A single operand is a signal being reset, unless it is unknown (`trap $x` may split).
    let [action, _, ..] = args else {
        if let [w] = args
            && !w.known
        {
            ctx.opaque(OpaqueReason::DynamicEval, &w.text, raw.span.clone());
        }
        return;
    };
    if action.known && (action.text.is_empty() || action.text == "-") {
        return;
    }
    string_or_dynamic(ctx, action.known, &action.text, "trap", raw, via);
}

/// `alias NAME=BODY...`: the body runs wherever the alias is used later, analysed like `eval`.
fn alias(ctx: &mut Ctx<'_>, raw: &RawCommand, via: &[String]) {
    for w in raw.argv.get(1..).unwrap_or_default() {
        if !w.known {
            ctx.opaque(OpaqueReason::DynamicEval, &w.text, raw.span.clone());
            continue;
        }
        if let Some((_, body)) = w.text.split_once('=') {
            string_or_dynamic(ctx, true, body, "alias", raw, via);
        }
    }
}

/// `watch CMD...`: the words are joined into a shell string (unless `-x`).
fn watch(ctx: &mut Ctx<'_>, raw: &RawCommand, via: &[String]) {
    emit(ctx, raw, via);
    let mut i = 1;
    let mut exec = false;
    while let Some(w) = raw.argv.get(i) {
        let t = w.text.as_str();
        if !t.starts_with('-') || !w.known {
            break;
        }
        i += 1;
        if t == "--" {
            break;
        }
        if matches!(t, "-x" | "--exec") {
            exec = true;
        }
        if matches!(t, "-n" | "--interval" | "-q" | "--equexit") {
            i += 1;
        }
    }
    let words = raw.argv.get(i..).unwrap_or_default();
    if words.is_empty() {
        return;
    }
    let text = if exec {
        words
            .iter()
            .map(|w| crate::command::quote(&w.text))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let known = words.iter().all(|w| w.known);
    string_or_dynamic(ctx, known, &text, "watch", raw, &[]);
}

/// The option syntax of an interpreter, as far as finding its code needs.
struct Syntax {
    /// Short options whose value is code (`-c`, `-e`), also inside a cluster (`-pe`, `-lne`).
    code_short: &'static str,
    /// Long options (and words) whose value is code (`--eval`, `--eval=CODE`, `deno eval`).
    code_long: &'static [&'static str],
    /// Short options that take a value, attached or as the next word (`-W ignore`, `-Wignore`):
    /// the value is not the script.
    valued_short: &'static str,
    /// Long options that take the next word as their value when it is not attached.
    valued_long: &'static [&'static str],
    /// Short options whose value is only attached and ends the cluster (`perl -i.bak`).
    attached_short: &'static str,
}

const fn syntax(code_short: &'static str, valued_short: &'static str) -> Syntax {
    Syntax { code_short, code_long: &[], valued_short, valued_long: &[], attached_short: "" }
}

/// Whether `program` is an interpreter that runs a script file it is given (`python3 t.py`).
pub(crate) fn is_interpreter(program: &str) -> bool {
    syntax_of(program).is_some()
}

/// The option syntax of an interpreter that takes inline code.
fn syntax_of(program: &str) -> Option<Syntax> {
    let p = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match p {
        "python" | "pypy" => Syntax {
            valued_long: &["--check-hash-based-pycs"],
            ..syntax("c", "WXm")
        },
        "node" | "nodejs" | "bun" => Syntax {
            code_long: &["--eval", "--print"],
            valued_long: &[
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "--conditions",
                "--title",
                "--stack-size",
                "--input-type",
                "--env-file",
                "--inspect-port",
                "--test-reporter",
                "--test-reporter-destination",
                "--max-old-space-size",
                "--preserve-symlinks-main",
                "--redirect-warnings",
                "--cpu-prof-dir",
                "--heap-prof-dir",
                "--diagnostic-dir",
                "--report-dir",
                "--openssl-config",
                "--icu-data-dir",
                "--unhandled-rejections",
            ],
            ..syntax("ep", "rC")
        },
        "perl" => Syntax { attached_short: "0ilxdDCFMmV", ..syntax("eE", "I") },
        "ruby" => Syntax {
            code_long: &["--eval"],
            attached_short: "xFWTKl0",
            ..syntax("e", "rICE")
        },
        "php" => Syntax {
            code_long: &["--run", "--process-begin", "--process-code", "--process-end"],
            valued_long: &["--define", "--php-ini", "--docroot", "--zend-extension"],
            ..syntax("rBRE", "dctz")
        },
        "lua" | "luajit" => syntax("e", "l"),
        "osascript" => syntax("e", "l"),
        "Rscript" | "jshell" | "tclsh" | "wish" => syntax("e", ""),
        "julia" => Syntax {
            code_long: &["--eval", "--print"],
            valued_long: &["--project", "--threads", "--procs", "--sysimage", "--load"],
            ..syntax("eE", "CJLtp")
        },
        "deno" => Syntax { code_long: &["eval"], ..syntax("", "") },
        _ => return None,
    })
}

/// Python modules that run code given on their command line or standard input.
fn python_module(ctx: &mut Ctx<'_>, module: &str, rest: &[Word], raw: &RawCommand, full: &str) {
    let span = raw.span.clone();
    match module {
        // `-m timeit -s SETUP STMT`: every operand is code.
        "timeit" => ctx.opaque(OpaqueReason::InlineCode, full, span),
        // `-m pdb -c CMD`, `-m idlelib -c CODE`: `-c` is a debugger command or code.
        "pdb" | "idlelib" | "idlelib.idle" if rest.iter().any(|w| !w.known || w.text.starts_with("-c")) => {
            ctx.opaque(OpaqueReason::InlineCode, full, span)
        }
        // An interactive console: its code is standard input.
        "code" | "pdb" | "idlelib" | "idlelib.idle" if raw.stdin != Stdin::Inherited => {
            ctx.opaque(OpaqueReason::ShellFromStdin, full, span)
        }
        _ => {}
    }
}

/// What the options of an interpreter say before its script.
enum Scan {
    /// Inline code or an unknown word: opaque.
    Code,
    /// A script (a file, or the operands after `--`), at this index.
    Script(usize),
    /// No script: code from standard input, or `-` / a descriptor (handled by the caller).
    NoScript,
    /// A descriptor path `/dev/fd/N` at this index.
    Fd(usize),
    /// `python -m MODULE`: the module, and the index of its first argument.
    Module(String, usize),
}

/// Walks the options of `args` (argv without the program) as `sx` reads them.
fn scan(sx: &Syntax, args: &[Word], interactive: &mut bool) -> Scan {
    let data = |v: &str| v.trim_start_matches(['\'', '"']).starts_with("data:");
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if !w.known || sx.code_long.contains(&t) {
            return Scan::Code;
        }
        if t == "--" {
            return if args.get(i + 1).is_some() { Scan::Script(i + 1) } else { Scan::NoScript };
        }
        if t == "-" {
            return Scan::NoScript;
        }
        if fd_path(t).is_some() {
            return Scan::Fd(i);
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let name = format!("--{name}");
            if sx.code_long.contains(&name.as_str()) || value.is_some_and(data) {
                return Scan::Code;
            }
            if value.is_none() && sx.valued_long.contains(&name.as_str()) {
                // A module given as a `data:` URL is inline code (`node --import data:...`).
                if args.get(i + 1).is_some_and(|v| !v.known || data(&v.text)) {
                    return Scan::Code;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        let Some(body) = t.strip_prefix('-').filter(|b| !b.is_empty()) else {
            return Scan::Script(i);
        };
        for (k, c) in body.char_indices() {
            if sx.code_short.contains(c) {
                return Scan::Code;
            }
            if c == 'i' && sx.valued_short.contains('W') {
                *interactive = true; // python -i: standard input after the script
            }
            let rest = body.get(k + c.len_utf8()..).unwrap_or("");
            if sx.valued_short.contains(c) {
                if c == 'm' && sx.valued_short.contains('W') {
                    // python -m MODULE: the module is the script.
                    return match (rest.is_empty(), args.get(i + 1)) {
                        (false, _) => Scan::Module(rest.to_owned(), i + 1),
                        (true, Some(m)) if m.known => Scan::Module(m.text.clone(), i + 2),
                        (true, Some(_)) => Scan::Code,
                        (true, None) => Scan::NoScript,
                    };
                }
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i)
                } else {
                    None
                };
                if value.is_some_and(|v| !v.known || data(&v.text)) || data(rest) {
                    return Scan::Code;
                }
                break;
            }
            if sx.attached_short.contains(c) {
                // perl -M'POSIX;system(...)' becomes `use POSIX;system(...)`.
                if matches!(c, 'M' | 'm') && rest.contains([';', '(', ' ', '{', '`']) {
                    return Scan::Code;
                }
                // perl -l and -0 take digits only; the cluster goes on (`-lne`).
                if !matches!(c, 'l' | '0') || !sx.valued_short.contains('I') {
                    break;
                }
            }
        }
        i += 1;
    }
    Scan::NoScript
}

/// Opaque parts for interpreters with inline code or code on standard input.
fn interpreter(ctx: &mut Ctx<'_>, program: &str, raw: &RawCommand) {
    let span = raw.span.clone();
    let full = raw
        .argv
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if matches!(program, "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk") {
        if crate::awk::dangerous(&raw.argv) {
            ctx.opaque(OpaqueReason::InlineCode, &full, span);
        }
        return;
    }
    if matches!(program, "make" | "gmake" | "bmake") {
        if crate::make::takes_inline_code(&raw.argv) {
            ctx.opaque(OpaqueReason::InlineCode, &full, span);
        }
        return;
    }
    let Some(sx) = syntax_of(program) else {
        return;
    };
    let args = raw.argv.get(1..).unwrap_or_default();
    let mut interactive = false;
    let script = match scan(&sx, args, &mut interactive) {
        Scan::Code => {
            ctx.opaque(OpaqueReason::InlineCode, &full, span);
            return;
        }
        Scan::Fd(at) => {
            // The code is what is fed to that descriptor, never analysed for an interpreter.
            let fd = args.get(at).and_then(|w| fd_path(&w.text));
            if fd != Some(0) || raw.stdin != Stdin::Inherited {
                ctx.opaque(OpaqueReason::ShellFromStdin, &full, span);
            }
            return;
        }
        Scan::Module(module, from) => {
            python_module(ctx, &module, args.get(from..).unwrap_or_default(), raw, &full);
            true
        }
        Scan::Script(at) => {
            if let Some(script) = args.get(at) {
                crate::scripts::interpreter_runs(ctx, script, raw);
            }
            true
        }
        Scan::NoScript => false,
    };
    if (!script || interactive) && (raw.stdin != Stdin::Inherited || args.is_empty()) {
        ctx.opaque(OpaqueReason::ShellFromStdin, &full, span);
    }
}

/// `sed`: the files its script reads (`r`, `R`) and writes (`w`, `W`, `s///w`) are redirects
/// of the command, judged like `< f` and `> f`; a script that executes a command or writes a
/// file, or that cannot be read (`-f`), is inline code.
fn sed(ctx: &mut Ctx<'_>, mut raw: RawCommand, via: &[String]) {
    let found = crate::sed::command(&raw.argv);
    for (names, access) in [(&found.reads, Access::Read), (&found.writes, Access::Write)] {
        for name in names {
            let target = Word { text: name.clone(), known: true };
            crate::walk::push_redirect(&mut raw, access, target);
        }
    }
    emit(ctx, &raw, via);
    if found.dangerous {
        ctx.opaque(OpaqueReason::InlineCode, &words_text(&raw.argv), raw.span.clone());
    }
}

/// The words of an argv joined with spaces, as written.
fn words_text(words: &[Word]) -> String {
    words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
}
