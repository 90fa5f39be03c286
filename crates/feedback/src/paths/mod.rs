//! Source locations named in tool output (compilers, test runners, interpreters, shells).
//!
//! Contract: [`find`] returns locations relative to the workspace, each naming a regular file
//! that exists inside the workspace, de-duplicated, in order of first appearance, at most
//! [`MAX_PATHS`]. It never invents a path: a candidate that does not resolve to an existing
//! file under the workspace is dropped.
//!
//! How: colour escapes are stripped, then each line goes through one line scanner per family
//! of formats (`rust`, `colon` for gcc/clang/go/javac/pytest, `python`, `node`, `tsc`,
//! `shell`). Only when none of them names an existing file does the `generic` fallback look
//! for `path:line[:col]` tokens with a file extension. Every candidate is canonicalized
//! (symlinks followed, `..` folded) and kept only when it is a regular file whose canonical
//! path lies under the canonical workspace; the path reported is that canonical path made
//! relative to the workspace.
//!
//! Bounds: lines longer than [`MAX_LINE`] bytes are skipped, scanning stops after
//! [`MAX_SCAN`] bytes of output, and at most 1024 distinct paths are looked up on disk.

mod ansi;
mod colon;
mod generic;
mod loc;
mod node;
mod python;
mod resolve;
mod rust;
mod shell;
mod tsc;

use std::collections::HashSet;
use std::path::Path;

use crate::SourcePath;
use loc::Loc;
use resolve::Resolver;

/// The most locations [`find`] returns.
pub const MAX_PATHS: usize = 64;

/// Lines longer than this many bytes (after removing colour escapes) are skipped.
pub const MAX_LINE: usize = 4 * 1024;

/// Only this many bytes of the output are scanned (see [`find_in`] for how they are chosen).
pub const MAX_SCAN: usize = 1024 * 1024;

/// The tool-specific scanners, in the order their finds are reported within one line.
const FAMILIES: [for<'a> fn(&'a str, &mut Vec<Loc<'a>>); 6] =
    [rust::scan, colon::scan, python::scan, node::scan, tsc::scan, shell::scan];

/// Finds the source locations named in `output`. Relative paths are resolved against `cwd`
/// (the command's working directory), then made relative to `workspace`.
///
/// Returns an empty list when `workspace` cannot be canonicalized.
///
/// ```
/// # use std::path::Path;
/// let found = warden_feedback::paths::find("no locations here", Path::new("."), Path::new("."));
/// assert!(found.is_empty());
/// ```
pub fn find(output: &str, workspace: &Path, cwd: &Path) -> Vec<SourcePath> {
    let Some(mut resolver) = Resolver::new(workspace, cwd) else {
        return Vec::new();
    };
    let text = ansi::strip(prefix(output, MAX_SCAN));
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    let mut candidates = Vec::new();
    for line in text.split(['\n', '\r']) {
        if line.len() > MAX_LINE || line.trim().is_empty() {
            continue;
        }
        resolver.follow_make(line);
        candidates.clear();
        for scan in FAMILIES {
            scan(line, &mut candidates);
        }
        let before = found.len();
        keep(&candidates, &mut resolver, &mut seen, &mut found);
        if found.len() == before && !candidates.iter().any(|c| resolver.resolve(c.path).is_some()) {
            candidates.clear();
            generic::scan(line, &mut candidates);
            keep(&candidates, &mut resolver, &mut seen, &mut found);
        }
        if found.len() >= MAX_PATHS {
            found.truncate(MAX_PATHS);
            break;
        }
    }
    found
}

/// Resolves `candidates` and appends the new ones to `found`.
fn keep(
    candidates: &[Loc<'_>],
    resolver: &mut Resolver<'_>,
    seen: &mut HashSet<SourcePath>,
    found: &mut Vec<SourcePath>,
) {
    for c in candidates {
        if let Some(path) = resolver.resolve(c.path) {
            let item = SourcePath { path, line: c.line, column: c.column };
            if seen.insert(item.clone()) {
                found.push(item);
            }
        }
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
/// [`find`] over a command's streams (stderr, then stdout): each gets an equal share of
/// [`MAX_SCAN`], and a stream longer than its share is scanned at its head and at its tail,
/// where builds print their last errors (a long log on one stream hides nothing on the
/// other).
pub fn find_in(streams: &[&str], workspace: &Path, cwd: &Path) -> Vec<SourcePath> {
    let share = MAX_SCAN / streams.len().max(1);
    let mut text = String::with_capacity(streams.iter().map(|s| s.len().min(share) + 2).sum());
    for s in streams {
        if s.len() <= share {
            text.push_str(s);
        } else {
            text.push_str(prefix(s, share / 2));
            text.push('\n');
            text.push_str(suffix(s, share / 2));
        }
        text.push('\n');
    }
    find(&text, workspace, cwd)
}

/// The last at most `max` bytes of `s`, from the start of a line.
fn suffix(s: &str, max: usize) -> &str {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    let tail = s.get(start..).unwrap_or("");
    if start == 0 {
        return tail;
    }
    // The first line of the tail was cut: it starts after the first line break.
    tail.find('\n').and_then(|i| tail.get(i + 1..)).unwrap_or("")
}

fn prefix(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or("")
}

#[cfg(test)]
mod tests;
