//! Agent command strings to every simple command that would run.
//!
//! What it does: parses a command string as bash (with `brush-parser`) and walks it, through
//! pipelines, lists, subshells, groups, substitutions, nested shells (`sh -c`, `eval`,
//! `bash <<< ...`) and wrappers (`env`, `sudo`, `timeout`, `xargs`, `find -exec`, ...), and
//! returns every simple command with its argv resolved, its redirects and where it came from.
//!
//! What it does not: it runs nothing, reads no file and no environment. What it cannot know
//! statically is reported as [`Opaque`], never guessed.
//!
//! Invariants it keeps: [`analyse`] never panics and always returns; an input it cannot parse,
//! or larger than [`MAX_INPUT`], yields an opaque part, never an empty analysis. Every string
//! is checked for the shapes known to make `brush-parser` 0.4.0 abort the process (see
//! [`guard`]) before it is parsed, and parsing runs on a thread with a large stack (long-lived
//! worker threads, reused across calls; see `worker.rs`), except for a short line of plain
//! words (no quote, substitution, bracket, brace, redirect or operator; see `plain`), which
//! opens no construct that nests or backtracks and is parsed on the caller's thread.
#![forbid(unsafe_code)]

mod awk;
mod brace;
mod builtins;
mod command;
pub mod guard;
mod interp;
mod make;
mod model;
mod npm;
mod outputs;
mod runners;
mod scripts;
mod sed;
mod vars;
mod walk;
mod words;
mod worker;
mod wrappers;

pub use model::*;
pub use walk::{MAX_COMMANDS, MAX_DEPTH, MAX_PARSES};

/// The largest input analysed, in bytes; larger input is opaque (`too_large`).
pub const MAX_INPUT: usize = 64 * 1024;

/// How long [`analyse`] waits for the parser. Ordinary strings take well under a millisecond
/// (release) and hostile 60 KB strings under a second (debug); a string the parser is still
/// working on after this is opaque (`too_large`). The worker is then left to finish on its own
/// and exit: it holds nothing of the caller's and serves no one again.
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// Analyses one command string.
///
/// ```
/// let a = warden_shell::analyse("sudo -u root rm -rf /tmp/x && echo $(git push)");
/// let programs: Vec<_> = a.commands.iter().map(|c| c.program.as_str()).collect();
/// assert_eq!(programs, ["sudo", "rm", "git", "echo"]);
/// assert!(a.opaque.is_empty());
/// ```
pub fn analyse(input: &str) -> Analysis {
    if plain(input) {
        return analyse_here(input);
    }
    analyse_all(&[input]).pop().unwrap_or_else(|| whole(input, OpaqueReason::Unsupported))
}

/// The longest input [`plain`] accepts.
const MAX_PLAIN: usize = 1024;

/// Whether `input` is parsed on the caller's thread instead of a worker's: one short line of
/// words made only of characters that open no nested, quoted or alternative construct, none of
/// them a reserved word. Such a string is one simple command (or a few, through wrappers such
/// as `sudo` or `sh -c` whose argument is itself such a word): the parser reads it straight
/// through, so it needs neither the worker's large stack nor its deadline, and skipping the
/// hand-over to another thread saves more time than the analysis takes (an idle thread's
/// processor may have to be woken). The analysis is [`analyse_here`], the same as on a worker.
fn plain(input: &str) -> bool {
    const RESERVED: &[&str] = &[
        "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "select", "then",
        "time", "until", "while",
    ];
    input.len() <= MAX_PLAIN
        && input.bytes().all(|b| b.is_ascii_alphanumeric() || b" \t/._-+=:,@%^~*?".contains(&b))
        && input.split([' ', '\t']).all(|w| !RESERVED.contains(&w))
}

/// Analyses several command strings, in order: the same as [`analyse`] on each, with one
/// hand-over to the parsing thread for all of them instead of one each.
///
/// ```
/// let big = "a".repeat(warden_shell::MAX_INPUT + 1);
/// let all = warden_shell::analyse_all(&["ls", &big, "git push"]);
/// let one = ["ls", &big, "git push"].map(warden_shell::analyse);
/// assert_eq!(all, one);
/// ```
pub fn analyse_all(inputs: &[&str]) -> Vec<Analysis> {
    analyse_all_later(inputs).collect()
}

/// [`analyse_all`] begun now on the parsing thread and collected with [`Later::collect`], so
/// the caller can do other work while the strings are parsed. Dropping it uncollected stops
/// the parsing thread after the string it is on.
///
/// ```
/// let later = warden_shell::analyse_all_later(&["ls", "git push"]);
/// // ... other work ...
/// assert_eq!(later.collect(), warden_shell::analyse_all(&["ls", "git push"]));
/// ```
pub fn analyse_all_later(inputs: &[&str]) -> Later {
    let parsed: Vec<String> = inputs.iter().filter(|i| i.len() <= MAX_INPUT).map(|i| (*i).to_owned()).collect();
    let inputs = inputs.iter().map(|i| (*i).to_owned()).collect();
    Later { inputs, started: worker::begin_all(parsed, analyse_here, DEADLINE) }
}

/// Starts analysis threads ahead until `n` are idle (at most 4), so that the next analyses
/// (as many at once) do not wait for one to start. Analyses run on long-lived threads with a
/// large stack of their own (`worker.rs`); a caller with a thread to spare before it analyses
/// calls this on it.
pub fn warm(n: usize) {
    worker::warm(n);
}

/// Analyses under way: see [`analyse_all_later`]. It holds copies of the strings, so it can
/// outlive them (a compiled policy's examples are analysed while the policy is checked).
pub struct Later {
    inputs: Vec<String>,
    started: worker::Started,
}

impl std::fmt::Debug for Later {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Later").field("inputs", &self.inputs).finish_non_exhaustive()
    }
}

impl Later {
    /// Waits for the analyses: one per input, in order, each what [`analyse`] gives.
    pub fn collect(self) -> Vec<Analysis> {
        let mut outcomes = self.started.finish().into_iter();
        self.inputs
            .iter()
            .map(|input| {
                if input.len() > MAX_INPUT {
                    return whole(input, OpaqueReason::TooLarge);
                }
                match outcomes.next() {
                    Some(worker::Outcome::Done(a)) => a,
                    Some(worker::Outcome::TimedOut) => timed_out(input),
                    Some(worker::Outcome::NoThread) | None => whole(input, OpaqueReason::Unsupported),
                }
            })
            .collect()
    }
}

/// The analysis of an input the parser did not finish within [`DEADLINE`].
fn timed_out(input: &str) -> Analysis {
    Analysis {
        commands: vec![],
        opaque: vec![Opaque {
            reason: OpaqueReason::TooLarge,
            text: format!(
                "analysis did not finish in {} s: {}",
                DEADLINE.as_secs(),
                walk::shorten(input)
            ),
            span: 0..input.len(),
        }],
    }
}

/// The analysis itself, on the current thread; a panic becomes one opaque part.
fn analyse_here(input: &str) -> Analysis {
    let result = std::panic::catch_unwind(|| {
        let mut ctx = walk::Ctx::new(input);
        ctx.program_text(input, 0..input.len());
        if ctx.limit_hit {
            ctx.out.opaque.push(Opaque {
                reason: OpaqueReason::TooLarge,
                text: "too many commands or nested strings".to_owned(),
                span: 0..input.len(),
            });
        }
        ctx.out
    });
    match result {
        Ok(a) => a,
        Err(_) => Analysis {
            commands: vec![],
            opaque: vec![Opaque {
                reason: OpaqueReason::Unsupported,
                text: format!("internal error: {}", walk::shorten(input)),
                span: 0..input.len(),
            }],
        },
    }
}

fn whole(input: &str, reason: OpaqueReason) -> Analysis {
    Analysis {
        commands: vec![],
        opaque: vec![Opaque {
            reason,
            text: walk::shorten(input),
            span: 0..input.len(),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes `guard.rs` documents as harmful, and every construct that nests, quotes,
    /// substitutes or redirects, go to a worker; plain words stay on the caller's thread.
    #[test]
    fn only_plain_words_are_parsed_on_the_callers_thread() {
        for hostile in [
            "$(<<  ",
            "((((((((((((((((((((((((((((((((",
            &"{ ".repeat(1000),
            "a\"${u[t[[-y9|p[; a\"${u[t[[",
            "5555555554>",
            "echo $(id)",
            "ls 'a b'",
            "a && b",
            "cat <x",
            "ls\nrm -rf /",
            "if true",
            "for x in a",
            "time ls",
        ] {
            assert!(!plain(hostile), "{hostile:?}");
        }
        assert!(!plain(&"a ".repeat(MAX_PLAIN)));
        for ok in ["/bin/true", "cargo test -p warden --release", "FOO=1 make -j2", "ls -la src/*.rs", "git log --format=%H"] {
            assert!(plain(ok), "{ok:?}");
        }
    }

    /// On the caller's thread or a worker's, the analysis is the same.
    #[test]
    fn a_plain_string_analyses_the_same_on_either_thread() {
        for input in ["/bin/true", "sudo -u root rm -rf /tmp/x", "sh -c ls", "env A=1 xargs -n1 rm", "find . -name *.o -delete"] {
            assert!(plain(input), "{input:?}");
            let on_worker = analyse_all(&[input]).pop();
            assert_eq!(Some(analyse(input)), on_worker, "{input:?}");
        }
    }
}
