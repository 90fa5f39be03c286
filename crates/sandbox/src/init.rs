//! pid 1 of the command's namespace: a minimal init that starts the command as pid 2, reaps
//! whatever ends up its child, and reports the command's own wait status to the parent.
//!
//! The command is not pid 1 itself because the kernel treats a namespace's init specially:
//! a signal it sends itself is dropped unless it has a handler, so `abort()` (glibc then falls
//! back to a faulting instruction: reported as SIGSEGV), `kill -TERM $$` (the command goes on)
//! and a tool that re-raises a signal after cleaning up would all be misreported; and orphans
//! are re-parented to it, which most programs do not expect to reap.
//!
//! Async-signal-safe like the rest of the child (`child.rs`): raw system calls, no allocation.
//! The init runs under the command's Landlock domain, seccomp filter, credentials and limits
//! (applied before it starts the command); the command gets a Landlock domain nested in it
//! ([`nest`]), and the view's `/proc` shows only processes the viewer may trace
//! (`hidepid=ptraceable`), so the command can neither see nor read the init, which shares
//! warden's memory. It tells the parent on the error pipe:
//! - `(Exec, 0, errno)`: execve failed (then it exits);
//! - `(Running, pid, 0)`: the command has exec'd (the parent supervises it);
//! - `(Ended, status, 0)`: the command's wait status (then it exits, and the kernel ends the
//!   rest of the namespace, as when the command itself was pid 1).
//!
//! A parent that finds no `Ended` (the init was killed: the timeout) reports the init's status.

use std::ffi::c_void;
use std::os::fd::RawFd;

use crate::child::{Child, Stage, errno, fail, p};

/// What the command process (on the init's stack, while the init waits: `CLONE_VFORK`) needs.
struct Command<'a> {
    c: &'a Child<'a>,
    /// Where the command process leaves execve's errno when execve fails.
    failed: *mut i32,
}

/// Bytes of the init's stack the command process runs on until its execve.
const STACK: usize = 32 << 10;

/// Starts the command as this namespace's pid 2 and waits for it, as its init. Never returns.
///
/// # Safety
/// Same as [`crate::child::enter`], called last in the setup: everything that confines the
/// command has been applied to this process.
pub(crate) unsafe fn run(c: &Child) -> ! {
    let err = c.io.err;
    let mut failed: i32 = 0;
    let command = Command { c, failed: &raw mut failed };
    let mut stack = [0u8; STACK];
    // The stack grows down from its 16-byte aligned top.
    let top = ((stack.as_mut_ptr() as usize + STACK) & !15) as *mut c_void;
    let arg: *mut c_void = (&raw const command).cast_mut().cast();
    // SAFETY: CLONE_VFORK suspends this process until the new one has exec'd or exited, so
    // `stack`, `command` and `failed` (this frame) stay valid and untouched by us while it
    // uses them; CLONE_VM shares the memory so `failed` is seen here afterwards.
    let pid = unsafe { libc::clone(command_main, top, libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD, arg) };
    if pid < 0 {
        fail(err, Stage::Init, 0, errno());
    }
    // SAFETY: a plain read of our own stack variable, which the command process wrote before
    // it exited (CLONE_VFORK: it has, by now).
    let failed = unsafe { std::ptr::read_volatile(&raw const failed) };
    if failed == REPORTED {
        // SAFETY: exits without running anything of the copied parent state.
        unsafe { libc::_exit(126) };
    }
    if failed != 0 {
        fail(err, Stage::Exec, 0, failed);
    }
    report(err, Stage::Running, pid as u32);
    // SAFETY: (the whole block) closing our copies of descriptors, then waiting: raw system
    // calls on our own stack variables.
    unsafe {
        // The command's streams are the command's: the parent sees them end when it and what
        // it started have closed them, not when the init does.
        // Every other descriptor too (all but the error pipe): the command's own copies went
        // at its execve, and the init's would keep pipes open, the write end of the command's
        // input among them (a command reading its input would never see it end).
        for fd in [0, 1, 2] {
            libc::close(fd);
        }
        let err_fd = u32::try_from(err).unwrap_or(u32::MAX);
        if err_fd > 3 {
            libc::syscall(libc::SYS_close_range, 3u32, err_fd - 1, 0u32);
        }
        libc::syscall(libc::SYS_close_range, err_fd.saturating_add(1), u32::MAX, 0u32);
        loop {
            let mut status: libc::c_int = 0;
            let r = libc::wait4(-1, &raw mut status, 0, std::ptr::null_mut());
            if r == pid {
                report(err, Stage::Ended, status as u32);
                libc::_exit(0);
            }
            if r < 0 && errno() != libc::EINTR {
                libc::_exit(126);
            }
        }
    }
}

/// `failed` when the command process already reported its failure on the error pipe.
const REPORTED: i32 = -1;

extern "C" fn command_main(arg: *mut c_void) -> libc::c_int {
    // SAFETY: `arg` is the init's `Command`, valid while the init is suspended (CLONE_VFORK).
    unsafe {
        let command = &*(arg as *const Command);
        let c = command.c;
        std::ptr::write_volatile(command.failed, REPORTED);
        nest(c.io.err);
        std::ptr::write_volatile(command.failed, 0);
        libc::execve(p(&c.plan.program), c.argv.as_ptr(), c.env.as_ptr());
        std::ptr::write_volatile(command.failed, errno().max(1));
        libc::_exit(127)
    }
}

/// Puts the command process in a Landlock domain nested in the init's. The init shares
/// warden's memory (`CLONE_VM`) and, run by an ordinary user, its uid: Landlock lets a process
/// read another's `/proc/PID/environ` or `mem`, or trace it, only when that one is in the same
/// domain or one nested in it, so this keeps the command (and all it starts) away from the
/// init, and so from warden. The nested ruleset handles only the creation of block devices,
/// which no command can do anyway (no `CAP_MKNOD`): it changes nothing else.
///
/// # Safety
/// Only in the command process before execve (see [`run`]).
unsafe fn nest(err: RawFd) {
    const MAKE_BLOCK: u64 = 1 << 11;
    let handled: u64 = MAKE_BLOCK;
    // SAFETY: raw Landlock calls on a stack value whose size we pass (the ABI 1 attribute).
    unsafe {
        let ruleset = libc::syscall(libc::SYS_landlock_create_ruleset, &raw const handled, 8usize, 0u32);
        if ruleset < 0 {
            fail(err, Stage::Landlock, NESTED, errno());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset as libc::c_int, 0u32) < 0 {
            fail(err, Stage::Landlock, NESTED, errno());
        }
        libc::close(ruleset as libc::c_int);
    }
}

/// The step a failure of [`nest`] is reported at.
const NESTED: usize = 1 << 20;

/// Writes one `(stage, value, 0)` record on the error pipe.
fn report(err: RawFd, stage: Stage, value: u32) {
    let mut msg = [0u8; 12];
    msg[..4].copy_from_slice(&(stage as u32).to_ne_bytes());
    msg[4..8].copy_from_slice(&value.to_ne_bytes());
    // SAFETY: writes 12 bytes from a stack buffer to a descriptor we own.
    unsafe { libc::write(err, msg.as_ptr().cast(), msg.len()) };
}
