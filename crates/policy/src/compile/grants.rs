//! Combining parts into a [`Decision`], and the grants of the decided tier: file and network
//! grants of the base layer's tier and every allow/ask tier declared before it, narrowed by
//! every layer's deny rules and by the agent; limits the smallest that applies.

use super::decide::Decider;
use super::glob::Glob;
use super::model::{AgentProfile, FsGrant, LayerC, NetC, min_limits};
use super::paths::{Anchors, PathPattern};
use crate::ast::Verdict;
use crate::decision::{Backend, Decision, Grants, Limits, Network, Part, Subject};
use std::cmp::Reverse;
use std::sync::{Arc, OnceLock, RwLock};

/// A decision that refuses the request itself (unknown agent, ...).
pub(crate) fn refusal(problem: String, reason: String) -> Decision {
    let part = Part::new(Subject::Request { problem }, Verdict::Deny, None, reason, Vec::new(), None);
    Decision::from_parts(Verdict::Deny, smallvec::smallvec![part], Arc::default(), None)
}

/// Ranking of a reported tier: base-layer tiers first, then declaration order.
fn rank(t: (usize, usize)) -> (Reverse<usize>, usize) {
    (Reverse(t.0), t.1)
}

/// What combining needs of the parts beyond their verdicts, noted as each is judged.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Per verdict (allow, ask, deny): the best-ranked reported tier, as (layer, tier), among
    /// the parts with that verdict, and the first part that has it.
    ranks: [Option<((usize, usize), usize)>; 3],
    /// The highest tier the base layer placed any part in (decides grants).
    base_tier: Option<usize>,
    /// Every tier the base layer placed a part in: a compound command runs under the limits
    /// and the backend of each (`Plans::constrain`).
    bases: smallvec::SmallVec<[usize; 4]>,
}

impl Tally {
    /// Notes judged part number `part`.
    pub(crate) fn note(
        &mut self,
        verdict: Verdict,
        tier: Option<(usize, usize)>,
        base: Option<usize>,
        part: usize,
    ) {
        if let (Some(t), Some(slot)) = (tier, self.ranks.get_mut(verdict_slot(verdict)))
            && slot.is_none_or(|(b, _)| rank(t) > rank(b))
        {
            *slot = Some((t, part));
        }
        self.base_tier = self.base_tier.max(base);
        if let Some(b) = base
            && !self.bases.contains(&b)
        {
            self.bases.push(b);
        }
    }

    /// The part whose tier a decision reports: among the deciding parts when it is denied (a
    /// denied request does not run in any tier the others asked for), else among all parts.
    fn tier(&self, verdict: Verdict) -> Option<usize> {
        if verdict == Verdict::Deny {
            return self.ranks.get(verdict_slot(verdict)).copied().flatten().map(|(_, p)| p);
        }
        self.ranks.iter().flatten().copied().max_by_key(|(t, _)| rank(*t)).map(|(_, p)| p)
    }
}

fn verdict_slot(v: Verdict) -> usize {
    match v {
        Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    }
}

/// The decision from the judged parts.
pub(crate) fn combine(d: Decider<'_>, agent: Option<&AgentProfile>, with_grants: bool) -> Decision {
    let verdict = d.parts.iter().map(|p| p.verdict).max().unwrap_or(Verdict::Deny);
    let grants = if with_grants {
        grants(&d, verdict, d.tally.base_tier, agent)
    } else {
        Arc::clone(&d.set.cache.none)
    };
    let tier_of = d.tally.tier(verdict);
    Decision::from_parts(verdict, d.parts, grants, tier_of)
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// Order-keeping de-duplication (the first of equal elements stays), without copying any.
fn dedup<T: Eq + std::hash::Hash>(v: &mut Vec<T>) {
    let keep: Vec<bool> = {
        let mut seen = rustc_hash::FxHashSet::default();
        v.iter().map(|x| seen.insert(x)).collect()
    };
    let mut keep = keep.into_iter();
    v.retain(|_| keep.next().unwrap_or(true));
}

/// Path lists shared by every plan: each plan takes a prefix of each (tiers only add), so
/// memory stays linear in the number of rules however many tiers there are.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Plans {
    reads: Vec<PathPattern>,
    writes: Vec<PathPattern>,
    deny: Vec<PathPattern>,
    deny_write: Vec<PathPattern>,
    cuts: Vec<Cut>,
}

/// The grants of one base tier (or of no tier): prefix lengths and the rest.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Cut {
    reads: usize,
    writes: usize,
    deny: usize,
    deny_write: usize,
    #[serde(with = "super::stored::network")]
    network: Network,
    limits: Limits,
    env: Vec<String>,
    #[serde(with = "super::stored::backend")]
    sandbox: Option<Backend>,
}

fn add_fs(list: &[FsGrant], to: &mut Vec<PathPattern>, carve: &mut Vec<PathPattern>) {
    for g in list {
        to.push(g.pattern.clone());
        carve.extend(g.except.iter().cloned());
    }
}

impl Plans {
    /// Plans for "no tier" (index 0) and each base tier `t` (index `t + 1`).
    pub(crate) fn new(layers: &[LayerC]) -> Plans {
        let mut p = Plans::default();
        let Some(base) = layers.first() else {
            p.cuts.push(Cut::default());
            return p;
        };
        let mut limits = Limits::default();
        let mut net_denies: Vec<&NetC> = Vec::new();
        for layer in layers {
            min_limits(&mut limits, &layer.limits);
            p.deny.extend(layer.deny_paths.iter().filter(|x| x.agent.is_none()).map(|x| x.value.clone()));
            let dw = layer.deny_write_paths.iter().filter(|x| x.agent.is_none());
            p.deny_write.extend(dw.map(|x| x.value.clone()));
            net_denies.extend(layer.net_denies.iter().filter(|n| n.agent.is_none()).map(|n| &n.value));
        }
        add_fs(&base.grant_reads, &mut p.reads, &mut p.deny);
        add_fs(&base.grant_writes, &mut p.writes, &mut p.deny_write);
        let mut network = union(&base.grant_net.iter().collect::<Vec<_>>());
        let net_of = |n: &Network| net_denies.iter().fold(n.clone(), |n, d| remove(n, d));
        let mut env = base.env.clone();
        dedup(&mut env);
        let cut = p.cut(net_of(&network), limits, env.clone(), base.sandbox.clone());
        p.cuts.push(cut);
        for tier in &base.tiers {
            if tier.verdict != Verdict::Deny {
                add_fs(&tier.reads, &mut p.reads, &mut p.deny);
                add_fs(&tier.writes, &mut p.writes, &mut p.deny_write);
                let mut nets: Vec<&NetC> = tier.net.iter().collect();
                let current = NetC::from(&network);
                nets.push(&current);
                network = union(&nets);
            }
            let mut cut_limits = limits;
            min_limits(&mut cut_limits, &tier.limits);
            let mut cut_env = env.clone();
            cut_env.extend(tier.env.iter().cloned());
            dedup(&mut cut_env);
            let sandbox = tier.sandbox.clone().or_else(|| base.sandbox.clone());
            let cut = p.cut(net_of(&network), cut_limits, cut_env, sandbox);
            p.cuts.push(cut);
        }
        p
    }

    /// A cut at the lists' current lengths: what every tier so far adds.
    fn cut(&self, network: Network, limits: Limits, env: Vec<String>, sandbox: Option<Backend>) -> Cut {
        Cut {
            reads: self.reads.len(),
            writes: self.writes.len(),
            deny: self.deny.len(),
            deny_write: self.deny_write.len(),
            network,
            limits,
            env,
            sandbox,
        }
    }

    fn len(&self) -> usize {
        self.cuts.len()
    }

    /// Narrows `g`, the grants of the highest of the base tiers `bases` (a compound command's
    /// parts), by what every one of them sets: the smallest limits, and the WASI backend when
    /// any of them runs there (a shell string then does not run at all: the WASI backend runs
    /// one tool). Appending a part from a later tier never escapes a tier's limits or backend.
    fn constrain(&self, g: &mut Grants, bases: &[usize]) {
        for cut in bases.iter().filter_map(|b| self.cuts.get(b + 1)) {
            min_limits(&mut g.limits, &cut.limits);
            if let Some(wasi @ Backend::Wasi { .. }) = &cut.sandbox
                && g.sandbox == Backend::Native
            {
                g.sandbox = wasi.clone();
            }
        }
    }

    fn expand(&self, plan: usize, anchors: &Anchors) -> Grants {
        let Some(cut) = self.cuts.get(plan) else { return Grants::default() };
        let ex = |v: &[PathPattern], n: usize| {
            let mut out: Vec<String> = v.iter().take(n).map(|p| p.expand(anchors)).collect();
            dedup(&mut out);
            out
        };
        Grants {
            read: ex(&self.reads, cut.reads),
            write: ex(&self.writes, cut.writes),
            deny: ex(&self.deny, cut.deny),
            deny_write: ex(&self.deny_write, cut.deny_write),
            network: cut.network.clone(),
            limits: cut.limits,
            env: cut.env.clone(),
            sandbox: cut.sandbox.clone().unwrap_or(Backend::Native),
        }
    }
}

impl From<&Network> for NetC {
    fn from(n: &Network) -> NetC {
        match n {
            Network::None => NetC::None,
            Network::Any => NetC::Any,
            Network::Hosts(h) => NetC::Hosts(h.clone()),
        }
    }
}

/// Expanded grants per context, filled on first use.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    /// The first context decided in (an engine usually has one): read without a lock.
    first: OnceLock<FirstEntry>,
    /// Other contexts.
    entries: RwLock<Vec<CacheEntry>>,
    /// No grants: what every denied request shares.
    none: Arc<Grants>,
}

#[derive(Debug)]
struct FirstEntry {
    workspace: String,
    home: String,
    plans: Vec<OnceLock<Arc<Grants>>>,
}

#[derive(Debug)]
struct CacheEntry {
    workspace: String,
    home: String,
    plans: Vec<Option<Arc<Grants>>>,
}

/// Contexts kept before the cache starts over.
const CACHED_CONTEXTS: usize = 16;

impl Cache {
    fn get(&self, plans: &Plans, plan: usize, anchors: &Anchors) -> Arc<Grants> {
        let first = self.first.get_or_init(|| FirstEntry {
            workspace: anchors.workspace.to_string(),
            home: anchors.home.to_string(),
            plans: (0..plans.len()).map(|_| OnceLock::new()).collect(),
        });
        if first.workspace == *anchors.workspace
            && first.home == *anchors.home
            && let Some(slot) = first.plans.get(plan)
        {
            return Arc::clone(slot.get_or_init(|| Arc::new(plans.expand(plan, anchors))));
        }
        let hit = |e: &CacheEntry| e.workspace == *anchors.workspace && e.home == *anchors.home;
        if let Ok(entries) = self.entries.read()
            && let Some(g) = entries.iter().find(|e| hit(e)).and_then(|e| e.plans.get(plan)?.clone())
        {
            return g;
        }
        let g = Arc::new(plans.expand(plan, anchors));
        if let Ok(mut entries) = self.entries.write() {
            if !entries.iter().any(&hit) {
                if entries.len() >= CACHED_CONTEXTS {
                    entries.clear();
                }
                entries.push(CacheEntry {
                    workspace: anchors.workspace.to_string(),
                    home: anchors.home.to_string(),
                    plans: vec![None; plans.len()],
                });
            }
            if let Some(slot) = entries.iter_mut().find(|e| hit(e)).and_then(|e| e.plans.get_mut(plan)) {
                *slot = Some(Arc::clone(&g));
            }
        }
        g
    }
}

/// The grants of a request that runs: the plan of its base tier, narrowed for its agent. A
/// denied request is granted nothing.
fn grants(
    d: &Decider<'_>,
    verdict: Verdict,
    base_tier: Option<usize>,
    agent: Option<&AgentProfile>,
) -> Arc<Grants> {
    if verdict == Verdict::Deny {
        return Arc::clone(&d.set.cache.none);
    }
    let plan = base_tier.map_or(0, |t| t + 1);
    let mut shared = d.set.cache.get(&d.set.plans, plan, &d.anchors);
    if d.tally.bases.len() > 1 {
        let mut g = Arc::unwrap_or_clone(shared);
        d.set.plans.constrain(&mut g, &d.tally.bases);
        shared = Arc::new(g);
    }
    let Some(a) = agent else { return shared };
    let mut g = Arc::unwrap_or_clone(shared);
    let anchors = &d.anchors;
    let applies = |id: Option<u32>| id.is_some_and(|id| a.scope.contains(&id));
    let mut network = std::mem::take(&mut g.network);
    for layer in d.judge.layers {
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
    min_limits(&mut g.limits, &a.limits);
    for n in &a.net {
        network = intersect(network, n);
    }
    for allowed in &a.env {
        g.env = intersect_names(&g.env, allowed);
    }
    if a.sandbox.is_some() {
        g.sandbox = a.sandbox.clone().unwrap_or_default();
    }
    g.network = network;
    Arc::new(g)
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
    fn dedup_keeps_the_first_of_equal_elements_in_order() {
        let mut v: Vec<String> = ["b", "a", "b", "c", "a", "a", "d"].map(String::from).to_vec();
        dedup(&mut v);
        assert_eq!(v, ["b", "a", "c", "d"].map(String::from).to_vec());
        let mut empty: Vec<String> = Vec::new();
        dedup(&mut empty);
        assert!(empty.is_empty());
    }

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
