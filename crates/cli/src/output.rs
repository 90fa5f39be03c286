//! Printing diagnostics and errors the same way in every verb.

use warden_policy::Diagnostics;

/// An error that stops a verb (exit 2).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum CliError {
    /// Policy files could not be read.
    #[error(transparent)]
    #[diagnostic(code(warden::load))]
    Load(#[from] warden_engine::LoadError),
    /// Policy files did not compile; the diagnostics were already printed.
    #[error("the policy does not load: {count} error(s)")]
    #[diagnostic(code(warden::policy), help("run `warden check` on the files named above"))]
    Policy {
        /// How many diagnostics.
        count: usize,
    },
    /// Anything else the verb could not do.
    #[error("{message}")]
    #[diagnostic(code(warden::usage))]
    Usage {
        /// What went wrong.
        message: String,
    },
    /// The sandbox could not be built or cannot enforce the grants: nothing ran.
    #[error("nothing ran: {0}")]
    #[diagnostic(code(warden::sandbox))]
    Sandbox(#[from] warden_engine::RunError),
    /// The audit log cannot be opened or written: nothing ran without its record.
    #[error("audit log: {0}; nothing was run")]
    #[diagnostic(code(warden::audit), help("give a writable log with --audit-log FILE (outside the workspace)"))]
    Audit(String),
    /// An I/O error on a named path.
    #[error("cannot {action} `{path}`: {source}")]
    #[diagnostic(code(warden::io))]
    Io {
        /// read, write, ...
        action: &'static str,
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Prints every diagnostic to stderr, rendered with source context (or one line each).
pub fn print_diagnostics(diagnostics: &Diagnostics, short: bool) {
    for (i, d) in diagnostics.0.iter().enumerate() {
        // Each drawing reads its file from the start: past the first few, one line each (a
        // file with thousands of errors is reported in well under a second).
        if short || i >= DRAWN {
            eprintln!("{}", d.short());
        } else {
            eprintln!("{:?}", miette::Report::new(d.clone()));
        }
    }
}

/// Diagnostics drawn with their source excerpt; the rest are printed on one line each.
const DRAWN: usize = 20;

/// Why a request is refused when the policy does not load, for its audit record: how many
/// errors, and the first with its file:line:column.
pub fn unloaded(diagnostics: &Diagnostics) -> String {
    let first = diagnostics.0.first().map(|d| d.short()).unwrap_or_default();
    format!("the policy does not load (fail closed): {} error(s), the first: {first}", diagnostics.0.len())
}

/// Prints the diagnostics and turns them into the error that stops the verb.
pub fn policy_error(diagnostics: &Diagnostics) -> CliError {
    print_diagnostics(diagnostics, false);
    CliError::Policy { count: diagnostics.0.len() }
}
