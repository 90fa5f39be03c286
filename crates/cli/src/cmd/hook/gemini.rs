//! Gemini CLI's `BeforeTool` hook protocol (see docs/hooks.md for the sources).
//!
//! Input on stdin: `session_id`, `transcript_path`, `cwd`, `hook_event_name` ("BeforeTool"),
//! `timestamp`, `tool_name`, `tool_input`, and `mcp_context` for MCP tools. Output: allow and
//! ask print `{"decision": ..., "reason": ...}` (ask also a `systemMessage` for the prompt) and
//! exit 0. A deny prints `{"decision": "deny", ...}` but exits 2 with the reason on stderr:
//! Gemini CLI turns exit 2 with a non-empty stderr into a deny whatever stdout holds, while
//! unparseable stdout at exit 0 would be taken as an allow.
//!
//! Parameter names changed between Gemini CLI releases (`absolute_path` -> `file_path`,
//! `path` -> `dir_path`, `search_file_content` -> `grep_search`, `paths` -> `include`): both
//! spellings are read.

use super::call::{Call, Envelope, InputError, Request, envelope};
use super::{Outcome, Response};
use crate::load::absolute;
use serde_json::{Value, json};
use std::path::Path;
use warden_policy::ast::Verdict;

/// The event this protocol handles.
pub const EVENT: &str = "BeforeTool";

const FILE: &[&str] = &["file_path", "absolute_path", "path"];
const DIR: &[&str] = &["dir_path", "path", "directory"];

/// Maps one hook input onto warden's requests.
///
/// # Errors
/// A missing or mistyped field, another event than `BeforeTool`.
pub fn parse(value: &Value) -> Result<Call, InputError> {
    let env = envelope(value, "gemini", EVENT)?;
    let input = &env.input;
    if env.tool == "run_shell_command" {
        // The command runs in `dir_path` (relative to the working directory) when given.
        let dir = input.first_string(&["dir_path", "directory"])?;
        let cwd = absolute(Path::new(env.cwd), Path::new(dir.unwrap_or(".")));
        return Ok(env.call_in(cwd, vec![Request::Command(input.command("command")?)]));
    }
    Ok(env.call(requests(&env)?))
}

fn requests(env: &Envelope<'_>) -> Result<Vec<Request>, InputError> {
    let input = &env.input;
    let dir = || -> Result<Option<String>, InputError> {
        Ok(Some(input.first_string(DIR)?.unwrap_or(".").to_string()))
    };
    let spellings = |name: &str, keys: &[&str]| -> Result<Vec<Request>, InputError> {
        // A release reads one spelling, another release the other: every one given is judged.
        let mut out = vec![Request::tool(name, Some(input.path(keys)?))];
        for key in keys {
            if let Some(p) = input.first_string(&[key])?.filter(|p| !p.is_empty()) {
                let r = Request::tool(name, Some(p.to_string()));
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        Ok(out)
    };
    let request = match env.tool {
        "read_file" => return spellings("read_file", FILE),
        "write_file" => return spellings("write_file", FILE),
        "replace" => return spellings("edit_file", FILE),
        "list_directory" => return spellings("list_dir", DIR).or_else(|_| Ok(vec![Request::tool("list_dir", dir()?)])),
        "glob" | "grep_search" | "search_file_content" => Request::tool("search", dir()?),
        "read_many_files" => {
            // Each entry is a glob to Gemini (dot files, any case): the entry itself and every
            // file it reaches are reads; the most severe verdict decides.
            let mut entries = input.strings("include")?;
            entries.extend(input.strings("paths")?);
            if entries.is_empty() {
                return Err(InputError::Missing("tool_input.include".into()));
            }
            let cwd = Path::new(env.cwd);
            let mut visits = 0;
            let mut requests = Vec::new();
            for entry in entries {
                requests.push(Request::tool("read_file", Some(entry.to_string())));
                let reached = super::globs::reached(cwd, entry, &mut visits).map_err(|_| InputError::Invalid {
                    field: "tool_input.include".into(),
                    problem: "reaches too many files to judge each",
                })?;
                for path in reached {
                    let request = Request::tool("read_file", Some(path.display().to_string()));
                    if !requests.contains(&request) {
                        requests.push(request);
                    }
                }
            }
            return Ok(requests);
        }
        // web_fetch, google_web_search, save_memory, write_todos, mcp__server__tool, ...
        other => Request::tool(other, None),
    };
    Ok(vec![request])
}

/// The protocol's answer to an outcome.
pub fn respond(outcome: &Outcome) -> Response {
    let stdout = match outcome.verdict {
        Verdict::Ask => json!({
            "decision": "ask",
            "reason": outcome.reason,
            "systemMessage": outcome.reason,
        }),
        v => json!({ "decision": v.as_str(), "reason": outcome.reason }),
    };
    Response::new(outcome, stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, input: Value) -> Result<Call, InputError> {
        parse(&json!({
            "session_id": "s", "transcript_path": "/t.json", "cwd": "/w", "hook_event_name": "BeforeTool",
            "timestamp": "2026-01-01T00:00:00Z", "tool_name": tool, "tool_input": input
        }))
    }

    fn requests(tool: &str, input: Value) -> Vec<Request> {
        call(tool, input).unwrap().requests
    }

    fn tool(name: &str, path: &str) -> Vec<Request> {
        vec![Request::tool(name, Some(path.into()))]
    }

    #[test]
    fn each_tool_maps_onto_warden_s_under_either_parameter_spelling() {
        assert_eq!(requests("run_shell_command", json!({"command": "ls"})), [Request::Command("ls".into())]);
        assert_eq!(requests("read_file", json!({"file_path": "a"})), tool("read_file", "a"));
        assert_eq!(requests("read_file", json!({"absolute_path": "/w/a"})), tool("read_file", "/w/a"));
        assert_eq!(requests("write_file", json!({"file_path": "a", "content": ""})), tool("write_file", "a"));
        assert_eq!(requests("replace", json!({"file_path": "a", "old_string": "x"})), tool("edit_file", "a"));
        assert_eq!(requests("list_directory", json!({"dir_path": "src"})), tool("list_dir", "src"));
        assert_eq!(requests("list_directory", json!({"path": "/w/src"})), tool("list_dir", "/w/src"));
        assert_eq!(requests("glob", json!({"pattern": "*.rs"})), tool("search", "."));
        assert_eq!(requests("grep_search", json!({"pattern": "x", "dir_path": "src"})), tool("search", "src"));
        assert_eq!(requests("search_file_content", json!({"pattern": "x", "path": "/w"})), tool("search", "/w"));
        assert_eq!(
            requests("read_many_files", json!({"include": ["a", "b/**"]})),
            [Request::tool("read_file", Some("a".into())), Request::tool("read_file", Some("b/**".into()))]
        );
        assert_eq!(requests("read_many_files", json!({"paths": ["a"]})), tool("read_file", "a"));
        assert_eq!(requests("web_fetch", json!({"prompt": "p"})), [Request::tool("web_fetch", None)]);
    }

    #[test]
    fn every_spelling_given_is_judged() {
        assert_eq!(
            requests("read_file", json!({"file_path": "/w/src/main.rs", "absolute_path": "/w/.env"})),
            [Request::tool("read_file", Some("/w/src/main.rs".into())), Request::tool("read_file", Some("/w/.env".into()))]
        );
        assert_eq!(
            requests("list_directory", json!({"dir_path": "/w", "path": "/h/.ssh"})),
            [Request::tool("list_dir", Some("/w".into())), Request::tool("list_dir", Some("/h/.ssh".into()))]
        );
        assert_eq!(requests("list_directory", json!({})), tool("list_dir", "."));
    }

    #[test]
    fn a_shell_command_runs_in_its_dir_path() {
        let c = call("run_shell_command", json!({"command": "ls", "dir_path": "sub/x"})).unwrap();
        assert_eq!(c.cwd, Path::new("/w/sub/x"));
        let c = call("run_shell_command", json!({"command": "ls", "dir_path": "/elsewhere"})).unwrap();
        assert_eq!(c.cwd, Path::new("/elsewhere"));
    }

    #[test]
    fn a_known_tool_without_its_argument_is_an_error() {
        for (tool, input) in [
            ("run_shell_command", json!({})),
            ("read_file", json!({})),
            ("write_file", json!({"file_path": ""})),
            ("read_many_files", json!({"include": [1]})),
            ("read_many_files", json!({"include": []})),
            ("read_many_files", json!({})),
        ] {
            assert!(call(tool, input.clone()).is_err(), "{tool} {input}");
        }
    }
}
