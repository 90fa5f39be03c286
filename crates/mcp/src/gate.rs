//! The one place a call is decided, approved and run. When the engine's `Session` lands, its
//! decide/approve/audit/run replaces the bodies here and nothing else changes.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use cap_std::fs::Dir;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use warden_engine::{Engine, Environment, Explanation, Job, Outcome, Query, RunOptions};
use warden_policy::ast::Verdict;

use crate::tools::DecisionView;

/// What every connection shares: the policy, the environment, the workspace.
pub struct Shared {
    /// The compiled policy (swapped whole on a reload).
    pub engine: RwLock<Arc<Engine>>,
    /// The process environment, read once.
    pub env: Environment,
    /// The agent identity calls are decided for.
    pub agent: Option<String>,
    /// The workspace root.
    pub workspace: PathBuf,
    /// The workspace, opened as a capability: file tools cannot leave it.
    pub root: Dir,
    /// Where the audit log goes (wired by the engine's session).
    pub audit_log: Option<PathBuf>,
    /// The policy files given (empty: the layers were discovered), for reloads.
    pub policies: Vec<PathBuf>,
    /// The connected clients, told about reloads.
    pub peers: std::sync::Mutex<Vec<Peer<RoleServer>>>,
}

impl Shared {
    /// The current policy.
    pub fn engine(&self) -> Arc<Engine> {
        match self.engine.read() {
            Ok(e) => Arc::clone(&e),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// What the policy decides, without asking anyone.
    pub fn explain(&self, query: Query<'_>) -> Explanation {
        self.engine().explain(self.agent.as_deref(), query)
    }
}

/// The outcome of deciding a call.
pub enum Gate {
    /// It may run.
    Go(Explanation),
    /// It may not, and why.
    Refused(Explanation, String),
}

/// Decides a call; settles `ask` by elicitation when the client can be asked.
pub async fn decide(engine: &Engine, agent: Option<&str>, peer: &Peer<RoleServer>, query: Query<'_>, tool: &str, subject: &str) -> Gate {
    let x = engine.explain(agent, query);
    let reason = x.decision.reason.to_string();
    match x.decision.verdict {
        Verdict::Allow => Gate::Go(x),
        Verdict::Deny => Gate::Refused(x, format!("denied: {reason}")),
        Verdict::Ask => match ask(peer, tool, subject, &x).await {
            Ok(()) => Gate::Go(x),
            Err(why) => Gate::Refused(x, why),
        },
    }
}

async fn ask(peer: &Peer<RoleServer>, tool: &str, subject: &str, x: &Explanation) -> Result<(), String> {
    let reason = &x.decision.reason;
    if !peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
        return Err(format!(
            "needs approval ({reason}); this client cannot be asked (it did not declare the elicitation capability), so it was refused"
        ));
    }
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"answer": {"type": "string", "title": "Run it?", "enum": ["approve once", "deny"]}},
        "required": ["answer"]
    });
    let serde_json::Value::Object(schema) = schema else { return Err("internal error: approval schema".into()) };
    let requested_schema = ElicitationSchema::from_json_schema(schema).map_err(|e| format!("internal error: approval schema: {e}"))?;
    let by = DecisionView::of(&x.decision).by();
    let message = format!("warden: {tool} `{subject}` needs approval: {reason} ({by}). Approve it once?");
    let answer = peer
        .create_elicitation(ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema })
        .await
        .map_err(|e| format!("needs approval ({reason}); asking the client failed: {e}"))?;
    let approved = answer.action == ElicitationAction::Accept
        && answer.content.as_ref().and_then(|c| c.get("answer")).and_then(|a| a.as_str()) == Some("approve once");
    if approved {
        Ok(())
    } else {
        Err(format!("needs approval ({reason}); the user did not approve it"))
    }
}

/// A job with owned data, to cross into the blocking pool.
pub enum OwnedJob {
    /// `sh -c` string.
    Shell(String),
    /// An argv.
    Argv(Vec<String>),
}

/// Runs a decided command in the sandbox (on the blocking pool: a run waits for the command).
pub async fn run(shared: Arc<Shared>, engine: Arc<Engine>, x: Explanation, job: OwnedJob, timeout: Option<Duration>) -> Outcome {
    let fallback = x.clone();
    let task = tokio::task::spawn_blocking(move || {
        let job = match &job {
            OwnedJob::Shell(s) => Job::Shell(s),
            OwnedJob::Argv(a) => Job::Argv(a),
        };
        let opts = RunOptions { timeout, ..RunOptions::default() };
        match engine.run(&x, job, &shared.env, &opts) {
            Ok(outcome) => outcome,
            Err(e) => Outcome::refused(&x, format!("nothing ran: {e}")),
        }
    });
    match task.await {
        Ok(outcome) => outcome,
        Err(e) => Outcome::refused(&fallback, format!("nothing ran: the run failed inside warden: {e}")),
    }
}
