//! Prepared views: the mount view of a plan built once and reused by later runs in the same
//! process.
//!
//! Building a view costs most of a run's setup: dozens of mounts, and detaching the host's
//! root after `pivot_root`, which waits for an RCU grace period (about 1 ms here). A
//! long-lived warden (the MCP server, an engine embedded in an agent) runs the same view again
//! and again. So the second time a process runs a plan whose view is the same, it builds the
//! view once in a template (`view_child::template`): a user, mount, pid (and, without network,
//! net) namespace holding exactly that view, kept alive by descriptors. Each later run joins it
//! and gets a copy of its mount namespace plus the per-run mounts (`Fresh`): its own `/proc`,
//! empty scratch tmpfs and `/dev/shm`. Landlock, seccomp, capabilities, credentials and limits
//! are applied per run exactly as without a view.
//!
//! A view is keyed by everything that shapes it: the plan's steps (which paths are granted,
//! hidden or guarded, and how) and the identity (device, inode) of every host path bound into
//! it, so a replaced workspace or a newly created secret gives a new view. With Landlock's
//! abstract-unix-socket scoping (ABI 6+), runs without network share the view's network
//! namespace (loopback only; seccomp refuses every non-unix socket); below it each run gets its
//! own.
//!
//! `WARDEN_SANDBOX_VIEWS`: `reuse` (the default: from the second run of a view on), `always`
//! (from the first run: the escape suite uses it to attack this path), `off`; a host can also
//! call [`set_views`].

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use std::ffi::CString;

use crate::plan::{Plan, Step};
use crate::memory::ChildMemory;
use crate::spawn::{Reaper, pipe, read_failure, write_id_maps};
use crate::view_child::{Template, template};
use crate::{Error, idmap};

/// Mounts a run can move from beneath its scratch directories, at most.
pub(crate) const MAX_SLOTS: usize = 32;

/// Views a process keeps prepared; the least recently used goes first. Each is a sleeping
/// template process holding its namespaces.
const MAX_VIEWS: usize = 16;

/// Views a process remembers, prepared or seen once (a key of a few kilobytes each): a
/// process that runs more than [`MAX_VIEWS`] specs in turn still prepares the ones it
/// comes back to.
const MAX_SEEN: usize = 64;

/// `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`.
const SCOPE_ABSTRACT_UNIX: u64 = 1;

/// One per-run mount operation, with paths as the command sees them (inside the view).
#[derive(Debug)]
pub(crate) enum Fresh {
    /// Open the mount at `path` (beneath a scratch directory) to move it after the tmpfs.
    Grab { slot: usize, path: CString },
    /// A new tmpfs.
    Tmpfs { path: CString, data: CString },
    /// The run's pid namespace's proc.
    Proc(CString),
    /// A mount point on the new tmpfs.
    Mkdir(CString),
    /// A file mount point on the new tmpfs.
    Touch(CString),
    /// Move the mount grabbed in `slot` onto `path`.
    Put { slot: usize, path: CString },
}

/// A prepared view: its namespaces and what each run adds.
#[derive(Debug)]
pub(crate) struct View {
    pub user: OwnedFd,
    pub mnt: OwnedFd,
    /// The network namespace runs share (no network, abstract sockets scoped).
    pub net: Option<OwnedFd>,
    pub fresh: Vec<Fresh>,
}

impl View {
    /// Namespace flags of a run's own clone.
    pub(crate) fn clone_flags(&self, network: bool) -> libc::c_int {
        let own_net = !network && self.net.is_none();
        libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWCGROUP
            | if own_net { libc::CLONE_NEWNET } else { 0 }
    }
}

/// When runs use prepared views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Views {
    /// Never: every run builds its own view (what a one-shot process does anyway).
    Off,
    /// From the second run of the same view on (the default).
    Reuse,
    /// From the first run on.
    Always,
}

/// 0: not set (the environment decides), else 1 + the `Views` variant.
static SET: AtomicU8 = AtomicU8::new(0);

/// Sets when this process's runs use prepared views, over `WARDEN_SANDBOX_VIEWS`.
pub fn set_views(v: Views) {
    SET.store(1 + v as u8, Ordering::Relaxed);
}

pub(crate) fn mode() -> Views {
    static ENV: OnceLock<Views> = OnceLock::new();
    match SET.load(Ordering::Relaxed) {
        1 => return Views::Off,
        2 => return Views::Reuse,
        3 => return Views::Always,
        _ => {}
    }
    *ENV.get_or_init(|| match std::env::var("WARDEN_SANDBOX_VIEWS").as_deref() {
        Ok("off") => Views::Off,
        Ok("always") => Views::Always,
        _ => Views::Reuse,
    })
}

struct Entry {
    key: Vec<u8>,
    /// `None`: seen once, or the view could not be built (then never retried).
    view: Option<Arc<View>>,
    failed: bool,
}

/// The view to run `plan` in, if this process should use one: made on the second run of the
/// same view (or the first, under `always`). `None`: run without a view.
pub(crate) fn get(plan: &Plan, network: bool, scoped: u64, root: bool) -> Option<Arc<View>> {
    static VIEWS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    let mode = mode();
    if mode == Views::Off {
        return None;
    }
    let key = plan.view_keys[usize::from(network)].get_or_init(|| key(plan, network)).as_ref()?;
    let mut views = VIEWS.lock().unwrap_or_else(|e| e.into_inner());
    match views.iter().position(|e| e.key == *key) {
        // The least recently used goes first when the list is full: a hit moves to the end.
        Some(i) => {
            let hit = views.remove(i);
            views.push(hit);
        }
        None => {
            if views.len() >= MAX_SEEN {
                // The least recently used seen once, or else the least recently used.
                let at = views.iter().position(|e| e.view.is_none()).unwrap_or(0);
                views.remove(at);
            }
            views.push(Entry { key: key.clone(), view: None, failed: false });
            if mode == Views::Reuse {
                return None;
            }
        }
    }
    let last = views.len().checked_sub(1)?;
    let entry = views.get(last)?;
    if entry.failed {
        return None;
    }
    if let Some(v) = &entry.view {
        return Some(Arc::clone(v));
    }
    // At most MAX_VIEWS prepared: the least recently used other one is let go.
    if views.iter().filter(|e| e.view.is_some()).count() >= MAX_VIEWS
        && let Some(old) = views.iter_mut().find(|e| e.view.is_some())
    {
        old.view = None;
    }
    let shared_net = !network && scoped & SCOPE_ABSTRACT_UNIX != 0;
    let entry = views.get_mut(last)?;
    match make(plan, network, shared_net, root) {
        Ok(v) => {
            let v = Arc::new(v);
            entry.view = Some(Arc::clone(&v));
            Some(v)
        }
        Err(_) => {
            entry.failed = true;
            None
        }
    }
}

/// What makes two plans' views the same; `None` when the plan cannot run in a view. Raw
/// bytes, NUL-separated (no path holds a NUL), and cheap to build: it is made on every run.
fn key(plan: &Plan, network: bool) -> Option<Vec<u8>> {
    fresh_ops(plan)?;
    let mut k = Vec::with_capacity(4096);
    let mut put = |parts: &[&[u8]]| {
        for part in parts {
            k.extend_from_slice(part);
            k.push(0);
        }
    };
    put(&[if network { b"net" } else { b"no-net" }, plan.staging.dir.as_bytes()]);
    for step in &plan.steps {
        match step {
            Step::Mkdir(d) => put(&[b"mkdir", d.as_bytes()]),
            Step::Touch(f) => put(&[b"touch", f.as_bytes()]),
            Step::Symlink { target, link } => put(&[b"symlink", target.as_bytes(), link.as_bytes()]),
            Step::Bind { src, dst, attrs } => {
                let id = identity(plan, src.as_bytes());
                let flags = attrs.map(|f| f.to_le_bytes().to_vec()).unwrap_or_default();
                put(&[b"bind", src.as_bytes(), &id, dst.as_bytes(), &flags]);
            }
            Step::Tmpfs { dst, data } => put(&[b"tmpfs", dst.as_bytes(), data.as_bytes()]),
            Step::Proc(dst) => put(&[b"proc", dst.as_bytes()]),
            Step::Attach { tree, dst } => {
                let host = plan.trees.get(*tree).map(|t| t.as_os_str().as_bytes()).unwrap_or_default();
                let id = identity(plan, host);
                put(&[b"attach", host, &id, dst.as_bytes()]);
            }
        }
    }
    Some(k)
}

/// (device, inode) of a host path as key bytes, as planning saw it (planning looks at every
/// host path it binds, and a recalled layout's answers are asked again: `recall.rs`); empty
/// for paths only the view has (the covers and guards in the staging directory).
fn identity(plan: &Plan, path: &[u8]) -> Vec<u8> {
    if beneath(path, plan.staging.dir.as_bytes()) {
        return Vec::new();
    }
    let host = std::path::Path::new(std::ffi::OsStr::from_bytes(path));
    plan.ids.get(host).map(|(dev, ino)| [dev.to_le_bytes(), ino.to_le_bytes()].concat()).unwrap_or_default()
}

/// The path inside the view of a staging path (`staging/root/x` -> `/x`).
fn inside(plan: &Plan, path: &CString) -> Option<CString> {
    let root = plan.staging.root.as_bytes();
    let rest = path.as_bytes().strip_prefix(root)?;
    if rest.is_empty() {
        return CString::new("/").ok();
    }
    rest.starts_with(b"/").then(|| CString::new(rest).ok()).flatten()
}

fn beneath(path: &[u8], dir: &[u8]) -> bool {
    path.len() > dir.len() && path.starts_with(dir) && (dir == b"/" || path.get(dir.len()) == Some(&b'/'))
}

/// Where a step mounts something, if it does.
fn mount_dst(step: &Step) -> Option<&CString> {
    match step {
        Step::Bind { dst, .. } | Step::Tmpfs { dst, .. } | Step::Attach { dst, .. } | Step::Proc(dst) => Some(dst),
        _ => None,
    }
}

/// The per-run mounts of `plan`'s view: every `proc` and every writable scratch tmpfs (mode
/// 1777: `/tmp`, `/dev/shm`, ...) is mounted again for each run, and the view's mounts beneath
/// such a tmpfs are moved onto the new one. `None`: a layout this does not handle (a symlink
/// beneath a scratch directory, too many mounts to move).
pub(crate) fn fresh_ops(plan: &Plan) -> Option<Vec<Fresh>> {
    let mut ops = Vec::new();
    let mut slot = 0usize;
    for (i, step) in plan.steps.iter().enumerate() {
        match step {
            Step::Proc(dst) => ops.push(Fresh::Proc(inside(plan, dst)?)),
            Step::Tmpfs { dst, data } if data.as_bytes() == b"mode=1777" => {
                let s = dst.as_bytes();
                let later = plan.steps.get(i + 1..)?;
                if later.iter().any(|st| matches!(st, Step::Symlink { link, .. } if beneath(link.as_bytes(), s))) {
                    return None;
                }
                // The topmost mounts beneath it: they carry what is mounted below them.
                let mounts: Vec<&CString> = later.iter().filter_map(mount_dst).filter(|d| beneath(d.as_bytes(), s)).collect();
                let top: Vec<&CString> =
                    mounts.iter().copied().filter(|d| !mounts.iter().any(|o| beneath(d.as_bytes(), o.as_bytes()))).collect();
                let first = slot;
                for d in &top {
                    if slot >= MAX_SLOTS {
                        return None;
                    }
                    ops.push(Fresh::Grab { slot, path: inside(plan, d)? });
                    slot += 1;
                }
                ops.push(Fresh::Tmpfs { path: inside(plan, dst)?, data: data.clone() });
                // Mount points (and the directories on the way) that are not inside a moved
                // mount, in the order the view made them.
                for st in later {
                    let (made, dir) = match st {
                        Step::Mkdir(d) => (d, true),
                        Step::Touch(f) => (f, false),
                        _ => continue,
                    };
                    let m = made.as_bytes();
                    if !beneath(m, s) || top.iter().any(|t| beneath(m, t.as_bytes())) {
                        continue;
                    }
                    let path = inside(plan, made)?;
                    ops.push(if dir { Fresh::Mkdir(path) } else { Fresh::Touch(path) });
                }
                for (k, d) in top.iter().enumerate() {
                    ops.push(Fresh::Put { slot: first + k, path: inside(plan, d)? });
                }
            }
            _ => {}
        }
    }
    Some(ops)
}

/// Builds the view of `plan` in a template child and keeps its namespaces.
fn make(plan: &Plan, network: bool, shared_net: bool, root: bool) -> Result<View, Error> {
    let fresh = fresh_ops(plan).ok_or_else(|| Error::Spec("this view cannot be prepared".into()))?;
    let trees = plan.trees.iter().map(|p| idmap::write_tree(p)).collect::<Result<Vec<OwnedFd>, Error>>()?;
    let tree_fds: Vec<RawFd> = trees.iter().map(AsRawFd::as_raw_fd).collect();
    let (sync_r, sync_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (ready_r, ready_w) = pipe()?;
    let (hold_r, hold_w) = pipe()?;
    let t = Template {
        plan,
        trees: &tree_fds,
        sync: sync_r.as_raw_fd(),
        err: err_w.as_raw_fd(),
        ready: ready_w.as_raw_fd(),
        hold: hold_r.as_raw_fd(),
        hold_w: hold_w.as_raw_fd(),
    };
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    if !network {
        flags |= libc::CLONE_NEWNET;
    }
    let memory = ChildMemory::new()?;
    let arg: *mut libc::c_void = (&raw const t).cast_mut().cast();
    let null = std::ptr::null_mut::<libc::pid_t>();
    // SAFETY: the child runs `template_main` on its own stack and TLS and only reads `t` and
    // what it points to, alive until it is reaped below (`reaper` is dropped before `memory`).
    let pid = unsafe {
        libc::clone(
            template_main,
            memory.stack_top(),
            flags | libc::CLONE_VM | libc::CLONE_SETTLS | libc::SIGCHLD,
            arg,
            null,
            memory.tls(),
            null,
        )
    };
    if pid < 0 {
        return Err(Error::Namespaces(std::io::Error::last_os_error()));
    }
    let mut reaper = Reaper::new(pid);
    drop((sync_r, err_w, ready_w, hold_r, trees));
    write_id_maps(pid, root)?;
    // SAFETY: writes one byte from a stack buffer to our pipe.
    if unsafe { libc::write(sync_w.as_raw_fd(), b"1".as_ptr().cast(), 1) } != 1 {
        return Err(Error::Io(std::io::Error::last_os_error()));
    }
    let mut b = 0u8;
    // SAFETY: reads one byte into a stack variable.
    if unsafe { libc::read(ready_r.as_raw_fd(), (&raw mut b).cast(), 1) } != 1 {
        reaper.wait();
        let (stage, step, errno) = read_failure(&err_r).unwrap_or((None, 0, 0));
        return Err(Error::Setup { stage: format!("view {:?}", stage).to_lowercase(), step, errno });
    }
    let open = |ns: &str| std::fs::File::open(format!("/proc/{pid}/ns/{ns}")).map(OwnedFd::from).map_err(Error::Io);
    let view = View { user: open("user")?, mnt: open("mnt")?, net: if shared_net { Some(open("net")?) } else { None }, fresh };
    // A byte, not only the end of the pipe: a process another thread cloned meanwhile holds a
    // copy of `hold_w` until it exits or execs (see `idmap::held`).
    // SAFETY: writes one byte from a static buffer to our pipe.
    unsafe { libc::write(hold_w.as_raw_fd(), b"1".as_ptr().cast(), 1) };
    drop(hold_w);
    reaper.wait();
    drop(memory);
    Ok(view)
}

extern "C" fn template_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Template` that `make` passed to clone; it outlives this process's
    // use of the shared memory (`make` reaps it before returning).
    unsafe { template(&*(arg as *const Template<'_>)) }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    fn c(s: &str) -> CString {
        CString::new(s).unwrap_or_default()
    }

    /// A plan of `steps`, with the identities of the host paths it binds as planning records
    /// them (looked at now).
    fn plan(steps: Vec<Step>) -> Plan {
        let ids = steps
            .iter()
            .filter_map(|s| match s {
                Step::Bind { src, .. } => Some(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(src.as_bytes()))),
                _ => None,
            })
            .filter_map(|p| std::fs::symlink_metadata(&p).ok().map(|m| (p, (m.dev(), m.ino()))))
            .collect();
        let layout = crate::plan::Layout {
            staging: crate::child::Staging {
                dir: c("/mnt"),
                root: c("/mnt/root"),
                cover_file: c("/mnt/cover-file"),
                cover_dir: c("/mnt/cover-dir"),
            },
            steps,
            rules: Vec::new(),
            cwd: c("/"),
            program: c("/bin/true"),
            trees: Vec::new(),
            ids,
            view_keys: Default::default(),
            notes: Vec::new(),
        };
        Plan { layout: Arc::new(layout), argv: Vec::new(), env: Vec::new(), recalled: None }
    }

    #[test]
    fn mounts_beneath_a_scratch_tmpfs_move_onto_the_new_one() {
        let p = plan(vec![
            Step::Mkdir(c("/mnt/root/proc")),
            Step::Proc(c("/mnt/root/proc")),
            Step::Mkdir(c("/mnt/root/tmp")),
            Step::Tmpfs { dst: c("/mnt/root/tmp"), data: c("mode=1777") },
            Step::Mkdir(c("/mnt/root/tmp/a")),
            Step::Mkdir(c("/mnt/root/tmp/a/ws")),
            Step::Bind { src: c("/tmp/a/ws"), dst: c("/mnt/root/tmp/a/ws"), attrs: None },
            Step::Mkdir(c("/mnt/root/tmp/a/ws/.git")),
            Step::Bind { src: c("/mnt/root/tmp/a/ws/.git"), dst: c("/mnt/root/tmp/a/ws/.git"), attrs: Some(1) },
            Step::Touch(c("/mnt/root/tmp/f")),
            Step::Bind { src: c("/tmp/f"), dst: c("/mnt/root/tmp/f"), attrs: None },
            Step::Mkdir(c("/mnt/root/usr")),
            Step::Bind { src: c("/usr"), dst: c("/mnt/root/usr"), attrs: Some(1) },
        ]);
        let ops = fresh_ops(&p).unwrap_or_default();
        let got: Vec<String> = ops.iter().map(|o| format!("{o:?}")).collect();
        let want = [
            r#"Proc("/proc")"#,
            r#"Grab { slot: 0, path: "/tmp/a/ws" }"#,
            r#"Grab { slot: 1, path: "/tmp/f" }"#,
            r#"Tmpfs { path: "/tmp", data: "mode=1777" }"#,
            r#"Mkdir("/tmp/a")"#,
            r#"Mkdir("/tmp/a/ws")"#,
            r#"Touch("/tmp/f")"#,
            r#"Put { slot: 0, path: "/tmp/a/ws" }"#,
            r#"Put { slot: 1, path: "/tmp/f" }"#,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_symlink_beneath_a_scratch_tmpfs_is_not_prepared() {
        let p = plan(vec![
            Step::Tmpfs { dst: c("/mnt/root/tmp"), data: c("mode=1777") },
            Step::Symlink { target: c("x"), link: c("/mnt/root/tmp/l") },
        ]);
        assert!(fresh_ops(&p).is_none());
    }

    #[test]
    fn the_key_changes_when_a_bound_path_is_replaced() {
        let dir = std::env::temp_dir().join(format!("warden-view-key-{}", std::process::id()));
        let (a, b) = (dir.join("a"), dir.join("b"));
        let _ = std::fs::remove_dir_all(&dir);
        let made = std::fs::create_dir_all(&a).and_then(|()| std::fs::create_dir_all(&b));
        assert!(made.is_ok(), "{made:?}");
        let src = CString::new(a.as_os_str().as_bytes()).unwrap_or_default();
        let p = || plan(vec![Step::Bind { src: src.clone(), dst: c("/mnt/root/x"), attrs: None }]);
        let before = key(&p(), false);
        assert_eq!(before, key(&p(), false));
        assert_ne!(before, key(&p(), true), "network is part of the key");
        let swapped = std::fs::remove_dir(&a).and_then(|()| std::fs::rename(&b, &a));
        assert!(swapped.is_ok(), "{swapped:?}");
        let after = key(&p(), false);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(before.is_some() && after.is_some());
        assert_ne!(before, after, "another directory now sits at the bound path");
    }
}
