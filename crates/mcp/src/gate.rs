//! The one place a call is decided, approved, audited and run: through the engine's
//! [`Session`] (the decision record is on disk before anything runs; the approval and the
//! outcome follow). `ask` is settled here by elicitation when the client can be asked.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use cap_std::fs::Dir;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use warden_engine::{Answer, Cancel, ClientRec, Engine, Environment, Explanation, Gate, Job, Outcome, Query, RunOptions, Session, SessionError};

use crate::server::Stop;
use crate::tools::DecisionView;

/// What every connection shares: the policy, the session, the workspace.
pub struct Shared {
    /// The compiled policy, for what only explains (listing, `explain`, search filtering);
    /// swapped whole on a reload, together with the session's.
    pub engine: RwLock<Arc<Engine>>,
    /// Decides, audits and runs every call.
    pub session: Arc<Mutex<Session>>,
    /// The process environment, read once.
    pub env: Environment,
    /// The agent identity calls are decided for.
    pub agent: Option<String>,
    /// The agents above it (listing and `explain` are narrowed by them, like every call).
    pub parents: Vec<String>,
    /// The workspace root.
    pub workspace: PathBuf,
    /// The workspace, opened as a capability: file tools cannot leave it.
    pub root: Dir,
    /// Where the audit log goes.
    pub audit_log: Option<PathBuf>,
    /// The policy files given (empty: the layers were discovered), for reloads.
    pub policies: Vec<PathBuf>,
    /// The connected clients, told about reloads.
    pub peers: Mutex<Vec<Peer<RoleServer>>>,
    /// The live HTTP sessions: their running calls, when each was last used, what ends
    /// their calls.
    pub sessions: Arc<crate::sessions::Sessions>,
    /// Set when served over HTTP without a token: any process of this user can connect then
    /// (a confined command with a network grant too), so no client's answer settles `ask`.
    pub anyone_can_answer: std::sync::atomic::AtomicBool,
    /// Paths no command may see besides what the session hides (the HTTP token file).
    pub hidden: Mutex<Vec<PathBuf>>,
}

impl Shared {
    /// The current policy.
    pub fn engine(&self) -> Arc<Engine> {
        match self.engine.read() {
            Ok(e) => Arc::clone(&e),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// What the policy decides, without asking or recording anything.
    pub fn explain(&self, query: Query<'_>) -> Explanation {
        self.engine().explain_under(self.agent.as_deref(), &self.parents, query)
    }
}

/// Runs `f` on the session, on the blocking pool (it writes the audit log, and runs commands).
async fn with_session<T: Send + 'static>(shared: &Arc<Shared>, f: impl FnOnce(&mut Session) -> T + Send + 'static) -> Result<T, String> {
    let session = Arc::clone(&shared.session);
    tokio::task::spawn_blocking(move || {
        let mut s = match session.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut s)
    })
    .await
    .map_err(|e| format!("the call failed inside warden: {e}"))
}

/// A decided call that may proceed or not; `why` says why not.
pub struct Decided {
    /// The session's gate (recorded decision, and approval if one was asked).
    pub gate: Gate,
}

impl Decided {
    /// The decision and what the analyser found.
    pub fn explanation(&self) -> &Explanation {
        &self.gate.explanation
    }

    /// Why it may not proceed.
    pub fn refused(&self) -> Option<&str> {
        self.gate.refused.as_deref()
    }
}

/// Decides (and records) a call; settles `ask` by elicitation when the client can be asked.
///
/// # Errors
/// The decision or the answer could not be recorded: nothing may proceed.
pub async fn decide(
    shared: &Arc<Shared>,
    peer: &Peer<RoleServer>,
    begin: impl FnOnce(&mut Session) -> Result<Gate, SessionError> + Send + 'static,
    tool: &str,
    subject: &str,
) -> Result<Decided, String> {
    let mut gate = with_session(shared, begin).await?.map_err(|e| format!("nothing was done: {e}"))?;
    if gate.pending {
        let asked = if shared.anyone_can_answer.load(std::sync::atomic::Ordering::Relaxed) {
            Err(format!(
                "needs approval ({}); served over HTTP without a token, any process of this user could answer, so it was \
                 refused (serve with --token-file to be asked)",
                gate.explanation.decision.reason()
            ))
        } else {
            ask(peer, tool, subject, &gate.explanation).await
        };
        let answer = match asked {
            Ok(()) => Answer::Once { by: "mcp-client".into() },
            Err(why) => Answer::Refused { by: "mcp-client".into(), why },
        };
        gate = with_session(shared, move |s| s.answer(&mut gate, answer).map(|()| gate)).await?.map_err(|e| format!("nothing was done: {e}"))?;
    }
    Ok(Decided { gate })
}

async fn ask(peer: &Peer<RoleServer>, tool: &str, subject: &str, x: &Explanation) -> Result<(), String> {
    let reason = x.decision.reason();
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
    let message = crate::prompt::message(tool, subject, reason, &by);
    let answer = peer
        .create_elicitation(ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema })
        .await
        .map_err(|e| format!("needs approval ({reason}); asking the client failed: {e}"))?;
    let approved = answer.action == ElicitationAction::Accept
        && answer.content.as_ref().and_then(|c| c.get("answer")).and_then(|a| a.as_str()) == Some("approve once");
    if approved { Ok(()) } else { Err(format!("needs approval ({reason}); the user did not approve it")) }
}

/// A job with owned data, to cross into the blocking pool.
pub enum OwnedJob {
    /// `sh -c` string.
    Shell(String),
    /// An argv.
    Argv(Vec<String>),
}

/// Decides, settles, records and runs a command; every failure is an outcome that did not run.
/// When `stop` resolves, the command is killed (or never starts) and recorded as cancelled.
/// `from` is the network client that sent it, named on its records.
pub async fn exec(
    shared: &Arc<Shared>,
    peer: &Peer<RoleServer>,
    from: Option<ClientRec>,
    subject: String,
    job: OwnedJob,
    timeout: Option<Duration>,
    stop: Stop,
) -> Outcome {
    let cancel = match Cancel::new() {
        Ok(c) => c,
        Err(e) => return Outcome::refused(&shared.explain(Query::Command(&subject)), format!("nothing ran: {e}")),
    };
    // Fires the handle when the call is stopped, wherever it is by then; ended with the call.
    let fire = cancel.clone();
    let _watch = Aborting(tokio::spawn(async move {
        stop.stopped().await;
        fire.cancel();
    }));
    let (query_text, job2) = (subject.clone(), clone_job(&job));
    let begin = move |s: &mut Session| s.begin_exec_from(from, Query::Command(&query_text), borrow(&job2));
    let decided = match decide(shared, peer, begin, "exec", &subject).await {
        Ok(d) => d,
        Err(why) => return Outcome::refused(&shared.explain(Query::Command(&subject)), why),
    };
    let fallback = decided.gate.explanation.clone();
    let protect = shared.hidden.lock().map(|h| h.clone()).unwrap_or_default();
    let opts = RunOptions { timeout, cancel: Some(cancel), protect, ..RunOptions::default() };
    // The session is held only to clear and to complete: other calls go on while this runs.
    let cleared = match with_session(shared, move |s| s.clear(decided.gate, &opts)).await {
        Ok(Ok(Ok(cleared))) => cleared,
        Ok(Ok(Err(refused))) => return refused,
        Ok(Err(e)) => return Outcome::refused(&fallback, format!("nothing ran: {e}")),
        Err(why) => return Outcome::refused(&fallback, why),
    };
    let engine = shared.engine();
    let run_shared = Arc::clone(shared);
    let ran = tokio::task::spawn_blocking(move || {
        let result = cleared.run(&engine, &run_shared.env, borrow(&job));
        (cleared, result)
    })
    .await;
    let Ok((cleared, result)) = ran else {
        return Outcome::refused(&fallback, "nothing ran: the run failed inside warden");
    };
    match with_session(shared, move |s| s.complete(cleared, result)).await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(e)) => Outcome::refused(&fallback, format!("nothing ran: {e}")),
        Err(why) => Outcome::refused(&fallback, why),
    }
}

/// A task aborted when this is dropped.
struct Aborting(tokio::task::JoinHandle<()>);

impl Drop for Aborting {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Records what a file tool did (`error`: why it failed).
pub async fn finish_tool(shared: &Arc<Shared>, decided: Decided, error: Option<String>) -> Result<(), String> {
    with_session(shared, move |s| {
        let mut o = Outcome::refused(&decided.gate.explanation, error.clone().unwrap_or_default());
        o.ran = error.is_none();
        o.refused = error;
        s.finish(&decided.gate, &o).map(|_| ())
    })
    .await?
    .map_err(|e| format!("the result could not be recorded: {e}"))
}

fn clone_job(job: &OwnedJob) -> OwnedJob {
    match job {
        OwnedJob::Shell(s) => OwnedJob::Shell(s.clone()),
        OwnedJob::Argv(a) => OwnedJob::Argv(a.clone()),
    }
}

fn borrow(job: &OwnedJob) -> Job<'_> {
    match job {
        OwnedJob::Shell(s) => Job::Shell(s),
        OwnedJob::Argv(a) => Job::Argv(a),
    }
}
