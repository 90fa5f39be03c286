//! What an agent gets back from a run, whichever backend ran it.
//!
//! What it does: defines the result fields pinned in ARCHITECTURE.md ([`Run`], [`Stream`],
//! [`Denial`], [`SandboxInfo`], [`SourcePath`]), captures a stream with a byte cap that keeps
//! its head and its tail ([`Capture`]), and finds the source locations that compilers, test
//! runners and interpreters name in their output ([`paths::find`]).
//!
//! What it does not: it runs nothing and knows nothing of the policy language. Backends
//! (`warden-sandbox`, `warden-wasi`) fill a [`Run`]; the engine adds the decision and the
//! paths.
#![forbid(unsafe_code)]

mod capture;
pub mod paths;
mod result;

pub use capture::Capture;
pub use result::{Denial, DenialSource, Run, SandboxInfo, SourcePath, Stream};
