//! The fast parser's rule bodies (`tools`, `exec`, `pipe`, `fs`, `net`), path lists and exec
//! patterns.

use super::{Fast, Parsed};
use crate::ast::{ArgAlt, Condition, ExecPattern, FsAccess, Net, PathRef, Rule, Spanned, Words};

impl Fast<'_> {
    /// `rule_body`, from its keyword at `p`.
    pub(super) fn rule_body(self, p: usize) -> Parsed<Rule> {
        let (keyword, k) = self.keyword(p);
        let q = self.skip(k);
        match keyword {
            "exec" => {
                let (patterns, end) = self.separated(q, b',', |f, p| f.pattern(p, false))?;
                Some((Rule::Exec(patterns), end))
            }
            "fs" => self.fs(q),
            "tools" => {
                let (names, end) = self.token_list(q)?;
                Some((Rule::Tools(names), end))
            }
            "net" => self.net(q),
            "pipe" => {
                let (from, end) = self.pattern(q, true)?;
                let k = self.kw_into(self.skip(end))?;
                let (into, end) = self.pattern(self.skip(k), false)?;
                Some((Rule::Pipe { from, into }, end))
            }
            _ => None,
        }
    }

    /// `fs_rule` after `fs`: `fs_access ~ path_list ~ (kw_except ~ path_list)?`
    fn fs(self, p: usize) -> Parsed<Rule> {
        let (node, k) = match self.keyword(p) {
            ("read", k) => (FsAccess::Read, k),
            ("write", k) => (FsAccess::Write, k),
            _ => return None,
        };
        let access = Spanned { node, span: p..k };
        let (paths, mut end) = self.path_list(self.skip(k))?;
        let mut except = Vec::new();
        if let ("except", k) = self.keyword(self.skip(end)) {
            (except, end) = self.path_list(self.skip(k))?;
        }
        let rule = Rule::Fs {
            access,
            paths,
            except,
        };
        Some((rule, end))
    }

    /// `path_list = { path_ref ~ (comma ~ path_ref)* }`
    pub(super) fn path_list(self, p: usize) -> Parsed<Vec<PathRef>> {
        self.separated(p, b',', Self::path_ref)
    }

    /// `path_ref = _{ set_name | str_tok }`, where `set_name = @{ !kw_except ~ name }`.
    fn path_ref(self, p: usize) -> Parsed<PathRef> {
        if self.byte(p) == Some(b'"') {
            let (pattern, end) = self.string(p)?;
            return Some((PathRef::Pattern(pattern), end));
        }
        if self.keyword(p).0 == "except" {
            return None;
        }
        let (name, end) = self.name(p)?;
        Some((PathRef::Set(name), end))
    }

    /// `net_rule` after `net`: `net_none | net_any | net_hosts`
    fn net(self, p: usize) -> Parsed<Rule> {
        let (node, end) = match self.keyword(p) {
            ("none", k) => (Net::None, k),
            ("any", k) => (Net::Any, k),
            ("hosts", k) => {
                let (hosts, end) = self.separated(self.skip(k), b',', Self::string)?;
                (Net::Hosts(hosts), end)
            }
            _ => return None,
        };
        Some((Rule::Net(Spanned { node, span: p..end }), end))
    }

    /// `pattern = { command ~ arg* ~ condition* }`, or `pipe_from` (where `into` is reserved
    /// too) when `pipe`.
    fn pattern(self, p: usize, pipe: bool) -> Parsed<ExecPattern> {
        let (command, mut end) = self.alternatives(p, pipe)?;
        let mut args = Vec::new();
        loop {
            let q = self.skip(end);
            let (alternatives, e) = if self.byte(q) == Some(b'(') {
                self.group(q, pipe)?
            } else if self.at_ptoken(q, pipe) {
                let (token, e) = self.ptoken(q, pipe)?;
                (vec![vec![token]], e)
            } else {
                break;
            };
            args.push(ArgAlt {
                alternatives,
                span: q..e,
            });
            end = e;
        }
        let mut conditions = Vec::new();
        loop {
            let q = self.skip(end);
            let Some((kind, k)) = self.cond_kw(q) else {
                break;
            };
            let (flags, e) = self.alternatives(self.skip(k), pipe)?;
            conditions.push(Condition {
                kind,
                flags: flags.into_vec(),
                span: q..e,
            });
            end = e;
        }
        let pattern = ExecPattern {
            command,
            args,
            conditions,
            span: p..end,
        };
        Some((pattern, end))
    }

    /// A command or the flags of a condition: `lparen ~ ptoken ~ (bar ~ ptoken)* ~ rparen |
    /// ptoken`.
    fn alternatives(self, p: usize, pipe: bool) -> Parsed<Words> {
        if self.byte(p) != Some(b'(') {
            let (token, end) = self.ptoken(p, pipe)?;
            return Some((smallvec::smallvec![token], end));
        }
        let (out, end) = self.separated(self.skip(p + 1), b'|', |f, q| f.ptoken(q, pipe))?;
        self.rparen(end).map(|end| (Words::from_vec(out), end))
    }

    /// An argument group: `lparen ~ seq ~ (bar ~ seq)* ~ rparen`, `seq = { ptoken+ }`.
    fn group(self, p: usize, pipe: bool) -> Parsed<Vec<Vec<Spanned<String>>>> {
        let (out, end) = self.separated(self.skip(p + 1), b'|', |f, q| f.seq(q, pipe))?;
        self.rparen(end).map(|end| (out, end))
    }

    /// `seq = { ptoken+ }`
    fn seq(self, p: usize, pipe: bool) -> Parsed<Vec<Spanned<String>>> {
        self.repeated(p, |f, q| f.at_ptoken(q, pipe), |f, q| f.ptoken(q, pipe))
    }

    /// The end of the `)` that must follow `end`.
    fn rparen(self, end: usize) -> Option<usize> {
        let q = self.skip(end);
        (self.byte(q) == Some(b')')).then_some(q + 1)
    }
}
