//! Path patterns: parsing (`~`, `${workspace}`, `${home}`, relative = workspace-relative,
//! leading `**` = anywhere), matching against lexically normalised absolute paths with the
//! context's workspace and home substituted segment-wise (nothing is recompiled per request),
//! an index by first literal segment, and expansion into absolute globs for grants.

use super::glob::Glob;
use crate::decision::Context;
use std::borrow::Cow;
use super::model::WordMap;

/// What a pattern is anchored at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) enum Root {
    /// `/...` or `**/...`
    Absolute,
    /// `${workspace}/...` or a relative pattern.
    Workspace,
    /// `~/...` or `${home}/...`
    Home,
}

impl Root {
    fn slot(self) -> usize {
        match self {
            Root::Absolute => 0,
            Root::Workspace => 1,
            Root::Home => 2,
        }
    }
}

/// One segment of a path pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) enum Seg {
    /// A segment without wildcards, or with `*` / `?`.
    Word(Glob),
    /// `**`: any number of segments, zero included.
    Any,
}

/// A compiled path pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) struct PathPattern {
    pub(crate) root: Root,
    #[serde(with = "super::stored::shared_segs")]
    pub(crate) segs: std::sync::Arc<[Seg]>,
}

/// Why a path pattern is malformed: a message and advice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadPattern {
    pub(crate) message: String,
    pub(crate) help: String,
}

fn bad(message: String, help: &str) -> BadPattern {
    BadPattern { message, help: help.to_string() }
}

/// Parses one pattern string as written in a policy.
pub(crate) fn parse_pattern(text: &str) -> Result<PathPattern, BadPattern> {
    let mut segs = Vec::new();
    let root = scan_pattern(text, |seg| match seg {
        // `**/**` is `**`.
        None if segs.last() == Some(&Seg::Any) => {}
        None => segs.push(Seg::Any),
        Some(word) => segs.push(Seg::Word(Glob::new(word))),
    })?;
    Ok(PathPattern { root, segs: segs.into() })
}

/// Checks one pattern string as [`parse_pattern`] does, without compiling it (for the
/// validator: the builder compiles each pattern later).
pub(crate) fn check_pattern(text: &str) -> Result<(), BadPattern> {
    scan_pattern(text, |_| {}).map(|_| ())
}

/// Checks `text` and hands its segments in order to `seg` (`None` for `**`, else the word);
/// returns where the pattern is anchored.
fn scan_pattern<'t>(text: &'t str, mut seg: impl FnMut(Option<&'t str>)) -> Result<Root, BadPattern> {
    if text.is_empty() {
        return Err(bad("empty path pattern".into(), "write a path such as `\"${workspace}/**\"`"));
    }
    let (root, rest) = if let Some(rest) = text.strip_prefix('~') {
        if !(rest.is_empty() || rest.starts_with('/')) {
            return Err(bad(
                format!("`{text}`: `~user` is not supported"),
                "use `~/...` for the home directory, or an absolute path",
            ));
        }
        (Root::Home, rest)
    } else if let Some(after) = text.strip_prefix("${") {
        let Some(end) = after.find('}') else {
            return Err(bad(format!("`{text}`: unclosed `${{`"), "write `${workspace}` or `${home}`"));
        };
        let name = after.get(..end).unwrap_or_default();
        let rest = after.get(end + 1..).unwrap_or_default();
        let root = match name {
            "workspace" => Root::Workspace,
            "home" => Root::Home,
            other => {
                return Err(bad(
                    format!("unknown variable `${{{other}}}` in `{text}`"),
                    "only `${workspace}` and `${home}` exist",
                ));
            }
        };
        if !(rest.is_empty() || rest.starts_with('/')) {
            return Err(bad(
                format!("`{text}`: a variable must be followed by `/` or end the pattern"),
                "write `${workspace}/...`",
            ));
        }
        (root, rest)
    } else if text.starts_with('/') || text.starts_with("**") {
        (Root::Absolute, text)
    } else {
        (Root::Workspace, text)
    };
    if has_pair(rest, b"${") {
        return Err(bad(
            format!("`{text}`: a variable may only start a pattern"),
            "write `${workspace}/...` or `${home}/...` at the start",
        ));
    }
    for part in slash_split(rest) {
        match part {
            "" | "." => {}
            ".." => {
                return Err(bad(
                    format!("`{text}`: `..` is not allowed in a path pattern"),
                    "write the absolute path instead",
                ));
            }
            "**" => seg(None),
            s if has_pair(s, b"**") => {
                return Err(bad(
                    format!("`{text}`: `**` must be a whole path segment"),
                    "use `*` within a segment, `**` between slashes",
                ));
            }
            word => seg(Some(word)),
        }
    }
    Ok(root)
}

/// Whether `s` contains the two bytes `pair` in a row: for the few bytes of a pattern, cheaper
/// than the general substring searcher.
fn has_pair(s: &str, pair: &[u8; 2]) -> bool {
    s.as_bytes().windows(2).any(|w| w == pair)
}

/// Whether `path` starts at another user's home or at a tilde form the shell expands from its
/// state (`~root/x`, `~+`, `~-`): an unknown absolute place, never a relative path.
pub(crate) fn other_home(path: &str) -> bool {
    path.starts_with('~') && path != "~" && !path.starts_with("~/")
}

/// Where an absolute, normalised path leads when it goes through a process's view of the file
/// system: `/proc/PID/root` (also `self`, `thread-self`, `PID/task/TID`) is that process's
/// root, so `/proc/self/root/etc/shadow` is `/etc/shadow`; `/proc/PID/cwd`, `/proc/PID/fd/N` and
/// `/dev/fd/N` with more beneath them are folders not known here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Through {
    /// The path beneath the process's root, as an absolute path.
    Root(String),
    /// The rest of the path beneath a folder that is not known (no leading `/`).
    Unknown(String),
}

/// See [`Through`]; `None` when the absolute `path` does not go through such a link. `..`
/// is taken as the kernel takes it: `/proc/self/root/..` is `/`, not `/proc/self`.
pub(crate) fn through_proc(path: &str) -> Option<Through> {
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let is_pid = |s: &str| s == "self" || s == "thread-self" || numeric(s);
    let mut out: Vec<&str> = Vec::new();
    let mut rooted = false;
    let mut segs = slash_split(path).filter(|s| !s.is_empty() && *s != ".").peekable();
    while let Some(seg) = segs.next() {
        if seg == ".." {
            out.pop();
            continue;
        }
        out.push(seg);
        let unknown = match out.as_slice() {
            ["proc", pid, "root"] | ["proc", pid, "task", _, "root"] if is_pid(pid) => {
                out.clear();
                rooted = true;
                false
            }
            ["dev", "fd", n] | ["proc", _, "fd", n] if numeric(n) => true,
            ["proc", pid, "cwd"] | ["proc", pid, "task", _, "cwd"] if is_pid(pid) => true,
            _ => false,
        };
        if unknown && segs.peek().is_some() {
            let rest: Vec<&str> = segs.collect();
            return Some(Through::Unknown(rest.join("/")));
        }
    }
    rooted.then(|| Through::Root(normalise(&out.join("/"))))
}

/// Lexically normalises `path` to an absolute path: `~` is the home, relative paths start at
/// `cwd`, `.` and empty segments vanish, `..` removes one segment (never above `/`).
pub(crate) fn resolve(path: &str, cwd: &str, home: &str) -> String {
    let mut out = String::with_capacity(cwd.len().max(home.len()) + path.len() + 1);
    resolve_into(&mut out, path, cwd, home);
    out
}

/// Where [`resolve`] starts `path` (`home`, `cwd` or the root), and the rest of it.
fn start<'a>(path: &'a str, cwd: &'a str, home: &'a str) -> (&'a str, &'a str) {
    if path == "~" {
        (home, "")
    } else if let Some(rest) = path.strip_prefix("~/") {
        (home, rest)
    } else if path.starts_with('/') {
        ("", path)
    } else {
        (cwd, path)
    }
}

/// `s.split('/')` for the short strings paths are: a byte loop, cheaper than the general
/// searcher on segments of a few bytes (`/` is ASCII, so every cut is a char boundary).
pub(crate) fn slash_split(s: &str) -> SlashSplit<'_> {
    SlashSplit { rest: Some(s) }
}

/// The iterator of [`slash_split`].
pub(crate) struct SlashSplit<'a> {
    rest: Option<&'a str>,
}

impl<'a> Iterator for SlashSplit<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.bytes().position(|b| b == b'/') {
            Some(i) => {
                self.rest = rest.get(i + 1..);
                rest.get(..i)
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// Calls `f` with the segments of [`resolve`]`(path, cwd, home)`, held on the stack when
/// there are few of them (no string is built).
pub(crate) fn with_resolved<R>(path: &str, cwd: &str, home: &str, f: impl FnOnce(&[&str]) -> R) -> R {
    const INLINE: usize = 24;
    let (base, rest) = start(path, cwd, home);
    let mut buf: [&str; INLINE] = [""; INLINE];
    let mut n = 0usize;
    for seg in slash_split(base).chain(slash_split(rest)) {
        match seg {
            "" | "." => {}
            ".." => n = n.saturating_sub(1),
            s => match buf.get_mut(n) {
                Some(slot) => {
                    *slot = s;
                    n += 1;
                }
                None => return f(&segments(&resolve(path, cwd, home))),
            },
        }
    }
    f(buf.get(..n).unwrap_or_default())
}

/// [`resolve`] into `out` (cleared first), so that a caller can reuse one buffer.
pub(crate) fn resolve_into(out: &mut String, path: &str, cwd: &str, home: &str) {
    let (base, rest) = start(path, cwd, home);
    out.clear();
    out.reserve(base.len() + rest.len() + 1);
    for seg in base.split('/').chain(rest.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                // Drop the last segment (never above `/`).
                let cut = out.rfind('/').unwrap_or(0);
                out.truncate(cut);
            }
            s => {
                out.push('/');
                out.push_str(s);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
}

/// Lexical normalisation of an absolute path (a relative one is taken from `/`).
pub(crate) fn normalise(path: &str) -> String {
    resolve(path, "", "")
}

/// Whether a path is already absolute and lexically normal: `/`, or `/` then segments none of
/// which is empty, `.` or `..`. Only what follows each `/` is looked at (this runs on every
/// decision's context).
fn is_normal(path: &str) -> bool {
    let b = path.as_bytes();
    if b == b"/" {
        return true;
    }
    if b.first() != Some(&b'/') {
        return false;
    }
    for (i, c) in b.iter().enumerate() {
        if *c != b'/' {
            continue;
        }
        match b.get(i + 1..).unwrap_or_default() {
            [] | [b'/', ..] | [b'.'] | [b'.', b'/', ..] | [b'.', b'.'] | [b'.', b'.', b'/', ..] => return false,
            _ => {}
        }
    }
    true
}

/// [`normalise`], borrowing the input as it is when it is already normal.
fn normalise_cow(path: &str) -> Cow<'_, str> {
    if is_normal(path) { Cow::Borrowed(path) } else { Cow::Owned(normalise(path)) }
}

/// Segments of a normalised absolute path.
pub(crate) fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// Calls `f` with the segments of `path`, held on the stack when there are few of them.
pub(crate) fn with_segments<'a, R>(path: &'a str, f: impl FnOnce(&[&'a str]) -> R) -> R {
    const INLINE: usize = 24;
    let mut buf: [&'a str; INLINE] = [""; INLINE];
    let mut n = 0;
    for seg in slash_split(path).filter(|s| !s.is_empty()) {
        match buf.get_mut(n) {
            Some(slot) => *slot = seg,
            None => return f(&segments(path)),
        }
        n += 1;
    }
    f(buf.get(..n).unwrap_or_default())
}

/// The context's anchors, normalised once per decision (borrowed from the context when it is
/// already normal).
#[derive(Debug, Clone)]
pub(crate) struct Anchors<'c> {
    pub(crate) workspace: Cow<'c, str>,
    pub(crate) home: Cow<'c, str>,
    pub(crate) cwd: Cow<'c, str>,
}

impl<'c> Anchors<'c> {
    pub(crate) fn new(ctx: &'c Context) -> Anchors<'c> {
        let workspace = normalise_cow(&ctx.workspace);
        let home = normalise_cow(&ctx.home);
        let cwd = if ctx.cwd == ctx.workspace {
            // The usual case: the command runs at the workspace root, normalised just above.
            workspace.clone()
        } else if ctx.cwd.starts_with('/') {
            normalise_cow(&ctx.cwd)
        } else {
            Cow::Owned(normalise(&format!("{workspace}/{}", ctx.cwd)))
        };
        Anchors { workspace, home, cwd }
    }

    pub(crate) fn root(&self, root: Root) -> &str {
        match root {
            Root::Absolute => "/",
            Root::Workspace => &self.workspace,
            Root::Home => &self.home,
        }
    }
}

/// The part of `path` below `base` (normalised), as segments, or `None` when `path` is not
/// inside it. Walks `base` once without splitting it.
fn below<'a, 'p>(path: &'a [&'p str], base: &str) -> Option<&'a [&'p str]> {
    let mut base = base.as_bytes();
    let mut rest = path;
    loop {
        // `base` is empty or starts with `/`, then a segment.
        base = match base.split_first() {
            None => return Some(rest),
            Some((b'/', tail)) => tail,
            Some(_) => return None,
        };
        if base.is_empty() {
            return Some(rest);
        }
        let (first, tail) = rest.split_first()?;
        base = base.strip_prefix(first.as_bytes())?;
        if !(base.is_empty() || base.first() == Some(&b'/')) {
            return None;
        }
        rest = tail;
    }
}

impl PathPattern {
    /// Whether the normalised absolute path (as segments) matches.
    pub(crate) fn matches(&self, path: &[&str], anchors: &Anchors) -> bool {
        match self.root {
            Root::Absolute => match_segs(&self.segs, path),
            root => match below(path, anchors.root(root)) {
                Some(rest) => match_segs(&self.segs, rest),
                None => false,
            },
        }
    }

    /// Whether a path in the folder `dir` (normalised, as segments) or beneath it may match with
    /// the folder's own name matched by the pattern's anchor folder or by one of its named
    /// segments, not by `**`: what a write of names not known into `dir` may reach
    /// (see `into.rs`). `**/.git/hooks/**` reaches into `.git`, `~/.ssh/**` into `~` and
    /// `/etc/cron.d` into `/`; `**/.env` reaches into no folder in particular (any folder may
    /// hold one), and the workspace's own patterns do not reach into the workspace itself.
    ///
    /// `by_name`: only a named segment counts, not the anchor folder (`mv x ~` may make `~/x`,
    /// not `~` anew, while `mv g .git` may make `.git` itself).
    pub(crate) fn reaches_into(&self, dir: &[&str], anchors: &Anchors, by_name: bool) -> bool {
        let segs: &[Seg] = &self.segs;
        let rest = match self.root {
            Root::Absolute if dir.is_empty() => return !by_name && matches!(segs.first(), Some(Seg::Word(_))),
            Root::Absolute => dir,
            root => {
                let base = anchors.root(root);
                match below(dir, base) {
                    // The folder is the anchor itself: the workspace is where writes go.
                    Some([]) => return !by_name && root != Root::Workspace,
                    Some(rest) => rest,
                    // The folder holds the anchor (`/`, `/home` for `~/...`).
                    None => return !by_name && segments(base).starts_with(dir),
                }
            }
        };
        // States: (pattern position, whether the last segment was matched by a name).
        let mut states: Vec<(usize, bool)> = vec![(0, false)];
        for name in rest {
            let mut next: Vec<(usize, bool)> = Vec::new();
            let mut add = |s: (usize, bool)| {
                if !next.contains(&s) {
                    next.push(s);
                }
            };
            let mut i = 0;
            while let Some(&(pos, _)) = states.get(i) {
                i += 1;
                match segs.get(pos) {
                    Some(Seg::Any) => {
                        add((pos, false));
                        // `**` may also match no segment.
                        if !states.contains(&(pos + 1, false)) {
                            states.push((pos + 1, false));
                        }
                    }
                    Some(Seg::Word(g)) if g.matches(name) => add((pos + 1, true)),
                    _ => {}
                }
            }
            states = next;
            if states.is_empty() {
                return false;
            }
        }
        states.iter().any(|&(_, named)| named)
    }

    /// The pattern as an absolute glob for grants.
    pub(crate) fn expand(&self, anchors: &Anchors) -> String {
        let mut s = match self.root {
            Root::Absolute => String::new(),
            root => anchors.root(root).trim_end_matches('/').to_string(),
        };
        for seg in self.segs.iter() {
            s.push('/');
            match seg {
                Seg::Any => s.push_str("**"),
                Seg::Word(Glob::Literal(l)) => s.push_str(l),
                Seg::Word(Glob::Wild(w)) => s.extend(w.iter()),
            }
        }
        if s.is_empty() {
            s.push('/');
        }
        s
    }

    /// The first segment if it is a literal (index key).
    fn first_literal(&self) -> Option<&std::sync::Arc<str>> {
        match self.segs.first() {
            Some(Seg::Word(g)) => g.literal(),
            _ => None,
        }
    }

    /// The last literal segment: every matching path has it as one of its segments.
    fn some_literal(&self) -> Option<&std::sync::Arc<str>> {
        self.segs.iter().rev().find_map(|s| match s {
            Seg::Word(g) => g.literal(),
            Seg::Any => None,
        })
    }

    /// A cheap test before [`PathPattern::matches`]: a pattern ending in a word can only match
    /// a path whose last segment matches that word.
    fn last_may_match(&self, path: &[&str]) -> bool {
        match (self.segs.last(), path.last()) {
            (Some(Seg::Word(g)), Some(last)) => g.matches(last),
            _ => true,
        }
    }
}

/// Segment matching with `**`, by dynamic programming (no exponential backtracking).
fn match_segs(pattern: &[Seg], path: &[&str]) -> bool {
    if path.len() < 127 { match_segs_bits(pattern, path) } else { match_segs_long(pattern, path) }
}

/// [`match_segs`] without allocating: bit `j` of `reach` says the pattern prefix consumed so
/// far can end at path position `j` (paths of fewer than 127 segments).
fn match_segs_bits(pattern: &[Seg], path: &[&str]) -> bool {
    let n = path.len();
    let all: u128 = (1u128 << (n + 1)) - 1;
    let mut reach: u128 = 1;
    for seg in pattern {
        reach = match seg {
            // From the first reachable position on, every later one is reachable.
            Seg::Any => all & !(reach & reach.wrapping_neg()).wrapping_sub(1),
            Seg::Word(g) => {
                let mut next = 0u128;
                for (j, p) in path.iter().enumerate() {
                    if reach & (1u128 << j) != 0 && g.matches(p) {
                        next |= 1u128 << (j + 1);
                    }
                }
                next
            }
        };
        if reach == 0 {
            return false;
        }
    }
    reach & (1u128 << n) != 0
}

/// [`match_segs`] for very long paths.
fn match_segs_long(pattern: &[Seg], path: &[&str]) -> bool {
    // reach[j]: pattern prefix consumed so far can end at path position j.
    let mut reach = vec![false; path.len() + 1];
    if let Some(r) = reach.first_mut() {
        *r = true;
    }
    for seg in pattern {
        let mut next = vec![false; path.len() + 1];
        match seg {
            Seg::Any => {
                let mut on = false;
                for (j, r) in reach.iter().enumerate() {
                    on |= *r;
                    if let Some(n) = next.get_mut(j) {
                        *n = on;
                    }
                }
            }
            Seg::Word(g) => {
                for (j, r) in reach.iter().enumerate() {
                    if *r
                        && path.get(j).is_some_and(|p| g.matches(p))
                        && let Some(n) = next.get_mut(j + 1)
                    {
                        *n = true;
                    }
                }
            }
        }
        reach = next;
    }
    reach.last().copied().unwrap_or(false)
}

/// Path patterns indexed by anchor and first literal segment, each with a value, kept in the
/// order they were inserted (the order of the policy's rules). Stored as that list alone: the
/// indexes are made again by inserting it in order, which gives the same maps.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(from = "Vec<(PathPattern, T)>", into = "Vec<(PathPattern, T)>")]
#[serde(bound(serialize = "T: Clone + serde::Serialize", deserialize = "T: Clone + serde::Deserialize<'de>"))]
pub(crate) struct PathIndex<T> {
    entries: Vec<(PathPattern, T)>,
    /// Patterns whose first segment is a literal, by anchor and that literal.
    keyed: [WordMap<Vec<usize>>; 3],
    /// Other patterns (`**/.ssh/**`) by a literal segment every match must contain.
    by_literal: WordMap<Vec<usize>>,
    /// Patterns without any literal segment (`**/*.pem`).
    other: Vec<usize>,
}

impl<T> Default for PathIndex<T> {
    fn default() -> Self {
        PathIndex { entries: Vec::new(), keyed: Default::default(), by_literal: WordMap::default(), other: Vec::new() }
    }
}

impl<T: Clone> From<Vec<(PathPattern, T)>> for PathIndex<T> {
    fn from(entries: Vec<(PathPattern, T)>) -> Self {
        let mut index = PathIndex::default();
        for (p, v) in entries {
            index.insert(p, v);
        }
        index
    }
}

impl<T> From<PathIndex<T>> for Vec<(PathPattern, T)> {
    fn from(index: PathIndex<T>) -> Self {
        index.entries
    }
}

impl<T: Clone> PathIndex<T> {
    pub(crate) fn insert(&mut self, pattern: PathPattern, value: T) {
        let i = self.entries.len();
        if let Some(first) = pattern.first_literal() {
            let first = std::sync::Arc::clone(first);
            if let Some(map) = self.keyed.get_mut(pattern.root.slot()) {
                map.entry(first).or_default().push(i);
            }
        } else if let Some(lit) = pattern.some_literal() {
            let lit = std::sync::Arc::clone(lit);
            self.by_literal.entry(lit).or_default().push(i);
        } else {
            self.other.push(i);
        }
        self.entries.push((pattern, value));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Calls `f` with every pattern and its value, in the order they were inserted.
    pub(crate) fn for_each_entry(&self, mut f: impl FnMut(&PathPattern, &T)) {
        for (p, v) in &self.entries {
            f(p, v);
        }
    }

    /// Calls `f` with the value of every pattern matching the path of segments `segs`
    /// (normalised, absolute).
    pub(crate) fn for_each_match(&self, segs: &[&str], anchors: &Anchors, mut f: impl FnMut(&T)) {
        if self.entries.is_empty() {
            return;
        }
        let mut visit = |list: Option<&Vec<usize>>| {
            for (p, v) in list.into_iter().flatten().filter_map(|i| self.entries.get(*i)) {
                if p.last_may_match(segs) && p.matches(segs, anchors) {
                    f(v);
                }
            }
        };
        let keyed = |root: Root| self.keyed.get(root.slot()).filter(|m| !m.is_empty());
        if let (Some(map), Some(first)) = (keyed(Root::Absolute), segs.first()) {
            visit(map.get(*first));
        }
        for root in [Root::Workspace, Root::Home] {
            if let Some(map) = keyed(root)
                && let Some(rest) = below(segs, anchors.root(root))
                && let Some(first) = rest.first()
            {
                visit(map.get(*first));
            }
        }
        if !self.by_literal.is_empty() {
            for (i, seg) in segs.iter().enumerate() {
                // Each distinct segment once, so no pattern is visited twice.
                if segs.get(..i).is_some_and(|before| before.contains(seg)) {
                    continue;
                }
                visit(self.by_literal.get(*seg));
            }
        }
        if !self.other.is_empty() {
            visit(Some(&self.other));
        }
    }
}

#[cfg(test)]
mod tests;

/// An absolute glob as found in a decision's grants (`/usr/**`, `/**/.env`,
/// `/etc/ssh/ssh_host_*`), compiled once to match many paths.
#[derive(Debug, Clone)]
pub struct GrantGlob(std::sync::Arc<[Seg]>);

impl GrantGlob {
    /// Compiles `pattern`; `None` when it is malformed or not absolute.
    pub fn new(pattern: &str) -> Option<GrantGlob> {
        match parse_pattern(pattern) {
            Ok(p) if p.root == Root::Absolute => Some(GrantGlob(p.segs)),
            _ => None,
        }
    }

    /// Whether the absolute `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        match_segs(&self.0, &segments(&normalise(path)))
    }
}

/// Whether the absolute `path` matches `pattern` (see [`GrantGlob`]). A malformed or
/// non-absolute pattern matches nothing.
pub fn grant_matches(pattern: &str, path: &str) -> bool {
    GrantGlob::new(pattern).is_some_and(|g| g.matches(path))
}

#[cfg(test)]
mod grant_match_tests {
    use super::grant_matches;

    #[test]
    fn grant_globs_match_absolute_paths() {
        assert!(grant_matches("/**/.env", "/work/app/.env"));
        assert!(grant_matches("/etc/ssh/ssh_host_*", "/etc/ssh/ssh_host_rsa_key"));
        assert!(grant_matches("/usr/**", "/usr"));
        assert!(!grant_matches("/**/.env", "/work/app/.env.example"));
        assert!(!grant_matches("relative/**", "/relative/x"));
    }
}#[cfg(test)]
mod through_tests {
    use super::{Through, through_proc};

    /// Red team: `cat /proc/self/root/etc/shadow` walked around every absolute pattern.
    #[test]
    fn a_process_root_leads_to_the_path_beneath_it() {
        let root = |p: &str| Some(Through::Root(p.to_string()));
        let unknown = |p: &str| Some(Through::Unknown(p.to_string()));
        assert_eq!(through_proc("/proc/self/root/etc/shadow"), root("/etc/shadow"));
        assert_eq!(through_proc("/proc/thread-self/root/etc/shadow"), root("/etc/shadow"));
        assert_eq!(through_proc("/proc/1/root"), root("/"));
        assert_eq!(through_proc("/proc/1/task/1/root/run/secrets/x"), root("/run/secrets/x"));
        assert_eq!(through_proc("/proc/1/cwd/.env"), unknown(".env"));
        assert_eq!(through_proc("/proc/self/fd/3/etc/shadow"), unknown("etc/shadow"));
        assert_eq!(through_proc("/dev/fd/3/etc/shadow"), unknown("etc/shadow"));
        assert_eq!(through_proc("/proc/1/environ"), None);
        assert_eq!(through_proc("/proc/self/fd/3"), None);
        assert_eq!(through_proc("/proc/cpuinfo"), None);
        assert_eq!(through_proc("/etc/shadow"), None);
        assert_eq!(through_proc("/proc/self/root/../etc/shadow"), root("/etc/shadow"));
        assert_eq!(through_proc("/proc/1/root/proc/self/root/etc/x"), root("/etc/x"));
        assert_eq!(through_proc("/x/../proc/1/root//etc/./shadow"), root("/etc/shadow"));
    }
}


