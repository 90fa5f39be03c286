//! Lowering validated syntax trees into compiled layers ([`LayerC`]) and agent profiles.

use super::exec::{ExecMatcher, Mode};
use super::model::{
    AgentId, AgentProfile, ExecEntry, FsEntry, FsGrant, LayerC, NetC, PipeC, RuleC, Scoped,
    TierC, min_limits, set_limit,
};
use super::paths::{PathPattern, parse_pattern};
use super::sets::{FileAst, LayerAst, SetEnv};
use crate::ast::{
    self, FsAccess, ItemKind, PathRef, Rule, Sandbox, Span, Spanned, StatementKind, Verdict,
};
use super::refs::{Refs, Source};
use crate::decision::{Backend, Limits};
use std::collections::HashMap;
use std::sync::Arc;

/// Everything compiled.
#[derive(Debug, Clone, Default)]
pub(crate) struct Built {
    pub(crate) layers: Vec<LayerC>,
    pub(crate) rules: Refs,
    pub(crate) agents: HashMap<String, AgentProfile>,
    pub(crate) agent_ids: HashMap<String, AgentId>,
}

/// How a rule is placed: its verdict, tier, lock, agent scope and reason.
struct Place<'a> {
    verdict: Verdict,
    tier: Option<(usize, &'a str)>,
    lock: bool,
    agent: Option<AgentId>,
    reason: Option<Arc<str>>,
    /// The statement span for standalone rules (their rule text and position).
    standalone: Option<&'a Span>,
}

struct Lower<'a, 'b> {
    li: usize,
    file: &'a FileAst,
    /// The file's index in `rules`.
    source: usize,
    env: &'b SetEnv<'a>,
    layer: &'b mut LayerC,
    rules: &'b mut Refs,
}

/// Lowers every layer. Assumes validation passed; anything inconsistent is skipped.
pub(crate) fn build(layers: &[LayerAst]) -> Built {
    let env = SetEnv::new(layers);
    let mut built = Built::default();
    intern_agents(layers, &mut built.agent_ids);
    for (li, layer) in layers.iter().enumerate() {
        let mut lc = LayerC::new(layer.kind);
        for file in &layer.files {
            let source = built.rules.source(Source::new(&file.name, &file.text, &file.starts));
            let mut lw = Lower { li, file, source, env: &env, layer: &mut lc, rules: &mut built.rules };
            lw.file_statements(&built.agent_ids);
        }
        built.layers.push(lc);
    }
    built.agents = agent_profiles(layers, &built.agent_ids);
    built
}

fn intern_agents(layers: &[LayerAst], ids: &mut HashMap<String, AgentId>) {
    for st in layers.iter().flat_map(|l| &l.files).flat_map(|f| &f.policy.statements) {
        if let StatementKind::Agent(a) = &st.kind {
            let next = AgentId::try_from(ids.len()).unwrap_or(AgentId::MAX);
            ids.entry(a.name.node.clone()).or_insert(next);
        }
    }
}

fn backend(s: &Sandbox) -> Backend {
    match s {
        Sandbox::Native => Backend::Native,
        Sandbox::Wasi { image } => Backend::Wasi { image: image.clone() },
    }
}

fn net_c(n: &ast::Net) -> NetC {
    match n {
        ast::Net::None => NetC::None,
        ast::Net::Any => NetC::Any,
        ast::Net::Hosts(h) => NetC::Hosts(h.iter().map(|s| s.node.clone()).collect()),
    }
}

impl<'a> Lower<'a, '_> {
    fn file_statements(&mut self, agent_ids: &HashMap<String, AgentId>) {
        let file = self.file;
        for st in &file.policy.statements {
            match &st.kind {
                StatementKind::Default(v) => {
                    self.layer.default.get_or_insert(v.node);
                }
                StatementKind::Opaque(v) => {
                    self.layer.opaque.get_or_insert(v.node);
                }
                StatementKind::Limits(ls) => {
                    for l in ls {
                        set_limit(&mut self.layer.limits, &l.node);
                    }
                }
                StatementKind::Env(names) => {
                    self.layer.env.extend(names.iter().map(|n| n.node.clone()));
                }
                StatementKind::Sandbox(s) => {
                    self.layer.sandbox.get_or_insert(backend(&s.node));
                }
                StatementKind::Tier(t) => self.tier(t),
                StatementKind::Rule(r) => {
                    let place = Place {
                        verdict: r.verdict.node,
                        tier: None,
                        lock: r.lock.is_some(),
                        agent: None,
                        reason: r.reason.as_ref().map(|s| Arc::from(s.node.as_str())),
                        standalone: Some(&st.span),
                    };
                    self.rule(&place, &r.rule, &st.span);
                }
                StatementKind::Agent(a) => {
                    let id = agent_ids.get(&a.name.node).copied();
                    for item in &a.items {
                        if let ItemKind::Standalone(r) = &item.kind {
                            let place = Place {
                                verdict: r.verdict.node,
                                tier: None,
                                lock: r.lock.is_some(),
                                agent: id,
                                reason: r.reason.as_ref().map(|s| Arc::from(s.node.as_str())),
                                standalone: Some(&item.span),
                            };
                            self.rule(&place, &r.rule, &item.span);
                        }
                    }
                }
                StatementKind::Version(_)
                | StatementKind::Paths { .. }
                | StatementKind::Example(_) => {}
            }
        }
    }

    fn tier(&mut self, t: &'a ast::Tier) {
        let idx = self.layer.tiers.len();
        self.layer.tiers.push(TierC {
            name: t.name.node.as_str().into(),
            verdict: t.verdict.node,
            reads: Vec::new(),
            writes: Vec::new(),
            net: Vec::new(),
            limits: Limits::default(),
            env: Vec::new(),
            sandbox: None,
        });
        let reason: Option<Arc<str>> = t.reason.as_ref().map(|s| Arc::from(s.node.as_str()));
        for item in &t.items {
            match &item.kind {
                ItemKind::Rule(r) => {
                    let place = Place {
                        verdict: t.verdict.node,
                        tier: Some((idx, t.name.node.as_str())),
                        lock: t.lock.is_some(),
                        agent: None,
                        reason: reason.clone(),
                        standalone: None,
                    };
                    self.rule(&place, r, &item.span);
                }
                ItemKind::Limits(ls) => {
                    if let Some(tc) = self.layer.tiers.get_mut(idx) {
                        for l in ls {
                            set_limit(&mut tc.limits, &l.node);
                        }
                    }
                }
                ItemKind::Env(names) => {
                    if let Some(tc) = self.layer.tiers.get_mut(idx) {
                        tc.env.extend(names.iter().map(|n| n.node.clone()));
                    }
                }
                ItemKind::Sandbox(s) => {
                    if let Some(tc) = self.layer.tiers.get_mut(idx) {
                        tc.sandbox.get_or_insert(backend(&s.node));
                    }
                }
                _ => {}
            }
        }
    }

    /// Registers a rule reference (written at `span`; its text the first line of the
    /// statement for a standalone rule, else of `span`) and a compiled rule; returns the
    /// layer-local rule index.
    fn add(&mut self, place: &Place<'_>, span: &Span) -> usize {
        self.add_as(place, span, place.standalone.unwrap_or(span), false)
    }

    /// [`Lower::add`] with its text the first line of `text` (after `exec ` when `exec`).
    fn add_as(&mut self, place: &Place<'_>, span: &Span, text: &Span, exec: bool) -> usize {
        let id = self.rules.len();
        self.rules.push(self.source, self.layer.kind, span.start, text, exec);
        let local = self.layer.rules.len();
        self.layer.rules.push(RuleC {
            id,
            verdict: place.verdict,
            tier: place.tier.map(|(i, _)| i),
            lock: place.lock,
            agent: place.agent,
            reason: place.reason.clone(),
        });
        local
    }

    fn rule(&mut self, place: &Place<'_>, rule: &Rule, span: &Span) {
        match rule {
            Rule::Tools(names) => {
                let r = self.add(place, span);
                for n in names {
                    self.layer.tools.push(&n.node, r);
                }
            }
            Rule::Exec(patterns) => {
                let mode = if place.verdict == Verdict::Allow { Mode::Front } else { Mode::Anywhere };
                for p in patterns {
                    // A pattern of a list stands for itself: `exec` and the pattern.
                    let (at, exec) = match place.standalone {
                        Some(s) if patterns.len() == 1 => (s, false),
                        _ => (&p.span, true),
                    };
                    let r = self.add_as(place, at, at, exec);
                    self.layer.exec.push(ExecEntry { rule: r, matcher: ExecMatcher::new(p), mode });
                }
            }
            Rule::Pipe { from, into } => {
                let r = self.add(place, span);
                let mode = if place.verdict == Verdict::Allow { Mode::Front } else { Mode::Anywhere };
                self.layer.pipes.push(PipeC {
                    rule: r,
                    from: ExecMatcher::new(from),
                    into: ExecMatcher::new(into),
                    mode,
                });
            }
            Rule::Fs { access, paths, except } => self.fs(place, access, paths, except, span),
            Rule::Net(n) => {
                self.add(place, span);
                let net = net_c(&n.node);
                match (place.verdict, place.tier) {
                    (Verdict::Deny, _) => {
                        self.layer.net_denies.push(Scoped { agent: place.agent, value: net })
                    }
                    (_, Some((t, _))) => {
                        if let Some(tc) = self.layer.tiers.get_mut(t) {
                            tc.net.push(net);
                        }
                    }
                    (Verdict::Allow, None) if place.agent.is_none() => self.layer.grant_net.push(net),
                    _ => {}
                }
            }
        }
    }

    fn patterns(&self, refs: &[PathRef]) -> Vec<PathPattern> {
        self.env.flatten(self.li, refs).iter().filter_map(|p| parse_pattern(p).ok()).collect()
    }

    fn fs(
        &mut self,
        place: &Place<'_>,
        access: &Spanned<FsAccess>,
        paths: &[PathRef],
        except: &[PathRef],
        span: &Span,
    ) {
        let r = self.add(place, span);
        let pats = self.patterns(paths);
        let excepts = self.patterns(except);
        for p in &pats {
            let entry =
                FsEntry { rule: r, access: access.node, verdict: place.verdict, except: excepts.clone(), in_tier: place.tier.is_some() };
            if place.verdict != Verdict::Allow {
                self.layer.fs_restrict.insert(p.clone(), entry.clone());
            }
            self.layer.fs.insert(p.clone(), entry);
        }
        let grants: Vec<FsGrant> =
            pats.iter().map(|p| FsGrant { pattern: p.clone(), except: excepts.clone() }).collect();
        match (place.verdict, place.tier, access.node) {
            (Verdict::Deny, _, FsAccess::Read) => {
                let list = pats.into_iter().map(|p| Scoped { agent: place.agent, value: p });
                self.layer.deny_paths.extend(list);
            }
            (Verdict::Deny, _, FsAccess::Write) => {
                let list = pats.into_iter().map(|p| Scoped { agent: place.agent, value: p });
                self.layer.deny_write_paths.extend(list);
            }
            (_, Some((t, _)), acc) => {
                if let Some(tc) = self.layer.tiers.get_mut(t) {
                    match acc {
                        FsAccess::Read => tc.reads.extend(grants),
                        FsAccess::Write => tc.writes.extend(grants),
                    }
                }
            }
            (Verdict::Allow, None, FsAccess::Read) if place.agent.is_none() => {
                self.layer.grant_reads.extend(grants)
            }
            (Verdict::Allow, None, FsAccess::Write) if place.agent.is_none() => {
                self.layer.grant_writes.extend(grants)
            }
            _ => {}
        }
    }
}

/// Merges every definition of every agent (all layers) with those of its parents.
fn agent_profiles(
    layers: &[LayerAst],
    ids: &HashMap<String, AgentId>,
) -> HashMap<String, AgentProfile> {
    let mut defs: HashMap<&str, Vec<&ast::Agent>> = HashMap::new();
    for st in layers.iter().flat_map(|l| &l.files).flat_map(|f| &f.policy.statements) {
        if let StatementKind::Agent(a) = &st.kind {
            defs.entry(a.name.node.as_str()).or_default().push(a);
        }
    }
    // Only the base layer can introduce an agent: a lower layer that defined one the base does
    // not know would make a request decidable that the base alone denies (unknown agent).
    let base: std::collections::HashSet<&str> = layers
        .first()
        .into_iter()
        .flat_map(|l| &l.files)
        .flat_map(|f| &f.policy.statements)
        .filter_map(|st| match &st.kind {
            StatementKind::Agent(a) => Some(a.name.node.as_str()),
            _ => None,
        })
        .collect();
    let mut out = HashMap::new();
    for name in defs.keys().filter(|n| base.contains(**n)) {
        // The chain: the agent first, then its ancestors (breadth first, no repeats).
        let mut chain: Vec<&str> = vec![name];
        let mut in_chain: std::collections::HashSet<&str> = std::collections::HashSet::from([*name]);
        let mut i = 0;
        while let Some(n) = chain.get(i).copied() {
            for d in defs.get(n).into_iter().flatten() {
                if let Some(p) = &d.extends
                    && defs.contains_key(p.node.as_str())
                    && in_chain.insert(p.node.as_str())
                {
                    chain.push(p.node.as_str());
                }
            }
            i += 1;
        }
        let mut prof = AgentProfile { name: (*name).to_string(), ..AgentProfile::default() };
        for n in &chain {
            if let Some(id) = ids.get(*n) {
                prof.scope.push(*id);
            }
            for d in defs.get(n).into_iter().flatten() {
                merge_agent(&mut prof, d);
            }
        }
        out.insert((*name).to_string(), prof);
    }
    out
}

fn merge_agent(prof: &mut AgentProfile, a: &ast::Agent) {
    for item in &a.items {
        match &item.kind {
            ItemKind::Tiers(names) => {
                let list: Vec<String> = names.iter().map(|n| n.node.clone()).collect();
                prof.tiers = Some(match prof.tiers.take() {
                    None => list,
                    Some(old) => old.into_iter().filter(|t| list.contains(t)).collect(),
                });
            }
            ItemKind::Default(v) => prof.default = prof.default.max(Some(v.node)),
            ItemKind::Opaque(v) => prof.opaque = prof.opaque.max(Some(v.node)),
            ItemKind::Limits(ls) => {
                let mut l = Limits::default();
                for x in ls {
                    set_limit(&mut l, &x.node);
                }
                min_limits(&mut prof.limits, &l);
            }
            ItemKind::Rule(Rule::Net(n)) => prof.net.push(net_c(&n.node)),
            ItemKind::Env(names) => prof.env.push(names.iter().map(|n| n.node.clone()).collect()),
            ItemKind::Sandbox(s) => {
                prof.sandbox.get_or_insert(backend(&s.node));
            }
            _ => {}
        }
    }
}
