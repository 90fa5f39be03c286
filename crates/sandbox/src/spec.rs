//! What to run and with which grants: concrete host paths, no policy language.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// How a path appears inside the sandbox. Every path shows at its own host path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Access {
    /// Read-only (and executable).
    Read,
    /// Read-write.
    Write,
    /// Covered: present but unreadable and unwritable (a denied path inside a granted one).
    Hide,
    /// Read-only even inside a writable grant (guarded paths such as `.git/hooks`).
    Guard,
}

/// One path of the sandbox's view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Absolute host path.
    pub path: PathBuf,
    /// How it appears.
    pub access: Access,
}

/// Resource limits. `None`: no limit of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock limit; the whole process tree is killed when it passes.
    pub timeout: Duration,
    /// Memory: each process's data segment (RLIMIT_DATA), bytes. Not a bound on the run as
    /// a whole, nor on what it writes to its scratch tmpfs.
    pub memory: Option<u64>,
    /// Processes (and threads) the command may have at once.
    pub processes: Option<u64>,
    /// Largest file the command may write, bytes.
    pub file_size: Option<u64>,
    /// Open descriptors per process.
    pub open_files: Option<u64>,
    /// Captured bytes kept, both streams together (half each, head and tail).
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(120),
            memory: None,
            processes: Some(1024),
            file_size: None,
            open_files: Some(4096),
            output_bytes: 1 << 20,
        }
    }
}

/// A command and the sandbox to run it in.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The command line; `argv[0]` is a path or a name looked up in the sandbox's `PATH`.
    pub argv: Vec<OsString>,
    /// The whole environment the command gets (already scrubbed by the caller).
    pub env: Vec<(OsString, OsString)>,
    /// The working directory (a host path that is part of the view).
    pub cwd: PathBuf,
    /// The view: paths shown, at their own host paths.
    pub mounts: Vec<Mount>,
    /// Fresh empty directories (tmpfs) at these paths, e.g. `/tmp`; writable.
    pub scratch: Vec<PathBuf>,
    /// Whether the command may reach the network. Without it: no network namespace
    /// connectivity, no TCP through Landlock, and no socket but unix ones.
    pub network: bool,
    /// Resource limits.
    pub limits: Limits,
    /// Bytes on standard input (empty: `/dev/null`).
    pub stdin: Vec<u8>,
    /// The lowest Landlock ABI the caller accepts; below it the run is refused.
    pub min_landlock_abi: u32,
    /// Stops the run when fired (none: it runs to its end or its timeout).
    pub cancel: Option<crate::Cancel>,
}

impl Spec {
    /// A spec with the given argv and no view at all.
    pub fn new(argv: Vec<OsString>, cwd: PathBuf) -> Self {
        Spec {
            argv,
            env: Vec::new(),
            cwd,
            mounts: Vec::new(),
            scratch: Vec::new(),
            network: false,
            limits: Limits::default(),
            stdin: Vec::new(),
            min_landlock_abi: 1,
            cancel: None,
        }
    }
}
