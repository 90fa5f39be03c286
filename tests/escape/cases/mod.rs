//! The attacks. Each case plants its own targets, returns the script to run inside the sandbox,
//! the denials warden may report for it, and a check made from outside after the run.
//!
//! On top of each case's own check the suite always verifies that nothing under `outside/`,
//! `readable/`, `.git/hooks`, `.git/config`, `.warden/` or `.env` changed (content, mode, owner,
//! inode, links, times, xattrs through ctime), that no planted secret appears in the output or
//! in a workspace file, that no device node appeared in the workspace, and that no process of
//! the case outlives the run.

use std::time::Duration;

use crate::fixture::Fixture;
use crate::runner::Outcome;

mod audit;
mod files;
mod kernel;
mod limits;
mod net;
mod procs;
mod reads;

/// The check a case makes after the run.
pub type Check = Box<dyn FnOnce(&Fixture, &Outcome) -> Result<(), String>>;

/// One attack, ready to run.
pub struct Attack {
    /// The script for `/bin/sh -c` (with `{ws}`, `{out}`, `{rd}`, `{root}`, `{id}`).
    pub script: String,
    /// `(op, target substring)` pairs a reported denial may match.
    pub expect: Vec<(&'static str, String)>,
    /// `--timeout` in seconds, when the case is about time (set from the case).
    pub timeout: Option<u32>,
    /// How long to wait after the run before checking (for delayed attacks).
    pub settle: Duration,
    /// Files held open on descriptors 7 (read), 8 (its folder) and 9 (append) by the launcher.
    pub leak_fds: Option<(String, String)>,
    /// The case's own check.
    pub check: Check,
}

impl Attack {
    /// An attack running `script`, with no check of its own yet.
    pub fn new(script: &str) -> Attack {
        Attack {
            script: script.to_string(),
            expect: Vec::new(),
            timeout: None,
            settle: Duration::ZERO,
            leak_fds: None,
            check: Box::new(|_, _| Ok(())),
        }
    }

    /// An attack whose paths the shell analyser cannot know statically: the script reaches the
    /// folders through `$W` (workspace), `$R` (readable) and `$O` (outside), computed at run
    /// time. A literal denied path would be refused before anything ran, proving nothing about
    /// the sandbox.
    pub fn hidden(script: &str) -> Attack {
        Attack::new(&format!(
            "W=$(printf %s {{ws}}); R=$(printf %s {{rd}}); O=$(printf %s {{out}}); {script}"
        ))
    }

    /// Allows a denial of `op` on a target containing `target` (after `{...}` expansion).
    pub fn deny(mut self, op: &'static str, target: &str) -> Attack {
        self.expect.push((op, target.to_string()));
        self
    }

    /// Sets the case's own check.
    pub fn check(
        mut self,
        check: impl FnOnce(&Fixture, &Outcome) -> Result<(), String> + 'static,
    ) -> Attack {
        self.check = Box::new(check);
        self
    }

    /// Waits `ms` after the run before checking.
    pub fn settle(mut self, ms: u64) -> Attack {
        self.settle = Duration::from_millis(ms);
        self
    }
}

/// One case of the suite.
pub struct Case {
    /// Its name, kebab-case, unique.
    pub name: &'static str,
    /// `--timeout` for the case's policy and run (None: 10 s).
    pub timeout: Option<u32>,
    /// Plants the targets and builds the attack.
    pub plant: fn(&Fixture) -> Result<Attack, String>,
}

/// A case with the default timeout.
pub const fn case(name: &'static str, plant: fn(&Fixture) -> Result<Attack, String>) -> Case {
    Case {
        name,
        timeout: None,
        plant,
    }
}

/// Every case.
pub fn all() -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(files::cases());
    v.extend(reads::cases());
    v.extend(net::cases());
    v.extend(procs::cases());
    v.extend(kernel::cases());
    v.extend(limits::cases());
    v.extend(audit::cases());
    v
}

/// Fails unless stdout has a line `marker` (proof the attack reached the point that prints it).
pub fn reached(out: &Outcome, marker: &str) -> Result<(), String> {
    if out.stdout.lines().any(|l| l.trim() == marker) {
        Ok(())
    } else {
        Err(format!(
            "the attack never reached `{marker}` (inconclusive): {}",
            out.excerpt()
        ))
    }
}

/// A python3 one-shot: isolated (`-I -S`: no user site, no env), the code in single quotes.
pub fn py(code: &str) -> String {
    format!("/usr/bin/python3 -I -S -c '{code}'")
}
