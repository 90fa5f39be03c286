//! The `**` denials' walk: every entry beneath some roots, breadth first, listed with raw
//! `getdents64` (no allocation or `fstat` per folder), deep levels on two threads, kept in one
//! text buffer with an index by name. `confine` matches the denial patterns against it.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};

/// The walked entries, their paths' text in one buffer (a workspace can hold tens of
/// thousands: no allocation per entry), with an index by name.
#[derive(Default)]
pub(crate) struct Walk {
    text: String,
    /// Per entry: where its path starts, where its name starts, where both end, in `text`.
    spans: Vec<(usize, usize, usize)>,
    /// By hash of the name: the last entry with that hash; `prev` chains to the ones before.
    last: HashMap<u64, usize>,
    prev: Vec<Option<usize>>,
    /// Every folder listed (the roots too): where its path is in `text`, and its inode.
    folders: Vec<(usize, usize, u64)>,
    /// The wall clock when the walk began.
    started: Time,
    /// The folders left out because their names are not UTF-8 (with everything beneath).
    opaque: Vec<PathBuf>,
    /// The entries that are unix socket files.
    sockets: Vec<usize>,
}

/// Seconds and nanoseconds of the wall clock.
pub(crate) type Time = (i64, i64);

/// What tells a folder changed: its inode, and its ctime (which every entry made, removed or
/// renamed in it moves, as a rename moves the renamed one's, and which no program can set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub ino: u64,
    pub ctime: Time,
}

impl Stamp {
    fn of(st: &rustix::fs::Stat) -> Stamp {
        #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
        let ctime = (st.st_ctime as i64, st.st_ctime_nsec as i64);
        Stamp { ino: st.st_ino, ctime }
    }

    /// The stamp of the folder at `path` now. A link is followed only for a root (as the walk
    /// does): otherwise it is no folder.
    pub(crate) fn now(path: &str, root: bool) -> Option<Stamp> {
        Stamp::at(&rustix::fs::CWD, path, root)
    }

    /// The stamps of `folders` now (`root` says which are roots, as in [`Stamp::now`]), in
    /// order. Each folder is looked up by its name in its parent, opened once for all its
    /// folders (a walk lists siblings together): one path step, not the whole path, each.
    pub(crate) fn now_all<'a>(folders: impl Iterator<Item = &'a str>, root: impl Fn(&str) -> bool) -> Vec<Option<Stamp>> {
        let mut parent: Option<(&str, Option<OwnedFd>)> = None;
        let mut out = Vec::new();
        for dir in folders {
            let split = dir.rsplit_once('/').filter(|(p, n)| !p.is_empty() && !n.is_empty());
            let (Some((up, name)), false) = (split, root(dir)) else {
                out.push(Stamp::now(dir, root(dir)));
                continue;
            };
            if parent.as_ref().is_none_or(|(p, _)| *p != up) {
                let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
                parent = Some((up, rustix::fs::openat(rustix::fs::CWD, up, flags, Mode::empty()).ok()));
            }
            out.push(match parent.as_ref().and_then(|(_, fd)| fd.as_ref()) {
                Some(fd) => Stamp::at(fd, name, false),
                None => None,
            });
        }
        out
    }

    fn at<Fd: std::os::fd::AsFd>(dir: &Fd, path: &str, root: bool) -> Option<Stamp> {
        let flags = if root { AtFlags::empty() } else { AtFlags::SYMLINK_NOFOLLOW };
        let st = rustix::fs::statat(dir, path, flags).ok()?;
        (FileType::from_raw_mode(st.st_mode) == FileType::Directory).then(|| Stamp::of(&st))
    }
}

impl Walk {
    /// The entries beneath `roots`, at most `limit`; whether there were more.
    pub(crate) fn new(roots: &[PathBuf], limit: usize) -> (Walk, bool) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let started = (i64::try_from(now.as_secs()).unwrap_or(i64::MAX), i64::from(now.subsec_nanos()));
        let mut w = Walk { started, ..Walk::default() };
        // The folders of one depth, as ranges of `text`, and whether each is a root (not an
        // entry itself). A root is opened through symlinks, as the mount shows it; a folder
        // found by the walk is not: if it became a symlink since it was listed, it is skipped.
        // Each with its inode, as its parent's listing gave it (none for a root).
        let mut level: Vec<(usize, usize, bool, u64)> = Vec::new();
        for root in roots {
            if let Some(r) = root.to_str() {
                let start = w.text.len();
                w.text.push_str(r);
                level.push((start, w.text.len(), true, 0));
            }
        }
        // Breadth-first, one depth at a time: a deep level's folders are listed on two threads
        // (listing is system calls, which run side by side), then taken in folder order, so
        // the entries and their order are those of a plain breadth-first walk.
        let mut listings: Vec<Listing> = Vec::new();
        while !level.is_empty() {
            listings.resize_with(level.len(), Listing::default);
            let text = w.text.as_str();
            let dirs: Vec<(&str, bool)> = level.iter().map(|&(s, e, root, _)| (text.get(s..e).unwrap_or_default(), root)).collect();
            // One more than the walk can keep: that one tells there were more (`cut`).
            list_all(&dirs, &mut listings, limit - w.spans.len() + 1);
            let mut next = Vec::new();
            for (&(start, end, root, ino), listing) in level.iter().zip(&listings) {
                match (listing.opened, root) {
                    (true, true) => w.folders.extend(listing.root_ino.map(|ino| (start, end, ino))),
                    (true, false) => w.folders.push((start, end, ino)),
                    (false, _) => {}
                }
                let parent = Path::new(w.text.get(start..end).unwrap_or_default());
                w.opaque.extend(listing.opaque.iter().map(|name| parent.join(name)));
                for (k, &(from, to, dir, ino)) in listing.entries.iter().enumerate() {
                    if w.spans.len() >= limit {
                        return (w, true);
                    }
                    if listing.sockets.contains(&k) {
                        w.sockets.push(w.spans.len());
                    }
                    let name = listing.names.get(from..to).unwrap_or_default();
                    let at = w.text.len();
                    w.text.extend_from_within(start..end);
                    if !w.text.ends_with('/') {
                        w.text.push('/');
                    }
                    let name_at = w.text.len();
                    w.text.push_str(name);
                    let i = w.spans.len();
                    w.spans.push((at, name_at, w.text.len()));
                    w.prev.push(w.last.insert(hash(name), i));
                    if dir {
                        next.push((at, w.text.len(), false, ino));
                    }
                }
            }
            level = next;
        }
        (w, false)
    }

    /// The unix socket files walked (a host process may listen on one: connecting to it
    /// would reach out of the sandbox).
    pub(crate) fn sockets(&self) -> impl Iterator<Item = &str> {
        self.sockets.iter().map(|&i| self.path(i))
    }

    /// Every folder listed, the roots first, with its inode then.
    pub(crate) fn folders(&self) -> impl Iterator<Item = (&str, u64)> {
        self.folders.iter().map(|&(s, e, ino)| (self.text.get(s..e).unwrap_or_default(), ino))
    }

    /// The folders left out because their names are not UTF-8.
    pub(crate) fn opaque(&self) -> &[PathBuf] {
        &self.opaque
    }

    /// When the walk began.
    pub(crate) fn started(&self) -> Time {
        self.started
    }

    /// Takes the walk as begun at `at` (tests).
    #[cfg(test)]
    pub(crate) fn begun(&mut self, at: Time) {
        self.started = at;
    }

    /// Whether the walk found `path`.
    pub(crate) fn has(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or_default();
        self.named(name).into_iter().any(|i| self.path(i) == path)
    }

    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    pub(crate) fn path(&self, i: usize) -> &str {
        self.spans.get(i).and_then(|&(s, _, e)| self.text.get(s..e)).unwrap_or_default()
    }

    pub(crate) fn name(&self, i: usize) -> &str {
        self.spans.get(i).and_then(|&(_, n, e)| self.text.get(n..e)).unwrap_or_default()
    }

    /// The entries whose name (as bytes) `fits`, in walk order: one pass over the names (a
    /// `**/*.pem` denial looks at every entry the walk found).
    pub(crate) fn fitting(&self, fits: impl Fn(&[u8]) -> bool) -> Vec<usize> {
        let text = self.text.as_bytes();
        let names = self.spans.iter().map(|&(_, n, e)| text.get(n..e).unwrap_or_default());
        names.enumerate().filter(|(_, name)| fits(name)).map(|(i, _)| i).collect()
    }

    /// The entries named `want`, in walk order.
    pub(crate) fn named(&self, want: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = self.last.get(&hash(want)).copied();
        while let Some(i) = at {
            if self.name(i) == want {
                out.push(i);
            }
            at = self.prev.get(i).copied().flatten();
        }
        out.reverse();
        out
    }
}

/// Folders of one depth at least this many are listed on two threads.
const PARALLEL_FOLDERS: usize = 32;

/// One folder's entries (UTF-8 names only, without `.` and `..`): each as where its name is in
/// `names`, and whether it is a folder.
#[derive(Default)]
struct Listing {
    names: String,
    entries: Vec<(usize, usize, bool, u64)>,
    /// Whether the folder could be opened.
    opened: bool,
    /// A root's inode (a folder's other than a root's is in its parent's listing).
    root_ino: Option<u64>,
    /// The names of its folders that are not UTF-8.
    opaque: Vec<std::ffi::OsString>,
    /// Which of `entries` are unix socket files.
    sockets: Vec<usize>,
}

/// Lists `dirs` into `out` (one listing each, same order): the second half on a thread of its
/// own when there are many, all here when there are few or no thread can be started. Each half
/// stops after `budget` entries (the walk keeps no more), so a huge folder costs at most twice
/// the budget, and the entries kept are still the first ones in walk order.
fn list_all(dirs: &[(&str, bool)], out: &mut [Listing], budget: usize) {
    let mut buf = getdents_buffer();
    if dirs.len() < PARALLEL_FOLDERS {
        list_some(dirs, out, budget, &mut buf);
        return;
    }
    let half = dirs.len() / 2;
    let (mine, theirs) = dirs.split_at(half);
    let (out_mine, out_theirs) = out.split_at_mut(half);
    // Behind a lock only so that this thread can do the helper's half when none started.
    let out_theirs = std::sync::Mutex::new(out_theirs);
    let list_theirs = |buf: &mut [std::mem::MaybeUninit<u8>]| {
        let mut out = out_theirs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        list_some(theirs, &mut out, budget, buf);
    };
    std::thread::scope(|s| {
        let helper = std::thread::Builder::new().name("warden-walk".into()).spawn_scoped(s, || list_theirs(&mut getdents_buffer()));
        list_some(mine, out_mine, budget, &mut buf);
        if helper.is_err() {
            list_theirs(&mut buf);
        }
    });
}

/// One getdents buffer per thread, for every folder it lists.
fn getdents_buffer() -> Vec<std::mem::MaybeUninit<u8>> {
    vec![std::mem::MaybeUninit::uninit(); 32 * 1024]
}

/// Lists `dirs` in turn into `out`, `budget` entries in all at most.
fn list_some(dirs: &[(&str, bool)], out: &mut [Listing], budget: usize, buf: &mut [std::mem::MaybeUninit<u8>]) {
    let mut left = budget;
    for (&(d, root), l) in dirs.iter().zip(out.iter_mut()) {
        list(d, root, left, buf, l);
        left -= l.entries.len();
    }
}

/// Lists `dir` into `out` (cleared first), `cap` entries at most; a folder that cannot be
/// opened lists nothing.
fn list(dir: &str, root: bool, cap: usize, buf: &mut [std::mem::MaybeUninit<u8>], out: &mut Listing) {
    out.names.clear();
    out.entries.clear();
    out.opaque.clear();
    out.sockets.clear();
    out.opened = false;
    out.root_ino = None;
    if cap == 0 {
        return;
    }
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if !root {
        flags |= OFlags::NOFOLLOW;
    }
    let Ok(fd) = rustix::fs::openat(rustix::fs::CWD, dir, flags, Mode::empty()) else { return };
    out.opened = true;
    if root {
        out.root_ino = rustix::fs::fstat(&fd).ok().map(|st| st.st_ino);
    }
    let mut entries = RawDir::new(&fd, buf);
    while let Some(Ok(entry)) = entries.next() {
        let kind = match entry.file_type() {
            // No type from the file system: ask it (without following a symlink).
            FileType::Unknown => rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode)),
            kind => kind,
        };
        let dir = kind == FileType::Directory;
        let Ok(name) = entry.file_name().to_str() else {
            if dir {
                out.opaque.push(std::ffi::OsStr::from_bytes(entry.file_name().to_bytes()).to_os_string());
            }
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        let from = out.names.len();
        out.names.push_str(name);
        if kind == FileType::Socket {
            out.sockets.push(out.entries.len());
        }
        out.entries.push((from, out.names.len(), dir, entry.ino()));
        if out.entries.len() >= cap {
            return;
        }
    }
}

/// What [`sparse`] found.
#[derive(Debug, Default)]
pub(crate) struct Sparse {
    /// The paths whose names were kept.
    pub found: Vec<String>,
    /// The folders it could not look into by name: theirs are not UTF-8.
    pub opaque: Vec<PathBuf>,
    /// Whether it stopped at its limit.
    pub cut: bool,
}

/// Past a [`Walk`]'s limit: the paths beneath `roots` whose name `keep` accepts, found by a
/// plain breadth-first listing that records nothing else (so it costs little memory per
/// entry), looking at `limit` entries at most. Links are not followed below a root, as in the
/// walk.
pub(crate) fn sparse(roots: &[PathBuf], keep: impl Fn(&[u8]) -> bool, limit: usize) -> Sparse {
    let mut out = Sparse::default();
    let mut queue: std::collections::VecDeque<(String, bool)> =
        roots.iter().filter_map(|r| r.to_str()).map(|r| (r.to_string(), true)).collect();
    let mut buf = getdents_buffer();
    let mut seen = 0usize;
    while let Some((dir, root)) = queue.pop_front() {
        let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if !root {
            flags |= OFlags::NOFOLLOW;
        }
        let Ok(fd) = rustix::fs::openat(rustix::fs::CWD, dir.as_str(), flags, Mode::empty()) else { continue };
        let mut entries = RawDir::new(&fd, &mut buf);
        while let Some(Ok(entry)) = entries.next() {
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            seen += 1;
            if seen > limit {
                out.cut = true;
                return out;
            }
            let folder = match entry.file_type() {
                FileType::Directory => true,
                FileType::Unknown => rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory),
                _ => false,
            };
            let (keeps, Ok(name)) = (keep(name), std::str::from_utf8(name)) else {
                if folder {
                    out.opaque.push(Path::new(&dir).join(std::ffi::OsStr::from_bytes(name)));
                }
                continue;
            };
            if !keeps && !folder {
                continue;
            }
            let path = if dir.ends_with('/') { format!("{dir}{name}") } else { format!("{dir}/{name}") };
            if keeps {
                out.found.push(path.clone());
            }
            if folder {
                queue.push_back((path, false));
            }
        }
    }
    out
}

/// The name index's key. A fast hash, not a keyed one: names that collide (a workspace can be
/// made to hold such names) only share one chain, which [`Walk::named`] checks name by name,
/// and the map over these keys keeps the standard randomised hasher.
fn hash(name: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::confine::WALK_LIMIT;
    use crate::confine::tests::plant;

    /// The plain breadth-first walk: `read_dir` of each folder in turn, every entry's `path()`,
    /// symlinks not followed, non-UTF-8 names left out.
    pub(crate) fn plain_walk(roots: &[PathBuf]) -> Vec<String> {
        let mut want: Vec<String> = Vec::new();
        let mut queue: std::collections::VecDeque<PathBuf> = roots.iter().cloned().collect();
        while let Some(d) = queue.pop_front() {
            for entry in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
                let path = entry.path();
                if entry.file_type().unwrap().is_dir() {
                    queue.push_back(path.clone());
                }
                if let Some(s) = path.to_str() {
                    want.push(s.to_string());
                }
            }
        }
        want
    }

    /// Depths of many folders are listed on two threads: the entries and their order are still
    /// the plain walk's, and a cut keeps exactly its first entries.
    #[test]
    fn a_wide_walk_lists_what_a_plain_walk_lists_and_cuts_at_the_same_entry() {
        let wide = PARALLEL_FOLDERS * 2 + 3;
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        for a in 0..wide {
            for b in 0..3 {
                dirs.push(format!("p{a}/s{b}"));
                files.push(format!("p{a}/s{b}/m.rs"));
            }
            files.push(format!("p{a}/.env"));
        }
        fn refs(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        let dir = plant("wide", &refs(&dirs), &refs(&files));
        let roots = vec![dir.clone()];
        let want = plain_walk(&roots);
        let (walk, cut) = Walk::new(&roots, WALK_LIMIT);
        let got: Vec<String> = (0..walk.len()).map(|i| walk.path(i).to_string()).collect();
        assert_eq!(got, want);
        assert!(!cut);
        assert_eq!(walk.named(".env").len(), wide);
        for limit in [1, wide, wide + 5, want.len() - 1] {
            let (walk, cut) = Walk::new(&roots, limit);
            let got: Vec<String> = (0..walk.len()).map(|i| walk.path(i).to_string()).collect();
            assert_eq!(got, want[..limit], "limit {limit}");
            assert!(cut, "limit {limit}");
        }
        // A depth is listed no further than the walk can keep: twice the budget at most.
        let level: Vec<String> = (0..wide).map(|a| dir.join(format!("p{a}")).display().to_string()).collect();
        let dirs: Vec<(&str, bool)> = level.iter().map(|d| (d.as_str(), false)).collect();
        let mut listings: Vec<Listing> = (0..wide).map(|_| Listing::default()).collect();
        list_all(&dirs, &mut listings, 5);
        let listed: usize = listings.iter().map(|l| l.entries.len()).sum();
        assert!((5..=10).contains(&listed), "{listed}");
        let _ = std::fs::remove_dir_all(&dir);
    }

}
