//! Finding and reading policy layers: enterprise > user > project > directory, over the
//! embedded default, or the `--policy` files given.

use crate::Environment;
use std::path::{Path, PathBuf};
use warden_policy::{DEFAULT_POLICY, LayerKind, LayerSource, SourceFile};

/// The largest policy file read.
const MAX_POLICY_BYTES: u64 = 1024 * 1024;

/// The display name of the embedded default policy.
pub const BUILTIN_NAME: &str = "policies/default.policy";

/// Why policy files could not be loaded. Any of these refuses the whole load.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// A file or folder could not be read.
    #[error("cannot read policy `{path}`: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not UTF-8.
    #[error("policy `{path}` is not valid UTF-8: line {line}, column {column} (byte {byte})")]
    NotUtf8 {
        /// The path.
        path: PathBuf,
        /// Where the first invalid byte is (1-based line and column, 0-based byte offset).
        line: usize,
        /// See `line`.
        column: usize,
        /// See `line`.
        byte: usize,
    },
    /// Not a regular file (a FIFO, a device, a folder): nothing is read from it.
    #[error("policy `{path}` is not a regular file")]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A file is larger than 1 MiB.
    #[error("policy `{path}` is larger than 1 MiB")]
    TooLarge {
        /// The path.
        path: PathBuf,
    },
    /// An enterprise file or folder that someone other than root could change.
    #[error("enterprise policy `{path}` is not safe: {why}")]
    Unsafe {
        /// The path.
        path: PathBuf,
        /// What is wrong (owner, mode).
        why: String,
    },
}

/// Discovers the layers for `env`, top first.
///
/// The base is the enterprise layer if `/etc/warden/` holds any `*.policy`, else the user's,
/// else the embedded default; every layer after it can only narrow. Then the project's
/// `.warden/` at the repository root and the `.warden/` folders between the root and the
/// working directory, outermost first.
///
/// # Errors
/// Any file that cannot be used; an enterprise file or folder writable by non-root.
pub fn discover(env: &Environment) -> Result<Vec<LayerSource>, LoadError> {
    discover_for(env, &env.cwd)
}

/// [`discover`] for the project `project` is in, with the working directory's own layers when
/// it is inside that project. The project layer is found from `project`, not from the working
/// directory: a working directory in a nested repository (a submodule, a `sub/.git` the agent
/// made) or in a subfolder of a project without `.git` does not drop it.
///
/// # Errors
/// As [`discover`].
pub fn discover_for(env: &Environment, project: &Path) -> Result<Vec<LayerSource>, LoadError> {
    let mut layers = Vec::new();
    if let Some(layer) = read_layer_dir(&env.enterprise_dir, LayerKind::Enterprise)? {
        layers.push(layer);
    }
    if let Some(layer) = read_layer_dir(&env.config_home.join("warden"), LayerKind::User)? {
        layers.push(layer);
    }
    if layers.is_empty() {
        layers.push(LayerSource {
            kind: LayerKind::Builtin,
            files: vec![SourceFile { name: BUILTIN_NAME.into(), text: DEFAULT_POLICY.into() }],
        });
    }
    let root = repository_root(project).unwrap_or_else(|| project.to_path_buf());
    if let Some(layer) = read_layer_dir(&root.join(".warden"), LayerKind::Project)? {
        layers.push(layer);
    }
    for dir in folders_between(&root, &env.cwd) {
        if let Some(layer) = read_layer_dir(&dir.join(".warden"), LayerKind::Directory)? {
            layers.push(layer);
        }
    }
    Ok(layers)
}

/// Reads `--policy` files: each is its own layer, in the order given (top first).
///
/// # Errors
/// Any file that cannot be used.
pub fn load_files(paths: &[PathBuf]) -> Result<Vec<LayerSource>, LoadError> {
    paths
        .iter()
        .map(|p| Ok(LayerSource { kind: LayerKind::Cli, files: vec![read_file(p)?] }))
        .collect()
}

/// The nearest ancestor of `cwd` (itself included) holding `.git`.
pub fn repository_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors().find(|dir| dir.join(".git").exists()).map(Path::to_path_buf)
}

/// The folders strictly below `root` down to `cwd` included, outermost first.
fn folders_between(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let Ok(rest) = cwd.strip_prefix(root) else { return Vec::new() };
    let mut dir = root.to_path_buf();
    rest.components()
        .map(|c| {
            dir.push(c);
            dir.clone()
        })
        .collect()
}

/// Reads every `*.policy` file of `dir`, sorted by name, as one layer; `None` if there is none.
fn read_layer_dir(dir: &Path, kind: LayerKind) -> Result<Option<LayerSource>, LoadError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(None),
        Err(source) => return Err(LoadError::Io { path: dir.to_path_buf(), source }),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| LoadError::Io { path: dir.to_path_buf(), source })?;
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "policy") {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        return Ok(None);
    }
    if kind == LayerKind::Enterprise {
        check_root_only(dir)?;
    }
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in &paths {
        if kind == LayerKind::Enterprise {
            check_root_only(path)?;
        }
        files.push(read_file(path)?);
    }
    Ok(Some(LayerSource { kind, files }))
}

/// Refuses a path (and what a symlink points to) that non-root could change.
fn check_root_only(path: &Path) -> Result<(), LoadError> {
    use std::os::unix::fs::MetadataExt;
    let unsafe_err = |why: String| LoadError::Unsafe { path: path.to_path_buf(), why };
    let io_err = |source| LoadError::Io { path: path.to_path_buf(), source };
    let link = std::fs::symlink_metadata(path).map_err(io_err)?;
    let target = std::fs::metadata(path).map_err(io_err)?;
    for meta in [&link, &target] {
        if meta.uid() != 0 {
            return Err(unsafe_err(format!("owned by uid {}, not root", meta.uid())));
        }
        // Symlinks always report 0o777; only the target's mode means anything.
        if !meta.file_type().is_symlink() && meta.mode() & 0o022 != 0 {
            return Err(unsafe_err(format!(
                "mode {:o} lets group or others write it",
                meta.mode() & 0o7777
            )));
        }
    }
    Ok(())
}

/// Reads one policy file, refusing large or non-UTF-8 ones.
fn read_file(path: &Path) -> Result<SourceFile, LoadError> {
    Ok(SourceFile { name: path.display().to_string(), text: read_text(path)? })
}

/// The text of a policy (or policy test) file: a regular file of at most 1 MiB of UTF-8.
/// Anything else is refused without blocking: a FIFO planted where a policy is looked for is
/// opened without waiting for a writer, and not read.
///
/// # Errors
/// See [`LoadError`].
pub fn read_text(path: &Path) -> Result<String, LoadError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let io_err = |source| LoadError::Io { path: path.to_path_buf(), source };
    let nonblock = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(nonblock).open(path).map_err(io_err)?;
    if !file.metadata().map_err(io_err)?.is_file() {
        return Err(LoadError::NotAFile { path: path.to_path_buf() });
    }
    let mut bytes = Vec::new();
    file.take(MAX_POLICY_BYTES + 1).read_to_end(&mut bytes).map_err(io_err)?;
    if bytes.len() as u64 > MAX_POLICY_BYTES {
        return Err(LoadError::TooLarge { path: path.to_path_buf() });
    }
    String::from_utf8(bytes).map_err(|e| {
        let byte = e.utf8_error().valid_up_to();
        let before = e.as_bytes().get(..byte).unwrap_or_default();
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let start = before.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        // Characters, not bytes: what is before the invalid byte on its line is valid UTF-8.
        let column = String::from_utf8_lossy(before.get(start..).unwrap_or_default()).chars().count() + 1;
        LoadError::NotUtf8 { path: path.to_path_buf(), line, column, byte }
    })
}

/// Quotes argv for a POSIX shell so that the analyser sees exactly these words.
pub fn quote_argv(argv: &[String]) -> String {
    let quote = |w: &String| {
        if !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b)) {
            w.clone()
        } else {
            format!("'{}'", w.replace('\'', r"'\''"))
        }
    };
    argv.iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_in(dir: &Path, cwd: &Path) -> Environment {
        Environment {
            home: dir.join("home"),
            config_home: dir.join("home/.config"),
            cache_home: dir.join("home/.cache"),
            state_home: dir.join("home/.local/state"),
            is_root: false,
            enterprise_dir: dir.join("etc/warden"),
            cwd: cwd.to_path_buf(),
            vars: Vec::new(),
        }
    }

    fn tempdir(name: &str) -> PathBuf {
        warden_testdir::make("layers", name)
    }

    #[test]
    fn builtin_is_the_base_when_nothing_is_installed() {
        let dir = tempdir("builtin");
        let layers = discover(&env_in(&dir, &dir)).unwrap();
        assert_eq!(layers.len(), 1);
        assert_eq!(layers[0].kind, LayerKind::Builtin);
    }

    #[test]
    fn user_layer_replaces_builtin_and_project_layers_follow_outermost_first() {
        let dir = tempdir("order");
        let repo = dir.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join(".warden")).unwrap();
        std::fs::create_dir_all(repo.join("a/.warden")).unwrap();
        std::fs::create_dir_all(repo.join("a/b/.warden")).unwrap();
        std::fs::create_dir_all(dir.join("home/.config/warden")).unwrap();
        for p in [".warden/p.policy", "a/.warden/x.policy", "a/b/.warden/y.policy"] {
            std::fs::write(repo.join(p), "version 1\n").unwrap();
        }
        std::fs::write(dir.join("home/.config/warden/u.policy"), "version 1\n").unwrap();
        let layers = discover(&env_in(&dir, &repo.join("a/b"))).unwrap();
        let kinds: Vec<_> = layers.iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            [LayerKind::User, LayerKind::Project, LayerKind::Directory, LayerKind::Directory]
        );
        assert!(layers[2].files[0].name.ends_with("a/.warden/x.policy"));
        assert!(layers[3].files[0].name.ends_with("a/b/.warden/y.policy"));
    }

    #[test]
    fn enterprise_file_writable_by_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempdir("enterprise");
        let etc = dir.join("etc/warden");
        std::fs::create_dir_all(&etc).unwrap();
        std::fs::set_permissions(&etc, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = etc.join("org.policy");
        std::fs::write(&file, "version 1\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = discover(&env_in(&dir, &dir)).unwrap_err();
        // As root the mode is what is wrong; as another user, the owner.
        assert!(matches!(err, LoadError::Unsafe { .. }), "{err}");
        if std::process::Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout == b"0\n") {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            let layers = discover(&env_in(&dir, &dir)).unwrap();
            assert_eq!(layers[0].kind, LayerKind::Enterprise);
        }
    }

    #[test]
    fn oversized_and_non_utf8_files_are_refused() {
        let dir = tempdir("bad");
        let big = dir.join("big.policy");
        std::fs::write(&big, vec![b'#'; 1024 * 1024 + 1]).unwrap();
        assert!(matches!(load_files(&[big]), Err(LoadError::TooLarge { .. })));
        let bin = dir.join("bin.policy");
        std::fs::write(&bin, [0xff, 0xfe]).unwrap();
        assert!(matches!(load_files(&[bin]), Err(LoadError::NotUtf8 { line: 1, column: 1, byte: 0, .. })));
        // The first invalid byte is located (columns count characters).
        let late = dir.join("late.policy");
        std::fs::write(&late, b"version 1\n# \xc3\xa9t\xc3\xa9 \xff\n").unwrap();
        let err = load_files(&[late]).unwrap_err();
        assert!(matches!(err, LoadError::NotUtf8 { line: 2, column: 7, byte: 18, .. }), "{err:?}");
        assert!(err.to_string().contains("line 2, column 7"), "{err}");
    }

    #[test]
    fn a_fifo_or_a_folder_where_a_policy_is_looked_for_is_refused_without_blocking() {
        let dir = tempdir("fifo");
        let repo = dir.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join(".warden/d.policy")).unwrap();
        let fifo = repo.join(".warden/a.policy");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // Nobody ever writes the FIFO: a blocking open would wait forever.
        let (tx, rx) = std::sync::mpsc::channel();
        let env = env_in(&dir, &repo);
        std::thread::spawn(move || tx.send(discover(&env).map(|_| ())).unwrap());
        let err = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("discovery blocked on a FIFO").unwrap_err();
        assert!(matches!(err, LoadError::NotAFile { .. }), "{err}");
        assert!(matches!(read_text(&fifo), Err(LoadError::NotAFile { .. })));
        assert!(matches!(read_text(&repo.join(".warden/d.policy")), Err(LoadError::NotAFile { .. })));
    }

    #[test]
    fn quote_argv_keeps_words_whole() {
        let argv: Vec<String> = ["rm", "-rf", "a b", "it's", ""].map(String::from).to_vec();
        assert_eq!(quote_argv(&argv), r"rm -rf 'a b' 'it'\''s' ''");
    }
}
