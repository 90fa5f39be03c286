//! The tool set: argument and result types (their JSON schemas are the tools' input and output
//! schemas) and the `Tool` descriptions clients list.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use warden_policy::Decision;

/// `read_file` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file, relative to the workspace (or absolute inside it).
    pub path: String,
    /// First line to return (1-based, inclusive). Default 1.
    pub start_line: Option<u64>,
    /// Last line to return (1-based, inclusive). Default: the end, within the size cap.
    pub end_line: Option<u64>,
}

/// `list_dir` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// The folder, relative to the workspace. Default: the workspace root.
    pub path: Option<String>,
}

/// `search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// A regular expression (Rust `regex` syntax), matched line by line.
    pub pattern: String,
    /// The folder or file to search, relative to the workspace. Default: the workspace root.
    pub path: Option<String>,
    /// Match without regard to case.
    pub case_insensitive: Option<bool>,
    /// At most this many matching lines (default 200, at most 1000).
    pub max_results: Option<u64>,
}

/// `write_file` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// The file, relative to the workspace. Missing parent folders are created.
    pub path: String,
    /// The whole new content.
    pub content: String,
}

/// `edit_file` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// The file, relative to the workspace.
    pub path: String,
    /// The exact text to replace; it must occur exactly once in the file.
    pub old: String,
    /// The replacement text.
    pub new: String,
}

/// `exec` arguments: a command string or an argv.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecArgs {
    /// A shell command string, judged part by part, then run with `/bin/sh -c` in the sandbox.
    pub command: Option<String>,
    /// The command as an argv, run directly (give this or `command`).
    pub argv: Option<Vec<String>>,
    /// The working folder, relative to the workspace. Default: the workspace root.
    pub cwd: Option<String>,
    /// Wall timeout in seconds (only shortens the policy's).
    pub timeout_secs: Option<f64>,
}

/// `explain` arguments: a command string, or a tool with an optional path.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainArgs {
    /// A shell command string to decide.
    pub command: Option<String>,
    /// A tool name to decide (`read_file`, `write_file`, ...), instead of a command.
    pub tool: Option<String>,
    /// The tool's path.
    pub path: Option<String>,
}

/// The decision as a tool result shows it (pinned names: verdict, tier, reason, rules).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DecisionView {
    /// `allow`, `ask` or `deny`.
    pub verdict: VerdictName,
    /// The tier of the deciding rule, if a tier decided.
    pub tier: Option<String>,
    /// Why, in one sentence.
    pub reason: String,
    /// The rules that decided (empty when the default decided).
    pub rules: Vec<RuleView>,
}

/// A verdict.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum VerdictName {
    /// Runs at once.
    Allow,
    /// Needs a person's approval.
    Ask,
    /// Never runs.
    Deny,
}

/// A rule that decided.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RuleView {
    /// The policy file.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The layer the file belongs to.
    pub layer: String,
    /// The rule's source text.
    pub text: String,
}

impl DecisionView {
    /// The view of a policy decision.
    pub fn of(d: &Decision) -> Self {
        use warden_policy::ast::Verdict;
        DecisionView {
            verdict: match d.verdict {
                Verdict::Allow => VerdictName::Allow,
                Verdict::Ask => VerdictName::Ask,
                Verdict::Deny => VerdictName::Deny,
            },
            tier: d.tier().map(str::to_string),
            reason: d.reason().to_string(),
            rules: d
                .rules()
                .iter()
                .map(|r| RuleView {
                    file: r.file.to_string(),
                    line: r.line,
                    column: r.column,
                    layer: serde_json::to_value(r.layer).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
                    text: r.text.to_string(),
                })
                .collect(),
        }
    }

    /// `by FILE:LINE:COL` for the first rule, or `by the default`.
    pub fn by(&self) -> String {
        match self.rules.first() {
            Some(r) => format!("by {}:{}:{} `{}`", r.file, r.line, r.column, r.text.trim()),
            None => "by the policy's default".to_string(),
        }
    }
}

/// What every file tool returns: the decision, whether it did its work, and its result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileResult<T> {
    /// What the policy decided for this call.
    pub decision: DecisionView,
    /// Whether the tool did its work.
    pub ok: bool,
    /// Why not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tool's own result, when it did its work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<T>,
}

/// `read_file` result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadFileOut {
    /// The path, relative to the workspace.
    pub path: String,
    /// The text of the lines returned.
    pub content: String,
    /// First line returned (1-based).
    pub start_line: u64,
    /// Last line returned (0 when none).
    pub end_line: u64,
    /// Lines in the file (counted up to the read cap).
    pub total_lines: u64,
    /// Whether the size cap cut the content short.
    pub truncated: bool,
}

/// One entry of `list_dir`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DirEntryOut {
    /// The name.
    pub name: String,
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: String,
    /// Size in bytes (files).
    pub size: u64,
}

/// `list_dir` result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListDirOut {
    /// The folder, relative to the workspace.
    pub path: String,
    /// Its entries, sorted by name.
    pub entries: Vec<DirEntryOut>,
    /// Whether the entry cap cut the list short.
    pub truncated: bool,
}

/// One matching line of `search`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MatchOut {
    /// The file, relative to the workspace.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The line's text (cut at 300 characters).
    pub text: String,
}

/// `search` result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOut {
    /// The matching lines, in walk order.
    pub matches: Vec<MatchOut>,
    /// Files searched.
    pub files_searched: u64,
    /// Files the policy does not let this agent read, left out.
    pub files_denied: u64,
    /// Whether `max_results` cut the matches short.
    pub truncated: bool,
}

/// `write_file` / `edit_file` result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteOut {
    /// The path, relative to the workspace.
    pub path: String,
    /// The file's size after the write.
    pub bytes: u64,
    /// Whether the file was created.
    pub created: bool,
}

/// `explain` result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExplainOut {
    /// The combined decision.
    pub decision: DecisionView,
    /// Every judged part with its own verdict (commands, paths, opaque parts).
    pub parts: Vec<serde_json::Value>,
    /// The agent it was decided for.
    pub agent: Option<String>,
    /// Always false: explaining runs nothing.
    pub ran: bool,
}

/// The names of every tool, in listing order.
pub const NAMES: [&str; 7] = ["read_file", "list_dir", "search", "write_file", "edit_file", "exec", "explain"];

/// The description of tool `name`, or `None` for an unknown name.
pub fn describe(name: &str) -> Option<Tool> {
    let (input, output, text, read_only): (Result<Arc<JsonObject>, String>, Arc<JsonObject>, &str, bool) = match name {
        "read_file" => (
            schema_for_input::<ReadFileArgs>(),
            schema_for_output::<FileResult<ReadFileOut>>(),
            "Read a text file of the workspace, optionally a line range (1-based, inclusive). Output is capped.",
            true,
        ),
        "list_dir" => (schema_for_input::<ListDirArgs>(), schema_for_output::<FileResult<ListDirOut>>(), "List a folder of the workspace.", true),
        "search" => (
            schema_for_input::<SearchArgs>(),
            schema_for_output::<FileResult<SearchOut>>(),
            "Search the workspace with a regular expression, line by line, respecting .gitignore. Results are capped.",
            true,
        ),
        "write_file" => (
            schema_for_input::<WriteFileArgs>(),
            schema_for_output::<FileResult<WriteOut>>(),
            "Write a whole file of the workspace (created if missing).",
            false,
        ),
        "edit_file" => (
            schema_for_input::<EditFileArgs>(),
            schema_for_output::<FileResult<WriteOut>>(),
            "Replace an exact snippet of a workspace file; the snippet must occur exactly once.",
            false,
        ),
        "exec" => (
            schema_for_input::<ExecArgs>(),
            exec_output_schema(),
            "Run a command (a shell string or an argv) in warden's sandbox, as the policy decides; returns exit code, capped output, sandbox denials and the deciding rule.",
            false,
        ),
        "explain" => (
            schema_for_input::<ExplainArgs>(),
            schema_for_output::<ExplainOut>(),
            "Say what the policy decides for a command or a tool call, and which rule decides it. Runs nothing.",
            true,
        ),
        _ => return None,
    };
    let input = input.ok()?;
    let mut tool = Tool::new(name.to_string(), text.to_string(), input)
        .with_annotations(ToolAnnotations::new().read_only(read_only).destructive(!read_only));
    tool.output_schema = Some(output);
    Some(tool)
}

/// The output schema of `exec`: the run result pinned in ARCHITECTURE.md.
fn exec_output_schema() -> Arc<JsonObject> {
    let stream = serde_json::json!({
        "type": "object",
        "properties": {"text": {"type": "string"}, "truncated": {"type": "boolean"}, "bytes": {"type": "integer"}},
        "required": ["text", "truncated", "bytes"]
    });
    let rule = serde_json::json!({
        "type": "object",
        "properties": {
            "file": {"type": "string"}, "line": {"type": "integer"}, "column": {"type": "integer"},
            "layer": {"type": "string"}, "text": {"type": "string"}
        },
        "required": ["file", "line", "column", "layer", "text"]
    });
    let decision = serde_json::json!({
        "type": "object",
        "properties": {
            "verdict": {"enum": ["allow", "ask", "deny"]},
            "tier": {"type": ["string", "null"]},
            "reason": {"type": "string"},
            "rules": {"type": "array", "items": rule}
        },
        "required": ["verdict", "tier", "reason", "rules"]
    });
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "decision": decision,
            "ran": {"type": "boolean"},
            "exit_code": {"type": ["integer", "null"]},
            "signal": {"type": ["string", "null"]},
            "timed_out": {"type": "boolean"},
            "cancelled": {"type": "boolean"},
            "duration_ms": {"type": "number"},
            "stdout": stream,
            "stderr": stream,
            "paths": {"type": "array", "items": {"type": "object"}},
            "denials": {"type": "array", "items": {"type": "object"}},
            "sandbox": {"type": "object"},
            "agent": {"type": ["string", "null"]},
            "refused": {"type": "string"},
            "audit": {"type": "object"}
        },
        "required": ["decision", "ran", "exit_code", "signal", "timed_out", "duration_ms", "stdout", "stderr", "paths", "denials", "sandbox"]
    });
    match schema {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}
