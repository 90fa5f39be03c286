//! Opening a workspace path without following a symbolic link anywhere on the way.
//!
//! The file tools act on the host, outside the sandbox, on the path the policy decided: the
//! path as resolved through its links (`paths::real`). A link put on the way after that (a
//! command run through `exec` can make one: `lk -> .git`) would lead to a path the decision
//! never saw. So every folder on the way is opened by its name in the one before with
//! `O_NOFOLLOW`, and so is the last name: a link anywhere fails (`ELOOP`, `ENOTDIR`), and the
//! path the tool acts on is the path that was decided.
//!
//! The last name is opened with `O_NONBLOCK` and its type checked on the open descriptor
//! (`fstat`), so a FIFO, socket or device there (or swapped in meanwhile) is refused at once
//! instead of blocking the open or the read forever.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags};

/// How the last name is opened.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Open {
    /// Read a regular file (or a folder, which the caller refuses with advice).
    Read,
    /// List a folder.
    List,
    /// Replace a file's content, making it (and the folders on the way) when missing.
    Write,
}

/// `rel` (below `root`) opened as `how` says; for [`Open::Write`], whether it was made.
pub(crate) fn open(root: &impl AsFd, rel: &Path, how: Open) -> io::Result<(File, bool)> {
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            _ => return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a path below the workspace")),
        }
    }
    let dir_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Some((last, folders)) = names.split_last() else {
        // The workspace itself.
        let fd = rustix::fs::openat(root, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        return Ok((File::from(fd), false));
    };
    let mut at: Option<OwnedFd> = None;
    for name in folders {
        let parent = match &at {
            Some(fd) => fd.as_fd(),
            None => root.as_fd(),
        };
        let next = match rustix::fs::openat(parent, *name, dir_flags, Mode::empty()) {
            Err(rustix::io::Errno::NOENT) if matches!(how, Open::Write) => {
                match rustix::fs::mkdirat(parent, *name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                rustix::fs::openat(parent, *name, dir_flags, Mode::empty())?
            }
            other => other?,
        };
        at = Some(next);
    }
    let parent = match &at {
        Some(fd) => fd.as_fd(),
        None => root.as_fd(),
    };
    // Non-blocking: opening a FIFO waits for its other end otherwise.
    let base = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let (fd, made) = match how {
        Open::Read | Open::List => (rustix::fs::openat(parent, *last, base | OFlags::RDONLY, Mode::empty())?, false),
        Open::Write => {
            let mode = Mode::from_raw_mode(0o644);
            match rustix::fs::openat(parent, *last, base | OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL, mode) {
                Ok(fd) => (fd, true),
                // Truncation waits for the type check: a FIFO (no reader: ENXIO) or a device
                // must not be opened for writing at all.
                Err(rustix::io::Errno::EXIST) => match rustix::fs::openat(parent, *last, base | OFlags::WRONLY, mode) {
                    Ok(fd) => (fd, false),
                    Err(rustix::io::Errno::NXIO) => return Err(io::Error::other(NOT_REGULAR)),
                    Err(e) => return Err(e.into()),
                },
                Err(e) => return Err(e.into()),
            }
        }
    };
    let kind = rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode);
    match (how, kind) {
        (Open::Read, rustix::fs::FileType::RegularFile | rustix::fs::FileType::Directory) | (Open::Write, rustix::fs::FileType::RegularFile) => {}
        (Open::List, rustix::fs::FileType::Directory) => {}
        (Open::List, _) => return Err(io::Error::other(NOT_A_FOLDER)),
        _ => return Err(io::Error::other(NOT_REGULAR)),
    }
    if matches!(how, Open::Write) && !made {
        rustix::fs::ftruncate(&fd, 0)?;
    }
    Ok((File::from(fd), made))
}

/// Why a FIFO, socket or device is not opened.
const NOT_REGULAR: &str = "not a regular file (a FIFO, socket or device): the file tools read and write regular files only";
/// Why `list_dir` does not open what is not a folder.
const NOT_A_FOLDER: &str = "not a folder";

/// Whether an error from [`open`] says a link (or a file) was on the way, or the last name is a
/// link.
pub(crate) fn is_link(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(code) if code == rustix::io::Errno::LOOP.raw_os_error() || code == rustix::io::Errno::NOTDIR.raw_os_error())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A workspace with `.git/hooks/`, a `.env` secret, and links to both: `lk -> .git`,
    /// `e -> .env`.
    pub(crate) fn linked_workspace(name: &str) -> std::path::PathBuf {
        let ws = warden_testdir::make("mcp-links", name);
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".env"), "SECRET=1\n").unwrap();
        std::os::unix::fs::symlink(".git", ws.join("lk")).unwrap();
        std::os::unix::fs::symlink(".env", ws.join("e")).unwrap();
        ws
    }

    #[test]
    fn links_anywhere_on_the_way_fail_and_real_paths_work() {
        let ws = linked_workspace("beneath");
        let root = File::open(&ws).unwrap();
        for (rel, how) in [("lk/hooks/pre-commit", Open::Write), ("lk/hooks/new/x", Open::Write), ("e", Open::Read), ("e", Open::Write), ("lk", Open::Read)] {
            let err = open(&root, Path::new(rel), how).unwrap_err();
            assert!(is_link(&err), "{rel}: {err}");
        }
        assert!(!ws.join(".git/hooks/pre-commit").exists() && !ws.join(".git/hooks/new").exists());
        assert_eq!(std::fs::read_to_string(ws.join(".env")).unwrap(), "SECRET=1\n");
        // Real paths: made with their folders, replaced, read.
        let (mut f, made) = open(&root, Path::new("src/new/a.txt"), Open::Write).unwrap();
        f.write_all(b"one").unwrap();
        assert!(made);
        let (mut f, made) = open(&root, Path::new("src/new/a.txt"), Open::Write).unwrap();
        f.write_all(b"two").unwrap();
        assert!(!made);
        let mut text = String::new();
        open(&root, Path::new("./src/new/a.txt"), Open::Read).unwrap().0.read_to_string(&mut text).unwrap();
        assert_eq!(text, "two");
        assert!(open(&root, Path::new("../x"), Open::Read).is_err());
    }
}
