//! The Linux sandbox: runs one command with exactly the grants it was given.
//!
//! What it does: [`run`] clones the command into new user, mount, pid, ipc, uts, cgroup (and,
//! without network, net) namespaces; shows it a root file system made only of the granted paths
//! (read-only or read-write binds at their own paths, hidden paths covered, guarded paths
//! read-only, fresh scratch tmpfs, a minimal `/dev`, the new pid namespace's `/proc`); restricts
//! it with Landlock at the highest ABI the kernel offers and a seccomp filter; drops every
//! capability; applies rlimits; scrubs nothing itself
//! (the caller passes the whole environment) but lets no descriptor other than 0/1/2 in; then
//! captures stdout/stderr with a byte cap, kills the whole pid namespace at the deadline and
//! reports a [`warden_feedback::Run`], with the denials it can attribute.
//!
//! When warden runs as root, the command still never holds root over host files: it runs as
//! `nobody` (65534/65534) without supplementary groups, and the writable grants are idmapped
//! mounts that map their owner to it, so what it creates there belongs to the grant's owner
//! (see `idmap.rs`).
//!
//! What it does not: it knows nothing of the policy language; the engine turns policy grants
//! into a [`Spec`].
//!
//! This is the only crate of the workspace allowed `unsafe`: every block has a `// SAFETY:`
//! note, and the code between `clone` and `execve` (`child.rs`) is async-signal-safe.

mod apart;
mod attr;
mod cancel;
mod child;
mod denials;
mod idmap;
mod init;
mod landlock;
mod memory;
mod notify;
mod plan;
mod planted;
mod prestart;
mod prestart_child;
mod recall;
mod seccomp;
mod spawn;
mod spec;
mod view;
mod view_child;

pub use apart::spawn as spawn_apart;
pub use cancel::Cancel;
pub use landlock::abi as landlock_abi;
pub use plan::{Shown, shown};
pub use prestart::prestart;
pub use spawn::{run, run_gated};
pub use spec::{Access, Limits, Mount, Spec};
pub use view::{Views, set_views};

/// Why a run could not start. Nothing of the command ran.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec cannot be honoured as written.
    #[error("invalid sandbox spec: {0}")]
    Spec(String),
    /// The kernel offers a lower Landlock ABI than the policy demands.
    #[error("Landlock ABI {have} is available but {need} is required; refusing to run without it")]
    Landlock {
        /// What the kernel offers (0: none).
        have: u32,
        /// What was required.
        need: u32,
    },
    /// The namespaces could not be created (user namespaces disabled?).
    #[error("cannot create the sandbox namespaces: {0}")]
    Namespaces(std::io::Error),
    /// A seccomp filter could not be compiled.
    #[error("cannot build the seccomp filter: {0}")]
    Seccomp(String),
    /// A resource limit cannot be enforced.
    #[error("cannot enforce the resource limits: {0}")]
    Limits(String),
    /// A step of the sandbox setup failed in the child.
    #[error("sandbox setup failed at {stage} (step {step}): {}", std::io::Error::from_raw_os_error(*errno))]
    Setup {
        /// The stage.
        stage: String,
        /// The step within it.
        step: usize,
        /// The error number.
        errno: i32,
    },
    /// The caller's gate refused (see [`run_gated`]): the sandbox was torn down unused.
    #[error("not started: {0}")]
    Gate(String),
    /// The run was cancelled ([`Cancel`]) before the command started: the sandbox was torn
    /// down unused.
    #[error("not started: it was cancelled")]
    Cancelled,
    /// An I/O error in the parent.
    #[error("sandbox I/O error: {0}")]
    Io(std::io::Error),
}
