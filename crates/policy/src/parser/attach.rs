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
    let mut attach = Attach::new(text);
    for event in events {
        match event {
            Event::Node(node) => attach.node(node),
            Event::Comment(comment) => attach.comment(comment),
        }
    }
    attach.finish()
}

/// [`attach`] one event at a time, for a parser that meets nodes and comments in source order.
pub(crate) struct Attach<'a, T> {
    text: &'a str,
    nodes: Vec<T>,
    pending: Vec<Comment>,
}

impl<'a, T: Commented> Attach<'a, T> {
    pub(crate) fn new(text: &'a str) -> Self {
        Attach {
            text,
            nodes: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// The next node: the comments pending are its leading ones.
    pub(crate) fn node(&mut self, mut node: T) {
        let mut leading = std::mem::take(&mut self.pending);
        leading.append(node.leading_mut());
        *node.leading_mut() = leading;
        self.nodes.push(node);
    }

    /// The next comment: trailing for the last node if on its line, else pending.
    pub(crate) fn comment(&mut self, comment: Comment) {
        if let Some(last) = self.nodes.last_mut()
            && self.pending.is_empty()
            && last.trailing_mut().is_none()
            && same_line(self.text, last.span().end, comment.span.start)
        {
            *last.trailing_mut() = Some(comment);
            return;
        }
        self.pending.push(comment);
    }

    /// The nodes, and the comments after the last one.
    pub(crate) fn finish(self) -> (Vec<T>, Vec<Comment>) {
        (self.nodes, self.pending)
    }
}
