//! The on-disk cache of compiled modules.
//!
//! A file is named by the SHA-256 of the wasm and a digest of
//! [`Engine::precompile_compatibility_hash`] (wasmtime version, target, the engine's settings),
//! is written to a temporary name and renamed into place (readers never see half a file), and
//! lives in a directory warden creates with mode 0700 and refuses to use when others can write
//! to it. Those three facts are what make loading it sound (see [`load`]).

use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest as _, Sha256};
use wasmtime::{Engine, Module};

use crate::Error;
use crate::image::hex;

/// Feeds `Hash` output into SHA-256 (the compatibility hash is only `impl Hash`).
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// What happened when a module was fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetched {
    /// Loaded from the on-disk cache.
    Disk,
    /// Compiled (and written to the cache).
    Compiled,
}

/// The cache directory and the engine's compatibility digest.
#[derive(Debug)]
pub(crate) struct DiskCache {
    dir: PathBuf,
    engine_digest: String,
}

impl DiskCache {
    /// Opens (creating it 0700 when missing) the cache directory.
    pub(crate) fn open(dir: &Path, engine: &Engine) -> Result<DiskCache, Error> {
        let err = |reason: String| Error::Cache { path: dir.to_path_buf(), reason };
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(dir).map_err(|e| err(e.to_string()))?;
        let meta = std::fs::symlink_metadata(dir).map_err(|e| err(e.to_string()))?;
        if !meta.is_dir() {
            return Err(err(String::from("not a directory")));
        }
        let me = own_uid().ok_or_else(|| err(String::from("cannot tell which user this process runs as")))?;
        trusted(dir, me).map_err(err)?;
        let mut h = ShaHasher(Sha256::new());
        std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut h);
        let engine_digest = hex(&h.0.finalize()).chars().take(16).collect();
        Ok(DiskCache { dir: dir.to_path_buf(), engine_digest })
    }

    /// The file a module with this wasm digest is cached in.
    pub(crate) fn path_for(&self, wasm_digest: &[u8; 32]) -> PathBuf {
        self.dir.join(format!("{}-{}.cwasm", hex(wasm_digest), self.engine_digest))
    }

    /// The module: from the cache, or compiled and cached. A cache file that does not load
    /// (truncated by a crash of an older warden, another wasmtime) is replaced.
    pub(crate) fn fetch(&self, engine: &Engine, wasm: &[u8], digest: &[u8; 32]) -> Result<(Module, Fetched), Error> {
        let path = self.path_for(digest);
        if own_uid().is_some_and(|me| ours(&path, me))
            && let Ok(m) = load(engine, &path)
        {
            return Ok((m, Fetched::Disk));
        }
        let module = compile(engine, wasm)?;
        self.store(&module, &path)?;
        Ok((module, Fetched::Compiled))
    }

    /// Writes `module` to `path` atomically.
    pub(crate) fn store(&self, module: &Module, path: &Path) -> Result<(), Error> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let err = |reason: String| Error::Cache { path: path.to_path_buf(), reason };
        let bytes = module.serialize().map_err(|e| err(format!("serializing: {e}")))?;
        let tmp = self.dir.join(format!(
            ".tmp-{}-{}.cwasm",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&tmp, bytes).map_err(|e| err(format!("writing: {e}")))?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(format!("renaming into place: {e}"))
        })
    }
}

/// The effective uid: the owner of this process's `/proc` entry.
fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// Why a compiled module in `dir` could be someone else's, if it could: `dir` must be owned
/// by `me` with no group or other write, and every folder above it (links resolved) owned by
/// `me` or root and writable by nobody else, unless sticky (`/tmp`), where only the owner of
/// the entry below may move it, and that entry is checked the same way.
fn trusted(dir: &Path, me: u32) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let real = std::fs::canonicalize(dir).map_err(|e| e.to_string())?;
    let meta = std::fs::metadata(&real).map_err(|e| e.to_string())?;
    if meta.uid() != me || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not this user's alone (owner {}, mode {:o}), so a compiled module there could be someone else's \
             (help: chmod 700 it, or choose another directory)",
            real.display(),
            meta.uid(),
            meta.mode() & 0o7777
        ));
    }
    for above in real.ancestors().skip(1) {
        let m = std::fs::metadata(above).map_err(|e| e.to_string())?;
        let sticky = m.mode() & 0o1000 != 0;
        if (m.uid() != me && m.uid() != 0) || (m.mode() & 0o022 != 0 && !sticky) {
            return Err(format!(
                "{} (above the cache) can be changed by another user (owner {}, mode {:o}), who could swap the cache for theirs",
                above.display(),
                m.uid(),
                m.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

/// Whether `path` is a compiled module this user wrote: a regular file (not a link) owned by
/// `me`, one name, writable by nobody else.
fn ours(path: &Path, me: u32) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.uid() == me && m.nlink() == 1 && m.mode() & 0o022 == 0)
}

/// Compiles a module (no cache).
pub(crate) fn compile(engine: &Engine, wasm: &[u8]) -> Result<Module, Error> {
    Module::new(engine, wasm).map_err(|e| Error::Compile { reason: format!("{e:#}") })
}

/// Loads a compiled module from the cache.
///
/// The only `unsafe` in warden outside `warden-sandbox`, allowed for this one call.
#[allow(unsafe_code)]
pub(crate) fn load(engine: &Engine, path: &Path) -> Result<Module, Error> {
    // SAFETY: `Module::deserialize_file` trusts its input to be a module that wasmtime's
    // `Module::serialize` produced: machine code from a forged file would run unchecked. The
    // file is one warden produced: its name is the SHA-256 of the wasm it was compiled from
    // plus a digest of `Engine::precompile_compatibility_hash()` (so another wasmtime version
    // or engine configuration never picks it up; wasmtime also checks its own header), it was
    // written under a temporary name and renamed into place (never seen half written), it
    // sits in a directory `DiskCache::open` created 0700 and refuses unless it is this user's
    // alone with every folder above it this user's or root's (`trusted`), and `fetch` loads
    // only a regular file of one name owned by this user and writable by nobody else (`ours`):
    // only this user can have put it there. Every sandbox warden builds, and its file tools,
    // are refused the cache folder (warden-engine's `records::own_cache`), so a confined
    // command running as this user cannot write it either.
    unsafe { Module::deserialize_file(engine, path) }
        .map_err(|e| Error::Cache { path: path.to_path_buf(), reason: format!("loading: {e:#}") })
}
