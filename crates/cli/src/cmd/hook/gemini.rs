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

use super::call::{Call, Envelope, Fields, InputError, Request, envelope};
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
        // The command runs in `dir_path` (relative to the working directory) when given; an
        // older release read `directory`. A call naming two different folders is refused: the
        // command cannot be judged in the one a release would not use.
        let dirs = spelled(input, &["dir_path", "directory"])?;
        if dirs.len() > 1 {
            return Err(InputError::Invalid {
                field: "tool_input.dir_path".into(),
                problem: "and `tool_input.directory` name different folders",
            });
        }
        let dir = dirs.first().map_or(".", String::as_str);
        let cwd = absolute(Path::new(env.cwd), Path::new(dir));
        return Ok(env.call_in(cwd, vec![Request::Command(input.command("command")?)]));
    }
    if let Some(name) = mcp_name(value, env.tool)? {
        return Ok(env.call(vec![Request::tool(&name, None)]));
    }
    Ok(env.call(requests(&env)?))
}

/// An MCP tool's name in the form policies write it, `mcp__SERVER__TOOL` (the form Claude Code
/// uses), or `None` for one of Gemini's own tools.
///
/// Gemini CLI names an MCP tool `mcp_SERVER_TOOL` (older releases: the bare tool name, or
/// `SERVER__TOOL` on a clash), so a rule such as `tools mcp__*delete*` would never match it.
/// The hook input's `mcp_context` names the server and the tool apart; it is what is judged.
/// Without it, a name in the `mcp_` form is judged as `mcp__` and the rest, which the
/// policies' `mcp__*word*` rules still match.
fn mcp_name(value: &Value, tool: &str) -> Result<Option<String>, InputError> {
    if !matches!(value.get("mcp_context"), None | Some(Value::Null)) {
        let context = Fields::root(value)?.object("mcp_context")?;
        let server = context.string("server_name")?;
        let name = context.string("tool_name")?;
        if server.is_empty() || name.is_empty() {
            return Err(InputError::Invalid { field: "mcp_context".into(), problem: "names no server or no tool" });
        }
        return Ok(Some(format!("mcp__{server}__{name}")));
    }
    Ok(tool.strip_prefix("mcp_").filter(|rest| !rest.starts_with('_')).map(|rest| format!("mcp__{rest}")))
}

/// Every non-empty value among `keys`, without repeats: a release reads one spelling, another
/// release the other, so every one given is judged.
fn spelled(input: &Fields<'_>, keys: &[&str]) -> Result<Vec<String>, InputError> {
    let mut out: Vec<String> = Vec::new();
    for key in keys {
        if let Some(p) = input.opt_string(key)?.filter(|p| !p.is_empty())
            && !out.iter().any(|o| o == p)
        {
            out.push(p.to_string());
        }
    }
    Ok(out)
}

fn requests(env: &Envelope<'_>) -> Result<Vec<Request>, InputError> {
    let input = &env.input;
    let file = |name: &str| -> Result<Vec<Request>, InputError> {
        // The first spelling present must name a file; every one given is judged.
        input.path(FILE)?;
        Ok(spelled(input, FILE)?.into_iter().map(|p| Request::tool(name, Some(p))).collect())
    };
    let folder = |name: &str| -> Result<Vec<Request>, InputError> {
        // No folder, or an empty one, is the working directory.
        let mut dirs = spelled(input, DIR)?;
        if dirs.is_empty() {
            dirs.push(".".into());
        }
        Ok(dirs.into_iter().map(|p| Request::tool(name, Some(p))).collect())
    };
    let request = match env.tool {
        "read_file" => return file("read_file"),
        "write_file" => return file("write_file"),
        "replace" => return file("edit_file"),
        "list_directory" => return folder("list_dir"),
        "glob" | "grep_search" | "search_file_content" => return folder("search"),
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
        // web_fetch, google_web_search, save_memory, write_todos, ...
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
    fn search_tools_judge_every_folder_spelling_and_an_empty_one_is_the_working_directory() {
        let both = |tool: &str, name: &str| {
            assert_eq!(
                requests(tool, json!({"pattern": "x", "dir_path": "src", "path": "/h"})),
                [Request::tool(name, Some("src".into())), Request::tool(name, Some("/h".into()))],
                "{tool}"
            );
        };
        for tool in ["glob", "grep_search", "search_file_content"] {
            both(tool, "search");
        }
        both("list_directory", "list_dir");
        assert_eq!(requests("list_directory", json!({"dir_path": "", "path": "/h/.ssh"})), tool("list_dir", "/h/.ssh"));
        assert_eq!(requests("glob", json!({"pattern": "*", "dir_path": ""})), tool("search", "."));
    }

    #[test]
    fn an_mcp_tool_is_judged_by_the_name_policies_give_it() {
        let with_context = parse(&json!({
            "session_id": "s", "cwd": "/w", "hook_event_name": "BeforeTool", "tool_name": "mcp_github_delete_repository",
            "tool_input": {"repo": "r"}, "mcp_context": {"server_name": "github", "tool_name": "delete_repository"}
        }))
        .unwrap();
        assert_eq!(with_context.requests, [Request::tool("mcp__github__delete_repository", None)]);
        // An older release's bare name is known for an MCP tool by its context alone.
        let bare = parse(&json!({
            "cwd": "/w", "hook_event_name": "BeforeTool", "tool_name": "read_file", "tool_input": {},
            "mcp_context": {"server_name": "fs", "tool_name": "read_file"}
        }))
        .unwrap();
        assert_eq!(bare.requests, [Request::tool("mcp__fs__read_file", None)]);
        assert_eq!(requests("mcp_github_delete_repository", json!({})), [Request::tool("mcp__github_delete_repository", None)]);
        for context in [json!("github"), json!({"server_name": "github"}), json!({"server_name": "", "tool_name": "x"})] {
            let input = json!({"cwd": "/w", "hook_event_name": "BeforeTool", "tool_name": "mcp_x_y", "tool_input": {}, "mcp_context": context});
            assert!(parse(&input).is_err(), "{input}");
        }
    }

    #[test]
    fn a_shell_command_with_two_different_folders_is_refused() {
        assert!(call("run_shell_command", json!({"command": "cat .npmrc", "dir_path": "/w", "directory": "/h"})).is_err());
        let c = call("run_shell_command", json!({"command": "ls", "dir_path": "/w/a", "directory": "/w/a"})).unwrap();
        assert_eq!(c.cwd, Path::new("/w/a"));
        let c = call("run_shell_command", json!({"command": "ls", "dir_path": ""})).unwrap();
        assert_eq!(c.cwd, Path::new("/w"));
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
