//! Combining parts into a [`Decision`], and the grants of the decided tier: file and network
//! grants of the base layer's tier and every allow/ask tier declared before it, narrowed by
//! every layer's deny rules and by the agent; limits the smallest that applies.

use super::decide::{Decider, PartX};
use super::glob::Glob;
use super::model::{AgentProfile, FsGrant, NetC, min_limits};
use super::paths::Anchors;
use crate::ast::Verdict;
use crate::decision::{Backend, Decision, Grants, Network, Part, Subject};
use std::cmp::Reverse;

/// A decision that refuses the request itself (unknown agent, ...).
pub(crate) fn refusal(problem: String, reason: String) -> Decision {
    Decision {
        verdict: Verdict::Deny,
        tier: None,
        reason: reason.clone(),
        rules: vec![],
        parts: vec![Part {
            subject: Subject::Request { problem },
            verdict: Verdict::Deny,
            tier: None,
            reason,
            rules: vec![],
            span: None,
        }],
        grants: Grants::default(),
    }
}

/// Ranking of a reported tier: base-layer tiers first, then declaration order.
fn rank(t: (usize, usize)) -> (Reverse<usize>, usize) {
    (Reverse(t.0), t.1)
}

/// The decision from the judged parts.
pub(crate) fn combine(d: &Decider<'_>, agent: Option<&AgentProfile>) -> Decision {
    let verdict = d.parts.iter().map(|p| p.part.verdict).max().unwrap_or(Verdict::Deny);
    let deciding: Vec<&PartX> = d.parts.iter().filter(|p| p.part.verdict == verdict).collect();
    let ranked: Vec<&PartX> = if verdict == Verdict::Deny { deciding.clone() } else { d.parts.iter().collect() };
    let tier = ranked
        .iter()
        .filter_map(|p| p.rank)
        .max_by_key(|t| rank(*t))
        .and_then(|(l, t)| d.judge.tier_name(l, t))
        .map(str::to_string);
    let mut ids: Vec<usize> = Vec::new();
    for p in &deciding {
        for id in &p.rule_ids {
            if !ids.contains(id) {
                ids.push(*id);
            }
        }
    }
    let rules = ids.iter().filter_map(|id| d.set.rules.get(*id).cloned()).collect();
    let reason = deciding.first().map(|p| p.part.reason.clone()).unwrap_or_default();
    let base_tier = d.parts.iter().filter_map(|p| p.base_tier).max();
    let grants = grants(d, base_tier, agent);
    Decision {
        verdict,
        tier,
        reason,
        rules,
        parts: d.parts.iter().map(|p| p.part.clone()).collect(),
        grants,
    }
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

fn add_grants(list: &[FsGrant], anchors: &Anchors, to: &mut Vec<String>, carve: &mut Vec<String>) {
    for g in list {
        push_unique(to, g.pattern.expand(anchors));
        for x in &g.except {
            push_unique(carve, x.expand(anchors));
        }
    }
}

fn grants(d: &Decider<'_>, base_tier: Option<usize>, agent: Option<&AgentProfile>) -> Grants {
    let anchors = &d.anchors;
    let mut g = Grants::default();
    let layers = d.judge.layers;
    let Some(base) = layers.first() else { return g };
    let mut nets: Vec<&NetC> = base.grant_net.iter().collect();
    add_grants(&base.grant_reads, anchors, &mut g.read, &mut g.deny);
    add_grants(&base.grant_writes, anchors, &mut g.write, &mut g.deny_write);
    let mut limits = crate::decision::Limits::default();
    let mut sandbox = base.sandbox.clone();
    g.env.clone_from(&base.env);
    if let Some(t) = base_tier {
        for tier in base.tiers.iter().take(t + 1).filter(|t| t.verdict != Verdict::Deny) {
            add_grants(&tier.reads, anchors, &mut g.read, &mut g.deny);
            add_grants(&tier.writes, anchors, &mut g.write, &mut g.deny_write);
            nets.extend(tier.net.iter());
        }
        if let Some(tier) = base.tiers.get(t) {
            min_limits(&mut limits, &tier.limits);
            for e in &tier.env {
                push_unique(&mut g.env, e.clone());
            }
            if tier.sandbox.is_some() {
                sandbox.clone_from(&tier.sandbox);
            }
        }
    }
    let applies = |a: Option<u32>| a.is_none_or(|id| agent.is_some_and(|p| p.scope.contains(&id)));
    let mut network = union(&nets);
    for layer in layers {
        min_limits(&mut limits, &layer.limits);
        for p in layer.deny_paths.iter().filter(|p| applies(p.agent)) {
            push_unique(&mut g.deny, p.value.expand(anchors));
        }
        for p in layer.deny_write_paths.iter().filter(|p| applies(p.agent)) {
            push_unique(&mut g.deny_write, p.value.expand(anchors));
        }
        for n in layer.net_denies.iter().filter(|n| applies(n.agent)) {
            network = remove(network, &n.value);
        }
    }
    if let Some(a) = agent {
        min_limits(&mut limits, &a.limits);
        for n in &a.net {
            network = intersect(network, n);
        }
        for allowed in &a.env {
            g.env = intersect_names(&g.env, allowed);
        }
        if a.sandbox.is_some() {
            sandbox.clone_from(&a.sandbox);
        }
    }
    g.network = network;
    g.limits = limits;
    g.sandbox = sandbox.unwrap_or(Backend::Native);
    g
}

fn union(nets: &[&NetC]) -> Network {
    let mut hosts: Vec<String> = Vec::new();
    for n in nets {
        match n {
            NetC::Any => return Network::Any,
            NetC::None => {}
            NetC::Hosts(h) => {
                for x in h {
                    push_unique(&mut hosts, x.clone());
                }
            }
        }
    }
    if hosts.is_empty() { Network::None } else { Network::Hosts(hosts) }
}

/// Removes a denied reach. `Any` minus some hosts cannot be expressed: it becomes `None`.
fn remove(net: Network, deny: &NetC) -> Network {
    match (net, deny) {
        (n, NetC::None) => n,
        (_, NetC::Any) | (Network::Any, NetC::Hosts(_)) => Network::None,
        (Network::None, _) => Network::None,
        (Network::Hosts(h), NetC::Hosts(d)) => {
            let globs: Vec<Glob> = d.iter().map(|x| Glob::new(x)).collect();
            let kept: Vec<String> = h
                .into_iter()
                .filter(|x| !globs.iter().any(|g| g.matches(x) || g.matches(host_of(x))))
                .collect();
            if kept.is_empty() { Network::None } else { Network::Hosts(kept) }
        }
    }
}

fn host_of(h: &str) -> &str {
    h.rsplit_once(':').map_or(h, |(host, _)| host)
}

/// Narrows a network grant to an agent's `net`.
fn intersect(net: Network, with: &NetC) -> Network {
    match (net, with) {
        (_, NetC::None) | (Network::None, _) => Network::None,
        (n, NetC::Any) => n,
        (Network::Any, NetC::Hosts(h)) => Network::Hosts(h.clone()),
        (Network::Hosts(h), NetC::Hosts(a)) => {
            let kept = intersect_names(&h, a);
            if kept.is_empty() { Network::None } else { Network::Hosts(kept) }
        }
    }
}

/// Names (patterns) in both lists: each kept if the other side's patterns match it.
fn intersect_names(a: &[String], b: &[String]) -> Vec<String> {
    let ga: Vec<Glob> = a.iter().map(|x| Glob::new(x)).collect();
    let gb: Vec<Glob> = b.iter().map(|x| Glob::new(x)).collect();
    let mut out = Vec::new();
    for x in a {
        if gb.iter().any(|g| g.matches(x)) {
            push_unique(&mut out, x.clone());
        }
    }
    for x in b {
        if ga.iter().any(|g| g.matches(x)) {
            push_unique(&mut out, x.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_algebra() {
        let hosts = |v: &[&str]| NetC::Hosts(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(union(&[&NetC::None, &hosts(&["a"]), &hosts(&["b"])]), Network::Hosts(vec!["a".into(), "b".into()]));
        assert_eq!(remove(Network::Any, &hosts(&["a"])), Network::None);
        assert_eq!(remove(Network::Hosts(vec!["a:443".into(), "b".into()]), &hosts(&["a"])), Network::Hosts(vec!["b".into()]));
        assert_eq!(intersect(Network::Any, &hosts(&["x"])), Network::Hosts(vec!["x".into()]));
        assert_eq!(intersect(Network::Hosts(vec!["a.github.com".into()]), &hosts(&["*.github.com"])), Network::Hosts(vec!["a.github.com".into()]));
        assert_eq!(intersect(Network::Hosts(vec!["a".into()]), &NetC::None), Network::None);
    }
}
