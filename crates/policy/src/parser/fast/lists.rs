//! Lists of the fast parser (`a, b, c`, `(a | b)`, `a b c`), read without regrowing: members
//! go on a scratch stack for their type and leave it in one allocation of the list's length.

use std::cell::RefCell;

use super::{Fast, Parsed};
use crate::ast::{ExecPattern, PathRef, Spanned};

/// One stack per type of list member. A list pushes its members above whatever lists around
/// it have pushed and drains exactly those when it ends, so lists may nest; the stacks grow
/// once, to the longest list, instead of every list growing by reallocation.
#[derive(Default)]
pub(super) struct Scratch {
    tokens: RefCell<Vec<Spanned<String>>>,
    sequences: RefCell<Vec<Vec<Spanned<String>>>>,
    paths: RefCell<Vec<PathRef>>,
    patterns: RefCell<Vec<ExecPattern>>,
}

/// A type of list member, and its stack.
pub(super) trait Member: Sized {
    fn stack(scratch: &Scratch) -> &RefCell<Vec<Self>>;
}

impl Member for Spanned<String> {
    fn stack(scratch: &Scratch) -> &RefCell<Vec<Self>> {
        &scratch.tokens
    }
}

impl Member for Vec<Spanned<String>> {
    fn stack(scratch: &Scratch) -> &RefCell<Vec<Self>> {
        &scratch.sequences
    }
}

impl Member for PathRef {
    fn stack(scratch: &Scratch) -> &RefCell<Vec<Self>> {
        &scratch.paths
    }
}

impl Member for ExecPattern {
    fn stack(scratch: &Scratch) -> &RefCell<Vec<Self>> {
        &scratch.patterns
    }
}

impl<'a> Fast<'a> {
    /// `member ~ (separator ~ member)*` from `p`. A member that starts but does not parse
    /// gives up: after a separator nothing else could follow.
    pub(super) fn separated<T: Member>(
        self,
        p: usize,
        separator: u8,
        member: impl Fn(Fast<'a>, usize) -> Parsed<T>,
    ) -> Parsed<Vec<T>> {
        let next = |f: Fast<'a>, q: usize| (f.byte(q) == Some(separator)).then(|| f.skip(q + 1));
        self.list(p, next, member)
    }

    /// `member+`, blanks between, from `p`, while `starts` says a member is there.
    pub(super) fn repeated<T: Member>(
        self,
        p: usize,
        starts: impl Fn(Fast<'a>, usize) -> bool,
        member: impl Fn(Fast<'a>, usize) -> Parsed<T>,
    ) -> Parsed<Vec<T>> {
        self.list(p, |f: Fast<'a>, q: usize| starts(f, q).then_some(q), member)
    }

    /// A member from `p`, then, after blanks, another wherever `next` finds one (at the
    /// offset it returns), until it finds none.
    fn list<T: Member>(
        self,
        p: usize,
        next: impl Fn(Fast<'a>, usize) -> Option<usize>,
        member: impl Fn(Fast<'a>, usize) -> Parsed<T>,
    ) -> Parsed<Vec<T>> {
        let (first, mut end) = member(self, p)?;
        let stack = T::stack(self.scratch);
        let mark = stack.try_borrow().ok()?.len();
        stack.try_borrow_mut().ok()?.push(first);
        while let Some(q) = next(self, self.skip(end)) {
            let (item, e) = member(self, q)?;
            stack.try_borrow_mut().ok()?.push(item);
            end = e;
        }
        Some((Self::take(stack, mark)?, end))
    }

    /// The members above `mark`, in one allocation.
    fn take<T>(stack: &RefCell<Vec<T>>, mark: usize) -> Option<Vec<T>> {
        let mut stack = stack.try_borrow_mut().ok()?;
        (mark <= stack.len()).then(|| stack.drain(mark..).collect())
    }
}
