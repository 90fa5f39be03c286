//! Claude Code's `PreToolUse` hook protocol (see docs/hooks.md for the sources).
//!
//! Input on stdin: `session_id`, `transcript_path`, `cwd`, `permission_mode`,
//! `hook_event_name` ("PreToolUse"), `tool_name`, `tool_input`, `tool_use_id`.
//! Output: allow and ask print `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//! "permissionDecision": ..., "permissionDecisionReason": ...}}` and exit 0. A deny prints the
//! same object with "deny" but exits 2 with the reason on stderr: exit 2 blocks the call in
//! every Claude Code version whatever it makes of stdout, while a JSON deny only blocks where
//! the JSON is parsed and understood.

use super::call::{Call, Envelope, InputError, Request, envelope};
use super::{Outcome, Response};
use serde_json::{Value, json};

/// The event this protocol handles.
pub const EVENT: &str = "PreToolUse";

/// Maps one hook input onto warden's requests.
///
/// # Errors
/// A missing or mistyped field, another event than `PreToolUse`.
pub fn parse(value: &Value) -> Result<Call, InputError> {
    let env = envelope(value, "claude-code", EVENT)?;
    Ok(env.call(requests(&env)?))
}

fn requests(env: &Envelope<'_>) -> Result<Vec<Request>, InputError> {
    let input = &env.input;
    let request = match env.tool {
        "Bash" => Request::Command(input.command("command")?),
        "Read" => Request::tool("read_file", Some(input.path(&["file_path"])?)),
        "Write" => Request::tool("write_file", Some(input.path(&["file_path"])?)),
        "Edit" | "MultiEdit" => Request::tool("edit_file", Some(input.path(&["file_path"])?)),
        "NotebookEdit" => Request::tool("edit_file", Some(input.path(&["notebook_path"])?)),
        // Without a path, Glob and Grep search the working directory.
        "Glob" | "Grep" => Request::tool("search", Some(input.opt_string("path")?.unwrap_or(".").to_string())),
        "LS" => Request::tool("list_dir", Some(input.path(&["path"])?)),
        // WebFetch, WebSearch, Task, TodoWrite, mcp__server__tool, ...: by their own name.
        other => Request::tool(other, None),
    };
    Ok(vec![request])
}

/// The protocol's answer to an outcome.
pub fn respond(outcome: &Outcome) -> Response {
    let decision = outcome.verdict.as_str();
    let stdout = json!({
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": decision,
            "permissionDecisionReason": outcome.reason,
        }
    });
    Response::new(outcome, stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, input: Value) -> Result<Call, InputError> {
        parse(&json!({
            "session_id": "s", "transcript_path": "/t.jsonl", "cwd": "/w", "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1"
        }))
    }

    fn one(tool: &str, input: Value) -> Request {
        let mut c = call(tool, input).unwrap();
        assert_eq!(c.requests.len(), 1);
        c.requests.remove(0)
    }

    #[test]
    fn each_tool_maps_onto_warden_s() {
        assert_eq!(one("Bash", json!({"command": "ls", "description": "d"})), Request::Command("ls".into()));
        assert_eq!(one("Read", json!({"file_path": "/w/a"})), Request::tool("read_file", Some("/w/a".into())));
        assert_eq!(one("Write", json!({"file_path": "/w/a", "content": ""})), Request::tool("write_file", Some("/w/a".into())));
        assert_eq!(one("Edit", json!({"file_path": "/w/a"})), Request::tool("edit_file", Some("/w/a".into())));
        assert_eq!(one("MultiEdit", json!({"file_path": "/w/a", "edits": []})), Request::tool("edit_file", Some("/w/a".into())));
        assert_eq!(one("NotebookEdit", json!({"notebook_path": "/w/n.ipynb"})), Request::tool("edit_file", Some("/w/n.ipynb".into())));
        assert_eq!(one("Glob", json!({"pattern": "**/*.rs"})), Request::tool("search", Some(".".into())));
        assert_eq!(one("Grep", json!({"pattern": "x", "path": "/w/src"})), Request::tool("search", Some("/w/src".into())));
        assert_eq!(one("LS", json!({"path": "/w"})), Request::tool("list_dir", Some("/w".into())));
        assert_eq!(one("WebFetch", json!({"url": "https://x", "prompt": "p"})), Request::tool("WebFetch", None));
        assert_eq!(one("mcp__github__create_issue", json!({})), Request::tool("mcp__github__create_issue", None));
    }

    #[test]
    fn a_known_tool_without_its_argument_is_an_error() {
        for (tool, input) in [("Bash", json!({})), ("Bash", json!({"command": " "})), ("Read", json!({})), ("Edit", json!({"file_path": 1}))] {
            assert!(call(tool, input.clone()).is_err(), "{tool} {input}");
        }
    }
}
