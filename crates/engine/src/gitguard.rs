//! What git itself runs or reads config from, found in the workspace: guarded along with the
//! policy's git patterns (`**/.git/config`, `**/.git/hooks/**`), which name the usual places
//! only.
//!
//! - A `.git` *file* (a submodule's, a linked worktree's) names the folder git takes that
//!   repository's config and hooks from.
//! - `core.hooksPath` (in a repository's `.git/config`, or in the user's or the system's git
//!   config) moves the hooks out of `.git/hooks`: to `.githooks/`, `.husky/_`, `tools/hooks/`,
//!   relative to the repository's top when relative.
//!
//! Limits: `include` and `includeIf` in git config are not followed.

use std::path::{Path, PathBuf};

use crate::Environment;
use crate::confine::Tree;

/// The `.git` files below the writable roots (a submodule's, a linked worktree's).
pub(crate) fn pointers(tree: &mut Tree) -> Vec<PathBuf> {
    let repos = tree.repos().to_vec();
    repos.into_iter().map(|r| r.join(".git")).filter(|g| g.symlink_metadata().is_ok_and(|m| m.is_file())).collect()
}

/// The hooks folders `core.hooksPath` names for the repositories below the writable roots
/// (existing or not): a repository's own setting, else the user's, else the system's.
pub(crate) fn hooks_folders(tree: &mut Tree, env: &Environment) -> Vec<PathBuf> {
    let repos: Vec<PathBuf> = tree.repos().iter().filter(|r| r.join(".git").is_dir()).cloned().collect();
    if repos.is_empty() {
        return Vec::new();
    }
    let global = [env.config_home.join("git/config"), env.home.join(".gitconfig"), PathBuf::from("/etc/gitconfig")]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok().as_deref().and_then(hooks_path));
    let mut out = Vec::new();
    for repo in repos {
        let own = std::fs::read_to_string(repo.join(".git/config")).ok().as_deref().and_then(hooks_path);
        let Some(value) = own.or_else(|| global.clone()) else { continue };
        let folder = match value.strip_prefix("~/") {
            Some(rest) => env.home.join(rest),
            None => repo.join(&value),
        };
        if !out.contains(&folder) {
            out.push(folder);
        }
    }
    out
}

/// The last `core.hooksPath` of a git config text.
fn hooks_path(config: &str) -> Option<String> {
    let mut core = false;
    let mut found = None;
    for line in config.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.split([']', ' ', '\t', '"']).next().unwrap_or_default();
            core = name.eq_ignore_ascii_case("core");
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        if core && key.trim().eq_ignore_ascii_case("hookspath") {
            found = Some(value_of(value));
        }
    }
    found.filter(|v| !v.is_empty())
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

/// Whether `p` is below one of `roots` (the writable grants).
pub(crate) fn writable(p: &Path, roots: &[PathBuf]) -> bool {
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
    }

    #[test]
    fn a_repository_setting_wins_over_the_users_and_relative_is_from_its_top() {
        let dir = std::env::temp_dir().join(format!("warden-gitguard-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (ws, home) = (dir.join("ws"), dir.join("home"));
        for d in [ws.join(".git"), ws.join("sub/.git"), ws.join("plain"), home.join(".config")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join(".git/config"), "[core]\n\thooksPath = tools/hooks\n").unwrap();
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
        let mut found = hooks_folders(&mut tree, &env);
        found.sort();
        assert_eq!(found, vec![ws.join("sub/.hooks"), ws.join("tools/hooks")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
