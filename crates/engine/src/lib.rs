//! The warden engine: joins the policy language, the shell analyser, the sandbox backends and
//! the audit log into one decision-and-run path.
//!
//! What it does: reads the process environment once ([`Environment`]), discovers and loads
//! policy layers from disk ([`discover`], [`load_files`]), compiles them, and explains what
//! the policy decides for a command string or a tool call ([`Engine::explain`]). A
//! [`Session`] records each decision in the audit log before anything runs, settles `ask`
//! ([`Approver`]), turns the decision's grants into the sandbox's view (`confine`, with the
//! `**` denials' walk in `walk`) and runs the command in the native or the WASI sandbox, then
//! records the outcome ([`Outcome`]). `replay` and `suggest` read recorded requests back.
//!
//! What it does not: it never decides by itself (every verdict comes from `warden-policy`), and
//! it confines nothing itself (the sandbox crates do).
//!
//! Invariants it keeps:
//! - A policy file that cannot be read, is not UTF-8, is too large, or (for the enterprise
//!   layer) is writable by anyone but root, refuses the whole load: nothing is decided.
//! - Environment variables are read here and nowhere else.
#![forbid(unsafe_code)]

mod approve;
mod budget;
mod compiled;
mod confine;
mod engine;
mod environment;
mod gitconfig;
mod gitguard;
mod gitrepo;
mod layers;
pub mod leads;
mod narrow;
mod newrepo;
mod records;
mod redact;
mod replay;
mod run;
mod session;
mod sweep;
mod walk;
mod wasi;

pub use engine::{Engine, Explanation, Query};
pub use run::{BackendChoice, Job, Outcome, RunError, RunOptions};
pub use warden_sandbox::Cancel;
pub use environment::Environment;
pub use approve::{Answer, Approver, Pending, PreApprovalError, PreApprovals, RefuseAll};
pub use redact::Redactor;
pub use replay::{Change, ReplayReport, Suggestion, Suggestions, decide_record, replay, suggest, suggestion_text};
pub use budget::Spent;
pub use records::{Unloaded, policy_hash, record_unloaded};
pub use session::{AuditLog, Cleared, Gate, Session, SessionConfig, SessionError};
pub use layers::{LoadError, discover, discover_for, load_files, quote_argv, read_text, repository_root};
pub use warden_sandbox::prestart as prestart_sandbox;
pub use warden_sandbox::spawn_apart;
pub use warden_audit::ClientRec;
