//! Source locations named in tool output (compilers, test runners, interpreters, shells).
//!
//! Contract: [`find`] returns locations relative to the workspace, each naming a regular file
//! that exists inside the workspace, de-duplicated, in order of first appearance, at most
//! [`MAX_PATHS`]. It never invents a path: a candidate that does not resolve to an existing
//! file under the workspace is dropped.

use std::path::Path;

use crate::SourcePath;

/// The most locations [`find`] returns.
pub const MAX_PATHS: usize = 64;

/// Finds the source locations named in `output`. Relative paths are resolved against `cwd`
/// (the command's working directory), then made relative to `workspace`.
pub fn find(output: &str, workspace: &Path, cwd: &Path) -> Vec<SourcePath> {
    let _ = (output, workspace, cwd);
    Vec::new()
}
