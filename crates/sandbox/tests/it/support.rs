//! Test helpers: temp dirs unique per call, a spec with the usual system view.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use warden_sandbox::{Access, Mount, Spec};

/// A fresh directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!("warden-sbx-{}-{}-{name}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p.canonicalize().unwrap())
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `sh -c script` with the system read-only, `ws` writable, /tmp scratch.
pub fn sh(ws: &Path, script: &str) -> Spec {
    let mut s = Spec::new(vec!["sh".into(), "-c".into(), script.into()], ws.to_path_buf());
    for p in ["/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc"] {
        s.mounts.push(Mount { path: p.into(), access: Access::Read });
    }
    s.mounts.push(Mount { path: ws.to_path_buf(), access: Access::Write });
    s.scratch.push("/tmp".into());
    s.env = vec![(OsString::from("PATH"), OsString::from("/usr/local/bin:/usr/bin:/bin"))];
    s
}
