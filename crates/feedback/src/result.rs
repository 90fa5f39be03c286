//! The result fields shared by every backend (names pinned in ARCHITECTURE.md).

use serde::{Deserialize, Serialize};

/// One captured output stream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream {
    /// The kept text (lossy UTF-8). When truncated: the head, a marker line, then the tail.
    pub text: String,
    /// Whether bytes were dropped from the middle.
    pub truncated: bool,
    /// How many bytes the command wrote in all.
    pub bytes: u64,
}

/// A source location named in the output: relative to the workspace, of a file that exists.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SourcePath {
    /// The path, relative to the workspace, with `/` separators.
    pub path: String,
    /// 1-based line, when the output named one.
    pub line: Option<u32>,
    /// 1-based column, when the output named one.
    pub column: Option<u32>,
}

/// Which layer of the sandbox refused an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialSource {
    /// Landlock refused the access.
    Landlock,
    /// A seccomp filter refused the system call. Only ever [`Evidence::Observed`]: the
    /// supervisor's listener answered the call; printed text never gets this source.
    Seccomp,
    /// The path is not in the sandbox's view, or is mounted read-only or covered.
    Mount,
    /// A namespace hid the target (another process, the network: a command without a network
    /// grant runs in an empty network namespace, so a connection it reports refused is
    /// attributed here).
    Namespace,
    /// A resource limit stopped it.
    Limit,
    /// The WASI runtime refused it (no preopen, read-only preopen, no capability).
    Wasi,
    /// It was done, then undone after the run: the command made a guarded path that did not
    /// exist when it started (no mount could cover it), and warden moved it aside.
    Sweep,
}

/// How warden knows of a denial.
///
/// A command can print any text, so an entry inferred from its output says only that the
/// command *printed* an error the view would explain: advice for the model, never proof that
/// the refusal happened. Consumers that need ground truth (an auditor, an alert) keep to
/// [`Evidence::Observed`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// warden saw the refusal itself, outside the command's reach: the seccomp listener's
    /// answer to a system call, the signal that ended the command (`SIGXFSZ`), the WASI
    /// runtime refusing memory, the after-run sweep moving a path aside.
    Observed,
    /// Inferred from an error line in the command's own output (stderr or stdout), kept only
    /// because the sandbox's view explains it. The command could have printed the line itself.
    /// The default when a record does not say: the weaker claim.
    #[default]
    Output,
}

/// Something the sandbox refused the command.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Denial {
    /// The operation: `fs.read`, `fs.write`, `fs.exec`, `net.connect`, `net.bind`,
    /// `proc.signal`, `proc.ptrace`, `syscall`, `limit.processes`, `limit.memory`, ...
    pub op: String,
    /// What it was aimed at: a path, `host:port`, a pid, a system call name.
    pub target: String,
    /// Which layer refused it (for an [`Evidence::Output`] entry: the layer that would have).
    pub source: DenialSource,
    /// How warden knows: [`Evidence::Observed`] by itself, or [`Evidence::Output`] from the
    /// command's printed text.
    #[serde(default)]
    pub evidence: Evidence,
}

impl Denial {
    /// A refusal warden saw itself.
    pub fn observed(op: impl Into<String>, target: impl Into<String>, source: DenialSource) -> Self {
        Self { op: op.into(), target: target.into(), source, evidence: Evidence::Observed }
    }

    /// A refusal inferred from the command's own output.
    pub fn output(op: impl Into<String>, target: impl Into<String>, source: DenialSource) -> Self {
        Self { op: op.into(), target: target.into(), source, evidence: Evidence::Output }
    }
}

/// The sandbox actually built for the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxInfo {
    /// `native` or `wasi`.
    pub backend: String,
    /// The Landlock ABI enforced (None: not enforced).
    pub landlock_abi: Option<u32>,
    /// Whether a seccomp filter was installed.
    pub seccomp: bool,
    /// The namespaces the command ran in (`user`, `mnt`, `pid`, `net`, `ipc`, `uts`, `cgroup`).
    pub namespaces: Vec<String>,
    /// The uid the command ran as, seen from the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// Free-form notes on what was weakened or could not be applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The outcome of one run, as a backend reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The exit code, when the command exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did (`SIGKILL`, ...).
    pub signal: Option<String>,
    /// Whether the wall timeout ended it.
    pub timed_out: bool,
    /// Whether it was cancelled (killed at the caller's request, e.g. an MCP client's
    /// `notifications/cancelled`); only shown when it was.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// Wall time from spawn to the end of the last process, milliseconds.
    pub duration_ms: f64,
    /// Captured standard output.
    pub stdout: Stream,
    /// Captured standard error.
    pub stderr: Stream,
    /// What the sandbox refused.
    pub denials: Vec<Denial>,
    /// The sandbox built.
    pub sandbox: SandboxInfo,
}
