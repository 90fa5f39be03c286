//! Running a decided request: the sandbox the grants describe, the result the agent gets.

use std::ffi::OsString;
use std::time::Duration;

use serde::Serialize;
use warden_feedback::{Denial, DenialSource, Run, SourcePath, Stream};
use warden_policy::ast::Verdict;
use warden_policy::{Decision, Network};

use crate::confine;
use crate::{Engine, Environment, Explanation};

/// What to run once the decision allows it.
#[derive(Debug, Clone, Copy)]
pub enum Job<'a> {
    /// A command string, run with `/bin/sh -c` inside the sandbox.
    Shell(&'a str),
    /// An argv, run directly.
    Argv(&'a [String]),
}

/// Options of one run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// A wall timeout shorter than the policy's.
    pub timeout: Option<Duration>,
    /// Bytes for the command's standard input.
    pub stdin: Vec<u8>,
    /// The backend, overriding the one the grants select.
    pub backend: Option<BackendChoice>,
    /// Paths no sandbox may show, whatever the grants say (the audit log): denied outright.
    pub protect: Vec<std::path::PathBuf>,
    /// Stops the run when fired: a command not started yet does not start, a running one is
    /// killed and reported `cancelled` (the WASI backend: stopped within about 30 ms).
    pub cancel: Option<warden_sandbox::Cancel>,
}

/// Which sandbox runs the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// The Linux sandbox (namespaces, Landlock, seccomp).
    Native,
    /// The WASI sandbox (a tool of a WASI image, preopened folders only).
    Wasi,
}

/// The result an agent gets (field names pinned in ARCHITECTURE.md).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The decision (its grants are left out of the JSON: `explain` shows them).
    #[serde(serialize_with = "without_grants")]
    pub decision: Decision,
    /// Whether the command ran.
    pub ran: bool,
    /// Exit code, signal, timeout, duration, streams, denials and the sandbox built.
    #[serde(flatten)]
    pub run: Run,
    /// Source locations named in the output (workspace-relative, existing files only).
    pub paths: Vec<SourcePath>,
    /// The agent it was decided for.
    pub agent: Option<String>,
    /// Why it did not run, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The audit record of this outcome (`seq`, `hash`), when a log is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<warden_audit::Receipt>,
}

/// A run that could not start (nothing ran).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The sandbox could not be built.
    #[error(transparent)]
    Sandbox(#[from] warden_sandbox::Error),
    /// The grants ask for what this backend cannot enforce.
    #[error("{0}")]
    Unenforceable(String),
}

impl Outcome {
    /// How the run ended, for people: `exit N`, `killed by SIGNAME`, `timed out` or
    /// `cancelled`.
    pub fn end(&self) -> String {
        if self.run.cancelled {
            "cancelled".to_string()
        } else if self.run.timed_out {
            "timed out".to_string()
        } else if let Some(sig) = &self.run.signal {
            format!("killed by {sig}")
        } else {
            format!("exit {}", self.run.exit_code.unwrap_or(-1))
        }
    }

    /// The outcome of a request that did not run, with why.
    pub fn refused(explanation: &Explanation, why: impl Into<String>) -> Outcome {
        let why = why.into();
        Outcome {
            decision: explanation.decision.clone(),
            ran: false,
            run: Run { stderr: Stream::default(), ..Run::default() },
            paths: Vec::new(),
            agent: explanation.agent.clone(),
            refused: Some(why),
            audit: None,
        }
    }
}

impl Engine {
    fn view(&self, explanation: &Explanation, job: Job<'_>, env: &Environment, opts: &RunOptions) -> confine::View {
        let argv: Vec<OsString> = match job {
            Job::Shell(text) => vec!["/bin/sh".into(), "-c".into(), text.into()],
            Job::Argv(args) => args.iter().map(OsString::from).collect(),
        };
        let mut view = confine::view(&explanation.decision.grants, self.context(), env, argv, opts.timeout);
        view.spec.stdin = opts.stdin.clone();
        view.spec.cancel = opts.cancel.clone();
        view
    }

    /// The native sandbox spec `run` would use (for benchmarks and diagnostics).
    pub fn sandbox_spec(&self, explanation: &Explanation, job: Job<'_>, env: &Environment, opts: &RunOptions) -> warden_sandbox::Spec {
        self.view(explanation, job, env, opts).spec
    }

    /// Runs `job` in the sandbox its decision's grants describe. The caller has already
    /// settled the verdict (allow, or ask approved); any other verdict is refused here too.
    ///
    /// # Errors
    /// When the sandbox cannot be built or the grants cannot be enforced: nothing ran.
    pub fn run(&self, explanation: &Explanation, job: Job<'_>, env: &Environment, opts: &RunOptions) -> Result<Outcome, RunError> {
        self.run_gated(explanation, job, env, opts, &mut || Ok(()))
    }

    /// [`Engine::run`], calling `gate` before the command starts (see
    /// [`warden_sandbox::run_gated`]): the command runs only if it returns `Ok`, and the native
    /// sandbox is built meanwhile. `gate` is called at most once, and not at all when nothing
    /// was started (a denial, grants that cannot be enforced, a program that is not there).
    ///
    /// # Errors
    /// As [`Engine::run`]; a refusing gate gives [`warden_sandbox::Error::Gate`].
    pub fn run_gated(
        &self,
        explanation: &Explanation,
        job: Job<'_>,
        env: &Environment,
        opts: &RunOptions,
        gate: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<Outcome, RunError> {
        let protected;
        let explanation = if opts.protect.is_empty() {
            explanation
        } else {
            protected = protect(explanation, &opts.protect);
            &protected
        };
        let decision = &explanation.decision;
        if decision.verdict == Verdict::Deny {
            return Ok(Outcome::refused(explanation, format!("denied: {}", decision.reason())));
        }
        let grants = &decision.grants;
        if let Network::Hosts(hosts) = &grants.network {
            return Err(RunError::Unenforceable(format!(
                "the policy grants network access to {} only; the native sandbox cannot limit the network to hosts \
                 (it has no proxy), so it refuses to run rather than open all of it",
                hosts.join(", ")
            )));
        }
        let wasi = match opts.backend {
            Some(b) => b == BackendChoice::Wasi,
            None => matches!(grants.sandbox, warden_policy::Backend::Wasi { .. }),
        };
        let run = if wasi {
            let Job::Argv(argv) = job else {
                return Err(RunError::Unenforceable(
                    "the WASI backend runs one tool of its image, not a shell string: pass the argv after `--`".into(),
                ));
            };
            gate().map_err(warden_sandbox::Error::Gate)?;
            crate::wasi::run(grants, std::path::Path::new(&self.context().workspace), std::path::Path::new(&self.context().cwd), env, argv, opts)?
        } else {
            let confine::View { spec, notes, mut tree, guards } = self.view(explanation, job, env, opts);
            // The guarded paths still missing are noted in the gate, just before the command
            // starts (while its sandbox is built), and swept after it.
            // So are the git folders there are, to find the ones the command makes.
            let (mut missing, mut repos) = (Vec::new(), None);
            let mut noting = || {
                missing = confine::missing_guarded(&guards, &mut tree);
                repos = crate::newrepo::before(&mut tree, &guards);
                if let Some(before) = &repos {
                    before.claim(&mut missing);
                }
                gate()
            };
            let mut run = warden_sandbox::run_gated(&spec, &mut noting)?;
            run.sandbox.notes.extend(notes);
            swept(&mut run, &missing);
            if let Some(before) = &repos {
                crate::newrepo::report(&mut run, before, env);
            }
            run
        };
        let ws = std::path::Path::new(&self.context().workspace);
        let cwd = std::path::Path::new(&self.context().cwd);
        let paths = warden_feedback::paths::find_in(&[&run.stderr.text, &run.stdout.text], ws, cwd);
        Ok(Outcome { decision: decision.clone(), ran: true, run, paths, agent: explanation.agent.clone(), refused: None, audit: None })
    }
}

/// Moves aside what the command made at guarded paths that were missing when it started (no
/// mount could cover them: `sweep.rs`), each a refused write in the run's denials.
pub(crate) fn swept(run: &mut Run, missing: &[crate::sweep::Missing]) {
    if missing.is_empty() {
        return;
    }
    let (moved, left) = crate::sweep::sweep(missing);
    for (p, to) in &moved {
        let target = p.to_string_lossy().into_owned();
        run.denials.push(Denial::observed("fs.write", target, DenialSource::Sweep));
        run.sandbox.notes.push(format!(
            "moved {} to {}: the command made it at a guarded path that did not exist when it started",
            p.display(),
            to.display()
        ));
    }
    for p in &left {
        run.sandbox.notes.push(format!("could not move aside what the command made at the guarded path {}", p.display()));
    }
}

/// `x` with `paths` (and everything beneath them) denied in its grants.
fn protect(x: &Explanation, paths: &[std::path::PathBuf]) -> Explanation {
    let mut x = x.clone();
    let mut grants = (*x.decision.grants).clone();
    for p in paths.iter().filter_map(|p| p.to_str()) {
        for pattern in [p.to_string(), format!("{}/**", p.trim_end_matches('/'))] {
            if !grants.deny.contains(&pattern) {
                grants.deny.push(pattern);
            }
        }
    }
    x.decision.grants = std::sync::Arc::new(grants);
    x
}

/// A decision as the run result shows it: verdict, tier, reason, rules, parts; no grants.
fn without_grants<S: serde::Serializer>(d: &Decision, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("Decision", 5)?;
    st.serialize_field("verdict", &d.verdict)?;
    st.serialize_field("tier", &d.tier())?;
    st.serialize_field("reason", d.reason())?;
    st.serialize_field("rules", d.rules())?;
    st.serialize_field("parts", d.parts())?;
    st.end()
}
