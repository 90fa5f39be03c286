//! Settling `ask`: the [`Approver`] interface, the approvers that need no person (refuse-all
//! for CI, a pre-approval file), and what "approved for this session" covers.
//!
//! An approval never covers more than the parts of the request that asked: a compound command
//! whose every part but one is allowed needs only that one part approved, and a part that was
//! denied is never put to an approver at all (the decision is then deny). Opaque parts (what the
//! analyser could not know) are never pre-approved: only a person, shown the text, may approve
//! them.

use std::collections::HashSet;
use std::path::Path;

use warden_policy::ast::Verdict;
use warden_policy::{Decision, GrantGlob, Subject};

/// A request that asked, as an approver sees it.
#[derive(Debug, Clone, Copy)]
pub struct Pending<'a> {
    /// The agent the request was decided for.
    pub agent: Option<&'a str>,
    /// The tool (`exec` for commands).
    pub tool: &'a str,
    /// The command string or the tool's path, for display.
    pub subject: &'a str,
    /// The decision (verdict ask), with the parts that asked.
    pub decision: &'a Decision,
}

/// An approver's answer. `by` names who gave it (audited).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Run this request, once.
    Once {
        /// Who approved.
        by: String,
    },
    /// Run this request, and requests whose asking parts are the same, for the rest of the session.
    Session {
        /// Who approved.
        by: String,
    },
    /// Do not run it.
    Refused {
        /// Who refused.
        by: String,
        /// Why, for the agent.
        why: String,
    },
}

impl Answer {
    /// Who gave the answer.
    pub fn by(&self) -> &str {
        match self {
            Answer::Once { by } | Answer::Session { by } | Answer::Refused { by, .. } => by,
        }
    }

    /// Whether the request may run.
    pub fn granted(&self) -> bool {
        !matches!(self, Answer::Refused { .. })
    }
}

/// Settles `ask`. Implementations: [`RefuseAll`] (unattended), [`PreApprovals`] (a file written
/// ahead of time), the terminal prompt (in the CLI) and MCP elicitation (in the MCP server).
pub trait Approver {
    /// Answers one request that asked.
    fn approve(&mut self, pending: &Pending<'_>) -> Answer;
}

/// Refuses every `ask`: for CI and anything else unattended.
#[derive(Debug, Clone, Default)]
pub struct RefuseAll {
    /// Why, appended to the refusal (e.g. "there is no terminal to ask at").
    pub why: String,
}

impl Approver for RefuseAll {
    fn approve(&mut self, p: &Pending<'_>) -> Answer {
        let why = if self.why.is_empty() { "nothing approves requests here".to_string() } else { self.why.clone() };
        Answer::Refused { by: "refuse-all".into(), why: format!("needs approval ({}), and {why}", p.decision.reason()) }
    }
}

/// The key of one asking part, for session approvals and pre-approval matching.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum PartKey {
    Command(Vec<String>),
    Path { access: &'static str, path: String },
    Tool { name: String, path: Option<String> },
    Opaque(String),
    Other(String),
}

/// The parts of an `ask` decision that asked. A tool request with no asking part is one key.
pub(crate) fn asking(d: &Decision, tool: &str, path: Option<&str>) -> Vec<PartKey> {
    let mut keys: Vec<PartKey> = d
        .parts()
        .iter()
        .filter(|p| p.verdict == Verdict::Ask)
        .map(|p| match &p.subject {
            Subject::Command { argv } => PartKey::Command(argv.to_vec()),
            Subject::Path { access, path } => PartKey::Path { access, path: path.clone() },
            Subject::Tool { name } => PartKey::Tool { name: name.clone(), path: path.map(str::to_string) },
            Subject::Opaque { text, .. } => PartKey::Opaque(text.clone()),
            Subject::Pipe { from, into } => PartKey::Other(format!("{from} | {into}")),
            Subject::Request { problem } => PartKey::Other(problem.clone()),
        })
        .collect();
    if keys.is_empty() {
        keys.push(PartKey::Tool { name: tool.to_string(), path: path.map(str::to_string) });
    }
    keys
}

/// What a session has approved "for this session".
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionGrants(HashSet<PartKey>);

impl SessionGrants {
    pub(crate) fn covers(&self, keys: &[PartKey]) -> bool {
        !keys.is_empty() && keys.iter().all(|k| !matches!(k, PartKey::Other(_)) && self.0.contains(k))
    }

    pub(crate) fn add(&mut self, keys: Vec<PartKey>) {
        self.0.extend(keys.into_iter().filter(|k| !matches!(k, PartKey::Other(_))));
    }
}

/// Pre-approvals: a file a person wrote ahead of time, for runs nobody watches.
///
/// ```text
/// # who approves: every answer is audited with this name
/// by alice@example.com
/// exec cargo test            # a command whose argv starts with these words
/// exec npm run build
/// write /work/app/src/**     # a write to a path matching the glob
/// tool deploy_preview        # a named tool (any path)
/// tool write_file /work/app/docs/**
/// ```
///
/// A request is approved only when every part that asked is covered by a line; opaque parts
/// never are. Words are split on whitespace (no quoting: a pre-approval names plain words).
#[derive(Debug, Clone)]
pub struct PreApprovals {
    by: String,
    lines: Vec<Line>,
}

#[derive(Debug, Clone)]
enum Line {
    Exec(Vec<String>),
    Write(GrantGlob),
    Tool(String, Option<GrantGlob>),
}

/// A pre-approval file that does not parse: file, line, what is wrong.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PreApprovalError {
    /// The file.
    pub file: String,
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl PreApprovals {
    /// Reads a pre-approval file.
    ///
    /// # Errors
    /// An unreadable file, or any line that does not parse (nothing is approved then).
    pub fn load(path: &Path) -> Result<Self, PreApprovalError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| PreApprovalError { file: file.clone(), line: 0, message: format!("cannot read: {e}") })?;
        Self::parse(&file, &text)
    }

    /// Parses pre-approval text; `file` names it in errors.
    ///
    /// # Errors
    /// Any line that does not parse, a missing `by` line.
    pub fn parse(file: &str, text: &str) -> Result<Self, PreApprovalError> {
        let err = |line: usize, message: String| PreApprovalError { file: file.to_string(), line, message };
        let mut by = None;
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let content = raw.split_once('#').map_or(raw, |(a, _)| a);
            let words: Vec<&str> = content.split_whitespace().collect();
            let glob = |w: &str| {
                if !w.starts_with('/') {
                    return Err(err(n, format!("`{w}` is not an absolute path pattern")));
                }
                GrantGlob::new(w).ok_or_else(|| err(n, format!("bad path pattern `{w}`")))
            };
            match words.as_slice() {
                [] => {}
                ["by", name] => by = Some((*name).to_string()),
                ["by", ..] => return Err(err(n, "`by` takes one name (no spaces)".into())),
                ["exec"] => return Err(err(n, "`exec` needs the command's first words".into())),
                ["exec", rest @ ..] => lines.push(Line::Exec(rest.iter().map(|w| (*w).to_string()).collect())),
                ["write", pattern] => lines.push(Line::Write(glob(pattern)?)),
                ["tool", name] => lines.push(Line::Tool((*name).to_string(), None)),
                ["tool", name, pattern] => lines.push(Line::Tool((*name).to_string(), Some(glob(pattern)?))),
                [word, ..] => {
                    return Err(err(n, format!("unknown line `{word}`: expected `by NAME`, `exec WORDS...`, `write PATH-GLOB` or `tool NAME [PATH-GLOB]`")));
                }
            }
        }
        let by = by.ok_or_else(|| err(1, "no `by NAME` line: every approval must name who gave it".into()))?;
        Ok(PreApprovals { by: format!("pre-approval:{by}"), lines })
    }

    fn covers(&self, key: &PartKey) -> bool {
        self.lines.iter().any(|line| match (line, key) {
            (Line::Exec(words), PartKey::Command(argv)) => {
                let name = argv.first().map(|a| a.rsplit('/').next().unwrap_or(a));
                words.first().map(String::as_str) == name && argv.len() >= words.len() && argv.iter().skip(1).zip(words.iter().skip(1)).all(|(a, w)| a == w)
            }
            (Line::Write(g), PartKey::Path { access: "write", path }) => g.matches(path),
            (Line::Tool(n, g), PartKey::Tool { name, path }) => {
                n == name && g.as_ref().is_none_or(|g| path.as_deref().is_some_and(|p| g.matches(p)))
            }
            _ => false,
        })
    }
}

impl Approver for PreApprovals {
    fn approve(&mut self, p: &Pending<'_>) -> Answer {
        let keys = asking(p.decision, p.tool, (p.tool != "exec").then_some(p.subject));
        match keys.iter().find(|k| !self.covers(k)) {
            None => Answer::Once { by: self.by.clone() },
            Some(k) => Answer::Refused {
                by: self.by.clone(),
                why: format!("needs approval ({}), and the pre-approval file does not cover {}", p.decision.reason(), describe(k)),
            },
        }
    }
}

fn describe(k: &PartKey) -> String {
    match k {
        PartKey::Command(argv) => format!("the command `{}`", argv.join(" ")),
        PartKey::Path { access, path } => format!("the {access} of {path}"),
        PartKey::Tool { name, path: Some(p) } => format!("the tool {name} on {p}"),
        PartKey::Tool { name, path: None } => format!("the tool {name}"),
        PartKey::Opaque(text) => format!("`{text}`, which cannot be analysed (only a person may approve it)"),
        PartKey::Other(what) => what.clone(),
    }
}
