//! One function per tool: parse the arguments, decide, do the work, shape the result.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::CallToolResult;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde::de::DeserializeOwned;
use warden_engine::{ClientRec, Outcome, Query};
use warden_policy::ast::Verdict;

use crate::gate::{self, OwnedJob, Shared};
use crate::paths::{ToolPath, real, resolve};
use crate::server::{Stop, Warden, file_result, result};
use crate::tools::{DecisionView, EditFileArgs, ExecArgs, ExplainArgs, ExplainOut, ListDirArgs, ReadFileArgs, SearchArgs, WriteFileArgs};
use crate::{files, search};

/// The longest command string `exec` takes.
const COMMAND_CAP: usize = 64 * 1024;

/// Runs tool `name` (known and visible) with `args`; `from` is the network client that sent
/// it (HTTP), named on its audit records.
pub async fn dispatch(
    w: &Warden,
    name: &str,
    args: serde_json::Value,
    peer: &Peer<RoleServer>,
    stop: Stop,
    from: Option<ClientRec>,
) -> Result<CallToolResult, McpError> {
    let caller = Caller { peer, from };
    Ok(match name {
        "read_file" => {
            let a: ReadFileArgs = parse(name, args)?;
            file_tool(w, &caller, name, &a.path, move |s, p| files::read_file(&s.root, p, a.start_line, a.end_line), |r| {
                let cut = if r.truncated { " (cut at the size cap: read on with start_line)" } else { "" };
                format!("{}: lines {}-{} of {}{cut}\n{}", r.path, r.start_line, r.end_line, r.total_lines, r.content)
            })
            .await
        }
        "list_dir" => {
            let a: ListDirArgs = parse(name, args)?;
            let path = a.path.unwrap_or_else(|| ".".to_string());
            file_tool(w, &caller, name, &path, |s, p| files::list_dir(&s.root, p), |r| {
                let mut text = format!("{}: {} entries{}\n", r.path, r.entries.len(), if r.truncated { " (cut at the cap)" } else { "" });
                for e in &r.entries {
                    match e.kind.as_str() {
                        "dir" => text.push_str(&format!("{}/\n", e.name)),
                        "file" => text.push_str(&format!("{} ({} bytes)\n", e.name, e.size)),
                        kind => text.push_str(&format!("{} ({kind})\n", e.name)),
                    }
                }
                text
            })
            .await
        }
        "search" => {
            let a: SearchArgs = parse(name, args)?;
            let path = a.path.clone().unwrap_or_else(|| ".".to_string());
            file_tool(w, &caller, name, &path, move |s, p| {
                let engine = s.engine();
                let (agent, parents) = (s.agent.as_deref(), &s.parents);
                let readable = |abs: &str| {
                    engine.explain_under(agent, parents, Query::Tool { name: "read_file", path: Some(abs) }).decision.verdict != Verdict::Deny
                };
                search::search(&s.workspace, p, &a.pattern, a.case_insensitive.unwrap_or(false), a.max_results, &readable)
            }, |r| {
                let mut text = format!("{} matching lines in {} files searched", r.matches.len(), r.files_searched);
                if r.files_denied > 0 {
                    text.push_str(&format!(" ({} files the policy does not let you read were left out)", r.files_denied));
                }
                if r.truncated {
                    text.push_str(" (cut at max_results)");
                }
                text.push('\n');
                for m in &r.matches {
                    text.push_str(&format!("{}:{}: {}\n", m.path, m.line, m.text));
                }
                text
            })
            .await
        }
        "write_file" => {
            let a: WriteFileArgs = parse(name, args)?;
            let path = a.path.clone();
            file_tool(w, &caller, name, &path, move |s, p| files::write_file(&s.root, p, &a.content), |r| {
                format!("wrote {} bytes to {} ({})", r.bytes, r.path, if r.created { "created" } else { "replaced" })
            })
            .await
        }
        "edit_file" => {
            let a: EditFileArgs = parse(name, args)?;
            let path = a.path.clone();
            file_tool(w, &caller, name, &path, move |s, p| files::edit_file(&s.root, p, &a.old, &a.new), |r| {
                format!("edited {}: replaced the snippet once; the file is now {} bytes", r.path, r.bytes)
            })
            .await
        }
        "exec" => exec(w, &caller, parse(name, args)?, stop).await?,
        "explain" => explain(&w.shared, parse(name, args)?)?,
        _ => return Err(McpError::invalid_params(format!("unknown tool `{name}`"), None)),
    })
}

/// Who made a call: the MCP peer (asked on `ask`), and the network client it came from.
struct Caller<'a> {
    peer: &'a Peer<RoleServer>,
    from: Option<ClientRec>,
}

fn parse<T: DeserializeOwned>(tool: &str, args: serde_json::Value) -> Result<T, McpError> {
    serde_json::from_value(args).map_err(|e| McpError::invalid_params(format!("invalid arguments for `{tool}`: {e}"), None))
}

/// Resolves the path, decides (and records), runs `work` on the blocking pool when it may
/// proceed, and records what it did.
async fn file_tool<T, W, S>(w: &Warden, caller: &Caller<'_>, tool: &str, path: &str, work: W, summary: S) -> CallToolResult
where
    T: serde::Serialize + Send + 'static,
    W: FnOnce(&Shared, &ToolPath) -> Result<T, String> + Send + 'static,
    S: FnOnce(&T) -> String,
{
    let shared = &w.shared;
    // Decided, and acted on, where the path leads (`paths::real`); opened with no link
    // followed (`beneath.rs`), so a link swapped in meanwhile fails instead.
    let p = match resolve(&shared.workspace, path).and_then(|p| real(&shared.workspace, &p)) {
        Ok(p) => p,
        Err(why) => return file_result::<T>(tool, &shared.explain(Query::Tool { name: tool, path: Some(path) }), Some(why), None, summary),
    };
    let (name, abs, from) = (tool.to_string(), p.abs.clone(), caller.from.clone());
    let decided = match gate::decide(shared, caller.peer, move |s| s.begin_tool_from(from, &name, Some(&abs)), tool, &p.abs).await {
        Ok(d) => d,
        Err(why) => return file_result::<T>(tool, &shared.explain(Query::Tool { name: tool, path: Some(&p.abs) }), Some(why), None, summary),
    };
    if let Some(why) = decided.refused() {
        let why = why.to_string();
        let x = decided.explanation().clone();
        let _ = gate::finish_tool(shared, decided, Some(why.clone())).await;
        return file_result::<T>(tool, &x, Some(why), None, summary);
    }
    let worker = Arc::clone(shared);
    let done = tokio::task::spawn_blocking(move || work(&worker, &p)).await;
    let outcome = done.unwrap_or_else(|e| Err(format!("the tool failed inside warden: {e}")));
    let x = decided.explanation().clone();
    let outcome = match gate::finish_tool(shared, decided, outcome.as_ref().err().cloned()).await {
        Ok(()) => outcome,
        Err(why) => outcome.and(Err(why)),
    };
    file_result(tool, &x, None, Some(outcome), summary)
}

async fn exec(w: &Warden, caller: &Caller<'_>, a: ExecArgs, stop: Stop) -> Result<CallToolResult, McpError> {
    let (mut subject, job) = match (a.command, a.argv) {
        (Some(c), None) => (c.clone(), OwnedJob::Shell(c)),
        (None, Some(v)) if !v.is_empty() => (warden_engine::quote_argv(&v), OwnedJob::Argv(v)),
        _ => return Err(McpError::invalid_params("exec: give `command` (a string) or `argv` (a non-empty list), one of them", None)),
    };
    if subject.len() > COMMAND_CAP {
        return Err(McpError::invalid_params(format!("exec: the command is {} bytes; the cap is {COMMAND_CAP}", subject.len()), None));
    }
    let timeout = match a.timeout_secs {
        Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t.min(1e9))),
        Some(t) => return Err(McpError::invalid_params(format!("exec: timeout_secs must be a positive number, not {t}"), None)),
        None => None,
    };
    let shared = &w.shared;
    // A working folder is part of what is decided: the command runs as `cd DIR && COMMAND`.
    let job = match &a.cwd {
        None => job,
        Some(cwd) => {
            let p = resolve(&shared.workspace, cwd).map_err(|e| McpError::invalid_params(format!("exec: cwd: {e}"), None))?;
            subject = format!("cd {} && {subject}", warden_engine::quote_argv(&[p.abs]));
            OwnedJob::Shell(subject.clone())
        }
    };
    let outcome = gate::exec(shared, caller.peer, caller.from.clone(), subject, job, timeout, stop).await;
    Ok(result(exec_summary(&outcome), &outcome, !outcome.ran || outcome.run.timed_out))
}

/// What a model reads of a run.
fn exec_summary(o: &Outcome) -> String {
    let d = DecisionView::of(&o.decision);
    let by = d.by();
    if let Some(why) = &o.refused {
        return format!("not run: {why} ({by})");
    }
    let tier = d.tier.as_deref().map(|t| format!(", tier {t}")).unwrap_or_default();
    let end = o.end();
    let mut text = format!("{end} in {:.0} ms ({}{tier} {by})\n", o.run.duration_ms, o.decision.verdict.as_str());
    for den in &o.run.denials {
        text.push_str(&format!("the sandbox refused {} {}\n", den.op, den.target));
    }
    for (label, s) in [("stdout", &o.run.stdout), ("stderr", &o.run.stderr)] {
        if !s.text.is_empty() {
            let cut = if s.truncated { format!(" (cut; {} bytes in all)", s.bytes) } else { String::new() };
            text.push_str(&format!("--- {label}{cut} ---\n{}", s.text));
            if !s.text.ends_with('\n') {
                text.push('\n');
            }
        }
    }
    text
}

fn explain(shared: &Shared, a: ExplainArgs) -> Result<CallToolResult, McpError> {
    let x = match (&a.command, &a.tool) {
        (Some(c), None) if a.path.is_none() => shared.explain(Query::Command(c)),
        (None, Some(t)) => shared.explain(Query::Tool { name: t, path: a.path.as_deref() }),
        _ => return Err(McpError::invalid_params("explain: give `command`, or `tool` with an optional `path`", None)),
    };
    let decision = DecisionView::of(&x.decision);
    let parts: Vec<serde_json::Value> = x.decision.parts().iter().filter_map(|p| serde_json::to_value(p).ok()).collect();
    let tier = decision.tier.as_deref().map(|t| format!(" (tier {t})")).unwrap_or_default();
    let mut text = format!("{}{tier} {}: {}\n", x.decision.verdict.as_str(), decision.by(), decision.reason);
    for p in x.decision.parts() {
        text.push_str(&format!("- {}: {}\n", p.verdict.as_str(), p.reason()));
    }
    let out = ExplainOut { decision, parts, agent: x.agent.clone(), ran: false };
    Ok(result(text, &out, false))
}
