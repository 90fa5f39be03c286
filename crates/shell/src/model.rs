//! The analyser's output: plain data, no I/O.

use serde::Serialize;
use std::ops::Range;

/// Everything the analyser found in one command string.
///
/// `commands` lists every simple command that would run, in source order, nested ones (from
/// `$( )`, `sh -c`, `xargs`, `find -exec`, ...) included. `opaque` lists every part whose
/// effect cannot be known statically. A string that does not parse yields one opaque part.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Analysis {
    /// Every simple command that would run.
    pub commands: Vec<SimpleCommand>,
    /// Parts that cannot be resolved statically; each never matches an allow rule.
    pub opaque: Vec<Opaque>,
}

/// One command that would be executed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SimpleCommand {
    /// The words after wrappers were removed; `argv[0]` is the command word as written
    /// (quotes and escapes resolved), e.g. `/usr/bin/rm`.
    pub argv: Vec<Word>,
    /// The base name of `argv[0]` (`/usr/bin/rm` -> `rm`); empty if `argv[0]` is unknown.
    pub program: String,
    /// `NAME=value` assignments in front of the command (and from `env NAME=value`).
    pub assignments: Vec<(String, Word)>,
    /// File redirects of this command (`> f`, `>> f`, `< f`, `&> f`); `/dev/null` and
    /// descriptor duplications are left out.
    pub redirects: Vec<Redirect>,
    /// The wrappers that were peeled off, outermost first (`["sudo", "env"]`, `["bash -c"]`).
    pub via: Vec<String>,
    /// Position in a pipeline: which pipeline (unique per analysis) and the stage index.
    pub pipeline: Option<PipelinePos>,
    /// Byte range in the original input of the outermost construct this came from.
    pub span: Range<usize>,
}

impl std::fmt::Display for SimpleCommand {
    /// `[via,...] argv...`, each unknown word prefixed with `?`: the form tests and tools print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.via.is_empty() {
            write!(f, "[{}] ", self.via.join(","))?;
        }
        for (i, w) in self.argv.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let mark = if w.known { "" } else { "?" };
            write!(f, "{sep}{mark}{}", w.text)?;
        }
        Ok(())
    }
}

/// One argv word.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Word {
    /// The resolved text (quotes and escapes removed). For an unknown word, the raw source.
    pub text: String,
    /// False when the word's value depends on run time: a parameter, a command substitution,
    /// arithmetic, an unexpanded glob or brace in the command position, ...
    pub known: bool,
}

/// The words of `line` split at spaces, for unit tests: a word starting with `$` is unknown.
#[cfg(test)]
pub(crate) fn test_words(line: &str) -> Vec<Word> {
    line.split(' ').map(|t| Word { text: t.to_owned(), known: !t.starts_with('$') }).collect()
}

/// A pipeline position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PipelinePos {
    /// Identifies the pipeline within this analysis.
    pub id: usize,
    /// 0 for the first command of the pipeline.
    pub stage: usize,
}

/// A file redirect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// What the redirect does to its target.
    pub access: Access,
    /// The file named.
    pub target: Word,
}

/// File access implied by a redirect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// `< f`
    Read,
    /// `> f`, `>| f`, `&> f`, `<> f`
    Write,
    /// `>> f`, `&>> f`
    Append,
}

/// A part whose effect cannot be known statically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Opaque {
    /// Why it is opaque.
    pub reason: OpaqueReason,
    /// The source text of the part (possibly shortened).
    pub text: String,
    /// Byte range in the original input.
    pub span: Range<usize>,
}

/// Why a part is opaque. Stable snake_case names in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpaqueReason {
    /// The input did not parse as shell.
    ParseError,
    /// The input is larger than the analyser accepts.
    TooLarge,
    /// Nesting (substitutions, `sh -c` in `sh -c`, ...) is deeper than the analyser follows.
    TooDeep,
    /// The command word comes from a variable, substitution or glob.
    DynamicCommand,
    /// `eval` or `sh -c` of a string that is not known statically.
    DynamicEval,
    /// Inline interpreter code (`python -c`, `node -e`, `perl -e`, ...).
    InlineCode,
    /// A shell or interpreter reading its program from stdin or a here-document.
    ShellFromStdin,
    /// A function or alias defined in the string and then called.
    FunctionCall,
    /// A construct the analyser does not follow (coproc, `trap`, `source` of a file, ...).
    Unsupported,
}
