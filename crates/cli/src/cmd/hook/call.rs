//! A tool call as an agent's hook reports it, in warden's terms, and reading the fields of the
//! hook's JSON input. Nothing here guesses: a field that is missing or has the wrong type is an
//! error, and an error is a deny.

use serde_json::{Map, Value};
use std::path::PathBuf;

/// One tool call, mapped onto what warden decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The agent's own name for the tool (`Bash`, `run_shell_command`, `mcp__github__push`).
    pub tool: String,
    /// The agent's session id, when it sent one (kept for the audit record).
    pub session: Option<String>,
    /// The working directory the call runs in (absolute).
    pub cwd: PathBuf,
    /// What warden decides; the most severe verdict over all of them wins. Never empty.
    pub requests: Vec<Request>,
}

/// One request to the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// A command string, as the agent's shell tool would run it.
    Command(String),
    /// A tool call by warden's (or the agent's own) tool name, with its path argument.
    Tool {
        /// `read_file`, `write_file`, `edit_file`, `list_dir`, `search`, or the agent's name.
        name: String,
        /// The path it reads or writes, if it names one.
        path: Option<String>,
    },
}

impl Request {
    /// A tool request.
    pub fn tool(name: &str, path: Option<String>) -> Self {
        Request::Tool { name: name.to_string(), path }
    }
}

/// Why a hook input could not be turned into a [`Call`].
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The input is not a JSON object.
    #[error("the hook input is not a JSON object")]
    NotObject,
    /// A required field is absent.
    #[error("the hook input has no `{0}` field")]
    Missing(String),
    /// A field has the wrong type or an unusable value.
    #[error("the hook input's `{field}` {problem}")]
    Invalid {
        /// The field, dotted (`tool_input.command`).
        field: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The hook was wired to another event than the one this protocol handles.
    #[error("`warden hook {protocol}` handles `{expected}` events, not `{got}`")]
    Event {
        /// The protocol (`claude-code`, `gemini`).
        protocol: &'static str,
        /// The event it handles.
        expected: &'static str,
        /// The event it was given.
        got: String,
    },
}

/// The fields of one JSON object, with the path that leads to it for error messages.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    map: &'a Map<String, Value>,
    prefix: &'a str,
}

impl<'a> Fields<'a> {
    /// The top-level object of a hook input.
    pub fn root(value: &'a Value) -> Result<Self, InputError> {
        value.as_object().map(|map| Fields { map, prefix: "" }).ok_or(InputError::NotObject)
    }

    fn name(&self, key: &str) -> String {
        if self.prefix.is_empty() { key.to_string() } else { format!("{}.{key}", self.prefix) }
    }

    /// A required string.
    pub fn string(&self, key: &str) -> Result<&'a str, InputError> {
        self.opt_string(key)?.ok_or_else(|| InputError::Missing(self.name(key)))
    }

    /// An optional string (absent or null is `None`; another type is an error).
    pub fn opt_string(&self, key: &str) -> Result<Option<&'a str>, InputError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.invalid(key, "is not a string")),
        }
    }

    /// The first of `keys` that is present, as a string (agents renamed some parameters).
    pub fn first_string(&self, keys: &[&str]) -> Result<Option<&'a str>, InputError> {
        for key in keys {
            if let Some(s) = self.opt_string(key)? {
                return Ok(Some(s));
            }
        }
        Ok(None)
    }

    /// A required non-empty path: the first of `keys` present.
    pub fn path(&self, keys: &[&str]) -> Result<String, InputError> {
        let key = keys.first().copied().unwrap_or("path");
        match self.first_string(keys)? {
            Some("") => Err(self.invalid(key, "is empty")),
            Some(p) => Ok(p.to_string()),
            None => Err(InputError::Missing(self.name(key))),
        }
    }

    /// A required non-empty command string.
    pub fn command(&self, key: &str) -> Result<String, InputError> {
        match self.string(key)? {
            c if c.trim().is_empty() => Err(self.invalid(key, "is empty")),
            c => Ok(c.to_string()),
        }
    }

    /// An optional list of strings (absent or null is empty).
    pub fn strings(&self, key: &str) -> Result<Vec<&'a str>, InputError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.as_str()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().ok_or_else(|| self.invalid(key, "is not a list of strings")))
                .collect(),
            Some(_) => Err(self.invalid(key, "is not a list of strings")),
        }
    }

    /// A required nested object.
    pub fn object(&self, key: &'a str) -> Result<Fields<'a>, InputError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Err(InputError::Missing(self.name(key))),
            Some(Value::Object(map)) => Ok(Fields { map, prefix: key }),
            Some(_) => Err(self.invalid(key, "is not an object")),
        }
    }

    fn invalid(&self, key: &str, problem: &'static str) -> InputError {
        InputError::Invalid { field: self.name(key), problem }
    }
}

/// The fields every hook input of both agents carries, checked.
#[derive(Debug, Clone, Copy)]
pub struct Envelope<'a> {
    /// `tool_name`.
    pub tool: &'a str,
    /// `tool_input`.
    pub input: Fields<'a>,
    /// `session_id`, if present.
    pub session: Option<&'a str>,
    /// `cwd`, absolute.
    pub cwd: &'a str,
}

/// Reads and checks the common fields: the event name, the tool, its input, the working directory.
pub fn envelope<'a>(
    value: &'a Value,
    protocol: &'static str,
    event: &'static str,
) -> Result<Envelope<'a>, InputError> {
    let root = Fields::root(value)?;
    let got = root.string("hook_event_name")?;
    if got != event {
        return Err(InputError::Event { protocol, expected: event, got: got.to_string() });
    }
    let tool = root.string("tool_name")?;
    if tool.is_empty() {
        return Err(root.invalid("tool_name", "is empty"));
    }
    let cwd = root.string("cwd")?;
    if !cwd.starts_with('/') {
        return Err(root.invalid("cwd", "is not an absolute path"));
    }
    Ok(Envelope { tool, input: root.object("tool_input")?, session: root.opt_string("session_id")?, cwd })
}

impl Envelope<'_> {
    /// The call for `requests`, run in the envelope's working directory.
    pub fn call(&self, requests: Vec<Request>) -> Call {
        self.call_in(PathBuf::from(self.cwd), requests)
    }

    /// The call for `requests`, run in `cwd`.
    pub fn call_in(&self, cwd: PathBuf, requests: Vec<Request>) -> Call {
        Call { tool: self.tool.to_string(), session: self.session.map(str::to_string), cwd, requests }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_envelope_demands_the_event_the_tool_its_input_and_an_absolute_cwd() {
        let ok = json!({"hook_event_name": "E", "tool_name": "T", "tool_input": {}, "cwd": "/w"});
        assert!(envelope(&ok, "p", "E").is_ok());
        let cases = [
            (json!([1]), "not a JSON object"),
            (json!({"tool_name": "T", "tool_input": {}, "cwd": "/w"}), "no `hook_event_name`"),
            (json!({"hook_event_name": "X", "tool_name": "T", "tool_input": {}, "cwd": "/w"}), "not `X`"),
            (json!({"hook_event_name": "E", "tool_input": {}, "cwd": "/w"}), "no `tool_name`"),
            (json!({"hook_event_name": "E", "tool_name": "", "tool_input": {}, "cwd": "/w"}), "`tool_name` is empty"),
            (json!({"hook_event_name": "E", "tool_name": "T", "cwd": "/w"}), "no `tool_input`"),
            (json!({"hook_event_name": "E", "tool_name": "T", "tool_input": "x", "cwd": "/w"}), "not an object"),
            (json!({"hook_event_name": "E", "tool_name": "T", "tool_input": {}}), "no `cwd`"),
            (json!({"hook_event_name": "E", "tool_name": "T", "tool_input": {}, "cwd": "w"}), "not an absolute"),
            (json!({"hook_event_name": "E", "tool_name": 3, "tool_input": {}, "cwd": "/w"}), "not a string"),
        ];
        for (input, wanted) in cases {
            let err = envelope(&input, "p", "E").unwrap_err().to_string();
            assert!(err.contains(wanted), "{input}: {err}");
        }
    }

    #[test]
    fn nested_fields_are_named_with_their_path() {
        let v = json!({"tool_input": {"command": 1, "file_path": "", "include": ["a", 2]}});
        let input = Fields::root(&v).unwrap().object("tool_input").unwrap();
        assert_eq!(input.command("command").unwrap_err().to_string(), "the hook input's `tool_input.command` is not a string");
        assert!(input.path(&["file_path"]).unwrap_err().to_string().contains("`tool_input.file_path` is empty"));
        assert!(input.path(&["absolute_path"]).unwrap_err().to_string().contains("no `tool_input.absolute_path`"));
        assert!(input.strings("include").is_err());
        assert!(input.strings("absent").unwrap().is_empty());
    }
}
