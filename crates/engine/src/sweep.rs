//! Guarded paths that do not exist when a run begins.
//!
//! A read-only mount covers a guarded path that exists. One that does not (`.git/commondir`,
//! `.claude/settings.json` in a project without `.claude/`, `.mcp.json`) cannot be covered: a
//! mount needs a mount point, that is the path made on the host first, and Landlock cannot
//! refuse one name inside a writable folder. A command could make it, and the host's next
//! `git` or agent session would read it.
//!
//! So before the run each such path is noted ([`missing`]), and after the run, its processes
//! all gone, whatever is there now is renamed aside (`NAME.warden-quarantined`, which no tool
//! reads; nothing is deleted) and reported as a refused write ([`sweep`]): the path itself, or
//! a link put where a folder on the way to it should be. Every step opens one name below a
//! folder it has checked, never following a symbolic link.
//!
//! Limits: the window is the run itself (a host process that reads the path while the command
//! runs sees what it wrote), and what a host process makes there meanwhile is moved aside too.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::confine::{Shape, Tree};

/// A guarded path missing when the run began.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Missing {
    /// The writable folder it is below (a grant, or a folder of one).
    pub root: PathBuf,
    /// The names from `root` down to the path.
    pub names: Vec<PathBuf>,
    /// How many of `names` were there (folders) when it was noted: the next one was missing.
    pub there: usize,
}

#[cfg(test)]
impl Missing {
    /// The guarded path.
    pub fn path(&self) -> PathBuf {
        self.names.iter().fold(self.root.clone(), |p, n| p.join(n))
    }
}

/// What `lstat` found on the way, remembered across the paths of one view (they share
/// folders: `.claude/settings.json` and `.claude/hooks`).
#[derive(Default)]
pub(crate) struct Seen(std::collections::HashMap<PathBuf, Option<bool>>);

impl Seen {
    /// `Some(true)`: a folder; `Some(false)`: something else; `None`: nothing there.
    fn kind(&mut self, p: &Path) -> Option<bool> {
        if let Some(k) = self.0.get(p) {
            return *k;
        }
        let k = p.symlink_metadata().ok().map(|m| m.file_type().is_dir());
        self.0.insert(p.to_path_buf(), k);
        k
    }
}

/// `path` (below the writable folder `root`) as a [`Missing`], when it is missing and every
/// existing name on the way to it is a folder. `None` when it exists (a mount covers it) or
/// something other than a folder is on the way (then it is not where the pattern said).
pub(crate) fn missing(root: &Path, path: &Path, seen: &mut Seen, tree: &Tree) -> Option<Missing> {
    let below = path.strip_prefix(root).ok()?;
    let mut names = Vec::new();
    for c in below.components() {
        let Component::Normal(name) = c else { return None };
        names.push(PathBuf::from(name));
    }
    if names.is_empty() {
        return None;
    }
    let mut at = root.to_path_buf();
    for (i, name) in names.iter().enumerate() {
        at.push(name);
        // The walk of the writable roots, when there is one, answers without a system call.
        if tree.walked_absent(&at) {
            return Some(Missing { root: root.to_path_buf(), names, there: i });
        }
        match seen.kind(&at) {
            Some(true) if i + 1 < names.len() => {}
            None => return Some(Missing { root: root.to_path_buf(), names, there: i }),
            // The path itself exists, or a file or link is on the way.
            Some(_) => return None,
        }
    }
    None
}

/// The missing paths a guarded pattern names (see the module docs), below the writable
/// roots of `tree`: an exact path or a folder (`X/**`) as it is; a `**/NAME...` pattern at the
/// top of each writable root and of each repository found in it (a folder holding `.git`),
/// with one more `**` inside (`**/.git/modules/**/config`) taken one folder deep. Other
/// wildcards give nothing.
pub(crate) fn candidates(pattern: &str, shaped: &Shape, tree: &mut Tree, seen: &mut Seen) -> Vec<Missing> {
    let mut out = Vec::new();
    match shaped {
        Shape::Exact(p) | Shape::Tree(p) => {
            if let Some(root) = tree.roots().iter().find(|r| p.starts_with(r) && p != r.as_path()) {
                out.extend(missing(root, p, seen, tree));
            }
        }
        Shape::Deep(prefix) => {
            let segs: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
            let Some(at) = segs.iter().position(|s| s.contains(['*', '?', '['])) else { return out };
            let mut rest: Vec<&str> = segs.get(at + 1..).unwrap_or_default().to_vec();
            if segs.get(at) != Some(&"**") || rest.is_empty() {
                return out;
            }
            if rest.last() == Some(&"**") {
                rest.pop();
            }
            let inner = rest.iter().position(|s| *s == "**");
            let (before, after) = match inner {
                Some(i) => (rest.get(..i).unwrap_or_default(), rest.get(i + 1..).unwrap_or_default()),
                None => (rest.as_slice(), &[][..]),
            };
            if before.is_empty() || before.iter().chain(after).any(|s| s.contains(['*', '?', '[']) || *s == "..") {
                return out;
            }
            tree.repos();
            let roots = tree.roots();
            // The shallowest repositories first (the walk is breadth-first), at most MAX_REPOS.
            let repos = tree.known_repos();
            let nested = repos.iter().filter(|d| !roots.contains(d)).take(MAX_REPOS);
            let anchors = roots.iter().chain(nested).filter(|a| a.starts_with(prefix));
            for anchor in anchors {
                let Some(root) = roots.iter().find(|r| anchor.starts_with(r)) else { continue };
                let mut base = anchor.clone();
                base.extend(before);
                if inner.is_none() {
                    out.extend(missing(root, &base, seen, tree));
                    continue;
                }
                if after.is_empty() || seen.kind(&base) != Some(true) {
                    continue;
                }
                // One folder deep (`.git/modules/NAME/`), folders only, links not followed.
                let names: Vec<PathBuf> = std::fs::read_dir(&base)
                    .map(|rd| rd.filter_map(Result::ok).filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect())
                    .unwrap_or_default();
                for sub in names {
                    let path = after.iter().fold(sub, |p, s| p.join(s));
                    out.extend(missing(root, &path, seen, tree));
                }
            }
        }
        Shape::Last(_) => {}
    }
    out
}

/// At most this many repositories below the writable roots get their own missing paths noted
/// (each adds about as many as the policy has `**/NAME` guards).
pub(crate) const MAX_REPOS: usize = 8;

/// What a swept path is renamed to: beside it, under a name no tool reads.
const QUARANTINE: &str = ".warden-quarantined";

/// After the run: moves aside what the command made at each missing path. Returns each path
/// moved and where to, and the ones that could not be moved.
pub(crate) fn sweep(missing: &[Missing]) -> (Vec<(PathBuf, PathBuf)>, Vec<PathBuf>) {
    let (mut moved, mut left) = (Vec::new(), Vec::new());
    // The paths share a few roots: each is opened and listed once, and a path whose first
    // name is not in its root's listing (most) needs nothing more.
    let mut roots: Vec<(&Path, Option<(OwnedFd, Vec<Vec<u8>>)>)> = Vec::new();
    // A probe follows the folders that were there; a link put in place of one is found by the
    // careful walk below when the probe sees something through it, and is harmless otherwise.
    let mut probed: std::collections::HashMap<PathBuf, bool> = std::collections::HashMap::new();
    for m in missing {
        let Some(first) = m.names.first() else { continue };
        let i = match roots.iter().position(|(r, _)| *r == m.root.as_path()) {
            Some(i) => i,
            None => {
                roots.push((&m.root, listed(&m.root)));
                roots.len() - 1
            }
        };
        // The root was a folder the run could write in; one it cannot open now was moved or
        // replaced, and then nothing below it is where the host looks either.
        let Some((fd, names)) = roots.get(i).and_then(|(_, l)| l.as_ref()) else { continue };
        if !names.iter().any(|n| n.as_slice() == first.as_os_str().as_bytes()) {
            continue;
        }
        // Below the root, the first name that was missing: still missing (most), nothing more.
        if m.there > 0 {
            let probe = m.names.iter().take(m.there + 1).fold(m.root.clone(), |p, n| p.join(n));
            let made = *probed.entry(probe).or_insert_with_key(|p| p.symlink_metadata().is_ok());
            if !made {
                continue;
            }
        }
        match sweep_one(fd, m) {
            Ok(Some(pair)) => moved.push(pair),
            Ok(None) => {}
            Err(p) => left.push(p),
        }
    }
    moved.dedup();
    left.dedup();
    (moved, left)
}

/// Renames what is at `rel` below `root` aside as [`sweep`] does (each folder below `root`
/// opened without following a link; a link on the way is what is moved). `None` when nothing
/// is there or it could not be moved.
pub(crate) fn move_aside(root: &Path, rel: &Path) -> Option<(PathBuf, PathBuf)> {
    let names = rel.components().map(|c| match c {
        Component::Normal(n) => Some(PathBuf::from(n)),
        _ => None,
    });
    let names = names.collect::<Option<Vec<PathBuf>>>().filter(|n| !n.is_empty())?;
    let fd = rustix::fs::openat(rustix::fs::CWD, root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    sweep_one(&fd, &Missing { root: root.to_path_buf(), names, there: 0 }).ok().flatten()
}

/// `root` opened (links in its own path followed, as the mount showed it) and the names in it.
fn listed(root: &Path) -> Option<(OwnedFd, Vec<Vec<u8>>)> {
    let fd = rustix::fs::openat(rustix::fs::CWD, root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let mut names = Vec::new();
    let mut dir = rustix::fs::Dir::read_from(&fd).ok()?;
    while let Some(entry) = dir.read() {
        names.push(entry.ok()?.file_name().to_bytes().to_vec());
    }
    Some((fd, names))
}

/// The path moved and where to (`Ok(Some)`), nothing made (`Ok(None)`), or what could not be
/// moved.
fn sweep_one(root: &OwnedFd, m: &Missing) -> Result<Option<(PathBuf, PathBuf)>, PathBuf> {
    let dir = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut fd: Option<OwnedFd> = None;
    let mut at = m.root.clone();
    for (i, name) in m.names.iter().enumerate() {
        at.push(name);
        let parent = fd.as_ref().unwrap_or(root);
        let Ok(st) = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) else { return Ok(None) };
        let kind = FileType::from_raw_mode(st.st_mode);
        if i + 1 == m.names.len() {
            // It was missing: whatever is there now, the command made.
            return quarantine(parent, name.as_os_str(), &at).map(Some).map_err(|()| at);
        }
        match kind {
            // A folder, old or new: what matters is below it.
            FileType::Directory => match rustix::fs::openat(parent, name, dir, Mode::empty()) {
                Ok(next) => fd = Some(next),
                Err(_) => return Err(at),
            },
            // A link on the way (new, or where a folder was): the path resolves wherever it
            // points, so the link goes.
            FileType::Symlink => return quarantine(parent, name.as_os_str(), &at).map(Some).map_err(|()| at),
            // A file on the way: the path cannot be there.
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// Renames `name` in `parent` (whose path is `path`) to a free `NAME.warden-quarantined[.N]`
/// beside it, never replacing anything: nothing the command made is lost, and no tool reads it
/// under that name.
fn quarantine(parent: &OwnedFd, name: &OsStr, path: &Path) -> Result<(PathBuf, PathBuf), ()> {
    for n in 0..100 {
        let mut new = name.to_os_string();
        new.push(QUARANTINE);
        if n > 0 {
            new.push(format!(".{n}"));
        }
        match rustix::fs::renameat_with(parent, name, parent, &new, rustix::fs::RenameFlags::NOREPLACE) {
            Ok(()) => return Ok((path.to_path_buf(), path.with_file_name(new))),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(_) => return Err(()),
        }
    }
    Err(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("warden-sweep-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_missing_paths_below_folders_are_noted() {
        let ws = dir("note");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".mcp.json"), "{}").unwrap();
        std::fs::write(ws.join("file"), "x").unwrap();
        // Answered by lstat (no walk yet), then by the walk: the same.
        let mut tree = Tree::new(vec![ws.clone()]);
        for walked in [false, true] {
            if walked {
                tree.repos();
            }
            only_missing_paths_are_noted(&ws, &tree);
        }
        let _ = std::fs::remove_dir_all(&ws);
    }

    fn only_missing_paths_are_noted(ws: &Path, tree: &Tree) {
        let ws = ws.to_path_buf();
        let mut seen = Seen::default();
        let m = missing(&ws, &ws.join(".git/commondir"), &mut seen, tree).unwrap();
        assert_eq!(m.path(), ws.join(".git/commondir"));
        assert!(missing(&ws, &ws.join(".claude/settings.json"), &mut seen, tree).is_some());
        assert_eq!(missing(&ws, &ws.join(".mcp.json"), &mut seen, tree), None, "an existing path is the mount's");
        assert_eq!(missing(&ws, &ws.join("file/x"), &mut seen, tree), None, "a file on the way");
        assert_eq!(missing(&ws, &ws, &mut seen, tree), None);
    }

    #[test]
    fn patterns_name_the_tops_of_the_workspace_and_of_its_repositories() {
        let ws = dir("cand");
        for d in [".git/modules/lib", ".git/modules/other", "vendor/sub/.git", "src"] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        std::fs::write(ws.join(".git/modules/other/commondir"), "../..").unwrap();
        let mut tree = Tree::new(vec![ws.clone()]);
        let mut seen = Seen::default();
        let mut paths = |pattern: &str| -> Vec<PathBuf> {
            let shaped = crate::confine::shape(pattern);
            let mut v: Vec<PathBuf> = candidates(pattern, &shaped, &mut tree, &mut seen).iter().map(Missing::path).collect();
            v.sort();
            v
        };
        let at = |rels: &[&str]| -> Vec<PathBuf> { rels.iter().map(|r| ws.join(r)).collect() };
        assert_eq!(paths("**/.git/commondir"), at(&[".git/commondir", "vendor/sub/.git/commondir"]));
        assert_eq!(paths("**/.claude/hooks/**"), at(&[".claude/hooks", "vendor/sub/.claude/hooks"]));
        // One folder deep; an existing one is the mount's.
        assert_eq!(paths("**/.git/modules/**/commondir"), at(&[".git/modules/lib/commondir"]));
        assert_eq!(paths(&format!("{}/.warden/**", ws.display())), at(&[".warden"]));
        // Outside the writable roots, other wildcards, the root itself: nothing.
        assert_eq!(paths("/etc/cron.d/**"), Vec::<PathBuf>::new());
        assert_eq!(paths("**/*.pem"), Vec::<PathBuf>::new());
        assert_eq!(paths("**/.git/*/config"), Vec::<PathBuf>::new());
        assert_eq!(paths(&format!("{}/**", ws.display())), Vec::<PathBuf>::new());
        let _ = std::fs::remove_dir_all(&ws);
    }

    #[test]
    fn what_the_run_made_is_moved_aside_and_nothing_else() {
        let ws = dir("sweep");
        let outside = dir("sweep-outside");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join(".vscode")).unwrap();
        let tree = Tree::new(vec![ws.clone()]);
        let mut seen = Seen::default();
        let wanted = [".git/commondir", ".claude/settings.json", ".husky", ".mcp.json", ".vscode/tasks.json", ".gemini/settings.json", ".envrc"];
        let noted: Vec<Missing> = wanted.iter().filter_map(|p| missing(&ws, &ws.join(p), &mut seen, &tree)).collect();
        assert_eq!(noted.len(), wanted.len());
        // The "run": a file, a new folder with the file and a neighbour, a folder of hooks, a
        // link where a folder was, a link to a file outside; `.gemini` made, its file not.
        std::fs::write(ws.join(".git/commondir"), "../fake").unwrap();
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        std::fs::write(ws.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(ws.join(".claude/notes.md"), "kept").unwrap();
        std::fs::write(ws.join(".claude/settings.json.warden-quarantined"), "an earlier one").unwrap();
        std::fs::create_dir_all(ws.join(".husky/_")).unwrap();
        std::fs::write(ws.join(".husky/_/pre-commit"), "evil").unwrap();
        std::fs::write(outside.join("tasks.json"), "kept outside").unwrap();
        std::fs::rename(ws.join(".vscode"), ws.join(".vscode-old")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join(".vscode")).unwrap();
        std::os::unix::fs::symlink(outside.join("tasks.json"), ws.join(".mcp.json")).unwrap();
        std::fs::create_dir_all(ws.join(".gemini")).unwrap();
        let (mut moved, left) = sweep(&noted);
        moved.sort();
        let q = |p: &str| (ws.join(p), ws.join(format!("{p}.warden-quarantined")));
        let mut want = vec![q(".git/commondir"), q(".husky"), q(".mcp.json"), q(".vscode")];
        want.push((ws.join(".claude/settings.json"), ws.join(".claude/settings.json.warden-quarantined.1")));
        want.sort();
        assert_eq!((moved, left), (want, Vec::new()));
        for gone in [".git/commondir", ".claude/settings.json", ".husky", ".mcp.json", ".vscode"] {
            assert!(ws.join(gone).symlink_metadata().is_err(), "{gone} is still there");
        }
        assert_eq!(std::fs::read_to_string(ws.join(".husky.warden-quarantined/_/pre-commit")).unwrap(), "evil", "nothing is lost");
        assert_eq!(std::fs::read_to_string(ws.join(".claude/settings.json.warden-quarantined")).unwrap(), "an earlier one");
        assert_eq!(std::fs::read_to_string(ws.join(".claude/notes.md")).unwrap(), "kept");
        assert_eq!(std::fs::read_to_string(outside.join("tasks.json")).unwrap(), "kept outside", "a link was followed");
        assert!(ws.join(".vscode-old").is_dir() && ws.join(".gemini").is_dir());
        // A second sweep finds nothing made.
        assert_eq!(sweep(&noted), (Vec::new(), Vec::new()));
        let _ = std::fs::remove_dir_all(&ws);
        let _ = std::fs::remove_dir_all(&outside);
    }
}
