//! The tree builder: pest pairs -> typed AST, with the checks the grammar leaves open.

use pest::iterators::Pair;

use super::Rule;
use super::attach::{Event, attach, same_line};
use super::values;
use crate::ast::{
    Agent, Comment, Example, ExampleRequest, Item, ItemKind, Limit, Policy, Sandbox, Span, Spanned,
    StandaloneRule, Statement, StatementKind, Tier, Verdict,
};
use crate::error::{Code, Diagnostic, Diagnostics};

/// Builds the AST and collects every error it finds on the way.
pub(crate) struct Builder<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    errors: Vec<Diagnostic>,
}

/// A `{ }` body: its items, a comment on the line of `{`, and the comments before `}`.
struct Body {
    items: Vec<Item>,
    header: Option<Comment>,
    end: Vec<Comment>,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(file: &'a str, text: &'a str) -> Self {
        Builder {
            file,
            text,
            errors: Vec::new(),
        }
    }

    /// The AST, or every error found.
    pub(crate) fn finish(self, policy: Policy) -> Result<Policy, Diagnostics> {
        if self.errors.is_empty() {
            Ok(policy)
        } else {
            Err(Diagnostics(self.errors))
        }
    }

    /// Records an error. Past [`super::MAX_DIAGNOSTICS`] errors are dropped: each diagnostic
    /// holds a copy of the text, so hostile input must not multiply it.
    pub(super) fn error(&mut self, code: Code, span: Span, message: String, help: Option<String>) {
        if self.errors.len() >= super::MAX_DIAGNOSTICS {
            return;
        }
        let mut d = Diagnostic::new(code, self.file, self.text, span, message);
        if let Some(help) = help {
            d = d.with_help(help);
        }
        self.errors.push(d);
    }

    /// The span of a pair, without trailing blanks.
    pub(super) fn span(&self, pair: &Pair<'_, Rule>) -> Span {
        let s = pair.as_span();
        let trimmed = pair.as_str().trim_end_matches([' ', '\t', '\r']);
        s.start()..s.start() + trimmed.len()
    }

    pub(super) fn spanned_str(&self, pair: &Pair<'_, Rule>) -> Spanned<String> {
        Spanned {
            node: pair.as_str().to_string(),
            span: self.span(pair),
        }
    }

    pub(super) fn comment(&self, pair: &Pair<'_, Rule>) -> Comment {
        let text = pair
            .clone()
            .into_inner()
            .next()
            .map(|p| p.as_str())
            .unwrap_or_default();
        Comment {
            text: text.to_string(),
            span: self.span(pair),
        }
    }

    /// Pushes the comments a separator (`end`, `item_end`) holds.
    fn separator_comments<T>(&self, pair: Pair<'_, Rule>, events: &mut Vec<Event<T>>) {
        for inner in pair.into_inner() {
            if inner.as_rule() == Rule::comment {
                events.push(Event::Comment(self.comment(&inner)));
            }
        }
    }

    /// The whole file.
    pub(crate) fn file(&mut self, pair: Pair<'_, Rule>) -> Policy {
        let mut events = Vec::new();
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::comment => events.push(Event::Comment(self.comment(&inner))),
                Rule::end => self.separator_comments(inner, &mut events),
                Rule::EOI => {}
                _ => events.push(Event::Node(self.statement(inner))),
            }
        }
        let (statements, trailing_comments) = attach(self.text, events);
        Policy {
            statements,
            trailing_comments,
        }
    }

    fn statement(&mut self, pair: Pair<'_, Rule>) -> Statement {
        let span = self.span(&pair);
        let mut leading = Vec::new();
        let mut trailing = None;
        let kind = match pair.as_rule() {
            Rule::version_stmt => StatementKind::Version(self.version(pair)),
            Rule::default_stmt => StatementKind::Default(self.last_verdict(pair)),
            Rule::opaque_stmt => StatementKind::Opaque(self.last_verdict(pair)),
            Rule::paths_stmt => {
                let mut name = Spanned {
                    node: String::new(),
                    span: span.clone(),
                };
                let mut members = Vec::new();
                for inner in pair.into_inner() {
                    match inner.as_rule() {
                        Rule::name => name = self.spanned_str(&inner),
                        Rule::path_list => members = self.path_list(inner),
                        _ => {}
                    }
                }
                StatementKind::Paths { name, members }
            }
            Rule::tier_stmt => {
                let (tier, header) = self.tier(pair);
                trailing = header;
                StatementKind::Tier(tier)
            }
            Rule::agent_stmt => {
                let (agent, header) = self.agent(pair);
                trailing = header;
                StatementKind::Agent(agent)
            }
            Rule::limits_stmt => {
                let (limits, comments) = self.limits(pair);
                leading = comments;
                StatementKind::Limits(limits)
            }
            Rule::env_stmt => StatementKind::Env(self.tokens(pair)),
            Rule::sandbox_stmt => StatementKind::Sandbox(self.sandbox(pair)),
            Rule::example_stmt => StatementKind::Example(self.example(pair)),
            Rule::standalone => StatementKind::Rule(self.standalone(pair)),
            other => {
                self.unexpected(other, span.clone());
                StatementKind::Env(Vec::new())
            }
        };
        Statement {
            leading,
            trailing,
            kind,
            span,
        }
    }

    fn item(&mut self, pair: Pair<'_, Rule>) -> Item {
        let span = self.span(&pair);
        let mut leading = Vec::new();
        let kind = match pair.as_rule() {
            Rule::tiers_item => {
                let names = pair
                    .into_inner()
                    .filter(|p| p.as_rule() == Rule::name)
                    .map(|p| self.spanned_str(&p));
                ItemKind::Tiers(names.collect())
            }
            Rule::default_stmt => ItemKind::Default(self.last_verdict(pair)),
            Rule::opaque_stmt => ItemKind::Opaque(self.last_verdict(pair)),
            Rule::limits_stmt => {
                let (limits, comments) = self.limits(pair);
                leading = comments;
                ItemKind::Limits(limits)
            }
            Rule::env_stmt => ItemKind::Env(self.tokens(pair)),
            Rule::sandbox_stmt => ItemKind::Sandbox(self.sandbox(pair)),
            Rule::standalone => ItemKind::Standalone(self.standalone(pair)),
            _ => ItemKind::Rule(self.rule(pair)),
        };
        Item {
            leading,
            trailing: None,
            kind,
            span,
        }
    }

    /// Reports a pair the grammar should not have produced here.
    pub(super) fn unexpected(&mut self, r: Rule, span: Span) {
        self.error(
            Code::Parse,
            span,
            format!("unexpected {r:?} in the parse tree"),
            None,
        );
    }

    fn version(&mut self, pair: Pair<'_, Rule>) -> Spanned<u32> {
        let span = self.span(&pair);
        let Some(number) = pair.into_inner().find(|p| p.as_rule() == Rule::number) else {
            return Spanned { node: 0, span };
        };
        let span = self.span(&number);
        match number.as_str().parse::<u32>() {
            Ok(n) => Spanned { node: n, span },
            Err(_) => {
                self.error(
                    Code::Version,
                    span.clone(),
                    format!("version `{}` is not supported", number.as_str()),
                    Some(String::from("write `version 1`")),
                );
                Spanned { node: 0, span }
            }
        }
    }

    /// The last `verdict` inside a pair.
    fn last_verdict(&mut self, pair: Pair<'_, Rule>) -> Spanned<Verdict> {
        let span = self.span(&pair);
        let found = pair
            .into_inner()
            .filter(|p| p.as_rule() == Rule::verdict)
            .last();
        match found {
            Some(v) => self.verdict(&v),
            None => Spanned {
                node: Verdict::Deny,
                span,
            },
        }
    }

    pub(super) fn verdict(&self, pair: &Pair<'_, Rule>) -> Spanned<Verdict> {
        let node = match pair.as_str() {
            "allow" => Verdict::Allow,
            "ask" => Verdict::Ask,
            _ => Verdict::Deny,
        };
        Spanned {
            node,
            span: self.span(pair),
        }
    }

    /// A string literal (or an unclosed one, which is an error).
    pub(super) fn string(&mut self, pair: &Pair<'_, Rule>) -> Spanned<String> {
        let span = self.span(pair);
        let raw = pair.as_str();
        if pair.as_rule() == Rule::unclosed_string {
            self.error(
                Code::Parse,
                span.start..span.start + 1,
                String::from("unclosed string"),
                Some(String::from("a string ends with `\"` on the same line")),
            );
            return Spanned {
                node: String::new(),
                span,
            };
        }
        let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
        match values::unescape(inner) {
            Ok(node) => Spanned { node, span },
            Err(e) => {
                let at = span.start + 1 + e.at.start..span.start + 1 + e.at.end;
                self.error(Code::Parse, at, e.message, e.help);
                Spanned {
                    node: String::new(),
                    span,
                }
            }
        }
    }

    /// A word or a string.
    pub(super) fn token(&mut self, pair: &Pair<'_, Rule>) -> Spanned<String> {
        match pair.as_rule() {
            Rule::string | Rule::unclosed_string => self.string(pair),
            _ => self.spanned_str(pair),
        }
    }

    /// Every word or string directly inside a pair.
    fn tokens(&mut self, pair: Pair<'_, Rule>) -> Vec<Spanned<String>> {
        let mut out = Vec::new();
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::word | Rule::string | Rule::unclosed_string => out.push(self.token(&inner)),
                _ => {}
            }
        }
        out
    }

    /// The optional reason string of a tier or standalone rule.
    fn reason(&mut self, pair: &Pair<'_, Rule>) -> Option<Spanned<String>> {
        match pair.as_rule() {
            Rule::string | Rule::unclosed_string => Some(self.string(pair)),
            _ => None,
        }
    }

    fn tier(&mut self, pair: Pair<'_, Rule>) -> (Tier, Option<Comment>) {
        let span = self.span(&pair);
        let mut tier = Tier {
            lock: None,
            name: Spanned {
                node: String::new(),
                span: span.clone(),
            },
            verdict: Spanned {
                node: Verdict::Deny,
                span,
            },
            reason: None,
            items: Vec::new(),
            end_comments: Vec::new(),
        };
        let mut header = None;
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::lock => tier.lock = Some(self.span(&inner)),
                Rule::name => tier.name = self.spanned_str(&inner),
                Rule::verdict => tier.verdict = self.verdict(&inner),
                Rule::string | Rule::unclosed_string => tier.reason = self.reason(&inner),
                Rule::body => {
                    let body = self.body(inner);
                    tier.items = body.items;
                    tier.end_comments = body.end;
                    header = body.header;
                }
                _ => {}
            }
        }
        (tier, header)
    }

    fn agent(&mut self, pair: Pair<'_, Rule>) -> (Agent, Option<Comment>) {
        let span = self.span(&pair);
        let mut agent = Agent {
            name: Spanned {
                node: String::new(),
                span,
            },
            extends: None,
            items: Vec::new(),
            end_comments: Vec::new(),
        };
        let mut header = None;
        let mut names = 0;
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::name if names == 0 => {
                    names += 1;
                    agent.name = self.spanned_str(&inner);
                }
                Rule::name => agent.extends = Some(self.spanned_str(&inner)),
                Rule::body => {
                    let body = self.body(inner);
                    agent.items = body.items;
                    agent.end_comments = body.end;
                    header = body.header;
                }
                _ => {}
            }
        }
        (agent, header)
    }

    fn body(&mut self, pair: Pair<'_, Rule>) -> Body {
        let mut events = Vec::new();
        let mut open_end = None;
        let mut header = None;
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::lbrace => open_end = Some(inner.as_span().end()),
                Rule::rbrace => {}
                Rule::comment => {
                    let c = self.comment(&inner);
                    let first = !events.iter().any(|e| matches!(e, Event::Node(_)));
                    let on_brace_line =
                        open_end.is_some_and(|end| same_line(self.text, end, c.span.start));
                    if first && header.is_none() && on_brace_line {
                        header = Some(c);
                    } else {
                        events.push(Event::Comment(c));
                    }
                }
                Rule::item_end => self.separator_comments(inner, &mut events),
                _ => events.push(Event::Node(self.item(inner))),
            }
        }
        let (items, end) = attach(self.text, events);
        Body { items, header, end }
    }

    /// `limits { ... }`: the limits and the comments written inside the braces.
    fn limits(&mut self, pair: Pair<'_, Rule>) -> (Vec<Spanned<Limit>>, Vec<Comment>) {
        let mut limits = Vec::new();
        let mut comments = Vec::new();
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::comment => comments.push(self.comment(&inner)),
                Rule::limit => {
                    if let Some(limit) = self.limit(inner) {
                        limits.push(limit);
                    }
                }
                _ => {}
            }
        }
        (limits, comments)
    }

    fn limit(&mut self, pair: Pair<'_, Rule>) -> Option<Spanned<Limit>> {
        let span = self.span(&pair);
        let mut words = pair.into_inner();
        let key = words.next()?;
        let value = words.next()?;
        match values::limit(key.as_str(), value.as_str()) {
            None => {
                let mut help = format!("the limits are {}", list_words(&values::LIMIT_KEYS));
                if let Some(near) = values::nearest(key.as_str(), &values::LIMIT_KEYS) {
                    help = format!("did you mean `{near}`? {help}");
                }
                self.error(
                    Code::BadValue,
                    self.span(&key),
                    format!("unknown limit `{}`", key.as_str()),
                    Some(help),
                );
                None
            }
            Some(Err(e)) => {
                let start = value.as_span().start();
                self.error(
                    Code::BadValue,
                    start + e.at.start..start + e.at.end,
                    e.message,
                    e.help,
                );
                None
            }
            Some(Ok(node)) => Some(Spanned { node, span }),
        }
    }

    fn sandbox(&mut self, pair: Pair<'_, Rule>) -> Spanned<Sandbox> {
        let span = self.span(&pair);
        let mut kind = None;
        let mut image = None;
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::word if kind.is_none() => kind = Some(inner),
                Rule::word | Rule::string | Rule::unclosed_string => {
                    image = Some(self.token(&inner))
                }
                _ => {}
            }
        }
        let Some(kind) = kind else {
            return Spanned {
                node: Sandbox::Native,
                span,
            };
        };
        let node = match kind.as_str() {
            "native" => {
                if let Some(image) = &image {
                    self.error(
                        Code::Parse,
                        image.span.clone(),
                        String::from("`image` applies only to the `wasi` sandbox"),
                        Some(String::from("write `sandbox wasi image NAME`")),
                    );
                }
                Sandbox::Native
            }
            "wasi" => Sandbox::Wasi {
                image: image.map(|i| i.node),
            },
            other => {
                let mut help = String::from("the sandboxes are `native` and `wasi`");
                if let Some(near) = values::nearest(other, &["native", "wasi"]) {
                    help = format!("did you mean `{near}`? {help}");
                }
                self.error(
                    Code::Parse,
                    self.span(&kind),
                    format!("unknown sandbox `{other}`"),
                    Some(help),
                );
                Sandbox::Native
            }
        };
        Spanned { node, span }
    }

    fn example(&mut self, pair: Pair<'_, Rule>) -> Example {
        let span = self.span(&pair);
        let mut verdict = Spanned {
            node: Verdict::Deny,
            span: span.clone(),
        };
        let mut agent = None;
        let mut request = ExampleRequest::Command(Spanned {
            node: String::new(),
            span,
        });
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::verdict => verdict = self.verdict(&inner),
                Rule::name => agent = Some(self.spanned_str(&inner)),
                Rule::string | Rule::unclosed_string => {
                    request = ExampleRequest::Command(self.string(&inner));
                }
                Rule::example_tool => {
                    let mut tokens = Vec::new();
                    for t in inner.into_inner() {
                        match t.as_rule() {
                            Rule::word | Rule::string | Rule::unclosed_string => {
                                tokens.push(self.token(&t));
                            }
                            _ => {}
                        }
                    }
                    let mut tokens = tokens.into_iter();
                    if let Some(name) = tokens.next() {
                        request = ExampleRequest::Tool {
                            name,
                            path: tokens.next(),
                        };
                    }
                }
                _ => {}
            }
        }
        Example {
            verdict,
            agent,
            request,
        }
    }

    fn standalone(&mut self, pair: Pair<'_, Rule>) -> StandaloneRule {
        let span = self.span(&pair);
        let mut lock = None;
        let mut verdict = Spanned {
            node: Verdict::Deny,
            span,
        };
        let mut reason = None;
        let mut rule = None;
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::lock => lock = Some(self.span(&inner)),
                Rule::verdict => verdict = self.verdict(&inner),
                Rule::string | Rule::unclosed_string => reason = self.reason(&inner),
                _ => rule = Some(self.rule(inner)),
            }
        }
        let rule = rule.unwrap_or(crate::ast::Rule::Tools(Vec::new()));
        StandaloneRule {
            lock,
            verdict,
            reason,
            rule,
        }
    }
}

/// "`a`, `b` and `c`"
pub(crate) fn list_words(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}
