//! What the session writes to the audit log, and how it keeps the log out of reach: record
//! fields from decisions, the policy hash, the log's opening checks, the paths no sandbox shows;
//! and the record of a request refused before any policy was in force ([`record_unloaded`]).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use warden_audit::{DecidedBy, DecisionRec, Entry, Input, Kind, Log, OutcomeRec, Receipt, RuleRef};
use warden_policy::{Context, Decision, LayerSource};

use crate::redact::Redactor;
use crate::session::{append, scrub};
use crate::{AuditLog, Job, Query, SessionConfig, SessionError};

/// A request refused because the policy did not load, to record with [`record_unloaded`].
#[derive(Debug, Clone, Copy)]
pub struct Unloaded<'a> {
    /// What was asked: a command string, or a tool with its path.
    pub query: Query<'a>,
    /// The command as `warden run` would have run it: its words are recorded, and an outcome
    /// that did not run follows the decision. `None` for a hook (it runs nothing; only the
    /// decision is recorded, as [`crate::Session::decide`] records it).
    pub job: Option<Job<'a>>,
    /// The hook that asked, recorded as the decider; `None`: the policy (`warden run`).
    pub via: Option<&'a str>,
}

/// Records requests refused because the policy did not load (fail closed), without an
/// [`crate::Engine`]: for each, a `deny` decision whose reason is `why` (which should name the
/// first error's file:line:column), with no rule, and for a command that would have run an
/// outcome with `ran: false` and `refused: why`. The records carry the session's id (a fresh
/// one when `config.id` is empty), agent and parents, the hash of `layers` (the text that did
/// not load), the request as given in `context`, and are redacted like every session record.
/// Nothing is written when `log` is a session without one.
///
/// # Errors
/// A record cannot be written (the caller still refuses, and says why).
pub fn record_unloaded(
    log: AuditLog,
    config: &SessionConfig,
    layers: &[LayerSource],
    context: &Context,
    requests: &[Unloaded<'_>],
    why: &str,
) -> Result<Vec<Receipt>, SessionError> {
    let AuditLog(mut log) = log;
    if log.is_none() {
        return Ok(Vec::new());
    }
    let redactor = Redactor::new(&[]).map_err(SessionError::Audit)?;
    let session = if config.id.is_empty() { session_id() } else { config.id.clone() };
    let hash = policy_hash(layers);
    let mut receipts = Vec::new();
    for request in requests {
        let (command, argv) = match (request.job, request.query) {
            (Some(Job::Shell(text)), _) => (Some(text.to_string()), None),
            (Some(Job::Argv(words)), _) => (None, Some(words.to_vec())),
            (None, Query::Command(text)) => (Some(text.to_string()), None),
            (None, Query::Tool { .. }) => (None, None),
        };
        let (tool, path) = match request.query {
            Query::Command(_) => ("exec", None),
            Query::Tool { name, path } => (name, path.map(str::to_string)),
        };
        let input = Input {
            command,
            argv,
            path,
            cwd: context.cwd.clone(),
            workspace: context.workspace.clone(),
            home: context.home.clone(),
        };
        let mut entry = Entry {
            kind: Kind::Decision,
            session: session.clone(),
            agent: config.agent.clone(),
            parents: config.parents.clone(),
            client: None,
            tool: tool.to_string(),
            input,
            decision: Some(DecisionRec { verdict: "deny".into(), tier: None, reason: why.to_string(), rules: Vec::new() }),
            decided_by: Some(match request.via {
                Some(hook) => DecidedBy { kind: "hook".into(), name: Some(hook.to_string()) },
                None => DecidedBy { kind: "policy".into(), name: None },
            }),
            policy_hash: hash.clone(),
            outcome: None,
            refers_to: None,
            note: None,
        };
        let decided = append(&mut log, &scrub(&redactor, entry.clone()))?;
        let seq = decided.as_ref().map(|r| r.seq);
        receipts.extend(decided);
        if request.job.is_some() {
            entry.kind = Kind::Outcome;
            entry.decision = None;
            entry.decided_by = None;
            entry.refers_to = seq;
            entry.outcome = Some(OutcomeRec {
                ran: false,
                exit_code: None,
                signal: None,
                timed_out: false,
                cancelled: false,
                duration_ms: 0.0,
                denials: Vec::new(),
                refused: Some(why.to_string()),
            });
            receipts.extend(append(&mut log, &scrub(&redactor, entry))?);
        }
    }
    Ok(receipts)
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

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn decision_rec(d: &Decision) -> DecisionRec {
    DecisionRec {
        verdict: d.verdict.as_str().into(),
        tier: d.tier().map(str::to_string),
        reason: d.reason().to_string(),
        rules: d
            .rules()
            .iter()
            .map(|r| RuleRef { file: r.file.to_string(), line: r.line, column: r.column, layer: format!("{:?}", r.layer).to_lowercase() })
            .collect(),
    }
}

/// Opens the log, refusing one with more than one name.
pub(crate) fn open_log(path: &Path) -> Result<Log, SessionError> {
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

/// warden's own cache folder (`CACHE_HOME/warden`: the record of passed examples, the
/// compiled WASI modules warden loads as machine code), and where it leads when it is there.
pub(crate) fn own_cache(cache_home: &Path) -> (PathBuf, Option<PathBuf>) {
    let dir = cache_home.join("warden");
    let real = std::fs::canonicalize(&dir).ok();
    (dir, real)
}

/// [`own_cache`], made first (0700) when missing, for a run: a sandbox can hide only what is
/// there (a mount needs it), and a command must not be able to make it.
pub(crate) fn own_cache_made(cache_home: &Path) -> (PathBuf, Option<PathBuf>) {
    use std::os::unix::fs::DirBuilderExt as _;
    let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(cache_home.join("warden"));
    own_cache(cache_home)
}

/// What a sandbox must never show: the log and its head checkpoint, and their folder too
/// unless the folder holds the workspace (a log kept inside a project hides only its files).
pub(crate) fn protected(log: &Path, ctx: &warden_policy::Context) -> Vec<PathBuf> {
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
pub(crate) fn session_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(now.as_nanos().to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    if let Ok(bytes) = std::fs::read("/proc/sys/kernel/random/uuid") {
        h.update(bytes);
    }
    hex(&h.finalize()).chars().take(16).collect()
}
