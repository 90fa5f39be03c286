//! `search`: a regex over the workspace, respecting .gitignore, with the ripgrep crates.

use std::path::Path;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::WalkBuilder;

use crate::paths::ToolPath;
use crate::tools::{MatchOut, SearchOut};

/// The default and the largest `max_results`.
const DEFAULT_RESULTS: u64 = 200;
const MAX_RESULTS: u64 = 1000;
/// Files larger than this are not searched.
const MAX_FILE: u64 = 8 << 20;
/// Characters kept of a matching line.
const LINE_CAP: usize = 300;

/// Searches `p` under `workspace`; `readable(abs_path)` says whether the policy lets the agent
/// read a file (files it may not read are left out and counted).
pub fn search(
    workspace: &Path,
    p: &ToolPath,
    pattern: &str,
    case_insensitive: bool,
    max_results: Option<u64>,
    readable: &dyn Fn(&str) -> bool,
) -> Result<SearchOut, String> {
    // 0 is honoured (no lines, `truncated` when there was one); over the cap is cut to it.
    let max = max_results.unwrap_or(DEFAULT_RESULTS).min(MAX_RESULTS);
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .build(pattern)
        .map_err(|e| format!("the pattern `{pattern}` is not a valid regular expression: {e}"))?;
    let root = workspace.join(&p.rel);
    // The walk uses ordinary paths: its root must not leave the workspace through a symlink.
    let (Ok(real_root), Ok(real_ws)) = (root.canonicalize(), workspace.canonicalize()) else {
        return Err(format!("cannot search `{}`: it does not exist", p.rel.display()));
    };
    if !real_root.starts_with(&real_ws) {
        return Err(format!("cannot search `{}`: it leads outside the workspace", p.rel.display()));
    }
    // The files found are decided by their paths below the root as written, which the caller
    // resolved (`paths::real`): a link put on the way since would have them decided by other
    // paths than their own.
    let written = if p.rel == Path::new(".") { real_ws.clone() } else { real_ws.join(&p.rel) };
    if real_root != written {
        return Err(format!(
            "cannot search `{}`: a symbolic link is on the way; the file tools do not follow links: give the path it points to",
            p.rel.display()
        ));
    }
    let mut searcher = SearcherBuilder::new().binary_detection(BinaryDetection::quit(0)).line_number(true).build();
    let mut out = SearchOut { matches: Vec::new(), files_searched: 0, files_denied: 0, truncated: false };
    let walk = WalkBuilder::new(&root).require_git(false).follow_links(false).max_filesize(Some(MAX_FILE)).build();
    for entry in walk {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if !readable(&path.to_string_lossy()) {
            out.files_denied += 1;
            continue;
        }
        out.files_searched += 1;
        let rel = path.strip_prefix(workspace).unwrap_or(path).to_string_lossy().into_owned();
        let matches = &mut out.matches;
        // A match past `max` was found: the results are cut.
        let mut cut = false;
        let _ = searcher.search_path(
            &matcher,
            path,
            Lossy(|line, text| {
                if matches.len() as u64 >= max {
                    cut = true;
                    return Ok(false);
                }
                let text = text.trim_end_matches(['\n', '\r']);
                let text: String = text.chars().take(LINE_CAP).collect();
                matches.push(MatchOut { path: rel.clone(), line, text });
                Ok(true)
            }),
        );
        if cut {
            out.truncated = true;
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::resolve;

    #[test]
    fn respects_gitignore_and_the_policy_filter() {
        let ws = warden_testdir::make("mcp", "search");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(ws.join("target")).unwrap();
        std::fs::write(ws.join("target/gen.rs"), "fn main() {}\n").unwrap();
        std::fs::write(ws.join("src/main.rs"), "fn main() {}\n// main\n").unwrap();
        std::fs::write(ws.join("src/secret.rs"), "fn main() {}\n").unwrap();
        let p = resolve(&ws, ".").unwrap();
        let out = search(&ws, &p, "main", false, None, &|abs| !abs.ends_with("secret.rs")).unwrap();
        let found: Vec<(String, u64)> = out.matches.iter().map(|m| (m.path.clone(), m.line)).collect();
        assert_eq!(found, vec![("src/main.rs".to_string(), 1), ("src/main.rs".to_string(), 2)]);
        assert_eq!(out.files_denied, 1);
        let capped = search(&ws, &p, "main", false, Some(1), &|_| true).unwrap();
        assert!(capped.truncated);
        assert_eq!(capped.matches.len(), 1);
        // Regression (red team): `max_results: 0` returned one match.
        let none = search(&ws, &p, "main", false, Some(0), &|_| true).unwrap();
        assert!(none.matches.is_empty() && none.truncated, "{:?}", none.matches);
        // Exactly as many matches as asked for: nothing was cut.
        let all = search(&ws, &p, "main", false, Some(3), &|_| true).unwrap();
        assert_eq!((all.matches.len(), all.truncated), (3, false));
        assert!(search(&ws, &p, "(", false, None, &|_| true).unwrap_err().contains("not a valid regular expression"));
    }
}
