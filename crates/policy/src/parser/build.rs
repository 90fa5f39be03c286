//! pairs -> AST.
use pest::iterators::Pair;
use super::Rule;
use crate::ast::Policy;
use crate::error::{Diagnostic, Diagnostics};

pub(crate) struct Builder<'a> {
    file: &'a str,
    text: &'a str,
    errors: Vec<Diagnostic>,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(file: &'a str, text: &'a str) -> Self {
        Builder { file, text, errors: Vec::new() }
    }
    pub(crate) fn file(&mut self, _pair: Pair<'_, Rule>) -> Policy {
        let _ = (self.file, self.text);
        Policy { statements: vec![], trailing_comments: vec![] }
    }
    pub(crate) fn finish(self, policy: Policy) -> Result<Policy, Diagnostics> {
        if self.errors.is_empty() { Ok(policy) } else { Err(Diagnostics(self.errors)) }
    }
}
