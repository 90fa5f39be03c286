//! Scripts written and run in the same string: `echo 'curl x | sh' > s.sh && sh s.sh`,
//! `cat > run.sh <<EOF ... EOF` then `bash run.sh`, `printf ... > t.py; python3 t.py`,
//! `... > f; chmod +x f; ./f`. What runs is what was written, not a workspace script.
//!
//! Every file a command writes is remembered by its base name (a `cd` between the write and
//! the run, or another spelling of the path, does not hide it), with what was written when
//! the analyser can see it: the output of `echo`, `printf` or `cat`/`tee` of a here-document.
//! A shell running such a file analyses that text as a nested string (`via: ["sh s.sh"]`);
//! a file written by other means (`cp`, `curl -o`, `tee`, an unknown command) is
//! `dynamic_eval`, and any interpreter other than a shell running a written file is
//! `inline_code`. The run is still reported as itself: a script the string did not write, or
//! did not surely write, stays a command like any other.

use crate::command::{basename, emit, is_shell, string_or_dynamic};
use crate::model::{Access, OpaqueReason, Word};
use crate::walk::{Ctx, RawCommand, Stdin};
use std::collections::HashMap;

/// At most this many possible contents are kept per file; more means the content is unknown.
const MAX_CONTENTS: usize = 8;

/// Programs that do not write the files they are given.
const NON_WRITERS: &[&str] = &[
    "chmod", "cat", "ls", "test", "[", "echo", "printf", "head", "tail", "wc", "grep", "file",
    "stat", "less", "more", "diff", "cmp", "md5sum", "sha256sum", "sha1sum", "shellcheck",
    "realpath", "readlink", "basename", "dirname", "cd", "pushd", "which", "type", "command",
    "true", ":", "bat", "nl", "od", "hexdump",
];

/// The files written so far, by base name: each possible content (`None`: not known).
#[derive(Default)]
pub(crate) struct Written(HashMap<String, Vec<Option<String>>>);

impl Written {
    fn note(&mut self, path: &str, content: Option<String>, maybe: bool, append: bool) {
        let name = basename(path.trim_end_matches('/'));
        if name.is_empty() || name == "." || name == ".." {
            return;
        }
        let before = self.0.remove(&name);
        let mut now: Vec<Option<String>> = match (append, before) {
            // Appended to a file not written here: its earlier content is not known.
            (true, None) => vec![None],
            // An append that may not happen leaves the earlier content possible too.
            (true, Some(old)) => {
                let appended = old.iter().map(|o| Some(o.clone()? + content.as_deref()?));
                appended.chain(old.iter().filter(|_| maybe).cloned()).collect()
            }
            (false, Some(old)) if maybe => old.into_iter().chain([content]).collect(),
            (false, _) => vec![content],
        };
        now.dedup();
        if now.len() > MAX_CONTENTS {
            now = vec![None];
        }
        self.0.insert(name, now);
    }

    fn contents(&self, path: &str) -> Option<&[Option<String>]> {
        self.0.get(&basename(path.trim_end_matches('/'))).map(Vec::as_slice)
    }
}

/// Records the files `raw` (an emitted command) writes, and what it writes into them.
pub(crate) fn record(ctx: &mut Ctx<'_>, raw: &RawCommand) {
    let Some(first) = raw.argv.first().filter(|w| w.known) else { return };
    let program = basename(&first.text);
    let output = output(&program, raw);
    let maybe = ctx.maybe > 0;
    for r in &raw.redirects {
        if r.access != Access::Read && r.target.known {
            // A group's or function's redirect (`{ echo a; echo b; } > f`) takes every
            // command's output in turn: not one command's.
            let shared = ctx.inherited_redirects.contains(r);
            let content = if shared { None } else { output.clone() };
            ctx.written.note(&r.target.text, content, maybe, r.access == Access::Append);
        }
    }
    // A shell or interpreter runs the file it names; it is not taken to write it.
    if NON_WRITERS.contains(&program.as_str()) || is_shell(&program) || crate::interp::is_interpreter(&program) || git_reads(raw) {
        return;
    }
    // Any other program may write the files it names (`cp x s.sh`, `curl -o s.sh`, `dd of=f`).
    let tee = program == "tee";
    let stdin = match &raw.stdin {
        Stdin::Text { text, known: true } if tee => Some(text.clone()),
        _ => None,
    };
    for w in raw.argv.iter().skip(1).filter(|w| w.known) {
        let t = w.text.as_str();
        let value = t.rsplit_once('=').map_or(t, |(_, v)| v);
        if !value.is_empty() && !value.starts_with('-') {
            ctx.written.note(value, stdin.clone(), maybe, false);
        }
    }
}

/// `git` with a subcommand that writes no file of the work tree (`git diff s.sh`, `git add`).
fn git_reads(raw: &RawCommand) -> bool {
    const READS: &[&str] = &["diff", "log", "show", "blame", "status", "add", "ls-files", "grep"];
    let mut words = raw.argv.iter().map(|w| w.text.as_str());
    words.next().map(basename).as_deref() == Some("git") && words.next().is_some_and(|s| READS.contains(&s))
}

/// What `raw` writes to its standard output, when the analyser can see it.
fn output(program: &str, raw: &RawCommand) -> Option<String> {
    let args = raw.argv.get(1..).unwrap_or_default();
    if args.iter().any(|w| !w.known) {
        return None;
    }
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    match program {
        "echo" => {
            let flag = |t: &&&str| t.strip_prefix('-').is_some_and(|f| !f.is_empty() && f.chars().all(|c| "neE".contains(c)));
            let n = texts.iter().take_while(flag).count();
            let rest = texts.get(n..).unwrap_or_default();
            // `echo -e` and dash's echo turn backslashes into other characters.
            let escaped = texts.iter().take(n).any(|t| t.contains('e')) || rest.iter().any(|t| t.contains('\\'));
            (!escaped).then(|| rest.join(" ") + "\n")
        }
        "printf" => printf(&texts),
        "cat" if texts.iter().all(|t| *t == "-") => match &raw.stdin {
            Stdin::Text { text, known: true } => Some(text.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `printf FORMAT ARGS...` for the formats `%s`, `%%` and the escapes `\n`, `\t`, `\\`; `None`
/// for anything else.
fn printf(args: &[&str]) -> Option<String> {
    let (format, mut rest) = match args {
        ["--", f, r @ ..] => (*f, r),
        [f, r @ ..] if !f.starts_with('-') => (*f, r),
        _ => return None,
    };
    let mut out = String::new();
    loop {
        let mut chars = format.chars();
        let mut used = false;
        while let Some(c) = chars.next() {
            match (c, c != '%' && c != '\\') {
                (_, true) => out.push(c),
                ('%', _) => match chars.next()? {
                    '%' => out.push('%'),
                    's' => {
                        used = true;
                        if let Some((first, more)) = rest.split_first() {
                            out.push_str(first);
                            rest = more;
                        }
                    }
                    _ => return None,
                },
                _ => match chars.next()? {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    '\\' => out.push('\\'),
                    _ => return None,
                },
            }
        }
        if !used || rest.is_empty() {
            return Some(out);
        }
    }
}

/// A shell running `script` (`sh s.sh`), after the shell was reported: the text written into
/// it is analysed, or the run is opaque when what was written is not known.
pub(crate) fn shell_runs(ctx: &mut Ctx<'_>, script: &Word, raw: &RawCommand, via: &[String]) {
    let Some(contents) = ctx.written.contents(&script.text).map(<[_]>::to_vec) else { return };
    let label = format!("{} {}", raw.argv.first().map_or("", |w| w.text.as_str()), script.text);
    for content in contents {
        match content {
            Some(text) => string_or_dynamic(ctx, true, &text, &label, raw, via),
            None => ctx.opaque(OpaqueReason::DynamicEval, &label, raw.span.clone()),
        }
    }
}

/// An interpreter other than a shell running `script` (`python3 t.py`): inline code when the
/// string wrote it.
pub(crate) fn interpreter_runs(ctx: &mut Ctx<'_>, script: &Word, raw: &RawCommand) {
    if ctx.written.contents(&script.text).is_some() {
        let text = raw.argv.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
        ctx.opaque(OpaqueReason::InlineCode, &text, raw.span.clone());
    }
}

/// A written file run by its path (`./f`): reported, then its text analysed as a shell
/// script when it has no `#!` line or names a shell there; any other `#!` is inline code.
/// `false` when the string did not write the file.
pub(crate) fn executed(ctx: &mut Ctx<'_>, raw: &RawCommand, via: &[String]) -> bool {
    let Some(first) = raw.argv.first().filter(|w| w.known && w.text.contains('/')) else { return false };
    let Some(contents) = ctx.written.contents(&first.text).map(<[_]>::to_vec) else { return false };
    emit(ctx, raw, via);
    for content in contents {
        match content {
            Some(text) if shebang(&text).is_none_or(|i| is_shell(&i)) => {
                string_or_dynamic(ctx, true, &text, &first.text, raw, via)
            }
            Some(_) => ctx.opaque(OpaqueReason::InlineCode, &first.text, raw.span.clone()),
            None => ctx.opaque(OpaqueReason::DynamicEval, &first.text, raw.span.clone()),
        }
    }
    true
}

/// The program a `#!` line names (`#!/usr/bin/env -S python3 -u` -> `python3`).
fn shebang(text: &str) -> Option<String> {
    let line = text.strip_prefix("#!")?.lines().next().unwrap_or_default();
    let mut words = line.split_whitespace();
    let first = basename(words.next().unwrap_or_default());
    if first == "env" {
        return Some(words.find(|w| !w.starts_with('-')).map(basename).unwrap_or_default());
    }
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::{printf, shebang};

    #[test]
    fn what_printf_writes() {
        assert_eq!(printf(&["curl x | sh\\n"]).as_deref(), Some("curl x | sh\n"));
        assert_eq!(printf(&["%s\\n", "ls", "git push"]).as_deref(), Some("ls\ngit push\n"));
        assert_eq!(printf(&["100%%"]).as_deref(), Some("100%"));
        // Conversions and escapes not followed here: not known.
        assert_eq!(printf(&["%b", "x"]), None);
        assert_eq!(printf(&["\\x72m -rf ~"]), None);
        assert_eq!(printf(&["-v", "x", "y"]), None);
    }

    #[test]
    fn the_program_of_a_shebang() {
        assert_eq!(shebang("#!/bin/sh\nls").as_deref(), Some("sh"));
        assert_eq!(shebang("#!/usr/bin/env -S python3 -u\n").as_deref(), Some("python3"));
        assert_eq!(shebang("ls\n"), None);
    }
}
