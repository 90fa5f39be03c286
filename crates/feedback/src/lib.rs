//! What an agent gets back from a run, whichever backend ran it.
//!
//! What it does: defines the result fields pinned in ARCHITECTURE.md ([`Run`], [`Stream`],
//! [`Denial`], [`SandboxInfo`], [`SourcePath`]), captures a stream with a byte cap that keeps
//! its head and its tail ([`Capture`]), and finds the source locations that compilers, test
//! runners and interpreters name in their output ([`paths::find`]), and escapes what a person
//! would not see as itself in text the command chose ([`shown`]).
//!
//! What it does not: it runs nothing and knows nothing of the policy language. Backends
//! (`warden-sandbox`, `warden-wasi`) fill a [`Run`]; the engine adds the decision and the
//! paths.
//!
//! Invariant: a [`Denial`] says how warden knows of it ([`Evidence`]). Only what warden saw
//! itself (the seccomp listener, the signal that ended the command, the after-run sweep) is
//! [`Evidence::Observed`]; an entry inferred from the command's printed text is
//! [`Evidence::Output`] and never carries the `seccomp` source, because the command chooses
//! what it prints.
#![forbid(unsafe_code)]

mod capture;
pub mod paths;
mod result;
pub mod shown;

pub use capture::Capture;
pub use result::{Denial, DenialSource, Evidence, Run, SandboxInfo, SourcePath, Stream};
