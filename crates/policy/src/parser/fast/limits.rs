//! The fast parser's `limits { }` blocks: limits separated by `,`, `;` or line breaks, with
//! blank and comment lines anywhere between them.

use super::{Fast, Parsed};
use crate::ast::{Comment, Limit, Spanned};
use crate::parser::values;

impl Fast<'_> {
    /// `limits_stmt` from its `{` on. The comments written inside become the statement's
    /// leading comments, as in the tree builder.
    pub(super) fn limits(self, p: usize) -> Parsed<(Vec<Spanned<Limit>>, Vec<Comment>)> {
        if self.byte(p) != Some(b'{') {
            return None;
        }
        let mut comments = Vec::new();
        let mut limits = Vec::new();
        let mut q = self.limits_gap(p + 1, &mut comments)?;
        if self.at_word(q) {
            let (limit, mut end) = self.limit(q)?;
            limits.push(limit);
            // `(limits_sep ~ limit)* ~ limits_sep?`: a separator not followed by a limit is
            // the optional last one, and what pest matches the second time is the same.
            while let Some(after) = self.limits_sep(self.skip(end), &mut comments)? {
                if !self.at_word(after) {
                    end = after;
                    break;
                }
                let (limit, e) = self.limit(after)?;
                limits.push(limit);
                end = e;
            }
            q = self.skip(end);
        }
        (self.byte(q) == Some(b'}')).then_some(((limits, comments), q + 1))
    }

    /// `limits_gap = _{ (comment? ~ nl)* }`, with the blanks around it.
    fn limits_gap(self, mut p: usize, comments: &mut Vec<Comment>) -> Option<usize> {
        loop {
            p = self.skip(p);
            match self.byte(p) {
                Some(b'\n') => p += 1,
                Some(b'#') => {
                    let (comment, q) = self.comment(p)?;
                    let q = self.skip(q);
                    // A comment without a line break after it (at the end of the text) is an
                    // error: no limit and no `}` can follow it.
                    if self.byte(q) != Some(b'\n') {
                        return None;
                    }
                    comments.push(comment);
                    p = q + 1;
                }
                _ => return Some(p),
            }
        }
    }

    /// `limits_sep`: `Some(None)` when none is at `p`, else where the next token starts.
    fn limits_sep(self, p: usize, comments: &mut Vec<Comment>) -> Option<Option<usize>> {
        match self.byte(p) {
            Some(b',' | b';' | b'\n' | b'#') => {
                let q = if self.byte(p) == Some(b'#') { p } else { p + 1 };
                self.limits_gap(q, comments).map(Some)
            }
            _ => Some(None),
        }
    }

    /// `limit = { word ~ word }`, checked as the tree builder checks it.
    fn limit(self, p: usize) -> Parsed<Spanned<Limit>> {
        let (key, q) = self.word(p)?;
        let (value, end) = self.word(self.skip(q))?;
        let node = values::limit(&key.node, &value.node)?.ok()?;
        Some((Spanned { node, span: p..end }, end))
    }
}
