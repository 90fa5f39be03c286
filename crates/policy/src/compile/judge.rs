//! Judging one part across layers: which rules match (definitely or maybe), how each layer
//! answers (base default, lower-layer abstention, opaque), `lock`, and agent tier checks.

use super::model::{AgentProfile, LayerC, RuleC};
use crate::ast::Verdict;
use smallvec::SmallVec;

/// Rule indices of one part, inline: a part rarely has more than a few matching rules, and a
/// decision should not allocate for them.
pub(crate) type RuleIds = SmallVec<[usize; 8]>;

/// Deciding rules as (layer, layer-local rule), inline for the same reason.
pub(crate) type Deciding = SmallVec<[(usize, usize); 4]>;

/// Matches found in one layer for one part.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    /// Layer-local indices of rules that match for certain.
    pub(crate) definite: RuleIds,
    /// An allow rule would match for some value of the unknown words.
    pub(crate) maybe_allow: bool,
    /// An ask/deny rule would match for some value of the unknown words.
    pub(crate) maybe_restrict: bool,
}

impl Collector {
    pub(crate) fn add(&mut self, rule: usize, verdict: Verdict, tri: super::exec::Tri) {
        use super::exec::Tri;
        match tri {
            Tri::Yes => {
                if !self.definite.contains(&rule) {
                    self.definite.push(rule);
                }
            }
            Tri::Maybe if verdict == Verdict::Allow => self.maybe_allow = true,
            Tri::Maybe => self.maybe_restrict = true,
            Tri::No => {}
        }
    }
}

/// How a part's verdict came about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum How {
    /// Rules decided.
    Rules,
    /// No rule matched: the default.
    Default,
    /// Unknown words: the opaque verdict.
    Opaque,
    /// The agent may not use the tier.
    AgentTier(String),
}

/// The outcome for one part.
#[derive(Debug, Clone)]
pub(crate) struct Judged {
    pub(crate) verdict: Verdict,
    /// Deciding rules as (layer, layer-local rule).
    pub(crate) rules: Deciding,
    /// The reported tier as (layer, tier).
    pub(crate) tier: Option<(usize, usize)>,
    /// The tier the base layer placed the part in (decides grants).
    pub(crate) base_tier: Option<usize>,
    pub(crate) how: How,
}

/// What a judgement needs to know about the request.
pub(crate) struct Judge<'p> {
    pub(crate) layers: &'p [LayerC],
    pub(crate) agent: Option<&'p AgentProfile>,
    pub(crate) opaque: Verdict,
    pub(crate) base_default: Verdict,
}

/// The answers of the layers read so far, merged as they come: the most severe verdict, how the
/// first layer giving it decided, and the deciding rules of every layer giving it.
struct Merged {
    verdict: Option<Verdict>,
    how: Option<How>,
    rules: Deciding,
}

impl Merged {
    /// Adds layer `li`'s answer; `definite` are its certain matches.
    fn add(&mut self, li: usize, layer: &LayerC, verdict: Verdict, how: How, definite: &[usize]) {
        if self.verdict.is_some_and(|v| v > verdict) {
            return;
        }
        if self.verdict.is_none_or(|v| v < verdict) {
            self.verdict = Some(verdict);
            self.how = None;
            self.rules.clear();
        }
        if how == How::Rules {
            for r in definite {
                if layer.rules.get(*r).is_some_and(|r| r.verdict == verdict) {
                    self.rules.push((li, *r));
                }
            }
        }
        self.how.get_or_insert(how);
    }
}

impl<'p> Judge<'p> {
    /// Whether a rule applies to this request's agent.
    pub(crate) fn applies(&self, rule: &RuleC) -> bool {
        match rule.agent {
            None => true,
            Some(id) => self.agent.is_some_and(|a| a.scope.contains(&id)),
        }
    }

    /// Judges one part. `collect` fills the matches of one layer. Without `use_default`, a
    /// part nothing matches is no part at all (`None`).
    ///
    /// Between deciding rules of equal verdict in several tiers, a command or tool takes the
    /// highest-ranked tier (the author placed it there for the grants it needs); a file access
    /// (`least_privilege`) takes the lowest one that covers it: reading a workspace file is a
    /// read even though the write tier's `fs write` also covers it.
    pub(crate) fn judge(
        &self,
        use_default: bool,
        least_privilege: bool,
        mut collect: impl FnMut(&LayerC, &mut Collector),
    ) -> Option<Judged> {
        let mut merged = Merged { verdict: None, how: None, rules: Deciding::new() };
        let mut base_tier = None;
        // One collector for every layer: its list is cleared, not reallocated.
        let mut c = Collector::default();
        for (li, layer) in self.layers.iter().enumerate() {
            c.definite.clear();
            c.maybe_allow = false;
            c.maybe_restrict = false;
            collect(layer, &mut c);
            if c.definite.is_empty() && !c.maybe_allow && !c.maybe_restrict {
                // Nothing matched here: the layer's default, if this part takes defaults.
                let default = if li == 0 { Some(self.base_default) } else { layer.default };
                if let (true, Some(v)) = (use_default, default) {
                    merged.add(li, layer, v, How::Default, &[]);
                }
                continue;
            }
            c.definite.retain(|r| layer.rules.get(*r).is_some_and(|r| self.applies(r)));
            let verdict_of = |r: &usize| layer.rules.get(*r).map(|r| r.verdict);
            let def_max = c.definite.iter().filter_map(verdict_of).max();
            if li == 0 {
                let tiers = c
                    .definite
                    .iter()
                    .filter_map(|r| layer.rules.get(*r))
                    .filter(|r| Some(r.verdict) == def_max)
                    .filter_map(|r| r.tier);
                base_tier = if least_privilege { tiers.min() } else { tiers.max() };
            }
            let mut answer: Option<(Verdict, How)> = if li == 0 {
                match def_max {
                    Some(v) => Some((v, How::Rules)),
                    None if c.maybe_allow => Some((self.opaque, How::Opaque)),
                    None if use_default => Some((self.base_default, How::Default)),
                    None => None,
                }
            } else {
                let restrict = c
                    .definite
                    .iter()
                    .filter_map(verdict_of)
                    .filter(|v| *v != Verdict::Allow)
                    .max();
                match (restrict, c.definite.is_empty()) {
                    (Some(v), _) => Some((v, How::Rules)),
                    (None, false) => None,
                    (None, true) if c.maybe_allow => layer.default.map(|_| (self.opaque, How::Opaque)),
                    (None, true) if use_default => layer.default.map(|d| (d, How::Default)),
                    (None, true) => None,
                }
            };
            if c.maybe_restrict && answer.as_ref().is_none_or(|(v, _)| *v < self.opaque) {
                answer = Some((self.opaque, How::Opaque));
            }
            let locked = c.definite.iter().any(|r| layer.rules.get(*r).is_some_and(|r| r.lock));
            if let Some((verdict, how)) = answer {
                merged.add(li, layer, verdict, how, &c.definite);
            }
            if locked {
                break;
            }
        }
        let Merged { verdict, how, rules } = merged;
        let verdict = verdict?;
        let how = if rules.is_empty() { how.unwrap_or(How::Default) } else { How::Rules };
        let tier = self.reported_tier(&rules, least_privilege);
        let mut judged = Judged { verdict, rules, tier, base_tier, how };
        self.check_agent_tiers(&mut judged);
        Some(judged)
    }

    /// The highest-ranked (or, for `least_privilege`, the lowest-ranked) tier of the deciding
    /// rules, in the topmost layer that has one.
    fn reported_tier(&self, rules: &[(usize, usize)], least_privilege: bool) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (l, r) in rules {
            let Some(t) = self.layers.get(*l).and_then(|x| x.rules.get(*r)).and_then(|r| r.tier) else {
                continue;
            };
            let keep = |bl: usize, bt: usize| {
                bl < *l || (bl == *l && if least_privilege { bt <= t } else { bt >= t })
            };
            best = match best {
                Some((bl, bt)) if keep(bl, bt) => Some((bl, bt)),
                _ => Some((*l, t)),
            };
        }
        best
    }

    /// The name of tier `t` of layer `l`.
    pub(crate) fn tier_name(&self, l: usize, t: usize) -> Option<&'p str> {
        self.layers.get(l)?.tiers.get(t).map(|t| &*t.name)
    }

    /// The name of tier `t` of layer `l`, shared.
    pub(crate) fn tier_arc(&self, l: usize, t: usize) -> Option<std::sync::Arc<str>> {
        self.layers.get(l)?.tiers.get(t).map(|t| std::sync::Arc::clone(&t.name))
    }

    /// An agent limited to some tiers: a part decided in another tier is denied.
    fn check_agent_tiers(&self, j: &mut Judged) {
        let Some(allowed) = self.agent.and_then(|a| a.tiers.as_ref()) else { return };
        if j.verdict == Verdict::Deny {
            return;
        }
        let reported = j.tier.and_then(|(l, t)| self.tier_name(l, t));
        let base = j.base_tier.and_then(|t| self.tier_name(0, t));
        for name in [reported, base].into_iter().flatten() {
            if !allowed.iter().any(|a| a == name) {
                j.verdict = Verdict::Deny;
                j.how = How::AgentTier(name.to_string());
                return;
            }
        }
    }
}
