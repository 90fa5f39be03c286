//! Tool paths: resolved lexically inside the workspace before anything touches the disk.
//!
//! The policy decides on the absolute path; the file tools then open the relative path through a
//! `cap-std` directory rooted at the workspace, which refuses `..` and symlinks that lead out.

use std::path::{Component, Path, PathBuf};

/// A tool path, inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPath {
    /// Relative to the workspace root, normalised (`.` for the root itself).
    pub rel: PathBuf,
    /// Absolute, for the policy and for display.
    pub abs: String,
}

/// Resolves `input` (relative to the workspace, or absolute inside it).
///
/// # Errors
/// A path outside the workspace, one that climbs out with `..`, or one with a NUL byte.
pub fn resolve(workspace: &Path, input: &str) -> Result<ToolPath, String> {
    if input.contains('\0') {
        return Err(format!("the path `{}` contains a NUL byte", input.escape_debug()));
    }
    let given = Path::new(input);
    let relative = if given.is_absolute() {
        let normal = normalise(given).ok_or_else(|| outside(input, workspace))?;
        normal.strip_prefix(workspace).map(Path::to_path_buf).map_err(|_| outside(input, workspace))?
    } else {
        normalise(given).ok_or_else(|| outside(input, workspace))?
    };
    let rel = if relative.as_os_str().is_empty() { PathBuf::from(".") } else { relative };
    let abs = if rel == Path::new(".") { workspace.to_path_buf() } else { workspace.join(&rel) };
    Ok(ToolPath { abs: abs.to_string_lossy().into_owned(), rel })
}

/// `p` where it leads: through every symbolic link on the way, or that it is (the deepest part
/// that exists, resolved, then the rest). The file tools act on this path and the policy
/// decides on it: a link (`lk -> .git`, which a command run through `exec` can make) never
/// makes the path decided differ from the path touched. `abs` keeps the workspace's own
/// spelling, so that `${workspace}` patterns match.
///
/// # Errors
/// When it leads outside the workspace, or cannot be resolved.
pub fn real(workspace: &Path, p: &ToolPath) -> Result<ToolPath, String> {
    let lexical = if p.rel == Path::new(".") { workspace.to_path_buf() } else { workspace.join(&p.rel) };
    let target = warden_engine::leads::leads_to_spelled(&lexical, &[workspace]).ok_or_else(|| format!("cannot resolve `{}`", p.rel.display()))?;
    let Ok(rel) = target.strip_prefix(workspace) else {
        return Err(format!("the path `{}` leads outside the workspace through a symbolic link", p.rel.display()));
    };
    if rel.as_os_str().is_empty() {
        return Ok(ToolPath { rel: PathBuf::from("."), abs: workspace.to_string_lossy().into_owned() });
    }
    Ok(ToolPath { abs: workspace.join(rel).to_string_lossy().into_owned(), rel: rel.to_path_buf() })
}

/// Lexical normalisation; `None` when `..` climbs above the start.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for c in path.components() {
        match c {
            Component::RootDir => out.push("/"),
            Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                depth = depth.checked_sub(1)?;
                out.pop();
            }
            Component::Normal(part) => {
                depth += 1;
                out.push(part);
            }
        }
    }
    Some(out)
}

fn outside(input: &str, workspace: &Path) -> String {
    format!(
        "the path `{input}` is outside the workspace `{}`: the file tools only reach paths inside it",
        workspace.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_resolve_and_outside_are_refused() {
        let ws = Path::new("/ws");
        let table = [
            ("src/main.rs", Some("src/main.rs")),
            ("./src/../lib.rs", Some("lib.rs")),
            ("", Some(".")),
            (".", Some(".")),
            ("/ws/a/b", Some("a/b")),
            ("/ws", Some(".")),
            ("../etc/passwd", None),
            ("a/../../x", None),
            ("/etc/passwd", None),
            ("/wsx/a", None),
            ("/ws/../etc", None),
            ("a\0b", None),
        ];
        for (input, want) in table {
            let got = resolve(ws, input).ok().map(|p| p.rel.to_string_lossy().into_owned());
            assert_eq!(got.as_deref(), want, "{input}");
        }
        assert_eq!(resolve(ws, "a/b").unwrap().abs, "/ws/a/b");
        assert!(resolve(ws, "../x").unwrap_err().contains("outside the workspace"));
    }

    #[test]
    fn links_are_resolved_to_where_they_lead_and_never_out() {
        let ws = crate::beneath::tests::linked_workspace("real");
        std::os::unix::fs::symlink("/etc", ws.join("out")).unwrap();
        let real_of = |input: &str| real(&ws, &resolve(&ws, input).unwrap()).map(|p| (p.rel.to_string_lossy().into_owned(), p.abs));
        let at = |rel: &str| ws.join(rel).to_string_lossy().into_owned();
        assert_eq!(real_of("lk/hooks/pre-commit").unwrap(), (".git/hooks/pre-commit".into(), at(".git/hooks/pre-commit")));
        assert_eq!(real_of("lk/new/x").unwrap().0, ".git/new/x");
        assert_eq!(real_of("e").unwrap().0, ".env");
        assert_eq!(real_of("src/a.rs").unwrap().0, "src/a.rs");
        assert_eq!(real_of(".").unwrap(), (".".into(), ws.to_string_lossy().into_owned()));
        assert!(real_of("out/passwd").unwrap_err().contains("outside the workspace"));
    }
}
