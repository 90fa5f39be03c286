//! A session: one agent identity's requests, each decided, settled, recorded and run.
//!
//! The order is the guarantee: the decision record is durable on disk before anything runs
//! (an allowed command's sandbox is built while the record is written, and the command starts
//! only once it is on disk: `warden_sandbox::run_gated`);
//! an approval is recorded with who gave it before the command starts; the outcome follows.
//! When the audit log cannot be written, nothing runs (fail closed). The log's folder is
//! hidden from every sandbox the session builds, whatever the grants say.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use warden_audit::{ClientRec, DecidedBy, DecisionRec, DenialRec, Entry, Input, Kind, Log, OutcomeRec, Receipt};
use warden_policy::ast::Verdict;
use warden_policy::{Diagnostics, LayerSource};

use crate::approve::{Answer, Approver, Pending, SessionGrants, asking};
use crate::budget::{Spent, over_budget};
use crate::records::{decision_rec, open_log, policy_hash, protected, session_id};
use crate::redact::Redactor;
use crate::{Engine, Environment, Explanation, Job, Outcome, Query, RunError, RunOptions};

/// Who the session is.
#[derive(Debug, Clone, Default)]
pub struct SessionConfig {
    /// The session id (recorded on every entry); a random one when empty.
    pub id: String,
    /// The agent identity requests are decided for.
    pub agent: Option<String>,
    /// The agents above this one, nearest first, each `AGENT[@SESSION]` (an empty AGENT is the
    /// top-level identity). Every request is decided for each of them too, and gets no more
    /// than any of them would (see `narrow.rs`); the records name them.
    pub parents: Vec<String>,
    /// The audit log; `None` runs without one (tests, `explain`-like callers).
    pub audit: Option<PathBuf>,
}

/// What went wrong in a session (nothing ran, unless the error says the outcome was lost).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The policy does not compile.
    #[error("the policy does not load")]
    Policy(Diagnostics),
    /// The audit log cannot be opened or written: nothing runs without its record.
    #[error("audit log: {0}")]
    Audit(String),
    /// The run could not start.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A request that was decided and recorded; once settled, it runs ([`Session::run`]) or the
/// caller performs the tool and records what it did ([`Session::finish`]).
///
/// Async callers (the MCP server asks its client) settle `ask` themselves: [`Gate::pending`]
/// is true until [`Session::answer`] records the answer.
#[derive(Debug, Clone)]
pub struct Gate {
    /// The decision and what the analyser found.
    pub explanation: Explanation,
    /// Why it may not proceed; `None` when it may (or while an answer is pending).
    pub refused: Option<String>,
    /// The decision record, when audited.
    pub decision_seq: Option<u64>,
    /// Whether the decision asked and nobody has answered yet.
    pub pending: bool,
    tool: String,
    subject: String,
    path: Option<String>,
    input: Input,
    /// The network client that sent the request, named on each of its records.
    client: Option<ClientRec>,
}

impl Gate {
    /// What an approver is shown while the gate is pending.
    pub fn pending_request<'a>(&'a self, agent: Option<&'a str>) -> Pending<'a> {
        Pending { agent, tool: &self.tool, subject: &self.subject, decision: &self.explanation.decision }
    }
}

/// A command gate that passed its budgets: run it with [`Cleared::run`] (the session need not
/// be held meanwhile), then hand the result to [`Session::complete`].
#[derive(Debug)]
pub struct Cleared {
    gate: Gate,
    opts: RunOptions,
}

impl Cleared {
    /// Runs the command confined by its decision's grants.
    ///
    /// # Errors
    /// The sandbox cannot be built, or the grants cannot be enforced.
    pub fn run(&self, engine: &Engine, env: &Environment, job: Job<'_>) -> Result<Outcome, RunError> {
        engine.run(&self.gate.explanation, job, env, &self.opts)
    }
}

/// Decides, settles `ask`, audits and runs. One per agent session.
pub struct Session {
    engine: Engine,
    env: Environment,
    config: SessionConfig,
    approver: Box<dyn Approver + Send>,
    log: Option<Log>,
    policy_hash: String,
    granted: SessionGrants,
    redactor: Arc<Redactor>,
    spent: Spent,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("config", &self.config).field("policy_hash", &self.policy_hash).finish_non_exhaustive()
    }
}

/// A session's audit log, opened (see [`Session::with_log`]).
#[derive(Debug)]
pub struct AuditLog(pub(crate) Option<Log>);

impl AuditLog {
    /// Opens the log at `path` (`None`: a session without one).
    ///
    /// # Errors
    /// As [`Session::new`]: the log cannot be opened, or it has more than one name.
    pub fn open(path: Option<&Path>) -> Result<AuditLog, SessionError> {
        path.map(open_log).transpose().map(AuditLog)
    }
}

impl Session {
    /// A session over `engine` (compiled from `layers`, which are hashed for the records).
    ///
    /// # Errors
    /// When the audit log cannot be opened, or it is reachable by more than one name (hard
    /// links: a command could write it through the other).
    pub fn new(
        engine: Engine,
        layers: &[LayerSource],
        env: Environment,
        config: SessionConfig,
        approver: Box<dyn Approver + Send>,
    ) -> Result<Session, SessionError> {
        let log = AuditLog::open(config.audit.as_deref())?;
        Session::with_log(engine, layers, env, config, approver, log)
    }

    /// [`Session::new`] with its audit log already opened (by [`AuditLog::open`] on the
    /// path `config.audit` names), for a caller that opens it while the policy compiles.
    ///
    /// # Errors
    /// None yet (the redactor's built-in patterns compile).
    pub fn with_log(
        engine: Engine,
        layers: &[LayerSource],
        env: Environment,
        mut config: SessionConfig,
        approver: Box<dyn Approver + Send>,
        AuditLog(log): AuditLog,
    ) -> Result<Session, SessionError> {
        if config.id.is_empty() {
            config.id = session_id();
        }
        let redactor = Arc::new(Redactor::new(&[]).map_err(SessionError::Audit)?);
        Ok(Session { engine, env, config, approver, log, policy_hash: policy_hash(layers), granted: SessionGrants::default(), redactor, spent: Spent::default() })
    }

    /// The engine requests are decided with.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.config.id
    }

    /// What the session has used of its budgets.
    pub fn spent(&self) -> Spent {
        self.spent
    }

    /// The hash of the policy in force.
    pub fn policy_hash(&self) -> &str {
        &self.policy_hash
    }

    /// Replaces the policy (a live reload) and records the new hash. The caller has compiled it.
    ///
    /// # Errors
    /// When the reload cannot be recorded (the new policy is then not used).
    pub fn reload(&mut self, engine: Engine, layers: &[LayerSource]) -> Result<(), SessionError> {
        let hash = policy_hash(layers);
        let note = format!("policy reloaded: {} -> {hash}", self.policy_hash);
        let mut entry = self.entry(Kind::Reload, "policy", Input::default());
        entry.policy_hash = hash.clone();
        entry.note = Some(note);
        self.record(&entry)?;
        self.engine = engine;
        self.policy_hash = hash;
        Ok(())
    }

    /// Decides `query`, settles `ask` with the session's approver, records, and runs `job`
    /// confined.
    ///
    /// # Errors
    /// The audit log cannot be written (nothing ran, or the outcome could not be recorded), or
    /// the sandbox cannot be built.
    pub fn exec(&mut self, query: Query<'_>, job: Job<'_>, opts: &RunOptions) -> Result<Outcome, SessionError> {
        let explanation = self.explain(query);
        let (subject, input) = self.exec_input(query, job);
        let allowed = explanation.decision.verdict == Verdict::Allow
            && over_budget(&explanation.decision.grants.limits, &self.spent).is_none();
        if allowed {
            return self.exec_allowed(explanation, subject, input, job, opts);
        }
        let mut gate = self.begin(explanation, "exec", subject, None, input, None)?;
        self.settle(&mut gate)?;
        self.run(gate, job, opts)
    }

    /// Decides a command and records the decision (first half of [`Session::exec`]).
    ///
    /// # Errors
    /// The decision cannot be recorded: nothing may run.
    pub fn begin_exec(&mut self, query: Query<'_>, job: Job<'_>) -> Result<Gate, SessionError> {
        self.begin_exec_from(None, query, job)
    }

    /// [`Session::begin_exec`] for a request that came from a network client (an MCP client
    /// over HTTP): its decision, approval and outcome records name `client`.
    ///
    /// # Errors
    /// The decision cannot be recorded: nothing may run.
    pub fn begin_exec_from(&mut self, client: Option<ClientRec>, query: Query<'_>, job: Job<'_>) -> Result<Gate, SessionError> {
        let explanation = self.explain(query);
        let (subject, input) = self.exec_input(query, job);
        self.begin(explanation, "exec", subject, None, input, client)
    }

    /// An allowed command within its budgets: the sandbox is built while the decision record is
    /// written, and the command starts only once the record is on disk (the sandbox's gate).
    fn exec_allowed(&mut self, explanation: Explanation, subject: String, input: Input, job: Job<'_>, opts: &RunOptions) -> Result<Outcome, SessionError> {
        let entry = self.scrub(self.decision_entry(&explanation, "exec", input.clone()));
        let mut gate =
            Gate { explanation, refused: None, decision_seq: None, pending: false, tool: "exec".into(), subject, path: None, input, client: None };
        let opts = self.cleared_opts(&gate, opts);
        self.spent.commands += 1;
        let Session { engine, env, log, .. } = &mut *self;
        // The record is written (and synced) on a thread of its own from now on, started on
        // another processor (`warden_sandbox::spawn_apart`), while the sandbox is built; the
        // gate waits for it. A run that starts nothing (the outcome says why) never calls the
        // gate: its record is waited for afterwards all the same. The log goes back to the
        // session only once the record is written (or the thread has ended). The result comes
        // back on a channel, not by joining the thread: its exit is then off the command's path.
        let shared = Arc::new(std::sync::Mutex::new(log.take()));
        let entry = Arc::new(entry);
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let write = {
            let (shared, entry) = (Arc::clone(&shared), Arc::clone(&entry));
            move || {
                let result = append(&mut held(&shared), &entry);
                let _ = tx.send(result);
            }
        };
        let mut writing = warden_sandbox::spawn_apart(std::thread::Builder::new().name("warden-record".into()), write).ok();
        let mut written = || match writing.take() {
            // A thread that ended without sending (a panic) dropped its sender.
            Some(_thread) => rx.recv().unwrap_or_else(|_| Err(SessionError::Audit("writing the decision record panicked".into()))),
            None => append(&mut held(&shared), &entry),
        };
        let mut recorded = None;
        let result = {
            let mut record = || {
                let r = written();
                let refused = r.as_ref().err().map(ToString::to_string);
                recorded = Some(r);
                refused.map_or(Ok(()), Err)
            };
            engine.run_gated(&gate.explanation, job, env, &opts, &mut record)
        };
        let receipt = recorded.unwrap_or_else(&mut written);
        *log = held(&shared).take();
        gate.decision_seq = receipt?.map(|r| r.seq);
        self.complete(Cleared { gate, opts }, result)
    }

    /// The subject and the audit input of a command.
    fn exec_input(&self, query: Query<'_>, job: Job<'_>) -> (String, Input) {
        let (command, argv) = match job {
            Job::Shell(text) => (Some(text.to_string()), None),
            Job::Argv(args) => (None, Some(args.to_vec())),
        };
        let subject = match query {
            Query::Command(text) => text.to_string(),
            Query::Tool { path, .. } => path.unwrap_or_default().to_string(),
        };
        (subject, Input { command, argv, ..self.input(None) })
    }

    /// Runs a settled command gate confined (second half of [`Session::exec`]): budgets, the
    /// sandbox, the outcome record. A gate still pending is refused.
    ///
    /// # Errors
    /// The outcome cannot be recorded, or the sandbox cannot be built (recorded as not run).
    pub fn run(&mut self, gate: Gate, job: Job<'_>, opts: &RunOptions) -> Result<Outcome, SessionError> {
        match self.clear(gate, opts)? {
            Err(refused) => Ok(refused),
            Ok(cleared) => {
                let result = cleared.run(&self.engine, &self.env, job);
                self.complete(cleared, result)
            }
        }
    }

    /// Checks a settled gate against the budgets and prepares its run, for callers that run
    /// it without holding the session (an MCP server serving calls side by side). The command
    /// is counted against the `commands` budget here. A refusal comes back as its recorded
    /// outcome.
    ///
    /// # Errors
    /// A refusal cannot be recorded.
    pub fn clear(&mut self, mut gate: Gate, opts: &RunOptions) -> Result<Result<Cleared, Outcome>, SessionError> {
        if gate.pending {
            gate.refused = Some("needs approval, and no answer was recorded".into());
        }
        let limits = gate.explanation.decision.grants.limits;
        if gate.refused.is_none() {
            gate.refused = over_budget(&limits, &self.spent);
        }
        if let Some(why) = &gate.refused {
            let mut outcome = Outcome::refused(&gate.explanation, why.clone());
            outcome.audit = self.finish(&gate, &outcome)?;
            return Ok(Err(outcome));
        }
        let opts = self.cleared_opts(&gate, opts);
        self.spent.commands += 1;
        Ok(Ok(Cleared { gate, opts }))
    }

    /// The options a cleared command runs with: no longer than what is left of the session's
    /// time budget, and the audit log and warden's own cache hidden.
    fn cleared_opts(&self, gate: &Gate, opts: &RunOptions) -> RunOptions {
        let mut opts = opts.clone();
        if let Some(total) = gate.explanation.decision.grants.limits.total_time_ms {
            let left = std::time::Duration::from_secs_f64((total as f64 - self.spent.time_ms).max(0.0) / 1000.0);
            opts.timeout = Some(opts.timeout.map_or(left, |t| t.min(left)));
        }
        if let Some(log) = &self.log {
            opts.protect.extend(protected(log.path(), self.engine.context()));
        }
        // warden's own cache: the policies compiled before (`compiled.rs`)
        // and the compiled WASI modules, which warden loads as machine code.
        let (cache, real) = crate::records::own_cache_made(&self.env.cache_home);
        opts.protect.push(real.unwrap_or(cache));
        opts
    }

    /// Records how a cleared command ended and counts it against the budgets.
    ///
    /// # Errors
    /// The outcome cannot be recorded, or the run could not start (recorded as not run).
    pub fn complete(&mut self, cleared: Cleared, result: Result<Outcome, RunError>) -> Result<Outcome, SessionError> {
        let gate = cleared.gate;
        let mut outcome = match result {
            Ok(o) => o,
            Err(e) => {
                let mut o = Outcome::refused(&gate.explanation, format!("not run: {e}"));
                o.refused = Some(format!("the sandbox could not run it: {e}"));
                o.run.cancelled = matches!(e, RunError::Sandbox(warden_sandbox::Error::Cancelled));
                self.finish(&gate, &o)?;
                return Err(e.into());
            }
        };
        if outcome.ran {
            self.spent.time_ms += outcome.run.duration_ms;
            self.spent.output += outcome.run.stdout.bytes + outcome.run.stderr.bytes;
        }
        outcome.audit = self.finish(&gate, &outcome)?;
        Ok(outcome)
    }

    /// Decides `query` and records the decision; runs nothing and asks no one. For hooks, where
    /// the agent performs the tool itself once told the verdict: `via` names the hook.
    ///
    /// # Errors
    /// The decision cannot be recorded (a hook must then answer deny).
    pub fn decide(&mut self, query: Query<'_>, via: Option<&str>) -> Result<(Explanation, Option<Receipt>), SessionError> {
        let explanation = self.explain(query);
        let (tool, input) = match query {
            Query::Command(text) => ("exec", Input { command: Some(text.to_string()), ..self.input(None) }),
            Query::Tool { name, path } => (name, self.input(path)),
        };
        let mut entry = self.entry(Kind::Decision, tool, input);
        entry.decision = Some(decision_rec(&explanation.decision));
        entry.decided_by = Some(match via {
            Some(hook) => DecidedBy { kind: "hook".into(), name: Some(hook.to_string()) },
            None => DecidedBy { kind: "policy".into(), name: None },
        });
        let receipt = self.record(&entry)?;
        Ok((explanation, receipt))
    }

    /// Decides a tool call the caller performs itself (file tools) and records the decision;
    /// settle a pending `ask` with [`Session::answer`] (or [`Session::settle`]), then record
    /// what the tool did with [`Session::finish`].
    ///
    /// # Errors
    /// The decision cannot be recorded: the caller must not perform the tool.
    pub fn begin_tool(&mut self, name: &str, path: Option<&str>) -> Result<Gate, SessionError> {
        self.begin_tool_from(None, name, path)
    }

    /// [`Session::begin_tool`] for a request that came from a network client (an MCP client
    /// over HTTP): its decision, approval and outcome records name `client`.
    ///
    /// # Errors
    /// The decision cannot be recorded: the caller must not perform the tool.
    pub fn begin_tool_from(&mut self, client: Option<ClientRec>, name: &str, path: Option<&str>) -> Result<Gate, SessionError> {
        let explanation = self.explain(Query::Tool { name, path });
        let input = self.input(path);
        self.begin(explanation, name, path.unwrap_or_default().to_string(), path.map(str::to_string), input, client)
    }

    /// Settles a pending gate with the session's own approver (nothing to do otherwise).
    ///
    /// # Errors
    /// The answer cannot be recorded.
    pub fn settle(&mut self, gate: &mut Gate) -> Result<(), SessionError> {
        if gate.pending {
            let answer = self.approver.approve(&gate.pending_request(self.config.agent.as_deref()));
            self.answer(gate, answer)?;
        }
        Ok(())
    }

    /// Records the answer to a pending gate: who gave it, and what.
    ///
    /// # Errors
    /// The answer cannot be recorded: the request must then not proceed (the gate says so).
    pub fn answer(&mut self, gate: &mut Gate, answer: Answer) -> Result<(), SessionError> {
        let d = &gate.explanation.decision;
        let mut approval = self.entry(Kind::Approval, &gate.tool, gate.input.clone());
        approval.client.clone_from(&gate.client);
        approval.refers_to = gate.decision_seq;
        approval.decided_by = Some(DecidedBy { kind: "approver".into(), name: Some(answer.by().to_string()) });
        let verdict = if answer.granted() { "allow" } else { "deny" };
        approval.decision = Some(DecisionRec { verdict: verdict.into(), ..decision_rec(d) });
        approval.note = Some(match &answer {
            Answer::Once { .. } => "approved once".to_string(),
            Answer::Session { .. } => "approved for this session".to_string(),
            Answer::Refused { why, .. } => format!("refused: {why}"),
        });
        // Whatever happens next the gate no longer waits; an unrecorded answer refuses.
        gate.pending = false;
        gate.refused = Some("the approval could not be recorded".into());
        self.record(&approval)?;
        gate.refused = match answer {
            Answer::Once { .. } => None,
            Answer::Session { .. } => {
                self.granted.add(asking(&gate.explanation.decision, &gate.tool, gate.path.as_deref()));
                None
            }
            Answer::Refused { why, .. } => Some(why),
        };
        Ok(())
    }

    /// Records what a gated request did (or that it did not run).
    ///
    /// # Errors
    /// The record cannot be written.
    pub fn finish(&mut self, gate: &Gate, o: &Outcome) -> Result<Option<Receipt>, SessionError> {
        let mut entry = self.entry(Kind::Outcome, &gate.tool, gate.input.clone());
        entry.client.clone_from(&gate.client);
        entry.refers_to = gate.decision_seq;
        entry.outcome = Some(OutcomeRec {
            ran: o.ran,
            exit_code: o.run.exit_code,
            signal: o.run.signal.clone(),
            timed_out: o.run.timed_out,
            cancelled: o.run.cancelled,
            duration_ms: o.run.duration_ms,
            denials: o.run.denials.iter().map(denial_rec).collect(),
            refused: o.refused.clone(),
        });
        self.record(&entry)
    }

    /// Explains `query` for this agent, narrowed by every parent.
    pub fn explain(&self, query: Query<'_>) -> Explanation {
        let mut x = self.engine.explain_under(self.config.agent.as_deref(), &self.config.parents, query);
        // File tools, and an agent's own shell when a hook decides for it, act outside any
        // sandbox: what every sandbox is denied (the audit log, warden's own cache)
        // is refused here too, whatever the policy says, when the path is named (a path only
        // known at run time is the sandbox's to stop).
        let kept = match query {
            Query::Tool { path: Some(path), .. } => self.kept(path),
            Query::Tool { path: None, .. } => None,
            Query::Command(_) => x.decision.parts().iter().find_map(|p| match &p.subject {
                warden_policy::Subject::Path { path, .. } => self.kept(path),
                _ => None,
            }),
        };
        if let Some(what) = kept
            && x.decision.verdict != Verdict::Deny
        {
            x.decision.overrule(format!("{what} is never read or written by a tool or a command"));
        }
        x
    }

    /// What `path` (as a tool names it: absolute, `~/`, or relative to the working directory)
    /// leads into of what every sandbox is denied: the audit log, its head or its folder, or
    /// warden's own cache.
    fn kept(&self, path: &str) -> Option<&'static str> {
        let ctx = self.engine.context();
        let given = match path.strip_prefix("~/") {
            Some(rest) => self.env.home.join(rest),
            None => Path::new(&ctx.cwd).join(path),
        };
        let lexical = crate::leads::lexical(&given);
        let real = crate::leads::leads_to(&lexical);
        let under = |p: &Path| lexical.starts_with(p) || real.as_ref().is_some_and(|r| r.starts_with(p));
        if let Some(log) = &self.log
            && protected(log.path(), ctx).iter().chain(std::iter::once(&log.path().to_path_buf())).any(|p| under(p))
        {
            return Some("the audit log");
        }
        let (cache, real) = crate::records::own_cache(&self.env.cache_home);
        (under(&cache) || real.is_some_and(|p| under(&p))).then_some("warden's own cache (passed examples, compiled WASI modules)")
    }

    fn begin(
        &mut self,
        explanation: Explanation,
        tool: &str,
        subject: String,
        path: Option<String>,
        input: Input,
        client: Option<ClientRec>,
    ) -> Result<Gate, SessionError> {
        let d = &explanation.decision;
        let mut entry = self.decision_entry(&explanation, tool, input.clone());
        entry.client.clone_from(&client);
        let seq = self.record(&entry)?.map(|r| r.seq);
        let (refused, pending) = match d.verdict {
            Verdict::Allow => (None, false),
            Verdict::Deny => (Some(format!("denied: {}", d.reason())), false),
            Verdict::Ask => (None, true),
        };
        let mut gate = Gate { explanation, refused, decision_seq: seq, pending, tool: tool.to_string(), subject, path, input, client };
        if gate.pending && self.granted.covers(&asking(&gate.explanation.decision, tool, gate.path.as_deref())) {
            self.answer(&mut gate, Answer::Once { by: "session-approval".into() })?;
        }
        Ok(gate)
    }

    /// The record of a decision the policy made.
    fn decision_entry(&self, explanation: &Explanation, tool: &str, input: Input) -> Entry {
        let mut entry = self.entry(Kind::Decision, tool, input);
        entry.decision = Some(decision_rec(&explanation.decision));
        entry.decided_by = Some(DecidedBy { kind: "policy".into(), name: None });
        entry
    }

    fn input(&self, path: Option<&str>) -> Input {
        let ctx = self.engine.context();
        Input {
            command: None,
            argv: None,
            path: path.map(str::to_string),
            cwd: ctx.cwd.clone(),
            workspace: ctx.workspace.clone(),
            home: ctx.home.clone(),
        }
    }

    fn entry(&self, kind: Kind, tool: &str, input: Input) -> Entry {
        Entry {
            kind,
            session: self.config.id.clone(),
            agent: self.config.agent.clone(),
            parents: self.config.parents.clone(),
            client: None,
            tool: tool.to_string(),
            input,
            decision: None,
            decided_by: None,
            policy_hash: self.policy_hash.clone(),
            outcome: None,
            refers_to: None,
            note: None,
        }
    }

    fn record(&mut self, entry: &Entry) -> Result<Option<Receipt>, SessionError> {
        let entry = self.scrub(entry.clone());
        append(&mut self.log, &entry)
    }

    /// `entry` with secrets redacted from every field that can quote the request: the command
    /// and its words, the path, the decision's reason (which repeats the command when no rule
    /// matches), why a run was refused, the denials' targets and the note. An argv's words are
    /// also redacted two and three at a time, so that `--password VALUE` and
    /// `Authorization: Bearer VALUE`, split over words, are seen whole.
    fn scrub(&self, entry: Entry) -> Entry {
        scrub(&self.redactor, entry)
    }
}

/// [`Session::scrub`] with the redactor `r`.
pub(crate) fn scrub(r: &Redactor, mut entry: Entry) -> Entry {
    let input = &mut entry.input;
    input.command = input.command.as_deref().map(|c| r.redact(c));
    input.argv = input.argv.as_deref().map(|a| redact_words(r, a));
    input.path = input.path.as_deref().map(|p| r.redact(p));
    if let Some(d) = &mut entry.decision {
        d.reason = r.redact(&d.reason);
    }
    if let Some(o) = &mut entry.outcome {
        o.refused = o.refused.as_deref().map(|t| r.redact(t));
        for d in &mut o.denials {
            d.target = r.redact(&d.target);
        }
    }
    entry.note = entry.note.as_deref().map(|n| r.redact(n));
    entry
}

/// `words` redacted one by one, and each word redacted whole when it is a secret only joined
/// with the one or two words before it (`--token VALUE`, `Authorization: Bearer VALUE`).
fn redact_words(r: &Redactor, words: &[String]) -> Vec<String> {
    let mut out: Vec<String> = words.iter().map(|w| r.redact(w)).collect();
    for width in [2, 3] {
        for end in width..=words.len() {
            let Some((last, before)) = words.get(end - width..end).and_then(<[String]>::split_last) else { continue };
            let before = before.join(" ");
            // The last word is a secret only if the words before it make it one.
            if r.redact(&format!("{before} {last}")) != format!("{} {}", r.redact(&before), r.redact(last))
                && let Some(last) = out.get_mut(end - 1)
            {
                *last = crate::redact::MARK.to_string();
            }
        }
    }
    out
}

/// Appends `entry` to the log, when there is one.
/// The log a record thread shared; a poisoned lock is taken over (the thread panicked: the log
/// is whole up to its last complete record, as the next append checks).
fn held(shared: &std::sync::Mutex<Option<Log>>) -> std::sync::MutexGuard<'_, Option<Log>> {
    shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(crate) fn append(log: &mut Option<Log>, entry: &Entry) -> Result<Option<Receipt>, SessionError> {
    match log {
        None => Ok(None),
        Some(log) => log.append(entry).map(Some).map_err(|e| SessionError::Audit(e.to_string())),
    }
}

/// A run's denial as the audit outcome records it: its layer and how warden knows of it.
fn denial_rec(d: &warden_feedback::Denial) -> DenialRec {
    let evidence = match d.evidence {
        warden_feedback::Evidence::Observed => "observed",
        warden_feedback::Evidence::Output => "output",
    };
    DenialRec {
        op: d.op.clone(),
        target: d.target.clone(),
        source: format!("{:?}", d.source).to_lowercase(),
        evidence: Some(evidence.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_feedback::{Denial, DenialSource};

    /// sandbox.md #4: the audit outcome tells a refusal warden saw from one the command printed.
    #[test]
    fn denials_are_recorded_with_how_warden_knows() {
        let seen = denial_rec(&Denial::observed("syscall", "bpf", DenialSource::Seccomp));
        let printed = denial_rec(&Denial::output("net.connect", "10.0.0.1:443", DenialSource::Namespace));
        assert_eq!((seen.source.as_str(), seen.evidence.as_deref()), ("seccomp", Some("observed")));
        assert_eq!((printed.source.as_str(), printed.evidence.as_deref()), ("namespace", Some("output")));
        let json = serde_json::to_string(&printed).unwrap_or_default();
        assert_eq!(json, r#"{"op":"net.connect","target":"10.0.0.1:443","source":"namespace","evidence":"output"}"#);
    }

    #[test]
    fn an_argv_s_secrets_split_over_words_are_redacted_and_nothing_else() {
        let r = Redactor::new(&[]).unwrap();
        let words = |w: &[&str]| redact_words(&r, &w.iter().map(|s| (*s).to_string()).collect::<Vec<_>>());
        assert_eq!(words(&["mycli", "--token", "ABCSECRET123", "run"]), ["mycli", "--token", "[REDACTED]", "run"]);
        assert_eq!(words(&["mysql", "--password", "pw", "db"]), ["mysql", "--password", "[REDACTED]", "db"]);
        assert_eq!(
            words(&["curl", "-H", "Authorization:", "Bearer", "abcSECRETtoken", "https://x"]),
            ["curl", "-H", "Authorization:", "Bearer", "[REDACTED]", "https://x"]
        );
        assert_eq!(words(&["cargo", "test", "--release"]), ["cargo", "test", "--release"]);
    }
}
