//! Reading a new git folder as git would: what in it would make git run something
//! (`newrepo.rs` decides which folders are new, and moves aside what this finds).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{Before, Host};

/// The most a file read here may hold.
const MAX_READ: u64 = 1 << 20;
/// The most entries a hooks folder may hold before it is moved aside whole.
pub(super) const MAX_HOOKS: usize = 512;

pub(super) struct Vet<'a> {
    /// The writable roots as given and as resolved.
    roots: Vec<(PathBuf, PathBuf)>,
    /// The git folders there were before and still are, resolved.
    known: HashSet<PathBuf>,
    host: &'a Host,
}

impl<'a> Vet<'a> {
    pub(super) fn new(before: &Before, replaced: &HashSet<PathBuf>, host: &'a Host) -> Vet<'a> {
        let roots = before.roots.iter().filter_map(|r| Some((r.clone(), r.canonicalize().ok()?))).collect();
        let known = before.gitdirs.difference(replaced).filter_map(|g| g.canonicalize().ok()).collect();
        Vet { roots, known, host }
    }

    /// A new git entry: a link (git follows it) is moved aside; a `.git` file leads to the
    /// folder it names; a folder is read. So are the hooks the user's config sets relative
    /// to the repository's top.
    pub(super) fn entry(&self, g: &Path, found: &mut Vec<(PathBuf, String)>) {
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
        let top = if g.file_name().is_some_and(|n| n == ".git") { g.parent() } else { Some(g) };
        for rel in top.map(|t| self.host.hooks_paths.iter().map(move |r| t.join(r))).into_iter().flatten() {
            if rel.canonicalize().is_ok_and(|real| self.roots.iter().any(|(_, r)| real.starts_with(r))) {
                self.hooks(&rel, found);
            }
        }
    }

    /// What git reads, made in a git folder there was (`Made::added`).
    pub(super) fn added(&self, path: &Path, found: &mut Vec<(PathBuf, String)>) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match name.as_str() {
            "hooks" => self.hooks(path, found),
            // Nothing of git's makes one in a repository that had none (a linked worktree's
            // is in its own folder below `worktrees/`).
            "commondir" => found.push((path.to_path_buf(), "a commondir, which sends git to another folder's config".into())),
            _ => config_file(path, found),
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
            config_file(&real.join(name), found);
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
        self.host.templates.iter().any(|t| read(&t.join("hooks").join(name)).ok().flatten().is_some_and(|theirs| theirs == mine))
    }

    /// Renames `path` aside (`sweep.rs`), opening each folder below its root without
    /// following a link.
    pub(super) fn move_aside(&self, path: &Path) -> Option<(PathBuf, PathBuf)> {
        let parent = path.parent()?.canonicalize().ok()?;
        let (root, real) = self.roots.iter().find(|(_, real)| parent.starts_with(real))?;
        let rel = parent.strip_prefix(real).ok()?;
        crate::sweep::move_aside(root, &rel.join(path.file_name()?))
    }
}

/// A config file git would read at `path`, when it sets more than git writes itself (or
/// cannot be read as git reads it).
fn config_file(path: &Path, found: &mut Vec<(PathBuf, String)>) {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match read(path) {
        Ok(None) => {}
        Ok(Some(text)) => {
            if let Some(why) = crate::gitconfig::first_unsafe(&text) {
                found.push((path.to_path_buf(), format!("its {name} {why}")));
            }
        }
        Err(why) => found.push((path.to_path_buf(), why)),
    }
}

/// The folder a `.git` file names (`gitdir: PATH`, relative to the file's folder), as git
/// reads it; why not, when git could not read it either.
pub(crate) fn pointed(file: &Path) -> Result<PathBuf, String> {
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
///
/// The file is opened without following a link and without blocking, then checked as opened:
/// a FIFO put there (before, or between a check and the open) cannot hang the reader.
pub(crate) fn read(path: &Path) -> Result<Option<Vec<u8>>, String> {
    use rustix::fs::{FileType, Mode, OFlags};
    use std::io::Read;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Ok(None),
        Err(rustix::io::Errno::LOOP) => return Err(format!("its {name} is a link")),
        Err(e) => return Err(format!("its {name} cannot be read: {e}")),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| format!("its {name} cannot be read: {e}"))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(format!("its {name} is not a file"));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(MAX_READ + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("its {name} cannot be read: {e}"))?;
    if bytes.len() as u64 > MAX_READ {
        return Err(format!("its {name} is larger than {MAX_READ} bytes"));
    }
    Ok(Some(bytes))
}
