//! The repository a `git` command of a hook's call would use, and whether git would run what
//! it names.
//!
//! Policies guard git's files by name (`**/.git/config`, `**/.git/hooks/**`). A git folder
//! that is not named `.git` escapes that: `echo 'gitdir: /tmp/x' > sub/.git` (or `git init
//! --separate-git-dir=/tmp/x sub`) makes `sub` a repository whose config and hooks live in
//! `/tmp/x`, written freely, and `cd sub && git status` then runs its `core.fsmonitor`. A run
//! in the sandbox has the check after it (`newrepo.rs`); a hook confines nothing, so before a
//! `git` command is allowed the repository it would use is found as git finds it, and one whose
//! git folder is not named `.git` must set only what git writes itself (`gitconfig.rs`) and
//! have no hooks but git's samples.

use std::path::{Component, Path, PathBuf};

use warden_shell::Analysis;

/// At most this many folders up from a working directory are looked at.
const MAX_UP: usize = 64;

/// Why the repository a `git` command of `analysis` (started in `cwd`) would use is not safe
/// to run git in, if one is not. The folders looked at are `cwd`, every literal `cd`/`pushd`
/// target seen before the command, and its `-C` values.
pub fn unsafe_repository(analysis: &Analysis, cwd: &Path, home: &Path) -> Option<String> {
    let mut dirs: Vec<PathBuf> = vec![cwd.to_path_buf()];
    for cmd in &analysis.commands {
        let known: Vec<&str> = cmd.argv.iter().skip(1).filter(|w| w.known).map(|w| w.text.as_str()).collect();
        match cmd.program.as_str() {
            "cd" | "pushd" => {
                if let Some(target) = known.iter().find(|a| !a.starts_with('-')) {
                    let at = dirs.last().cloned().unwrap_or_else(|| cwd.to_path_buf());
                    dirs.push(resolve(&at, target, home));
                }
            }
            "git" => {
                let mut here = dirs.clone();
                let mut words = known.iter();
                while let Some(w) = words.next() {
                    if *w == "-C"
                        && let Some(d) = words.next()
                    {
                        let at = here.last().cloned().unwrap_or_else(|| cwd.to_path_buf());
                        here.push(resolve(&at, d, home));
                    }
                }
                if let Some(why) = here.iter().find_map(|d| repository(d).and_then(|g| g.map_or_else(Some, |g| vet(&g)))) {
                    return Some(why);
                }
            }
            _ => {}
        }
    }
    None
}

/// Why a file tool should not write `path` (absolute, `..` resolved), when it is one of git's
/// own: a `.git` (a folder, or a file naming one) or anything in it, a `HEAD` or `commondir`
/// (which make a folder one git takes for a repository's), or anything in a folder that is a
/// git folder already (a bare repository's `config`, its `hooks/`).
pub fn git_own(path: &Path) -> Option<String> {
    let shown = path.display();
    if path.components().any(|c| c == Component::Normal(".git".as_ref())) {
        return Some(format!("`{shown}` is in a git folder"));
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if name == "HEAD" || name == "commondir" {
        return Some(format!("`{shown}` would make its folder a git folder"));
    }
    let folder = path.ancestors().skip(1).take(MAX_UP).find(|d| is_gitdir(d))?;
    Some(format!("`{shown}` is in {}, a git folder", folder.display()))
}

/// `path` from `at` (`~` is `home`), `..` taken by name.
fn resolve(at: &Path, path: &str, home: &Path) -> PathBuf {
    let joined = match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        _ => at.join(path),
    };
    crate::leads::lexical(&joined)
}

/// The git folder git would use from `dir`: the first `.git` up from it (a folder, a link, or
/// a file naming one), or the first folder that is a git folder itself (a bare repository).
/// An error when the `.git` there is something git would read as a file that this cannot read
/// safely (a FIFO, which would hang git; a file too large).
fn repository(dir: &Path) -> Option<Result<PathBuf, String>> {
    let mut at = Some(dir);
    for _ in 0..MAX_UP {
        let d = at?;
        let dot = d.join(".git");
        if let Ok(meta) = dot.symlink_metadata() {
            if meta.is_dir() || meta.file_type().is_symlink() {
                return Some(Ok(dot));
            }
            return Some(crate::newrepo::pointed(&dot).map_err(|why| format!("git would read {}, and {why}", dot.display())));
        }
        if is_gitdir(d) {
            return Some(Ok(d.to_path_buf()));
        }
        at = d.parent();
    }
    None
}

/// A folder git takes for a git folder: `HEAD`, and `objects` and `refs` (or a `commondir`).
fn is_gitdir(d: &Path) -> bool {
    let has = |n: &str| d.join(n).symlink_metadata().is_ok();
    has("HEAD") && ((has("objects") && has("refs")) || has("commondir"))
}

/// Why git should not run in the repository of git folder `g`, if anything: only one whose
/// path has no `.git` in it is looked at (the rest is guarded by name).
fn vet(g: &Path) -> Option<String> {
    let real = g.canonicalize().ok()?;
    if real.components().any(|c| c == Component::Normal(".git".as_ref())) {
        return None;
    }
    let shown = real.display();
    for name in ["config", "config.worktree", "commondir"] {
        // Not followed, not blocked on: a FIFO there would hang git, and this check with it.
        let text = match crate::newrepo::read(&real.join(name)) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(why) => return Some(format!("the repository's git folder {shown} is not named .git, and {why}")),
        };
        if name == "commondir" {
            return Some(format!("the repository's git folder {shown} is not named .git and has a commondir, which sends git elsewhere"));
        }
        if let Some(why) = crate::gitconfig::first_unsafe(&text) {
            return Some(format!("the repository's git folder {shown} is not named .git, and its {name} {why}: git would run what it names"));
        }
    }
    let hooks = std::fs::read_dir(real.join("hooks")).into_iter().flatten().filter_map(Result::ok);
    if let Some(hook) = hooks.map(|e| e.file_name()).find(|n| !n.to_string_lossy().contains('.')) {
        return Some(format!("the repository's git folder {shown} is not named .git and has a hook, hooks/{}", hook.to_string_lossy()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path, files: &[(&str, &str)]) {
        for (p, text) in files {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    #[test]
    fn a_git_folder_not_named_dot_git_is_vetted_before_git_runs_in_it() {
        let dir = std::env::temp_dir().join(format!("warden-gitrepo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (ws, home) = (dir.join("ws"), dir.join("home"));
        tree(&ws, &[(".git/HEAD", "ref: refs/heads/main\n"), (".git/config", "[core]\n\thooksPath = .husky\n"), ("src/a", "")]);
        std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
        std::fs::create_dir_all(ws.join(".git/refs")).unwrap();
        let evil = dir.join("evil");
        tree(&evil, &[("HEAD", "ref: refs/heads/main\n"), ("config", "[core]\n\tfsmonitor = touch /tmp/pwned\n")]);
        std::fs::create_dir_all(evil.join("objects")).unwrap();
        std::fs::create_dir_all(evil.join("refs")).unwrap();
        tree(&ws, &[("sub/.git", &format!("gitdir: {}\n", evil.display()))]);
        let check = |cmd: &str| unsafe_repository(&warden_shell::analyse(cmd), &ws, &home);
        // The workspace's own repository is guarded by name: its config is the user's.
        assert_eq!(check("git status"), None);
        assert_eq!(check("cd src && git log"), None);
        for cmd in ["cd sub && git status", "git -C sub status", "cd sub; cd ..; git status", "pushd sub/x; git diff"] {
            let why = check(cmd).unwrap_or_else(|| panic!("{cmd}"));
            assert!(why.contains("core.fsmonitor"), "{cmd}: {why}");
        }
        // Not a git command, or a bare repository that sets nothing.
        assert_eq!(check("cd sub && ls"), None);
        std::fs::write(evil.join("config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n").unwrap();
        assert_eq!(check("cd sub && git status"), None);
        tree(&evil, &[("hooks/post-checkout", "#!/bin/sh\n"), ("hooks/pre-commit.sample", "")]);
        assert!(check("cd sub && git status").is_some_and(|w| w.contains("hooks/post-checkout")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn git_s_own_files_are_known_wherever_they_are() {
        let dir = std::env::temp_dir().join(format!("warden-gitrepo-own-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        tree(&dir, &[("bare.git/HEAD", "ref: refs/heads/main\n"), ("src/main.rs", "")]);
        std::fs::create_dir_all(dir.join("bare.git/objects")).unwrap();
        std::fs::create_dir_all(dir.join("bare.git/refs")).unwrap();
        for own in ["sub/.git", ".git/config", "a/.git/info/exclude", "x/HEAD", "x/commondir", "bare.git/config", "bare.git/hooks/pre-commit"] {
            assert!(git_own(&dir.join(own)).is_some(), "{own}");
        }
        for other in ["src/main.rs", "x/config", "config", "notes/HEADER.md", ".gitignore", ".github/workflows/ci.yml"] {
            assert_eq!(git_own(&dir.join(other)), None, "{other}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_fifo_where_git_reads_is_refused_without_blocking() {
        // A config or a `.git` file that is a FIFO would block a reader until someone writes
        // it: the check must answer (refuse), not hang (this test would hang).
        let dir = std::env::temp_dir().join(format!("warden-gitrepo-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (ws, home) = (dir.join("ws"), dir.join("home"));
        let bare = ws.join("bare");
        tree(&bare, &[("HEAD", "ref: refs/heads/main\n")]);
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs")).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, &bare.join("config"), rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o644), 0).unwrap();
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, &ws.join("sub/.git"), rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o644), 0).unwrap();
        let check = |cmd: &str| unsafe_repository(&warden_shell::analyse(cmd), &ws, &home);
        let why = check("cd bare && git status").expect("a FIFO config is refused");
        assert!(why.contains("config is not a file"), "{why}");
        let why = check("git -C sub status").expect("a FIFO .git is refused");
        assert!(why.contains(".git is not a file"), "{why}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
