//! The seccomp filter, compiled once in the parent and installed by the child.
//!
//! One filter, assembled here: it refuses the kernel attack surface (those decisions are tested
//! against a seccompiler build of the same rules; each refusal goes to the supervisor, which
//! answers EPERM and reports it, see `notify.rs`), makes `clone3` and `openat2` fail
//! with ENOSYS (so libc falls back to `clone` and `openat`, whose namespace flags and modes the
//! filter can see), refuses x32
//! system call numbers with ENOSYS and kills a process that calls in with another
//! architecture. (seccompiler gives a filter one action for its matches, which took a second
//! filter for ENOSYS; each install costs about 45 µs here even for 8 instructions.)

use std::sync::OnceLock;

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

/// System calls whose mode argument (index) may not carry a setuid or setgid bit: a file the
/// command creates must not become a privilege plant for whoever runs it later on the host.
const MODES: &[(i64, u8)] = &[
    (libc::SYS_chmod, 1),
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (libc::SYS_fchmodat2, 2),
    (libc::SYS_open, 2),
    (libc::SYS_openat, 3),
    (libc::SYS_creat, 1),
    (libc::SYS_mknod, 1),
    (libc::SYS_mknodat, 2),
];

/// Terminal ioctls that inject input or reach the console.
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

/// The filters for a run (one), compiled once per network setting.
pub(crate) fn programs(network: bool) -> Result<&'static [Program], Error> {
    static WITH_NET: OnceLock<Result<[Program; 1], String>> = OnceLock::new();
    static WITHOUT_NET: OnceLock<Result<[Program; 1], String>> = OnceLock::new();
    let cell = if network { &WITH_NET } else { &WITHOUT_NET };
    cell.get_or_init(|| Ok([main_program(network)?])).as_ref().map(|p| p.as_slice()).map_err(|e| Error::Seccomp(e.clone()))
}

/// Where a conditional jump of [`main_program`] goes.
#[derive(Debug, Clone, Copy)]
enum To {
    /// The next instruction.
    Next,
    /// `n` instructions further.
    Skip(u8),
    /// The shared `EPERM` return.
    Deny,
    /// The shared allow return.
    Allow,
    /// The first instruction of block `i`.
    Block(usize),
}

#[derive(Debug, Clone, Copy)]
struct Ins {
    code: u16,
    k: u32,
    jt: To,
    jf: To,
}

const BPF_JSET_K: u16 = 0x45;

fn ld(offset: u32) -> Ins {
    Ins { code: BPF_LD_W_ABS, k: offset, jt: To::Next, jf: To::Next }
}

fn ret(k: u32) -> Ins {
    Ins { code: BPF_RET_K, k, jt: To::Next, jf: To::Next }
}

fn jeq(k: u32, jt: To, jf: To) -> Ins {
    Ins { code: BPF_JEQ_K, k, jt, jf }
}

/// `seccomp_data` offset of the low 32 bits of argument `i` (little-endian targets). The
/// kernel reads every argument this filter inspects as 32 bits (clone's flags through
/// `lower_32_bits`, modes, ioctl commands and socket domains are 32-bit types).
fn arg(i: u32) -> u32 {
    16 + 8 * i
}

/// The main filter, assembled by hand: a binary search over the special system calls (see
/// [`dispatch`]) and shared returns, so the program stays small and its paths short. At every
/// install the kernel checks and translates it and runs it once per system call number to
/// pre-compute its per-syscall cache: installed 150 times in one process here, the linear
/// version (80 instructions, paths up to 70) cost 190-220 µs an install, this one (112
/// instructions, paths up to 14) 59-70 µs. The tests compare its decisions with a seccompiler
/// build of the same rules.
fn main_program(network: bool) -> Result<Program, String> {
    let mut blocks: Vec<Vec<Ins>> = vec![Vec::new()];
    let mut block = |code: Vec<Ins>| {
        blocks.push(code);
        To::Block(blocks.len() - 1)
    };
    let ns_mask = CLONE_NS.iter().fold(0u64, |m, f| m | f);
    let ns_mask = u32::try_from(ns_mask).map_err(|_| "a namespace flag above bit 31".to_string())?;
    let clone = block(vec![ld(arg(0)), Ins { code: BPF_JSET_K, k: ns_mask, jt: To::Deny, jf: To::Allow }]);
    let ioctl = block(vec![ld(arg(1)), jeq(TIOCSTI as u32, To::Deny, To::Next), jeq(TIOCLINUX as u32, To::Deny, To::Allow)]);
    let setid = libc::S_ISUID | libc::S_ISGID;
    let mode: Vec<(u8, To)> =
        [1u8, 2, 3].into_iter().map(|i| (i, block(vec![ld(arg(u32::from(i))), Ins { code: BPF_JSET_K, k: setid, jt: To::Deny, jf: To::Allow }]))).collect();
    let socket = (!network).then(|| block(vec![ld(arg(0)), jeq(libc::AF_UNIX as u32, To::Allow, To::Deny)]));

    let nr = |n: i64| u32::try_from(n).map_err(|_| format!("system call number {n}"));
    let mut special: Vec<(u32, To)> = Vec::new();
    for &(n, _) in REFUSED {
        special.push((nr(n)?, To::Deny));
    }
    special.push((nr(libc::SYS_clone)?, clone));
    special.push((nr(libc::SYS_ioctl)?, ioctl));
    for &(n, a) in MODES {
        let target = mode.iter().find(|(i, _)| *i == a).map(|(_, t)| *t).ok_or("mode argument index")?;
        special.push((nr(n)?, target));
    }
    if let Some(socket) = socket {
        special.push((nr(libc::SYS_socket)?, socket));
    }
    let enosys = block(vec![ret(RET_ERRNO | libc::ENOSYS as u32)]);
    special.push((nr(libc::SYS_clone3)?, enosys));
    // `openat2` carries its mode inside a struct the filter cannot read, where a set-id bit
    // would pass: it fails with ENOSYS, and callers fall back to `openat`, which is checked.
    special.push((nr(libc::SYS_openat2)?, enosys));
    special.sort_by_key(|(n, _)| *n);
    let x32_bit: u32 = if cfg!(target_arch = "x86_64") { 0x4000_0000 } else { u32::MAX };
    let mut main = vec![
        ld(4),
        jeq(AUDIT_ARCH, To::Skip(1), To::Next),
        ret(RET_KILL_PROCESS),
        ld(0),
        Ins { code: BPF_JGE_K, k: x32_bit, jt: enosys, jf: To::Next },
    ];
    dispatch(&special, &mut main)?;
    if let Some(first) = blocks.first_mut() {
        *first = main;
    }
    // Refused through the supervisor (`notify.rs`), which answers EPERM and reports what was
    // refused; without a listener the kernel answers ENOSYS itself.
    blocks.push(vec![ret(RET_USER_NOTIF)]);
    let deny = blocks.len() - 1;
    blocks.push(vec![ret(RET_ALLOW)]);
    let allow = blocks.len() - 1;
    assemble(&blocks, deny, allow)
}

/// Jumps on the system call number (in the accumulator) to its target through a binary search
/// (`jge` on the middle number), with short `jeq` chains at the leaves; a number not listed is
/// allowed. The kernel runs the filter once per system call number at install time to build its
/// per-syscall cache, so the path length, not only the size, is paid at every spawn: a search
/// is about 8 instructions deep where a chain of 70 `jeq` was up to 70.
fn dispatch(sorted: &[(u32, To)], out: &mut Vec<Ins>) -> Result<(), String> {
    const LEAF: usize = 4;
    if sorted.len() <= LEAF {
        for &(n, to) in sorted {
            out.push(jeq(n, to, To::Next));
        }
        out.push(ret(RET_ALLOW));
        return Ok(());
    }
    let mid = sorted.len() / 2;
    let (low, high) = sorted.split_at(mid);
    let first_high = high.first().map(|(n, _)| *n).ok_or("an empty half")?;
    let at = out.len();
    out.push(Ins { code: BPF_JGE_K, k: first_high, jt: To::Next, jf: To::Next });
    dispatch(low, out)?;
    let skip = u8::try_from(out.len() - at - 1).map_err(|_| "a search jump out of range".to_string())?;
    if let Some(node) = out.get_mut(at) {
        node.jt = To::Skip(skip);
    }
    dispatch(high, out)
}

/// Lays the blocks out one after the other and resolves the jumps (forward only, at most 255).
fn assemble(blocks: &[Vec<Ins>], deny: usize, allow: usize) -> Result<Program, String> {
    let mut starts = Vec::with_capacity(blocks.len());
    let mut at = 0usize;
    for b in blocks {
        starts.push(at);
        at += b.len();
    }
    let mut out = Vec::with_capacity(at);
    for (b, start) in blocks.iter().zip(&starts) {
        for (i, ins) in b.iter().enumerate() {
            let here = start + i;
            let offset = |to: To| -> Result<u8, String> {
                let target = match to {
                    To::Next => return Ok(0),
                    To::Skip(n) => return Ok(n),
                    To::Deny => starts.get(deny),
                    To::Allow => starts.get(allow),
                    To::Block(j) => starts.get(j),
                };
                let target = target.ok_or("a jump to a missing block")?;
                target.checked_sub(here + 1).and_then(|d| u8::try_from(d).ok()).ok_or_else(|| "a jump out of range".to_string())
            };
            out.push(libc::sock_filter { code: ins.code, jt: offset(ins.jt)?, jf: offset(ins.jf)?, k: ins.k });
        }
    }
    Ok(out)
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_USER_NOTIF: u32 = 0x7fc0_0000;
const RET_ERRNO: u32 = 0x0005_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// What a refused system call was, for its denial: `mount`, `socket (AF_INET)`,
/// `clone (namespace flags 0x10000000)`, `ioctl TIOCSTI`, `chmod (set-id mode 4755)`.
pub(crate) fn describe(nr: i64, args: &[u64; 6]) -> String {
    if let Some((_, name)) = REFUSED.iter().find(|(n, _)| *n == nr) {
        return (*name).to_string();
    }
    // The filter reads each of these arguments as 32 bits (see `arg`).
    let low = |i: usize| args.get(i).map_or(0, |a| *a & 0xffff_ffff);
    match nr {
        libc::SYS_socket => format!("socket ({})", family(low(0))),
        libc::SYS_clone => {
            let ns = CLONE_NS.iter().fold(0, |m, f| m | f);
            format!("clone (namespace flags {:#x})", low(0) & ns)
        }
        libc::SYS_ioctl => match low(1) {
            TIOCSTI => "ioctl TIOCSTI".to_string(),
            TIOCLINUX => "ioctl TIOCLINUX".to_string(),
            other => format!("ioctl {other:#x}"),
        },
        _ => match MODES.iter().find(|(n, _)| *n == nr) {
            Some((_, i)) => format!("{} (set-id mode {:04o})", mode_call(nr), low(usize::from(*i)) & 0o7777),
            None => format!("system call {nr}"),
        },
    }
}

/// The name of a mode-checked system call.
fn mode_call(nr: i64) -> &'static str {
    match nr {
        libc::SYS_chmod => "chmod",
        libc::SYS_fchmod => "fchmod",
        libc::SYS_fchmodat => "fchmodat",
        libc::SYS_fchmodat2 => "fchmodat2",
        libc::SYS_open => "open",
        libc::SYS_openat => "openat",
        libc::SYS_creat => "creat",
        libc::SYS_mknod => "mknod",
        libc::SYS_mknodat => "mknodat",
        _ => "system call",
    }
}

/// A socket domain's name (`AF_INET`), or its number.
fn family(domain: u64) -> String {
    let name = match i32::try_from(domain).unwrap_or(-1) {
        libc::AF_INET => "AF_INET",
        libc::AF_INET6 => "AF_INET6",
        libc::AF_NETLINK => "AF_NETLINK",
        libc::AF_PACKET => "AF_PACKET",
        libc::AF_VSOCK => "AF_VSOCK",
        libc::AF_BLUETOOTH => "AF_BLUETOOTH",
        libc::AF_ALG => "AF_ALG",
        libc::AF_CAN => "AF_CAN",
        libc::AF_XDP => "AF_XDP",
        libc::AF_KEY => "AF_KEY",
        _ => return format!("family {domain}"),
    };
    name.to_string()
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
