//! pest errors -> one diagnostic in words.
use super::Rule;
use crate::error::{Code, Diagnostic};

pub(crate) fn from_pest(file: &str, text: &str, err: &pest::error::Error<Rule>) -> Diagnostic {
    let at = match err.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    Diagnostic::new(Code::Parse, file, text, at..at, "syntax error")
}
