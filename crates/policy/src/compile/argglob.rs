//! Arguments that are not plain paths: shell globs (`~/.s*/id_*`) and words with parameters
//! (`$HOME/.ssh/id_rsa`, `"${HOME}/.aws/credentials"`, `$dir/key.pem`). Such an argument is
//! checked for *overlap* with ask/deny `fs` patterns: could some file it names be covered?
//!
//! `$HOME` and `$PWD` (plain or braced) are substituted with the context's home and working
//! directory; any other parameter, substitution or backquote makes its segment "any number of
//! segments". A glob segment overlaps a literal pattern segment it matches (bracket classes
//! included: `.e[n]v` is `.env`). An unquoted glob is expanded by the shell into the files it
//! matches, so it also overlaps a wildcard pattern segment that some name matches too
//! (`/etc/ssh/ssh_host_*` against `ssh_host_*_key`, `/proc/*/environ`), and `/etc/*` overlaps
//! `/etc/shadow`.

use super::glob::Glob;
use super::shglob::ShGlob;
use super::paths::{Anchors, PathPattern, Root, Seg};
use std::borrow::Cow;

/// One segment of an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArgSeg {
    /// No wildcard.
    Lit(String),
    /// `*`, `?` or `[` inside.
    Glob(ShGlob),
    /// A parameter or substitution: any number of segments.
    Multi,
}

/// An argument to check by overlap; `exact` when nothing in it is unknown (globs only).
#[derive(Debug, Clone)]
pub(crate) struct ArgPath {
    pub(crate) segs: Vec<ArgSeg>,
    pub(crate) exact: bool,
    /// The shell expands its globs (they were unquoted): it names the files they match.
    pub(crate) expanded: bool,
    /// The argument as resolved, for the part's subject.
    pub(crate) shown: String,
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Substitutes `$HOME`, `${HOME}`, `$PWD`, `${PWD}`, `$(pwd)`; returns the text and whether other
/// parameters remain (marked by `$` or a backquote).
fn substitute(text: &str, home: &str, cwd: &str) -> (String, bool) {
    let unquoted: String = text.chars().filter(|c| *c != '"' && *c != '\'').collect();
    let s = unquoted
        .replace("${HOME}", home)
        .replace("$HOME", home)
        .replace("${PWD}", cwd)
        .replace("$PWD", cwd)
        .replace("$(pwd)", cwd)
        .replace("`pwd`", cwd);
    let unknown = s.contains('$') || s.contains('`');
    (s, unknown)
}

/// Programs that never open their operands as files (`echo $x`, `test -n "$x"`, `cd "$d"`:
/// the folder `cd` enters is judged for the paths after it, as unknown).
const NO_FILE_OPERANDS: &[&str] = &[
    "echo", "printf", "test", "[", "true", "false", ":", "exit", "return", "shift", "sleep", "expr",
    "let", "seq", "basename", "dirname", "cd", "pushd", "popd", "unset", "export", "local",
    "declare", "typeset", "readonly", "set", "read", "wait",
];

/// Whether an unknown argument of `program` names no file: the program opens none, or the word
/// is a number (`$?`, `$#`, `$$`, `$!`, `$((...))`).
pub(crate) fn names_no_file(program: &str, text: &str) -> bool {
    let bare = text.trim_matches('"');
    NO_FILE_OPERANDS.contains(&program)
        || matches!(bare, "$?" | "$#" | "$$" | "$!")
        || (bare.starts_with("$((") && bare.ends_with("))"))
}

/// How an argument is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArgForm<'a> {
    /// A plain path (after substituting `$HOME`/`$PWD`): checked the ordinary way.
    Plain(Cow<'a, str>),
    /// A glob or a word with parameters: checked by overlap (`exact` without parameters;
    /// `expanded`: the word was unquoted, so the shell expands its globs).
    Overlap { text: Cow<'a, str>, exact: bool, expanded: bool },
    /// A bare parameter (`$f`, `"$@"`, `$(cmd)`): it names a file not known here (opaque),
    /// unless [`names_no_file`].
    Skip,
}

/// Classifies an argument word.
pub(crate) fn classify<'a>(text: &'a str, known: bool, anchors: &Anchors) -> ArgForm<'a> {
    let (text, unknown) = if known {
        (Cow::Borrowed(text), false)
    } else {
        let (s, unknown) = substitute(text, &anchors.home, &anchors.cwd);
        (Cow::Owned(s), unknown)
    };
    if unknown && !text.contains('/') {
        ArgForm::Skip
    } else if !unknown && !has_glob(&text) {
        ArgForm::Plain(text)
    } else {
        ArgForm::Overlap { text, exact: !unknown, expanded: !known }
    }
}

/// The overlap form of a glob or parameter argument, resolved against `cwd`.
pub(crate) fn arg_path(text: &str, exact: bool, expanded: bool, anchors: &Anchors, cwd: &str) -> ArgPath {
    let unknown = !exact;
    // `anywhere`: the path may start in any folder (its start is not known).
    let (full, anywhere) = if text == "~" || text.starts_with("~/") {
        (format!("{}{}", anchors.home, text.get(1..).unwrap_or_default()), false)
    } else if super::paths::other_home(text) {
        // `~root/.s*`: another user's home, an unknown place.
        (text.find('/').and_then(|i| text.get(i..)).unwrap_or_default().to_string(), true)
    } else if text.starts_with('/') {
        (text.to_string(), false)
    } else if unknown && (text.starts_with('$') || text.starts_with('`')) {
        // `$dir/x` may be absolute or relative: start anywhere.
        (text.to_string(), true)
    } else if cwd.starts_with('/') {
        (format!("{cwd}/{text}"), false)
    } else {
        // The working directory is not known (`$cwd`).
        (text.to_string(), true)
    };
    let mut segs: Vec<ArgSeg> = Vec::new();
    if anywhere {
        segs.push(ArgSeg::Multi);
    }
    for seg in full.split('/') {
        match seg {
            "" | "." => {}
            ".." => match segs.last() {
                Some(ArgSeg::Multi) | None => {}
                Some(_) => {
                    segs.pop();
                }
            },
            // A parameter or substitution; in a known word `$` and `` ` `` are literal
            // characters (`sed 's/ *$//'`), not parameters.
            s if unknown && (s.contains('$') || s.contains('`')) => {
                if segs.last() != Some(&ArgSeg::Multi) {
                    segs.push(ArgSeg::Multi);
                }
            }
            s if has_glob(s) => segs.push(ArgSeg::Glob(ShGlob::new(s))),
            s => segs.push(ArgSeg::Lit(s.to_string())),
        }
    }
    through_proc(&mut segs);
    let shown = if super::paths::other_home(text) { text.to_string() } else { full };
    ArgPath { segs, exact: !unknown, expanded, shown }
}

/// `/proc/PID/root/...` (the process's root; a glob for PID too) is the path beneath it;
/// `/proc/PID/cwd/...`, `/proc/PID/fd/N/...` and `/dev/fd/N/...` are beneath a folder not known
/// (see `paths::through_proc`).
fn through_proc(segs: &mut Vec<ArgSeg>) {
    let lit = |s: &ArgSeg, want: &str| matches!(s, ArgSeg::Lit(l) if l == want);
    let any = |s: &ArgSeg| matches!(s, ArgSeg::Glob(_) | ArgSeg::Multi);
    let is_pid = |s: &ArgSeg| any(s) || matches!(s, ArgSeg::Lit(l) if l == "self" || l == "thread-self" || l.bytes().all(|b| b.is_ascii_digit()));
    let num = |s: &ArgSeg| any(s) || matches!(s, ArgSeg::Lit(l) if l.bytes().all(|b| b.is_ascii_digit()));
    loop {
        let (cut, known) = match segs.as_slice() {
            [d, f, n, _, ..] if lit(d, "dev") && lit(f, "fd") && num(n) => (3, false),
            [p, pid, r, ..] if lit(p, "proc") && is_pid(pid) && lit(r, "root") => (3, true),
            [p, pid, t, tid, r, ..] if lit(p, "proc") && is_pid(pid) && lit(t, "task") && num(tid) && lit(r, "root") => (5, true),
            [p, pid, c, _, ..] if lit(p, "proc") && is_pid(pid) && lit(c, "cwd") => (3, false),
            [p, pid, f, n, _, ..] if lit(p, "proc") && is_pid(pid) && lit(f, "fd") && num(n) => (4, false),
            _ => return,
        };
        segs.drain(..cut);
        if !known {
            segs.insert(0, ArgSeg::Multi);
            return;
        }
    }
}

/// Whether a pattern segment and an argument segment may name the same file. Globs in
/// arguments are as often patterns for the program (`find -name '*.rs'`, `-path './target/*'`)
/// as file names: a quoted glob segment overlaps only a literal file name it matches and that
/// has some literal text, and any `**`. An unquoted (`expanded`) glob names files: it overlaps
/// every wildcard segment it shares a name with, and every name it matches, except that a
/// segment of wildcards alone (`*`) overlaps a name only in a fixed folder (`/etc/*` and
/// `/etc/shadow`; `anchored`: no `**` before it in the pattern), not a name the pattern finds
/// in any folder (`src/*` and `**/lefthook.yml`), or `ls src/*` would be judged by every such name.
fn seg_overlap(p: &Seg, a: &ArgSeg, expanded: bool, anchored: bool) -> bool {
    match (p, a) {
        (Seg::Any, _) | (_, ArgSeg::Multi) => true,
        (Seg::Word(g), ArgSeg::Lit(l)) => g.matches(l),
        (Seg::Word(Glob::Literal(l)), ArgSeg::Glob(g)) => {
            g.matches(l) && (g.has_literal() || (expanded && anchored))
        }
        (Seg::Word(Glob::Wild(w)), ArgSeg::Glob(g)) => expanded && g.meets(w),
    }
}

impl PathPattern {
    /// Whether some path the argument can name is covered by this pattern.
    pub(crate) fn overlaps(&self, arg: &ArgPath, anchors: &Anchors) -> bool {
        let expanded = arg.expanded;
        let arg = arg.segs.as_slice();
        let root = match self.root {
            Root::Absolute => "",
            Root::Workspace => &*anchors.workspace,
            Root::Home => &*anchors.home,
        };
        let mut pat: Vec<Seg> = root
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| Seg::Word(Glob::Literal(s.into())))
            .collect();
        pat.extend(self.segs.iter().cloned());
        let (n, m) = (pat.len(), arg.len());
        // anchored[i]: no `**` before pattern segment i.
        let anchored: Vec<bool> = pat
            .iter()
            .scan(true, |fixed, s| {
                let now = *fixed;
                *fixed &= *s != Seg::Any;
                Some(now)
            })
            .collect();
        let mut reach = vec![vec![false; m + 1]; n + 1];
        if let Some(r) = reach.first_mut().and_then(|r| r.first_mut()) {
            *r = true;
        }
        for i in 0..=n {
            for j in 0..=m {
                if !reach.get(i).and_then(|r| r.get(j)).copied().unwrap_or(false) {
                    continue;
                }
                let (p, a) = (pat.get(i), arg.get(j));
                let mut set = |x: usize, y: usize| {
                    if let Some(c) = reach.get_mut(x).and_then(|r| r.get_mut(y)) {
                        *c = true;
                    }
                };
                if p == Some(&Seg::Any) {
                    set(i + 1, j);
                    if a.is_some() {
                        set(i, j + 1);
                    }
                }
                if a == Some(&ArgSeg::Multi) {
                    set(i, j + 1);
                    if p.is_some() {
                        set(i + 1, j);
                    }
                }
                if let (Some(p), Some(a)) = (p, a)
                    && seg_overlap(p, a, expanded, anchored.get(i).copied().unwrap_or(false))
                {
                    set(i + 1, j + 1);
                }
            }
        }
        reach.get(n).and_then(|r| r.get(m)).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::paths::parse_pattern;
    use crate::decision::Context;

    fn overlap(pattern: &str, arg: &str, known: bool) -> Option<bool> {
        let ctx = Context {
            workspace: "/workspace".into(),
            home: "/home/user".into(),
            cwd: "/workspace".into(),
        };
        let a = Anchors::new(&ctx);
        let p = parse_pattern(pattern).unwrap();
        match classify(arg, known, &a) {
            ArgForm::Overlap { text, exact, expanded } => {
                Some(p.overlaps(&arg_path(&text, exact, expanded, &a, "/workspace"), &a))
            }
            ArgForm::Plain(_) | ArgForm::Skip => None,
        }
    }

    #[test]
    fn overlaps() {
        assert_eq!(overlap("~/.ssh/**", "~/.s*/id_rsa", true), Some(true));
        // Red team: `$` in a known (quoted) word is a character, not a parameter.
        assert_eq!(overlap("**/.env", "s/ *$//", true), Some(false));
        assert_eq!(overlap("**/.env", "[a-z]*$", true), Some(false));
        assert_eq!(overlap("${workspace}/.git/config", "s/[[:space:]]*$//", true), Some(false));
        assert_eq!(overlap("~/.ssh/**", "~root/.s*", true), Some(true));
        assert_eq!(overlap("~/.ssh/**", "~/.ssh/id_*", true), Some(true));
        assert_eq!(overlap("${workspace}/.env", ".e?v", true), Some(true));
        assert_eq!(overlap("**/.env", ".e?v", true), Some(true));
        assert_eq!(overlap("~/.ssh/**", "$HOME/.ssh/id_rsa/$x", false), Some(true));
        assert_eq!(overlap("~/.aws/**", "\"${HOME}/.aws/*\"", false), Some(true));
        assert_eq!(overlap("~/.aws/**", "\"${HOME}/.aws/credentials\"", false), None);
        assert_eq!(overlap("~/.ssh/**", "$dir/id_rsa", false), Some(true));
        assert_eq!(overlap("**/*.pem", "$dir/x.txt", false), Some(false));
        assert_eq!(overlap("**/*.pem", "$f", false), None);
        assert_eq!(overlap("~/.ssh/**", "src/*.rs", true), Some(false));
        assert_eq!(overlap("~/.ssh/**", "src/main.rs", true), None);
        assert_eq!(overlap("/etc/shadow", "/etc/sh*", true), Some(true));
        assert_eq!(overlap("**/*.pem", "src/*.rs", true), Some(false));
        assert_eq!(overlap("**/*.pem", "*.p*", true), Some(false));
        assert_eq!(overlap("**/.env", "./target/*", true), Some(false));
        assert_eq!(overlap("~/.ssh/**", "~/.ssh/*", true), Some(true));
        assert_eq!(overlap("~/.ssh/**", "\"$(pwd)/src\"", false), None);
        assert_eq!(overlap("~/.ssh/id_rsa", "~/.ssh/id_*", true), Some(true));
        assert_eq!(overlap("**/id_rsa*", "*.rs", true), Some(false));
        assert_eq!(overlap("**/.env", ".e?v", true), Some(true));
        assert_eq!(overlap("/etc/shadow", "/etc/pass*", true), Some(false));
    }

    /// Red team: `[` was a literal, and an unquoted glob never overlapped a wildcard pattern or
    /// a name it shares no literal text with, so `cat ~/.aw[s]/credentials`, `cat /etc/[s]hadow`,
    /// `cat /etc/ssh/ssh_host_*`, `cat /proc/*/environ` and `cat /etc/*` were allowed.
    #[test]
    fn unquoted_globs_overlap_what_they_can_expand_to() {
        let unquoted = |pattern: &str, arg: &str| overlap(pattern, arg, false);
        assert_eq!(unquoted("~/.aws/**", "~/.aw[s]/credentials"), Some(true));
        assert_eq!(unquoted("~/.ssh/**", "~/.ss[h]/id_ed2551[9]"), Some(true));
        assert_eq!(unquoted("**/.env", ".e[n]v"), Some(true));
        assert_eq!(unquoted("**/.env", ".[e]nv"), Some(true));
        assert_eq!(unquoted("/etc/shadow", "/etc/[s]hadow"), Some(true));
        assert_eq!(unquoted("/etc/shadow", "/etc/*"), Some(true));
        assert_eq!(unquoted("/etc/ssh/ssh_host_*", "/etc/ssh/ssh_host_*"), Some(true));
        assert_eq!(unquoted("/proc/*/environ", "/proc/*/environ"), Some(true));
        assert_eq!(unquoted("**/*.key", "certs/*.key"), Some(true));
        // The policy's letters must be spelled by the argument (see `shglob.rs`).
        assert_eq!(unquoted("**/id_rsa*", "id_*"), Some(false));
        assert_eq!(unquoted("**/id_rsa*", "src/*.rs"), Some(false));
        assert_eq!(unquoted("${workspace}/.git/config", ".git/confi[g]"), Some(true));
        assert_eq!(unquoted("~/.bashrc", "~/.bashr[c]"), Some(true));
        // What they cannot expand to: a leading dot is matched only by a literal one.
        assert_eq!(unquoted("**/.env", "*"), Some(false));
        assert_eq!(unquoted("**/lefthook.yml", "src/*"), Some(false));
        assert_eq!(unquoted("~/.ssh/**", "~/.ssh/*"), Some(true));
        assert_eq!(unquoted("**/*.pem", "src/*.rs"), Some(false));
        assert_eq!(unquoted("/etc/shadow", "/etc/[!s]hadow"), Some(false));
        // Quoted, a glob is a pattern for the program, and a class still matches.
        assert_eq!(overlap("**/.env", ".e[n]v", true), Some(true));
        assert_eq!(overlap("/proc/*/environ", "/proc/*/environ", true), Some(false));
    }

    /// Red team: `/proc/1/root/etc/[s]hadow` is `/etc/[s]hadow`.
    #[test]
    fn a_process_root_is_the_root() {
        assert_eq!(overlap("/etc/shadow", "/proc/1/root/etc/[s]hadow", false), Some(true));
        assert_eq!(overlap("/etc/shadow", "/proc/*/root/etc/shado?", false), Some(true));
        assert_eq!(overlap("~/.ssh/**", "/proc/self/cwd/id_*", false), Some(true));
    }
}
