//! `warden hook claude-code` and `warden hook gemini`: an agent's pre-tool hook, decided by the
//! policy exactly as `warden explain` decides (docs/hooks.md shows how to install each).
//!
//! Reads one hook input (JSON) from stdin, maps the tool call onto warden's requests (a shell
//! tool's command string, or a tool with its path), decides it, and answers in the agent's
//! protocol: allow and ask exit 0 with the protocol's JSON; deny exits 2 (the block code of
//! both protocols) with the reason on stderr and the protocol's JSON deny on stdout.
//!
//! Fails closed: input that cannot be read, is larger than [`MAX_INPUT`], is not the
//! protocol's JSON, or a policy that does not load, is a deny whose reason is the error. A
//! call denied because the policy does not load is recorded too (when the log opens), as a
//! deny of each of its requests with that reason.
//! Nothing is run: the agent runs the tool itself, unconfined, once warden allows it.

mod call;
mod claude;
mod gemini;
mod globs;

use crate::load::{PolicyArgs, context, environment, layers};
use crate::output::CliError;
use call::{Call, InputError, Request};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use warden_engine::{AuditLog, Engine, Explanation, Query, RefuseAll, Session, SessionConfig, Unloaded, record_unloaded};
use warden_policy::ast::Verdict;
use warden_policy::{Context, LayerSource, Part, Subject};

/// The largest hook input read, in bytes; a larger one is denied.
pub const MAX_INPUT: u64 = 4 * 1024 * 1024;

/// Arguments of `warden hook`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent whose hook protocol to speak.
    #[arg(value_enum)]
    protocol: Protocol,
    /// A policy file; repeat to stack layers, top first. Without it, warden discovers the
    /// layers from the hook's working directory over the embedded default.
    #[arg(long = "policy", value_name = "FILE")]
    policies: Vec<PathBuf>,
    /// The workspace (`${workspace}`), whose project layers apply wherever the call runs;
    /// default: the repository root of the agent's project folder (`$CLAUDE_PROJECT_DIR`, or
    /// `$GEMINI_PROJECT_DIR` for Gemini), else of the hook's working directory (its `cwd`).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// The agent identity to decide for.
    #[arg(long)]
    agent: Option<String>,
    /// The audit log every decision is recorded in (default: /var/log/warden/audit.jsonl as
    /// root, else $XDG_STATE_HOME/warden/audit.jsonl). A decision that cannot be recorded is a deny.
    #[arg(long, value_name = "FILE")]
    audit_log: Option<PathBuf>,
}

/// The hook protocols warden speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Protocol {
    /// Claude Code's `PreToolUse` hook.
    ClaudeCode,
    /// Gemini CLI's `BeforeTool` hook.
    Gemini,
}

impl Protocol {
    /// The hook's name in the audit records (`decided_by`).
    fn name(self) -> &'static str {
        match self {
            Protocol::ClaudeCode => "claude-code",
            Protocol::Gemini => "gemini",
        }
    }
}

/// What warden answers for one hook call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, naming the deciding rule (file:line) and the part that decided.
    pub reason: String,
}

/// What the hook prints and how it exits.
#[derive(Debug, Clone)]
pub struct Response {
    stdout: Value,
    stderr: Option<String>,
    code: u8,
}

impl Response {
    /// `stdout` for `outcome`; a deny exits 2 with its reason on stderr.
    fn new(outcome: &Outcome, stdout: Value) -> Self {
        match outcome.verdict {
            Verdict::Deny => Response { stdout, stderr: Some(outcome.reason.clone()), code: 2 },
            Verdict::Allow | Verdict::Ask => Response { stdout, stderr: None, code: 0 },
        }
    }

    /// Prints the response. A response that cannot be written exits 2 (a block).
    fn emit(&self) -> ExitCode {
        let mut out = std::io::stdout().lock();
        let written = writeln!(out, "{}", self.stdout).and_then(|()| out.flush());
        if let Some(reason) = &self.stderr {
            eprintln!("{reason}");
        }
        match written {
            Ok(()) => ExitCode::from(self.code),
            Err(e) => {
                eprintln!("warden: cannot write the hook's answer: {e}");
                ExitCode::from(2)
            }
        }
    }
}

/// Why warden could not decide a hook call (each is a deny).
#[derive(Debug, thiserror::Error)]
enum HookError {
    #[error("cannot read the hook input: {0}")]
    Read(std::io::Error),
    #[error("the hook input is larger than {MAX_INPUT} bytes")]
    TooLarge,
    #[error("the hook input is empty")]
    Empty,
    #[error("the hook input is not JSON: {0}")]
    Json(serde_json::Error),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("the policy does not load: {0}")]
    Load(CliError),
    #[error("the policy does not load: {count} error(s), the first: {first}")]
    Policy { count: usize, first: String },
    #[error("the decision cannot be recorded in the audit log: {0}")]
    Audit(String),
    #[error("warden failed while deciding (a bug): {0}")]
    Panic(String),
}

/// Answers one hook call read from stdin.
///
/// # Errors
/// None: every failure is answered as a deny in the protocol's format.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let decided = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let value = read_input(std::io::stdin().lock())?;
        let call = match args.protocol {
            Protocol::ClaudeCode => claude::parse(&value)?,
            Protocol::Gemini => gemini::parse(&value)?,
        };
        decide(args, &call)
    }));
    let outcome = match decided {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(e)) => failed(&e),
        Err(panic) => failed(&HookError::Panic(panic_text(panic.as_ref()))),
    };
    let response = match args.protocol {
        Protocol::ClaudeCode => claude::respond(&outcome),
        Protocol::Gemini => gemini::respond(&outcome),
    };
    Ok(response.emit())
}

/// The deny for an error.
fn failed(e: &HookError) -> Outcome {
    Outcome { verdict: Verdict::Deny, reason: format!("warden could not decide, so it denies: {e}") }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| String::from("unknown panic"))
}

/// Reads at most [`MAX_INPUT`] bytes and parses them as JSON.
fn read_input(input: impl Read) -> Result<Value, HookError> {
    let mut buf = Vec::new();
    input.take(MAX_INPUT + 1).read_to_end(&mut buf).map_err(HookError::Read)?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(HookError::TooLarge);
    }
    if buf.iter().all(u8::is_ascii_whitespace) {
        return Err(HookError::Empty);
    }
    serde_json::from_slice(&buf).map_err(HookError::Json)
}

/// Decides one call: the one place a hook's verdict comes from (an audit record of the call
/// and its outcome belongs here). Every request of the call is explained as `warden explain`
/// would, in the call's working directory; the most severe verdict decides.
fn decide(args: &Args, call: &Call) -> Result<Outcome, HookError> {
    let mut session = session(args, call)?;
    let via = args.protocol.name();
    // A file tool's path through a symbolic link (`lk/hooks/pre-commit`, `lk -> .git`) is
    // also decided as where it leads: the agent's tool follows the link.
    let context = session.engine().context();
    let bases = [Path::new(&context.workspace), Path::new(&context.home)];
    let linked: Vec<Request> = call
        .requests
        .iter()
        .filter_map(|r| match r {
            Request::Tool { name, path: Some(path) } => {
                through_links(&call.cwd, path, &bases).map(|real| Request::Tool { name: name.clone(), path: Some(real) })
            }
            _ => None,
        })
        .collect();
    let mut decided: Option<(Explanation, &Request)> = None;
    for request in call.requests.iter().chain(&linked) {
        let query = match request {
            Request::Command(text) => Query::Command(text),
            Request::Tool { name, path } => Query::Tool { name, path: path.as_deref() },
        };
        let (x, _) = session.decide(query, Some(via)).map_err(|e| HookError::Audit(e.to_string()))?;
        if decided.as_ref().is_none_or(|(d, _)| x.decision.verdict > d.decision.verdict) {
            decided = Some((x, request));
        }
    }
    let (x, request) = decided.ok_or_else(|| HookError::Panic(String::from("a call without requests")))?;
    let outcome = Outcome { verdict: x.decision.verdict, reason: reason(&x, request) };
    // The process ends next: the kernel frees the compiled policy faster than its destructors
    // (every record is already synced).
    std::mem::forget(session);
    Ok(outcome)
}

/// Where `path` (relative to `cwd`) leads when a symbolic link is on the way or is its last
/// name, spelled from `bases` (the workspace, the home) as the policy names them. `None` when
/// that is the path itself (read by name: `..` taken lexically, as the policy takes it).
fn through_links(cwd: &Path, path: &str, bases: &[&Path]) -> Option<String> {
    warden_engine::leads::elsewhere(&warden_engine::leads::lexical(&cwd.join(path)), bases)
}

/// The session for the call: the layers discovered from (or given for) its working directory,
/// the workspace its repository root unless `--workspace` says otherwise, the agent's own
/// session id, and the audit log.
fn session(args: &Args, call: &Call) -> Result<Session, HookError> {
    let mut env = environment().map_err(HookError::Load)?;
    env.cwd.clone_from(&call.cwd);
    let options = PolicyArgs {
        policies: args.policies.clone(),
        workspace: args.workspace.clone().or_else(|| project_dir(args.protocol)),
        cwd: Some(call.cwd.clone()),
    };
    let context = context(&options, &env).map_err(HookError::Load)?;
    let config = SessionConfig {
        id: call.session.clone().unwrap_or_default(),
        agent: args.agent.clone(),
        parents: Vec::new(),
        audit: Some(args.audit_log.clone().unwrap_or_else(|| env.default_audit_log())),
    };
    let layers = match layers(&options, &env) {
        Ok(layers) => layers,
        Err(e) => return Err(unloaded(args, call, &config, &[], &context, HookError::Load(e))),
    };
    // Nothing confines what a hook allows: a command's files are also judged where they lead.
    let engine = match Engine::load(&layers, context.clone(), &env.cache_home) {
        Ok(engine) => engine.following_links(),
        Err(d) => {
            let e = HookError::Policy { count: d.0.len(), first: d.0.first().map(|d| d.short()).unwrap_or_default() };
            return Err(unloaded(args, call, &config, &layers, &context, e));
        }
    };
    // A hook never runs anything and never asks: the agent asks its user on `ask`.
    Session::new(engine, &layers, env, config, Box::new(RefuseAll::default())).map_err(|e| HookError::Audit(e.to_string()))
}

/// `e` (the policy did not load), after recording the call's requests as denied for it, with
/// the reason the hook answers, when the audit log opens. A log that does not open changes
/// nothing: the call is denied all the same.
fn unloaded(args: &Args, call: &Call, config: &SessionConfig, layers: &[LayerSource], context: &Context, e: HookError) -> HookError {
    let via = args.protocol.name();
    let requests: Vec<Unloaded<'_>> = call
        .requests
        .iter()
        .map(|r| {
            let query = match r {
                Request::Command(text) => Query::Command(text),
                Request::Tool { name, path } => Query::Tool { name, path: path.as_deref() },
            };
            Unloaded { query, job: None, via: Some(via) }
        })
        .collect();
    let why = failed(&e).reason;
    let _ = AuditLog::open(config.audit.as_deref()).and_then(|log| record_unloaded(log, config, layers, context, &requests, &why));
    e
}

/// The repository root (else the folder itself) of the project the agent was started in, as
/// the agent tells its hooks in its environment; `None` when it does not (an older agent), and
/// the call's working directory stands in.
///
/// The model moves the call's `cwd` (`cd sub` in Claude Code's shell, `dir_path` in Gemini's);
/// the agent sets this variable, so a `cwd` in a nested repository or a subfolder cannot drop
/// the project's `.warden/` layer or move `${workspace}`.
fn project_dir(protocol: Protocol) -> Option<PathBuf> {
    let names: &[&str] = match protocol {
        Protocol::ClaudeCode => &["CLAUDE_PROJECT_DIR"],
        Protocol::Gemini => &["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
    };
    let dir = names.iter().filter_map(std::env::var_os).map(PathBuf::from).find(|p| p.is_absolute())?;
    let dir = std::fs::canonicalize(&dir).ok()?;
    Some(warden_engine::repository_root(&dir).unwrap_or(dir))
}

/// `warden <verdict>s <tool>: <reason> (<file:line>, ...; decided by <part>)`.
fn reason(x: &Explanation, request: &Request) -> String {
    let d = &x.decision;
    let verb = match d.verdict {
        Verdict::Allow => "allows",
        Verdict::Ask => "asks about",
        Verdict::Deny => "denies",
    };
    let what = match request {
        Request::Command(text) => format!("`{}`", clip(text)),
        Request::Tool { name, path: Some(p) } => format!("{name} `{}`", clip(p)),
        Request::Tool { name, path: None } => name.clone(),
    };
    // The part that decided: among those with the combined verdict, one an explicit rule
    // decided (rather than the default) if there is one.
    let with_verdict = || d.parts().iter().filter(|p| p.verdict == d.verdict);
    let part = with_verdict().find(|p| !p.rules().is_empty()).or_else(|| with_verdict().next());
    let (why, rules) = part.map_or((d.reason(), d.rules()), |p| (p.reason(), p.rules()));
    let mut notes = Vec::new();
    let mut places: Vec<String> = rules.iter().map(|r| format!("{}:{}", r.file, r.line)).collect();
    places.dedup();
    if places.len() > 3 {
        places.truncate(3);
        places.push(String::from("..."));
    }
    if !places.is_empty() {
        notes.push(format!("rule {}", places.join(", ")));
    }
    if d.parts().len() > 1
        && let Some(part) = part.and_then(|p| part_text(p, request))
    {
        notes.push(format!("decided by {part}"));
    }
    let notes = if notes.is_empty() { String::new() } else { format!(" [{}]", notes.join("; ")) };
    format!("warden {verb} {what}: {}{notes}", clip(why))
}

/// The part that decided, quoted from the command string where it has a place there; `None`
/// when it is the request itself (the whole command, the tool).
fn part_text(part: &Part, request: &Request) -> Option<String> {
    if let (Request::Command(text), Some(span)) = (request, &part.span)
        && let Some(quoted) = text.get(span.clone())
    {
        return (quoted.trim() != text.trim()).then(|| format!("`{}`", clip(quoted)));
    }
    match &part.subject {
        Subject::Command { argv } => Some(format!("`{}`", clip(&argv.join(" ")))),
        Subject::Pipe { from, into } => Some(format!("`{from}` piped into `{into}`")),
        Subject::Path { access, path } => Some(format!("the {access} of `{path}`")),
        Subject::Tool { .. } => None,
        Subject::Opaque { text, .. } => Some(format!("`{}`", clip(text))),
        Subject::Request { problem } => Some(problem.clone()),
    }
}

/// At most 200 characters of `s`, on one line.
/// `s` on one line, shown as written (controls, bidirectional and invisible characters
/// escaped: the agent shows the reason of an `ask` to its user), cut at 200 characters with
/// the count of bytes left out.
fn clip(s: &str) -> String {
    let one_line = warden_feedback::shown::escaped(s);
    match one_line.char_indices().nth(200) {
        Some((i, _)) => format!("{}... ({} more bytes)", one_line.get(..i).unwrap_or_default(), one_line.len() - i),
        None => one_line.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_shows_the_command_as_written_on_one_line() {
        assert_eq!(clip("ls\nrm -rf ~ \u{202e}txt.x"), "ls\\nrm -rf ~ \\u{202e}txt.x");
        let long = "a".repeat(250);
        assert_eq!(clip(&long), format!("{}... (50 more bytes)", "a".repeat(200)));
    }

    #[test]
    fn input_is_capped_and_must_be_json() {
        assert!(matches!(read_input(&b"{}"[..]), Ok(Value::Object(_))));
        assert!(matches!(read_input(&b" \n"[..]), Err(HookError::Empty)));
        assert!(matches!(read_input(&b"{"[..]), Err(HookError::Json(_))));
        let huge = vec![b' '; usize::try_from(MAX_INPUT).unwrap() + 1];
        assert!(matches!(read_input(&huge[..]), Err(HookError::TooLarge)));
    }

    #[test]
    fn a_failure_is_a_deny_naming_the_error() {
        let o = failed(&HookError::Empty);
        assert_eq!(o.verdict, Verdict::Deny);
        assert_eq!(o.reason, "warden could not decide, so it denies: the hook input is empty");
        let r = claude::respond(&o);
        assert_eq!(r.code, 2);
        assert_eq!(r.stdout["hookSpecificOutput"]["permissionDecision"], "deny");
        let r = gemini::respond(&o);
        assert_eq!((r.code, r.stderr.as_deref()), (2, Some(o.reason.as_str())));
        assert_eq!(r.stdout["decision"], "deny");
    }

}
