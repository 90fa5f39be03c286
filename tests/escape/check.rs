//! Checks made from outside the sandbox: what the planted files look like, where secrets went.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::fixture::Fixture;

/// Everything observable about one file system entry except its access time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    kind: &'static str,
    mode: u32,
    uid: u32,
    gid: u32,
    ino: u64,
    nlink: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    content: Vec<u8>,
}

/// Guarded folders warden makes (empty) when they are missing, to cover them.
const GUARDED_FOLDERS: &[&str] = &["ws/.git/hooks"];

/// The state of every entry that the sandbox must leave alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot(BTreeMap<PathBuf, Entry>);

impl Snapshot {
    /// Takes the state of `outside/`, `readable/`, the guarded workspace paths and `.env`.
    pub fn take(fx: &Fixture) -> Snapshot {
        let mut map = BTreeMap::new();
        for rel in [
            "outside",
            "readable",
            "ws/.git/hooks",
            "ws/.git/config",
            "ws/.warden",
            "ws/.env",
            "policy.policy",
        ] {
            walk(&fx.path(rel), &mut map);
        }
        // The root itself: nothing may appear or vanish next to ws/, outside/, readable/ (the
        // workspace's own times change with every legitimate write, so only its presence counts).
        if let Ok(rd) = fs::read_dir(&fx.root) {
            for e in rd.flatten() {
                map.entry(e.path()).or_insert_with(|| Entry {
                    kind: "present",
                    ..missing()
                });
            }
        }
        Snapshot(map)
    }

    /// Describes every difference from `before`, empty when nothing changed.
    pub fn diff(before: &Snapshot, after: &Snapshot) -> Vec<String> {
        let mut out = Vec::new();
        for (path, old) in &before.0 {
            match after.0.get(path) {
                None => out.push(format!("{} vanished", path.display())),
                // A guarded folder that was missing may appear, empty (anything in it appears
                // on its own): warden makes it so that it can be covered.
                Some(new) if old.kind == "missing" && new.kind == "dir" && GUARDED_FOLDERS.iter().any(|g| path.ends_with(g)) => {}
                Some(new) if new != old => out.push(describe(path, old, new)),
                Some(_) => {}
            }
        }
        for path in after.0.keys() {
            if !before.0.contains_key(path) {
                out.push(format!("{} appeared", path.display()));
            }
        }
        out
    }
}

fn describe(path: &Path, old: &Entry, new: &Entry) -> String {
    let mut what = Vec::new();
    if old.kind != new.kind {
        what.push(format!("kind {} -> {}", old.kind, new.kind));
    }
    if old.content != new.content {
        what.push(format!(
            "content {:?} -> {:?}",
            String::from_utf8_lossy(&old.content),
            String::from_utf8_lossy(&new.content)
        ));
    }
    if old.mode != new.mode {
        what.push(format!("mode {:o} -> {:o}", old.mode, new.mode));
    }
    if (old.uid, old.gid) != (new.uid, new.gid) {
        what.push(format!(
            "owner {}:{} -> {}:{}",
            old.uid, old.gid, new.uid, new.gid
        ));
    }
    if old.ino != new.ino {
        what.push("replaced (inode changed)".to_string());
    }
    if old.nlink != new.nlink {
        what.push(format!("links {} -> {}", old.nlink, new.nlink));
    }
    if old.mtime != new.mtime {
        what.push(format!("mtime {:?} -> {:?}", old.mtime, new.mtime));
    }
    if old.ctime != new.ctime && what.is_empty() {
        what.push("ctime changed (metadata or xattr written)".to_string());
    }
    format!("{} changed: {}", path.display(), what.join(", "))
}

fn missing() -> Entry {
    Entry {
        kind: "missing",
        mode: 0,
        uid: 0,
        gid: 0,
        ino: 0,
        nlink: 0,
        mtime: (0, 0),
        ctime: (0, 0),
        content: Vec::new(),
    }
}

fn entry_of(path: &Path) -> Entry {
    let Ok(md) = fs::symlink_metadata(path) else {
        return missing();
    };
    let ft = md.file_type();
    let (kind, content) = if ft.is_symlink() {
        let target = fs::read_link(path).unwrap_or_default();
        ("symlink", target.into_os_string().into_encoded_bytes())
    } else if ft.is_file() {
        ("file", read_capped(path, 1 << 20))
    } else if ft.is_dir() {
        ("dir", Vec::new())
    } else if ft.is_socket() {
        ("socket", Vec::new())
    } else if ft.is_fifo() {
        ("fifo", Vec::new())
    } else {
        ("device", Vec::new())
    };
    Entry {
        kind,
        mode: md.mode(),
        uid: md.uid(),
        gid: md.gid(),
        ino: md.ino(),
        nlink: md.nlink(),
        mtime: (md.mtime(), md.mtime_nsec()),
        ctime: (md.ctime(), md.ctime_nsec()),
        content,
    }
}

fn walk(path: &Path, map: &mut BTreeMap<PathBuf, Entry>) {
    let entry = entry_of(path);
    let is_dir = entry.kind == "dir";
    map.insert(path.to_path_buf(), entry);
    if is_dir && let Ok(rd) = fs::read_dir(path) {
        for e in rd.flatten() {
            walk(&e.path(), map);
        }
    }
}

fn read_capped(path: &Path, cap: usize) -> Vec<u8> {
    use std::io::Read;
    let mut buf = Vec::new();
    if let Ok(f) = fs::File::open(path) {
        let _ = f.take(cap as u64).read_to_end(&mut buf);
    }
    buf
}

/// Files below the workspace (except `.env`, which holds a planted secret) that contain the
/// fixture's token, and device nodes anywhere below it.
pub fn loot_in_workspace(fx: &Fixture) -> Vec<String> {
    let mut map = BTreeMap::new();
    walk(&fx.ws, &mut map);
    let env = fx.ws.join(".env");
    let mut out = Vec::new();
    for (path, e) in map {
        if path == env {
            continue;
        }
        if e.kind == "device" {
            out.push(format!("device node {} exists", path.display()));
        }
        if contains(&e.content, fx.token().as_bytes()) {
            out.push(format!("{} holds a planted secret", path.display()));
        }
    }
    out
}

/// Whether `hay` contains `needle`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}
