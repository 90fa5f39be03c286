//! A hand-written parser for policy files that have no error: the same [`Policy`] as pest and
//! the tree builder give, or `None`, in which case the caller parses the text with pest.
//!
//! It is a recursive-descent rendering of `grammar.pest`, rule by rule, with pest's semantics:
//! blanks (`WHITESPACE`) are skipped between the parts of a non-atomic rule and nowhere else,
//! choices are ordered, repetitions are greedy and never give back what they matched. It builds
//! the AST as it goes, with the tree builder's spans (trailing blanks left out), values
//! ([`super::values`]) and comment attachment ([`attach`]).
//!
//! Invariant: `Some` only when pest accepts the text and the tree builder reports nothing, and
//! then the very policy they build. The parser keeps it by deciding every choice, optional part
//! and end of a repetition on what pest would see there (a keyword, a character class), and by
//! giving up (`None`) wherever pest would fail, backtrack out of a part it had started, or build
//! an error: an unclosed string, an unknown escape, a bad limit or sandbox, a version that does
//! not fit. Giving up is always safe; the caller's pest parse then decides, with diagnostics.
//! No function calls itself, so the nesting depth is fixed by the grammar.
//!
//! It also covers the lexical pass ([`super::lex::check`]), which is therefore not run before
//! it: no token but a comment or a string holds a `#` or a `"` byte, so in a text it accepts,
//! each of those bytes outside comments and strings opens one, just as the lexical pass reads
//! it, and every string it accepts is closed on its line with only known escapes.
//!
//! `tests/it/differential.rs` and the `policy_parse` fuzz target compare it with pest.

mod limits;
mod lists;
mod rules;
mod scan;

use super::attach::{Attach, same_line};

use crate::ast::{
    Agent, Comment, Example, ExampleRequest, Item, ItemKind, Limit, Policy, Sandbox, Span, Spanned,
    StandaloneRule, Statement, StatementKind, Tier,
};

/// Parses `text` if it is a clean policy file (see the module docs); `None` otherwise.
pub(crate) fn parse(text: &str) -> Option<Policy> {
    let scratch = lists::Scratch::default();
    Fast {
        text,
        bytes: text.as_bytes(),
        scratch: &scratch,
    }
    .file()
}

/// The text being parsed. Every method takes a byte offset and returns what it matched with
/// the offset after it; `None` means "give up".
#[derive(Clone, Copy)]
struct Fast<'a> {
    text: &'a str,
    bytes: &'a [u8],
    scratch: &'a lists::Scratch,
}

/// A value and the offset just after it.
type Parsed<T> = Option<(T, usize)>;

/// A `{ }` body: its items, a comment on the line of `{`, and the comments before `}`.
struct Body {
    items: Vec<Item>,
    header: Option<Comment>,
    end: Vec<Comment>,
}

/// What `default`, `opaque`, `limits`, `env` and `sandbox` say, at the top level or in a body.
enum Shared {
    Default(Spanned<crate::ast::Verdict>),
    Opaque(Spanned<crate::ast::Verdict>),
    Limits(Vec<Spanned<Limit>>, Vec<Comment>),
    Env(Vec<Spanned<String>>),
    Sandbox(Spanned<Sandbox>),
}

impl Fast<'_> {
    /// `file = { SOI ~ "\u{FEFF}"? ~ gap ~ (statement ~ end ~ gap)* ~ EOI }`
    fn file(self) -> Option<Policy> {
        let mut p = self.skip(0);
        if self.looking_at(p, "\u{FEFF}".as_bytes()) {
            p = self.skip(p + 3);
        }
        let mut attach = Attach::new(self.text);
        p = self.gap(p, &mut |c| attach.comment(c))?;
        // After the statements only the end of the text may follow: anything else that does
        // not start a statement is a syntax error.
        while p < self.bytes.len() {
            let (statement, q) = self.statement(p)?;
            attach.node(statement);
            let q = self.end(self.skip(q), &mut attach)?;
            p = self.gap(q, &mut |c| attach.comment(c))?;
        }
        let (statements, trailing_comments) = attach.finish();
        Some(Policy {
            statements,
            trailing_comments,
        })
    }

    /// `gap = _{ (comment | nl | ";")* }`, with the blanks around it; returns where the next
    /// token starts.
    fn gap(self, mut p: usize, sink: &mut impl FnMut(Comment)) -> Option<usize> {
        loop {
            p = self.skip(p);
            match self.byte(p) {
                Some(b'#') => {
                    let (comment, q) = self.comment(p)?;
                    sink(comment);
                    p = q;
                }
                Some(b'\n' | b';') => p += 1,
                _ => return Some(p),
            }
        }
    }

    /// `end = { ";" | comment? ~ (nl | &EOI) }`
    fn end(self, p: usize, attach: &mut Attach<'_, Statement>) -> Option<usize> {
        match self.byte(p) {
            Some(b';' | b'\n') => Some(p + 1),
            None => Some(p),
            Some(b'#') => {
                let (comment, q) = self.comment(p)?;
                attach.comment(comment);
                let q = self.skip(q);
                match self.byte(q) {
                    Some(b'\n') => Some(q + 1),
                    None => Some(q),
                    Some(_) => None,
                }
            }
            Some(_) => None,
        }
    }

    /// `item_end = { ";" | comment? ~ nl | &"}" }`
    fn item_end(self, p: usize, attach: &mut Attach<'_, Item>) -> Option<usize> {
        match self.byte(p) {
            Some(b';' | b'\n') => Some(p + 1),
            Some(b'}') => Some(p),
            Some(b'#') => {
                let (comment, q) = self.comment(p)?;
                attach.comment(comment);
                let q = self.skip(q);
                (self.byte(q) == Some(b'\n')).then_some(q + 1)
            }
            _ => None,
        }
    }

    /// One `statement`, from its first keyword.
    fn statement(self, p: usize) -> Parsed<Statement> {
        let (keyword, k) = self.keyword(p);
        let mut leading = Vec::new();
        let mut trailing = None;
        let (kind, end) = match keyword {
            "version" => {
                let start = self.skip(k);
                let end = self.number(start)?;
                let node = self.text.get(start..end)?.parse::<u32>().ok()?;
                let span = start..end;
                (StatementKind::Version(Spanned { node, span }), end)
            }
            "paths" => {
                let (name, q) = self.name(self.skip(k))?;
                let q = self.skip(q);
                if self.byte(q) != Some(b'=') {
                    return None;
                }
                let (members, end) = self.path_list(self.skip(q + 1))?;
                (StatementKind::Paths { name, members }, end)
            }
            "tier" => {
                let ((tier, header), end) = self.tier(None, k)?;
                trailing = header;
                (StatementKind::Tier(tier), end)
            }
            "lock" => match self.keyword(self.skip(k)) {
                ("tier", k2) => {
                    let ((tier, header), end) = self.tier(Some(p..k), k2)?;
                    trailing = header;
                    (StatementKind::Tier(tier), end)
                }
                _ => {
                    let (rule, end) = self.standalone(p)?;
                    (StatementKind::Rule(rule), end)
                }
            },
            "allow" | "ask" | "deny" => {
                let (rule, end) = self.standalone(p)?;
                (StatementKind::Rule(rule), end)
            }
            "agent" => {
                let ((agent, header), end) = self.agent(k)?;
                trailing = header;
                (StatementKind::Agent(agent), end)
            }
            "example" => {
                let (example, end) = self.example(k)?;
                (StatementKind::Example(example), end)
            }
            _ => {
                let (shared, end) = self.shared(p, keyword, k)?;
                let kind = match shared {
                    Shared::Default(v) => StatementKind::Default(v),
                    Shared::Opaque(v) => StatementKind::Opaque(v),
                    Shared::Limits(limits, comments) => {
                        leading = comments;
                        StatementKind::Limits(limits)
                    }
                    Shared::Env(names) => StatementKind::Env(names),
                    Shared::Sandbox(sandbox) => StatementKind::Sandbox(sandbox),
                };
                (kind, end)
            }
        };
        let statement = Statement {
            leading,
            trailing,
            kind,
            span: p..end,
        };
        Some((statement, end))
    }

    /// `default_stmt`, `opaque_stmt`, `limits_stmt`, `env_stmt` or `sandbox_stmt`, whose
    /// keyword (ending at `k`) starts at `p`.
    fn shared(self, p: usize, keyword: &str, k: usize) -> Parsed<Shared> {
        let q = self.skip(k);
        Some(match keyword {
            "default" => {
                let (verdict, end) = self.verdict(q)?;
                (Shared::Default(verdict), end)
            }
            "opaque" => {
                let (verdict, end) = self.verdict(q)?;
                (Shared::Opaque(verdict), end)
            }
            "limits" => {
                let ((limits, comments), end) = self.limits(q)?;
                (Shared::Limits(limits, comments), end)
            }
            "env" => {
                let (names, end) = self.token_list(q)?;
                (Shared::Env(names), end)
            }
            "sandbox" => {
                let (sandbox, end) = self.sandbox(p, q)?;
                (Shared::Sandbox(sandbox), end)
            }
            _ => return None,
        })
    }

    /// `tier_stmt` after `tier` (which ends at `k`).
    fn tier(self, lock: Option<Span>, k: usize) -> Parsed<(Tier, Option<Comment>)> {
        let (name, q) = self.name(self.skip(k))?;
        let q = self.skip(q);
        if self.byte(q) != Some(b':') {
            return None;
        }
        let (verdict, q) = self.verdict(self.skip(q + 1))?;
        let (reason, q) = self.reason(self.skip(q))?;
        let (body, end) = self.body(self.skip(q))?;
        let tier = Tier {
            lock,
            name,
            verdict,
            reason,
            items: body.items,
            end_comments: body.end,
        };
        Some(((tier, body.header), end))
    }

    /// `str_tok?` for the reason of a tier or rule; returns where the next token starts.
    fn reason(self, p: usize) -> Parsed<Option<Spanned<String>>> {
        if self.byte(p) != Some(b'"') {
            return Some((None, p));
        }
        let (reason, q) = self.string(p)?;
        Some((Some(reason), self.skip(q)))
    }

    /// `agent_stmt` after `agent` (which ends at `k`).
    fn agent(self, k: usize) -> Parsed<(Agent, Option<Comment>)> {
        let (name, q) = self.name(self.skip(k))?;
        let mut q = self.skip(q);
        let mut extends = None;
        if let ("extends", k2) = self.keyword(q) {
            let (parent, r) = self.name(self.skip(k2))?;
            extends = Some(parent);
            q = self.skip(r);
        }
        let (body, end) = self.body(q)?;
        let agent = Agent {
            name,
            extends,
            items: body.items,
            end_comments: body.end,
        };
        Some(((agent, body.header), end))
    }

    /// `example_stmt` after `example` (which ends at `k`).
    fn example(self, k: usize) -> Parsed<Example> {
        let (verdict, q) = self.verdict(self.skip(k))?;
        let mut q = self.skip(q);
        let mut agent = None;
        if let ("agent", k2) = self.keyword(q) {
            let (name, r) = self.name(self.skip(k2))?;
            agent = Some(name);
            q = self.skip(r);
        }
        let (request, end) = match self.keyword(q) {
            ("tool", k3) => {
                let (name, r) = self.token(self.skip(k3))?;
                let s = self.skip(r);
                if self.byte(s) == Some(b'"') {
                    let (path, end) = self.string(s)?;
                    let path = Some(path);
                    (ExampleRequest::Tool { name, path }, end)
                } else {
                    (ExampleRequest::Tool { name, path: None }, r)
                }
            }
            _ => {
                let (command, end) = self.string(q)?;
                (ExampleRequest::Command(command), end)
            }
        };
        let example = Example {
            verdict,
            agent,
            request,
        };
        Some((example, end))
    }

    /// `sandbox_stmt` from `p`, whose kind starts at `q`.
    fn sandbox(self, p: usize, q: usize) -> Parsed<Spanned<Sandbox>> {
        let (kind, mut end) = self.word(q)?;
        let mut image = None;
        if let ("image", k) = self.keyword(self.skip(end)) {
            let (name, r) = self.token(self.skip(k))?;
            image = Some(name.node);
            end = r;
        }
        let node = match (kind.node.as_str(), image) {
            ("native", None) => Sandbox::Native,
            ("wasi", image) => Sandbox::Wasi { image },
            // `native` with an image, or an unknown sandbox: the tree builder reports it.
            _ => return None,
        };
        Some((Spanned { node, span: p..end }, end))
    }

    /// `body = { lbrace ~ gap ~ (item ~ item_end ~ gap)* ~ rbrace }`
    fn body(self, p: usize) -> Parsed<Body> {
        if self.byte(p) != Some(b'{') {
            return None;
        }
        let open_end = p + 1;
        let mut attach = Attach::new(self.text);
        let mut header = None;
        // A comment on the line of `{`, before any item, is the body's header.
        let mut q = self.gap(open_end, &mut |c: Comment| {
            if header.is_none() && same_line(self.text, open_end, c.span.start) {
                header = Some(c);
            } else {
                attach.comment(c);
            }
        })?;
        while self.byte(q) != Some(b'}') {
            let (item, r) = self.item(q)?;
            attach.node(item);
            let r = self.item_end(self.skip(r), &mut attach)?;
            q = self.gap(r, &mut |c| attach.comment(c))?;
        }
        let (items, end) = attach.finish();
        Some((Body { items, header, end }, q + 1))
    }

    /// One `item`, from its first keyword.
    fn item(self, p: usize) -> Parsed<Item> {
        let (keyword, k) = self.keyword(p);
        let mut leading = Vec::new();
        let (kind, end) = match keyword {
            "exec" | "fs" | "tools" | "net" | "pipe" => {
                let (rule, end) = self.rule_body(p)?;
                (ItemKind::Rule(rule), end)
            }
            "lock" | "allow" | "ask" | "deny" => {
                let (rule, end) = self.standalone(p)?;
                (ItemKind::Standalone(rule), end)
            }
            "tiers" => {
                let (names, end) = self.separated(self.skip(k), b',', Self::name)?;
                (ItemKind::Tiers(names), end)
            }
            _ => {
                let (shared, end) = self.shared(p, keyword, k)?;
                let kind = match shared {
                    Shared::Default(v) => ItemKind::Default(v),
                    Shared::Opaque(v) => ItemKind::Opaque(v),
                    Shared::Limits(limits, comments) => {
                        leading = comments;
                        ItemKind::Limits(limits)
                    }
                    Shared::Env(names) => ItemKind::Env(names),
                    Shared::Sandbox(sandbox) => ItemKind::Sandbox(sandbox),
                };
                (kind, end)
            }
        };
        let item = Item {
            leading,
            trailing: None,
            kind,
            span: p..end,
        };
        Some((item, end))
    }

    /// `standalone = { lock? ~ verdict ~ str_tok? ~ rule_body }`
    fn standalone(self, p: usize) -> Parsed<StandaloneRule> {
        let (lock, q) = match self.keyword(p) {
            ("lock", k) => (Some(p..k), self.skip(k)),
            _ => (None, p),
        };
        let (verdict, q) = self.verdict(q)?;
        let (reason, q) = self.reason(self.skip(q))?;
        let (rule, end) = self.rule_body(q)?;
        let rule = StandaloneRule {
            lock,
            verdict,
            reason,
            rule,
        };
        Some((rule, end))
    }

    /// `token ~ (comma ~ token)*`
    fn token_list(self, p: usize) -> Parsed<Vec<Spanned<String>>> {
        self.separated(p, b',', Self::token)
    }
}
