//! The file tools, through a `cap-std` directory rooted at the workspace: `..` and symlinks
//! that lead out of it fail at the system-call level, whatever the lexical check missed.

use std::io::{BufRead, BufReader, Read, Write};

use cap_std::fs::Dir;

use crate::beneath::{self, Open};

use crate::paths::ToolPath;
use crate::tools::{DirEntryOut, ListDirOut, ReadFileOut, WriteOut};

/// The most text `read_file` returns at once.
pub const READ_CAP: usize = 256 * 1024;
/// The most of a file `read_file` scans (for line counting and ranges).
const SCAN_CAP: u64 = 16 << 20;
/// The largest file `edit_file` edits, and the largest `write_file` content.
pub const WRITE_CAP: u64 = 8 << 20;
/// The most entries `list_dir` returns.
const LIST_CAP: usize = 2000;

/// `read_file`.
pub fn read_file(root: &Dir, p: &ToolPath, start: Option<u64>, end: Option<u64>) -> Result<ReadFileOut, String> {
    let start = start.unwrap_or(1).max(1);
    if let Some(e) = end
        && e < start
    {
        return Err(format!("end_line {e} is before start_line {start}"));
    }
    let (file, _) = beneath::open(root, &p.rel, Open::Read).map_err(|e| io_error("read", p, &e))?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(format!("`{}` is a folder: use list_dir", p.rel.display()));
    }
    let mut reader = BufReader::new(file.take(SCAN_CAP));
    let (mut n, mut first, mut last, mut truncated) = (0u64, 0u64, 0u64, false);
    let mut content = String::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let got = reader.read_until(b'\n', &mut line).map_err(|e| io_error("read", p, &e))?;
        if got == 0 {
            break;
        }
        n += 1;
        if n < start || end.is_some_and(|e| n > e) || truncated {
            continue;
        }
        if content.len() + line.len() > READ_CAP {
            truncated = true;
            continue;
        }
        content.push_str(&String::from_utf8_lossy(&line));
        if first == 0 {
            first = n;
        }
        last = n;
    }
    Ok(ReadFileOut {
        path: display(p),
        content,
        start_line: if first == 0 { start } else { first },
        end_line: last,
        total_lines: n,
        truncated,
    })
}

/// `list_dir`.
pub fn list_dir(root: &Dir, p: &ToolPath) -> Result<ListDirOut, String> {
    let (folder, _) = beneath::open(root, &p.rel, Open::List).map_err(|e| io_error("list", p, &e))?;
    let dir = Dir::from_std_file(folder).entries().map_err(|e| io_error("list", p, &e))?;
    let mut entries = Vec::new();
    let mut truncated = false;
    for entry in dir {
        let Ok(entry) = entry else { continue };
        if entries.len() >= LIST_CAP {
            truncated = true;
            break;
        }
        let kind = match entry.file_type() {
            Ok(t) if t.is_dir() => "dir",
            Ok(t) if t.is_file() => "file",
            Ok(t) if t.is_symlink() => "symlink",
            _ => "other",
        };
        let size = if kind == "file" { entry.metadata().map(|m| m.len()).unwrap_or(0) } else { 0 };
        entries.push(DirEntryOut { name: entry.file_name().to_string_lossy().into_owned(), kind: kind.to_string(), size });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(ListDirOut { path: display(p), entries, truncated })
}

/// Why the file tools do not write `p`, when it is one of git's own: a `.git` (a folder, or a
/// file naming one) or anything in it, or a `HEAD` or `commondir`, which make a folder one git
/// takes for a repository's. A repository's config and hooks run programs on the host's next
/// `git`: one made through these tools would be git's without anything reading it first (a
/// command's is read after its run); git itself, through `exec`, makes them in the sandbox.
fn git_own(p: &ToolPath) -> Option<String> {
    let name = p.rel.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let inside = p.rel.components().any(|c| c.as_os_str() == ".git");
    (inside || name == "HEAD" || name == "commondir").then(|| {
        format!(
            "`{}` is git's own (a repository's folder, or what makes a folder one): the file tools do not write it; \
             run git through exec instead",
            p.rel.display()
        )
    })
}

/// `write_file`.
pub fn write_file(root: &Dir, p: &ToolPath, content: &str) -> Result<WriteOut, String> {
    if content.len() as u64 > WRITE_CAP {
        return Err(format!("the content is {} bytes; write_file takes at most {WRITE_CAP}", content.len()));
    }
    if let Some(why) = git_own(p) {
        return Err(why);
    }
    let (mut file, created) = beneath::open(root, &p.rel, Open::Write).map_err(|e| io_error("write", p, &e))?;
    file.write_all(content.as_bytes()).map_err(|e| io_error("write", p, &e))?;
    Ok(WriteOut { path: display(p), bytes: content.len() as u64, created })
}

/// `edit_file`: replaces `old` by `new` where `old` occurs exactly once.
pub fn edit_file(root: &Dir, p: &ToolPath, old: &str, new: &str) -> Result<WriteOut, String> {
    if old.is_empty() {
        return Err("`old` is empty: give the exact text to replace".to_string());
    }
    if let Some(why) = git_own(p) {
        return Err(why);
    }
    let (mut file, _) = beneath::open(root, &p.rel, Open::Read).map_err(|e| io_error("read", p, &e))?;
    let size = file.metadata().map_err(|e| io_error("read", p, &e))?.len();
    if size > WRITE_CAP {
        return Err(format!("`{}` is {size} bytes; edit_file edits files of at most {WRITE_CAP}", p.rel.display()));
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(|e| io_error("read", p, &e))?;
    match text.matches(old).count() {
        0 => Err(format!(
            "`old` was not found in `{}`: copy the exact text, with its whitespace and indentation (read_file shows it)",
            p.rel.display()
        )),
        1 => {
            let edited = text.replacen(old, new, 1);
            let (mut file, _) = beneath::open(root, &p.rel, Open::Write).map_err(|e| io_error("write", p, &e))?;
            file.write_all(edited.as_bytes()).map_err(|e| io_error("write", p, &e))?;
            Ok(WriteOut { path: display(p), bytes: edited.len() as u64, created: false })
        }
        n => Err(format!(
            "`old` occurs {n} times in `{}`; it must occur exactly once: include more of the surrounding lines",
            p.rel.display()
        )),
    }
}

fn display(p: &ToolPath) -> String {
    p.rel.to_string_lossy().into_owned()
}

fn io_error(action: &str, p: &ToolPath, e: &std::io::Error) -> String {
    let path = p.rel.display();
    if beneath::is_link(e) {
        return format!(
            "cannot {action} `{path}`: something other than a folder is on the way, or the file is a symbolic link \
             (put there after the path was decided: the file tools follow no link then, it could lead to a path \
             the policy never decided)"
        );
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("cannot {action} `{path}`: it does not exist"),
        std::io::ErrorKind::PermissionDenied if e.to_string().contains("outside") => {
            format!("cannot {action} `{path}`: it leads outside the workspace (through a symlink or `..`)")
        }
        _ => format!("cannot {action} `{path}`: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::resolve;

    fn workspace(name: &str) -> (std::path::PathBuf, Dir) {
        let ws = warden_testdir::make("mcp-files", name);
        let dir = Dir::open_ambient_dir(&ws, cap_std::ambient_authority()).unwrap();
        (ws, dir)
    }

    #[test]
    fn read_ranges_and_edit_uniqueness() {
        let (ws, dir) = workspace("edit");
        std::fs::write(ws.join("a.txt"), "one\ntwo\nthree\ntwo\n").unwrap();
        let p = resolve(&ws, "a.txt").unwrap();
        let r = read_file(&dir, &p, Some(2), Some(3)).unwrap();
        assert_eq!((r.content.as_str(), r.start_line, r.end_line, r.total_lines), ("two\nthree\n", 2, 3, 4));
        assert!(edit_file(&dir, &p, "two", "2").unwrap_err().contains("occurs 2 times"));
        assert!(edit_file(&dir, &p, "four", "4").unwrap_err().contains("not found"));
        edit_file(&dir, &p, "three", "3").unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\ntwo\n3\ntwo\n");
    }

    #[test]
    fn git_s_own_files_are_not_written() {
        let (ws, dir) = workspace("git");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(ws.join("notes.txt"), "HEAD\n").unwrap();
        for rel in ["sub/.git", ".git/config", "lib/.git/hooks/pre-commit", "evil/HEAD", "wt/commondir"] {
            let err = write_file(&dir, &resolve(&ws, rel).unwrap(), "gitdir: ../evil\n").unwrap_err();
            assert!(err.contains("git's own"), "{rel}: {err}");
            assert!(!ws.join(rel).exists(), "{rel}");
        }
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/description"), "x").unwrap();
        assert!(edit_file(&dir, &resolve(&ws, ".git/description").unwrap(), "x", "y").unwrap_err().contains("git's own"));
        // Names that only look like git's are written.
        write_file(&dir, &resolve(&ws, "docs/.gitignore").unwrap(), "target\n").unwrap();
        write_file(&dir, &resolve(&ws, "src/head.rs").unwrap(), "").unwrap();
        edit_file(&dir, &resolve(&ws, "notes.txt").unwrap(), "HEAD", "main").unwrap();
        let _ = std::fs::remove_dir_all(&ws);
    }

    /// Regression (red team): a FIFO in the workspace blocked read_file, write_file and
    /// list_dir for good (each held a blocking thread, and the server never exited).
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (ws, _) = workspace("fifo");
        let made = std::process::Command::new("mkfifo").arg(ws.join("pipe")).status().unwrap();
        assert!(made.success());
        let p = resolve(&ws, "pipe").unwrap();
        type Attempt = fn(&Dir, &ToolPath) -> Result<(), String>;
        let attempts: [(&str, Attempt, &str); 4] = [
            ("read_file", |d, p| read_file(d, p, None, None).map(|_| ()), "not a regular file"),
            ("write_file", |d, p| write_file(d, p, "x").map(|_| ()), "not a regular file"),
            ("edit_file", |d, p| edit_file(d, p, "x", "y").map(|_| ()), "not a regular file"),
            ("list_dir", |d, p| list_dir(d, p).map(|_| ()), "not a folder"),
        ];
        for (tool, attempt, want) in attempts {
            let (tx, rx) = std::sync::mpsc::channel();
            let (dir, p) = (Dir::open_ambient_dir(&ws, cap_std::ambient_authority()).unwrap(), p.clone());
            // Left blocked (and leaked) when the tool blocks: the test fails on the timeout.
            std::thread::spawn(move || tx.send(attempt(&dir, &p)));
            let got = rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap_or_else(|_| panic!("{tool} blocked on a FIFO"));
            let err = got.expect_err(tool);
            assert!(err.contains(want), "{tool}: {err}");
        }
    }

    #[test]
    fn symlinks_out_of_the_workspace_are_refused() {
        let (ws, dir) = workspace("link");
        std::os::unix::fs::symlink("/etc", ws.join("etc")).unwrap();
        let p = resolve(&ws, "etc/hostname").unwrap();
        assert!(read_file(&dir, &p, None, None).is_err());
        assert!(write_file(&dir, &resolve(&ws, "etc/x").unwrap(), "x").is_err());
        let made = write_file(&dir, &resolve(&ws, "sub/dir/new.txt").unwrap(), "hi").unwrap();
        assert!(made.created);
        assert_eq!(list_dir(&dir, &resolve(&ws, "sub").unwrap()).unwrap().entries[0].name, "dir");
    }
}
