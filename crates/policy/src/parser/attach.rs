//! Attaching comments to statements and items.
//!
//! A comment on the same line after a node is its `trailing` comment (if it has none yet);
//! every other comment is `leading` for the next node, or, after the last node, belongs to the
//! end of the file or body.

use crate::ast::{Comment, Item, Span, Statement};

/// A node or a comment, in source order.
pub(crate) enum Event<T> {
    /// A `# ...` comment.
    Comment(Comment),
    /// A statement or item.
    Node(T),
}

/// Something comments attach to.
pub(crate) trait Commented {
    fn span(&self) -> Span;
    fn leading_mut(&mut self) -> &mut Vec<Comment>;
    fn trailing_mut(&mut self) -> &mut Option<Comment>;
}

impl Commented for Statement {
    fn span(&self) -> Span {
        self.span.clone()
    }
    fn leading_mut(&mut self) -> &mut Vec<Comment> {
        &mut self.leading
    }
    fn trailing_mut(&mut self) -> &mut Option<Comment> {
        &mut self.trailing
    }
}

impl Commented for Item {
    fn span(&self) -> Span {
        self.span.clone()
    }
    fn leading_mut(&mut self) -> &mut Vec<Comment> {
        &mut self.leading
    }
    fn trailing_mut(&mut self) -> &mut Option<Comment> {
        &mut self.trailing
    }
}

/// Whether no line break separates `from` and `to` in `text`.
pub(crate) fn same_line(text: &str, from: usize, to: usize) -> bool {
    text.get(from..to).is_some_and(|s| !s.contains('\n'))
}

/// Attaches comments; returns the nodes and the comments after the last one.
///
/// Comments a node already carries as `leading` (hoisted from inside a `limits { }` block) stay
/// after the whole-line comments above it.
pub(crate) fn attach<T: Commented>(text: &str, events: Vec<Event<T>>) -> (Vec<T>, Vec<Comment>) {
    let mut nodes: Vec<T> = Vec::new();
    let mut pending: Vec<Comment> = Vec::new();
    for event in events {
        match event {
            Event::Node(mut node) => {
                let mut leading = std::mem::take(&mut pending);
                leading.append(node.leading_mut());
                *node.leading_mut() = leading;
                nodes.push(node);
            }
            Event::Comment(comment) => {
                if let Some(last) = nodes.last_mut()
                    && pending.is_empty()
                    && last.trailing_mut().is_none()
                    && same_line(text, last.span().end, comment.span.start)
                {
                    *last.trailing_mut() = Some(comment);
                    continue;
                }
                pending.push(comment);
            }
        }
    }
    (nodes, pending)
}
