//! The seccomp filters, compiled once in the parent and installed by the child.
//!
//! Two filters: the main one (built with seccompiler) refuses the kernel attack surface with
//! EPERM; a small hand-written one makes `clone3` fail with ENOSYS (so libc falls back to
//! `clone`, whose namespace flags the main filter can see) and refuses x32 system call numbers,
//! which seccompiler does not check.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::Error;

/// A compiled filter program, ready for `seccomp(SECCOMP_SET_MODE_FILTER)`.
pub(crate) type Program = Vec<libc::sock_filter>;

/// System calls refused outright, with the name reported in denials.
pub(crate) const REFUSED: &[(i64, &str)] = &[
    (libc::SYS_io_uring_setup, "io_uring_setup"),
    (libc::SYS_io_uring_enter, "io_uring_enter"),
    (libc::SYS_io_uring_register, "io_uring_register"),
    (libc::SYS_bpf, "bpf"),
    (libc::SYS_perf_event_open, "perf_event_open"),
    (libc::SYS_userfaultfd, "userfaultfd"),
    (libc::SYS_keyctl, "keyctl"),
    (libc::SYS_add_key, "add_key"),
    (libc::SYS_request_key, "request_key"),
    (libc::SYS_ptrace, "ptrace"),
    (libc::SYS_process_vm_readv, "process_vm_readv"),
    (libc::SYS_process_vm_writev, "process_vm_writev"),
    (libc::SYS_kexec_load, "kexec_load"),
    (libc::SYS_kexec_file_load, "kexec_file_load"),
    (libc::SYS_init_module, "init_module"),
    (libc::SYS_finit_module, "finit_module"),
    (libc::SYS_delete_module, "delete_module"),
    (libc::SYS_unshare, "unshare"),
    (libc::SYS_setns, "setns"),
    (libc::SYS_mount, "mount"),
    (libc::SYS_umount2, "umount2"),
    (libc::SYS_pivot_root, "pivot_root"),
    (libc::SYS_chroot, "chroot"),
    (libc::SYS_move_mount, "move_mount"),
    (libc::SYS_open_tree, "open_tree"),
    (libc::SYS_fsopen, "fsopen"),
    (libc::SYS_fsmount, "fsmount"),
    (libc::SYS_fsconfig, "fsconfig"),
    (libc::SYS_fspick, "fspick"),
    (libc::SYS_mount_setattr, "mount_setattr"),
    (libc::SYS_swapon, "swapon"),
    (libc::SYS_swapoff, "swapoff"),
    (libc::SYS_reboot, "reboot"),
    (libc::SYS_acct, "acct"),
    (libc::SYS_settimeofday, "settimeofday"),
    (libc::SYS_clock_settime, "clock_settime"),
    (libc::SYS_clock_adjtime, "clock_adjtime"),
    (libc::SYS_adjtimex, "adjtimex"),
    (libc::SYS_syslog, "syslog"),
    (libc::SYS_quotactl, "quotactl"),
    (libc::SYS_vhangup, "vhangup"),
    (libc::SYS_iopl, "iopl"),
    (libc::SYS_ioperm, "ioperm"),
    (libc::SYS_open_by_handle_at, "open_by_handle_at"),
    (libc::SYS_name_to_handle_at, "name_to_handle_at"),
    (libc::SYS_kcmp, "kcmp"),
    (libc::SYS_pidfd_getfd, "pidfd_getfd"),
    (libc::SYS_process_madvise, "process_madvise"),
    (libc::SYS_fanotify_init, "fanotify_init"),
    (libc::SYS_uselib, "uselib"),
];

/// Namespace flags a `clone` may not carry.
const CLONE_NS: &[u64] = &[
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];

/// Terminal ioctls that inject input or reach the console.
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

/// The two programs for a run, compiled once per network setting.
pub(crate) fn programs(network: bool) -> Result<&'static [Program; 2], Error> {
    static WITH_NET: OnceLock<Result<[Program; 2], String>> = OnceLock::new();
    static WITHOUT_NET: OnceLock<Result<[Program; 2], String>> = OnceLock::new();
    let cell = if network { &WITH_NET } else { &WITHOUT_NET };
    cell.get_or_init(|| Ok([guard_program(), main_program(network)?]))
        .as_ref()
        .map_err(|e| Error::Seccomp(e.clone()))
}

fn main_program(network: bool) -> Result<Program, String> {
    let e = |x: seccompiler::BackendError| x.to_string();
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &(nr, _) in REFUSED {
        rules.insert(nr, Vec::new());
    }
    let mut clone = Vec::new();
    for &flag in CLONE_NS {
        clone.push(SeccompRule::new(vec![Cond::new(0, Len::Qword, Op::MaskedEq(flag), flag).map_err(e)?]).map_err(e)?);
    }
    rules.insert(libc::SYS_clone, clone);
    let mut ioctl = Vec::new();
    for cmd in [TIOCSTI, TIOCLINUX] {
        ioctl.push(SeccompRule::new(vec![Cond::new(1, Len::Dword, Op::Eq, cmd).map_err(e)?]).map_err(e)?);
    }
    rules.insert(libc::SYS_ioctl, ioctl);
    // No setuid or setgid bit: a file the command owns (root's, when warden runs as root)
    // must not become a privilege plant for whoever runs it later on the host.
    let modes = [
        (libc::SYS_chmod, 1u8),
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (libc::SYS_fchmodat2, 2),
        (libc::SYS_open, 2),
        (libc::SYS_openat, 3),
        (libc::SYS_creat, 1),
        (libc::SYS_mknod, 1),
        (libc::SYS_mknodat, 2),
    ];
    for (nr, arg) in modes {
        let mut v = Vec::new();
        for bit in [u64::from(libc::S_ISUID), u64::from(libc::S_ISGID)] {
            v.push(SeccompRule::new(vec![Cond::new(arg, Len::Dword, Op::MaskedEq(bit), bit).map_err(e)?]).map_err(e)?);
        }
        rules.insert(nr, v);
    }
    if !network {
        let unix = libc::AF_UNIX as u64;
        rules.insert(
            libc::SYS_socket,
            vec![SeccompRule::new(vec![Cond::new(0, Len::Dword, Op::Ne, unix).map_err(e)?]).map_err(e)?],
        );
    }
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch())
        .map_err(|x| x.to_string())?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(|x: seccompiler::BackendError| x.to_string())?;
    Ok(program.into_iter().map(|f| libc::sock_filter { code: f.code, jt: f.jt, jf: f.jf, k: f.k }).collect())
}

#[cfg(target_arch = "x86_64")]
fn arch() -> TargetArch {
    TargetArch::x86_64
}

#[cfg(target_arch = "aarch64")]
fn arch() -> TargetArch {
    TargetArch::aarch64
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

const fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt: 0, jf: 0, k }
}

const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// clone3 -> ENOSYS; x32 numbers -> ENOSYS; a foreign architecture kills the process.
fn guard_program() -> Program {
    let x32_bit: u32 = if cfg!(target_arch = "x86_64") { 0x4000_0000 } else { u32::MAX };
    vec![
        stmt(BPF_LD_W_ABS, 4),
        jump(BPF_JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET_K, RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, 0),
        jump(BPF_JGE_K, x32_bit, 2, 0),
        jump(BPF_JEQ_K, libc::SYS_clone3 as u32, 1, 0),
        stmt(BPF_RET_K, RET_ALLOW),
        stmt(BPF_RET_K, RET_ERRNO | libc::ENOSYS as u32),
    ]
}

/// The name of a refused system call, for denials.
#[allow(dead_code)]
pub(crate) fn refused_names() -> impl Iterator<Item = &'static str> {
    REFUSED.iter().map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_variants_compile() {
        for network in [false, true] {
            let [guard, main] = programs(network).unwrap();
            assert_eq!(guard.len(), 8);
            assert!(main.len() > REFUSED.len(), "{}", main.len());
        }
    }
}
