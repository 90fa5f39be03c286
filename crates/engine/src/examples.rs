//! The policy's examples checked on another thread while a one-shot run gets going (see
//! [`crate::Engine::new_deferred`]): a session waits for the check before it records
//! anything, and so before anything it decided is acted on (asked, run, refused). A failed
//! check refuses every request of the session with the examples' diagnostics, as a policy
//! that does not compile would.

use std::thread::JoinHandle;

use warden_policy::{Code, Diagnostic, Diagnostics};

use crate::SessionError;

/// Where the check of a session's examples stands.
#[derive(Debug, Default)]
pub(crate) enum Check {
    /// Passed, or checked when the engine was compiled.
    #[default]
    Passed,
    /// Running on another thread.
    Running(JoinHandle<Result<(), Diagnostics>>),
    /// Failed: every request is refused with these.
    Failed(Diagnostics),
}

impl Check {
    /// Waits for the check to end; its failure, now and on every later call.
    pub(crate) fn wait(&mut self) -> Result<(), SessionError> {
        if let Check::Running(_) = self
            && let Check::Running(thread) = std::mem::take(self)
        {
            *self = match thread.join() {
                Ok(Ok(())) => Check::Passed,
                Ok(Err(d)) => Check::Failed(d),
                Err(_) => Check::Failed(Diagnostics(vec![Diagnostic::new(
                    Code::ExampleFailed,
                    "-",
                    "",
                    0..0,
                    "checking the policy's examples failed (the checking thread panicked)",
                )])),
            };
        }
        match self {
            Check::Failed(d) => Err(SessionError::Policy(d.clone())),
            Check::Passed | Check::Running(_) => Ok(()),
        }
    }
}
