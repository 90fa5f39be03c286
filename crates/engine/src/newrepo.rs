//! Repositories the command made.
//!
//! A repository that exists when the run begins has its config and hooks guarded by mounts.
//! One the command makes is its own: `git init sub`, then `core.fsmonitor` in `sub/.git/config`,
//! and the host's next `git status` runs it: in the workspace once `git add sub` records it, in
//! `sub` as soon as an editor's git view or a shell prompt looks there. The same from a `.git`
//! file naming a folder the command filled, or a folder git takes for a bare repository.
//!
//! So the walk of the writable roots taken before the run ([`before`]) is compared with what
//! is there after it, the command's processes all gone ([`check`]): the folders whose stamp
//! (inode, ctime) moved are listed again, and the folders that are new walked. Every git
//! folder that was not there before is read: its `config` and `config.worktree` must set only what git writes itself
//! (`gitconfig.rs`), its hooks must be git's samples or its templates, and a `commondir` must
//! lead to a folder that passes the same test. What fails is renamed aside like the sweep's
//! paths (`NAME.warden-quarantined`, nothing deleted) and reported as a refused write. A
//! repository that passes (a scaffolded project's `git init`, a `git clone`) is left alone.
//!
//! Limits: what lies beyond the walk's limit is not looked at, and the window is the run
//! itself, as for the sweep.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::confine::{Tree, WALK_LIMIT};
use crate::walk::{Stamp, Walk};

/// What the walk before the run found: the git folders there were, and every folder's stamp.
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

/// The folders (and `.git` files and links) git takes for a repository's own: every entry
/// named `.git`, and every folder holding a `HEAD` beside `objects/` and `refs/` (a bare
/// repository, a submodule's folder in `.git/modules/`) or beside a `commondir` (a linked
/// worktree's).
fn gitdirs(walk: &Walk) -> Vec<PathBuf> {
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
/// walk that takes any name, links not followed; at most [`WALK_LIMIT`] entries, and whether
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
            if count > WALK_LIMIT {
                return (out, true);
            }
            let (name, folder) = (entry.file_name(), entry.file_type().is_ok_and(|t| t.is_dir()));
            if name == ".git" {
                out.push(entry.path());
            }
            if folder {
                queue.push_back(entry.path());
            }
            names.insert((name, folder));
        }
        if shaped(&dir, &names) {
            out.push(dir);
        }
    }
    (out, false)
}

/// Whether a folder holding `names` (each with whether it is a folder) is one git takes for a
/// repository's own, other than a `.git` (see [`gitdirs`]).
fn shaped(dir: &Path, names: &HashSet<(std::ffi::OsString, bool)>) -> bool {
    let has = |name: &str, folder: bool| names.contains(&(name.into(), folder));
    dir.file_name().is_none_or(|n| n != ".git") && has("HEAD", false) && ((has("objects", true) && has("refs", true)) || has("commondir", false))
}

/// A folder changed less than this before the walk began is listed again after the run
/// whatever its stamp says: a file system may keep ctime at the clock's tick (4 ms at
/// HZ=250), and then a change just after the walk can leave it as it was.
const TICK_NS: i128 = 100_000_000;

/// The git folders that may be new after the run, without walking the roots again: only the
/// folders whose stamp moved are listed, and only folders that were not there are walked.
/// The folders that were git folders and are now others; whether the walk was cut.
fn made(before: &Before) -> (Vec<PathBuf>, HashSet<PathBuf>, bool) {
    let nanos = |(s, ns): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(ns);
    let settled = nanos(before.walk.started()) - TICK_NS;
    let (mut found, mut fresh, mut replaced) = (Vec::new(), Vec::new(), HashSet::new());
    for (dir, stamp) in before.walk.folders() {
        let now = Stamp::now(dir);
        if now == Some(stamp) && nanos(stamp.ctime) < settled {
            continue;
        }
        // Gone, or no folder now: its parent changed too, and is listed.
        let Some(now) = now else { continue };
        if now.ino != stamp.ino {
            // Another folder in its place: all of it is new.
            replaced.insert(PathBuf::from(dir));
            fresh.push(PathBuf::from(dir));
            continue;
        }
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut names = HashSet::new();
        for entry in entries.filter_map(Result::ok) {
            let (name, path) = (entry.file_name(), entry.path());
            let folder = entry.file_type().is_ok_and(|t| t.is_dir());
            if name == ".git" {
                found.push(path.clone());
            }
            // A name that is not UTF-8 the walk never has: walked again below.
            if folder && !path.to_str().is_some_and(|p| before.walk.has(p)) {
                fresh.push(path);
            }
            names.insert((name, folder));
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
    found.retain(|g| !before.gitdirs.contains(g) || replaced.contains(g));
    found.sort();
    found.dedup();
    replaced.retain(|r| before.gitdirs.contains(r));
    (found, replaced, cut)
}

/// After the run: finds the git folders that are new, reads them, and moves aside what would
/// make git run something. `templates` are folders git copies hooks from.
pub(crate) fn check(before: &Before, templates: &[PathBuf]) -> Checked {
    let (new, replaced, cut) = made(before);
    let mut checked = Checked { cut, ..Checked::default() };
    if new.is_empty() {
        return checked;
    }
    let vet = Vet::new(before, &replaced, templates);
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    for g in &new {
        vet.entry(g, &mut found);
    }
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

/// The folders git copies a new repository's hooks from: its own templates and the user's
/// `init.templateDir` (from `configs`), never one the run could write.
pub(crate) fn templates(configs: &[PathBuf], home: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("/usr/share/git-core/templates")];
    for config in configs {
        let text = std::fs::read_to_string(config).unwrap_or_default();
        for value in crate::gitguard::values(&text, |s| s.eq_ignore_ascii_case("init"), "templatedir") {
            out.push(value.strip_prefix("~/").map_or_else(|| PathBuf::from(&value), |rest| home.join(rest)));
        }
    }
    out.retain(|t| !roots.iter().any(|r| t.starts_with(r)));
    out
}

/// The most a file read here may hold.
const MAX_READ: u64 = 1 << 20;
/// The most entries a hooks folder may hold before it is moved aside whole.
const MAX_HOOKS: usize = 512;

struct Vet<'a> {
    /// The writable roots as given and as resolved.
    roots: Vec<(PathBuf, PathBuf)>,
    /// The git folders there were before and still are, resolved.
    known: HashSet<PathBuf>,
    templates: &'a [PathBuf],
}

impl<'a> Vet<'a> {
    fn new(before: &Before, replaced: &HashSet<PathBuf>, templates: &'a [PathBuf]) -> Vet<'a> {
        let roots = before.roots.iter().filter_map(|r| Some((r.clone(), r.canonicalize().ok()?))).collect();
        let known = before.gitdirs.difference(replaced).filter_map(|g| g.canonicalize().ok()).collect();
        Vet { roots, known, templates }
    }

    /// A new git entry: a link (git follows it) is moved aside; a `.git` file leads to the
    /// folder it names; a folder is read.
    fn entry(&self, g: &Path, found: &mut Vec<(PathBuf, String)>) {
        let Ok(meta) = g.symlink_metadata() else { return };
        if meta.file_type().is_symlink() {
            found.push((g.to_path_buf(), "a link where git looks for a repository".into()));
        } else if meta.is_file() {
            match pointed(g) {
                Ok(dir) => self.folder(&dir, 0, found),
                Err(why) => found.push((g.to_path_buf(), why)),
            }
        } else if meta.is_dir() {
            self.folder(g, 0, found);
        }
    }

    /// A git folder: its config files, its hooks, where its `commondir` leads (one step).
    fn folder(&self, dir: &Path, depth: usize, found: &mut Vec<(PathBuf, String)>) {
        let Ok(real) = dir.canonicalize() else { return };
        // One there before is guarded by the mounts; one outside the writable roots the command
        // could not fill.
        if self.known.contains(&real) || !self.roots.iter().any(|(_, r)| real.starts_with(r)) {
            return;
        }
        for name in ["config", "config.worktree"] {
            let path = real.join(name);
            match read(&path) {
                Ok(None) => {}
                Ok(Some(text)) => {
                    if let Some(why) = crate::gitconfig::first_unsafe(&text) {
                        found.push((path, format!("its {name} {why}")));
                    }
                }
                Err(why) => found.push((path, why)),
            }
        }
        self.hooks(&real.join("hooks"), found);
        let commondir = real.join("commondir");
        match read(&commondir) {
            Ok(None) => {}
            Ok(Some(text)) => {
                let to = String::from_utf8_lossy(&text).trim_end().to_string();
                match real.join(&to).canonicalize() {
                    Ok(common) if depth == 0 => self.folder(&common, 1, found),
                    Ok(_) => found.push((commondir, "its commondir leads to another commondir".into())),
                    Err(_) => found.push((commondir, format!("its commondir names {to}, which is not there"))),
                }
            }
            Err(why) => found.push((commondir, why)),
        }
    }

    /// Every hook git could run that is not a copy of a template's.
    fn hooks(&self, hooks: &Path, found: &mut Vec<(PathBuf, String)>) {
        let Ok(meta) = hooks.symlink_metadata() else { return };
        if !meta.is_dir() {
            found.push((hooks.to_path_buf(), "its hooks are not a folder".into()));
            return;
        }
        let Ok(entries) = std::fs::read_dir(hooks) else {
            found.push((hooks.to_path_buf(), "its hooks folder cannot be read".into()));
            return;
        };
        let names: Vec<std::ffi::OsString> = entries.filter_map(Result::ok).map(|e| e.file_name()).take(MAX_HOOKS + 1).collect();
        if names.len() > MAX_HOOKS {
            found.push((hooks.to_path_buf(), format!("its hooks folder holds more than {MAX_HOOKS} entries")));
            return;
        }
        for name in names {
            let path = hooks.join(&name);
            // Git's hooks have no dot in their names: `pre-commit.sample` and what was moved
            // aside (`.warden-quarantined`) never run.
            if name.to_string_lossy().contains('.') || self.copied_from_template(&name, &path) {
                continue;
            }
            found.push((path, format!("hooks/{} is not one of git's templates", name.to_string_lossy())));
        }
    }

    fn copied_from_template(&self, name: &std::ffi::OsStr, path: &Path) -> bool {
        let Ok(Some(mine)) = read(path) else { return false };
        self.templates.iter().any(|t| read(&t.join("hooks").join(name)).ok().flatten().is_some_and(|theirs| theirs == mine))
    }

    /// Renames `path` aside (`sweep.rs`), opening each folder below its root without
    /// following a link.
    fn move_aside(&self, path: &Path) -> Option<(PathBuf, PathBuf)> {
        let parent = path.parent()?.canonicalize().ok()?;
        let (root, real) = self.roots.iter().find(|(_, real)| parent.starts_with(real))?;
        let rel = parent.strip_prefix(real).ok()?;
        crate::sweep::move_aside(root, &rel.join(path.file_name()?))
    }
}

/// The folder a `.git` file names (`gitdir: PATH`, relative to the file's folder), as git
/// reads it; why not, when git could not read it either.
fn pointed(file: &Path) -> Result<PathBuf, String> {
    let text = read(file)?.unwrap_or_default();
    let text = String::from_utf8(text).map_err(|_| "a .git file that is not text".to_string())?;
    let Some(to) = text.strip_prefix("gitdir: ").map(str::trim_end).filter(|t| !t.is_empty()) else {
        return Err("a .git file git cannot read".into());
    };
    let dir = file.parent().unwrap_or(Path::new("/")).join(to);
    if dir.is_dir() { Ok(dir) } else { Err(format!("a .git file naming {to}, which is not a folder")) }
}

/// A regular file's bytes (`None` when nothing is there); an error for a link, something else,
/// or a file too large.
fn read(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let Ok(meta) = path.symlink_metadata() else { return Ok(None) };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if meta.file_type().is_symlink() {
        return Err(format!("its {name} is a link"));
    }
    if !meta.is_file() {
        return Err(format!("its {name} is not a file"));
    }
    if meta.len() > MAX_READ {
        return Err(format!("its {name} is larger than {MAX_READ} bytes"));
    }
    std::fs::read(path).map(Some).map_err(|e| format!("its {name} cannot be read: {e}"))
}

/// [`check`] after a run, its findings in the run's denials and notes.
pub(crate) fn report(run: &mut warden_feedback::Run, before: &Before, env: &crate::Environment) {
    let configs = [env.config_home.join("git/config"), env.home.join(".gitconfig"), PathBuf::from("/etc/gitconfig")];
    let checked = check(before, &templates(&configs, &env.home, &before.roots));
    for (path, to, why) in &checked.moved {
        run.denials.push(warden_feedback::Denial {
            op: "fs.write".into(),
            target: path.to_string_lossy().into_owned(),
            source: warden_feedback::DenialSource::Sweep,
        });
        run.sandbox.notes.push(format!(
            "moved {} to {}: a repository the command made, and {why} (git on the host would run what it names)",
            path.display(),
            to.display()
        ));
    }
    for (path, why) in &checked.left {
        run.sandbox.notes.push(format!("could not move aside {}: a repository the command made, and {why}", path.display()));
    }
    if checked.cut || before.walk_cut {
        run.sandbox.notes.push(format!(
            "more than {WALK_LIMIT} files in the writable grants: repositories the command made beyond them were not checked"
        ));
    }
}

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
        // Below a name the walk leaves out (not UTF-8): found all the same, and left alone.
        let odd_old = ws.join(std::ffi::OsStr::from_bytes(b"old-\xfe/repo"));
        write(&odd_old.join(".git/config"), "[core]\n\teditor = the user's own\n");
        let deny_write = vec![format!("{}/**/.git/config", ws.display())];
        let mut tree = Tree::new(vec![ws.clone()]);
        let mut before = before(&mut tree, &deny_write).unwrap();
        // Every folder's stamp trusted: only the folders the run changes are looked at again.
        before.walk.later(3600);
        std::thread::sleep(std::time::Duration::from_millis(20));
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
        write(&ws.join("swapped/.git/config"), "[core]\n\tpager = x\n");

        let checked = check(&before, std::slice::from_ref(&templates));
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
            q("linked/.git"),
            q("src/.git"),
            q("src/new/deep/.git/config"),
            q("swapped/.git/config"),
        ];
        want.sort();
        assert_eq!(moved, want, "{checked:?}");
        assert!(odd_to.is_file() && odd_old.join(".git/config").is_file());
        assert_eq!((checked.left.len(), checked.cut), (0, false));
        let why = |p: &str| checked.moved.iter().find(|(m, _, _)| m == &ws.join(p)).map(|(_, _, w)| w.clone()).unwrap();
        assert_eq!(why("evil/.git/config"), "its config sets core.fsmonitor");
        assert_eq!(why("fake/config"), "its config sets core.hookspath");
        // Nothing is lost, and git no longer reads any of it.
        let kept = std::fs::read_to_string(ws.join("evil/.git/config.warden-quarantined")).unwrap();
        assert!(kept.ends_with("fsmonitor = touch pwned\n"));
        assert!(std::fs::read_to_string(ws.join("old/.git/config")).unwrap().contains("the user's own"));
        for clean in ["made/.git/config", "made/.git/hooks/pre-commit", "cloned/.git/config", "cloned/.git/modules/lib/config", "remote.git/config"] {
            assert!(ws.join(clean).is_file(), "{clean} was moved");
        }
        // A second check finds what is left clean.
        assert_eq!(check(&before, std::slice::from_ref(&templates)).moved, Vec::new());
        let _ = std::fs::remove_dir_all(&ws);
        let _ = std::fs::remove_dir_all(&templates);
    }
}
