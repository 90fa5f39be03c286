//! Diagnostics: every error names its file, line and column, carries a stable code and advice.

use miette::{NamedSource, SourceSpan};
use std::fmt;

/// Stable error codes. The `Display` form (`warden::parse`) is what users and tests match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// The text does not follow the grammar.
    Parse,
    /// `version` missing, repeated, or not a supported number.
    Version,
    /// A statement that may appear once appears again (`default`, `opaque`, a tier or set name).
    Duplicate,
    /// A `paths` set name that is not defined.
    UnknownPathSet,
    /// A `paths` set that refers to itself, directly or not.
    PathSetCycle,
    /// A `${...}` variable that does not exist, or a malformed path pattern.
    BadPath,
    /// A tier named in `tiers` that is not defined.
    UnknownTier,
    /// An agent named in `extends` or `example ... agent` that is not defined, or a cycle.
    UnknownAgent,
    /// An item where it does not belong (`tiers` in a tier, `allow` in an agent, ...).
    Misplaced,
    /// A rule that can never match or is malformed (empty pattern, `tools exec`, ...).
    BadRule,
    /// A malformed duration, size or count, or an unknown limit.
    BadValue,
    /// An `example` whose decision differs from the one written.
    ExampleFailed,
    /// A policy file that could not be used (writable by others than root, not UTF-8, too large).
    Source,
}

impl Code {
    /// The stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Parse => "warden::parse",
            Code::Version => "warden::version",
            Code::Duplicate => "warden::duplicate",
            Code::UnknownPathSet => "warden::unknown-path-set",
            Code::PathSetCycle => "warden::path-set-cycle",
            Code::BadPath => "warden::bad-path",
            Code::UnknownTier => "warden::unknown-tier",
            Code::UnknownAgent => "warden::unknown-agent",
            Code::Misplaced => "warden::misplaced",
            Code::BadRule => "warden::bad-rule",
            Code::BadValue => "warden::bad-value",
            Code::ExampleFailed => "warden::example-failed",
            Code::Source => "warden::source",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One diagnostic against one file.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct Diagnostic {
    /// Stable code.
    pub code: Code,
    /// Lowercase, no final period, user input in backticks.
    pub message: String,
    /// Advice, if any.
    pub help: Option<String>,
    /// The file's display name.
    pub file: String,
    /// 1-based line of the span start.
    pub line: u32,
    /// 1-based column (in characters) of the span start.
    pub column: u32,
    /// Byte range in the file.
    pub span: std::ops::Range<usize>,
    /// A label for the span.
    pub label: String,
    source_code: NamedSource<String>,
}

impl Diagnostic {
    /// Builds a diagnostic, computing line and column from `text`.
    pub fn new(
        code: Code,
        file: &str,
        text: &str,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> Self {
        let (line, column) = line_col(text, span.start);
        Diagnostic {
            code,
            message: message.into(),
            help: None,
            file: file.to_string(),
            line,
            column,
            span,
            label: String::from("here"),
            source_code: NamedSource::new(file, text.to_string()),
        }
    }

    /// Adds advice.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets the span label.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// `file:line:column: code: message` on one line, for logs and tests.
    pub fn short(&self) -> String {
        format!("{}:{}:{}: {}: {}", self.file, self.line, self.column, self.code, self.message)
    }
}

impl miette::Diagnostic for Diagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source_code)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let len = self.span.end.saturating_sub(self.span.start);
        let span = SourceSpan::new(self.span.start.into(), len);
        Some(Box::new(std::iter::once(miette::LabeledSpan::new_with_span(
            Some(self.label.clone()),
            span,
        ))))
    }
}

/// All diagnostics of a failed parse, validation or compile. Never empty.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} error(s) in policy: {}", .0.len(), .0.first().map(|d| d.short()).unwrap_or_default())]
pub struct Diagnostics(pub Vec<Diagnostic>);

/// 1-based line and character column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}
