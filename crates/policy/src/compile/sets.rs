//! The parsed input of a compile (layers of files with their syntax trees) and `paths` sets:
//! lookup across layers (a layer sees its own sets first, then those of the layers above),
//! cycle detection, and flattening into pattern strings.

use crate::ast::{PathRef, Policy, Span, StatementKind};
use crate::decision::LayerKind;
use rustc_hash::FxHashSet;
use std::collections::{HashMap, HashSet};

/// One parsed file.
#[derive(Debug, Clone)]
pub(crate) struct FileAst {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) policy: Policy,
    /// Position of the file in the compile input (for sorting diagnostics).
    pub(crate) order: usize,
    /// Byte offsets where lines start, computed once (see [`line_starts`]).
    pub(crate) starts: Vec<usize>,
}

impl FileAst {
    /// 1-based line and character column of byte `offset`, by binary search over the line
    /// starts (computed once per file: building 10,000 rules stays linear).
    pub(crate) fn line_col(&self, starts: &[usize], offset: usize) -> (u32, u32) {
        super::refs::line_col(&self.text, starts, offset)
    }
}

/// Byte offsets where lines start.
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect()
}

/// One parsed layer.
#[derive(Debug, Clone)]
pub(crate) struct LayerAst {
    pub(crate) kind: LayerKind,
    pub(crate) files: Vec<FileAst>,
}

/// A set definition: where, and its members.
#[derive(Debug, Clone)]
pub(crate) struct SetDef<'a> {
    pub(crate) members: &'a [PathRef],
}

/// `paths` sets of every layer.
#[derive(Debug, Clone, Default)]
pub(crate) struct SetEnv<'a> {
    /// Per layer: name -> first definition.
    layers: Vec<HashMap<&'a str, SetDef<'a>>>,
    /// The sets (layer, name) that reach themselves, found once for all ([`SetEnv::cycle`]
    /// searches only from these: searching from every set was quadratic in a long chain).
    cyclic: FxHashSet<(usize, &'a str)>,
}

impl<'a> SetEnv<'a> {
    /// Collects the sets of `layers` (first definition wins; duplicates are the validator's).
    pub(crate) fn new(layers: &'a [LayerAst]) -> SetEnv<'a> {
        let mut out = Vec::new();
        for layer in layers {
            let mut map: HashMap<&'a str, SetDef<'a>> = HashMap::new();
            for file in &layer.files {
                for st in &file.policy.statements {
                    if let StatementKind::Paths { name, members } = &st.kind {
                        map.entry(name.node.as_str()).or_insert(SetDef { members });
                    }
                }
            }
            out.push(map);
        }
        let mut env = SetEnv { layers: out, cyclic: FxHashSet::default() };
        env.cyclic = env.find_cycles();
        env
    }

    /// Every set on a cycle of set references: the strongly connected components with more
    /// than one set, or one that names itself (Tarjan's algorithm, without recursion).
    // Every index is a node number below `nodes.len()`, which sizes every vector indexed.
    #[allow(clippy::indexing_slicing)]
    fn find_cycles(&self) -> FxHashSet<(usize, &'a str)> {
        let nodes: Vec<(usize, &'a str)> =
            self.layers.iter().enumerate().flat_map(|(li, m)| m.keys().map(move |n| (li, *n))).collect();
        let at: HashMap<(usize, &'a str), usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let edges: Vec<Vec<usize>> = nodes
            .iter()
            .map(|&(li, name)| {
                let members = self.layers.get(li).and_then(|m| m.get(name)).map_or(&[][..], |d| d.members);
                members
                    .iter()
                    .filter_map(|m| match m {
                        PathRef::Set(s) => {
                            let (found, _) = self.lookup(li, &s.node)?;
                            at.get(&(found, s.node.as_str())).copied()
                        }
                        PathRef::Pattern(_) => None,
                    })
                    .collect()
            })
            .collect();
        let unseen = usize::MAX;
        let (mut index, mut low) = (vec![unseen; nodes.len()], vec![0usize; nodes.len()]);
        let mut on_stack = vec![false; nodes.len()];
        let (mut stack, mut next, mut out) = (Vec::new(), 0usize, FxHashSet::default());
        for root in 0..nodes.len() {
            if index[root] != unseen {
                continue;
            }
            let mut calls: Vec<(usize, usize)> = vec![(root, 0)];
            (index[root], low[root], on_stack[root]) = (next, next, true);
            next += 1;
            stack.push(root);
            while let Some(&(v, e)) = calls.last() {
                if let Some(&w) = edges[v].get(e) {
                    if let Some(top) = calls.last_mut() {
                        top.1 += 1;
                    }
                    if index[w] == unseen {
                        (index[w], low[w], on_stack[w]) = (next, next, true);
                        next += 1;
                        stack.push(w);
                        calls.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                calls.pop();
                if let Some(&(u, _)) = calls.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if component.len() > 1 || edges[v].contains(&v) {
                        out.extend(component.into_iter().map(|w| nodes[w]));
                    }
                }
            }
        }
        out
    }

    /// The set `name` as seen from `layer`: its own first, then upward.
    pub(crate) fn lookup(&self, layer: usize, name: &str) -> Option<(usize, &SetDef<'a>)> {
        (0..=layer).rev().find_map(|l| self.layers.get(l)?.get(name).map(|d| (l, d)))
    }

    /// Whether `start` (defined in `layer`) reaches itself: the first direct member (in source
    /// order) through which it does, with its span.
    pub(crate) fn cycle(&self, layer: usize, start: &str) -> Option<(String, Span)> {
        let (found, def) = self.lookup(layer, start)?;
        if !self.cyclic.contains(&(found, start)) {
            return None;
        }
        for m in def.members {
            let PathRef::Set(first) = m else { continue };
            let mut stack: Vec<(usize, &str)> = vec![(layer, first.node.as_str())];
            let mut seen: HashSet<(usize, &str)> = HashSet::new();
            while let Some((l, name)) = stack.pop() {
                let Some((found, d)) = self.lookup(l, name) else { continue };
                if found == layer && name == start {
                    return Some((first.node.clone(), first.span.clone()));
                }
                if !seen.insert((found, name)) {
                    continue;
                }
                for m in d.members {
                    if let PathRef::Set(s) = m {
                        stack.push((found, s.node.as_str()));
                    }
                }
            }
        }
        None
    }

    /// Flattens path references into pattern strings (unknown sets and cycles are skipped:
    /// the validator reports them). The strings are borrowed from the trees.
    pub(crate) fn flatten<'r>(&'r self, layer: usize, refs: &'r [PathRef]) -> Vec<&'r str> {
        let mut out = Vec::new();
        let mut seen: FxHashSet<(usize, &'r str)> = FxHashSet::default();
        let mut have: FxHashSet<&'r str> = FxHashSet::default();
        self.flatten_into(layer, refs, &mut out, &mut seen, &mut have);
        out
    }

    fn flatten_into<'r>(
        &'r self,
        layer: usize,
        refs: &'r [PathRef],
        out: &mut Vec<&'r str>,
        seen: &mut FxHashSet<(usize, &'r str)>,
        have: &mut FxHashSet<&'r str>,
    ) {
        for r in refs {
            match r {
                PathRef::Pattern(p) => {
                    if have.insert(p.node.as_str()) {
                        out.push(p.node.as_str());
                    }
                }
                PathRef::Set(s) => {
                    let Some((found, def)) = self.lookup(layer, &s.node) else { continue };
                    if !seen.insert((found, s.node.as_str())) {
                        continue;
                    }
                    self.flatten_into(found, def.members, out, seen, have);
                }
            }
        }
    }
}
