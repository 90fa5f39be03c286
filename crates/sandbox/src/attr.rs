//! Mount attributes (`mount_setattr`): set on one mount without touching the others it has.
//!
//! A bind in a user namespace keeps the flags its source mount had locked (nosuid, nodev,
//! noexec, the atime mode); `mount(MS_REMOUNT)` must repeat every one of them or fail, while
//! `mount_setattr` only adds what it is given. Linux 5.12 and later (every kernel with Landlock).

use std::ffi::c_char;

pub(crate) const RDONLY: u64 = 0x1;
pub(crate) const NOSUID: u64 = 0x2;
pub(crate) const NODEV: u64 = 0x4;
pub(crate) const NOEXEC: u64 = 0x8;
pub(crate) const IDMAP: u64 = 0x0010_0000;

/// `struct mount_attr` (version 0, 32 bytes).
#[repr(C)]
pub(crate) struct MountAttr {
    pub(crate) attr_set: u64,
    pub(crate) attr_clr: u64,
    pub(crate) propagation: u64,
    pub(crate) userns_fd: u64,
}

/// Adds `set` to the mount at `path` (not to mounts beneath it). Returns what the system call
/// returns. Async-signal-safe: one system call on the caller's memory.
///
/// # Safety
/// `path` is a valid NUL-terminated string.
pub(crate) unsafe fn add(path: *const c_char, set: u64) -> libc::c_int {
    let attr = MountAttr { attr_set: set, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: `path` is valid (the caller's contract) and `attr` a properly sized struct that
    // outlives the call.
    unsafe { libc::syscall(libc::SYS_mount_setattr, libc::AT_FDCWD, path, 0u32, &raw const attr, size_of::<MountAttr>()) as libc::c_int }
}
