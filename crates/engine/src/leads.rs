//! Where a path leads on the host: `..` taken by name, as the policy takes it, then every
//! symbolic link followed, as a tool that opens the path would. The file tools and the hooks
//! decide on both (`warden-mcp`, `warden hook`): a link made in the workspace (`lk -> .git`)
//! must not make the path decided differ from the path touched.

use std::path::{Component, Path, PathBuf};

/// `p` with `.` and `..` resolved by name (`a/b/../c` is `a/c`; nothing climbs above the root).
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Where the absolute path `p` leads: its deepest part that exists, resolved through every
/// link, then the rest by name. `None` when that part cannot be resolved.
pub fn leads_to(p: &Path) -> Option<PathBuf> {
    let mut existing = p;
    let mut rest = Vec::new();
    while existing.symlink_metadata().is_err() {
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
    Some(rest.iter().rev().fold(existing.canonicalize().ok()?, |at, name| at.join(name)))
}

/// [`leads_to`], spelled from the first of `bases` (folders as the policy names them:
/// `${workspace}`, `~`) that it leads below, deepest first: a workspace reached through a link
/// of its own (`/home -> /data/home`) keeps the spelling its patterns use.
pub fn leads_to_spelled(p: &Path, bases: &[&Path]) -> Option<PathBuf> {
    let real = leads_to(p)?;
    let mut spelled: Option<(usize, PathBuf)> = None;
    for base in bases {
        let Ok(resolved) = base.canonicalize() else { continue };
        let Ok(rest) = real.strip_prefix(&resolved) else { continue };
        let depth = resolved.components().count();
        if spelled.as_ref().is_none_or(|(d, _)| depth > *d) {
            spelled = Some((depth, if rest.as_os_str().is_empty() { base.to_path_buf() } else { base.join(rest) }));
        }
    }
    Some(spelled.map_or(real, |(_, p)| p))
}

/// [`leads_to_spelled`] of `p`, when that is elsewhere than `p` itself: a link is on the way
/// or is its last name.
pub fn elsewhere(p: &Path, bases: &[&Path]) -> Option<String> {
    let real = leads_to_spelled(p, bases)?;
    (real != p).then(|| real.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_leads_through_its_links_and_past_its_end_by_name() {
        let dir = std::env::temp_dir().join(format!("warden-leads-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(".git", dir.join("lk")).unwrap();
        let real = dir.canonicalize().unwrap();
        assert_eq!(leads_to(&dir.join("lk/hooks/new/x")), Some(real.join(".git/hooks/new/x")));
        assert_eq!(leads_to(&dir.join("lk")), Some(real.join(".git")));
        assert_eq!(leads_to(&dir.join("src/a.rs")), Some(real.join("src/a.rs")));
        // Spelled as the workspace is named, when that name goes through a link itself.
        let named = dir.with_extension("named");
        let _ = std::fs::remove_file(&named);
        std::os::unix::fs::symlink(&dir, &named).unwrap();
        assert_eq!(leads_to_spelled(&named.join("lk/hooks/x"), &[Path::new("/"), &named]), Some(named.join(".git/hooks/x")));
        assert_eq!(leads_to_spelled(&named.join("src"), &[&named]), Some(named.join("src")));
        let _ = std::fs::remove_file(&named);
        assert_eq!(lexical(Path::new("/w/a/../b/./c")), PathBuf::from("/w/b/c"));
        assert_eq!(lexical(Path::new("/../x")), PathBuf::from("/x"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
