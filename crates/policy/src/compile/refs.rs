//! Rule references ([`RuleRef`]: file, line, column, one-line text) made when they are asked
//! for. A compiled set keeps where each rule is written and the text of its files; a decision
//! names a handful of rules, so a load that decides one command writes a handful of references,
//! not one per rule.

use crate::ast::Span;
use crate::decision::{LayerKind, RuleRef};
use std::sync::{Arc, OnceLock};

/// A policy file as the compiled set keeps it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Source {
    name: Arc<str>,
    text: Box<str>,
    /// Byte offsets where lines start.
    starts: Box<[usize]>,
}

impl Source {
    pub(crate) fn new(name: &str, text: &str, starts: &[usize]) -> Source {
        Source { name: name.into(), text: text.into(), starts: starts.into() }
    }
}

/// Where one rule is written.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct At {
    /// Index into [`Refs::sources`].
    source: usize,
    layer: LayerKind,
    /// The byte offset its line and column name.
    pos: usize,
    /// The span whose first line is its text.
    text: Span,
    /// The text starts with `exec ` (one pattern of an exec list stands for itself).
    exec: bool,
}

/// The references of every rule of a set, by rule id: each made once, on first use. Stored
/// without the references made.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(from = "Stored", into = "Stored")]
pub(crate) struct Refs {
    sources: Vec<Arc<Source>>,
    at: Vec<At>,
    made: Vec<OnceLock<RuleRef>>,
}

/// [`Refs`] as stored.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    sources: Vec<Arc<Source>>,
    at: Vec<At>,
}

impl From<Stored> for Refs {
    fn from(s: Stored) -> Refs {
        let made = std::iter::repeat_with(OnceLock::new).take(s.at.len()).collect();
        Refs { sources: s.sources, at: s.at, made }
    }
}

impl From<Refs> for Stored {
    fn from(r: Refs) -> Stored {
        Stored { sources: r.sources, at: r.at }
    }
}

impl Refs {
    /// Adds a file; its index is what [`Refs::push`] takes.
    pub(crate) fn source(&mut self, source: Source) -> usize {
        self.sources.push(Arc::new(source));
        self.sources.len() - 1
    }

    /// Adds rule number [`Refs::len`]: written in `source` at `pos`, its text the first line
    /// of `text` (after `exec ` when `exec`).
    pub(crate) fn push(&mut self, source: usize, layer: LayerKind, pos: usize, text: &Span, exec: bool) {
        self.at.push(At { source, layer, pos, text: text.clone(), exec });
        self.made.push(OnceLock::new());
    }

    /// How many rules.
    pub(crate) fn len(&self) -> usize {
        self.at.len()
    }

    /// The reference of rule `id`.
    pub(crate) fn get(&self, id: usize) -> Option<&RuleRef> {
        let at = self.at.get(id)?;
        let source = self.sources.get(at.source)?;
        Some(self.made.get(id)?.get_or_init(|| {
            let (line, column) = line_col(&source.text, &source.starts, at.pos);
            let mut text = String::new();
            one_line_into(&mut text, if at.exec { "exec " } else { "" }, &source.text, &at.text);
            RuleRef { file: Arc::clone(&source.name), line, column, layer: at.layer, text: text.into(), id }
        }))
    }
}

/// 1-based line and character column of byte `offset` of `text`, by binary search over its
/// line `starts`.
pub(crate) fn line_col(text: &str, starts: &[usize], offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let line = starts.partition_point(|s| *s <= offset).max(1);
    let start = starts.get(line - 1).copied().unwrap_or(0);
    let column = text.get(start..offset).map_or(0, |s| s.chars().count()) + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}

/// `prefix` followed by the first line of the source text of `span`, with runs of white space
/// collapsed, written over `out`.
pub(crate) fn one_line_into(out: &mut String, prefix: &str, text: &str, span: &Span) {
    let s = text.get(span.clone()).unwrap_or_default();
    let first = s.lines().next().unwrap_or_default();
    out.clear();
    out.reserve(prefix.len() + first.len());
    out.push_str(prefix);
    // Most rules are ASCII with single spaces: copied as they are.
    let plain = first.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
        && !first.starts_with(' ')
        && !first.ends_with(' ')
        && !first.contains("  ");
    if plain {
        out.push_str(first);
        return;
    }
    for w in first.split_whitespace() {
        if out.len() > prefix.len() {
            out.push(' ');
        }
        out.push_str(w);
    }
}

#[cfg(test)]
mod tests {
    use super::one_line_into;

    /// The definition: the span's first line, white space runs collapsed to one space.
    fn reference(prefix: &str, s: &str) -> String {
        let first = s.lines().next().unwrap_or_default();
        let words: Vec<&str> = first.split_whitespace().collect();
        format!("{prefix}{}", words.join(" "))
    }

    #[test]
    fn the_copied_line_is_the_collapsed_line() {
        let lines = [
            "allow exec git status",
            "allow exec  git status",
            " allow exec git",
            "allow exec git ",
            "allow\texec git",
            "deny exec rm -rf \"/\" # why",
            "allow exec caf\u{e9} x",
            "allow exec a\u{a0}b",
            "allow exec a\u{2003} b",
            "allow exec a\r\nnext line",
            "tier read {\n  exec ls\n}",
            "",
            " ",
        ];
        let mut out = String::from("left over");
        for line in lines {
            for prefix in ["", "exec "] {
                one_line_into(&mut out, prefix, line, &(0..line.len()));
                assert_eq!(out, reference(prefix, line), "{line:?}");
            }
        }
    }
}
