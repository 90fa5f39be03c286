//! What a request looks like and what a decision says. Field names follow the result pinned in
//! `ARCHITECTURE.md` (`verdict`, `tier`, `reason`, `rules[].file/line/column/layer`).

use crate::ast::Verdict;
use serde::{Serialize, Serializer};
use std::sync::Arc;
use warden_shell::Analysis;

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Verdict {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

/// Where a policy file came from. Ordered top (most authoritative) first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// `/etc/warden/`
    Enterprise,
    /// `$XDG_CONFIG_HOME/warden/`
    User,
    /// The policy embedded in the binary.
    Builtin,
    /// A `--policy` flag.
    Cli,
    /// `.warden/` at the repository root.
    Project,
    /// `.warden/` between the root and the working directory.
    Directory,
}

/// One source file of a layer.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Display name (a path, or `builtin:default.policy`).
    pub name: String,
    /// The full text.
    pub text: String,
}

/// One layer: one or more files that form it. Layers are passed top first.
#[derive(Debug, Clone)]
pub struct LayerSource {
    /// Where it came from.
    pub kind: LayerKind,
    /// Its files (merged into one layer).
    pub files: Vec<SourceFile>,
}

/// The places a request's paths are resolved against. Plain strings: this crate does no I/O.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// Absolute path of the workspace (`${workspace}`).
    pub workspace: String,
    /// Absolute path of the home directory (`~`, `${home}`).
    pub home: String,
    /// Absolute working directory; relative paths in requests resolve against it.
    pub cwd: String,
}

/// One request to decide.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The agent identity, if any (`--agent`).
    pub agent: Option<&'a str>,
    /// What is asked.
    pub action: Action<'a>,
}

/// What is asked.
#[derive(Debug, Clone, Copy)]
pub enum Action<'a> {
    /// Run a command string, already analysed by `warden-shell`.
    Exec(&'a Analysis),
    /// Call a named tool, with the path it touches if any.
    Tool {
        /// `read_file`, `write_file`, an MCP tool name, ...
        name: &'a str,
        /// The path argument (relative paths resolve against `Context::cwd`).
        path: Option<&'a str>,
    },
}

/// A reference to a rule in a policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleRef {
    /// The file's display name.
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The layer the file belongs to.
    pub layer: LayerKind,
    /// The rule's source text (one line).
    pub text: Arc<str>,
    /// Index of the rule in [`crate::PolicySet::rules`], for coverage.
    #[serde(skip)]
    pub id: usize,
}

/// The decision for one request.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// The combined verdict: the most severe of all parts.
    pub verdict: Verdict,
    /// The tier the request runs in (highest-ranked among the parts), if any rule of a tier
    /// decided.
    pub tier: Option<Arc<str>>,
    /// Why, in one sentence a model can act on.
    pub reason: Arc<str>,
    /// The rules that decided the verdict (those of the parts with the combined verdict).
    /// Shared: a list of one rule is the policy set's own.
    pub rules: Arc<[RuleRef]>,
    /// Every part that was judged, with its own verdict.
    pub parts: Vec<Part>,
    /// What the sandbox grants if the request runs. Shared: decisions in the same tier and
    /// context point at one expanded copy.
    pub grants: std::sync::Arc<Grants>,
}

/// One judged part of a request.
#[derive(Debug, Clone, Serialize)]
pub struct Part {
    /// What was judged.
    #[serde(flatten)]
    pub subject: Subject,
    /// Its verdict.
    pub verdict: Verdict,
    /// The tier of the deciding rule.
    pub tier: Option<Arc<str>>,
    /// Why.
    pub reason: Arc<str>,
    /// The deciding rules (empty when the default or the opaque verdict decided).
    pub rules: Arc<[RuleRef]>,
    /// Byte range in the command string, for commands and opaque parts.
    pub span: Option<std::ops::Range<usize>>,
}

/// What a part is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Subject {
    /// A simple command (argv as resolved; unknown words shown as written).
    Command {
        /// The argv.
        argv: crate::Argv,
    },
    /// A pipeline rule's match (`curl ... | sh`).
    Pipe {
        /// The two commands' argv[0].
        from: String,
        /// The receiving command.
        into: String,
    },
    /// A file access (redirect, argument path, or tool path), resolved to an absolute path.
    Path {
        /// `read` or `write`.
        access: &'static str,
        /// The absolute, lexically normalised path.
        path: String,
    },
    /// A tool call.
    Tool {
        /// The tool's name.
        name: String,
    },
    /// Something the analyser could not know.
    Opaque {
        /// The analyser's reason (snake_case).
        reason: String,
        /// The source text.
        text: String,
    },
    /// The request itself could not be judged (unknown agent, ...).
    Request {
        /// What was wrong.
        problem: String,
    },
}

/// What the sandbox may grant a request. Paths are absolute glob patterns (`**`, `*`, `?`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Grants {
    /// Readable paths.
    pub read: Vec<String>,
    /// Writable (and readable) paths.
    pub write: Vec<String>,
    /// Paths never readable nor writable, even inside the above.
    pub deny: Vec<String>,
    /// Paths never writable, even inside `write` (guarded paths).
    pub deny_write: Vec<String>,
    /// Network reach.
    pub network: Network,
    /// Resource limits (the smallest that applies).
    pub limits: Limits,
    /// Extra environment variables allowed in (patterns).
    pub env: Vec<String>,
    /// The backend to run in.
    pub sandbox: Backend,
}

/// Network reach.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "hosts", rename_all = "snake_case")]
pub enum Network {
    /// Nothing.
    #[default]
    None,
    /// These hosts (`host` or `host:port`, wildcards allowed).
    Hosts(Vec<String>),
    /// Everything.
    Any,
}

/// Resource limits; `None` means no limit set by the policy (the backend applies its own).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Wall-clock limit, milliseconds.
    pub timeout_ms: Option<u64>,
    /// Memory, bytes.
    pub memory: Option<u64>,
    /// Process count.
    pub processes: Option<u64>,
    /// Captured output, bytes.
    pub output: Option<u64>,
    /// Largest file, bytes.
    pub file_size: Option<u64>,
    /// Open descriptors.
    pub files: Option<u64>,
    /// Session budget: commands an agent session may run.
    pub commands: Option<u64>,
    /// Session budget: wall time of all its commands, milliseconds.
    pub total_time_ms: Option<u64>,
    /// Session budget: output captured over all its commands, bytes.
    pub total_output: Option<u64>,
}

/// Which backend runs the request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum Backend {
    /// The Linux sandbox.
    #[default]
    Native,
    /// The WASI sandbox.
    Wasi {
        /// The image, if named.
        image: Option<String>,
    },
}
