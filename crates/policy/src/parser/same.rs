//! [`Policy::same_meaning`]: equality that ignores every span.

use crate::ast::{
    ArgAlt, Comment, Condition, ExampleRequest, ExecPattern, Item, ItemKind, PathRef, Policy, Rule,
    Span, Spanned, StandaloneRule, Statement, StatementKind,
};

impl Policy {
    /// Whether two policies say the same thing: equal ignoring every span (of nodes and of
    /// comments); comments' text and places (leading, trailing, end of body) still count.
    ///
    /// # Examples
    /// ```
    /// let a = warden_policy::parse("a", "version 1\ndeny exec rm\n").unwrap();
    /// let b = warden_policy::parse("b", "version   1;   deny exec rm").unwrap();
    /// assert!(a.same_meaning(&b));
    /// ```
    pub fn same_meaning(&self, other: &Policy) -> bool {
        self.without_spans() == other.without_spans()
    }

    /// A copy with every span set to `0..0`.
    fn without_spans(&self) -> Policy {
        let mut p = self.clone();
        p.statements.iter_mut().for_each(statement);
        p.trailing_comments.iter_mut().for_each(comment);
        p
    }
}

fn zero(span: &mut Span) {
    *span = 0..0;
}

fn sp<T>(s: &mut Spanned<T>) {
    zero(&mut s.span);
}

fn comment(c: &mut Comment) {
    zero(&mut c.span);
}

fn comments(leading: &mut [Comment], trailing: &mut Option<Comment>) {
    leading.iter_mut().for_each(comment);
    trailing.iter_mut().for_each(comment);
}

fn statement(s: &mut Statement) {
    zero(&mut s.span);
    comments(&mut s.leading, &mut s.trailing);
    match &mut s.kind {
        StatementKind::Version(v) => sp(v),
        StatementKind::Default(v) | StatementKind::Opaque(v) => sp(v),
        StatementKind::Paths { name, members } => {
            sp(name);
            members.iter_mut().for_each(path);
        }
        StatementKind::Tier(t) => {
            t.lock.iter_mut().for_each(zero);
            sp(&mut t.name);
            sp(&mut t.verdict);
            t.reason.iter_mut().for_each(sp);
            t.items.iter_mut().for_each(item);
            t.end_comments.iter_mut().for_each(comment);
        }
        StatementKind::Rule(r) => standalone(r),
        StatementKind::Limits(l) => l.iter_mut().for_each(sp),
        StatementKind::Env(e) => e.iter_mut().for_each(sp),
        StatementKind::Sandbox(s) => sp(s),
        StatementKind::Agent(a) => {
            sp(&mut a.name);
            a.extends.iter_mut().for_each(sp);
            a.items.iter_mut().for_each(item);
            a.end_comments.iter_mut().for_each(comment);
        }
        StatementKind::Example(e) => {
            sp(&mut e.verdict);
            e.agent.iter_mut().for_each(sp);
            match &mut e.request {
                ExampleRequest::Command(c) => sp(c),
                ExampleRequest::Tool { name, path } => {
                    sp(name);
                    path.iter_mut().for_each(sp);
                }
            }
        }
    }
}

fn item(i: &mut Item) {
    zero(&mut i.span);
    comments(&mut i.leading, &mut i.trailing);
    match &mut i.kind {
        ItemKind::Rule(r) => rule(r),
        ItemKind::Standalone(s) => standalone(s),
        ItemKind::Limits(l) => l.iter_mut().for_each(sp),
        ItemKind::Env(v) | ItemKind::Tiers(v) => v.iter_mut().for_each(sp),
        ItemKind::Sandbox(s) => sp(s),
        ItemKind::Default(v) | ItemKind::Opaque(v) => sp(v),
    }
}

fn standalone(s: &mut StandaloneRule) {
    s.lock.iter_mut().for_each(zero);
    sp(&mut s.verdict);
    s.reason.iter_mut().for_each(sp);
    rule(&mut s.rule);
}

fn path(p: &mut PathRef) {
    match p {
        PathRef::Pattern(s) | PathRef::Set(s) => sp(s),
    }
}

fn rule(r: &mut Rule) {
    match r {
        Rule::Tools(t) => t.iter_mut().for_each(sp),
        Rule::Exec(p) => p.iter_mut().for_each(pattern),
        Rule::Pipe { from, into } => {
            pattern(from);
            pattern(into);
        }
        Rule::Fs {
            access,
            paths,
            except,
        } => {
            sp(access);
            paths.iter_mut().for_each(path);
            except.iter_mut().for_each(path);
        }
        Rule::Net(n) => {
            sp(n);
            if let crate::ast::Net::Hosts(h) = &mut n.node {
                h.iter_mut().for_each(sp);
            }
        }
    }
}

fn pattern(p: &mut ExecPattern) {
    zero(&mut p.span);
    p.command.iter_mut().for_each(sp);
    p.args.iter_mut().for_each(|a: &mut ArgAlt| {
        zero(&mut a.span);
        a.alternatives.iter_mut().flatten().for_each(sp);
    });
    p.conditions.iter_mut().for_each(|c: &mut Condition| {
        zero(&mut c.span);
        c.flags.iter_mut().for_each(sp);
    });
}
