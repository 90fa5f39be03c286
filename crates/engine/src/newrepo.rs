//! Repositories the command made.
//!
//! A repository that exists when the run begins has its config and hooks guarded by mounts.
//! One the command makes is its own: `git init sub`, then `core.fsmonitor` in `sub/.git/config`,
//! and the host's next `git status` runs it: in the workspace once `git add sub` records it, in
//! `sub` as soon as an editor's git view or a shell prompt looks there. The same from a `.git`
//! file naming a folder the command filled, or a folder git takes for a bare repository.
//!
//! So the walk of the writable roots taken before the run ([`before`]) is compared with what
//! is there after it, the command's processes all gone ([`check`]): the folders that are
//! other folders now (inode) or had an entry made, removed or renamed since the walk began
//! (ctime, which no program can set back) are listed again, and the folders that are new
//! walked. Every git
//! folder that was not there before is read: its `config` and `config.worktree` must set only
//! what git writes itself (`gitconfig.rs`), its hooks must be git's samples or its templates,
//! and a `commondir` must lead to a folder that passes the same test. What fails is renamed
//! aside like the sweep's paths (`NAME.warden-quarantined`, nothing deleted) and reported as a
//! refused write. A repository that passes (a scaffolded project's `git init`, a `git clone`)
//! is left alone.
//!
//! Limits: the window is the run itself, as for the sweep. New folders are walked up to
//! [`FRESH_LIMIT`] entries. Past the first walk's limit no folder was stamped: there, a
//! repository is judged when a file git reads in it changed during the run.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::confine::Tree;
use crate::walk::{Stamp, Walk};

mod vet;
pub(crate) use vet::{pointed, read};
use vet::{MAX_HOOKS, Vet};

/// What the walk before the run found: the git folders there were, and every folder's inode.
pub(crate) struct Before {
    roots: Vec<PathBuf>,
    walk: Walk,
    walk_cut: bool,
    gitdirs: HashSet<PathBuf>,
}

/// What [`check`] found and did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Checked {
    /// Each path moved aside, where to, and why.
    pub moved: Vec<(PathBuf, PathBuf, String)>,
    /// Each path that should have been and could not be, and why.
    pub left: Vec<(PathBuf, String)>,
    /// Whether a walk stopped at its limit (what lies beyond was not checked).
    pub cut: bool,
}

/// The walk of `tree`'s roots, taken from it, when the policy guards git's files (`None` when
/// it does not: then nothing of git's is guarded anyway).
pub(crate) fn before(tree: &mut Tree, guards: &[String]) -> Option<Before> {
    if !crate::gitguard::guards_git(guards) || tree.roots().is_empty() {
        return None;
    }
    let roots = tree.roots().to_vec();
    let (walk, walk_cut) = tree.take_walk();
    // The folders the walk left out (names that are not UTF-8) are walked here, by name.
    let mut gitdirs: HashSet<PathBuf> = gitdirs(&walk).into_iter().collect();
    gitdirs.extend(gitdirs_below(walk.opaque()).0);
    Some(Before { roots, walk, walk_cut, gitdirs })
}

impl Before {
    /// Takes from the sweep's missing paths those in a repository that is not there yet (a
    /// `.git` was missing on the way: `**/.git/config` in a folder that is no repository).
    /// What a command makes there is a new repository, read by [`check`] as git reads it: a
    /// `git init` that sets nothing more keeps its config and hooks.
    pub(crate) fn claim(&self, missing: &mut Vec<crate::sweep::Missing>) {
        missing.retain(|m| m.names.get(m.there).is_none_or(|n| n.as_os_str() != ".git"));
    }
}

/// The folders (and `.git` files and links) git takes for a repository's own: every entry
/// named `.git`, and every folder holding a `HEAD` beside `objects/` and `refs/` (a bare
/// repository, a submodule's folder in `.git/modules/`) or beside a `commondir` (a linked
/// worktree's).
pub(crate) fn gitdirs(walk: &Walk) -> Vec<PathBuf> {
    let paths = |name: &str| -> HashSet<&str> { walk.named(name).into_iter().map(|i| walk.path(i)).collect() };
    let (objects, refs, commondir) = (paths("objects"), paths("refs"), paths("commondir"));
    let mut out: Vec<PathBuf> = walk.named(".git").into_iter().map(|i| PathBuf::from(walk.path(i))).collect();
    for i in walk.named("HEAD") {
        let Some(dir) = walk.path(i).strip_suffix("/HEAD") else { continue };
        let has = |set: &HashSet<&str>, name: &str| set.contains(format!("{dir}/{name}").as_str());
        if !dir.ends_with("/.git") && ((has(&objects, "objects") && has(&refs, "refs")) || has(&commondir, "commondir")) {
            out.push(PathBuf::from(dir));
        }
    }
    out
}

/// The git folders at and below `roots` (as [`gitdirs`] finds them in a walk), by a plain
/// walk that takes any name, links not followed; at most [`FRESH_LIMIT`] entries, and whether
/// there were more.
fn gitdirs_below(roots: &[PathBuf]) -> (Vec<PathBuf>, bool) {
    let mut out = Vec::new();
    let mut queue: std::collections::VecDeque<PathBuf> = roots.iter().cloned().collect();
    let mut count = 0;
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut names = HashSet::new();
        for entry in entries.filter_map(Result::ok) {
            count += 1;
            if count > FRESH_LIMIT {
                return (out, true);
            }
            let (name, folder) = (entry.file_name(), entry.file_type().is_ok_and(|t| t.is_dir()));
            if name == ".git" {
                out.push(entry.path());
            }
            if folder {
                queue.push_back(entry.path());
            }
            names.insert(name);
        }
        if shaped(&dir, &names) {
            out.push(dir);
        }
    }
    (out, false)
}

/// Whether a folder holding `names` is one git takes for a repository's own, other than a
/// `.git` (see [`gitdirs`]). Of any kind: git follows a link named `objects`.
fn shaped(dir: &Path, names: &HashSet<std::ffi::OsString>) -> bool {
    let has = |name: &str| names.contains(std::ffi::OsStr::new(name));
    dir.file_name().is_none_or(|n| n != ".git") && has("HEAD") && ((has("objects") && has("refs")) || has("commondir"))
}

/// The most entries walked after the run, in folders that are new (or, when the walk before
/// was cut, in all). Far more than the walk before keeps: only names are looked at, and making
/// the folders took the command longer than listing them takes here.
const FRESH_LIMIT: usize = 1_000_000;

/// A folder whose ctime is less than this before the walk began is listed again after the
/// run: a file system may keep ctime at the clock's tick (4 ms at HZ=250), so a change just
/// after the walk can show a ctime a little before it.
const TICK_NS: i128 = 100_000_000;

/// What changed in the git folders of the writable roots during the run.
#[derive(Default)]
struct Made {
    /// The git folders (and `.git` files and links) that may be new.
    gitdirs: Vec<PathBuf>,
    /// What git reads that was made in a git folder there was: a `config`, `config.worktree`,
    /// `commondir` or `hooks` it did not have (past the sweep's repositories, or made after
    /// it).
    added: Vec<PathBuf>,
    /// The git folders there were that are other folders now.
    replaced: HashSet<PathBuf>,
    /// Whether a walk was cut.
    cut: bool,
}

impl Made {
    /// Nothing to read: no git folder may be new, and none there was has a file git reads
    /// that it did not have.
    fn is_empty(&self) -> bool {
        self.gitdirs.is_empty() && self.added.is_empty()
    }
}

/// Finds what changed without walking the roots again: only the folders that changed since
/// the walk are listed, and only folders that were not there are walked.
fn made(before: &Before) -> Made {
    let nanos = |(s, ns): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(ns);
    let settled = nanos(before.walk.started()) - TICK_NS;
    let (mut found, mut fresh, mut replaced, mut added) = (Vec::new(), Vec::new(), HashSet::new(), Vec::new());
    let folders: Vec<(&str, u64)> = before.walk.folders().collect();
    for (&(dir, ino), &now) in folders.iter().zip(&stamps_now(&folders, &before.roots)) {
        // The same folder, and nothing made, removed or renamed in it since the walk.
        if now.is_some_and(|n| n.ino == ino && nanos(n.ctime) < settled) {
            continue;
        }
        // Gone, or no folder now: its parent changed too, and is listed.
        let Some(now) = now else { continue };
        if now.ino != ino {
            // Another folder in its place: all of it is new.
            replaced.insert(PathBuf::from(dir));
            fresh.push(PathBuf::from(dir));
            continue;
        }
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let known = before.gitdirs.contains(Path::new(dir));
        let mut names = HashSet::new();
        for entry in entries.filter_map(Result::ok) {
            let (name, path) = (entry.file_name(), entry.path());
            let folder = entry.file_type().is_ok_and(|t| t.is_dir());
            if name == ".git" {
                found.push(path.clone());
            }
            let read = ["config", "config.worktree", "commondir", "hooks"].iter().any(|n| name == *n);
            if known && read && !path.to_str().is_some_and(|p| before.walk.has(p)) {
                added.push(path.clone());
            }
            // A name that is not UTF-8 the walk never has: walked again below.
            if folder && !path.to_str().is_some_and(|p| before.walk.has(p)) {
                fresh.push(path);
            }
            names.insert(name);
        }
        if shaped(Path::new(dir), &names) {
            found.push(PathBuf::from(dir));
        }
    }
    fresh.extend(before.walk.opaque().iter().cloned());
    let mut cut = false;
    if !fresh.is_empty() {
        let (below, c) = gitdirs_below(&fresh);
        cut = c;
        found.extend(below);
        found.extend(fresh.iter().filter(|f| replaced.contains(*f) && before.gitdirs.contains(*f)).cloned());
    }
    // Past the first walk's limit, no folder was stamped: every git folder there is walked for,
    // and one not known is taken as made when one of the files git reads in it changed
    // during the run.
    if before.walk_cut {
        let (all, c) = gitdirs_below(&before.roots);
        cut |= c;
        found.extend(all.into_iter().filter(|g| !before.gitdirs.contains(g) && touched(g, settled)));
    }
    found.retain(|g| !before.gitdirs.contains(g) || replaced.contains(g));
    found.sort();
    found.dedup();
    replaced.retain(|r| before.gitdirs.contains(r));
    Made { gitdirs: found, added, replaced, cut }
}

/// The stamp of each of `folders` now: on two threads when there are many (each is a system
/// call, and they run side by side), in order.
fn stamps_now(folders: &[(&str, u64)], roots: &[PathBuf]) -> Vec<Option<Stamp>> {
    let now = |part: &[(&str, u64)]| -> Vec<Option<Stamp>> {
        Stamp::now_all(part.iter().map(|&(dir, _)| dir), |dir| roots.iter().any(|r| r.as_os_str() == dir))
    };
    if folders.len() < PARALLEL_STAMPS {
        return now(folders);
    }
    let (mine, theirs) = folders.split_at(folders.len() / 2);
    std::thread::scope(|s| {
        let helper = std::thread::Builder::new().name("warden-stamps".into()).spawn_scoped(s, || now(theirs));
        let mut out = now(mine);
        match helper.map(|h| h.join()) {
            Ok(Ok(rest)) => out.extend(rest),
            _ => out.extend(now(theirs)),
        }
        out
    })
}

/// Folders at least this many are stamped on two threads.
const PARALLEL_STAMPS: usize = 256;

/// Whether the git entry `g` (a file or a link), or a file git reads in the folder it is or
/// names, changed (its ctime, which no program can set back) at `since` or later.
fn touched(g: &Path, since: i128) -> bool {
    use std::os::unix::fs::MetadataExt;
    let recent = |p: &Path| p.symlink_metadata().is_ok_and(|m| i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()) >= since);
    // A folder's own ctime moves whenever git writes in it (`index`): not a sign.
    let Ok(meta) = g.symlink_metadata() else { return false };
    if !meta.is_dir() && recent(g) {
        return true;
    }
    let dir = if meta.is_file() { pointed(g).unwrap_or_else(|_| g.to_path_buf()) } else { g.to_path_buf() };
    let hooks = std::fs::read_dir(dir.join("hooks")).into_iter().flatten().filter_map(Result::ok).take(MAX_HOOKS).map(|e| e.path());
    ["config", "config.worktree", "commondir", "hooks"].iter().map(|n| dir.join(n)).chain(hooks).any(|p| recent(&p))
}

/// What the user's and the system's git config say about new repositories: the folders git
/// copies hooks from, and the hooks folders set relative to a repository's top.
pub(crate) struct Host {
    pub templates: Vec<PathBuf>,
    pub hooks_paths: Vec<String>,
}

impl Host {
    /// Read from the git config files `configs`; `~/` is `home`. A template folder the run
    /// could write (below `roots`) is left out.
    pub(crate) fn read(configs: &[PathBuf], home: &Path, roots: &[PathBuf]) -> Host {
        let mut templates = vec![PathBuf::from("/usr/share/git-core/templates")];
        let mut hooks_paths = Vec::new();
        for config in configs {
            let text = std::fs::read_to_string(config).unwrap_or_default();
            for value in crate::gitguard::values(&text, |s| s.eq_ignore_ascii_case("init"), "templatedir") {
                templates.push(value.strip_prefix("~/").map_or_else(|| PathBuf::from(&value), |rest| home.join(rest)));
            }
            hooks_paths.extend(crate::gitguard::hooks_path(&text).filter(|v| !v.starts_with(['/', '~'])));
        }
        templates.retain(|t| !roots.iter().any(|r| t.starts_with(r)));
        Host { templates, hooks_paths }
    }
}

/// After the run: finds the git folders that are new, reads them, and moves aside what would
/// make git run something.
#[cfg(test)]
pub(crate) fn check(before: &Before, host: &Host) -> Checked {
    vet(before, made(before), host)
}

/// [`check`] of what [`made`] found.
fn vet(before: &Before, made: Made, host: &Host) -> Checked {
    let mut checked = Checked { cut: made.cut, ..Checked::default() };
    if made.is_empty() {
        return checked;
    }
    let vet = Vet::new(before, &made.replaced, host);
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    let mut added: Vec<(PathBuf, String)> = Vec::new();
    for g in &made.gitdirs {
        vet.entry(g, &mut found);
    }
    for path in &made.added {
        vet.added(path, &mut added);
    }
    for (_, why) in &mut found {
        *why = format!("a repository the command made: {why}");
    }
    found.extend(added.into_iter().map(|(p, why)| (p, format!("made during the run in a repository there was: {why}"))));
    let mut seen = HashSet::new();
    for (path, why) in found {
        if !seen.insert(path.clone()) {
            continue;
        }
        match vet.move_aside(&path) {
            Some((from, to)) => checked.moved.push((from, to, why)),
            None => checked.left.push((path, why)),
        }
    }
    checked
}

/// [`check`] after a run, its findings in the run's denials and notes.
pub(crate) fn report(run: &mut warden_feedback::Run, before: &Before, env: &crate::Environment) {
    let configs = [PathBuf::from("/etc/gitconfig"), env.config_home.join("git/config"), env.home.join(".gitconfig")];
    // The user's git config is read only when there is a new git folder to judge.
    let made = made(before);
    let checked = if made.is_empty() {
        Checked { cut: made.cut, ..Checked::default() }
    } else {
        vet(before, made, &Host::read(&configs, &env.home, &before.roots))
    };
    // A command can make any number: the result names the first ones and counts the rest.
    for (path, to, why) in checked.moved.iter().take(MAX_REPORTED) {
        run.denials.push(warden_feedback::Denial {
            op: "fs.write".into(),
            target: path.to_string_lossy().into_owned(),
            source: warden_feedback::DenialSource::Sweep,
            evidence: warden_feedback::Evidence::Observed,
        });
        run.sandbox.notes.push(format!(
            "moved {} to {}: {why} (git on the host would run what it names)",
            path.display(),
            to.display()
        ));
    }
    if checked.moved.len() > MAX_REPORTED {
        run.sandbox.notes.push(format!("moved {} more such paths aside", checked.moved.len() - MAX_REPORTED));
    }
    for (path, why) in checked.left.iter().take(MAX_REPORTED) {
        run.sandbox.notes.push(format!("could not move aside {}: {why}", path.display()));
    }
    if checked.left.len() > MAX_REPORTED {
        run.sandbox.notes.push(format!("could not move {} more such paths aside", checked.left.len() - MAX_REPORTED));
    }
    if checked.cut {
        run.sandbox.notes.push(format!(
            "more than {FRESH_LIMIT} entries in the folders the command made: repositories past them were not checked"
        ));
    }
}

/// The most paths [`report`] names one by one.
const MAX_REPORTED: usize = 100;

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    /// Runs the real git in `dir`, away from the user's and the system's config.
    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_TEMPLATE_DIR")
            .output()
            .expect("git is installed");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Waits past [`TICK_NS`]: what is there now is older than the next walk by more.
    fn settle() {
        std::thread::sleep(std::time::Duration::from_nanos(u64::try_from(TICK_NS).unwrap() + 50_000_000));
    }

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn new_repositories_that_would_make_git_run_something_are_defused_and_others_are_not() {
        let ws = crate::confine::tests::plant("newrepo", &["src"], &[]);
        let templates = ws.with_extension("templates");
        write(&templates.join("hooks/pre-commit"), "#!/bin/sh\necho from the template\n");
        git(&ws, &["init", "-q"]);
        // There before the run: never read, whatever its config says.
        git(&ws, &["init", "-q", "old"]);
        write(&ws.join("old/.git/config"), "[core]\n\tfsmonitor = the user's own\n");
        git(&ws, &["init", "-q", "swapped"]);
        // One without hooks, past the sweep's repositories.
        git(&ws, &["init", "-q", "quiet"]);
        std::fs::remove_dir_all(ws.join("quiet/.git/hooks")).unwrap();
        // Below a name the walk leaves out (not UTF-8): found all the same, and left alone.
        let odd_old = ws.join(std::ffi::OsStr::from_bytes(b"old-\xfe/repo"));
        write(&odd_old.join(".git/config"), "[core]\n\teditor = the user's own\n");
        let deny_write = vec![format!("{}/**/.git/config", ws.display())];
        // Past the tick: only the folders the run changes are looked at again.
        settle();
        let before = before(&mut Tree::new(vec![ws.clone()]), &deny_write).unwrap();
        assert!(super::before(&mut Tree::new(vec![ws.clone()]), &[format!("{}/**/.env", ws.display())]).is_none());

        // The run. What git makes itself is left alone: a repository, a clone, a bare one, a
        // submodule, a hook copied from a template.
        git(&ws, &["init", "-q", "made"]);
        git(&ws.join("made"), &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "first"]);
        git(&ws, &["clone", "-q", "made", "cloned"]);
        git(&ws, &["init", "-q", "--bare", "remote.git"]);
        let made = ws.join("made").display().to_string();
        git(&ws.join("cloned"), &["-c", "protocol.file.allow=always", "submodule", "add", "-q", &made, "lib"]);
        write(&ws.join("made/.git/hooks/pre-commit"), "#!/bin/sh\necho from the template\n");
        // What would run something on the host's next `git status`.
        git(&ws, &["init", "-q", "evil"]);
        let config = ws.join("evil/.git/config");
        let text = std::fs::read_to_string(&config).unwrap() + "[core]\n\tfsmonitor = touch pwned\n";
        write(&config, &text);
        write(&ws.join("evil/.git/hooks/post-checkout"), "#!/bin/sh\necho pwned\n");
        write(&ws.join("fake/config"), "[core] hooksPath = h\n");
        write(&ws.join("pointer/.git"), "gitdir: ../fake\n");
        for d in ["bare/objects", "bare/refs"] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        write(&ws.join("bare/HEAD"), "ref: refs/heads/main\n");
        write(&ws.join("bare/config"), "[include]\n\tpath = x\n");
        write(&ws.join("worktree/.git"), "gitdir: ../wt\n");
        write(&ws.join("wt/HEAD"), "ref: refs/heads/main\n");
        write(&ws.join("wt/commondir"), "../fake\n");
        std::fs::create_dir_all(ws.join("linked")).unwrap();
        std::os::unix::fs::symlink("../evil/.git", ws.join("linked/.git")).unwrap();
        write(&ws.join("src/.git"), "not a pointer\n");
        // Deep in a new folder; in place of a repository that was there.
        write(&ws.join("src/new/deep/.git/config"), "[alias]\n\tst = !x\n");
        let odd = ws.join(std::ffi::OsStr::from_bytes(b"odd-\xff"));
        write(&odd.join("sub/.git/config"), "[core]\n\teditor = x\n");
        std::fs::rename(ws.join("swapped/.git"), ws.join("swapped/.git-old")).unwrap();
        // What git reads, made in a repository there was.
        write(&ws.join("quiet/.git/commondir"), "../../fake\n");
        write(&ws.join("quiet/.git/hooks/pre-push"), "#!/bin/sh\necho pwned\n");
        // Hooks where the user's config sets them, relative to the new repository's top; a
        // bare repository whose `objects` is a link (git follows it).
        git(&ws, &["init", "-q", "hooked"]);
        write(&ws.join("hooked/.githooks/pre-commit"), "#!/bin/sh\necho pwned\n");
        for d in ["linkbare/refs", "elsewhere"] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        std::os::unix::fs::symlink("../elsewhere", ws.join("linkbare/objects")).unwrap();
        write(&ws.join("linkbare/HEAD"), "ref: refs/heads/main\n");
        write(&ws.join("linkbare/config"), "[core]\n\tsshCommand = x\n");
        write(&ws.join("swapped/.git/config"), "[core]\n\tpager = x\n");

        let host = Host { templates: vec![templates.clone()], hooks_paths: vec![".githooks".into()] };
        let checked = check(&before, &host);
        let mut moved: Vec<String> =
            checked.moved.iter().map(|(p, to, _)| format!("{} {}", p.strip_prefix(&ws).unwrap().display(), to.display())).collect();
        moved.sort();
        let q = |p: &str| format!("{p} {}", ws.join(format!("{p}.warden-quarantined")).display());
        let odd_moved = odd.join("sub/.git/config");
        let odd_to = odd.join("sub/.git/config.warden-quarantined");
        let mut want = [
            format!("{} {}", odd_moved.strip_prefix(&ws).unwrap().display(), odd_to.display()),
            q("bare/config"),
            q("evil/.git/config"),
            q("evil/.git/hooks/post-checkout"),
            q("fake/config"),
            q("hooked/.githooks/pre-commit"),
            q("linkbare/config"),
            q("linked/.git"),
            q("quiet/.git/commondir"),
            q("quiet/.git/hooks/pre-push"),
            q("src/.git"),
            q("src/new/deep/.git/config"),
            q("swapped/.git/config"),
        ];
        want.sort();
        assert_eq!(moved, want, "{checked:?}");
        assert!(odd_to.is_file() && odd_old.join(".git/config").is_file());
        assert_eq!((checked.left.len(), checked.cut), (0, false));
        let why = |p: &str| checked.moved.iter().find(|(m, _, _)| m == &ws.join(p)).map(|(_, _, w)| w.clone()).unwrap();
        assert_eq!(why("evil/.git/config"), "a repository the command made: its config sets core.fsmonitor");
        assert_eq!(why("fake/config"), "a repository the command made: its config sets core.hookspath");
        // Nothing is lost, and git no longer reads any of it.
        let kept = std::fs::read_to_string(ws.join("evil/.git/config.warden-quarantined")).unwrap();
        assert!(kept.ends_with("fsmonitor = touch pwned\n"));
        assert!(std::fs::read_to_string(ws.join("old/.git/config")).unwrap().contains("the user's own"));
        for clean in ["made/.git/config", "made/.git/hooks/pre-commit", "cloned/.git/config", "cloned/.git/modules/lib/config", "remote.git/config"] {
            assert!(ws.join(clean).is_file(), "{clean} was moved");
        }
        // A second check finds what is left clean.
        assert_eq!(check(&before, &host).moved, Vec::new());
        let _ = std::fs::remove_dir_all(&ws);
        let _ = std::fs::remove_dir_all(&templates);
    }

    #[test]
    fn a_root_reached_through_a_link_is_looked_at_again() {
        let real = crate::confine::tests::plant("newrepo-link", &["src"], &[]);
        let ws = real.with_extension("link");
        let _ = std::fs::remove_file(&ws);
        std::os::unix::fs::symlink(&real, &ws).unwrap();
        let deny_write = vec![format!("{}/**/.git/config", ws.display())];
        settle();
        let before = before(&mut Tree::new(vec![ws.clone()]), &deny_write).unwrap();
        write(&ws.join(".git/config"), "[core]\n\tfsmonitor = x\n");
        write(&ws.join(".git/HEAD"), "ref: refs/heads/main\n");
        let checked = check(&before, &Host { templates: Vec::new(), hooks_paths: Vec::new() });
        let moved: Vec<&PathBuf> = checked.moved.iter().map(|(p, _, _)| p).collect();
        assert_eq!(moved, [&ws.join(".git/config")], "{checked:?}");
        let _ = std::fs::remove_file(&ws);
        let _ = std::fs::remove_dir_all(&real);
    }

    #[test]
    fn many_folders_are_stamped_on_two_threads_in_order() {
        let dirs: Vec<String> = (0..PARALLEL_STAMPS + 44).map(|i| format!("d{i}")).collect();
        let refs: Vec<&str> = dirs.iter().map(String::as_str).collect();
        let ws = crate::confine::tests::plant("newrepo-many", &refs, &[]);
        let deny_write = vec![format!("{}/**/.git/config", ws.display())];
        settle();
        let before = before(&mut Tree::new(vec![ws.clone()]), &deny_write).unwrap();
        let made: Vec<PathBuf> = ["d0", "d150", &dirs[dirs.len() - 1]].iter().map(|d| ws.join(d).join(".git/config")).collect();
        for config in &made {
            write(config, "[core]\n\tfsmonitor = x\n");
        }
        // In the walk's order, as one thread gives them.
        let folders: Vec<(&str, u64)> = before.walk.folders().collect();
        let one: Vec<Option<Stamp>> = folders.iter().map(|&(d, _)| Stamp::now(d, d == ws.to_str().unwrap())).collect();
        assert_eq!(stamps_now(&folders, &before.roots), one);
        let checked = check(&before, &Host { templates: Vec::new(), hooks_paths: Vec::new() });
        let mut moved: Vec<PathBuf> = checked.moved.into_iter().map(|(p, _, _)| p).collect();
        moved.sort();
        let mut want = made.clone();
        want.sort();
        assert_eq!(moved, want);
        let _ = std::fs::remove_dir_all(&ws);
    }

    #[test]
    fn past_the_walks_limit_a_repository_is_judged_by_the_files_the_run_changed() {
        let ws = crate::confine::tests::plant("newrepo-cut", &["src"], &[]);
        git(&ws, &["init", "-q", "old"]);
        write(&ws.join("old/.git/config"), "[core]\n\teditor = the user's own\n");
        let deny_write = vec![format!("{}/**/.git/config", ws.display())];
        let mut before = before(&mut Tree::new(vec![ws.clone()]), &deny_write).unwrap();
        // As if the walk had stopped before reaching anything, 150 ms after the old config
        // was written: nothing stamped, no git folder known.
        std::thread::sleep(std::time::Duration::from_millis(150));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        before.walk = Walk::default();
        before.walk.begun((i64::try_from(now.as_secs()).unwrap(), i64::from(now.subsec_nanos())));
        before.walk_cut = true;
        before.gitdirs.clear();
        git(&ws, &["init", "-q", "new"]);
        let config = ws.join("new/.git/config");
        write(&config, &(std::fs::read_to_string(&config).unwrap() + "[core]\n\tfsmonitor = x\n"));
        let host = Host { templates: Vec::new(), hooks_paths: Vec::new() };
        let checked = check(&before, &host);
        let moved: Vec<&PathBuf> = checked.moved.iter().map(|(p, _, _)| p).collect();
        assert_eq!(moved, [&config], "{checked:?}");
        assert!(ws.join("old/.git/config").is_file());
        let _ = std::fs::remove_dir_all(&ws);
    }
}
