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
        SetEnv { layers: out }
    }

    /// The set `name` as seen from `layer`: its own first, then upward.
    pub(crate) fn lookup(&self, layer: usize, name: &str) -> Option<(usize, &SetDef<'a>)> {
        (0..=layer).rev().find_map(|l| self.layers.get(l)?.get(name).map(|d| (l, d)))
    }

    /// Whether `start` (defined in `layer`) reaches itself: the first direct member (in source
    /// order) through which it does, with its span.
    pub(crate) fn cycle(&self, layer: usize, start: &str) -> Option<(String, Span)> {
        let (_, def) = self.lookup(layer, start)?;
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
