//! The warden policy language.
//!
//! What it does: parses policy files (a pest grammar) into a typed AST that keeps spans,
//! validates them with diagnostics that name file, line and column, compiles one or more
//! layers into an immutable [`PolicySet`], and decides requests against it.
//!
//! What it does not: no I/O, no clock, no environment. The caller reads files, discovers
//! layers and supplies the [`Context`] (workspace, home, working directory). Command strings
//! are analysed by `warden-shell` before they reach [`PolicySet::decide`].
//!
//! Invariants it keeps:
//! - A policy with any error does not compile; nothing is decided under it.
//! - Verdicts combine to the most severe (`deny > ask > allow`) over every part and layer, so
//!   adding a deny rule or a lower layer never loosens a decision.
//! - An opaque part never matches an allow rule.
//! - Evaluation never panics; anything it cannot complete is a deny with the reason.
#![forbid(unsafe_code)]

mod argv;
pub mod ast;
mod compile;
mod decision;
pub mod error;
mod fmt;
mod parser;

pub use argv::Argv;
pub use compile::{Examples, LayerInfo, Links, PolicySet, compile, compile_with, grant_matches, GrantGlob};
pub use decision::*;
pub use error::{Code, Diagnostic, Diagnostics};
pub use fmt::{format, format_source};
pub use parser::parse;
#[doc(hidden)]
pub use parser::differential;

/// The default policy, embedded in every build.
pub const DEFAULT_POLICY: &str = include_str!("../../../policies/default.policy");
