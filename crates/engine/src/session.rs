//! A session: one agent identity's requests, each decided, settled, recorded and run.
//!
//! The order is the guarantee: the decision record is durable on disk before anything runs;
//! an approval is recorded with who gave it before the command starts; the outcome follows.
//! When the audit log cannot be written, nothing runs (fail closed). The log's folder is
//! hidden from every sandbox the session builds, whatever the grants say.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use warden_audit::{DecidedBy, DecisionRec, DenialRec, Entry, Input, Kind, Log, OutcomeRec, Receipt, RuleRef};
use warden_policy::ast::Verdict;
use warden_policy::{Decision, Diagnostics, LayerSource};

use crate::approve::{Answer, Approver, Pending, SessionGrants, asking};
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

/// A tool request that was decided and settled (for tools the caller performs itself).
#[derive(Debug, Clone)]
pub struct Gate {
    /// The decision and what the analyser found.
    pub explanation: Explanation,
    /// Why it may not proceed; `None` when it may.
    pub refused: Option<String>,
    /// The decision record, when audited.
    pub decision_seq: Option<u64>,
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

/// What a session has used of its budgets (the policy's `commands`, `total-time`,
/// `total-output` limits).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Spent {
    /// Commands run.
    pub commands: u64,
    /// Their wall time, milliseconds.
    pub time_ms: f64,
    /// Their captured output, bytes.
    pub output: u64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("config", &self.config).field("policy_hash", &self.policy_hash).finish_non_exhaustive()
    }
}

/// The hex SHA-256 of the layers: kind, file names and texts, in order.
pub fn policy_hash(layers: &[LayerSource]) -> String {
    let mut h = Sha256::new();
    for layer in layers {
        h.update(format!("layer {:?}\n", layer.kind).as_bytes());
        for file in &layer.files {
            h.update(format!("file {} {}\n", file.name, file.text.len()).as_bytes());
            h.update(file.text.as_bytes());
        }
    }
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
        mut config: SessionConfig,
        approver: Box<dyn Approver + Send>,
    ) -> Result<Session, SessionError> {
        if config.id.is_empty() {
            config.id = session_id();
        }
        let log = match &config.audit {
            Some(path) => Some(open_log(path)?),
            None => None,
        };
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

    /// Decides `query`, settles `ask`, records, and runs `job` confined.
    ///
    /// # Errors
    /// The audit log cannot be written (nothing ran, or the outcome could not be recorded), or
    /// the sandbox cannot be built.
    pub fn exec(&mut self, query: Query<'_>, job: Job<'_>, opts: &RunOptions) -> Result<Outcome, SessionError> {
        let explanation = self.explain(query);
        let (command, argv) = match job {
            Job::Shell(text) => (Some(text.to_string()), None),
            Job::Argv(args) => (None, Some(args.to_vec())),
        };
        let subject = match query {
            Query::Command(text) => text.to_string(),
            Query::Tool { path, .. } => path.unwrap_or_default().to_string(),
        };
        let input = Input { command, argv, ..self.input(None) };
        let mut gate = self.settle(explanation, "exec", &subject, None, input.clone())?;
        let limits = gate.explanation.decision.grants.limits;
        if gate.refused.is_none() {
            gate.refused = over_budget(&limits, &self.spent);
        }
        let mut outcome = match &gate.refused {
            Some(why) => Outcome::refused(&gate.explanation, why.clone()),
            None => {
                let mut opts = opts.clone();
                // A command may not run past what is left of the session's time budget.
                if let Some(total) = limits.total_time_ms {
                    let left = std::time::Duration::from_secs_f64((total as f64 - self.spent.time_ms).max(0.0) / 1000.0);
                    opts.timeout = Some(opts.timeout.map_or(left, |t| t.min(left)));
                }
                if let Some(log) = &self.log {
                    opts.protect.extend(protected(log.path(), self.engine.context()));
                }
                match self.engine.run(&gate.explanation, job, &self.env, &opts) {
                    Ok(o) => o,
                    Err(e) => {
                        let mut o = Outcome::refused(&gate.explanation, format!("not run: {e}"));
                        o.refused = Some(format!("the sandbox could not run it: {e}"));
                        self.finish(&gate, "exec", input, &o)?;
                        return Err(e.into());
                    }
                }
            }
        };
        if outcome.ran {
            self.spent.commands += 1;
            self.spent.time_ms += outcome.run.duration_ms;
            self.spent.output += outcome.run.stdout.bytes + outcome.run.stderr.bytes;
        }
        outcome.audit = self.finish(&gate, "exec", input, &outcome)?;
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

    /// Decides and settles a tool call the caller performs itself (file tools); record its
    /// result with [`Session::finish_tool`].
    ///
    /// # Errors
    /// The decision cannot be recorded: the caller must not perform the tool.
    pub fn gate_tool(&mut self, name: &str, path: Option<&str>) -> Result<Gate, SessionError> {
        let explanation = self.explain(Query::Tool { name, path });
        let input = self.input(path);
        self.settle(explanation, name, path.unwrap_or_default(), path, input)
    }

    /// Records what a gated tool call did.
    ///
    /// # Errors
    /// The record cannot be written.
    pub fn finish_tool(&mut self, gate: &Gate, name: &str, path: Option<&str>, outcome: &Outcome) -> Result<Option<Receipt>, SessionError> {
        let input = self.input(path);
        self.finish(gate, name, input, outcome)
    }

    /// Explains `query` for this agent, narrowed by every parent.
    pub fn explain(&self, query: Query<'_>) -> Explanation {
        let mut x = self.engine.explain(self.config.agent.as_deref(), query);
        if !self.config.parents.is_empty() {
            let parents: Vec<(String, warden_policy::Decision)> = self
                .config
                .parents
                .iter()
                .map(|p| {
                    let agent = p.split_once('@').map_or(p.as_str(), |(a, _)| a);
                    let name = if agent.is_empty() { "(top level)".to_string() } else { agent.to_string() };
                    (name, self.engine.explain((!agent.is_empty()).then_some(agent), query).decision)
                })
                .collect();
            x.decision = crate::narrow::combine(x.decision, &parents);
        }
        x
    }

    fn settle(&mut self, explanation: Explanation, tool: &str, subject: &str, path: Option<&str>, input: Input) -> Result<Gate, SessionError> {
        let d = &explanation.decision;
        let mut entry = self.entry(Kind::Decision, tool, input.clone());
        entry.decision = Some(decision_rec(d));
        entry.decided_by = Some(DecidedBy { kind: "policy".into(), name: None });
        let seq = self.record(&entry)?.map(|r| r.seq);
        let refused = match d.verdict {
            Verdict::Allow => None,
            Verdict::Deny => Some(format!("denied: {}", d.reason)),
            Verdict::Ask => {
                let keys = asking(d, tool, path);
                let answer = if self.granted.covers(&keys) {
                    Answer::Once { by: "session-approval".into() }
                } else {
                    let pending = Pending { agent: self.config.agent.as_deref(), tool, subject, decision: d };
                    self.approver.approve(&pending)
                };
                let mut approval = self.entry(Kind::Approval, tool, input);
                approval.refers_to = seq;
                approval.decided_by = Some(DecidedBy { kind: "approver".into(), name: Some(answer.by().to_string()) });
                let verdict = if answer.granted() { "allow" } else { "deny" };
                approval.decision = Some(DecisionRec { verdict: verdict.into(), ..decision_rec(d) });
                approval.note = Some(match &answer {
                    Answer::Once { .. } => "approved once".to_string(),
                    Answer::Session { .. } => "approved for this session".to_string(),
                    Answer::Refused { why, .. } => format!("refused: {why}"),
                });
                self.record(&approval)?;
                match answer {
                    Answer::Once { .. } => None,
                    Answer::Session { .. } => {
                        self.granted.add(keys);
                        None
                    }
                    Answer::Refused { why, .. } => Some(why),
                }
            }
        };
        Ok(Gate { explanation, refused, decision_seq: seq })
    }

    fn finish(&mut self, gate: &Gate, tool: &str, input: Input, o: &Outcome) -> Result<Option<Receipt>, SessionError> {
        let mut entry = self.entry(Kind::Outcome, tool, input);
        entry.refers_to = gate.decision_seq;
        entry.outcome = Some(OutcomeRec {
            ran: o.ran,
            exit_code: o.run.exit_code,
            signal: o.run.signal.clone(),
            timed_out: o.run.timed_out,
            duration_ms: o.run.duration_ms,
            denials: o.run.denials.iter().map(|d| DenialRec { op: d.op.clone(), target: d.target.clone(), source: format!("{:?}", d.source).to_lowercase() }).collect(),
            refused: o.refused.clone(),
        });
        self.record(&entry)
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

    fn entry(&self, kind: Kind, tool: &str, mut input: Input) -> Entry {
        input.command = input.command.map(|c| self.redactor.redact(&c));
        input.argv = input.argv.map(|a| a.iter().map(|w| self.redactor.redact(w)).collect());
        Entry {
            kind,
            session: self.config.id.clone(),
            agent: self.config.agent.clone(),
            parents: self.config.parents.clone(),
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
        match &mut self.log {
            None => Ok(None),
            Some(log) => log.append(entry).map(Some).map_err(|e| SessionError::Audit(e.to_string())),
        }
    }
}

/// Why the session's budget refuses another command, if it does.
fn over_budget(l: &warden_policy::Limits, spent: &Spent) -> Option<String> {
    if let Some(n) = l.commands.filter(|n| spent.commands >= *n) {
        return Some(format!("the session's budget of {n} commands (`limits {{ commands {n} }}`) is spent"));
    }
    if let Some(ms) = l.total_time_ms.filter(|ms| spent.time_ms >= *ms as f64) {
        return Some(format!("the session's time budget of {} s (`total-time`) is spent ({:.0} s used)", ms / 1000, spent.time_ms / 1000.0));
    }
    if let Some(b) = l.total_output.filter(|b| spent.output >= *b) {
        return Some(format!("the session's output budget of {b} bytes (`total-output`) is spent ({} bytes used)", spent.output));
    }
    None
}

fn decision_rec(d: &Decision) -> DecisionRec {
    DecisionRec {
        verdict: d.verdict.as_str().into(),
        tier: d.tier.as_deref().map(str::to_string),
        reason: d.reason.to_string(),
        rules: d
            .rules
            .iter()
            .map(|r| RuleRef { file: r.file.to_string(), line: r.line, column: r.column, layer: format!("{:?}", r.layer).to_lowercase() })
            .collect(),
    }
}

/// Opens the log, refusing one with more than one name.
fn open_log(path: &Path) -> Result<Log, SessionError> {
    let log = Log::open(path).map_err(|e| SessionError::Audit(e.to_string()))?;
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(|e| SessionError::Audit(format!("{}: {e}", path.display())))?;
    if meta.nlink() != 1 {
        return Err(SessionError::Audit(format!(
            "{} has {} hard links; a sandboxed command could write it through another name, so warden refuses to use it",
            path.display(),
            meta.nlink()
        )));
    }
    Ok(log)
}

/// What a sandbox must never show: the log and its head checkpoint, and their folder too
/// unless the folder holds the workspace (a log kept inside a project hides only its files).
fn protected(log: &Path, ctx: &warden_policy::Context) -> Vec<PathBuf> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let file = canon(log);
    let mut head = file.clone().into_os_string();
    head.push(".head");
    let mut out = vec![file.clone(), PathBuf::from(head)];
    if let Some(dir) = file.parent() {
        let holds = |p: &str| Path::new(p).starts_with(dir) || canon(Path::new(p)).starts_with(dir);
        if !holds(&ctx.workspace) && !holds(&ctx.cwd) && dir != Path::new("/") {
            out.push(dir.to_path_buf());
        }
    }
    out
}

/// A fresh session id: time and process id, hashed (unique enough across a fleet's logs).
fn session_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(now.as_nanos().to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    if let Ok(bytes) = std::fs::read("/proc/sys/kernel/random/uuid") {
        h.update(bytes);
    }
    hex(&h.finalize()).chars().take(16).collect()
}
