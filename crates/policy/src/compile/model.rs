//! The compiled, immutable form of one layer and of the agents.

use super::exec::{ExecMatcher, Mode};
use super::glob::Glob;
use super::paths::{PathIndex, PathPattern};
use crate::ast::{FsAccess, Verdict};
use crate::decision::{Backend, LayerKind, Limits};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// A map keyed by words of the policy (command names, path segments, tool names), looked up
/// with words of a request on every decision.
///
/// Its hash is a multiply-rotate over 8-byte words, several times cheaper than SipHash on such
/// short keys. It is not keyed: only the policy's own words are inserted, so a request can make
/// a lookup cost no more than the longest probe the policy's keys already form.
///
/// Keys are shared with the literal globs they come from (`Glob::Literal`): indexing a word
/// copies no text.
pub(crate) type WordMap<V> = HashMap<Arc<str>, V, BuildHasherDefault<WordHasher>>;

/// The hasher of [`WordMap`].
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            if let Some(head) = w.get_mut(..rest.len()) {
                head.copy_from_slice(rest);
            }
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn finish(&self) -> u64 {
        // The table takes its control bits from the top: bring the well-mixed bits there.
        self.0.rotate_left(26)
    }
}

/// Interned agent name.
pub(crate) type AgentId = u32;

/// One compiled rule (one exec pattern, or one tools/fs/pipe/net item).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct RuleC {
    /// Index into `PolicySet::rules`.
    pub(crate) id: usize,
    pub(crate) verdict: Verdict,
    /// Index of the tier in its layer.
    pub(crate) tier: Option<usize>,
    pub(crate) lock: bool,
    /// Only for requests of this agent (or agents extending it).
    pub(crate) agent: Option<AgentId>,
    /// The reason the rule was written with, if any (see [`RuleC::message`]).
    #[serde(with = "super::stored::shared_str_opt")]
    pub(crate) reason: Option<std::sync::Arc<str>>,
}

impl RuleC {
    /// The reason a decision by this rule states: the written one, else what the rule is (its
    /// one-line `text`), where (its `tier`) and what it does. Made when a decision needs it, not
    /// for every rule when the policy compiles.
    pub(crate) fn message(&self, text: &str, tier: Option<&str>) -> std::sync::Arc<str> {
        if let Some(reason) = &self.reason {
            return std::sync::Arc::clone(reason);
        }
        let (head, tail) = match self.verdict {
            Verdict::Allow => ("allowed by `", ""),
            Verdict::Ask => ("`", " asks for confirmation"),
            Verdict::Deny => ("denied by `", ""),
        };
        let mut m = String::with_capacity(head.len() + text.len() + tail.len() + tier.map_or(1, |t| t.len() + 12));
        m.extend([head, text, "`"]);
        if let Some(tier) = tier {
            m.extend([" in tier `", tier, "`"]);
        }
        m.push_str(tail);
        m.into()
    }
}

/// A compiled tier.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct TierC {
    #[serde(with = "super::stored::shared_str")]
    pub(crate) name: std::sync::Arc<str>,
    pub(crate) verdict: Verdict,
    /// File grants: read patterns with their exceptions.
    pub(crate) reads: Vec<FsGrant>,
    /// File grants: write patterns with their exceptions.
    pub(crate) writes: Vec<FsGrant>,
    /// Network grants (allow/ask tiers).
    pub(crate) net: Vec<NetC>,
    pub(crate) limits: Limits,
    pub(crate) env: Vec<String>,
    #[serde(with = "super::stored::backend")]
    pub(crate) sandbox: Option<Backend>,
}

/// A path grant with its carve-outs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct FsGrant {
    pub(crate) pattern: PathPattern,
    pub(crate) except: Vec<PathPattern>,
}

/// A `net` value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum NetC {
    None,
    Any,
    Hosts(Vec<String>),
}

/// An exec pattern with its rule.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct ExecEntry {
    pub(crate) rule: usize,
    pub(crate) matcher: ExecMatcher,
    pub(crate) mode: Mode,
}

/// Exec patterns indexed by literal command word. Stored as its entries alone: the indexes are
/// made again by pushing them in order, which gives the same maps.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(from = "Vec<ExecEntry>", into = "Vec<ExecEntry>")]
pub(crate) struct ExecIndex {
    pub(crate) entries: Vec<ExecEntry>,
    /// Literal base names (`rm`).
    pub(crate) by_name: WordMap<Entries>,
    /// Literal paths (`/usr/bin/rm`).
    pub(crate) by_path: WordMap<Entries>,
    /// Command words with wildcards.
    pub(crate) wild: Vec<usize>,
}

impl ExecIndex {
    pub(crate) fn push(&mut self, entry: ExecEntry) {
        let idx = self.entries.len();
        let mut seen_wild = false;
        for key in entry.matcher.keys() {
            match key {
                Some((lit, false)) => add(&mut self.by_name, lit, idx),
                Some((lit, true)) => add(&mut self.by_path, lit, idx),
                None if !seen_wild => {
                    seen_wild = true;
                    self.wild.push(idx);
                }
                None => {}
            }
        }
        self.entries.push(entry);
    }

    /// Entries whose command word may match (`argv0` as written and its base name), each with
    /// `true` when its command word is known to match (found by a literal), `false` when it
    /// still has to be matched (a wildcard).
    pub(crate) fn candidates<'a>(
        &'a self,
        argv0: &str,
        name: &str,
    ) -> impl Iterator<Item = (bool, &'a ExecEntry)> + use<'a> {
        let a = self.by_name.get(name).into_iter().flatten();
        let b = self.by_path.get(argv0).into_iter().flatten();
        let literal = a.chain(b).map(|i| (true, i));
        let wild = self.wild.iter().map(|i| (false, i));
        literal.chain(wild).filter_map(|(known, i)| Some((known, self.entries.get(*i)?)))
    }
}

impl From<Vec<ExecEntry>> for ExecIndex {
    fn from(entries: Vec<ExecEntry>) -> ExecIndex {
        let mut index = ExecIndex::default();
        for e in entries {
            index.push(e);
        }
        index
    }
}

impl From<ExecIndex> for Vec<ExecEntry> {
    fn from(index: ExecIndex) -> Vec<ExecEntry> {
        index.entries
    }
}

/// The entries one command word names: most words are named by one or two rules, kept inline.
pub(crate) type Entries = smallvec::SmallVec<[usize; 2]>;

/// Adds `i` to the list of `key` in `map` (the key shares the glob's text).
fn add(map: &mut WordMap<Entries>, key: &Arc<str>, i: usize) {
    push_unique(map.entry(Arc::clone(key)).or_default(), i);
}

fn push_unique(v: &mut Entries, i: usize) {
    if v.last() != Some(&i) {
        v.push(i);
    }
}

/// Tools by exact name plus wildcard names.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct ToolIndex {
    pub(crate) exact: WordMap<Vec<usize>>,
    pub(crate) wild: Vec<(Glob, usize)>,
}

impl ToolIndex {
    pub(crate) fn push(&mut self, name: &str, rule: usize) {
        let g = Glob::new(name);
        match g.literal() {
            Some(l) => self.exact.entry(Arc::clone(l)).or_default().push(rule),
            None => self.wild.push((g, rule)),
        }
    }

    pub(crate) fn for_each(&self, name: &str, mut f: impl FnMut(usize)) {
        for r in self.exact.get(name).into_iter().flatten() {
            f(*r);
        }
        for (g, r) in &self.wild {
            if g.matches(name) {
                f(*r);
            }
        }
    }
}

/// An fs rule in the index.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct FsEntry {
    pub(crate) rule: usize,
    pub(crate) access: FsAccess,
    pub(crate) verdict: Verdict,
    pub(crate) except: Vec<PathPattern>,
    /// Written in a tier (a grant of that tier), not as a rule of its own.
    pub(crate) in_tier: bool,
}

/// A `pipe A into B` rule.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct PipeC {
    pub(crate) rule: usize,
    pub(crate) from: ExecMatcher,
    pub(crate) into: ExecMatcher,
    pub(crate) mode: Mode,
}

/// A restriction that narrows grants (deny paths, deny net), optionally for one agent.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Scoped<T> {
    pub(crate) agent: Option<AgentId>,
    pub(crate) value: T,
}

/// One compiled layer.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct LayerC {
    pub(crate) kind: LayerKind,
    pub(crate) default: Option<Verdict>,
    pub(crate) opaque: Option<Verdict>,
    pub(crate) tiers: Vec<TierC>,
    pub(crate) rules: Vec<RuleC>,
    pub(crate) exec: ExecIndex,
    pub(crate) pipes: Vec<PipeC>,
    pub(crate) tools: ToolIndex,
    /// Every fs rule.
    pub(crate) fs: PathIndex<FsEntry>,
    /// Ask/deny fs rules, for argument paths.
    pub(crate) fs_restrict: PathIndex<FsEntry>,
    /// Top-level limits.
    pub(crate) limits: Limits,
    /// Top-level env.
    pub(crate) env: Vec<String>,
    /// Top-level sandbox.
    #[serde(with = "super::stored::backend")]
    pub(crate) sandbox: Option<Backend>,
    /// Standalone allow fs grants (read, write).
    pub(crate) grant_reads: Vec<FsGrant>,
    pub(crate) grant_writes: Vec<FsGrant>,
    /// Standalone allow net grants.
    pub(crate) grant_net: Vec<NetC>,
    /// Paths no access may reach (deny fs read, and except of read grants).
    pub(crate) deny_paths: Vec<Scoped<PathPattern>>,
    /// Paths no write may reach (deny fs write).
    pub(crate) deny_write_paths: Vec<Scoped<PathPattern>>,
    /// Network removed from every grant.
    pub(crate) net_denies: Vec<Scoped<NetC>>,
}

impl LayerC {
    pub(crate) fn new(kind: LayerKind) -> LayerC {
        LayerC {
            kind,
            default: None,
            opaque: None,
            tiers: Vec::new(),
            rules: Vec::new(),
            exec: ExecIndex::default(),
            pipes: Vec::new(),
            tools: ToolIndex::default(),
            fs: PathIndex::default(),
            fs_restrict: PathIndex::default(),
            limits: Limits::default(),
            env: Vec::new(),
            sandbox: None,
            grant_reads: Vec::new(),
            grant_writes: Vec::new(),
            grant_net: Vec::new(),
            deny_paths: Vec::new(),
            deny_write_paths: Vec::new(),
            net_denies: Vec::new(),
        }
    }
}

/// Everything an agent narrows, merged over its definitions in every layer and its parents.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct AgentProfile {
    pub(crate) name: String,
    /// This agent and every agent it extends (their rules apply).
    pub(crate) scope: Vec<AgentId>,
    /// The tiers it may use (intersection), `None` for all.
    pub(crate) tiers: Option<Vec<String>>,
    pub(crate) default: Option<Verdict>,
    pub(crate) opaque: Option<Verdict>,
    pub(crate) limits: Limits,
    /// Each entry narrows the network further.
    pub(crate) net: Vec<NetC>,
    /// Each entry narrows the environment further.
    pub(crate) env: Vec<Vec<String>>,
    #[serde(with = "super::stored::backend")]
    pub(crate) sandbox: Option<Backend>,
}

/// Smallest-wins merge of limits.
pub(crate) fn min_limits(a: &mut Limits, b: &Limits) {
    fn m(x: &mut Option<u64>, y: Option<u64>) {
        *x = match (*x, y) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    m(&mut a.timeout_ms, b.timeout_ms);
    m(&mut a.memory, b.memory);
    m(&mut a.processes, b.processes);
    m(&mut a.output, b.output);
    m(&mut a.file_size, b.file_size);
    m(&mut a.files, b.files);
    m(&mut a.commands, b.commands);
    m(&mut a.total_time_ms, b.total_time_ms);
    m(&mut a.total_output, b.total_output);
}

/// Applies one AST limit.
pub(crate) fn set_limit(l: &mut Limits, limit: &crate::ast::Limit) {
    use crate::ast::Limit;
    let mut one = Limits::default();
    match *limit {
        Limit::Timeout(v) => one.timeout_ms = Some(v),
        Limit::Memory(v) => one.memory = Some(v),
        Limit::Processes(v) => one.processes = Some(v),
        Limit::Output(v) => one.output = Some(v),
        Limit::FileSize(v) => one.file_size = Some(v),
        Limit::Files(v) => one.files = Some(v),
        Limit::Commands(v) => one.commands = Some(v),
        Limit::TotalTime(v) => one.total_time_ms = Some(v),
        Limit::TotalOutput(v) => one.total_output = Some(v),
    }
    min_limits(l, &one);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_maps_find_their_keys_and_nothing_else() {
        let keys: Vec<String> =
            (0..2_000).map(|i| format!("{}{i}", ["", "tool", "a-much-longer-command-name-", "é"][i % 4])).collect();
        let mut map: WordMap<usize> = WordMap::default();
        for (i, k) in keys.iter().enumerate() {
            map.insert(k.as_str().into(), i);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k.as_str()), Some(&i), "{k}");
        }
        for absent in ["", "tool", "tool2000", "tool1 ", "a-much-longer-command-name-", "x"] {
            assert_eq!(map.get(absent), None, "{absent}");
        }
    }
}
