//! The typed syntax tree of one policy file. Every node keeps the span it came from, so that
//! every diagnostic and every decision can name file, line and column.
//!
//! Comments are kept (`comments` on statements and items) so that `fmt` can reprint a file
//! without losing them. Equality that ignores spans and comments is [`Policy::same_meaning`].

use std::ops::Range;

/// A byte range in the source text.
pub type Span = Range<usize>;

/// A value with the span it was written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spanned<T> {
    /// The value.
    pub node: T,
    /// Where it was written.
    pub span: Span,
}

/// One parsed policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Statements in source order.
    pub statements: Vec<Statement>,
    /// Comments after the last statement.
    pub trailing_comments: Vec<Comment>,
}

/// A `# ...` comment, without the `#`, and where it stood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// The text after `#`, untrimmed.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

/// A statement with the comments attached to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// Whole-line comments directly above the statement.
    pub leading: Vec<Comment>,
    /// A comment on the same line, after the statement.
    pub trailing: Option<Comment>,
    /// What it says.
    pub kind: StatementKind,
    /// The whole statement.
    pub span: Span,
}

/// Top-level statements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatementKind {
    /// `version 1`
    Version(Spanned<u32>),
    /// `default VERDICT`
    Default(Spanned<Verdict>),
    /// `opaque VERDICT`
    Opaque(Spanned<Verdict>),
    /// `paths NAME = PATH, ...`
    Paths {
        /// The set's name.
        name: Spanned<String>,
        /// Its members.
        members: Vec<PathRef>,
    },
    /// `[lock] tier NAME: VERDICT ["reason"] { ITEM... }`
    Tier(Tier),
    /// `[lock] VERDICT ["reason"] RULE`
    Rule(StandaloneRule),
    /// `limits { ... }`
    Limits(Vec<Spanned<Limit>>),
    /// `env NAME, ...`
    Env(Vec<Spanned<String>>),
    /// `sandbox ...`
    Sandbox(Spanned<Sandbox>),
    /// `agent NAME [extends PARENT] { ITEM... }`
    Agent(Agent),
    /// `example VERDICT [agent NAME] (STRING | tool NAME [PATH])`
    Example(Example),
}

/// allow < ask < deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Runs at once.
    Allow,
    /// Waits for a person.
    Ask,
    /// Intercepted, never run.
    Deny,
}

/// A tier declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tier {
    /// `lock` was written before `tier`.
    pub lock: Option<Span>,
    /// The tier's name.
    pub name: Spanned<String>,
    /// The verdict every rule in it carries.
    pub verdict: Spanned<Verdict>,
    /// The optional reason string.
    pub reason: Option<Spanned<String>>,
    /// Body items in source order.
    pub items: Vec<Item>,
    /// Comments after the last item, before the closing `}`.
    pub end_comments: Vec<Comment>,
}

/// An item inside a tier or agent body, with its comments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Whole-line comments directly above.
    pub leading: Vec<Comment>,
    /// Same-line comment.
    pub trailing: Option<Comment>,
    /// What it says.
    pub kind: ItemKind,
    /// The whole item.
    pub span: Span,
}

/// Tier and agent body items. The validator rejects those that do not belong where they are
/// (for example `tiers` inside a tier, or an `allow` rule inside an agent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind {
    /// A rule (inside a tier it takes the tier's verdict).
    Rule(Rule),
    /// `[lock] VERDICT ["reason"] RULE` (inside an agent).
    Standalone(StandaloneRule),
    /// `limits { ... }`
    Limits(Vec<Spanned<Limit>>),
    /// `env NAME, ...`
    Env(Vec<Spanned<String>>),
    /// `sandbox ...`
    Sandbox(Spanned<Sandbox>),
    /// `tiers NAME, ...` (agents only)
    Tiers(Vec<Spanned<String>>),
    /// `default VERDICT` (agents only)
    Default(Spanned<Verdict>),
    /// `opaque VERDICT` (agents only)
    Opaque(Spanned<Verdict>),
}

/// `[lock] VERDICT ["reason"] RULE`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandaloneRule {
    /// `lock` was written first.
    pub lock: Option<Span>,
    /// The rule's verdict.
    pub verdict: Spanned<Verdict>,
    /// The optional reason.
    pub reason: Option<Spanned<String>>,
    /// The rule.
    pub rule: Rule,
}

/// A rule body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// `tools NAME, ...`
    Tools(Vec<Spanned<String>>),
    /// `exec PATTERN, ...`
    Exec(Vec<ExecPattern>),
    /// `pipe PATTERN into PATTERN`
    Pipe {
        /// The feeding side.
        from: ExecPattern,
        /// The receiving side.
        into: ExecPattern,
    },
    /// `fs read|write PATHS [except PATHS]`
    Fs {
        /// read or write.
        access: Spanned<FsAccess>,
        /// The paths covered.
        paths: Vec<PathRef>,
        /// Paths carved out.
        except: Vec<PathRef>,
    },
    /// `net none | any | hosts ...`
    Net(Spanned<Net>),
}

/// An exec pattern: `COMMAND [ARG...] [unless FLAGS] [with FLAGS]...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecPattern {
    /// Alternatives for the command word (one or more; most patterns name one, kept inline).
    pub command: Words,
    /// Argument positions, each a set of alternative token sequences.
    pub args: Vec<ArgAlt>,
    /// `unless` and `with` conditions in source order.
    pub conditions: Vec<Condition>,
    /// The whole pattern.
    pub span: Span,
}

/// The command word alternatives of an exec pattern.
pub type Words = smallvec::SmallVec<[Spanned<String>; 1]>;

/// One argument slot: a single word is one alternative of one token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgAlt {
    /// Alternatives, each a sequence of one or more tokens.
    pub alternatives: Vec<Vec<Spanned<String>>>,
    /// Where it was written.
    pub span: Span,
}

/// `unless FLAGS` or `with FLAGS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// Which keyword.
    pub kind: ConditionKind,
    /// The flags (alternatives).
    pub flags: Vec<Spanned<String>>,
    /// Where it was written.
    pub span: Span,
}

/// The two condition keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionKind {
    /// The rule does not match if any flag is present.
    Unless,
    /// The rule matches only if some flag is present.
    With,
}

/// Which access an `fs` rule speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FsAccess {
    /// `fs read`
    Read,
    /// `fs write`
    Write,
}

/// A member of a path list: a pattern string or the name of a `paths` set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathRef {
    /// `"..."`, unexpanded.
    Pattern(Spanned<String>),
    /// A bare name referring to `paths NAME = ...`.
    Set(Spanned<String>),
}

/// `net ...`
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Net {
    /// `net none`
    None,
    /// `net any`
    Any,
    /// `net hosts "h[:port]", ...`
    Hosts(Vec<Spanned<String>>),
}

/// One `limits` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Wall-clock limit, milliseconds.
    Timeout(u64),
    /// Memory, bytes.
    Memory(u64),
    /// Processes.
    Processes(u64),
    /// Captured stdout+stderr, bytes.
    Output(u64),
    /// Largest file written, bytes.
    FileSize(u64),
    /// Open descriptors.
    Files(u64),
    /// Session budget: commands run (per agent session).
    Commands(u64),
    /// Session budget: wall time of all commands run, milliseconds.
    TotalTime(u64),
    /// Session budget: output captured over all commands, bytes.
    TotalOutput(u64),
}

/// `sandbox native | wasi [image NAME]`
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sandbox {
    /// The Linux sandbox.
    Native,
    /// The WASI sandbox, with an optional image name.
    Wasi {
        /// `image NAME`
        image: Option<String>,
    },
}

/// `agent NAME [extends PARENT] { ... }`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The agent's name.
    pub name: Spanned<String>,
    /// The parent it narrows.
    pub extends: Option<Spanned<String>>,
    /// Body items.
    pub items: Vec<Item>,
    /// Comments after the last item, before the closing `}`.
    pub end_comments: Vec<Comment>,
}

/// `example VERDICT [agent NAME] ...`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// The expected verdict.
    pub verdict: Spanned<Verdict>,
    /// The agent the example speaks for.
    pub agent: Option<Spanned<String>>,
    /// The request.
    pub request: ExampleRequest,
}

/// What an example asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExampleRequest {
    /// A command string.
    Command(Spanned<String>),
    /// `tool NAME ["PATH"]`
    Tool {
        /// The tool name.
        name: Spanned<String>,
        /// Its path argument.
        path: Option<Spanned<String>>,
    },
}
