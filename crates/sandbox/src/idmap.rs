//! Root callers: the command runs as an unprivileged host id, and the writable grants are
//! shown through idmapped mounts so that it still owns the workspace.
//!
//! When warden runs as root, the command's user namespace maps host root (for the setup only)
//! and [`UID`]/[`GID`] (`nobody`/`nogroup`); the child switches to them before `execve`, so the
//! command's host credentials are not root: it owns no host file, RLIMIT_NPROC holds for it, and
//! the files it creates outside an idmapped grant are `nobody`'s.
//!
//! Each writable grant is cloned in the parent (`open_tree(OPEN_TREE_CLONE | AT_RECURSIVE)`,
//! while it is still real root) and idmapped (`mount_setattr(MOUNT_ATTR_IDMAP)`) with a user
//! namespace that maps the grant's owner to [`UID`]/[`GID`]: the command sees the workspace as
//! its own, and what it creates there lands owned by the workspace's owner on disk, as if the
//! owner had written it. The child attaches the detached trees with `move_mount`.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;

use crate::Error;
use crate::attr::{self, MountAttr};

/// The host uid a root caller's command runs as (`nobody`).
pub const UID: u32 = 65534;
/// The host gid a root caller's command runs as (`nogroup`).
pub const GID: u32 = 65534;

const OPEN_TREE_CLONE: libc::c_uint = 1;
const OPEN_TREE_CLOEXEC: libc::c_uint = libc::O_CLOEXEC as libc::c_uint;
const AT_RECURSIVE: libc::c_uint = 0x8000;

fn os(stage: &str, e: std::io::Error) -> Error {
    Error::Setup { stage: stage.to_string(), step: 0, errno: e.raw_os_error().unwrap_or(0) }
}

/// A detached, idmapped copy of the mount tree at `path` (a writable grant), nosuid and nodev,
/// for the child to attach. Its owner (uid, gid) appears as [`UID`]/[`GID`] through it.
pub(crate) fn write_tree(path: &Path) -> Result<OwnedFd, Error> {
    let meta = std::fs::metadata(path).map_err(Error::Io)?;
    // A holding process made here is reaped before the tree is used (`Holder`).
    let userns = userns(meta.uid(), meta.gid()).map(|(fd, _holder)| fd)?;
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
        .map_err(|_| Error::Spec("a path contains a NUL byte".into()))?;
    // SAFETY: open_tree on a valid C string; the result is a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, c.as_ptr(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE)
    };
    if fd < 0 {
        return Err(os(&format!("open_tree {}", path.display()), std::io::Error::last_os_error()));
    }
    // SAFETY: a fresh descriptor we own.
    let tree = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    let attr = MountAttr {
        attr_set: attr::IDMAP | attr::NOSUID | attr::NODEV,
        attr_clr: 0,
        propagation: 0,
        userns_fd: userns as u64,
    };
    let flags = libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE;
    // SAFETY: mount_setattr on our descriptor with a properly sized attribute struct.
    let r = unsafe {
        libc::syscall(libc::SYS_mount_setattr, tree.as_raw_fd(), c"".as_ptr(), flags, &raw const attr, size_of::<MountAttr>())
    };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        return Err(os(&format!("idmapping {} (does its file system support idmapped mounts?)", path.display()), e));
    }
    Ok(tree)
}

/// The user namespaces made so far, by the owner they map.
static CACHE: Mutex<BTreeMap<(u32, u32), OwnedFd>> = Mutex::new(BTreeMap::new());

/// The owner (uid, gid) of `path`, if it is there.
pub(crate) fn owner(path: &Path) -> Option<(u32, u32)> {
    std::fs::metadata(path).ok().map(|meta| (meta.uid(), meta.gid()))
}

/// Makes the user namespace that idmaps what `uid`/`gid` own, unless it is made already. The
/// process that held it while it was made is returned unreaped: the caller drops it when
/// waiting for its exit costs nothing (a thread started to make a run's process ahead,
/// `prestart.rs`, makes that process first: waiting here, while the caller's other threads
/// keep both processors busy, took over a millisecond in about one run of three).
pub(crate) fn warm_owner(uid: u32, gid: u32) -> Option<Holder> {
    userns(uid, gid).ok().and_then(|(_, holder)| holder)
}

/// A user namespace mapping `uid`/`gid` to [`UID`]/[`GID`], made once per process and owner,
/// with the process that held it when it was made here.
fn userns(uid: u32, gid: u32) -> Result<(RawFd, Option<Holder>), Error> {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(fd) = cache.get(&(uid, gid)) {
        return Ok((fd.as_raw_fd(), None));
    }
    let (fd, holder) = make_userns(uid, gid)?;
    let raw = fd.as_raw_fd();
    cache.insert((uid, gid), fd);
    Ok((raw, Some(holder)))
}

/// Clones a process into a new user namespace only to hold it while its maps are written and
/// the namespace is opened; the process then exits.
fn make_userns(uid: u32, gid: u32) -> Result<(OwnedFd, Holder), Error> {
    held(libc::CLONE_NEWUSER, |pid| {
        let base = format!("/proc/{pid}");
        std::fs::write(format!("{base}/uid_map"), format!("{uid} {UID} 1\n")).map_err(|e| os("idmap uid_map", e))?;
        std::fs::write(format!("{base}/setgroups"), "deny").map_err(|e| os("idmap setgroups", e))?;
        std::fs::write(format!("{base}/gid_map"), format!("{gid} {GID} 1\n")).map_err(|e| os("idmap gid_map", e))?;
        let ns = std::fs::File::open(format!("{base}/ns/user")).map_err(|e| os("idmap ns/user", e))?;
        Ok(OwnedFd::from(ns))
    })
}

/// Runs `f` with the pid of a process cloned into the new namespaces `flags` only to hold
/// them (it waits, then exits once `f` has returned; it is reaped when the returned [`Holder`]
/// is dropped): `f` writes its maps and opens the namespaces it wants to keep. The process shares our memory (`CLONE_VM`, on
/// a stack and thread-local area of its own) and only reads a pipe and exits: copying a large
/// parent's page tables for it, and tearing the copy down, would cost milliseconds.
fn held<T>(flags: libc::c_int, f: impl FnOnce(libc::pid_t) -> Result<T, Error>) -> Result<(T, Holder), Error> {
    let (r, w) = crate::spawn::pipe()?;
    let memory = crate::memory::ChildMemory::new()?;
    let flags = flags | libc::CLONE_VM | libc::CLONE_SETTLS | libc::SIGCHLD;
    // On the heap, kept by the returned `Holder`: the process may first run after this returns.
    let fds = Box::new([r.as_raw_fd(), w.as_raw_fd()]);
    let arg: *mut libc::c_void = (&raw const *fds).cast_mut().cast();
    let clone = || {
        // SAFETY: the child runs `hold` on its own stack and TLS; it reads `fds` (alive until
        // it is reaped: the `Holder` keeps it) and makes three system calls.
        let pid = unsafe {
            libc::clone(hold, memory.stack_top(), flags, arg, std::ptr::null_mut::<libc::pid_t>(), memory.tls(), std::ptr::null_mut::<libc::pid_t>())
        };
        (pid, std::io::Error::last_os_error())
    };
    // On this thread's processor, where it runs when this thread waits (`apart::here`); it only
    // reads a pipe and exits, so it keeps that one processor.
    let (pid, failed) = crate::apart::here(clone);
    if pid < 0 {
        return Err(Error::Namespaces(failed));
    }
    let pid = pid as libc::pid_t;
    let result = f(pid);
    // A byte, not only the end of the pipe: a process cloned meanwhile (another thread's holder
    // or command) holds a copy of `w` until it exits or execs, and a holder waiting for the end
    // would wait for it, perhaps while it waits for this one (see the test below).
    // SAFETY: writes one byte from a static buffer to our pipe.
    unsafe { libc::write(w.as_raw_fd(), b"1".as_ptr().cast(), 1) };
    drop(w);
    drop(r);
    let holder = Holder { pid, _fds: fds, _memory: memory };
    Ok((result?, holder))
}

/// A holding process told to exit: reaped when this is dropped, what it reads (its pipe's
/// descriptor numbers, its stack) freed after.
pub(crate) struct Holder {
    pid: libc::pid_t,
    _fds: Box<[RawFd; 2]>,
    _memory: crate::memory::ChildMemory,
}

impl Drop for Holder {
    fn drop(&mut self) {
        let mut status = 0;
        // SAFETY: reaps our own child; `status` is a valid out-pointer. What it reads (`_fds`,
        // `_memory`) is freed only after this, when the fields drop.
        while unsafe { libc::waitpid(self.pid, &mut status, 0) } < 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }
}

/// The holding child: closes its copy of the pipe's write end, waits for the parent's byte (or
/// the end of the pipe), then exits; killed if the thread that cloned it ends first.
extern "C" fn hold(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points at the pipe's two descriptor numbers, which the parent's `Holder` keeps
    // until this process is reaped; prctl, close, read and _exit are async-signal-safe.
    unsafe {
        let [r, w] = *(arg as *const [RawFd; 2]);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::close(w);
        let mut b = 0u8;
        libc::read(r, (&raw mut b).cast(), 1);
        libc::_exit(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_namespace_warmed_ahead_is_the_one_a_run_idmaps_with() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return; // only root callers idmap
        }
        let dir = warden_testdir::make("idmap", "warm");
        // An owner of this test's own, so that the cache entry is this test's.
        let (uid, gid) = (4242, 4243);
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
        // Made on another thread, as `prestart` makes it while the policy loads.
        let (o_uid, o_gid) = owner(&dir).unwrap();
        std::thread::spawn(move || drop(warm_owner(o_uid, o_gid))).join().unwrap();
        let warmed = CACHE.lock().unwrap().get(&(uid, gid)).map(|fd| fd.as_raw_fd()).expect("the namespace was not made ahead");
        assert_eq!(userns(uid, gid).unwrap().0, warmed, "the run made a second namespace");
        // And it maps the owner to the command's id: the tree shows the folder as UID's.
        let tree = write_tree(&dir).unwrap();
        let st = fstat(tree.as_raw_fd());
        assert_eq!((st.st_uid, st.st_gid), (UID, GID));
    }

    fn fstat(fd: RawFd) -> libc::stat {
        let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
        // SAFETY: fstat on a descriptor we hold, into a properly sized buffer.
        assert_eq!(unsafe { libc::fstat(fd, st.as_mut_ptr()) }, 0);
        // SAFETY: fstat returned 0, so it filled the buffer.
        unsafe { st.assume_init() }
    }

    #[test]
    fn holders_made_at_once_on_two_threads_never_wait_for_each_other() {
        // Each holder process gets a copy of every descriptor open when it is cloned, the other
        // holder's pipe included: a holder that waited for its pipe to close would wait for
        // the other to exit, and the other for it. 2 x 100 holders, at most 20 s.
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..2 {
            let tx = tx.clone();
            std::thread::spawn(move || {
                // The work between clone and reap (maps, opening the namespace) is the window.
                let work = |_| {
                    std::thread::sleep(Duration::from_micros(300));
                    Ok(())
                };
                let made = (0..100).all(|_| held(libc::CLONE_NEWUSER, work).is_ok());
                let _ = tx.send(made);
            });
        }
        for _ in 0..2 {
            let made = rx.recv_timeout(Duration::from_secs(20)).expect("two threads making holders deadlocked");
            assert!(made);
        }
    }
}
