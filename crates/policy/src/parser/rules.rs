//! The tree builder for rule bodies: `tools`, `exec`, `pipe`, `fs`, `net`, and exec patterns.

use pest::iterators::Pair;

use super::Rule;
use super::build::Builder;
use crate::ast::{
    ArgAlt, Condition, ConditionKind, ExecPattern, FsAccess, Net, PathRef, Rule as AstRule, Spanned, Words,
};

fn is_token(r: Rule) -> bool {
    matches!(
        r,
        Rule::word | Rule::pword | Rule::fword | Rule::string | Rule::unclosed_string
    )
}

impl Builder<'_> {
    /// A rule body.
    pub(super) fn rule(&mut self, pair: Pair<'_, Rule>) -> AstRule {
        let span = self.span(&pair);
        match pair.as_rule() {
            Rule::tools_rule => {
                let mut names = Vec::new();
                for inner in pair.into_inner() {
                    if is_token(inner.as_rule()) {
                        names.push(self.token(&inner));
                    }
                }
                AstRule::Tools(names)
            }
            Rule::exec_rule => {
                let patterns: Vec<_> = pair
                    .into_inner()
                    .filter(|p| p.as_rule() == Rule::pattern)
                    .collect();
                AstRule::Exec(patterns.into_iter().map(|p| self.pattern(p)).collect())
            }
            Rule::pipe_rule => {
                let mut patterns = pair
                    .into_inner()
                    .filter(|p| matches!(p.as_rule(), Rule::pattern | Rule::pipe_from))
                    .collect::<Vec<_>>()
                    .into_iter();
                let empty = ExecPattern {
                    command: Words::new(),
                    args: Vec::new(),
                    conditions: Vec::new(),
                    span,
                };
                let from = patterns
                    .next()
                    .map_or_else(|| empty.clone(), |p| self.pattern(p));
                let into = patterns.next().map_or(empty, |p| self.pattern(p));
                AstRule::Pipe { from, into }
            }
            Rule::fs_rule => self.fs(pair),
            Rule::net_rule => self.net(pair),
            other => {
                self.unexpected(other, span);
                AstRule::Tools(Vec::new())
            }
        }
    }

    fn fs(&mut self, pair: Pair<'_, Rule>) -> AstRule {
        let span = self.span(&pair);
        let mut access = Spanned {
            node: FsAccess::Read,
            span,
        };
        let mut lists = Vec::new();
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::fs_access => {
                    let node = if inner.as_str() == "write" {
                        FsAccess::Write
                    } else {
                        FsAccess::Read
                    };
                    access = Spanned {
                        node,
                        span: self.span(&inner),
                    };
                }
                Rule::path_list => lists.push(self.path_list(inner)),
                _ => {}
            }
        }
        let mut lists = lists.into_iter();
        let paths = lists.next().unwrap_or_default();
        let except = lists.next().unwrap_or_default();
        AstRule::Fs {
            access,
            paths,
            except,
        }
    }

    /// A comma list of path patterns and set names.
    pub(super) fn path_list(&mut self, pair: Pair<'_, Rule>) -> Vec<PathRef> {
        let mut out = Vec::new();
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::set_name => out.push(PathRef::Set(self.spanned_str(&inner))),
                Rule::string | Rule::unclosed_string => {
                    out.push(PathRef::Pattern(self.string(&inner)));
                }
                _ => {}
            }
        }
        out
    }

    fn net(&mut self, pair: Pair<'_, Rule>) -> AstRule {
        let span = self.span(&pair);
        let mut net = Spanned {
            node: Net::None,
            span,
        };
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::net_none => {
                    net = Spanned {
                        node: Net::None,
                        span: self.span(&inner),
                    }
                }
                Rule::net_any => {
                    net = Spanned {
                        node: Net::Any,
                        span: self.span(&inner),
                    }
                }
                Rule::net_hosts => {
                    let span = self.span(&inner);
                    let mut hosts = Vec::new();
                    for h in inner.into_inner() {
                        if is_token(h.as_rule()) {
                            hosts.push(self.token(&h));
                        }
                    }
                    net = Spanned {
                        node: Net::Hosts(hosts),
                        span,
                    };
                }
                _ => {}
            }
        }
        AstRule::Net(net)
    }

    /// Every token directly inside a pair.
    fn ptokens(&mut self, pair: Pair<'_, Rule>) -> Vec<Spanned<String>> {
        let inner = pair.into_inner();
        // At most one token per pair inside (the others are `(`, `|`, `)`, `unless`, `with`).
        let mut out = Vec::with_capacity(inner.len());
        for inner in inner {
            if is_token(inner.as_rule()) {
                out.push(self.token(&inner));
            }
        }
        out
    }

    /// `COMMAND [ARG...] [unless FLAGS] [with FLAGS]...`
    pub(super) fn pattern(&mut self, pair: Pair<'_, Rule>) -> ExecPattern {
        let span = self.span(&pair);
        let mut pattern = ExecPattern {
            command: Words::new(),
            args: Vec::new(),
            conditions: Vec::new(),
            span,
        };
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::command | Rule::pipe_command => pattern.command = Words::from_vec(self.ptokens(inner)),
                Rule::arg | Rule::pipe_arg => {
                    let span = self.span(&inner);
                    let mut alternatives = Vec::new();
                    for part in inner.into_inner() {
                        match part.as_rule() {
                            Rule::seq | Rule::pipe_seq => alternatives.push(self.ptokens(part)),
                            r if is_token(r) => alternatives.push(vec![self.token(&part)]),
                            _ => {}
                        }
                    }
                    pattern.args.push(ArgAlt { alternatives, span });
                }
                Rule::condition | Rule::pipe_condition => {
                    let span = self.span(&inner);
                    let kind = match inner.clone().into_inner().next() {
                        Some(k) if k.as_str() == "with" => ConditionKind::With,
                        _ => ConditionKind::Unless,
                    };
                    let flags = self.ptokens(inner);
                    pattern.conditions.push(Condition { kind, flags, span });
                }
                _ => {}
            }
        }
        if pattern.command.is_empty() {
            // The grammar always gives a command; failing closed if it ever does not.
            self.error(
                crate::error::Code::Parse,
                pattern.span.clone(),
                String::from("a pattern needs a command word"),
                None,
            );
        }
        pattern
    }
}
