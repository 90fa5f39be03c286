//! The children of a prepared view (see `view.rs`), between `clone` and `_exit` or `execve`.
//! Async-signal-safe like `child.rs`: raw system calls on memory the parent prepared.
//!
//! - [`template`] builds a view once: the whole mount view of a plan, pivoted and with the old
//!   root detached, in a new user, mount, pid (and net) namespace, then waits until the parent
//!   has opened those namespaces and exits. The namespaces live on through the descriptors.
//! - [`hop`] runs for each command: it joins the view's user and mount (and net) namespaces and
//!   clones the command's process as a sibling (`CLONE_PARENT`, so warden is its parent) in a
//!   copy of the view's mount namespace and fresh pid, ipc, uts and cgroup namespaces; then it
//!   exits.
//! - [`fresh`] runs in that command process: the mounts each run gets new (its pid namespace's
//!   `/proc`, empty scratch tmpfs and `/dev/shm`), moving what the view mounted beneath a
//!   scratch directory (a workspace under `/tmp`) onto the new tmpfs.

use std::ffi::CStr;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::child::{Child, MOVE_MOUNT_F_EMPTY_PATH, Stage, build, check, errno, fail, mkdir, p, proc_mount, touch, wait_go};
use crate::plan::Plan;
use crate::view::{Fresh, MAX_SLOTS};

const OPEN_TREE_CLOEXEC: libc::c_uint = libc::O_CLOEXEC as libc::c_uint;

/// What the template child needs.
pub(crate) struct Template<'a> {
    pub plan: &'a Plan,
    pub trees: &'a [RawFd],
    /// The parent's go (id maps written).
    pub sync: RawFd,
    pub err: RawFd,
    /// One byte when the view is built.
    pub ready: RawFd,
    /// Read until the parent's byte or the end of the pipe (it has opened the namespaces).
    pub hold: RawFd,
    /// This process's copy of that write end, closed first.
    pub hold_w: RawFd,
}

/// Builds the view and holds it until the parent has its namespaces. Never returns.
///
/// # Safety
/// Only in the child right after `clone`, with every pointer in `t` valid (shared memory).
pub(crate) unsafe fn template(t: &Template) -> ! {
    // SAFETY: (the whole block) the caller's contract; raw system calls on prepared memory.
    unsafe {
        libc::close(t.hold_w);
        wait_go(t.sync, t.err);
        build(t.plan, t.trees, t.err);
        let one = 1u8;
        if libc::write(t.ready, (&raw const one).cast(), 1) != 1 {
            fail(t.err, Stage::View, 1, errno());
        }
        let mut b = 0u8;
        libc::read(t.hold, (&raw mut b).cast(), 1);
        libc::_exit(0)
    }
}

/// What the hop child needs.
pub(crate) struct Hop<'a> {
    /// The command's setup, for the process the hop clones.
    pub child: &'a Child<'a>,
    pub user: RawFd,
    pub mnt: RawFd,
    /// The view's network namespace, shared; `None`: none to join.
    pub net: Option<RawFd>,
    /// Namespace flags of the command's clone.
    pub flags: libc::c_int,
    pub stack_top: *mut libc::c_void,
    pub tls: *mut libc::c_void,
    /// Where the hop leaves the command's pid.
    pub pid: &'a AtomicI32,
    /// The processors the command's process sets itself up on: not warden's
    /// ([`crate::apart::place`]).
    pub away: Option<libc::cpu_set_t>,
}

/// Joins the view and clones the command's process. Never returns.
///
/// # Safety
/// Only in the child right after `clone`, with every pointer in `h` valid (shared memory); the
/// stack and TLS in `h` are the command process's own, unused by anyone else.
pub(crate) unsafe fn hop(h: &Hop) -> ! {
    let err = h.child.io.err;
    // SAFETY: (the whole block) setns on descriptors the parent holds open; clone on a stack and
    // TLS reserved for the command process, which runs `command_main` on `h.child`.
    unsafe {
        check!(err, libc::setns(h.user, libc::CLONE_NEWUSER), Stage::View, 2);
        check!(err, libc::setns(h.mnt, libc::CLONE_NEWNS), Stage::View, 3);
        if let Some(net) = h.net {
            check!(err, libc::setns(net, libc::CLONE_NEWNET), Stage::View, 4);
        }
        let flags = h.flags | libc::CLONE_PARENT | libc::CLONE_VM | libc::CLONE_SETTLS | libc::SIGCHLD;
        let arg: *mut libc::c_void = std::ptr::from_ref::<Child>(h.child).cast_mut().cast();
        let null = std::ptr::null_mut::<libc::pid_t>();
        let pid = libc::clone(command_main, h.stack_top, flags, arg, null, h.tls, null);
        check!(err, pid, Stage::View, 5);
        if let Some(away) = &h.away {
            crate::apart::place(pid, away);
        }
        h.pid.store(pid, Ordering::SeqCst);
        libc::_exit(0)
    }
}

extern "C" fn command_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Child` the hop was given; it outlives this process's use of the
    // shared memory (the parent keeps it until the command has exec'd or exited).
    unsafe { crate::child::enter(&*(arg as *const Child<'_>)) }
}

/// The per-run mounts of a command in a prepared view.
///
/// # Safety
/// Same as `child::enter`.
pub(crate) unsafe fn fresh(ops: &[Fresh], err: RawFd) {
    let mut slots: [RawFd; MAX_SLOTS] = [-1; MAX_SLOTS];
    let tmpfs = c"tmpfs".as_ptr();
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    // SAFETY: (the whole block) raw system calls on C strings the parent prepared; `slots`
    // holds only descriptors opened here.
    unsafe {
        for (i, op) in ops.iter().enumerate() {
            let r = match op {
                Fresh::Grab { slot, path } => {
                    let fd = libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, p(path), OPEN_TREE_CLOEXEC) as libc::c_int;
                    if let Some(s) = slots.get_mut(*slot) {
                        *s = fd;
                    }
                    fd
                }
                Fresh::Tmpfs { path, data } => libc::mount(tmpfs, p(path), tmpfs, flags, data.as_ptr().cast()),
                Fresh::Proc(path) => proc_mount(path),
                Fresh::Mkdir(path) => mkdir(path),
                Fresh::Touch(path) => touch(path),
                Fresh::Put { slot, path } => put(slots.get(*slot).copied().unwrap_or(-1), path),
            };
            check!(err, r, Stage::View, 100 + i);
        }
    }
}

/// Moves the mount `fd` refers to onto `path`, then closes `fd`.
///
/// # Safety
/// `path` is a valid C string.
unsafe fn put(fd: RawFd, path: &CStr) -> libc::c_int {
    // SAFETY: move_mount from a descriptor opened by `fresh`, onto a prepared path.
    unsafe {
        let r = libc::syscall(libc::SYS_move_mount, fd, c"".as_ptr(), libc::AT_FDCWD, p(path), MOVE_MOUNT_F_EMPTY_PATH) as libc::c_int;
        libc::close(fd);
        r
    }
}
