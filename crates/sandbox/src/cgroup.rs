//! A pids cgroup for the run, when warden runs as root.
//!
//! `RLIMIT_NPROC` does not hold for a process whose host uid is 0 (the kernel exempts the
//! initial root user), so as root the process limit needs the pids controller. Both layouts are
//! handled: cgroup v2 (`/sys/fs/cgroup` with `pids` in `cgroup.controllers`) and v1
//! (`/sys/fs/cgroup/pids`).

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Error;

/// A cgroup created for one run; removed on drop.
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
}

fn pids_root() -> Option<PathBuf> {
    let v2 = PathBuf::from("/sys/fs/cgroup");
    if fs::read_to_string(v2.join("cgroup.controllers")).is_ok_and(|c| c.split_whitespace().any(|w| w == "pids")) {
        return Some(v2);
    }
    let v1 = PathBuf::from("/sys/fs/cgroup/pids");
    v1.join("cgroup.procs").exists().then_some(v1)
}

impl Cgroup {
    /// Creates a cgroup limited to `max` processes.
    pub(crate) fn create(max: u64) -> Result<Cgroup, Error> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let root = pids_root().ok_or_else(|| Error::Limits("no pids cgroup controller to bound the processes of a root run".into()))?;
        sweep(&root);
        let dir = root.join(format!("warden-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        let io = |what: &str, e: std::io::Error, d: &std::path::Path| Error::Limits(format!("{what} {}: {e}", d.display()));
        fs::create_dir(&dir).map_err(|e| io("cannot create the cgroup", e, &dir))?;
        let cg = Cgroup { dir };
        fs::write(cg.dir.join("pids.max"), max.to_string()).map_err(|e| io("cannot set pids.max in", e, &cg.dir))?;
        Ok(cg)
    }

    /// Moves `pid` into the cgroup.
    pub(crate) fn add(&self, pid: i32) -> Result<(), Error> {
        fs::write(self.dir.join("cgroup.procs"), pid.to_string())
            .map_err(|e| Error::Limits(format!("cannot move the command into {}: {e}", self.dir.display())))
    }

    /// Whether the pids limit refused a fork.
    pub(crate) fn hit_limit(&self) -> bool {
        // v2: pids.events "max N"; v1 has no counter: compare peak when available.
        fs::read_to_string(self.dir.join("pids.events"))
            .ok()
            .and_then(|e| e.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()))
            .is_some_and(|n| n > 0)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The kernel releases an emptied cgroup asynchronously: one attempt, no waiting; a
        // leftover is removed by the next run's sweep.
        let _ = fs::remove_dir(&self.dir);
    }
}

/// Removes the empty cgroups earlier runs left (a cgroup with processes cannot be removed, so
/// a live run of another warden is never disturbed).
fn sweep(root: &std::path::Path) {
    let Ok(rd) = fs::read_dir(root) else { return };
    for e in rd.filter_map(Result::ok) {
        if e.file_name().to_str().is_some_and(|n| n.starts_with("warden-")) {
            let _ = fs::remove_dir(e.path());
        }
    }
}
