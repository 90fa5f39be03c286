//! What git itself runs or reads config from, found in the workspace: guarded along with the
//! policy's git patterns (`**/.git/config`, `**/.git/hooks/**`), which name the usual places
//! only.
//!
//! - A `.git` *file* (a submodule's, a linked worktree's) names the folder git takes that
//!   repository's config and hooks from.
//! - A git folder not named `.git` (a bare repository, a `--separate-git-dir` folder) has a
//!   config, hooks and a commondir no pattern names, and a `.git` file made later can point
//!   git at it: guarded too.
//! - `core.hooksPath` (in a repository's `.git/config`, or in the user's or the system's git
//!   config) moves the hooks out of `.git/hooks`: to `.githooks/`, `.husky/_`, `tools/hooks/`,
//!   relative to the repository's top when relative.
//! - `include.path` in a repository's `.git/config` makes another file part of its config (a
//!   committed `../.gitconfig` is a common way to share settings): it can set
//!   `core.fsmonitor` like `.git/config` itself.
//!
//! Limits: includes are followed one level, from a repository's own config only; only the
//! shallowest repositories' configs are read (`sweep::MAX_REPOS`).

use std::path::{Path, PathBuf};

use crate::Environment;
use crate::confine::Tree;

/// What a run guards beyond the policy's patterns when they guard git's files (one of them has
/// `/.git/` in it): the paths below `tree`'s roots that exist (to cover), and patterns for the
/// ones that do not yet (to note and sweep, with the policy's own).
pub(crate) fn guards(tree: &mut Tree, env: &Environment, deny_write: &[String]) -> (Vec<PathBuf>, Vec<String>) {
    let (mut present, mut patterns) = (Vec::new(), Vec::new());
    if !guards_git(deny_write) {
        return (present, patterns);
    }
    present.extend(pointers(tree));
    // A path that is there is covered; one that is not yet is noted as a pattern.
    let mut guard = |path: PathBuf, folder: bool| {
        if path.symlink_metadata().is_ok() {
            present.push(path);
        } else {
            patterns.push(if folder { format!("{}/**", path.display()) } else { path.display().to_string() });
        }
    };
    // A git folder by another name (`git init --bare x.git`, `--separate-git-dir=gd`) is one
    // too: a `.git` file made later can point git at it, and no pattern names it.
    for dir in tree.other_gitdirs() {
        for (name, folder) in GIT_RUNS {
            guard(dir.join(name), *folder);
        }
    }
    for (path, folder) in config_paths(tree, env) {
        if below(&path, tree.roots()) {
            guard(path, folder);
        }
    }
    (present, patterns)
}

/// What git runs, or takes what to run from, in a git folder: each with whether it is a folder.
const GIT_RUNS: &[(&str, bool)] = &[("config", false), ("config.worktree", false), ("commondir", false), ("hooks", true)];

/// Whether the policy guards git's files: one of its guarded patterns has `/.git/` in it.
pub(crate) fn guards_git(deny_write: &[String]) -> bool {
    deny_write.iter().any(|p| p.contains("/.git/"))
}

/// The `.git` files below the writable roots (a submodule's, a linked worktree's).
fn pointers(tree: &mut Tree) -> Vec<PathBuf> {
    let repos = tree.repos().to_vec();
    repos.into_iter().map(|r| r.join(".git")).filter(|g| g.symlink_metadata().is_ok_and(|m| m.is_file())).collect()
}

/// What git reads beyond `.git/` for the repositories below the writable roots, existing or
/// not: the hooks folder `core.hooksPath` names (a repository's own setting, else the user's,
/// else the system's; relative to the repository's top) and the files a repository's config
/// includes (`include.path`, `includeIf.*.path`; relative to `.git/`). Each with whether it is
/// a folder.
fn config_paths(tree: &mut Tree, env: &Environment) -> Vec<(PathBuf, bool)> {
    // The shallowest repositories (the walk is breadth-first): each costs a config read.
    let repos: Vec<PathBuf> = tree.repos().iter().take(crate::sweep::MAX_REPOS + 1).filter(|r| r.join(".git").is_dir()).cloned().collect();
    if repos.is_empty() {
        return Vec::new();
    }
    let global = [env.config_home.join("git/config"), env.home.join(".gitconfig"), PathBuf::from("/etc/gitconfig")]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok().as_deref().and_then(hooks_path));
    let home = |v: &str| v.strip_prefix("~/").map(|rest| env.home.join(rest));
    let mut out: Vec<(PathBuf, bool)> = Vec::new();
    let mut add = |p: PathBuf, folder: bool| {
        if !out.iter().any(|(q, _)| *q == p) {
            out.push((p, folder));
        }
    };
    for repo in repos {
        let own = std::fs::read_to_string(repo.join(".git/config")).unwrap_or_default();
        if let Some(value) = hooks_path(&own).or_else(|| global.clone()) {
            add(home(&value).unwrap_or_else(|| repo.join(&value)), true);
        }
        for value in includes(&own) {
            add(crate::leads::lexical(&home(&value).unwrap_or_else(|| repo.join(".git").join(&value))), false);
        }
    }
    out
}

/// The last `core.hooksPath` of a git config text.
pub(crate) fn hooks_path(config: &str) -> Option<String> {
    values(config, |section| section.eq_ignore_ascii_case("core"), "hookspath").pop()
}

/// The files a git config text includes (`[include]` and `[includeIf "..."]` `path`s).
fn includes(config: &str) -> Vec<String> {
    values(config, |s| s.eq_ignore_ascii_case("include") || s.eq_ignore_ascii_case("includeif"), "path")
}

/// The non-empty values of `key` (lowercase) in the sections `section` accepts, in order, as
/// git reads them (`gitconfig.rs`); a text git would refuse is read line by line instead.
pub(crate) fn values(config: &str, section: impl Fn(&str) -> bool, key: &str) -> Vec<String> {
    match crate::gitconfig::entries(config.as_bytes()) {
        Ok(entries) => entries
            .into_iter()
            .filter(|(k, _)| section(&k.section) && k.name == key)
            .filter_map(|(_, v)| v.filter(|v| !v.is_empty()))
            .collect(),
        Err(_) => by_line(config, section, key),
    }
}

/// [`values`], line by line: `key = value` lines below a matching header.
fn by_line(config: &str, section: impl Fn(&str) -> bool, key: &str) -> Vec<String> {
    let mut inside = false;
    let mut found = Vec::new();
    for line in config.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.split([']', ' ', '\t', '"']).next().unwrap_or_default();
            inside = section(name);
            continue;
        }
        let Some((k, value)) = line.split_once('=') else { continue };
        if inside && k.trim().eq_ignore_ascii_case(key) {
            let v = value_of(value);
            if !v.is_empty() {
                found.push(v);
            }
        }
    }
    found
}

/// A git config value: comments cut (`;`, `#` outside quotes), quotes removed.
fn value_of(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in raw.trim().chars() {
        match c {
            '"' => quoted = !quoted,
            ';' | '#' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// Whether `p` is below one of `roots`.
fn below(p: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| p.starts_with(r) && p != r.as_path())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_pointer_files_are_found_and_git_folders_are_not() {
        let ws = crate::confine::tests::plant("pointers", &[".git", "lib", "vendor/wt", "src/.git"], &["lib/.git", "vendor/wt/.git"]);
        let mut tree = Tree::new(vec![ws.clone()]);
        let mut found = pointers(&mut tree);
        found.sort();
        assert_eq!(found, vec![ws.join("lib/.git"), ws.join("vendor/wt/.git")]);
        let _ = std::fs::remove_dir_all(&ws);
    }

    #[test]
    fn hooks_path_is_read_as_git_reads_it() {
        assert_eq!(hooks_path("[core]\n\tbare = false\n\thooksPath = tools/hooks\n"), Some("tools/hooks".into()));
        assert_eq!(hooks_path("[Core]\n  HooksPath=\"my hooks\" ; set by setup.sh\n"), Some("my hooks".into()));
        assert_eq!(hooks_path("[core]\nhooksPath = a\n[core]\nhookspath = b # later wins\n"), Some("b".into()));
        assert_eq!(hooks_path("[remote \"origin\"]\n\thooksPath = x\n[user]\n\tname = n\n"), None);
        assert_eq!(hooks_path("[core]\n\thooksPath =\n"), None);
        // On the header's line, as git reads it; a text git refuses, line by line.
        assert_eq!(hooks_path("[core] hooksPath = .githooks\n"), Some(".githooks".into()));
        assert_eq!(hooks_path("[core]\n\thooksPath = h\n\tbad = \"x\n"), Some("h".into()));
        let text = "[include]\n\tpath = ../.gitconfig\n[includeIf \"gitdir:~/work/\"]\n\tpath = ~/work.inc\n[core]\n\tpath = no\n";
        assert_eq!(includes(text), vec!["../.gitconfig".to_string(), "~/work.inc".to_string()]);
    }

    #[test]
    fn a_repository_setting_wins_over_the_users_and_relative_is_from_its_top() {
        let dir = std::env::temp_dir().join(format!("warden-gitguard-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (ws, home) = (dir.join("ws"), dir.join("home"));
        for d in [ws.join(".git"), ws.join("sub/.git"), ws.join("plain"), home.join(".config")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join(".git/config"), "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = ../.gitconfig\n").unwrap();
        std::fs::write(ws.join("sub/.git/config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(home.join(".gitconfig"), "[core]\n\thooksPath = .hooks\n").unwrap();
        let env = Environment {
            home: home.clone(),
            config_home: home.join(".config"),
            cache_home: home.join(".cache"),
            state_home: home.join(".local/state"),
            is_root: false,
            enterprise_dir: dir.join("etc"),
            cwd: ws.clone(),
            vars: Vec::new(),
        };
        let mut tree = Tree::new(vec![ws.clone()]);
        let mut found = config_paths(&mut tree, &env);
        found.sort();
        let want = vec![(ws.join(".gitconfig"), false), (ws.join("sub/.hooks"), true), (ws.join("tools/hooks"), true)];
        assert_eq!(found, want);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
