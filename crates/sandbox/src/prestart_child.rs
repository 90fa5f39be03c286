//! The process started ahead (see `prestart.rs`), between `clone` and `execve`. Async-signal-
//! safe like `child.rs`, whose setup it shares: raw system calls on memory the parent
//! prepared.

use std::os::fd::RawFd;

use crate::child::{Child, finish, pivot, stage, start, steps};
use crate::prestart::{Early, MAX_TREES};

/// A process started ahead ([`crate::prestart`]): the standard descriptors, the signals, the
/// id maps' go, and the part of the mount view every plan begins with, built while the caller
/// still loads its policy; then the run's [`Child`] (and its detached trees) received on
/// `e.ctl`, the rest of its plan, and [`finish`]. The end of `e.ctl` instead: exit. Never
/// returns.
///
/// # Safety
/// Must be called only in the child right after `clone`, with every pointer in `e` valid, and
/// every pointer in the [`Child`] it receives valid until it has exec'd or exited.
pub(crate) unsafe fn enter(e: &Early) -> ! {
    // SAFETY: (the whole block) the caller's contract; raw system calls on prepared memory.
    unsafe {
        // It was started on its maker's processor only (`apart::here`).
        if let Some(cpus) = &e.cpus {
            crate::apart::set_own(cpus);
        }
        // Every other descriptor the caller had at the clone goes first: this process may wait
        // long, and a copy of another pipe's write end held meanwhile would keep its reader
        // from ever seeing the end (the parent's own ends of this process's pipes too).
        let io = &e.stdio;
        let mut keep = [io.stdin, io.stdout, io.stderr, io.sync, io.err, io.notify, e.ctl];
        close_others(&mut keep);
        start(&[], io, true);
        stage(&e.stage, e.stdio.err);
        steps(&e.base, 0, &[], e.stdio.err);
        let mut trees = [-1; MAX_TREES];
        let Some((c, n)) = receive(e.ctl, &mut trees) else { libc::_exit(0) };
        let c: &Child = &*c;
        let rest = c.plan.steps.get(e.base.len()..).unwrap_or_default();
        steps(rest, e.base.len(), trees.get(..n).unwrap_or_default(), c.io.err);
        pivot(&c.plan.staging.root, c.io.err);
        finish(c)
    }
}

/// Closes every descriptor from 3 up but those in `keep`.
///
/// # Safety
/// Only in a child between `clone` and `execve` (it closes descriptors it does not own).
unsafe fn close_others(keep: &mut [RawFd]) {
    keep.sort_unstable();
    let mut from: RawFd = 3;
    for &fd in keep.iter() {
        if fd > from {
            // SAFETY: closes descriptors of this process's own table.
            unsafe { libc::syscall(libc::SYS_close_range, from as u32, (fd - 1) as u32, 0u32) };
        }
        from = from.max(fd + 1);
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, from as u32, u32::MAX, 0u32) };
}

/// Receives the run's [`Child`] (its address: the memory is shared) and up to
/// [`MAX_TREES`] descriptors into `trees`; `None` at the end of `ctl` or on
/// anything else.
///
/// # Safety
/// `ctl` is a `SOCK_SEQPACKET` socket the parent writes [`crate::prestart`]'s message to.
unsafe fn receive(ctl: RawFd, trees: &mut [RawFd; MAX_TREES]) -> Option<(*const Child<'static>, usize)> {
    let mut addr = [0u8; size_of::<usize>()];
    // SAFETY: the caller's contract; the buffers are ours.
    let (got, n) = unsafe { crate::notify::receive_fds(ctl, &mut addr, trees, 0) }?;
    let addr = usize::from_ne_bytes(addr);
    (got == size_of::<usize>() && addr != 0).then_some((addr as *const Child<'static>, n))
}
